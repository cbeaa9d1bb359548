"""``lpbench capacity``: the largest arrival-rate multiplier at which a policy is stable (seed 002 §1.5,
Theorem 1) or, with an SLO, meets it (seed 000 §7: median TTFT <= target and P99 TBT within each
class's SLO), found by bisection, and its ratio to the capacity bound.

Workload at multiplier s, seed k. The instance supplies the length distribution (its (prompt,
output) pairs, with their class and SLO fields) and the base rate λ0 = (n − 1)/(a_n − a_1). A run has
``requests`` arrivals: Poisson at rate s·λ0, lengths drawn with replacement, both from
``numpy.random.default_rng([seed, k])`` -- the same draws at every s (common random numbers: the
interarrival times scale by 1/s), so the tested sequence is deterministic and the runs at two
multipliers differ only in the rate. Every run's schedule is verified before it is used.

Stability test (defended). Theorem 1 (b) and the fluid limit (notes seed-002 §2.2, §2.4): above
capacity the backlog grows linearly, at slope λ(m_p + m_d) − b/t_b in tokens, i.e. a fixed fraction
1 − μ/λ of the arrivals piles up; below, it is positive recurrent and its long-run slope is 0. So the
test is the least-squares slope of N(t) = arrived − completed requests over the second half of the
arrival period [H/2, H] (H = last arrival; the first half is the warm-up from an empty system, the
drain after H is excluded), divided by the arrival rate: the fraction of arrivals that accumulate.
A multiplier is stable iff the mean of this relative slope over the seeds is at most ``threshold``
(default 0.02). What it costs: a policy whose true capacity is μ is declared unstable at λ > μ only
once 1 − μ/λ exceeds the threshold plus noise, so the measured capacity can read high by up to about
threshold/(1 − threshold) ≈ 2 %, and near-critical stable queues with slow relaxation can read low by
a few percent (notes seed-002 A11). Seeds average out the noise; more requests shrink both biases.
Calibration on ``instances/li-llama3-70b-b512.json`` (Sarathi-Serve, 10,000 requests, 3 seeds; fluid
slope 1 − 1/ρ): mean relative slope −0.004 at ρ = 0.95, +0.007 at 1.00, +0.026 at 1.02, +0.054 at 1.05;
with 4,000 requests the noise is about 3x larger (+0.03 at ρ = 1.00), hence 10,000 by default.

Bisection. No policy is stable at or above the capacity bound (``wc-capacity``'s LP or
``tiled-capacity``; at the bound itself the queue is at best null recurrent), so the search brackets
[0, bound] without testing the bound (a finite-horizon "stable" there would be noise). It halves the
upper end until a rate is stable (FasterTransformer sits near 4 % of λ*), then bisects ``iters`` times
(default 7: 1/128 of the stable bracket); the capacity reported is the stable end (0 if even
bound/4096 is unstable).
Without a bound (cost models with KV-dependent batch time) the upper end doubles from 1 until
unstable. The bisection assumes that stability (and SLO attainment) is monotone in the rate.
"""
from __future__ import annotations

import math
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace

import numpy as np

from .errors import InputError
from .instance import Instance
from .policies import make_policy
from .semantics import SLOT
from .sim import simulate
from .solve import SolveBugError
from .verify import verify


@dataclass(frozen=True)
class SearchConfig:
    requests: int = 10000
    seeds: int = 3
    threshold: float = 0.02
    iters: int = 7
    seed: int = 0
    slo_ttft: float | None = None  # median TTFT target in seconds (seed 000: 0.5 s)
    params: tuple = ()             # the policy's parameters, (key, value) pairs (e.g. distserve's prefill_engines)


def base_rate(inst: Instance) -> float:
    span = float(inst.arrival[-1] - inst.arrival[0])
    if inst.n < 2 or span <= 0:
        raise InputError("requests.arrival: capacity needs at least two distinct arrival times (the base rate "
                         f"is (n - 1) / (last - first arrival)), got {inst.n} request(s) over {span:g} s")
    return (inst.n - 1) / span


def class_slos(inst: Instance) -> dict[str, float]:
    """Each class's TBT SLO (seed 000: paying 0.1 s, free 0.5 s); every request of a class needs the
    ``tbt_slo`` field and one value per class. No classes: requests with tbt_slo form the class 'all'."""
    classes = inst.request_class
    slo = inst.tbt_slo
    if classes is None:
        if slo is None or np.all(np.isnan(slo)):
            return {}
        vals = np.unique(slo[~np.isnan(slo)])
        if len(vals) > 1:
            raise InputError(f"requests.tbt_slo: without a 'class' field all requests need one TBT SLO, got {vals.tolist()}")
        return {"all": float(vals[0])}
    out: dict[str, float] = {}
    for i, c in enumerate(classes):
        if c is None:
            raise InputError(f"requests.class[{inst.ids[i]}]: the instance has classes, but this request has none")
        v = math.nan if slo is None else float(slo[i])
        if math.isnan(v):
            raise InputError(f"requests.tbt_slo[{inst.ids[i]}]: class {c!r} has no tbt_slo field (needed for the SLO "
                             "capacity: P99 TBT within each class's SLO)")
        if c in out and out[c] != v:
            raise InputError(f"requests.tbt_slo[{inst.ids[i]}]: class {c!r} has two TBT SLOs, {out[c]:g} and {v:g}")
        out[c] = v
    return out


