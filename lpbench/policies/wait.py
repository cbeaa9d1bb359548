"""WAIT (seed 001 Algorithm 1, notes seed-001 §3.2) and the FCFS baseline it is measured against (§3.1).

Stage mapping (:mod:`lpbench.fluid`): a type-j request (l_j, l'_j) is the lpbench request I = l_j,
O = l'_j + 1; seed stage s is its (s+1)-th batch. Type of a request: the types-block entry with
prompt = I and output = O - 1; without a types block, every distinct (I, O - 1) is a type with rate
= its count / the arrival span.

WAIT, as the paper (not one variant of the authors' code, notes §6.4): type j is *eligible* iff its
stage-0 queue holds n_{j0} >= n_j prompts. An iteration (server idle) batches, for every eligible j,
min{n_j, n_{js}} prompts of every stage s = 0..l'_j: the n_j oldest stage-0 prompts (FIFO) and every
in-flight prompt (n_{js} <= n_j always holds for s >= 1, since stage s+1 only receives what stage s
sent). In-flight prompts of ineligible types stall, holding their KV. WAIT never evicts: after every
batch the KV footprint is at most M^π = Σ_j n_j a_j (processed prompts hold l_j + s, stalled ones
l_j + s - 1), so M^π <= C is required and checked.

End of horizon (the rule of :mod:`lpbench.throughput`, applied to every policy): once every request
of the instance has arrived, a type is eligible as soon as it has any prompt (the flush), so every
schedule completes and verifies; the measurement counts completions up to the horizon only.

Thresholds (``--param``): ``B=<batch prompts>`` uses the paper's practical rule
n_j = max(1, floor(B ρ_j / (l'_j + 1))) (§6; the floor-at-1 rounding is the authors' code); without it,
the integer point of the threshold polytope (11)+(19) with the least M^π
(:mod:`lpbench.formulations.wait_thresholds`; it is n* when n* is integral, and then has zero slack in (11), the
zero-drift case where latency grows like √T rather than Theorem 1's O(1)). ``slack=<seconds>`` asks every row
for that time slack, n_j / λ_j − ΔT(n) >= slack, which Theorem 1's strict condition needs.
"""
from __future__ import annotations

from collections import deque

import numpy as np

from ..errors import InputError
from ..fluid import memory_work
from ..instance import LIMIT_KEYS, MAX_INT, PromptTypes
from ..sim import Batch
from .base import POLICIES, Param, Policy, batch_budgets, refuse_refill_over_budget


def request_types(inst) -> tuple[PromptTypes, np.ndarray]:
    """(types, type index of every request) under the stage mapping above."""
    decode = inst.output - 1
    if inst.types is not None:
        types = inst.types
        lookup = {(int(l), int(o)): j for j, (l, o) in enumerate(zip(types.prompt, types.output))}
        of = np.array([lookup.get((int(l), int(o)), -1) for l, o in zip(inst.prompt, decode)], dtype=np.int64)
        if (of < 0).any():
            i = int(np.flatnonzero(of < 0)[0])
            raise InputError(f"requests: request {inst.ids[i]} (prompt {int(inst.prompt[i])}, output "
                             f"{int(inst.output[i])}) matches no entry of types (a type is prompt l, output l' + 1)")
        return types, of
    pairs, of = np.unique(np.stack([inst.prompt, decode], axis=1), axis=0, return_inverse=True)
    of = of.reshape(-1)
    span = float(inst.arrival.max() - inst.arrival.min()) or 1.0
    rate = np.bincount(of, minlength=len(pairs)) / span
    return PromptTypes(pairs[:, 0].copy(), pairs[:, 1].copy(), rate), of.astype(np.int64)


def practical_thresholds(types, B: float) -> np.ndarray:
    """The paper's rule n_j = B ρ_j / (l'_j + 1), ρ_j = λ_j / Σλ (§6), rounded int(max(., 1))."""
    rho = types.rate / types.rate.sum()
    return np.maximum(np.floor(B * rho / (types.output + 1)), 1).astype(np.int64)


