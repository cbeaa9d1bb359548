"""Several engines (seed 000 §4.1: K identical nodes and a resource planner), as a layer over the
one-engine rules: each engine keeps its own :class:`~lpbench.semantics.RequestStates` (its KV total is its
memory) and runs batches back to back exactly as :func:`lpbench.sim.engine.simulate` does -- deliver what
has reached it, ask for the next batch, price it, process it, and at its end release the completed
requests and report the batch. An event loop interleaves the engines in time: batch ends, then moves that
end, then arrivals, all at one instant, and then every engine that is free and has news is asked for its
next batch. An idle engine is asked again only when something reaches it (as the one-engine loop waits
for the next arrival). Rules of several engines and of moves: :mod:`lpbench.semantics`.

An :class:`EngineGroup` takes the decisions for all engines: where an arrival goes, each engine's next
batch, and which requests move. :class:`Routed` is the group of an ordinary policy: K copies of it, one
per engine, each seeing only its own requests, and the routing rule ``limits.routing``, which sends
each request, at its arrival, to one engine for its whole life. ``lpbench.policies.distserve`` is a
group of its own (prefill and decode engines).

Routing rules (online: each reads only what is known at the arrival time a_i, no look-ahead):

* ``round-robin`` (the default): the engines in turn.
* ``random``: uniformly at random, seeded by the policy's seed -- seed 000's throughput-optimal planner
  (§4.1, used in Theorem 2).
* ``least-loaded``: the engine with the fewest requests in it at a_i, ties to the lowest index. A request
  is in an engine from its routing (or the start of its move there) until the end of the batch that
  completes it (or the end of its move away). It reads no lengths: the output length is unknown at
  arrival (seed 000 §1.1), and a request's remaining work is the policy's business.

Speed: the event loop does not take the one-engine loop's repeated-batch runs
(``Policy.steady_batches``), so it calls ``next_batch`` once per batch. With K = 1 it builds the same
schedule as :func:`~lpbench.sim.engine.simulate`, bit for bit. A routing rule that reads no engine state
(``round-robin``, ``random``) decides every arrival before any batch runs, and an ordinary policy's copies
never interact, so then each engine is simulated on its own requests by
:func:`~lpbench.sim.engine.simulate` (runs included) and the schedules are merged by start time, engine
order breaking ties -- the event loop's schedule, bit for bit (``tests/test_multi.py``).
"""
from __future__ import annotations

import copy
import dataclasses
import heapq
import math
import time

import numpy as np

from ..errors import PolicyError
from ..registry import Registry
from ..schedule import Moves, Schedule, ScheduleBuilder
from ..semantics import RequestStates
from .engine import SimResult, Watch, apply_batch
from .engine import simulate as simulate_one_engine


class Router:
    """Picks one engine among ``candidates`` (engine indices, ascending), reading ``load`` (requests in
    each engine now, see the module docstring) when ``reads_load``."""

    reads_load = True

    def __init__(self, K: int, seed: int = 0):
        self.K = K

    def pick(self, candidates: np.ndarray, load: np.ndarray) -> int:
        raise NotImplementedError


ROUTERS: Registry[type[Router]] = Registry("routing rule")


@ROUTERS.register("round-robin")
class RoundRobin(Router):
    reads_load = False

    def __init__(self, K: int, seed: int = 0):
        super().__init__(K, seed)
        self.turn = 0

    def pick(self, candidates, load):
        e = int(candidates[np.argmin((candidates - self.turn) % self.K)])  # the first at or after the turn
        self.turn = (e + 1) % self.K
        return e


@ROUTERS.register("random")
class UniformRandom(Router):
    reads_load = False

    def __init__(self, K: int, seed: int = 0):
        super().__init__(K, seed)
        self.rng = np.random.default_rng([seed, K])

    def pick(self, candidates, load):
        return int(candidates[self.rng.integers(len(candidates))])


@ROUTERS.register("least-loaded")
class LeastLoaded(Router):
    def pick(self, candidates, load):
        return int(candidates[np.argmin(load[candidates])])


class EngineGroup:
    """The decisions of a K-engine run, asked by :class:`MultiEngineRun` engine by engine."""

    def start(self, inst, states: list[RequestStates], run: "MultiEngineRun") -> None:
        raise NotImplementedError

    def route(self, i: int, t: float) -> int:
        """The engine that request ``i``, arriving at ``t``, goes to."""
        raise NotImplementedError

    def deliver(self, e: int, idx: np.ndarray) -> None:
        """Requests ``idx`` have reached engine ``e`` (routed arrivals, or moves that ended)."""
        raise NotImplementedError

    def next_batch(self, e: int, t: float):
        raise NotImplementedError

    def batch_end(self, e: int, t: float, req, tokens, gen, finished) -> None:
        """Engine ``e``'s batch ended at ``t`` (``finished`` already released); the group may start moves
        with ``run.start_move``."""
        raise NotImplementedError

    def moved(self, i: int, src: int, dst: int, t: float) -> None:
        """The move of request ``i`` from ``src`` to ``dst`` ended at ``t`` (its KV is freed on ``src``)."""


