"""Throughput capacity bounds: seed 002's work-conserving capacity λ* and seed 000's K/t̄, plus a
per-instance drain bound so that a finite trace also gets a throughput ratio.

Token accounting (one semantics, :mod:`lpbench.semantics`): request i processes I_i prompt tokens
(its prefill, which generates the first output token) and then O_i − 1 decode tokens. So seed 002's
v_p = I and v_d = O − 1 (the token produced by the prefill is not a decode token), and seed 000's
l^p = I, l^d = O − 1 (decode-iterations DI at token indices I+1 .. I+O−1). m_p, m_d are the means
over the instance's requests (its empirical length distribution).

``wc-capacity`` (seed 002, notes §2.1, §2.6)
    Load condition (2.7): λ (m_p + m_d) < b / t_b, so λ* = (b/t_b)/(m_p + m_d) with b the token
    budget (``limits.token_budget``) and t_b the time of a full batch. Applies to cost models whose
    batch time depends on the token load only (forms ``piecewise`` (2.3), ``staircase`` (v3), ``unit``).
    The closed form is the true maximum only if b/t_b = max_{b'<=b} b'/t_{b'} (for (2.3): c >= a·b0);
    the report says whether it holds. The bound reported is the optimum of the LP over batch
    compositions (notes §2.6, not in the paper)::

        max λ  s.t.  Σ_k y_k t(b_k) <= 1            (engine time)
                     Σ_k y_k q_k   >= λ m_p          (prefill throughput)
                     Σ_k y_k r_k   >= λ m_d          (decode throughput),   y >= 0

    y_k = batches per second of composition k = (q_k prefill, r_k decode tokens), q + r = b_k <= b.
    With a batch-size limit k_max (``limits.max_batch_requests``, seed 002 v3 §6) a composition also
    needs r + [q > 0] <= k_max (at least one request supplies the prefill tokens). Reduction (exact,
    not a relaxation): the cost depends on b_k only and the constraints are linear in (q, r), so for
    each load b every feasible composition is a convex combination of the two extreme ones, (b, 0)
    and the one with the most decode tokens; the LP keeps those 2·b columns. Without k_max the LP
    optimum equals max_{b'<=b}(b'/t_{b'})/(m_p+m_d), the closed form under monotonicity
    (``tests/test_capacity.py``). Ignored, as in the paper (A9): KV memory.

``tiled-capacity`` (seed 000 Theorem 1, notes §2.1-2.5)
    λ_max = K / t̄, t̄ = mean over requests of the optimal effective completion time t*_q (13),
    in the *rigorous* variant of notes §2.5(1): the ceiling-free prefill-attention sum is minimised
    by chunks of one token, giving l^p (l^p + 1) instead of the paper's l^p (l^p + T*_lcm)::

        t*_q = (l^p + l^d)/(ν_Lin T_col) + (l^p + l^d)/ν_nLin + N Σ_{i=l^p+1}^{l^p+l^d} t_datt(i)
               + N d / (S ν T_row T_col T_red) · l^p (l^p + 1)   [+ t0 (l^p + l^d)/C]

    Validity: each ceiling in (7) is at least its argument (11a); a prefill chunk (i, c) then costs at
    least 2 N d c (i + c − 1)/(S ν T_row T_col T_red), and over any chunking of a prompt
    Σ c_j·end_j >= Σ_{k=1}^{l^p} k = l^p (l^p+1)/2. The cost model has one tile configuration, which is
    its T* (Assumption 1). The per-batch overhead t0 (not in (7)) is charged per token as t0/C, since
    a batch holds at most C = token_budget tokens (0 without a budget). Evictions only add work.

Drain bound (both; seed 000 Prop. 1 with release times, notes §2.6(i))
    T_end >= max_j [a_(j) + (1/K) Σ_{q: a_q >= a_(j)} w_q], with w_q a lower bound on request q's
    engine time (t*_q; for token-load models its tokens / r*, r* = max_{b'<=b} b'/t_{b'}), and
    T_end >= a_q + (⌈I_q/C⌉ + O_q − 1) t_min (its prefill needs ⌈I/C⌉ batches and each decode one more
    batch, each >= t_min = min_{b'} t_{b'}). A policy's throughput on the trace is n / (T_end − a_min);
    its ratio to the bound is (T_end − a_min)/(drain bound − a_min) >= 1.
"""
from __future__ import annotations

