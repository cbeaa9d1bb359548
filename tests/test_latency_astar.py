"""latency-astar (issue 12): the A* search against brute force, its early-stop bound and its lower-bound
parts against direct computations, and the pipeline on a Jaillet prefix."""
import itertools
import time

import numpy as np
import pytest

from lpbench.errors import InputError
from lpbench.formulations.latency_astar import (CHAIN_BIG, CHAIN_SPLIT, MAX_REQUESTS, UNIT, _Bounds, add_row,
                                               age_layout, astar_search, build_patterns, canonical_subset,
                                               copies_shorter, dominated, group_rows, heap_pop, heap_push,
                                               pack_ages, pattern_copies, pattern_members, remember,
                                               running_arrays, running_as_copies, state_bound)
from lpbench.formulations import latency_astar
from lpbench.formulations.latency_ip import LatencyIP, schedule_from_starts
from lpbench.generators import jaillet
from lpbench.instance import parse_instance
from lpbench.solve import solve_instance
from lpbench.verify import verify
from test_latency import brute_force, slot_instance


def random_instances(count=60):
    """Small instances with arrivals, tight and loose memory (brute force stays fast)."""
    for seed in range(count):
        rng = np.random.default_rng(1000 + seed)
        n = int(rng.integers(3, 6))
        yield seed, slot_instance(1000 + seed, n=n, max_o=int(rng.integers(2, 6)), max_s=3, max_a=int(rng.integers(0, 4)))


def bounds_of(inst):
    """The search's bound tables (:class:`_Bounds`) of an instance."""
    return _Bounds(inst.arrival.tolist(), inst.prompt.tolist(), inst.output.tolist(), int(inst.memory))


def total_latency(inst, starts):
    return int((starts + inst.output - inst.arrival).sum())


@pytest.fixture(scope="module")
def solved():
    return [(seed, inst, brute_force(inst)) for seed, inst in random_instances()]


def test_optimum_equals_brute_force(solved):
    for seed, inst, opt in solved:
        found = astar_search(inst)
        assert found.status == "optimal" and found.objective == opt == found.bound, seed
        ver = verify(inst, schedule_from_starts(inst, found.starts))   # the schedule behind it is real
        assert ver.feasible and ver.metrics["total_latency"] == opt, seed


def test_incumbent_proven_or_beaten(solved):
    for seed, inst, opt in solved[:20]:
        found = astar_search(inst)
        same = astar_search(inst, upper=opt, upper_starts=found.starts)       # nothing better exists
        assert same.status == "optimal" and same.objective == opt and same.bound == opt
        worse = astar_search(inst, upper=opt + 3, upper_starts=found.starts)  # a better one is found
        assert worse.objective == opt and total_latency(inst, worse.starts) == opt


def test_early_stop_bound_is_certified(solved):
    """Stopped after a few states, the least open f is still <= OPT (and the root bound is too)."""
    stopped = 0
    for seed, inst, opt in solved:
        for cap in (1, 5, 20):
            found = astar_search(inst, max_states=cap)
            assert found.bound <= opt, (seed, cap)
            stopped += found.status == "feasible"
        a, s, o = (inst.arrival.tolist(), inst.prompt.tolist(), inst.output.tolist())
        assert _Bounds(a, s, o, inst.memory).h((1 << inst.n) - 1, (), int(min(a))) <= opt, seed
    assert stopped > 50            # the early stop was exercised


def test_deadline_returns_bound_and_incumbent():
    inst = jaillet_prefix(1, 13)
    start = np.arange(inst.n) * int(inst.output.max())                     # serial: always feasible
    found = astar_search(inst, upper=total_latency(inst, start), upper_starts=start,
                         deadline=time.perf_counter() + 0.3)
    assert found.status == "time_limit" and found.bound <= 711 <= found.objective   # OPT = 711 (the doc's ladder)
    assert list(found.starts) == list(start)


def test_two_part_search_equals_brute_force(solved):
    """The search in two parts (``threads=2``: each stores and expands the states it owns and sends the others'):
    the brute-force optimum on every random instance, with the schedule behind it, and the incumbent proven or
    beaten as by one part."""
    for seed, inst, opt in solved:
        found = astar_search(inst, threads=2)
        assert found.status == "optimal" and found.objective == opt == found.bound, seed
        ver = verify(inst, schedule_from_starts(inst, found.starts))
        assert ver.feasible and ver.metrics["total_latency"] == opt, seed
        same = astar_search(inst, upper=opt, upper_starts=found.starts, threads=2)
        assert same.status == "optimal" and same.objective == opt == same.bound, seed
        worse = astar_search(inst, upper=opt + 3, upper_starts=found.starts, threads=2)
        assert worse.objective == opt and total_latency(inst, worse.starts) == opt, seed


@pytest.mark.parametrize("model, k", [("jaillet-model1", 0), ("jaillet-model1", 2), ("jaillet-model2", 0),
                                      ("jaillet-model2", 2)])
def test_two_part_search_on_prefixes_equals_one_part(model, k, monkeypatch):
    """On 12-request prefixes (thousands of states, sent between the parts): the same optimum as one part, and the
    schedule read back from both parts' path rows is verified at that cost."""
    inst = parse_instance(jaillet.instance(model, 0, k, first=12))
    one = astar_search(inst, pattern_size=0)
    received, receive = [], latency_astar._receive
    monkeypatch.setattr(latency_astar, "_receive", lambda rows, count, *a: received.append(count) or
                        receive(rows, count, *a))
    two = astar_search(inst, pattern_size=0, threads=2)
    assert one.status == two.status == "optimal" and two.objective == one.objective
    assert verify(inst, schedule_from_starts(inst, two.starts)).metrics["total_latency"] == one.objective
    assert two.expanded > 1000 and sum(received) > 1000


def test_two_part_search_stopped_early_bound_is_certified(solved):
    """Stopped by the state limit (each part at half of it) or by the deadline, the least f held by either part or on
    its way is still <= OPT."""
    stopped = 0
    for seed, inst, opt in solved:
        for cap in (2, 10, 40):
            found = astar_search(inst, max_states=cap, threads=2)
            assert found.bound <= opt, (seed, cap)
            stopped += found.status == "feasible"
    assert stopped > 50
    inst = jaillet_prefix(1, 13)
    start = np.arange(inst.n) * int(inst.output.max())
    found = astar_search(inst, upper=total_latency(inst, start), upper_starts=start,
                         deadline=time.perf_counter() + 0.3, threads=2)
    assert found.status == "time_limit" and found.bound <= 711 <= found.objective


def random_bounds(rng, n, memory, max_s):
    """The bound tables of a random all-at-zero instance: s ~ U{1..max_s}, o ~ U{1..M − s}."""
    M = int(rng.integers(*memory))
    s = rng.integers(1, max_s + 1, n).tolist()
    o = [int(rng.integers(1, M - si + 1)) for si in s]
    return _Bounds([0] * n, s, o, M), s, o, M


def chain_cost(b, B, perm, unit=UNIT):
    """unit × the chain charge of (L) for one completion order, written out: Σ_l unit·c_l·w plus the triple
    bonuses unit·B(c_l, h, j, k) (``B`` in units of 1/unit: ``UNIT`` for (L)), c_l = the number of requests from
    position l on."""
    m = len(perm)
    pairs = sum(unit * (m - 1 - pos) * b.w[perm[pos]][perm[pos + 1]] for pos in range(m - 1))
    return pairs + sum(int(B[m - 1 - pos][perm[pos], perm[pos + 1], perm[pos + 2]]) for pos in range(m - 2))


def test_chain_table_against_permutations():
    rng = np.random.default_rng(3)
    for _ in range(6):
        b, _, _, _ = random_bounds(rng, 6, (8, 20), 3)
        B, G3 = b.triple_bonus(), b.chain_tables(whole=True)[0]
        n = 6
        for S in range(1, 1 << n):
            members = [j for j in range(n) if S >> j & 1]
            for h, j in itertools.permutations(members, 2):
                rest = [k for k in members if k not in (h, j)]
                assert G3[S, h, j] == min(chain_cost(b, B, [h, j, *p]) for p in itertools.permutations(rest))


