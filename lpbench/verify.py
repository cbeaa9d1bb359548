"""The one schedule verifier. Every schedule -- from a policy or a solver -- passes here before a
number is reported. It replays the schedule from scratch with :class:`lpbench.semantics.RequestStates`,
checks every rule of the instance's model, and recomputes all metrics from the replay.

Rules (the name in brackets is printed with each violation):

* [order] batches start at finite times, each no earlier than the end of the previous one in the file (up
  to EPS = 1e-9 s plus 16 units in the last place of that end: float error, never a share of the clock).
* [clock] the float clock at a batch's start resolves its duration to 1e-4 of it (times up to about 10⁸ s
  for a 1 ms batch, 4·10¹¹ for a slot-model round); beyond that no order or latency is meaningful.
* [empty] a batch processes at least one token.
* [duplicate] a request appears at most once among a batch's processed and once among its evicted
  requests; in the batch model not in both (an evicted request does no work in the evicting batch), while in
  the slot model an evicted request may start again in the evicting batch (:mod:`lpbench.semantics`).
* [arrival] a processed request has arrived: a_i <= batch start.
* [completed] a completed request is not processed or evicted again.
* [tokens] a processed request processes 1 <= c <= S - m tokens (its pending tokens).
* [evict] an evicted request holds KV.
* [token_budget] Σ c <= C; [prefill_budget] Σ c over prefill/refill entries <= P (the weakest form of
  seed 003's CANALLOCATE P-condition; every schedule meeting the paper's rule meets it);
  [max_batch_requests] number of processed requests <= the cap.
* [memory] KV footprint after the batch <= memory (seed 003 eq. (4); seed 004 eq. (3)).
* slot model (seed 004): [slot_time] integer starts; [non_preemption] every started request is in
  every batch until it completes or is evicted (a restart, see :mod:`lpbench.semantics`), with all its
  pending tokens (no chunking), and batches run back to back while any request is running.
* [incomplete] at the end every request has generated exactly its output tokens.
* several engines (``limits.engines`` > 1, or a schedule naming engines or moves): [order] and [memory]
  per engine, [engine] a request is processed where its KV is, [move] KV transfers between engines; the
  replay is :func:`lpbench.verify_engines.verify_engines`.

Two implementations of the same checks. The replay below walks the schedule batch by batch with
:class:`~lpbench.semantics.RequestStates` and names every violation. A batch-model schedule is first
checked at once over its flat arrays (:func:`lpbench.semantics.replay_batch_model`, numpy, no loop per
batch); it returns the result only when it finds no violation at all, with the metrics the replay
would compute bit for bit, and otherwise hands over to the replay for the messages. A slot-model schedule
without evictions is checked the same way (:func:`_verify_flat_slot`).
``tests/test_verify.py`` checks the flat checks and the replay agree on valid and corrupted schedules.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .instance import Instance
from .schedule import Schedule
from .semantics import SLOT, RequestStates, replay_batch_model

EPS = 1e-9
#: a batch's duration must be resolved by the float clock at its start to this relative precision ([clock])
CLOCK_RESOLUTION = 1e-4


def order_slack(end):
    """How far a batch may start before the previous one ends ([order]): EPS plus 16 units in the last place
    of the end, the float error of a start computed as start + duration. Not relative to the clock: a slack of
    EPS·|end| let batches overlap by 1 ms at t = 10⁶ s and collapse onto one instant at 10¹² s."""
    return EPS + 16 * np.spacing(np.abs(end))


def clock_too_coarse(start, dur):
    """Batches whose duration the float clock cannot resolve at their start ([clock]): beyond that, start +
    duration rounds to a different (or the same) number, and no order, latency or gap is meaningful."""
    return np.spacing(np.abs(start)) > CLOCK_RESOLUTION * np.asarray(dur)


def clock_message(start: float, dur: float) -> str:
    return (f"[clock] its duration {dur:g} s is below the float clock's resolution at {start:g} s (spacing "
            f"{np.spacing(abs(start)):.3g} s, more than {CLOCK_RESOLUTION:g} of the duration): times this large "
            "carry no order or latency; shift the instance and schedule towards 0")


@dataclass
class VerifyResult:
    feasible: bool
    violations: list[str] = field(default_factory=list)
    metrics: dict = field(default_factory=dict)
    first_token: np.ndarray | None = None
    completion: np.ndarray | None = None
    tbt: tuple[np.ndarray, np.ndarray] | None = None  # (request index, gap) of every inter-token gap

    def to_dict(self) -> dict:
        return {"feasible": self.feasible, "violations": self.violations, "metrics": self.metrics}


def _pct(x: np.ndarray, q: float) -> float | None:
    return float(np.percentile(x, q)) if len(x) else None


def verify(inst: Instance, sched: Schedule) -> VerifyResult:
    if inst.limits.K > 1 or sched.engine is not None or sched.moves is not None:
        from .verify_engines import verify_engines

        return verify_engines(inst, sched)
    res = _verify_flat(inst, sched) if inst.model != SLOT else _verify_flat_slot(inst, sched)
    if res is not None:
        return res
    return _verify_replay(inst, sched)


def _verify_flat_slot(inst: Instance, sched: Schedule) -> VerifyResult | None:
    """The slot-model rules over a whole schedule without evictions at once; None when any rule fails (or the
    schedule evicts), and the replay then names the violations (or replays the restarts).

    Without evictions a valid slot schedule is, per request i, o_i entries in consecutive batches b_i, b_i + 1,
    ... whose starts are consecutive integers, the first processing the prompt s_i and each later one 1 token
    (every entry generates one token: [tokens], [non_preemption], [incomplete], [completed] and [duplicate]
    together), with a_i <= the first start ([arrival]); the batches start at integers at least one round apart
    ([slot_time], [order]). A request that is running is then in every batch until it completes, and those
    batches run back to back: the replay's [non_preemption] checks. After batch j the footprint is Σ (s_i + q + 1)
    over its entries, q the entry's place in its request's run ([memory]). The metrics are the replay's: each
    entry emits a token at its batch's end, start + 1."""
    nb = sched.n_batches
    lens = np.diff(sched.ptr)
    if nb == 0 or len(sched.evict) or not np.all(lens > 0):  # restarts, or an [empty] batch: the replay
        return None
    start = sched.start
    if (not np.all(np.isfinite(start)) or np.any(start != np.floor(start)) or np.any(np.diff(start) < 1.0)
            or np.any(clock_too_coarse(start, 1.0))):
        return None
    r, c = sched.req, sched.tokens
    counts = np.bincount(r, minlength=inst.n)
    if np.any(counts != inst.output):
        return None
    bi = np.repeat(np.arange(nb), lens)
    order = np.lexsort((bi, r))          # entries by request, then batch
    rs, bs = r[order], bi[order]
    first = np.cumsum(counts) - counts   # each request's first entry among them
    q = np.arange(len(r)) - np.repeat(first, counts)
    b0 = np.repeat(bs[first], counts)
    if np.any(bs != b0 + q) or np.any(start[bs] != start[b0] + q) or np.any(inst.arrival > start[bs[first]] + EPS):
        return None
    if np.any(c[order] != np.where(q == 0, inst.prompt[rs], 1)):
        return None
    kv = np.zeros(nb, dtype=np.int64)
    np.add.at(kv, bs, inst.prompt[rs] + q + 1)
    if np.any(kv > inst.memory):
        return None

    first_token = start[bs[first]] + 1.0
    completion = start[bs[first + counts - 1]] + 1.0
    q_entry = np.empty_like(q)
    q_entry[order] = q
    later = q_entry >= 1                 # entries with an earlier token: a gap of one round each, in emission order
    tbt_req, tbt = r[later], np.ones(int(later.sum()))
    max_gap = (inst.output > 1).astype(np.float64)
    busy = float(np.cumsum(np.ones(nb))[-1])  # the replay's running sum of unit batch times
    return _result(inst, sched, first_token, completion, tbt_req, tbt, max_gap, int(max(0, kv.max())), busy, 0)


