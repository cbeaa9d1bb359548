"""Certified closed-form lower bounds on total latency and makespan for batch-model instances
(seed 003 semantics, :mod:`lpbench.semantics`), computable at trace scale (O(Σ O_i + n log n)).

Assumption on the cost model (checked; other forms are refused). The batch time splits into a
*batch constant* β paid once by every non-empty batch plus a sum over the processed requests of a
*per-participation* term that depends only on that request's phase, c and m, all terms >= 0:

* ``infermax`` (seed 003 §3.2, per layer): β = b_o + min(b_d, b_p) (a non-empty batch has a phase;
  the GQA factor 1 + φ[n > 1] >= 1 is dropped); participation = a_o c + [decode](a_d (m + 1) + s_d)
  + [prefill](a_p (c² + 2cm) + s_p + m_p m). An isolated batch of one request also pays b_o and the
  bias of its own phase in full. Every coefficient must be >= 0.
* ``linear`` (seed 001 (1)): β = d0, participation = d1 (m + c); ``unit``: β = 1;
  ``piecewise``: β = c; ``staircase``: β = c + a (ceil >= 1). Coefficients >= 0.
* ``tiled`` (ceilings inside the per-request sums) is refused.

Facts of the semantics used below, for request i with prompt I_i and output O_i:
(F1) its batches are disjoint in time, all start at or after a_i, and it completes at the end of
the last one, so its latency is at least the sum of their durations; (F2) one token per batch: its
g-th token (g >= 2) is generated in its own batch, in which the request's sequence before the batch
has X = I_i + g − 1 tokens. Either that batch is a decode step (c = 1, it reads m + 1 = X keys), or
it ends a refill run: the batches processing i since its last eviction, which left m = 0 with the
sequence already at S = X (S grows only when a token is generated), so the run processes Σ c = X
tokens in at least ⌈X / min(C, P)⌉ chunks with Σ (c² + 2cm) = X² (telescoping) and Σ (m + c) >= X.
The runs of different tokens are disjoint (each ends at the token it generates), so each token can
be charged the cheaper of its two paths. Either way i holds m_after = X KV entries after the batch
that generates it; (F3) the first token ends the first run,
whose chunks (each <= min(C, P) tokens, so at least k_i = ⌈I_i / min(C, P)⌉ of them) process I_i
tokens in all with Σ (c² + 2cm) = I_i² (telescoping) and hold I_i after the last one;
(F4) after every batch Σ m_after <= M (CSP (4)), Σ c <= C, and at most R requests are processed.

``isolated``: C_i − a_i >= t_i, the cheapest way through (F1)-(F3) alone: k_i prefill batches and,
for each g = 2..O_i, the cheaper of one decode batch and a refill run of ⌈X / min(C, P)⌉ chunks
(batch constants in full). Valid because every batch containing i costs at least what is counted
for it, and evictions only add batches.

``single server`` (release dates): split every batch's time among its requests. By (F4) the batch
constant is at least Σ_i β·share_i where share_i is one of m_after_i / M, c_i / C or 1 / R (each sums
to <= 1 over the batch), so request i receives at least its work p_i (its per-participation terms
plus β·share over (F2)-(F3); per token, the cheaper path's participation terms plus the decode
path's share, which is at most the refill run's: X/M for both, 1/C <= X/C, 1/R <= chunks/R) inside
[a_i, C_i] from a server of rate 1. That is a preemptive single
machine with release dates, whose k-th smallest completion is at least that of SRPT (SRPT completes
the most jobs by every time t; Schrage 1968), so C_(k) >= SRPT_(k). The three share rules give three
valid bounds; the best is kept.

Combination: both bounds hold for the k-th smallest completion time C_(k) (the k smallest a_i + t_i
bound the k first completions), so Σ_k max(iso_(k), SRPT_(k)) − Σ a_i <= total latency of every
schedule, and max(max_i a_i + t_i, SRPT makespan) <= makespan.

``eviction: restart`` (seed 001 §1.4; :mod:`lpbench.semantics`): after a restart the request runs again from its
prompt, so its last run is eviction-free and alone obeys (F1)-(F4) with every token on the decode path after the
first; the abandoned runs only add batches, and every batch still costs at least what is counted for the last run.
So both bounds hold unchanged (``tests/test_restart.py`` checks them against every policy's restart schedules).

``K engines`` (``limits.engines``, :mod:`lpbench.sim.multi`; each engine has its own memory M and
budgets, and a request may move between engines, DistServe's prefill/decode split included): (F1)-(F3)
hold across engines (a request's batches stay disjoint in time; a KV move only adds time), so t_i is
unchanged. (F4) holds per engine, so each engine is a rate-1 server of the shares above, and by every
time t the K engines have done at most K·t of work: a single server of rate K (SRPT on p_i / K) still
completes the most jobs by every t (the one-at-a-time rule of a request on the K engines is dropped,
which only relaxes). K = 1 is the one-engine bound.
"""
from __future__ import annotations