def reference_chain_table(w3, B, n):
    """UNIT·G[S, h, j] by its recursion over all subsets in increasing order, the whole table at once (plain Python)."""
    G = np.full((1 << n, n, n), CHAIN_BIG, dtype=np.int64)
    for S in range(1, 1 << n):
        members = [j for j in range(n) if S >> j & 1]
        for h, j in itertools.permutations(members, 2):
            rest = [k for k in members if k not in (h, j)]
            G[S, h, j] = w3[h, j] if not rest else min(
                (len(members) - 1) * w3[h, j] + min(B[len(members) - 1, h, j, k] + G[S & ~(1 << h), j, k]
                                                    for k in rest), CHAIN_BIG)
    return G


def test_chain_kernel_two_sizes_at_a_time_against_the_whole_table():
    """chain_kernel keeps two sizes of subsets, indexed by rank and member positions: at 10 requests (ranks of every
    size up to C(10, 5) = 252) its whole table and its row minima, all the search reads, equal the plain recursion;
    requests beyond the table read CHAIN_BIG."""
    rng = np.random.default_rng(11)
    for _ in range(2):
        b, _, _, _ = random_bounds(rng, 10, (8, 20), 3)
        G = reference_chain_table(UNIT * np.array(b.w, dtype=np.int64), b.triple_bonus(), 10)
        whole, first = b.chain_tables(whole=True)
        assert (whole == G).all()
        assert (first == G.min(axis=2)).all() and (b.G3_first == first).all()
    b = _Bounds([0] * 4, [1, 2, 1, 2], [3, 2, 4, 1], 8)
    b.tabled = 3
    _, first = b.chain_tables()
    assert first.shape == (8, 4) and (first[:, 3] == CHAIN_BIG).all() and (first[0b011, :2] < CHAIN_BIG).all()


def memory_of_three_fits(p, o, M, ids, C):
    """Eq. (3) for the requests ``ids`` alone completing at C, checked at each of their completion times (Lemma 1):
    a request x rounds before its completion holds p − x if x < o, else nothing."""
    return all(sum(p[i] - (C[q] - C[r]) for q, i in enumerate(ids) if 0 <= C[q] - C[r] < o[i]) <= M
               for r in range(len(ids)))


@pytest.mark.parametrize("split", [(2, 3), (5, 8), (1, 2)])
def test_triple_bonus_against_direct_minimum(split):
    """d·B(c, h, j, k) for the split s/d (thirds for latency-astar's (L), eighths for chain-bound): the least
    d·a·δ1 + d·b·δ2 over the gaps that h, j, k alone allow (d·a = s·c, d·b = (d − s)(c − 1), or d at c = 2), found
    by enumerating integer gaps and checking their memory directly (not through the lemmas' cases). The single row
    of Lemma 2' (the bonus before 2026-12-01) gives less on some triples and never more."""
    from lpbench.formulations.completion import triple_bonus
    share, unit = split
    rng = np.random.default_rng(4)
    raised = 0
    for _ in range(3):
        b, s, o, M = random_bounds(rng, 5, (8, 16), 3)
        p, w = b.p_arr, b.w
        B = triple_bonus(p, b.o_arr, np.array(w, dtype=np.int64), M, 5, split=split)
        if split == CHAIN_SPLIT:
            assert np.array_equal(B, b.triple_bonus())
        for h, j, k in itertools.permutations(range(5), 3):
            T = min(p[h] + p[j] + p[k] - M, o[j] + w[h][k], o[k] + w[h][j])
            gaps = [(d1, d2) for d1 in range(2 * M) for d2 in range(2 * M)
                    if memory_of_three_fits(p, o, M, (h, j, k), (0, d1, d1 + d2))]
            for c in range(2, 5):
                a3, b3 = share * c, ((unit - share) * (c - 1) if c > 2 else unit)
                best = min(a3 * d1 + b3 * d2 for d1, d2 in gaps)
                assert B[c, h, j, k] == best - a3 * w[h][j] - b3 * w[j][k]
                row = min(a3 * d1 + b3 * d2 for d1 in range(w[h][j], 3 * M) for d2 in range(w[j][k], 3 * M)
                          if 2 * d1 + d2 >= T and d1 + d2 >= w[h][k])
                assert row <= best
                raised += row < best
    assert raised >= 10, raised


def triple_instance(seed):
    """Requests whose peaks fit in memory two at a time but often not three at a time."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 7))
    s, o = rng.integers(1, 3, n), rng.integers(2, 6, n)
    M = int(max((s + o).max() + 1, np.sort(s + o)[-2:].sum() + rng.integers(-1, 3)))
    a = rng.integers(0, 2, n) * rng.integers(0, 2)
    return parse_instance({"memory": M, "requests": {"arrival": a.tolist(), "prompt": s.tolist(),
                                                     "output": o.tolist()}})


def test_triple_rows_hold_on_verified_schedules():
    """For every h, j, k completing in that order in a verified schedule: (C_j − C_h) + (C_k − C_h) >=
    T(h, j, k), C_k − C_h >= w(h, k), the rows (L) rests on."""
    from lpbench.heuristics.slot_sgs import eq3_ramps, serial_sgs
    tight = 0
    for seed in range(30):
        inst = triple_instance(seed)
        a, s, o, M = inst.arrival, inst.prompt.tolist(), inst.output.tolist(), int(inst.memory)
        b = _Bounds(a.tolist(), s, o, M)
        rng = np.random.default_rng(seed)
        for _ in range(5):
            start = serial_sgs(a.astype(np.int64), eq3_ramps(inst.prompt, inst.output), M, rng.permutation(inst.n))
            assert verify(inst, schedule_from_starts(inst, start)).feasible
            C = start + inst.output
            for h, j, k in itertools.permutations(range(inst.n), 3):
                if C[h] <= C[j] <= C[k]:
                    T = min(b.p_arr[h] + b.p_arr[j] + b.p_arr[k] - M, o[j] + b.w[h][k], o[k] + b.w[h][j])
                    assert (C[j] - C[h]) + (C[k] - C[h]) >= T and C[k] - C[h] >= b.w[h][k], (seed, h, j, k)
                    d1, d2, p = C[j] - C[h], C[k] - C[j], b.p_arr          # Lemma 2' in its exact form
                    assert (2 * d1 + d2 >= p[h] + p[j] + p[k] - M or d1 + d2 >= o[k] or d1 >= o[j]), (seed, h, j, k)
                    tight += (C[j] - C[h]) + (C[k] - C[h]) == T > 2 * b.w[h][j] + b.w[j][k]
    assert tight > 20              # the triple row binds where the pairs do not


def test_triple_chain_below_brute_force():
    """On 60 instances where triples bind, the root bound and (L) alone are <= OPT, and the triples
    raise (L) above the pair chain on most of them (so a wrong triple row would show)."""
    raised = 0
    for seed in range(60):
        inst = triple_instance(seed)
        opt = brute_force(inst)
        a, s, o = (inst.arrival.tolist(), inst.prompt.tolist(), inst.output.tolist())
        b = _Bounds(a, s, o, inst.memory)
        full = (1 << inst.n) - 1
        assert b.h(full, (), int(min(a))) <= opt, seed
        if max(a) == 0:
            chain = b.chain(np.array(o), b.waiting(full)[3])
            assert chain <= opt, seed
            raised += chain > pair_chain(b, o, inst.n)
    assert raised >= 15, raised


def pair_chain(b, o, n):
    """Lemma 2's chain alone over all requests (all at zero): min over orders by brute force."""
    return min(n * o[p[0]] + sum((n - 1 - pos) * b.w[p[pos]][p[pos + 1]] for pos in range(n - 1))
               for p in itertools.permutations(range(n)))


def test_earliest_start_beside_running_requests():
    """e_j against placing j one offset at a time and counting memory round by round."""
    rng = np.random.default_rng(5)
    for _ in range(200):
        n = 5
        b, s, o, M = random_bounds(rng, n, (10, 30), 4)
        act, load = [], np.zeros(3 * M, dtype=int)
        for i in rng.permutation(n)[:int(rng.integers(0, 3))]:
            if o[i] == 1:
                continue                                   # a running request has age 1..o − 1
            age = int(rng.integers(1, o[i]))
            prof = np.zeros(3 * M, dtype=int)
            prof[1:o[i] - age + 1] = s[i] + age + np.arange(1, o[i] - age + 1)
            if np.all(load + prof <= M):
                act.append((int(i), age))
                load += prof
        _, e, *_ = b.running(tuple(sorted(act)))
        for j in range(n):
            delta = 0
            while True:
                prof = np.zeros(3 * M, dtype=int)
                prof[delta + 1:delta + o[j] + 1] = s[j] + np.arange(1, o[j] + 1)
                if np.all(load + prof <= M):
                    break
                delta += 1
            assert e[j] == delta


