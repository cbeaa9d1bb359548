"""volume-chain-bound (lpbench/formulations/volume_chain.py): the programme against a brute force over merged
sequences, the bound against brute-force optima, and through solve."""
import itertools
import time

import numpy as np
import pytest

from lpbench.formulations.completion import pair_separation
from lpbench.formulations.volume import VolumeBound
from lpbench.formulations.volume_chain import GRID, MergedChain, phi, volume_chain_bound
from lpbench.generators import jaillet
from lpbench.instance import parse_instance
from lpbench.solve import solve_instance


def block_min(g, x):
    """min Σ g_i(δ_i) over integer δ_i >= 0 with Σ δ_i >= x, by a dynamic programme over the running sum
    (capped at x); g: one array of costs per gap, indexed by δ (long enough that larger δ never pays)."""
    best = np.full(x + 1, np.inf)
    best[0] = 0.0
    for costs in g:
        nxt = np.full(x + 1, np.inf)
        for total in range(x + 1):
            if np.isfinite(best[total]):
                for d, cost in enumerate(costs):
                    k = min(x, total + d)
                    nxt[k] = min(nxt[k], best[total] + cost)
        best = nxt
    return best[x]


def merged_minimum(a, s, o, M, large, lam, nu):
    """The programme's value written out: every sequence of |U| visits of U (no member twice in a row) and
    |D| anonymous D positions, each block of gaps at its least cost under its sum row."""
    a, s, o = (np.asarray(v, dtype=np.int64) for v in (a, s, o))
    n = len(s)
    t0 = int(a.min())
    c = a - t0 + o
    w = np.asarray(pair_separation(s, o, M), dtype=np.int64)
    vol = s * o + o * (o + 1) // 2
    U, D = np.nonzero(large)[0], np.nonzero(~large)[0]
    vol_d = np.sort(vol[D])
    W = np.arange(n, 0, -1)
    span = np.arange(int(max(c.max(), w.max())) + M + 3)
    g = [W[l] * span - nu[l] * phi(span, M) for l in range(n)]
    best = np.inf
    for d_pos in itertools.combinations(range(n), len(D)):
        u_pos = [l for l in range(n) if l not in d_pos]
        for seq in itertools.product(U, repeat=len(U)):
            if any(x == y for x, y in zip(seq, seq[1:])):
                continue
            total = float(sum(lam[list(U).index(j)] for j in seq)) - float(lam.sum())
            total += sum(nu[l] * vol_d[i] for i, l in enumerate(d_pos))
            total += sum(nu[l] * vol[j] for l, j in zip(u_pos, seq))
            prev_pos, prev = -1, None
            for l, j in zip(u_pos, seq):
                need = int(c[j]) if prev is None else int(w[prev, j])
                total += block_min([g[i] for i in range(prev_pos + 1, l + 1)], need)
                prev_pos, prev = l, j
            total += sum(float(g[i].min()) for i in range(prev_pos + 1, n))
            best = min(best, total)
    return best


def random_case(rng):
    n = int(rng.integers(3, 6))
    M = int(rng.integers(6, 12))
    s = rng.integers(1, 3, n)
    o = np.array([int(rng.integers(1, M - si + 1)) for si in s])
    a = rng.integers(0, 3, n) * int(rng.integers(0, 2))
    large = 2 * (s + o) > M
    if not large.any():
        large[np.argmax(s + o)] = True       # the programme needs one member of U; any split is valid
    return a, s, o, M, large


def test_programme_equals_the_merged_sequences_written_out():
    """For random multipliers (λ on the grid, ν non-increasing) the dynamic programme equals the minimum over
    every merged sequence, each block of gaps minimised by an independent dynamic programme."""
    rng = np.random.default_rng(5)
    for _ in range(40):
        a, s, o, M, large = random_case(rng)
        prog = MergedChain(a, s, o, M, large)
        for _ in range(3):
            lam = np.round(rng.normal(0, 8, prog.m) * GRID) / GRID
            nu_i = np.sort(rng.integers(0, 3 * GRID, prog.n))[::-1]
            value = prog.evaluate(lam, nu_i)[0]
            assert value == pytest.approx(merged_minimum(a, s, o, M, large, lam, nu_i / GRID), abs=1e-9)


def test_bound_below_brute_force(small_optima):
    """On 100 small instances (60 with arrivals) the bound is at most OPT, at least volume-bound, and above it
    on many (so a bound that is too high would show)."""
    raised = 0
    for kind, seed, inst, opt in small_optima:
        bound, _ = volume_chain_bound(inst, time.perf_counter() + 2, target=opt)
        vol = VolumeBound(inst).value()
        assert vol - 1e-9 <= bound <= opt, (kind, seed, bound, opt)
        raised += bound > vol + 1e-9
    assert raised >= 15, raised


def test_every_multiplier_gives_a_bound_below_the_optimum(small_optima):
    """Weak duality, checked: the programme's value at random multipliers, rounded up, never exceeds OPT."""
    rng = np.random.default_rng(9)
    for kind, seed, inst, opt in small_optima[:60]:
        a, s, o = inst.arrival, inst.prompt, inst.output
        large = 2 * (s + o) > inst.memory
        if not large.any():
            continue
        prog = MergedChain(a, s, o, int(inst.memory), large)
        for _ in range(5):
            lam = np.round(rng.normal(0, 5, prog.m) * GRID) / GRID
            nu_i = np.sort(rng.integers(0, 2 * GRID, prog.n))[::-1]
            assert np.ceil(prog.evaluate(lam, nu_i)[0] - 1e-9) - prog.offset <= opt, (kind, seed)


def test_through_solve_on_a_jaillet_prefix():
    """On the first 30 requests of jaillet-model1 draw 0: a valid bound between volume-bound and the best
    verified schedule, above volume-bound, reported by solve with its status."""
    inst = parse_instance(jaillet.instance("jaillet-model1", 0, 0, first=30))
    out = solve_instance(inst, "volume-chain-bound", time_limit=6, policies=["mc-sf"])
    assert out["status"] in ("optimal", "time_limit")
    assert VolumeBound(inst).value() < out["bound"] <= out["best_known"] == out["ratios"]["mc-sf"]["objective"]


@pytest.mark.parametrize("model, calls", [("jaillet-model1", 1), ("jaillet-model2", 0)])
def test_certify_step_runs_it_before_the_chain_when_all_arrive_together(monkeypatch, model, calls):
    """On a 40-request prefix the certify step of latency-cp calls volume-chain-bound (then chain-bound) when all
    requests arrive together (Model 1), with the incumbent as its target, and not under spread arrivals (Model
    2); the reported bound is at least its value and at most the best verified schedule."""
    import lpbench.formulations.volume_chain as module

    seen = []
    original = module.volume_chain_bound

    def recording(inst, deadline, target=None):
        seen.append((original(inst, deadline, target), target))
        return seen[-1][0]

    monkeypatch.setattr(module, "volume_chain_bound", recording)
    inst = parse_instance(jaillet.instance(model, 0, 0, first=40))
    rep = solve_instance(inst, "latency-cp", "cpsat", policies=["mc-sf"], time_limit=8)
    assert len(seen) == calls
    for (value, _), target in seen:
        assert target is not None and target >= rep["best_known"] and value <= rep["bound"] <= rep["best_known"]