import heapq
import time

import numpy as np

from ..errors import InputError
from ..semantics import BATCH
from ..solvers.base import SolveResult
from .base import FORMULATIONS, ClosedForm

INF = float("inf")
#: generated tokens per block of the per-token arrays (about 50 bytes each while a block is live)
TOKEN_BLOCK = 1 << 22


def _check_outputs(inst) -> None:
    """Refuse an output the simulator refuses (:data:`lpbench.sim.MAX_BATCHES`), with its message, before any
    per-token array is allocated: solve runs the bound first, then the policies."""
    from ..sim import MAX_BATCHES

    if inst.n and int(inst.output.max()) > MAX_BATCHES:
        i = int(inst.output.argmax())
        raise InputError(f"requests[{i}].output: {int(inst.output[i]):,} tokens need as many batches, above the "
                         f"{MAX_BATCHES:,} a simulated schedule can hold; express the tokens in larger units")


def _cost_terms(cm):
    """(scale to seconds, per-batch constants, per-participation coefficients) of the assumption above."""
    coefs = cm.coefficients
    if cm.form == "tiled":
        raise InputError("--formulation: batch-bound needs a cost model that splits into a batch constant plus "
                         "per-request terms; the 'tiled' form (ceilings over tiles) is not supported")
    negative = [k for k, v in coefs.items() if v < 0]
    if negative:
        raise InputError(f"cost_model: batch-bound needs nonnegative coefficients, got {', '.join(negative)} < 0")
    z = dict(a_o=0.0, b_o=0.0, a_d=0.0, b_d=0.0, s_d=0.0, a_p=0.0, b_p=0.0, s_p=0.0, m_p=0.0, d1=0.0)
    if cm.form == "infermax":
        z.update({k: coefs[k] for k in ("a_o", "b_o", "a_d", "b_d", "s_d", "a_p", "b_p", "s_p", "m_p")})
        return cm.layers * 1e-3, z
    if cm.form == "linear":
        z.update(b_o=coefs["d0"], d1=coefs["d1"])
    elif cm.form == "unit":
        z.update(b_o=1.0)
    elif cm.form == "piecewise":
        z.update(b_o=coefs["c"])
    elif cm.form == "staircase":
        z.update(b_o=coefs["c"] + coefs["a"])
    else:
        raise InputError(f"--formulation: batch-bound does not know the cost-model form {cm.form!r}")
    return 1.0, z


def srpt_completions(release: np.ndarray, work: np.ndarray) -> np.ndarray:
    """Completion time of each job (input order) under SRPT on one machine of rate 1 with release
    dates (preemptive); sorted, they are the smallest possible k-th completions."""
    order = np.argsort(release, kind="stable")
    r, p = release[order], work[order]
    out = np.empty(len(r))
    heap: list[tuple[float, int]] = []
    t, k, done = 0.0, 0, 0
    n = len(r)
    while done < n:
        if not heap:
            t = max(t, r[k])
        while k < n and r[k] <= t:
            heapq.heappush(heap, (p[k], order[k]))
            k += 1
        rem, j = heapq.heappop(heap)
        nxt = r[k] if k < n else INF
        if t + rem <= nxt:
            t += rem
            out[j] = t
            done += 1
        else:
            heapq.heappush(heap, (rem - (nxt - t), j))
            t = nxt
    return out