import time

import numpy as np

from ..errors import InputError
from ..semantics import BATCH
from ..solvers.base import SolveResult
from .base import FORMULATIONS, Formulation, LinearModel

TOKEN_LOAD_FORMS = ("piecewise", "staircase", "unit")


def token_means(inst) -> tuple[float, float]:
    """(m_p, m_d): mean prefill tokens I and decode tokens O − 1 per request."""
    return float(inst.prompt.mean()), float((inst.output - 1).mean())


def batch_times(inst, b: int) -> np.ndarray:
    """t(b') for b' = 1..b under a token-load cost model (index b'-1)."""
    cost = inst.cost_model
    zero = np.zeros(1, dtype=np.int64)
    no = np.zeros(1, dtype=bool)
    return np.array([cost.batch_time(np.array([k]), zero, no) for k in range(1, b + 1)])


def drain_bound(arrival: np.ndarray, work: np.ndarray, K: int, chain: np.ndarray | None = None) -> float:
    """max_j [a_(j) + (1/K) Σ_{a_q >= a_(j)} w_q] and max_q [a_q + chain_q] (module docstring)."""
    a = np.asarray(arrival, dtype=np.float64)
    suffix = np.cumsum(work[::-1])[::-1] / K       # arrival is sorted: Σ_{q >= j} w_q
    first = np.searchsorted(a, a, side="left")      # ties: the window starts at the first equal arrival
    best = float(np.max(a + suffix[first]))
    if chain is not None:
        best = max(best, float(np.max(a + chain)))
    return best


class CapacityFormulation(Formulation):
    """A throughput bound (requests/s), not a latency model: solve.py routes it to :func:`solve_capacity`."""

    models = (BATCH,)
    exact = False
    capacity = True
    objective_metric = "makespan"
    export_note = "the capacity bound is a maximum: the file minimises -lambda, so its optimum is minus the bound"

    def __init__(self, inst, incumbent_objective=None, engines: int | None = None):
        super().__init__(inst, incumbent_objective)
        engines = inst.limits.K if engines is None else engines  # default: the instance's limits.engines
        if int(engines) < 1:
            raise InputError(f"engines: must be a positive integer, got {engines!r}")
        self.K = int(engines)

    def report(self, res: SolveResult) -> dict:
        raise NotImplementedError

    def drain(self) -> float:
        raise NotImplementedError