class Routed(EngineGroup):
    """An ordinary policy on K engines: one copy per engine and the instance's routing rule."""

    def __init__(self, policy):
        self.policy = policy

    def start(self, inst, states, run):
        self.run = run
        self.engines = [copy.deepcopy(self.policy) for _ in states]
        for p, st in zip(self.engines, states):
            p.reset(inst, st)
        self.router = ROUTERS.get(inst.limits.routing_rule)(len(states), getattr(self.policy, "seed", 0))
        self.all = np.arange(len(states))

    def route(self, i, t):
        return self.router.pick(self.all, self.run.load)

    def deliver(self, e, idx):
        self.engines[e].on_arrivals(idx)

    def next_batch(self, e, t):
        return self.engines[e].next_batch(t)

    def batch_end(self, e, t, req, tokens, gen, finished):
        self.engines[e].on_batch_end(req, tokens, gen, finished)


_END, _MOVED = 0, 1  # event kinds; at one instant batch ends come before moves' ends, then arrivals


class MultiEngineRun:
    """One run of an :class:`EngineGroup` on an instance with ``limits.engines`` engines."""

    def __init__(self, inst, group: EngineGroup):
        self.inst, self.group = inst, group
        self.K = K = inst.limits.K
        self.states = [RequestStates.of(inst) for _ in range(K)]
        self.load = np.zeros(K, dtype=np.int64)
        self.where = np.full(inst.n, -1, dtype=np.int64)  # the engine holding each request's KV
        self.events: list = []
        self.seq = 0
        self.inbox: list[list[int]] = [[] for _ in range(K)]
        self.busy = [False] * K
        self.news: set[int] = set()  # engines to ask at the current instant
        self.moves: list[tuple[int, int, float]] = []

    def push(self, t: float, kind: int, data) -> None:
        heapq.heappush(self.events, (t, kind, self.seq, data))
        self.seq += 1

    def start_move(self, i: int, dst: int, t: float) -> None:
        """Start moving request ``i``'s KV to engine ``dst`` at ``t``; it reaches ``dst`` at t + τ·m_i."""
        tau = self.inst.limits.kv_transfer_per_token
        if tau is None:
            raise PolicyError("a move between engines needs limits.kv_transfer_per_token")
        src = int(self.where[i])
        idx = np.array([i], dtype=np.int64)
        m = int(self.states[src].footprint(idx)[0])
        self.states[dst].move_in(idx, self.states[src])
        self.where[i] = dst
        self.load[dst] += 1
        self.moves.append((i, dst, t))
        self.push(t + tau * m, _MOVED, (i, src, dst))

    def run(self, progress=None) -> SimResult:
        t0 = time.perf_counter()
        inst, group = self.inst, self.group
        group.start(inst, self.states, self)
        arrival, n, cost = inst.arrival, inst.n, inst.cost_model
        out = ScheduleBuilder()
        engine_of: list[int] = []
        name = getattr(group, "name", None) or getattr(getattr(group, "policy", None), "name", "?")
        watch = Watch(inst, name, progress)
        nxt = 0          # next arrival
        completed = 0
        while completed < n:
            t = min(float(arrival[nxt]) if nxt < n else math.inf, self.events[0][0] if self.events else math.inf)
            if t == math.inf:
                raise PolicyError(f"policy {name!r} stalled with {n - completed} requests unfinished")
            while True:  # everything that happens at t, in order: batch ends, ends of moves, arrivals
                if self.events and self.events[0][0] <= t:
                    _, kind, _, data = heapq.heappop(self.events)
                    if kind == _END:
                        e, req, tokens, gen, fin = data
                        finished = req[fin]
                        if len(finished):
                            self.states[e].release(finished)
                            completed += len(finished)
                            self.load[e] -= len(finished)
                        self.busy[e] = False
                        self.news.add(e)
                        group.batch_end(e, t, req, tokens, gen, finished)
                    else:
                        i, src, dst = data
                        self.states[src].release(np.array([i], dtype=np.int64))
                        self.load[src] -= 1
                        self.inbox[dst].append(i)
                        self.news.update((src, dst))
                        group.moved(i, src, dst, t)
                elif nxt < n and arrival[nxt] <= t:
                    e = group.route(nxt, t)
                    self.where[nxt] = e
                    self.load[e] += 1
                    self.inbox[e].append(nxt)
                    self.news.add(e)
                    nxt += 1
                else:
                    break
            for e in sorted(self.news):
                if self.busy[e]:
                    continue
                if self.inbox[e]:
                    group.deliver(e, np.array(self.inbox[e], dtype=np.int64))
                    self.inbox[e] = []
                batch = group.next_batch(e, t)
                if batch is None or len(batch.req) == 0:
                    if batch is not None and batch.evict is not None and len(batch.evict):
                        raise PolicyError(f"policy {name!r} evicted requests in a batch that processes nothing")
                    continue
                _, dur, gen, fin = apply_batch(self.states[e], cost, out, t, batch)
                req, tokens = batch.req, batch.tokens
                engine_of.append(e)
                self.busy[e] = True
                self.push(t + dur, _END, (e, req, tokens, gen, fin))
            self.news.clear()
            watch.check(len(out.starts), completed, t)
        sched = out.build()
        if self.K > 1 or self.moves:
            sched.engine = np.array(engine_of, dtype=np.int64)
        if self.moves:
            req, to, start = zip(*self.moves)
            sched.moves = Moves(np.array(req, dtype=np.int64), np.array(to, dtype=np.int64),
                                np.array(start, dtype=np.float64))
        return SimResult(name, sched, time.perf_counter() - t0)