def refuse_batch_limits(name: str, inst) -> None:
    """WAIT and Nested WAIT (seed 001 Algs. 1-2) batch what their thresholds say; the seed's model has no batch
    limits, so an instance with them is refused (exit 2) rather than given batches that break them."""
    for key in LIMIT_KEYS:
        if getattr(inst.limits, key) is not None:
            raise InputError(f"limits.{key}: policy {name!r} (seed 001) batches by its thresholds and models no "
                             f"batch limits, got {key} = {getattr(inst.limits, key)}; remove the limit, or use "
                             "fcfs or mc-sf, which respect it")


@POLICIES.register("wait")
class Wait(Policy):
    name = "wait"
    explicit_only = True  # a throughput policy for seed-001 instances: run when named, not in every solve
    summary = "seed 001 Alg. 1 WAIT: per-type stage-0 thresholds n_j, in-flight prompts of waiting types stall, never evicts"

    #: B: default none (the least-M^pi integer thresholds); slack applies to those only (checked in __init__)
    params = {"B": Param("float", "the practical rule's batch size, n_j = max(floor(B rho_j / (l'_j + 1)), 1)",
                         lo=1, hi=MAX_INT),
              "slack": Param("float", "the time slack in seconds that every row of (11) must keep", lo=0)}

    def __init__(self, B: float | None = None, slack: float = 0.0, **kw):
        super().__init__(**kw)
        if slack and B is not None:
            raise InputError("--param slack: applies to the least-M^pi thresholds, not to the practical rule B")
        self.B, self.slack = B, float(slack)
        self.thresholds: np.ndarray | None = None

    def choose_thresholds(self, inst, types) -> np.ndarray:
        if self.B is not None:
            return practical_thresholds(types, self.B)
        from ..formulations.wait_thresholds import integer_thresholds

        return integer_thresholds(inst, types, self.slack)

    def reset(self, inst, st) -> None:
        super().reset(inst, st)
        types, self.type_of = request_types(inst)
        self.types = types
        n = self.choose_thresholds(inst, types)               # its linear cost model is checked first
        refuse_batch_limits(self.name, inst)
        M_pi = float((n * memory_work(types.prompt, types.output)).sum())
        if M_pi > inst.memory:
            raise InputError(f"policy 'wait': thresholds {n.tolist()} need M^pi = {M_pi:g} > memory {inst.memory} "
                             "(WAIT never evicts, so M^pi <= C is required)")
        self.thresholds = n
        self.queue = [deque() for _ in range(types.m)]              # stage 0, FIFO, off the GPU
        self.stages = [deque([np.zeros(0, np.int64)] * int(o), maxlen=int(o)) for o in types.output]
        self.arrived = 0

    def on_arrivals(self, idx) -> None:
        for i in idx.tolist():
            self.queue[self.type_of[i]].append(i)
        self.arrived += len(idx)

    def eligible(self, j: int) -> bool:
        if self.arrived == self.inst.n:  # end of horizon: flush
            return bool(self.queue[j]) or any(len(g) for g in self.stages[j])
        return len(self.queue[j]) >= self.thresholds[j]

    def next_batch(self, t):
        req, tok = [], []
        for j in range(self.types.m):
            if not self.eligible(j):
                continue
            q = self.queue[j]
            new = np.array([q.popleft() for _ in range(min(int(self.thresholds[j]), len(q)))], dtype=np.int64)
            req.append(new)
            tok.append(self.inst.prompt[new])                      # stage 0: the prefill
            for group in self.stages[j]:                           # stages 1..l'_j: one decode token each
                req.append(group)
                tok.append(np.ones(len(group), np.int64))
            self.stages[j].appendleft(new)                         # everything advances one stage; the
        if not req:                                                # group leaving stage l'_j completes
            return None
        return Batch(np.concatenate(req), np.concatenate(tok))