@FORMULATIONS.register("wc-capacity")
class WorkConservingCapacity(CapacityFormulation):
    name = "wc-capacity"
    summary = "seed 002 (2.7) λ* = (b/t_b)/(m_p+m_d) and its batch-composition LP: capacity upper bound"

    def __init__(self, inst, incumbent_objective=None, engines: int | None = None):
        super().__init__(inst, incumbent_objective, engines)
        form = inst.cost_model.form
        if form not in TOKEN_LOAD_FORMS:
            raise InputError(f"cost_model.form: wc-capacity needs a batch time that depends on the token load only "
                             f"({', '.join(TOKEN_LOAD_FORMS)}), got {form!r}"
                             + ("; use --formulation tiled-capacity" if form == "tiled" else ""))
        if inst.limits.token_budget is None:
            raise InputError("limits.token_budget: wc-capacity needs the token budget b of (2.5d), got none")
        self.b = int(inst.limits.token_budget)
        self.k_max = inst.limits.max_batch_requests
        self.t = batch_times(inst, self.b)
        self.m_p, self.m_d = token_means(inst)

    def compositions(self) -> tuple[np.ndarray, np.ndarray]:
        """(q, r) of the extreme compositions per load b' = 1..b (module docstring)."""
        loads = np.arange(1, self.b + 1)
        if self.k_max is None:
            r = loads
        else:  # pure decode up to k_max; above, k_max - 1 decodes and one prefill request
            r = np.where(loads <= self.k_max, loads, self.k_max - 1)
        q_dec = loads - r
        return (np.concatenate([loads, q_dec]), np.concatenate([np.zeros(self.b, dtype=np.int64), r]))

    def build(self) -> LinearModel:
        q, r = self.compositions()
        t = np.concatenate([self.t, self.t])
        k = len(q)
        lp = LinearModel(f"{self.name}:{self.inst.name}")
        y = lp.add_vars("y[q,r] batches per second", k)
        lam = lp.add_vars("lambda", 1, cost=-1.0)       # max λ as min −λ
        lp.add_rows("engine time <= 1", 1, np.zeros(k), y, t, upper=1.0)
        lp.add_rows("prefill tokens >= lambda m_p", 1, np.zeros(k + 1), np.append(y, lam),
                    np.append(q, -self.m_p), lower=0.0)
        lp.add_rows("decode tokens >= lambda m_d", 1, np.zeros(k + 1), np.append(y, lam),
                    np.append(r, -self.m_d), lower=0.0)
        return lp

    def load_condition(self) -> dict:
        rate = np.arange(1, self.b + 1) / self.t
        best = int(rate.argmax()) + 1
        per_req = self.m_p + self.m_d
        return {"lambda_star": float(rate[-1] / per_req), "full_batch_time_s": float(self.t[-1]),
                "monotone": bool(rate[-1] >= rate.max() * (1 - 1e-12)),
                "best_load": best, "lambda_max_over_loads": float(rate.max() / per_req),
                "applies": self.k_max is None or self.k_max >= self.b}

    def drain(self) -> float:
        inst = self.inst
        rate = float((np.arange(1, self.b + 1) / self.t).max())
        work = (inst.prompt + inst.output - 1).astype(np.float64) / rate
        chain = (np.ceil(inst.prompt / self.b) + inst.output - 1) * float(self.t.min())
        return drain_bound(inst.arrival, work, self.K, chain)

    def report(self, res: SolveResult) -> dict:
        cf = self.load_condition()
        lam = -res.objective if res.objective is not None else None
        return {"bound_requests_per_s": lam * self.K if lam is not None else None,
                "bound_tokens_per_s": lam * self.K * (self.m_p + self.m_d) if lam is not None else None,
                "method": "lp over batch compositions (HiGHS)", "engines": self.K,
                "lp_requests_per_s": lam, "closed_form_requests_per_s": cf["lambda_star"],
                "closed_form_applies": bool(cf["applies"] and cf["monotone"]), "closed_form": cf,
                "m_p": self.m_p, "m_d": self.m_d, "token_budget": self.b, "max_batch_requests": self.k_max,
                "memory": "ignored (seed 002 A9)"}


