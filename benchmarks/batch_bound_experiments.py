"""Ideas for the trace-scale ratio of issue 13, rejected except the one kept as ``mc-group`` (not a test;
docs/batch-model-bounds.md quotes their numbers from this script).

    python benchmarks/batch_bound_experiments.py keys|skip|split|duration-share|group [--trace PATH]

The instance of bench_batch_bound.py (Azure 2023 conversation hour, InferMax Llama-2-7B/A100,
M = 100,000, C = 16384). Every policy schedule below is verified; none of these policies is registered,
apart from ``mc-group`` in ``group``.

* ``keys``: MC-SF's memory-checked admission (seed 004 Alg. 1) with other queue keys: o_i (mc-sf),
  p_i (mc-work), the isolated time t_i, I + O, and prefill work + α·(rest of p_i).
* ``skip``: mc-work whose admission scan skips a request that does not fit and tries up to 8 more
  (MC-SF stops at the first).
* ``split``: eviction-free peak reservation (Σ (I + O − 1) <= M over admitted requests), admission by
  p_i; every batch runs the ``nfast`` running requests with the least remaining work, the others only
  every ``period``-th batch (short batches for small requests).
* ``duration-share``: a count bound that charges short batches. In batch b the per-participation
  work W_b <= D_b − β, so w_j / (D_b − β) is a valid share; mixed with the memory share
  (μ·X/M + (1 − μ)·w/(D − β)), a request whose batches sum to T pays at least P*(T) (convex, solved
  per λ: D − β = max(w, sqrt((1 − μ) w β / λ))), and at time t every request done by t has T <= t − a_i,
  so at most κ(t) = the most requests completable by t with works P*(t − a_i) (reverse greedy)
  are done. Printed: requests in system at t, A(t) − κ(t), beside the shipped bound's A(t) − K(t).
* ``group`` (kept: the registered ``mc-group``): mc-work admitting at most every ``period`` rounds while
  requests run, for several periods, with the batches that carry a prompt counted; then the same with the
  prefill bias b_p set to b_d (a prompt-carrying batch then costs what a decode batch costs), to separate
  the bias saved from the choice among more waiting requests; then variants of the rule (not registered):
  admit also whenever fewer than ``nmin`` requests run, or fewer than ``frac`` times the number running
  after the last admission, or defer only while ``qmin`` or more wait; and the queue ordered by I + O.
"""
import argparse
import heapq
import time
from pathlib import Path

import numpy as np

from lpbench.formulations.batch_bound import BatchBound, srpt_completions
from lpbench.instance import parse_instance
from lpbench.policies import make_policy
from lpbench.policies.base import Policy
from lpbench.policies.mcgroup import MCGroup
from lpbench.policies.mcsf import MemoryCheckedAdmission, peak_memory_at_completions
from lpbench.sim import Batch, simulate
from lpbench.traces import ImportSpec, import_trace
from lpbench.verify import verify

ROOT = Path(__file__).resolve().parents[1]
ap = argparse.ArgumentParser()
ap.add_argument("experiment", choices=["keys", "skip", "split", "duration-share", "group"])
ap.add_argument("--trace", default=str(ROOT.parent / "shared/data/azure-llm-2023/AzureLLMInferenceTrace_conv.csv"))
args = ap.parse_args()

head, cols = import_trace(args.trace, ImportSpec.for_format("azure", memory=100_000, token_budget=16384))
inst = parse_instance({**head, "requests": {k: v.tolist() for k, v in cols.items()}})
bb = BatchBound(inst)
p = bb.works()[0]
I = inst.prompt.astype(np.float64)
prefill = (bb.k["a_o"] * I + bb.k["a_p"] * I * I) * bb.to_s


def run(policy, label, on=None):
    on = on or inst
    t0 = time.perf_counter()
    sched = simulate(on, policy).schedule
    ver = verify(on, sched)
    assert ver.feasible, label
    m = ver.metrics
    started = np.zeros(on.n, dtype=bool)
    prompt_batches = 0
    for j in range(sched.n_batches):
        req = sched.batch(j)[0]
        prompt_batches += bool((~started[req]).any())
        started[req] = True
    print(f"{label:<28} total latency {m['total_latency']:12.1f}s  makespan {m['makespan']:7.1f}s  "
          f"busy {m['busy_time']:7.1f}s  batches {m['batches']:7d} ({prompt_batches} with a prompt)  "
          f"({time.perf_counter() - t0:.1f}s)", flush=True)