def numpy_running(b, act):
    """The running set's parts as the numpy form of 28e9c14-d21ff1c computed them (the kernels' oracle):
    Lemma-3 rows searched as one sorted array, row r shifted by r·row_shift."""
    M, s, o, n, span = b.M, b.s, b.o, b.n, b.span
    x_all = np.arange(1, span + 1, dtype=np.float64)
    row_shift = float(4 * (span * M + 2 * n * M * M) + 1)
    U = np.zeros(span + 1, dtype=np.int64)
    for i, age in act:
        left = o[i] - age
        U[1:left + 1] += s[i] + age + np.arange(1, left + 1)
    used, free = np.cumsum(U[1:]), np.cumsum(M - U[1:])
    reach = max((o[i] - age for i, age in act), default=0)
    r = np.arange(1, reach + 1)
    slack = M - U[1:reach + 1] - r
    lo = np.maximum(r[None, :] - b.o_arr[:, None], 0)
    hi = np.minimum(r[None, :], b.s_arr[:, None] - slack[None, :])
    hit = hi > lo
    jj = np.broadcast_to(np.arange(n)[:, None], hit.shape)[hit]
    cover = np.zeros((n, reach + 2), dtype=np.int64)
    np.add.at(cover, (jj, lo[hit]), 1)
    np.add.at(cover, (jj, hi[hit]), -1)
    e = np.argmax(np.cumsum(cover, axis=1) == 0, axis=1)
    K = np.arange(1, n + 1 + len(act), dtype=np.float64)[:, None]
    y = np.minimum(x_all[None, :] / K, M + 0.5)
    cap3 = np.maximum.accumulate(K * ((M + 0.5) * y - y * y / 2) - used[None, :], axis=1)
    rows = cap3 + np.arange(len(K))[:, None] * row_shift
    return sum(o[i] - age for i, age in act), e, free, rows.ravel(), len(act), row_shift


def numpy_h(b, W, act, t):
    """h as the numpy form of 28e9c14-d21ff1c computed it, from :func:`numpy_running` (the kernels' oracle)."""
    remaining, e, free, rows, q, row_shift = numpy_running(b, act)
    if not W:
        return remaining
    idx, o_w, V, (first_G, size3, gone), m = b.waiting(W)
    wait = np.maximum(b.a_arr[idx] - t, 0) if t < b.a_last else np.zeros(m, dtype=np.int64)
    c = np.maximum(e[idx], wait) + o_w
    shift = np.arange(m) + q
    x = np.maximum(np.searchsorted(rows, V - 1e-6 + shift * row_shift) - (shift * b.span - 1),
                   np.searchsorted(free, V) + 1)
    volume = int(np.maximum(x, np.sort(c)).sum())
    if m > 1:
        first = (size3[:, None] * c[None, :] + first_G).min(axis=1) // UNIT
        dropped = np.zeros((2, gone.shape[1] + 1), dtype=np.int64)
        dropped[:, 1:] = np.cumsum(c[gone], axis=1)
        pair = int((first + dropped.ravel()).max())
    else:
        pair = int(c.min())
    return remaining + max(volume, pair) - int(wait.sum())


def random_running_set(b, rng, most):
    """Up to ``most`` requests at random ages 1..o − 1 whose ramps fit under M together (as in the search)."""
    act, load = [], np.zeros(b.span + 2, dtype=np.int64)
    for i in rng.permutation(b.n)[:most]:
        if b.o[i] == 1:
            continue
        age = int(rng.integers(1, b.o[i]))
        prof = np.zeros(b.span + 2, dtype=np.int64)
        prof[1:b.o[i] - age + 1] = b.s[i] + age + np.arange(1, b.o[i] - age + 1)
        if np.all(load + prof <= b.M):
            act.append((int(i), age))
            load += prof
    return tuple(sorted(act))


def random_state(b, rng):
    """A random running set of up to 3 requests (:func:`random_running_set`) and a random waiting set W among
    the other requests."""
    act = random_running_set(b, rng, 3)
    started = {i for i, _ in act} | set(rng.permutation(b.n)[:rng.integers(0, b.n)].tolist())
    return act, sum(1 << j for j in range(b.n) if j not in started)


def test_compiled_bound_equals_the_numpy_form():
    """h of random states (waiting set, running set, time before and after the last arrival) on Jaillet
    prefixes of both models equals its numpy form."""
    rng = np.random.default_rng(12)
    for model in ("jaillet-model1", "jaillet-model2"):
        for k in range(4):
            inst = parse_instance(jaillet.instance(model, 0, k, first=11))
            b = bounds_of(inst)
            for _ in range(40):
                act, W = random_state(b, rng)
                t = int(rng.integers(0, b.a_last + 3))
                assert b.h(W, act, t) == numpy_h(b, W, act, t)


def test_bound_with_a_pruning_threshold_is_h_or_reaches_it():
    """The search passes UB − g as ``enough``: the bound may then stop after (L), but only with a value that
    reaches the threshold (so the state is pruned either way), and never above h."""
    rng = np.random.default_rng(13)
    early = 0
    for k in range(4):
        inst = jaillet_prefix(k, 11)
        b = bounds_of(inst)
        for _ in range(40):
            act, W = random_state(b, rng)
            ids, ages = running_arrays(act)
            h = b.h(W, act, 0)
            for enough in (h - 40, h - 3, h, h + 1):
                value = state_bound(enough, W, 0, pack_ages(ids, ages, *b.layout), ids, ages, *b.caches())
                assert value == h or h > value >= enough
                early += value < h
    assert early > 0                                   # the threshold does cut some bounds short


def test_compiled_running_parts_equal_the_numpy_form():
    """The running set's remaining rounds, earliest starts e_j and memory (its free-capacity prefix) equal
    the numpy form, on Jaillet prefixes and random running sets."""
    rng = np.random.default_rng(11)
    for k in range(6):
        inst = jaillet_prefix(k, 12)
        b = bounds_of(inst)
        for _ in range(30):
            act = random_running_set(b, rng, int(rng.integers(0, 4)))
            (remaining, e, U, q), want = b.running(act), numpy_running(b, act)
            free = np.cumsum(b.M - np.concatenate([U, np.zeros(b.span - len(U), dtype=np.int64)]))
            assert remaining == want[0] and q == want[4] and np.array_equal(e, want[1])
            assert np.array_equal(free, want[2])


def jaillet_prefix(k, n):
    return parse_instance(jaillet.instance("jaillet-model1", 0, k, first=n))


def test_pipeline_proves_jaillet_prefix():
    """First 8 requests of jaillet-model1 draw 0: OPT = 701 (also proven by HiGHS, test_completion)."""
    rep = solve_instance(jaillet_prefix(0, 8), "latency-astar", None, 30, ["mc-sf"])
    assert rep["status"] == "optimal" and rep["objective"] == 701 and rep["bound"] == 701 and rep["verified"]
    assert rep["backend"] == "astar" and rep["ratios"]["mc-sf"]["lower"] == pytest.approx(725 / 701)


def test_age_layout_keys_are_distinct_for_distinct_running_sets():
    """Ages take the bits of the longest output less one, 64 // bits to a word; packing is one-to-one on running sets
    of up to 4 words' worth of requests, the top age of a full word (sign bit) included."""
    assert [age_layout([1, o]) for o in (1, 2, 16, 17, 64, 65, 1 << 16)] == [(1, 64), (1, 64), (4, 16), (5, 12),
                                                                              (6, 10), (7, 9), (16, 4)]
    rng = np.random.default_rng(7)
    for longest in (64, 1 << 16):
        bits, per = age_layout([longest])
        n = min(4 * per, MAX_REQUESTS)
        seen = {}
        for _ in range(3000):
            ids = np.flatnonzero(rng.random(n) < 0.5)
            ages = rng.integers(1, longest, len(ids))
            ages[rng.random(len(ids)) < 0.3] = longest - 1       # the top bits of each word
            key = pack_ages(ids, ages, bits, per)
            state = tuple(zip(ids.tolist(), ages.tolist()))
            assert seen.setdefault(key, state) == state


