"""The verifier's replay for several engines: :func:`lpbench.verify.verify` hands it every schedule of an
instance with ``limits.engines`` > 1 and every schedule that names engines or moves. Batch model only
(the slot model has no limits, so one engine).

It checks the rules of :func:`lpbench.verify._verify_replay` per batch ([empty], [duplicate], [arrival],
[completed], [tokens], [evict], [token_budget], [prefill_budget], [max_batch_requests]) and those of
several engines (:mod:`lpbench.semantics`, "Several engines"):

* [order] per engine: a batch starts no earlier than the end of the engine's previous batch in the file.
* [engine] a request is processed (or evicted) only on the engine that holds its KV: the engine of its
  first batch, or the destination of its move once the move is done.
* [move] moves need ``limits.kv_transfer_per_token`` (τ); at most one per request; it starts no earlier
  than the end of the request's last batch on the source; its first batch on the destination starts no
  earlier than the transfer's end x + τ·m_i; the request carries all it processed on the source (no
  eviction there before the move); a move is followed by a batch on its destination.
* [memory] per engine, after each batch, with a moving request's m_i counted on the destination after
  its batches that end after x and on the source after its batches that start before x + τ·m_i.

Each engine's batches are taken in file order, as :func:`lpbench.verify.verify` takes a one-engine schedule's,
so they must be listed in non-decreasing start order ([order]: a batch listed after a later-starting batch of
its engine starts before that one ends); the file may interleave the engines in any order. The replay merges
the engines by start time (stable: the file order breaks ties), so a request's batches on two engines are
taken in time order. Metrics are computed as for one engine, from
the replay: the TBT gap across a move includes the transfer; busy time sums all engines; peak memory is
the largest of any engine.
"""
from __future__ import annotations

import numpy as np

from .instance import Instance
from .schedule import Schedule
from .semantics import RequestStates


def verify_engines(inst: Instance, sched: Schedule):
    """Every rule above; a schedule without moves first engine by engine (:func:`verify_by_engine`)."""
    if sched.moves is None or not len(sched.moves.req):
        res = verify_by_engine(inst, sched)
        if res is not None:
            return res
    return replay_engines(inst, sched)


def verify_by_engine(inst: Instance, sched: Schedule):
    """Without moves each request must stay on one engine ([engine]), and then the batches of engine e are a
    one-engine schedule of its requests, for the one-engine rules: each engine's part goes through
    :func:`lpbench.verify.verify` (its fast flat check) and the metrics are merged as the replay computes
    them (busy time summed engine by engine). None when any rule fails; the replay then names it."""
    from .sim.multi import sub_instance
    from .verify import _result, verify

    n, K, nb = inst.n, inst.limits.K, sched.n_batches
    engine = sched.engine if sched.engine is not None else np.zeros(nb, dtype=np.int64)
    lens, elens = np.diff(sched.ptr), np.diff(sched.eptr)
    if nb == 0 or np.any(lens == 0) or np.any((engine < 0) | (engine >= K)):  # [empty], [engine]
        return None
    q = np.concatenate([sched.req, sched.evict])
    eq = np.concatenate([np.repeat(engine, lens), np.repeat(engine, elens)])
    lo, hi = np.full(n, K, dtype=np.int64), np.full(n, -1, dtype=np.int64)
    np.minimum.at(lo, q, eq)
    np.maximum.at(hi, q, eq)
    if np.any(lo != hi):  # a request on two engines, or on none ([incomplete])
        return None
    first_token, completion, max_gap = np.full(n, np.nan), np.full(n, np.nan), np.zeros(n)
    tbt_req: list[np.ndarray] = []
    tbt: list[np.ndarray] = []
    peak, busy, evictions = 0, 0.0, 0
    pos = np.zeros(n, dtype=np.int64)
    for e in range(K):
        idx = np.flatnonzero(lo == e)
        sel = np.flatnonzero(engine == e)
        if not len(idx):
            continue
        pos[idx] = np.arange(len(idx))
        ptr, take = _select(sched.ptr, sel)
        eptr, etake = _select(sched.eptr, sel)
        part = Schedule(sched.start[sel], ptr, pos[sched.req[take]], sched.tokens[take], eptr, pos[sched.evict[etake]])
        res = verify(sub_instance(inst, idx), part)
        if not res.feasible:
            return None
        first_token[idx], completion[idx] = res.first_token, res.completion
        r, gap = res.tbt
        tbt_req.append(idx[r])
        tbt.append(gap)
        peak = max(peak, res.metrics["peak_memory"])
        busy += res.metrics["busy_time"]
        evictions += res.metrics["evictions"]
    tbt_r = np.concatenate(tbt_req) if tbt_req else np.zeros(0, dtype=np.int64)
    gaps = np.concatenate(tbt) if tbt else np.zeros(0)
    np.maximum.at(max_gap, tbt_r, gaps)
    return _result(inst, sched, first_token, completion, tbt_r, gaps, max_gap, peak, busy, evictions)