@FORMULATIONS.register("batch-bound")
class BatchBound(ClosedForm):
    name = "batch-bound"
    models = (BATCH,)
    exact = False
    summary = "batch model: isolated service time + SRPT single-server work bound (certified lower bound)"

    objective_metric = "total_latency"
    engines = True   # valid with limits.engines > 1 (module docstring, "K engines")

    def __init__(self, inst, incumbent_objective=None):
        super().__init__(inst, incumbent_objective)
        _check_outputs(inst)
        self.to_s, self.k = _cost_terms(inst.cost_model)

    # -- per-request quantities -------------------------------------------------------------------
    def _tokens(self, lo: int = 0, hi: int | None = None):
        """Per generated token g >= 2 of requests lo..hi−1 (flattened): owning request and X = I + g − 1."""
        hi = self.inst.n if hi is None else hi
        I, O = self.inst.prompt.astype(np.int64), self.inst.output[lo:hi].astype(np.int64)
        owner = np.repeat(np.arange(lo, hi), O - 1)
        first = np.cumsum(O - 1) - (O - 1)
        g = np.arange(len(owner)) - np.repeat(first, O - 1) + 2
        return owner, (I[owner] + g - 1).astype(np.float64)

    def _blocks(self):
        """Request ranges [lo, hi) of about TOKEN_BLOCK generated tokens each (a longer request alone), so that
        the per-token arrays stay small at trace scale."""
        cum = np.cumsum(self.inst.output.astype(np.int64) - 1)
        lo, n = 0, self.inst.n
        while lo < n:
            hi = max(lo + 1, int(np.searchsorted(cum, (cum[lo - 1] if lo else 0) + TOKEN_BLOCK, side="right")))
            yield lo, hi
            lo = hi

    def _token_sums(self, with_constants: bool) -> tuple[np.ndarray, np.ndarray]:
        """Per request: Σ over its tokens g >= 2 of the cheaper path (:meth:`_token_paths`) and Σ X, computed
        block by block (each request's sum in one block, so the sums equal a single pass)."""
        cheaper, xsum = np.zeros(self.inst.n), np.zeros(self.inst.n)
        for lo, hi in self._blocks():
            owner, X, dec, ref = self._token_paths(with_constants, lo, hi)
            cheaper[lo:hi] += np.bincount(owner - lo, np.minimum(dec, ref), minlength=hi - lo)
            xsum[lo:hi] += np.bincount(owner - lo, X, minlength=hi - lo)
        return cheaper, xsum

    def _cap(self) -> float:
        """Most tokens of one request in one batch: min(C, P)."""
        lim = self.inst.limits
        return min(v for v in (lim.token_budget, lim.prefill_budget, INF) if v is not None)

    def _chunks(self) -> np.ndarray:
        cap = self._cap()
        return np.ceil(self.inst.prompt / cap) if cap < INF else np.ones(self.inst.n)

    def _token_paths(self, with_constants: bool, lo: int = 0, hi: int | None = None):
        """Per generated token g >= 2 (of requests lo..hi−1): owner, and the cost of its decode path and of its
        refill path (F2), per-participation terms only, or with the batch constants of each batch in full."""
        k = self.k
        owner, X = self._tokens(lo, hi)
        chunks = np.ceil(X / self._cap()) if self._cap() < INF else np.ones_like(X)
        dec = k["a_o"] + k["d1"] * X + k["a_d"] * X + k["s_d"]
        ref = k["a_o"] * X + k["d1"] * X + k["a_p"] * X * X + chunks * k["s_p"]
        if with_constants:
            dec = dec + k["b_o"] + k["b_d"]
            ref = ref + chunks * (k["b_o"] + k["b_p"])
        return owner, X, dec, ref

    def isolated(self) -> np.ndarray:
        """t_i in seconds (module docstring)."""
        k, I = self.k, self.inst.prompt.astype(np.float64)
        chunks = self._chunks()
        pre = k["a_o"] * I + k["a_p"] * I * I + k["d1"] * I + chunks * (k["b_o"] + k["b_p"] + k["s_p"])
        cheaper, _ = self._token_sums(with_constants=True)
        return (pre + cheaper) * self.to_s

    def works(self) -> list[np.ndarray]:
        """p_i in seconds for each valid share rule (memory, token budget, request cap)."""
        k, inst, I = self.k, self.inst, self.inst.prompt.astype(np.float64)
        beta = k["b_o"] + min(k["b_d"], k["b_p"])
        chunks = self._chunks()
        base_pre = k["a_o"] * I + k["a_p"] * I * I + k["d1"] * I + chunks * k["s_p"]
        cheaper, xsum = self._token_sums(with_constants=False)
        base = base_pre + cheaper
        O = inst.output.astype(np.float64)
        shares = [base + beta * (I + xsum) / inst.memory]  # m_after / M
        lim = inst.limits
        if lim.token_budget is not None:                  # c / C: I prefill tokens + one per later token
            shares.append(base + beta * (I + O - 1) / lim.token_budget)
        if lim.max_batch_requests is not None:            # 1 / R per batch: >= chunks + O − 1 batches
            shares.append(base + beta * (chunks + O - 1) / lim.max_batch_requests)
        return [s * self.to_s for s in shares]

    def bounds(self) -> dict:
        """Both bounds (total latency, makespan) and their parts, in seconds."""
        a = self.inst.arrival.astype(np.float64)
        iso = a + self.isolated()
        iso_sorted = np.sort(iso)
        best_total, best_make, srpt_total = float(iso.sum()), float(iso.max()), 0.0
        for p in self.works():
            C = np.sort(srpt_completions(a, p / self.inst.limits.K))    # K engines: one server of rate K
            srpt_total = max(srpt_total, float(C.sum()))
            best_total = max(best_total, float(np.maximum(C, iso_sorted).sum()))
            best_make = max(best_make, float(C[-1]))
        return {"total_latency": best_total - float(a.sum()), "makespan": best_make,
                "isolated_total_latency": float(iso.sum() - a.sum()),
                "srpt_total_latency": srpt_total - float(a.sum())}

    def value(self) -> float:
        return self.bounds()["total_latency"]

    def solve(self, profile, warm=None) -> SolveResult:
        t0 = time.perf_counter()
        b = self.bounds()
        v = b["total_latency"]
        msg = (f"isolated {b['isolated_total_latency']:.6g}s, SRPT {b['srpt_total_latency']:.6g}s, "
               f"makespan bound {b['makespan']:.6g}s")
        return SolveResult("optimal", v, v, time.perf_counter() - t0, message=msg)