def test_refused_beyond_its_size_with_the_reason():
    """Above MAX_REQUESTS, or above 4 words of ages in the key: an InputError naming the limit and the scalable
    alternative, before anything is built."""
    wide = parse_instance({"name": "wide", "memory": 10, "requests": {
        "arrival": [0] * (MAX_REQUESTS + 1), "prompt": [1] * (MAX_REQUESTS + 1), "output": [2] * (MAX_REQUESTS + 1)}})
    with pytest.raises(InputError, match=f"at most {MAX_REQUESTS} requests"):
        astar_search(wide)
    long = parse_instance({"name": "long", "memory": 1 << 14, "requests": {
        "arrival": [0] * 17, "prompt": [1] * 17, "output": [1 << 13] + [1] * 16}})   # 13 bits: 4 ages to a word
    with pytest.raises(InputError, match="at most 16 requests, and it has 17"):
        astar_search(long)


def wide30(longest=300):
    """30 requests with arrivals spread whose longest output, 300, takes 9 bits: 7 ages to a word, 28 in a key."""
    n = 30
    return parse_instance({"name": "wide30", "memory": 400, "requests": {
        "arrival": [2 * i for i in range(n)], "prompt": [10 + (7 * i) % 20 for i in range(n)],
        "output": [longest] + [5 + (11 * i) % 40 for i in range(n - 1)]}})


def test_certify_step_bounds_without_the_search_what_it_cannot_take(monkeypatch):
    """Where long outputs leave the search's state key too few ages (:func:`unsearchable`), ``latency-ip``'s certify
    step bounds the instance by its other methods instead of failing with the search's refusal (`lpbench solve` on
    a 30-request Azure prefix at rho = 0.8, outputs up to 467, exited 2 with "--formulation: 'latency-astar' packs
    ..."): on 21-40 requests it skips the search on all of them; up to 20 the event model runs alone and says why."""
    from lpbench.formulations.latency_astar import unsearchable
    from lpbench.solvers.base import SolverProfile

    inst = wide30()
    assert "at most 28 requests, and it has 30" in unsearchable(inst)
    assert unsearchable(wide30(longest=256)) is None and LatencyIP.runs_full_search(wide30(longest=256))
    assert not LatencyIP.runs_full_search(inst)
    monkeypatch.setattr(LatencyIP, "full_search_min_seconds", 0.1)      # the search's branch at any time left
    rep = solve_instance(inst, "latency-ip", "highs", 4, ["mc-sf"])
    assert rep["objective"] is not None and rep["bound"] is not None and rep["bound"] <= rep["objective"]
    assert rep["bound_source"] != "latency-astar"
    n = 17                                             # 4,200 takes 13 bits: 4 ages to a word, 16 in a key
    long = parse_instance({"name": "long17", "memory": 4300, "requests": {
        "arrival": [0] * n, "prompt": [5] * n, "output": [4200] + list(range(3, 3 + n - 1))}})
    start = np.concatenate([[0], np.cumsum(long.output)[:-1]])          # serial: always feasible
    bound, source, message, _ = LatencyIP.search_portfolio(
        long, total_latency(long, start), schedule_from_starts(long, start), 0.0, SolverProfile("cpsat", "cpsat"),
        time.perf_counter() + 5)
    assert source == "latency-event" and bound <= int(long.output.sum())   # Σo: OPT here, all start at round 0
    assert "latency-astar not run: it packs the running requests' ages" in message, message


def test_subset_bound_skips_a_subset_the_search_cannot_take(monkeypatch):
    """``subset-bound``'s U of 20 requests, outputs of 13 bits (16 ages to a key): (0, the reason, False), not
    the search's refusal."""
    from lpbench.formulations import subset_bound as sb

    monkeypatch.setattr(sb, "kernels_ready", lambda seconds: True)
    n = 24
    inst = parse_instance({"name": "long24", "memory": 1 << 14, "requests": {
        "arrival": [0] * n, "prompt": [1] * n, "output": [4200 + i for i in range(20)] + [1] * 4}})
    value, why, complete = sb.subset_bound(inst, time.perf_counter() + 30, members=20)
    assert (value, complete) == (0, False) and why.startswith("subset search not run: it packs"), why


@pytest.mark.parametrize("threads", [1, 2])
def test_search_stops_at_the_memory_limit_with_a_certified_bound(monkeypatch, threads):
    """Past ``MEMORY_SHARE`` of the machine's memory the search stops as at the state limit: status "feasible",
    ``memory`` set, a bound at most the optimum (jaillet-model1 draw 2's first 12 requests, OPT 388); the formulation
    says which limit stopped it. At the default share the same search proves 388."""
    from lpbench.solvers.base import SolverProfile

    inst = jaillet_prefix(2, 12)
    monkeypatch.setattr(latency_astar, "MEMORY_SHARE", 1e-6)           # any process is above it
    found = astar_search(inst, pattern_size=0, threads=threads)
    assert found.status == "feasible" and found.memory and found.bound <= 388
    res = latency_astar.LatencyAStar(inst).solve(SolverProfile("latency-astar", "closed-form", time_limit=20))
    assert res.status == "feasible" and "of the machine's memory" in res.message
    monkeypatch.undo()
    found = astar_search(inst, pattern_size=0, threads=threads)
    assert found.status == "optimal" and found.objective == 388 and not found.memory


def kinds_instance(name, memory, requests):
    """An instance of (arrival, prompt, output) triples."""
    return parse_instance({"name": name, "memory": memory, "requests": {
        key: [r[x] for r in requests] for x, key in enumerate(("arrival", "prompt", "output"))}})


def kinds18():
    """18 requests of three kinds (arrival, prompt, output) and the memory: OPT = 392, the value ``latency-event``
    on CP-SAT proves in 19 s (scratch run)."""
    rng = np.random.default_rng(0)
    kinds = [(int(rng.integers(1, 4)), int(rng.integers(1, 20))) for _ in range(3)]
    M = int(max(s + o for s, o in kinds) + rng.integers(2, 12))
    arrival = sorted(int(v) for v in rng.integers(0, 4, 18))
    return [(arrival[i], *kinds[i % 3]) for i in range(18)], M


def test_eighteen_requests_proven_in_any_order():
    """Beyond 16 requests (ids 16 and 17 in the second age word): :func:`kinds18`, OPT = 392. The search proves it
    with the requests in the given order and reversed (other requests in the second word), and its schedules pass
    the verifier."""
    requests, M = kinds18()
    for order in (slice(None), slice(None, None, -1)):
        inst = kinds_instance("kinds18", M, requests[order])
        found = astar_search(inst, deadline=time.perf_counter() + 60)
        assert found.status == "optimal" and found.objective == 392 == found.bound
        ver = verify(inst, schedule_from_starts(inst, found.starts))
        assert ver.feasible and ver.metrics["total_latency"] == 392


def test_search_beyond_its_chain_table_equals_brute_force(solved, monkeypatch):
    """With the chain table cut to 2 requests (``TABLE_REQUESTS``, as beyond 20 requests at its real value), the
    search runs on the instance in :func:`table_order` and still returns OPT with its starts in the caller's
    order (verified), with (P) on 2 requests or without, and its early-stop bounds stay below OPT."""
    monkeypatch.setattr(latency_astar, "TABLE_REQUESTS", 2)
    moved = 0
    for seed, inst, opt in solved:
        order = latency_astar.table_order(inst)
        moved += order is not None and (order != np.arange(inst.n)).any()
        for size in (0, 2):
            found = astar_search(inst, pattern_size=size, plain_seconds=None)
            assert found.status == "optimal" and found.objective == opt == found.bound, (seed, size)
            ver = verify(inst, schedule_from_starts(inst, found.starts))
            assert ver.feasible and ver.metrics["total_latency"] == opt, (seed, size)
            assert astar_search(inst, pattern_size=size, max_states=3, plain_seconds=None).bound <= opt, (seed, size)
        b = bounds_of(inst)
        assert b.tabled == min(inst.n, 2) and b.G3_first.shape == (1 << b.tabled, inst.n)
    assert moved >= 20                      # the permutation was exercised