def keyed(key):
    class Keyed(MemoryCheckedAdmission):
        name = "keyed"

        def order_key(self, i):
            return (float(key[i]),)
    return Keyed()


class SkipAdmission(MemoryCheckedAdmission):
    name = "mc-work-skip"
    tries = 8

    def order_key(self, i):
        return (float(p[i]),)

    def next_batch(self, t):
        inst, r = self.inst, self.round
        last, w = self.run_last, self.run_w
        admitted, positions, fails = [], [], 0
        n_run = len(self.run_idx)
        tokens = prefill_tokens = n_run
        for q, entry in enumerate(self.queue):
            i = entry[-1]
            s, o = int(inst.prompt[i]), int(inst.output[i])
            cand_last, cand_w = np.append(last, r + o - 1), np.append(w, s - self.delta + 1 - r)
            if (tokens + s > self.C or prefill_tokens + s > self.P or n_run + len(admitted) + 1 > self.cap
                    or peak_memory_at_completions(cand_last, cand_w) > inst.memory):
                fails += 1
                if fails > self.tries:
                    break
                continue
            last, w = cand_last, cand_w
            admitted.append(i)
            positions.append(q)
            tokens += s
            prefill_tokens += s
        for q in reversed(positions):
            del self.queue[q]
        return self.start(admitted, last, w, n_run)


class Split(Policy):
    name = "split"

    def __init__(self, period, nfast):
        super().__init__()
        self.period, self.nfast = period, nfast

    def reset(self, inst, st):
        super().reset(inst, st)
        self.queue, self.running, self.reserved, self.k = [], [], 0, 0
        self.peak = inst.prompt + inst.output - 1

    def on_arrivals(self, idx):
        for i in idx.tolist():
            heapq.heappush(self.queue, (p[i], i))

    def next_batch(self, t):
        inst, admitted = self.inst, []
        tokens = len(self.running)
        while self.queue:
            i = self.queue[0][1]
            if self.reserved + self.peak[i] > inst.memory or tokens + inst.prompt[i] > inst.limits.token_budget:
                break
            heapq.heappop(self.queue)
            admitted.append(i)
            self.reserved += int(self.peak[i])
            tokens += int(inst.prompt[i])
        self.k += 1
        run = self.running
        if self.period > 1 and len(run) > self.nfast and self.k % self.period:
            left = np.array([p[i] * (1 - self.st.generated[i] / inst.output[i]) for i in run])
            run = [run[j] for j in np.argsort(left, kind="stable")[:self.nfast]]
        req = np.array(run + admitted, dtype=np.int64)
        c = np.ones(len(req), dtype=np.int64)
        c[len(run):] = inst.prompt[admitted]
        self.running = self.running + admitted
        return Batch(req, c)

    def on_batch_end(self, req, tokens, gen, finished):
        if len(finished):
            done = set(finished.tolist())
            self.running = [i for i in self.running if i not in done]
            self.reserved -= int(self.peak[finished].sum())


class GroupVariant(MCGroup):
    """mc-group whose period is waived while few requests run or few wait (runs switched off)."""

    def __init__(self, period=16, nmin=0, frac=0.0, qmin=0, key=None):
        super().__init__(period=period)
        self.nmin, self.frac, self.qmin, self.key = nmin, frac, qmin, key

    def reset(self, inst, st):
        super().reset(inst, st)
        self.n_admitted = 0  # requests running after the last admission

    def order_key(self, i):
        return super().order_key(i) if self.key is None else (float(self.key[i]),)

    def due(self, r):
        n = len(self.run_idx)
        if n < self.nmin or n < self.frac * self.n_admitted or len(self.queue) < self.qmin:
            return r
        return super().due(r)

    def next_batch(self, t):
        batch = super().next_batch(t)
        if self.last_admission == self.round - 1:
            self.n_admitted = len(self.run_idx)
        return batch

    def steady_batches(self, req, tokens, decode):
        return 0, True