def simulate_multi(inst, policy, progress=None, split: bool = True) -> SimResult:
    """Run ``policy`` (an :class:`EngineGroup`, or an ordinary policy, then :class:`Routed`) on the
    instance's ``limits.engines`` engines until every request completes; ``split=False`` forces the event
    loop where engine-by-engine simulation would do (module docstring)."""
    if isinstance(policy, EngineGroup):
        return MultiEngineRun(inst, policy).run(progress)
    router = ROUTERS.get(inst.limits.routing_rule)(inst.limits.K, getattr(policy, "seed", 0))
    if split and not router.reads_load:
        return _engine_by_engine(inst, policy, router)
    return MultiEngineRun(inst, Routed(policy)).run(progress)


def sub_instance(inst, idx: np.ndarray):
    """The requests ``idx`` (ascending) of ``inst`` as a one-engine instance with the same memory, cost model
    and batch limits."""
    take = lambda a: None if a is None else a[idx]  # noqa: E731
    return dataclasses.replace(
        inst, arrival=inst.arrival[idx], prompt=inst.prompt[idx], output=inst.output[idx],
        ids=[inst.ids[i] for i in idx.tolist()], tbt_slo=take(inst.tbt_slo), ttft_slo=take(inst.ttft_slo),
        request_class=None if inst.request_class is None else [inst.request_class[i] for i in idx.tolist()],
        limits=dataclasses.replace(inst.limits, engines=None, routing=None, kv_transfer_per_token=None))


def merge_schedules(parts: list[Schedule], idx: list[np.ndarray]) -> Schedule:
    """One schedule from the one-engine schedules ``parts`` (request j of part e is request ``idx[e][j]``):
    batches by start time, engine order breaking ties; ``engine`` numbers the parts."""
    start = np.concatenate([p.start for p in parts])
    engine = np.concatenate([np.full(p.n_batches, e, dtype=np.int64) for e, p in enumerate(parts)])
    order = np.lexsort((engine, start))

    def regroup(ptrs, columns):
        lens = np.concatenate([np.diff(ptr) for ptr in ptrs])[order]
        offsets = np.cumsum([0] + [int(ptr[-1]) for ptr in ptrs[:-1]])
        base = np.concatenate([ptr[:-1] + off for ptr, off in zip(ptrs, offsets)])[order]
        ptr = np.zeros(len(order) + 1, dtype=np.int64)
        np.cumsum(lens, out=ptr[1:])
        pick = np.repeat(base - ptr[:-1], lens) + np.arange(ptr[-1])
        return ptr, [np.concatenate(col).astype(np.int64)[pick] for col in columns]

    ptr, (req, tokens) = regroup([p.ptr for p in parts],
                                 [[ix[p.req] for p, ix in zip(parts, idx)], [p.tokens for p in parts]])
    eptr, (evict,) = regroup([p.eptr for p in parts], [[ix[p.evict] for p, ix in zip(parts, idx)]])
    return Schedule(start[order], ptr, req, tokens, eptr, evict, engine=engine[order])


def _engine_by_engine(inst, policy, router) -> SimResult:
    t0 = time.perf_counter()
    K = inst.limits.K
    every = np.arange(K)
    to = np.fromiter((router.pick(every, None) for _ in range(inst.n)), dtype=np.int64, count=inst.n)
    idx = [np.flatnonzero(to == e) for e in range(K)]
    parts = [simulate_one_engine(sub_instance(inst, ix), copy.deepcopy(policy)).schedule if len(ix) else None
             for ix in idx]
    used = [e for e in range(K) if parts[e] is not None]
    sched = merge_schedules([parts[e] for e in used], [idx[e] for e in used])
    sched.engine = np.asarray(used, dtype=np.int64)[sched.engine]
    return SimResult(policy.name, sched, time.perf_counter() - t0)