def test_table_order_keeps_the_longest_outputs_first(monkeypatch):
    inst = parse_instance({"name": "five", "memory": 50, "requests": {
        "arrival": [0] * 5, "prompt": [1] * 5, "output": [3, 9, 1, 9, 5]}})
    assert latency_astar.table_order(inst) is None                  # 5 <= TABLE_REQUESTS: no change
    monkeypatch.setattr(latency_astar, "TABLE_REQUESTS", 3)
    assert latency_astar.table_order(inst).tolist() == [1, 3, 4, 0, 2]


def kinds22():
    """22 requests, more than the chain table covers: :func:`kinds18` (OPT 392) and four short ones that arrive
    after all of those can have finished and fit together, so OPT = 392 + their outputs = 397."""
    requests, M = kinds18()
    inst = kinds_instance("kinds22", M, requests + [(400, 1, 1), (400, 1, 2), (401, 1, 1), (403, 2, 1)])
    assert M >= 2 + 3 + 2 + 3 and inst.n > latency_astar.TABLE_REQUESTS
    return inst


def kinds32():
    """32 requests (the cache of waiting sets was a 2^n array, refused above 28 until 801a29b): :func:`kinds18` (OPT
    392) and 14 short ones arriving every 3 rounds after all of those can have finished, each done before the next
    arrives, so OPT = 392 + their outputs = 413."""
    requests, M = kinds18()
    inst = kinds_instance("kinds32", M, requests + [(400 + 3 * i, 1, 1 + i % 2) for i in range(14)])
    assert inst.n == 32 and M >= 1 + 2
    return inst


@pytest.mark.parametrize("build, opt", [(kinds22, 392 + 5), (kinds32, 392 + 21)])
def test_proven_beyond_the_table(build, opt):
    """The search proves the optimum of :func:`kinds22` (397) and :func:`kinds32` (413), and its schedule passes the
    verifier."""
    inst = build()
    found = astar_search(inst, deadline=time.perf_counter() + 120)
    assert found.status == "optimal" and found.objective == opt == found.bound
    ver = verify(inst, schedule_from_starts(inst, found.starts))
    assert ver.feasible and ver.metrics["total_latency"] == opt


def test_certify_step_searches_all_requests_above_the_table(monkeypatch):
    """On 21 to ``full_search_max_requests`` requests the certify step runs the search on all of them first: it
    proves :func:`kinds22`'s optimum (with a verified better schedule when the incumbent is worse); with less than
    ``full_search_min_seconds`` for it, or cut to a vanishing share of the step, the search proves nothing (or does
    not run) and the chain and subset bounds follow, still <= OPT; the step does not run it up to 20 requests or
    with the limit at 0."""
    from lpbench.heuristics.slot_sgs import local_search
    from lpbench.solvers import get_profile

    inst = kinds22()
    assert LatencyIP.runs_full_search(inst) and not LatencyIP.runs_full_search(jaillet_prefix(1, 20))
    start, latency = local_search(inst, iterations=50, seed=0)[:2]
    incumbent = schedule_from_starts(inst, start)
    bound, source, message, better = LatencyIP.certify_bound(inst, float(latency), incumbent, get_profile("highs", 60),
                                                             time.perf_counter() + 60)
    assert source == "latency-astar" and bound == 397, (source, bound, message)
    if latency > 397:
        assert better[0] == "latency-astar" and verify(inst, better[1]).metrics["total_latency"] == 397
    else:
        assert better is None
    for share, least in ((1.0, 100.0), (1e-9, 0.0)):    # too short for it, then a share that ends at once
        monkeypatch.setattr(LatencyIP, "full_search_share", share)
        monkeypatch.setattr(LatencyIP, "full_search_min_seconds", least)
        bound, source, message, _ = LatencyIP.certify_bound(inst, float(latency), incumbent,
                                                            get_profile("highs", 60), time.perf_counter() + 5)
        assert bound <= 397 and source in ("chain-bound", "subset-bound", "latency-astar", "lagrange-bound"), source
        assert least == 0.0 or source != "latency-astar"
    monkeypatch.setattr(LatencyIP, "full_search_max_requests", 0)
    assert not LatencyIP.runs_full_search(inst)


def test_ten_requests_proven():
    """Draw 1, first 10 requests: 549, the value CP-SAT's latency-cp proves (README n-ladder)."""
    found = astar_search(jaillet_prefix(1, 10))
    assert found.status == "optimal" and found.objective == 549


def test_certify_step_proves_and_returns_a_better_schedule(monkeypatch):
    """latency-ip's certify step runs the search: with MC-SF (725) as the only incumbent it finds 701 and
    solve reports that schedule, verified, as the optimum without building the IP."""
    monkeypatch.setattr(LatencyIP, "search_incumbent", staticmethod(lambda inst, deadline, seed=0, incumbent=None: None))
    rep = solve_instance(jaillet_prefix(0, 8), "latency-ip", "highs", 30, ["mc-sf"])
    assert rep["status"] == "optimal" and rep["objective"] == 701 and rep["verified"]
    assert rep["bound_source"] == "latency-astar" and rep["objective_source"] == "search latency-astar"
    assert rep["variables"] is None                    # the IP was not built
    assert rep["ratios"]["mc-sf"]["upper"] == pytest.approx(725 / 701)


def test_certify_portfolio_cpsat_side_and_prompt_stop():
    """Draw 2, first 12 requests (many small requests): the event model on CP-SAT, beside the search,
    proves 388 (in about 1 s; the search alone, with its pattern table, needs 8-9 s, scratch timing). At 10
    requests, the case here before, the compiled search proves 318 in 0.2 s and the race went either way. On
    draw 0's first 8 the search proves 701 at once, and CP-SAT is stopped instead of running to its limit."""
    rep = solve_instance(jaillet_prefix(2, 12), "latency-ip", "highs", 60, ["mc-sf"])
    assert rep["status"] == "optimal" and rep["objective"] == 388 and rep["bound_source"] == "latency-event"
    assert rep["variables"] is None                    # proven in the certify step
    t0 = time.perf_counter()
    rep = solve_instance(jaillet_prefix(0, 8), "latency-cp", "cpsat", 60, ["mc-sf"])
    assert rep["status"] == "optimal" and rep["bound_source"] == "latency-astar"
    assert time.perf_counter() - t0 < 30               # the step's CP-SAT would otherwise run about 50 s


def test_portfolio_stopped_by_its_deadline_returns_a_certified_bound():
    """Draw 1, first 14 requests (OPT 775, which the search alone proves in about 11 s, scratch timing): after
    2 s neither side has finished, and the step returns the larger certified bound, above the floor and below 775."""
    from lpbench.solvers.base import SolverProfile

    inst = jaillet_prefix(1, 14)
    start = np.arange(inst.n) * int(inst.output.max())                     # serial: always feasible
    serial = schedule_from_starts(inst, start)
    bound, source, message, better = LatencyIP.search_portfolio(
        inst, total_latency(inst, start), serial, 100.0, SolverProfile("cpsat", "cpsat"), time.perf_counter() + 2)
    assert 100 <= bound <= 775 and source in ("latency-astar", "latency-event") and "optimal" not in message
    assert better is None or (better[0] == "latency-event"
                               and verify(inst, better[1]).metrics["total_latency"] < total_latency(inst, start))


@pytest.mark.parametrize("model, k, n, opt, switch", [
    ("jaillet-model2", 3, 14, 490, "event_beside_spread_arrivals"),
    ("jaillet-model1", 2, 12, 388, "event_beside_simultaneous_arrivals")])