def workload(inst: Instance, multiplier: float, k: int, cfg: SearchConfig, rate0: float) -> Instance:
    """``cfg.requests`` requests resampled from ``inst`` with Poisson arrivals at ``multiplier`` × ``rate0``; in the
    slot model (seed 004: integer rounds) each arrival is rounded down to its round."""
    rng = np.random.default_rng([cfg.seed, k])
    pick = rng.integers(0, inst.n, cfg.requests)
    arrival = np.cumsum(rng.exponential(1.0, cfg.requests)) / (multiplier * rate0)
    arrival -= arrival[0]
    if inst.model == SLOT:
        arrival = np.floor(arrival)
    take = lambda a: None if a is None else a[pick]  # noqa: E731
    return replace(inst, arrival=arrival, prompt=inst.prompt[pick], output=inst.output[pick],
                   ids=list(range(cfg.requests)), name=f"{inst.name}-x{multiplier:.6g}-s{k}",
                   request_class=None if inst.request_class is None else [inst.request_class[j] for j in pick],
                   tbt_slo=take(inst.tbt_slo), ttft_slo=take(inst.ttft_slo))


def backlog_slope(arrival: np.ndarray, completion: np.ndarray, points: int = 200) -> float:
    """Least-squares slope (requests/s) of N(t) = arrived − completed over [H/2, H]."""
    H = float(arrival[-1])
    t = np.linspace(H / 2, H, points)
    n = np.searchsorted(arrival, t, side="right") - np.searchsorted(np.sort(completion), t, side="right")
    return float(np.polyfit(t, n, 1)[0])


def run_one(args) -> dict:
    """One simulation at (multiplier, seed k): verified, with its stability and SLO evidence."""
    inst, policy, multiplier, k, cfg, rate0, slos = args
    w = workload(inst, multiplier, k, cfg, rate0)
    res = simulate(w, make_policy(policy, w, seed=cfg.seed, **dict(cfg.params)))
    ver = verify(w, res.schedule)
    if not ver.feasible:
        raise SolveBugError(f"policy {policy} produced an infeasible schedule on {w.name}: {ver.violations[0]}")
    rate = multiplier * rate0
    out = {"seed": k, "relative_slope": backlog_slope(w.arrival, ver.completion) / rate,
           "simulate_seconds": res.seconds}
    if cfg.slo_ttft is not None:
        half = w.arrival >= w.arrival[-1] / 2           # steady state: requests arriving in the second half
        out["ttft_p50"] = float(np.median((ver.first_token - w.arrival)[half]))
        req, gap = ver.tbt
        keep = half[req]
        out["tbt_p99"] = {}
        cls = np.asarray(w.request_class, dtype=object) if w.request_class is not None else None
        for c in slos:
            g = gap[keep & (cls[req] == c)] if cls is not None else gap[keep]
            out["tbt_p99"][c] = float(np.percentile(g, 99)) if len(g) else None
    return out


def probe(inst, policy, multiplier, cfg, rate0, slos, pool) -> dict:
    jobs = [(inst, policy, multiplier, k, cfg, rate0, slos) for k in range(cfg.seeds)]
    runs = list(pool.map(run_one, jobs)) if pool is not None else [run_one(j) for j in jobs]
    slope = float(np.mean([r["relative_slope"] for r in runs]))
    stable = slope <= cfg.threshold
    ok = stable
    rep = {"multiplier": multiplier, "rate": multiplier * rate0, "mean_relative_slope": slope, "stable": stable,
           "runs": runs}
    if cfg.slo_ttft is not None:
        ttft = float(np.mean([r["ttft_p50"] for r in runs]))
        tbt = {c: (None if any(r["tbt_p99"][c] is None for r in runs) else float(np.mean([r["tbt_p99"][c] for r in runs])))
               for c in slos}
        slo_ok = ttft <= cfg.slo_ttft and all(v is None or v <= slos[c] for c, v in tbt.items())
        rep.update({"ttft_p50": ttft, "tbt_p99": tbt, "slo_met": slo_ok})
        ok = stable and slo_ok
    rep["ok"] = ok
    return rep