@POLICIES.register("fcfs")
class FCFS(Policy):
    """The FCFS baseline of seed 001 §3.1 (Examples 1-2, Prop 3), vLLM-style (notes §3.8).

    Every iteration processes every running prompt (one decode token each) and admits waiting prompts
    in FCFS order (evicted ones at the front, as Vidur re-queues them) while their prompt fits in the
    KV that is free *now* (vLLM's block check ignores the growth of running decodes). If the batch's
    footprint after it would exceed C, running prompts are evicted LIFO by admission (the paper:
    "most recently admitted prompts are evicted first") until it fits, newly admitted ones last.
    An eviction does what the instance says (:mod:`lpbench.semantics`): by default the batch model's
    recompute (KV dropped, generated tokens refilled), which wastes less than the paper's full restart;
    with ``"eviction": "restart"`` in the instance, the paper's rule (§1.4: the prompt "loses everything,
    restarts at stage 0"). ``back`` = 1 re-queues evicted prompts at the back, "as new arrivals" (the paper);
    the default 0 puts them at the front, as Vidur does (notes seed-001, ambiguity 12).

    lpbench extension, as for MC-SF: the instance's token_budget / prefill_budget / max_batch_requests also end
    the FCFS admission (seed 001's model has no such limits). An evicted request is re-admitted whole (its prompt
    and generated tokens, at most I + O − 1), so an instance where that can exceed the budget is refused, as the
    unchunked policies of seed 003 refuse it."""

    name = "fcfs"
    explicit_only = True
    summary = "seed 001 §3.1 FCFS (vLLM-style): admit against current free KV, mixed batches, LIFO eviction"

    params = {"back": Param("flag", "where an evicted prompt re-queues",
                            values="0 (evicted prompts re-queue at the front, as Vidur) or 1 (at the back, as new "
                                   "arrivals)")}

    def __init__(self, back: float = 0, **kw):
        super().__init__(**kw)
        self.back = bool(back)

    def reset(self, inst, st) -> None:
        super().reset(inst, st)
        self.C, self.P, self.cap = batch_budgets(inst.limits)
        refuse_refill_over_budget(self.name, inst, self.P, "raise limits.token_budget / prefill_budget")
        self.waiting: deque = deque()
        self.running: list[int] = []     # in admission order

    def on_arrivals(self, idx) -> None:
        self.waiting.extend(idx.tolist())

    def next_batch(self, t):
        st, inst = self.st, self.inst
        free = inst.memory - st.kv_total
        tokens, prefill = len(self.running), 0                  # one decode token per running prompt
        admitted = []
        while self.waiting:
            need = int(st.S[self.waiting[0]])                    # its prompt (or refill): KV and tokens
            if (need > free or tokens + need > self.C or prefill + need > self.P
                    or len(self.running) + len(admitted) + 1 > self.cap):
                break
            i = self.waiting.popleft()
            free -= need
            tokens += need
            prefill += need
            admitted.append(i)
        # a processed request holds S (its pre-batch sequence length) after the batch
        after = int(st.S[self.running].sum()) + int(st.S[admitted].sum())
        evicted = []
        while after > inst.memory and self.running:          # LIFO by admission, running prompts first
            v = self.running.pop()
            after -= int(st.S[v])
            evicted.append(v)
        while after > inst.memory:                           # (only if no running prompt is left)
            v = admitted.pop()
            after -= int(st.S[v])
            self.waiting.appendleft(v)
        if self.back:                                        # evicted prompts re-queue as new arrivals ...
            self.waiting.extend(reversed(evicted))           # ... in admission order
        else:
            self.waiting.extendleft(evicted)                 # ... or at the front (Vidur)
        self.running += admitted
        if not self.running:
            return None
        req = np.array(self.running, dtype=np.int64)
        return Batch(req, (st.S[req] - st.m[req]).astype(np.int64),
                     np.array(evicted, dtype=np.int64) if evicted else None)

    def on_batch_end(self, req, tokens, gen, finished) -> None:
        if len(finished):
            done = set(finished.tolist())
            self.running = [i for i in self.running if i not in done]