def test_portfolio_runs_the_search_alone_or_beside_the_event_model(monkeypatch, model, k, n, opt, switch):
    """jaillet-model2 draw 3's first 14 requests (arrivals spread; OPT = 490, scratch run of the search alone) and
    jaillet-model1 draw 2's first 12 (all at once; OPT = 388, the event model's proof above): with ``switch`` off
    (the default where arrivals are spread) the step proves the optimum with the search alone, its table of
    ``solo_pattern_members``, in two parts, and never builds the event model; with it on (the default where all
    arrive at once) the event model runs beside the search. The table tabulates 8 members here, not the default
    11, which take most of a minute to build for no difference in what is checked."""
    from lpbench.formulations.latency_event import LatencyEvent
    from lpbench.solvers.base import SolverProfile

    inst = parse_instance(jaillet.instance(model, 0, k, first=n))
    start = int(inst.arrival.max()) + np.arange(inst.n) * int(inst.output.max())     # serial after the last arrival
    serial = schedule_from_starts(inst, start)
    monkeypatch.setattr(LatencyIP, "solo_pattern_members", 8)
    built, build = [], LatencyEvent.build
    monkeypatch.setattr(LatencyEvent, "build", lambda self: built.append(self) or build(self))
    tables = []
    search = latency_astar.astar_search
    monkeypatch.setattr(latency_astar, "astar_search", lambda *a, **kw: tables.append(
        (kw.get("pattern_size"), kw.get("threads", 1))) or search(*a, **kw))
    for partner in (False, True):
        monkeypatch.setattr(LatencyIP, switch, partner)
        bound, source, message, better = LatencyIP.search_portfolio(
            inst, total_latency(inst, start), serial, 0.0, SolverProfile("cpsat", "cpsat"), time.perf_counter() + 60)
        assert bound == opt and bool(built) == partner and ("alone" in message) != partner
        assert verify(inst, better[1]).metrics["total_latency"] == opt
    assert tables == [(min(inst.n - 2, LatencyIP.solo_pattern_members), 2), (None, 1)]


def subset_instance(inst, members):
    """The requests ``members`` of ``inst`` alone, every one arrived at 0 (what a pattern entry solves)."""
    return parse_instance({"memory": int(inst.memory), "requests": {
        "arrival": [0] * len(members), "prompt": [int(inst.prompt[j]) for j in members],
        "output": [int(inst.output[j]) for j in members]}})


def patterned_bounds(inst, size, levels=None):
    b = bounds_of(inst)
    build_patterns(b, np.zeros(inst.n, dtype=np.int64), pattern_members(b, size), levels)
    return b


def test_patterns_are_the_optima_of_subsets(solved):
    """Every entry of (P)'s table is the brute-force optimum of its subset alone, all arrived at 0."""
    for seed, inst, _ in solved[:25]:
        b = patterned_bounds(inst, inst.n)
        for S in range(1, 1 << inst.n):
            members = [j for j in range(inst.n) if S >> j & 1]
            assert b.pattern[S] == brute_force(subset_instance(inst, members)), (seed, S)


def copied_bounds(inst, size):
    """Bounds whose (P) tabulates the ``size`` largest requests and the others as copies of their least (s, o)."""
    b = bounds_of(inst)
    members = pattern_members(b, size)
    others = [j for j in range(inst.n) if j not in members]
    build_patterns(b, np.zeros(inst.n, dtype=np.int64), members, copies=[others])
    return b, members, others


def test_patterns_with_copies_are_the_optima_of_the_copied_subsets(solved):
    """With 2 members and the others as copies of (least s, least o), the entry of every subset of the members
    with any c of the others (read through :func:`canonical_subset`) is the brute-force optimum of those members
    with c copies, all arrived at 0; and it is at most the optimum of the real subset (copies are lighter)."""
    checked = lighter = 0
    for seed, inst, _ in solved[:30]:
        b, members, others = copied_bounds(inst, 2)
        copy = {"prompt": int(inst.prompt[others].min()), "output": int(inst.output[others].min())}
        for S in range(1 << inst.n):
            chosen = [j for j in members if S >> j & 1]
            c = sum(S >> j & 1 for j in others)
            if not chosen and c == 0:
                continue
            alone = {"memory": int(inst.memory), "requests": {
                "arrival": [0] * (len(chosen) + c),
                "prompt": [int(inst.prompt[j]) for j in chosen] + [copy["prompt"]] * c,
                "output": [int(inst.output[j]) for j in chosen] + [copy["output"]] * c}}
            entry = b.pattern[canonical_subset(S, b.groups)]
            assert entry == brute_force(parse_instance(alone)), (seed, S)
            real = brute_force(subset_instance(inst, [j for j in range(inst.n) if S >> j & 1]))
            assert entry <= real, (seed, S)
            checked += 1
            lighter += entry < real
    assert checked > 300 and lighter > 20


def test_pattern_bound_with_copies_admissible_along_optimal_schedules(solved):
    """With (P) over 2 members and the others as copies, g + h <= OPT at every state of an optimal schedule
    (arrivals included); on some of them with equality where the copies' requests in W end o_j − o* later than
    their copies (:func:`copies_shorter` > 0), so a term one too large would show."""
    states = tight = 0
    for seed, inst, opt in solved:
        if inst.n < 3:
            continue
        b, _, _ = copied_bounds(inst, 2)
        starts = astar_search(inst, pattern_size=0).starts
        for t, g, W, act in schedule_states(inst, starts):
            h = b.h(W, act, t)
            assert g + h <= opt, (seed, t)
            states += 1
            tight += g + h == opt and copies_shorter(W & b.G1s[0], b.groups, b.o_arr) > 0
    assert states > 300 and tight > 10, (states, tight)


def test_copies_shorter_by_hand():
    """Σ (o_j − o*) over the members of S in each group of copies: groups {2, 3} with o* = 3 and {5} with o* = 1."""
    groups = group_rows([([1 << 2, 1 << 3], 1, 3), ([1 << 5], 2, 1)])
    o = np.array([9, 9, 7, 3, 9, 4])
    assert copies_shorter(0b000011, groups, o) == 0          # members only
    assert copies_shorter(0b000100, groups, o) == 4
    assert copies_shorter(0b101111, groups, o) == 4 + 0 + 3


def test_running_requests_taken_as_copies():
    """running_as_copies, worked by hand: a group of two copies (s*, o*) = (1, 3) at bits 2 and 3; a request
    running at age α counts as a copy where s + α >= 1 and o − α >= 3, for at most the copies not waiting, and
    each costs its copy's o* = 3 rounds from t."""
    groups = group_rows([([1 << 2, 1 << 3], 1, 3)])
    s, o = np.array([2, 1, 1, 1, 5]), np.array([10, 4, 3, 3, 9])
    ids, ages = np.array([0, 1, 4]), np.array([2, 2, 1])     # rounds left 8, 2 (too few), 8

    def taken(S, G1=0b11111, ids=ids, ages=ages):
        return running_as_copies(canonical_subset(S, groups), S, G1, groups, ids, ages, s, o)

    assert taken(0) == (0b1100, 6)                   # both copies: requests 0 and 4
    assert taken(0b1000) == (0b1100, 3)             # one copy waits: room for one
    assert taken(0b1100) == (0b1100, 0)             # none left
    assert taken(0, G1=0b10111) == (0b100, 3)       # G1 holds one copy only
    assert taken(0, ids=ids[1:2], ages=ages[1:2]) == (0, 0)


def test_running_copies_raise_h_on_random_states():
    """On random states of Jaillet prefixes (4 members, copies of the others), h with running requests taken as
    copies is at least h without them (the same table, no running request eligible) and above it on some."""
    rng = np.random.default_rng(5)
    raised = compared = 0
    for k in range(4):
        inst = jaillet_prefix(k, 10)
        b, _, _ = copied_bounds(inst, 4)
        plain = bounds_of(inst)
        plain.pattern[:], plain.G1s, plain.groups = b.pattern, b.G1s, b.groups.copy()
        plain.groups[:, 1] = 1 << 40                 # s* beyond every running footprint: no running copy
        for _ in range(300):
            act, W = random_state(b, rng)
            h, h_plain = b.h(W, act, 0), plain.h(W, act, 0)
            assert h >= h_plain, (k, W, act)
            raised += h > h_plain
            compared += 1
    assert raised > 10, (raised, compared)


def test_copies_chosen_by_their_copied_volume():
    """pattern_copies takes, in order of longest o, the first c others that maximise c·vol(least s, least o),
    leaving out a short request that would shorten every copy; at most ``room`` of them."""
    b = _Bounds([0] * 6, [9, 1, 3, 2, 4, 1], [9, 16, 15, 14, 1, 3], 40)
    # others of member 0 by o: 1 (1, 16), 2 (3, 15), 3 (2, 14), 5 (1, 3), 4 (4, 1): c·vol = 152, 270, 357, 36, 10
    assert pattern_copies(b, [0], 16) == [[1, 2, 3]]
    assert pattern_copies(b, [0], 2) == [[1, 2]] and pattern_copies(b, [0], 0) == []
    assert pattern_copies(b, list(range(6)), 16) == []