def duration_share(mu_values=(0.0, 0.5, 0.9), times=(600, 1500, 1800, 2000, 2600, 3000, 3300)):
    k, n, a = bb.k, inst.n, inst.arrival
    beta = (k["b_o"] + min(k["b_d"], k["b_p"])) * bb.to_s
    owner, X, dec, ref = bb._token_paths(with_constants=False)
    own = np.concatenate([owner, np.arange(n)])
    w = np.concatenate([np.minimum(dec, ref), k["a_o"] * I + k["a_p"] * I * I + bb._chunks() * k["s_p"]]) * bb.to_s
    mem_share = beta * np.concatenate([X, I]) / inst.memory
    done_mem = np.sort(srpt_completions(a, p))
    done_iso = np.sort(a + bb.isolated())
    lams = np.geomspace(1e-6, 1e3, 60)
    for mu in mu_values:
        Ts, Ps = np.empty((len(lams), n)), np.empty((len(lams), n))
        for j, lam in enumerate(lams):          # T decreases and P increases along lams
            x = np.maximum(w, np.sqrt(w * (1 - mu) * beta / lam))
            Ts[j] = np.bincount(own, beta + x, minlength=n)
            Ps[j] = np.bincount(own, w + mu * mem_share + (1 - mu) * beta * w / x, minlength=n)
        t_min = np.bincount(own, beta + w, minlength=n)
        base = np.bincount(own, w + mu * mem_share, minlength=n)
        row = []
        for t in times:
            idx = np.nonzero(a <= t)[0]
            T = t - a[idx]
            cnt = (Ts[:, idx] >= T[None, :]).sum(0)   # P*(T) >= P at the smallest tabulated T_j >= T
            work = np.where(cnt > 0, Ps[np.maximum(cnt - 1, 0), idx], base[idx])
            work = np.where(T >= t_min[idx], work, np.inf)
            heap, total = [], 0.0                       # most completable by t: latest release first
            for q in range(len(idx) - 1, -1, -1):
                if np.isfinite(work[q]):
                    heapq.heappush(heap, -work[q])
                    total += work[q]
                    while total > t - a[idx[q]]:
                        total += heapq.heappop(heap)
            shipped = len(idx) - min(np.searchsorted(done_mem, t, "right"), np.searchsorted(done_iso, t, "right"))
            row.append(f"t={t}: {len(idx) - len(heap)} (shipped {shipped})")
        print(f"mu={mu}: requests in system >= " + ", ".join(row), flush=True)


if args.experiment == "keys":
    iso = bb.isolated()
    for label, key in [("o_i (mc-sf)", inst.output.astype(float)), ("p_i (mc-work)", p), ("isolated t_i", iso),
                       ("I + O", I + inst.output)] + [(f"prefill + {al:g} x rest of p_i", prefill + al * (p - prefill))
                                                        for al in (0.5, 2.0, 4.0)]:
        run(keyed(key), label)
elif args.experiment == "skip":
    run(SkipAdmission(), "mc-work, skip up to 8")
elif args.experiment == "split":
    for period, nfast in ((1, 0), (2, 20), (3, 20)):
        run(Split(period, nfast), f"split period {period} nfast {nfast}")
elif args.experiment == "group":
    no_bias = parse_instance({**head, "cost_model": {"form": "infermax", **{**inst.cost_model.coefficients,
                                                                          "b_p": inst.cost_model.coefficients["b_d"]}},
                              "requests": {k: v.tolist() for k, v in cols.items()}})
    for on, tag in ((inst, ""), (no_bias, ", b_p = b_d")):
        for period in (1, 4, 8, 16, 24, 32):
            run(make_policy("mc-group", on, period=period), f"mc-group period {period}{tag}", on)
    for label, kw in [("nmin 40", dict(nmin=40)), ("nmin 55", dict(nmin=55)),
                      ("period 32, frac 0.9", dict(period=32, frac=0.9)), ("qmin 20", dict(qmin=20)),
                      ("key I + O", dict(key=I + inst.output))]:
        run(GroupVariant(**kw), f"mc-group {label}")
else:
    duration_share()