def capacity_bound(inst: Instance) -> dict | None:
    """The capacity bound of the instance's cost model: wc-capacity's LP or tiled-capacity's K/t̄."""
    from .formulations.capacity import TOKEN_LOAD_FORMS, TiledCapacity, WorkConservingCapacity
    from .solvers import BACKENDS, get_profile

    form = inst.cost_model.form
    if form == "tiled":
        f = TiledCapacity(inst)
        return {"formulation": "tiled-capacity", **f.report(f.solve())}
    if form in TOKEN_LOAD_FORMS and inst.limits.token_budget is not None:
        f = WorkConservingCapacity(inst)
        res = BACKENDS.get("highs")().solve(f.build(), get_profile("highs"))
        if res.status == "optimal":
            return {"formulation": "wc-capacity", **f.report(res)}
    return None


def search(inst: Instance, policy: str, cfg: SearchConfig, workers: int = 1, log=None) -> dict:
    from .generators import MAX_REQUESTS

    for name, v, lo in (("--requests", cfg.requests, 20), ("--seeds", cfg.seeds, 1), ("--iters", cfg.iters, 1)):
        if v < lo:
            raise InputError(f"{name}: must be at least {lo}, got {v}")
    if cfg.requests > MAX_REQUESTS:  # every probe draws and simulates this many requests
        raise InputError(f"--requests: must be at most {MAX_REQUESTS:,} arrivals per simulation, got {cfg.requests}")
    if not (0 < cfg.threshold < 1):
        raise InputError(f"--threshold: must be in (0, 1), got {cfg.threshold}")
    if cfg.slo_ttft is not None and not (math.isfinite(cfg.slo_ttft) and cfg.slo_ttft > 0):
        raise InputError(f"--slo: must be a positive number of seconds (median TTFT target), got {cfg.slo_ttft}")
    make_policy(policy, inst, **dict(cfg.params))  # unknown policy, parameter or model: exit 2 before any work
    rate0 = base_rate(inst)
    slos = class_slos(inst) if cfg.slo_ttft is not None else {}
    bound = capacity_bound(inst)
    m_tokens = float((inst.prompt + inst.output - 1).mean())
    pool = ProcessPoolExecutor(workers) if workers > 1 else None
    probes: list[dict] = []

    def test(mult: float) -> bool:
        rep = probe(inst, policy, mult, cfg, rate0, slos, pool)
        probes.append(rep)
        if log:
            extra = f", median TTFT {rep['ttft_p50']:.3g} s, P99 TBT {rep['tbt_p99']}" if "ttft_p50" in rep else ""
            log(f"{policy}: multiplier {mult:.5g} ({rep['rate']:.5g} req/s): backlog slope / rate "
                f"{rep['mean_relative_slope']:+.4f}{extra} -> {'ok' if rep['ok'] else 'no'}")
        return rep["ok"]

    try:
        if bound is not None:
            lo, hi = 0.0, bound["bound_requests_per_s"] / rate0
        else:
            lo, hi = 0.0, 1.0
            while test(hi):
                lo, hi = hi, 2 * hi
                if hi > 2**10:
                    raise InputError(f"policy {policy}: still stable at {hi:g}x the base rate; no capacity found")
        while lo == 0.0 and hi > 2.0**-12:  # halve down to a stable rate: precision relative to the answer
            if test(hi / 2):
                lo = hi / 2
            else:
                hi = hi / 2
        if lo > 0.0:
            for _ in range(cfg.iters):
                mid = (lo + hi) / 2
                if test(mid):
                    lo = mid
                else:
                    hi = mid
    finally:
        if pool is not None:
            pool.shutdown()
    cap = lo * rate0
    bound_rate = bound["bound_requests_per_s"] if bound else None
    return {
        "instance": inst.name, "policy": policy, "params": dict(cfg.params), "base_rate": rate0,
        "capacity": cap, "capacity_multiplier": lo, "capacity_tokens_per_s": cap * m_tokens,
        "bound": bound_rate, "ratio": cap / bound_rate if bound_rate else None, "bound_detail": bound,
        "resolution": (hi - lo) * rate0,
        "criterion": "stable" + (" and median TTFT <= slo and P99 TBT <= class SLO" if cfg.slo_ttft else ""),
        "slo": None if cfg.slo_ttft is None else {"ttft_p50_target": cfg.slo_ttft, "tbt_p99_targets": slos},
        "stability": {"test": "mean over seeds of the least-squares slope of requests in system over the second "
                              "half of the arrival period, divided by the arrival rate, <= threshold",
                      "threshold": cfg.threshold, "requests_per_run": cfg.requests, "seeds": cfg.seeds,
                      "seed": cfg.seed, "probes": probes},
    }


def log_stderr(msg: str) -> None:
    print(f"lpbench capacity: {msg}", file=sys.stderr, flush=True)