def test_copies_split_into_two_groups_by_volume(monkeypatch):
    """With two groups allowed, pattern_copies cuts its group (of 4 or more) where Σ size·vol(least s, least o) is
    largest with 2 or more in each, when that beats one group by SPLIT_GAIN (hand-worked)."""
    monkeypatch.setattr(latency_astar, "SPLIT_GAIN", 1.05)               # the hand-worked cases below
    b = _Bounds([0] * 7, [9, 1, 3, 2, 1, 4, 1], [9, 16, 15, 14, 13, 1, 12], 40)
    # others by o: 1 (1, 16), 2 (3, 15), 3 (2, 14), 4 (1, 13), 6 (1, 12), 5 (4, 1): c·vol = 152, 270, 357, 416, 450, 10
    assert pattern_copies(b, [0], 16, groups=1) == [[1, 2, 3, 4, 6]]
    # cut after 2: 2·vol(1, 15) + 3·vol(1, 12) = 270 + 270 = 540; after 3: 357 + 180 = 537; one group 450
    assert pattern_copies(b, [0], 16, groups=2) == [[1, 2], [3, 4, 6]]
    assert pattern_copies(b, [0], 4, groups=2) == [[1, 2], [3, 4]]      # 270 + 208 = 478 >= 1.05 · 416
    assert pattern_copies(b, [0], 3, groups=2) == [[1, 2, 3]]           # fewer than 4 copies: one group
    monkeypatch.setattr(latency_astar, "SPLIT_GAIN", 1.25)               # 540 < 1.25 · 450
    assert pattern_copies(b, [0], 16, groups=2) == [[1, 2, 3, 4, 6]]
    monkeypatch.setattr(latency_astar, "SPLIT_GAIN", 1.2)                # 540 >= 1.2 · 450, 478 < 1.2 · 416
    assert pattern_copies(b, [0], 16, groups=2) == [[1, 2], [3, 4, 6]]
    assert pattern_copies(b, [0], 4, groups=2) == [[1, 2, 3, 4]]


def two_groups(bounds, members):
    """The others of ``members`` by longest o, as two groups of copies: the first two, and the rest."""
    others = sorted(set(range(bounds.n)) - set(members), key=lambda j: (-bounds.o_arr[j], -bounds.s_arr[j], j))
    return [others[:2], others[2:]]


def test_patterns_with_two_copy_groups_are_the_optima_of_the_copied_subsets(solved):
    """With 1 member and the others in two groups of copies (each its own least s, least o), the entry of every
    subset (read through :func:`canonical_subset`) is the brute-force optimum of the member with c1 and c2 copies,
    all arrived at 0, and at most the optimum of the real subset."""
    checked = 0
    for seed, inst, _ in solved:
        if inst.n < 5:
            continue
        b = bounds_of(inst)
        members = pattern_members(b, 1)
        groups = two_groups(b, members)
        build_patterns(b, np.zeros(inst.n, dtype=np.int64), members, copies=groups)
        copies = [(int(inst.prompt[g].min()), int(inst.output[g].min())) for g in groups]
        for S in range(1, 1 << inst.n):
            chosen = [j for j in members if S >> j & 1]
            counts = [sum(S >> j & 1 for j in g) for g in groups]
            s_all = [int(inst.prompt[j]) for j in chosen] + [c[0] for c, k in zip(copies, counts) for _ in range(k)]
            o_all = [int(inst.output[j]) for j in chosen] + [c[1] for c, k in zip(copies, counts) for _ in range(k)]
            alone = parse_instance({"memory": int(inst.memory), "requests": {
                "arrival": [0] * len(s_all), "prompt": s_all, "output": o_all}})
            entry = b.pattern[canonical_subset(S, b.groups)]
            assert entry == brute_force(alone), (seed, S)
            assert entry <= brute_force(subset_instance(inst, [j for j in range(inst.n) if S >> j & 1])), (seed, S)
            checked += 1
    assert checked > 300


def test_pattern_table_in_two_threads_equals_one_thread():
    """(P)'s table built by two threads (:func:`tabulate_stage` splits each stage's subsets of one size between
    them, each thread with its own caches) equals the one built by one, entry for entry: on the first 12 requests
    of jaillet-model1 draw 8, 7 members and the others in two groups of copies. Stopped by a deadline halfway
    through the time the two threads took, it counts only its complete stages, and every entry it keeps is the full
    table's. (Halfway through the one thread's time, as before, the two threads sometimes finished: a first build
    slowed by a cold start, or two threads more than twice as fast, failed a clean-clone run on 2026-11-30.)"""
    inst = jaillet_prefix(8, 12)
    zeros = np.zeros(inst.n, dtype=np.int64)
    tables = []
    for threads in (1, 2):
        b = bounds_of(inst)
        members = pattern_members(b, 7)
        t0 = time.perf_counter()
        done = build_patterns(b, zeros, members, copies=two_groups(b, members), threads=threads)
        seconds = time.perf_counter() - t0            # the two threads' time, measured last
        tables.append((done, b.pattern.copy()))
    (done1, table1), (done2, table2) = tables
    assert done1 == done2 == inst.n and (table1 == table2).all() and np.count_nonzero(table1) > 1000
    cut = bounds_of(inst)
    members = pattern_members(cut, 7)
    done = build_patterns(cut, zeros, members, copies=two_groups(cut, members), threads=2,
                          deadline=time.perf_counter() + seconds / 2)
    kept = cut.pattern != 0
    assert done < inst.n and (cut.pattern[kept] == table1[kept]).all()


def test_search_with_two_copy_groups_equals_brute_force(solved, monkeypatch):
    """The search with (P) over 1 member and the others in two groups of copies returns OPT (arrivals included)."""
    monkeypatch.setattr(latency_astar, "pattern_copies", lambda bounds, members, room: two_groups(bounds, members))
    searched = 0
    for seed, inst, opt in solved:
        if inst.n < 5:
            continue
        found = astar_search(inst, pattern_size=1, plain_seconds=None)
        assert found.status == "optimal" and found.objective == opt == found.bound, seed
        assert found.tabulated == inst.n and total_latency(inst, found.starts) == opt
        searched += 1
    assert searched >= 10


def schedule_states(inst, starts):
    """The search's states along a schedule: at each t, (g so far, W not yet started, running (id, age))."""
    a, o = inst.arrival.astype(int), inst.output.astype(int)
    C = starts + o
    for t in range(int(a.min()), int(C.max()) + 1):
        g = int(np.maximum(np.minimum(t, C) - a, 0).sum())
        W = sum(1 << j for j in range(inst.n) if starts[j] >= t)
        act = tuple((j, t - int(starts[j])) for j in range(inst.n) if starts[j] < t < C[j])
        yield t, g, W, act


def test_pattern_bound_admissible_along_optimal_schedules(solved):
    """With (P) over every request, g + h <= OPT at every state of an optimal schedule (h is admissible
    there), and (P) meets OPT at the start of the instances where all arrive together (so an entry one too
    high would show)."""
    tight = 0
    for seed, inst, opt in solved:
        b = patterned_bounds(inst, inst.n, levels=range(inst.n, 0, -1))
        starts = astar_search(inst, pattern_size=0).starts
        for t, g, W, act in schedule_states(inst, starts):
            h = b.h(W, act, t)
            assert g + h <= opt, (seed, t)
            tight += g + h == opt
        if inst.arrival.max() == 0:
            assert b.h((1 << inst.n) - 1, (), 0) == opt, seed
    assert tight > 100


def test_cached_rest_bound_equals_a_fresh_computation(solved):
    """(P)'s h of W − G1 is cached per (running set, W − G1, t while arrivals remain): on every state (W, t) with
    a few running sets, h read through one _Bounds whose caches the calls before have filled equals h computed
    by a fresh one with the same table, with t before and after the last arrival."""
    compared = 0
    for seed, inst, _ in solved:
        if inst.arrival.max() == 0 or inst.n < 4:
            continue
        shared = patterned_bounds(inst, 2, levels=[2, 1])
        rng = np.random.default_rng(seed)
        runners = [j for j in range(inst.n) if inst.output[j] > 1]
        for t in range(int(inst.arrival.max()) + 2):
            for W in range(1, 1 << inst.n):
                free = [j for j in runners if not W >> j & 1]
                act = tuple((j, int(rng.integers(1, inst.output[j]))) for j in free[:int(rng.integers(0, 3))])
                fresh = bounds_of(inst)
                fresh.pattern[:], fresh.G1s = shared.pattern, shared.G1s
                assert shared.h(W, act, t) == fresh.h(W, act, t), (seed, W, act, t)
                compared += 1
    assert compared > 1000