def _verify_flat(inst: Instance, sched: Schedule) -> VerifyResult | None:
    """The batch-model rules over the whole schedule at once; None when any rule fails (or cannot be
    checked this way), and the replay then names the violations."""
    nb = sched.n_batches
    lens = np.diff(sched.ptr)
    if nb == 0 or not np.all(lens > 0):  # [empty]; an empty schedule is [incomplete]
        return None
    start = sched.start
    r, c, e = sched.req, sched.tokens, sched.evict
    lim = inst.limits
    # [duplicate]: one event per request and batch (entries and evictions together)
    bi = np.repeat(np.arange(nb), lens)
    be = np.repeat(np.arange(nb), np.diff(sched.eptr))
    key = np.sort(np.concatenate([bi * inst.n + r, be * inst.n + e]))
    if np.any(key[1:] == key[:-1]):
        return None
    if not np.all(np.isfinite(start)) or np.any(inst.arrival[r] > start[bi] + EPS):  # [order] / [arrival]
        return None
    rp = replay_batch_model(inst.prompt, inst.output, sched.ptr, r, c, sched.eptr, e, inst.restarts)
    if np.any(rp.after_finish) or np.any(rp.evict_m <= 0):  # [completed] / [evict]
        return None
    if np.any((c < 1) | (c > rp.pending)):  # [tokens]
        return None
    if lim.token_budget is not None and np.any(np.add.reduceat(c, sched.ptr[:-1]) > lim.token_budget):
        return None
    if lim.prefill_budget is not None and np.any(
            np.add.reduceat(np.where(rp.decode, 0, c), sched.ptr[:-1]) > lim.prefill_budget):
        return None
    if lim.max_batch_requests is not None and np.any(lens > lim.max_batch_requests):
        return None
    # [memory]: KV after batch j = processed tokens so far - evicted KV so far - KV released before j
    fin_c = np.where(rp.finish, rp.m + c, 0)
    delta = (np.bincount(bi, weights=c, minlength=nb) - np.bincount(be, weights=rp.evict_m, minlength=nb)
             - np.r_[0.0, np.bincount(bi, weights=fin_c, minlength=nb)[:-1]])
    kv = np.cumsum(np.rint(delta).astype(np.int64))
    if np.any(kv > inst.memory):
        return None
    done = np.zeros(inst.n, dtype=bool)
    done[r[rp.finish]] = True
    if not done.all():  # [incomplete]
        return None
    dur = inst.cost_model.batch_times(c, rp.m, rp.decode, sched.ptr)
    if np.any(clock_too_coarse(start, dur)):  # [clock]
        return None
    end = start + dur
    prev_end = end[:-1]
    if np.any(start[1:] < prev_end - order_slack(prev_end)):  # [order]
        return None

    # metrics, as the replay computes them
    busy = float(np.cumsum(dur)[-1])  # the replay's running sum, term by term
    ge = np.flatnonzero(rp.gen)       # entries that generate, in schedule order
    g_req, g_end = r[ge], end[bi[ge]]
    by_req = np.argsort(g_req, kind="stable")
    has_prev_sorted = np.zeros(len(ge), dtype=bool)
    has_prev_sorted[1:] = g_req[by_req][1:] == g_req[by_req][:-1]
    prev_sorted = np.r_[np.nan, g_end[by_req][:-1]]
    has_prev = np.empty(len(ge), dtype=bool)
    has_prev[by_req] = has_prev_sorted
    prev = np.empty(len(ge))
    prev[by_req] = prev_sorted
    first_token = np.full(inst.n, np.nan)
    first_token[g_req[~has_prev]] = g_end[~has_prev]
    completion = np.full(inst.n, np.nan)
    completion[r[rp.finish]] = end[bi[rp.finish]]
    tbt = g_end[has_prev] - prev[has_prev]
    tbt_req = g_req[has_prev]
    max_gap = np.zeros(inst.n)
    np.maximum.at(max_gap, tbt_req, tbt)
    return _result(inst, sched, first_token, completion, tbt_req, tbt, max_gap, int(max(0, kv.max())), busy, len(e))