def _select(ptr: np.ndarray, sel: np.ndarray):
    """CSR rows ``sel`` of ``ptr``: the new pointer array and the positions of their entries."""
    lens = np.diff(ptr)[sel]
    new = np.zeros(len(sel) + 1, dtype=np.int64)
    np.cumsum(lens, out=new[1:])
    return new, np.repeat(ptr[sel] - new[:-1], lens) + np.arange(new[-1])


def replay_engines(inst: Instance, sched: Schedule):
    """The batch-by-batch replay of every rule, in start-time order; it names each violation."""
    from .verify import (EPS, TokenTimes, VerifyResult, _result, clock_message, clock_too_coarse, entry_problems,
                         incomplete_requests, order_slack)

    n, lim, cost = inst.n, inst.limits, inst.cost_model
    K, tau = lim.K, lim.kv_transfer_per_token
    nb = sched.n_batches
    engine = sched.engine if sched.engine is not None else np.zeros(nb, dtype=np.int64)
    ids = inst.ids
    for j in np.flatnonzero((engine < 0) | (engine >= K))[:1]:
        return VerifyResult(False, [f"batch {j}: [engine] runs on engine {engine[j]}, but limits.engines = {K}"])
    move_to = np.full(n, -1, dtype=np.int64)
    move_x = np.full(n, np.nan)
    if sched.moves is not None and len(sched.moves.req):
        mv = sched.moves
        if tau is None:
            return VerifyResult(False, [f"moves: [move] request {ids[mv.req[0]]}: moves between engines, but the "
                                        "instance has no limits.kv_transfer_per_token"])
        uniq, counts = np.unique(mv.req, return_counts=True)
        if np.any(counts > 1):
            return VerifyResult(False, [f"moves: [move] request {ids[uniq[counts > 1][0]]}: moves more than once "
                                        "(at most one move per request)"])
        move_to[mv.req] = mv.to
        move_x[mv.req] = mv.start

    # each engine's batches in file order (as the one-engine verifier takes them), engines interleaved by start:
    # the key is the running maximum of the start over the engine's batches so far, which is the start itself
    # when the engine's batches are listed in start order, and otherwise keeps a batch listed after a later one
    # after it, so that [order] rejects it as the one-engine replay does
    key = np.array(sched.start, dtype=np.float64)
    for e in np.unique(engine):
        sel = np.flatnonzero(engine == e)
        key[sel] = np.fmax.accumulate(key[sel])
    order = np.argsort(key, kind="stable")
    # m_i of each move: the tokens the request processed on the engine of its first batch (its source)
    lens = np.diff(sched.ptr)
    bi = np.repeat(np.arange(nb), lens)
    pos = np.empty(nb, dtype=np.int64)
    pos[order] = np.arange(nb)
    r_all, c_all, eng = sched.req, sched.tokens, engine[bi]
    by = np.lexsort((pos[bi], r_all))
    head = np.ones(len(by), dtype=bool)
    head[1:] = r_all[by][1:] != r_all[by][:-1]
    source = np.full(n, -1, dtype=np.int64)
    source[r_all[by][head]] = eng[by][head]
    on_src = eng == source[r_all]
    m_move = np.bincount(r_all[on_src], weights=c_all[on_src], minlength=n).round().astype(np.int64)
    # per engine, KV that arrives (at x) and leaves (at x + τ m), in time order
    arrive: list[list] = [[] for _ in range(K)]
    leave: list[list] = [[] for _ in range(K)]
    for i in np.flatnonzero(move_to >= 0):
        arrive[move_to[i]].append((float(move_x[i]), int(m_move[i])))
        if source[i] >= 0:
            leave[source[i]].append((float(move_x[i]) + tau * int(m_move[i]), int(m_move[i])))
    for lst in arrive + leave:
        lst.sort()
    ai = [0] * K
    li = [0] * K

    st = RequestStates.of(inst)
    kv = np.zeros(K, dtype=np.int64)
    end = np.full(K, -np.inf)
    loc = np.full(n, -1, dtype=np.int64)
    moved = np.zeros(n, dtype=bool)
    last_end = np.full(n, -np.inf)
    emitted = TokenTimes(n)
    completion = np.full(n, np.nan)
    peak = 0
    busy_on = [0.0] * K  # per engine, then summed in engine order (as verify_by_engine does)
    position = np.zeros(n, dtype=np.int64)

    for j in order:
        r, c, ev = sched.batch(j)
        e = int(engine[j])
        start = float(sched.start[j])
        where = f"batch {j} (engine {e}, start {start:g})"
        bad: list[str] = []

        def fail(rule: str, msg: str) -> None:
            bad.append(f"{where}: [{rule}] {msg}")

        if not np.isfinite(start) or start < end[e] - order_slack(end[e]):
            fail("order", f"starts before the engine's previous batch ends at {end[e]:.15g}")
        if len(r) == 0:
            fail("empty", "processes no token")
        for rule, msg in entry_problems(r, ev, st, ids, position):
            fail(rule, msg)
        if len(ev):
            for i in ev[(loc[ev] != e) & (st.m[ev] > 0)][:5]:
                fail("engine", f"request {ids[i]}: evicted on engine {e}, but its KV is on engine {loc[i]}")
        if bad:
            return VerifyResult(False, bad)
        while li[e] < len(leave[e]) and leave[e][li[e]][0] <= start:  # moves away that ended: KV freed
            kv[e] -= leave[e][li[e]][1]
            li[e] += 1
        if len(ev):
            kv[e] -= int(st.m[ev].sum())
            st.evict(ev)
        for i in r[inst.arrival[r] > start + EPS][:5]:
            fail("arrival", f"request {ids[i]}: processed at {start:g} before its arrival {inst.arrival[i]:g}")
        for i in r[st.done[r]][:5]:
            fail("completed", f"request {ids[i]}: processed after it completed")
        pend = st.pending(r)
        for k in np.flatnonzero((c < 1) | (c > pend))[:5]:
            fail("tokens", f"request {ids[r[k]]}: processes {c[k]} tokens, pending {pend[k]} (must be 1..{pend[k]})")
        for i in r[(loc[r] >= 0) & (loc[r] != e)]:
            x, m = move_x[i], int(m_move[i])
            if move_to[i] != e or moved[i]:
                fail("engine", f"request {ids[i]}: processed on engine {e}, but its KV is on engine {loc[i]} "
                     "(no move of it to this engine)")
            elif last_end[i] > x + order_slack(x):
                fail("move", f"request {ids[i]}: its move to engine {e} starts at {x:g}, before its last batch on "
                     f"engine {loc[i]} ends at {last_end[i]:g}")
            elif start < x + tau * m - order_slack(x + tau * m):
                fail("move", f"request {ids[i]}: processed at {start:g}, before its KV ({m} entries, moving from "
                     f"{x:g}) reaches engine {e} at {x + tau * m:g}")
            elif int(st.m[i]) != m:
                fail("move", f"request {ids[i]}: moves {st.m[i]} KV entries but processed {m} tokens on engine "
                     f"{loc[i]} (no eviction before a move)")
            else:
                moved[i] = True
        loc[r[loc[r] < 0]] = e
        loc[r[moved[r]]] = e
        decode = st.is_decode(r)
        total = int(c.sum())
        if lim.token_budget is not None and total > lim.token_budget:
            fail("token_budget", f"processes {total} tokens > token_budget {lim.token_budget}")
        if lim.prefill_budget is not None and int(c[~decode].sum()) > lim.prefill_budget:
            fail("prefill_budget", f"processes {int(c[~decode].sum())} prefill tokens > prefill_budget "
                 f"{lim.prefill_budget}")
        if lim.max_batch_requests is not None and len(r) > lim.max_batch_requests:
            fail("max_batch_requests", f"processes {len(r)} requests > max_batch_requests {lim.max_batch_requests}")
        if bad:
            return VerifyResult(False, bad)

        dur = float(cost.batch_time(c, st.m[r], decode))
        if clock_too_coarse(start, dur):
            return VerifyResult(False, [f"{where}: {clock_message(start, dur)}"])
        fin_t = start + dur
        while ai[e] < len(arrive[e]) and arrive[e][ai[e]][0] < fin_t:  # moves in under way: KV held here
            kv[e] += arrive[e][ai[e]][1]
            ai[e] += 1
        busy_on[e] += dur
        end[e] = fin_t
        gen, fin = st.process(r, c)
        kv[e] += total
        if kv[e] > inst.memory:
            holders = np.flatnonzero(((loc == e) & (st.m > 0) & ~st.done) | ((move_to == e) & ~moved & (move_x < fin_t)))
            names = ", ".join(str(ids[i]) for i in holders[:8]) + (" ..." if len(holders) > 8 else "")
            return VerifyResult(False, [f"{where}: [memory] engine {e}, request(s) {names}: KV footprint after the "
                                        f"batch {kv[e]} exceeds memory {inst.memory}"])
        peak = max(peak, int(kv[e]))
        last_end[r] = fin_t
        emitted.emit(r[gen], fin_t)
        f_idx = r[fin]
        if len(f_idx):
            completion[f_idx] = fin_t
            kv[e] -= int(st.m[f_idx].sum())
            st.release(f_idx)

    incomplete = incomplete_requests(inst, st)
    if incomplete is not None:
        return incomplete
    stray = np.flatnonzero((move_to >= 0) & ~moved)
    if len(stray):
        i = stray[0]
        return VerifyResult(False, [f"moves: [move] request {ids[i]}: moves to engine {move_to[i]} at {move_x[i]:g}, "
                                    "but is never processed there after it"])
    tbt_req, tbt = emitted.tbt()
    busy = 0.0
    for b in busy_on:
        busy += b
    return _result(inst, sched, emitted.first_token, completion, tbt_req, tbt, emitted.max_gap, peak, busy,
                   int(st.evictions.sum()))