def test_search_with_patterns_equals_brute_force(solved):
    """With (P) on 3 of the requests (the others as copies, or not), and on all of them, the search still
    returns OPT (arrivals included), and its early-stop bounds stay below it; by default these small instances
    are proven by the search without the table, which is then not built."""
    for seed, inst, opt in solved:
        for size, room in ((3, 0), (3, 16), (inst.n, 16)):
            found = astar_search(inst, pattern_size=size, plain_seconds=None, copy_room=room)
            assert found.status == "optimal" and found.objective == opt == found.bound, (seed, size)
            copies = pattern_copies(bounds_of(inst), pattern_members(bounds_of(inst), size), room)
            assert found.tabulated == size + sum(len(group) for group in copies)
            assert total_latency(inst, found.starts) == opt
            assert astar_search(inst, pattern_size=size, max_states=3, plain_seconds=None).bound <= opt, (seed, size)
        plain = astar_search(inst, pattern_size=inst.n)      # tiny: proven before the table would be built
        assert plain.tabulated == 0 and plain.objective == opt


def test_patterns_raise_the_root_bound_on_a_jaillet_prefix():
    """Draw 8, first 13 requests: (P) over the 10 largest lifts the root bound toward OPT and the search
    proves the same optimum with fewer states."""
    inst = jaillet_prefix(8, 13)
    plain = bounds_of(inst)
    full = (1 << inst.n) - 1
    with_p = patterned_bounds(inst, 10, levels=(10, 8))
    without, found = astar_search(inst, pattern_size=0), astar_search(inst, pattern_size=10, plain_seconds=None)
    assert found.objective == without.objective and found.status == without.status == "optimal"
    assert plain.h(full, (), 0) < with_p.h(full, (), 0) <= found.objective
    assert found.expanded < without.expanded


def test_pattern_table_stops_at_its_budget_or_deadline(solved):
    """With no time the table is not begun (nothing tabulated, (P) off) and the search is still exact; with
    time, every request is tabulated and the root bound is OPT where all arrive together."""
    seed, inst, opt = next((x for x in solved if x[1].n == 5))
    b = bounds_of(inst)
    zeros = np.zeros(inst.n, dtype=np.int64)
    assert build_patterns(b, zeros, pattern_members(b, inst.n), budget=0.0) == 0 and len(b.G1s) == 0
    assert build_patterns(b, zeros, pattern_members(b, inst.n), deadline=time.perf_counter() - 1) == 0
    assert len(b.G1s) == 0 and not b.pattern.any()
    found = astar_search(inst, pattern_size=inst.n, deadline=time.perf_counter() - 1)
    assert found.tabulated == 0 and found.bound <= opt
    full = astar_search(inst, pattern_size=inst.n, plain_seconds=None)
    assert full.tabulated == inst.n and full.objective == opt and full.root <= opt
    assert full.root == opt or inst.arrival.max() > 0, seed


def test_array_heap_pops_in_heapq_order_through_growth():
    """The search's heap in a numpy array (heap_push / heap_pop) pops rows (f, −g, node) in the order heapq does,
    across interleaved pushes and pops and while its array doubles from one row; add_row appends and grows."""
    import heapq

    from numba.typed import List

    rng = np.random.default_rng(7)
    box, sizes = List([np.empty((1, 3), dtype=np.int64)]), np.zeros(3, dtype=np.int64)
    reference, popped, expected = [], [], []
    for step in range(3000):
        if reference and rng.random() < 0.4:
            popped.append(tuple(int(v) for v in heap_pop(box, sizes)))
            expected.append(heapq.heappop(reference))
        else:
            row = (int(rng.integers(0, 50)), -int(rng.integers(0, 20)), step)   # ties in f and g: node decides
            heap_push(box, sizes, *row)
            heapq.heappush(reference, row)
    while reference:
        popped.append(tuple(int(v) for v in heap_pop(box, sizes)))
        expected.append(heapq.heappop(reference))
    assert popped == expected and sizes[0] == 0 and len(popped) > 1000 and box[0].shape[0] >= 1024

    store = List([np.empty((1, 3), dtype=np.int64)])
    assert [add_row(store, sizes, 2, i, 2 * i, -i, 0, 0, 0, 0) for i in range(100)] == list(range(100))
    assert sizes[2] == 100 and store[0][:100].tolist() == [[i, 2 * i, -i] for i in range(100)]


def test_dominance_drops_a_state_exactly_when_the_finished_twin_is_cheap_enough():
    """dominated(): (a) the state with running requests i (age α_i) and j is dropped when the stored state with
    j alone at the same age and the same (W, t) has g' <= g + o_i − α_i, and not at g' = g + o_i − α_i + 1, nor
    when j's age or W differs there; ages packed into two words (i and j in different words). (b) It is
    dropped when the stored state with the same running set and W less a member k has g' <= g + o_k, and not
    at g + o_k + 1, nor for W with one more member."""
    from lpbench.formulations.astar_containers import new_search

    o = np.array([3, 5, 9, 9, 9, 40000, 7], dtype=np.int64)
    bits, per = age_layout(o)                          # 16 bits: 4 ages a word, so request 5 is in word 1
    assert per == 4
    ids, ages = np.array([2, 5], dtype=np.int64), np.array([4, 30000], dtype=np.int64)
    W, t_key, g = 0b1000011, -1, 50
    state = (W, t_key) + tuple(pack_ages(ids, ages, bits, per))

    def dropped_beside(stored, g_stored):             # the state, with only ``stored`` (and the start) in best_g
        best_g, seen = new_search(W, 0, t_key, 0)[4:]
        remember(best_g, seen, stored, g_stored)
        return dominated(best_g, seen, state, ids, ages, 2, o, g, bits, per)

    for drop, kept in ((0, 1), (1, 0)):               # (a): finish request 2 (word 0), then request 5 (word 1)
        rem = int(o[ids[drop]] - ages[drop])
        twin = (W, t_key) + tuple(pack_ages(ids[kept:kept + 1], ages[kept:kept + 1], bits, per))
        older = (W, t_key) + tuple(pack_ages(ids[kept:kept + 1], ages[kept:kept + 1] + 1, bits, per))
        other_W = (W | 0b100, t_key) + twin[2:]
        for stored, g_stored, expected in ((twin, g + rem, True), (twin, g + rem + 1, False), (twin, 0, True),
                                           (older, 0, False), (other_W, 0, False)):
            assert dropped_beside(stored, g_stored) == expected, (drop, stored, g_stored)
    for k in (0, 1, 6):                               # (b): the waiting requests, W = {0, 1, 6}
        done = (W & ~(1 << k),) + state[1:]
        for stored, g_stored, expected in ((done, g + int(o[k]), True), (done, g + int(o[k]) + 1, False),
                                           ((W | 0b1000,) + state[1:], 0, False)):
            assert dropped_beside(stored, g_stored) == expected, (k, stored, g_stored)


def test_the_filter_of_stored_keys_never_hides_a_stored_key():
    """remember() / stored_at_most(): through the filter's growth (from 1,024 bits to 2^20 and beyond), every
    stored key is found at its cost (at g, not at g − 1), and keys never stored are reported absent."""
    from lpbench.formulations.astar_containers import new_search
    from lpbench.formulations.latency_astar import stored_at_most

    rng = np.random.default_rng(3)
    best_g, seen = new_search(0, 0, -1, 0)[4:]
    keys = {tuple(int(v) for v in rng.integers(-2**62, 2**62, 6)): int(rng.integers(0, 1000)) for _ in range(150_000)}
    for key, g in keys.items():
        remember(best_g, seen, key, g)
    assert len(seen[0]) << 6 >= 8 * len(keys)         # grown (from 16 words)
    for key, g in list(keys.items())[::7]:
        assert stored_at_most(best_g, seen[0], key, g) and not stored_at_most(best_g, seen[0], key, g - 1)
    absent = [tuple(int(v) for v in rng.integers(-2**62, 2**62, 6)) for _ in range(2000)]
    assert not any(stored_at_most(best_g, seen[0], key, 10**9) for key in absent if key not in keys)