def _verify_replay(inst: Instance, sched: Schedule) -> VerifyResult:
    n = inst.n
    st = RequestStates.of(inst)
    slot = inst.model == SLOT
    lim = inst.limits
    cost = inst.cost_model
    emitted = TokenTimes(n)
    completion = np.full(n, np.nan)
    peak = 0
    busy = 0.0
    end = -np.inf
    running = 0  # slot model: started, not completed
    position = np.zeros(n, dtype=np.int64)  # scratch for the duplicate check

    for j in range(sched.n_batches):
        r, c, e = sched.batch(j)
        start = float(sched.start[j])
        where = f"batch {j} (start {start:g})"
        bad: list[str] = []

        def fail(rule: str, msg: str) -> None:
            bad.append(f"{where}: [{rule}] {msg}")

        if not np.isfinite(start) or start < end - order_slack(end):
            fail("order", f"starts before the previous batch ends at {end:.15g}")
        if slot and start != np.floor(start):
            fail("slot_time", "slot-model batches start at integer times")
        if slot and running and abs(start - end) > EPS:
            fail("non_preemption", f"{running} started request(s) are paused from {end:g} to {start:g}")
        if len(r) == 0:
            fail("empty", "processes no token")
        for rule, msg in entry_problems(r, e, st, inst.ids, position, slot):
            fail(rule, msg)
        if bad:
            return VerifyResult(False, bad)
        if len(e):  # evictions take effect before the batch runs
            if slot:
                running -= len(e)  # a restart ends the run (slot model: only running requests hold KV)
            st.evict(e)
        if len(r):
            late = r[inst.arrival[r] > start + EPS]
            for i in late[:5]:
                fail("arrival", f"request {inst.ids[i]}: processed at {start:g} before its arrival {inst.arrival[i]:g}")
            done_r = r[st.done[r]]
            for i in done_r[:5]:
                fail("completed", f"request {inst.ids[i]}: processed after it completed")
            pend = st.pending(r)
            wrong = (c < 1) | (c > pend)
            for k in np.flatnonzero(wrong)[:5]:
                fail("tokens", f"request {inst.ids[r[k]]}: processes {c[k]} tokens, pending {pend[k]} "
                     f"(must be 1..{pend[k]})")
            decode = st.is_decode(r)
            total = int(c.sum())
            if lim.token_budget is not None and total > lim.token_budget:
                fail("token_budget", f"processes {total} tokens > token_budget {lim.token_budget}")
            if lim.prefill_budget is not None:
                ptoks = int(c[~decode].sum())
                if ptoks > lim.prefill_budget:
                    fail("prefill_budget", f"processes {ptoks} prefill tokens > prefill_budget {lim.prefill_budget}")
            if lim.max_batch_requests is not None and len(r) > lim.max_batch_requests:
                fail("max_batch_requests", f"processes {len(r)} requests > max_batch_requests {lim.max_batch_requests}")
            if slot:
                if np.any(c != pend):
                    k = int(np.flatnonzero(c != pend)[0])
                    fail("non_preemption", f"request {inst.ids[r[k]]}: processes {c[k]} of {pend[k]} pending "
                         "tokens (the slot model processes whole prompts and one token per round)")
                in_batch_running = int(np.count_nonzero(st.m[r] > 0))
                if in_batch_running != running:
                    fail("non_preemption", f"{running - in_batch_running} started request(s) are left out "
                         "of the batch")
        if bad:
            return VerifyResult(False, bad)

        dur = float(cost.batch_time(c, st.m[r], decode))
        if clock_too_coarse(start, dur):
            return VerifyResult(False, [f"{where}: {clock_message(start, dur)}"])
        busy += dur
        end = start + dur
        was_started = st.m[r] > 0
        gen, fin = st.process(r, c)
        if st.kv_total > inst.memory:
            holders = np.flatnonzero((st.m > 0) & ~st.done)
            names = ", ".join(str(inst.ids[i]) for i in holders[:8]) + (" ..." if len(holders) > 8 else "")
            return VerifyResult(False, [f"{where}: [memory] request(s) {names}: KV footprint after the batch "
                                        f"{st.kv_total} exceeds memory {inst.memory}"])
        peak = max(peak, st.kv_total)
        emitted.emit(r[gen], end)
        f_idx = r[fin]
        if len(f_idx):
            completion[f_idx] = end
            st.release(f_idx)
        if slot:
            running += int(np.count_nonzero(~was_started)) - len(f_idx)

    incomplete = incomplete_requests(inst, st)
    if incomplete is not None:
        return incomplete
    tbt_req, tbt = emitted.tbt()
    return _result(inst, sched, emitted.first_token, completion, tbt_req, tbt, emitted.max_gap, peak, busy,
                   int(st.evictions.sum()))