@FORMULATIONS.register("tiled-capacity")
class TiledCapacity(CapacityFormulation):
    name = "tiled-capacity"
    closed_form = True
    summary = "seed 000 Theorem 1 K/t̄ (rigorous l^p(l^p+1) prefill term) under the tiled cost model"

    def __init__(self, inst, incumbent_objective=None, engines: int | None = None):
        super().__init__(inst, incumbent_objective, engines)
        if inst.cost_model.form != "tiled":
            raise InputError(f"cost_model.form: tiled-capacity needs the 'tiled' cost model (seed 000 eq. (7)), "
                             f"got {inst.cost_model.form!r}")

    def t_star(self) -> np.ndarray:
        """(13), rigorous variant: per-request lower bound on engine time (module docstring)."""
        cm, inst = self.inst.cost_model, self.inst
        lp = inst.prompt.astype(np.float64)
        ld = (inst.output - 1).astype(np.float64)
        tokens = lp + ld
        t = tokens / (cm.nu_lin * cm.T_col) + tokens / cm.nu_nlin
        C = inst.limits.token_budget
        if C is not None:
            t += cm.t0 * tokens / C
        t += cm.N * self.decode_attention(inst.prompt, inst.output - 1)
        t += cm.N * cm.d / (cm.S * cm.nu_gemm * cm.T_row * cm.T_col * cm.T_red) * lp * (lp + 1)
        return t

    def decode_attention(self, lp: np.ndarray, ld: np.ndarray) -> np.ndarray:
        """Σ_{i=l^p+1}^{l^p+l^d} t_datt(i), eq. (5), summed exactly with prefix sums of the ceilings."""
        cm = self.inst.cost_model
        hi = int((lp + ld).max()) + 1
        i = np.arange(hi + 1, dtype=np.float64)
        per = ((cm.d / cm.T_col_v) * np.ceil(i / cm.T_row_v) + np.ceil(i / cm.T_col_v) * (cm.d / cm.T_row_v)) / cm.nu_gemv
        per[0] = 0.0
        prefix = np.cumsum(per)
        return prefix[lp + ld] - prefix[lp]

    def build(self):
        self.n_vars = self.n_rows = 0
        return self

    def solve(self, profile=None, warm=None) -> SolveResult:
        t0 = time.perf_counter()
        lam = self.K / float(self.t_star().mean())
        return SolveResult("optimal", -lam, -lam, time.perf_counter() - t0)

    def drain(self) -> float:
        return drain_bound(self.inst.arrival, self.t_star(), self.K)

    def report(self, res: SolveResult) -> dict:
        m_p, m_d = token_means(self.inst)
        lam = -res.objective
        tbar = float(self.t_star().mean())
        return {"bound_requests_per_s": lam, "bound_tokens_per_s": lam * (m_p + m_d), "method": "closed form K/t̄",
                "engines": self.K, "t_bar_s": tbar, "prefill_attention_term": "l^p (l^p + 1) (rigorous, notes §2.5(1))",
                "m_p": m_p, "m_d": m_d, "memory": "ignored (Theorem 1 has no memory constraint)"}


def solve_capacity(inst, form: CapacityFormulation, profile, backend, runs) -> dict:
    """The ``capacity`` report of ``lpbench solve``: the bound, the drain bound, each verified policy's
    trace throughput against it (ratio >= 1 or a bug)."""
    model = form.build()
    res = form.solve(profile) if getattr(form, "closed_form", False) else backend.solve(model, profile)
    if res.status != "optimal":
        return {"status": res.status, "message": res.message}
    cap = form.report(res)
    a0 = float(inst.arrival.min())
    drain = form.drain()
    cap["drain_bound_s"] = drain
    cap["drain_throughput_bound_requests_per_s"] = inst.n / (drain - a0) if drain > a0 else None
    ratios = {}
    for r in runs:
        span = r.metrics["makespan"] - a0
        ratio = span / (drain - a0) if drain > a0 else None
        if ratio is not None and ratio < 1 - 1e-9:
            from ..solve import SolveBugError

            raise SolveBugError(f"policy {r.name} drains the trace in {span} s, below the drain bound {drain - a0} s")
        ratios[r.name] = {"makespan": r.metrics["makespan"], "throughput_requests_per_s": inst.n / span if span > 0 else None,
                          "ratio": ratio}
    cap["policies"] = ratios
    return {"status": "optimal", "objective": cap["bound_requests_per_s"], "bound": cap["bound_requests_per_s"],
            "solve_seconds": res.solve_seconds, "variables": model.n_vars, "rows": model.n_rows, "capacity": cap}