def entry_problems(r, e, st, ids, position, slot: bool = False) -> list[tuple[str, str]]:
    """(rule, message) for each fault among one batch's entries, before it runs (state ``st``), that every
    replay checks: a request at most once among those processed ``r`` and at most once among those evicted
    ``e``; in the batch model an evicted request does no work in the evicting batch (in the slot model an
    eviction restarts the request, which may start again at once); an evicted request has not completed and
    holds KV. ``position``: an n-long scratch array. At most five of each kind are named."""
    out = []
    for group in (r, e):
        if len(group) < 2:
            continue
        pos = np.arange(len(group))
        position[group] = pos  # a repeated index keeps its last position only
        if np.any(position[group] != pos):
            uniq, counts = np.unique(group, return_counts=True)
            out += [("duplicate", f"request {ids[i]}: appears more than once") for i in uniq[counts > 1][:5]]
    if len(e):
        if not slot:
            out += [("duplicate", f"request {ids[i]}: evicted and processed in the same batch (an evicted request "
                     "does no work in the evicting batch)") for i in np.intersect1d(r, e)[:5]]
        out += [("completed", f"request {ids[i]}: evicted after it completed") for i in e[st.done[e]][:5]]
        out += [("evict", f"request {ids[i]}: evicted but holds no KV") for i in e[(st.m[e] == 0) & ~st.done[e]][:5]]
    return out


class TokenTimes:
    """When each request's tokens were emitted, during a replay (shared by every replay of the verifier): a
    request's first token sets its TTFT (``first_token``), each later one a TBT gap since its previous token
    (``max_gap`` per request; every gap with its request in :meth:`tbt`)."""

    def __init__(self, n: int):
        self.first_token = np.full(n, np.nan)
        self.last_emit = np.full(n, np.nan)
        self.max_gap = np.zeros(n)
        self._gaps: list[np.ndarray] = []
        self._gap_req: list[np.ndarray] = []

    def emit(self, g_idx, t: float) -> None:
        """Record the tokens of requests ``g_idx`` emitted at time t."""
        if not len(g_idx):
            return
        prev = self.last_emit[g_idx]
        has_prev = ~np.isnan(prev)
        if has_prev.any():
            gap = t - prev[has_prev]
            self._gaps.append(gap)
            self._gap_req.append(g_idx[has_prev])
            np.maximum.at(self.max_gap, g_idx[has_prev], gap)
        self.first_token[g_idx[~has_prev]] = t
        self.last_emit[g_idx] = t

    def tbt(self) -> tuple[np.ndarray, np.ndarray]:
        """(requests, gaps): every TBT gap recorded, in emission order."""
        if not self._gaps:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        return np.concatenate(self._gap_req), np.concatenate(self._gaps)


def incomplete_requests(inst: Instance, st) -> VerifyResult | None:
    """The [incomplete] violation when a request has not generated all its output tokens."""
    missing = np.flatnonzero(~st.done)
    if not len(missing):
        return None
    i = missing[0]
    return VerifyResult(False, [f"end of schedule: [incomplete] request {inst.ids[i]}: generated "
                                f"{st.generated[i]} of {inst.output[i]} output tokens"
                                + (f" ({len(missing)} requests incomplete)" if len(missing) > 1 else "")])


def _result(inst, sched, first_token, completion, tbt_req, tbt, max_gap, peak, busy, evictions) -> VerifyResult:
    n = inst.n
    latency = completion - inst.arrival
    ttft = first_token - inst.arrival
    multi = inst.output > 1
    tpot = (completion[multi] - first_token[multi]) / (inst.output[multi] - 1)
    makespan = float(completion.max())
    span = makespan - float(inst.arrival.min())
    metrics = {
        "requests": n,
        "total_latency": float(latency.sum()),
        "mean_latency": float(latency.mean()),
        "p50_latency": _pct(latency, 50),
        "p99_latency": _pct(latency, 99),
        "ttft_mean": float(ttft.mean()),
        "ttft_p50": _pct(ttft, 50),
        "ttft_p99": _pct(ttft, 99),
        "tpot_p50": _pct(tpot, 50),
        "tpot_p99": _pct(tpot, 99),
        "tbt_p50": _pct(tbt, 50),
        "tbt_p99": _pct(tbt, 99),
        "makespan": makespan,
        "throughput": float(inst.output.sum()) / span if span > 0 else None,
        "peak_memory": int(peak),
        "batches": sched.n_batches,
        "evictions": evictions,
        "busy_time": busy,
    }
    if inst.ttft_slo is not None:
        has = ~np.isnan(inst.ttft_slo)
        metrics["ttft_slo_attainment"] = float(np.mean(ttft[has] <= inst.ttft_slo[has] + EPS)) if has.any() else None
    if inst.tbt_slo is not None:
        has = ~np.isnan(inst.tbt_slo)
        metrics["tbt_slo_attainment"] = float(np.mean(max_gap[has] <= inst.tbt_slo[has] + EPS)) if has.any() else None
    return VerifyResult(True, [], metrics, first_token, completion, (tbt_req, tbt))
