"""A CP-SAT cumulative model equivalent to the latency IP of seed 004 (not in the paper; notes
seed-004 §2.1.5). Solved by CP-SAT only.

Variables: start S_i ∈ {a_i, ..., k̄_i} (the same horizon as ``latency-ip``, tightenings (a) and (b)
proven there). Request i's memory ramp s_i + (t − S_i), t = S_i+1..S_i+o_i, is the sum of o_i
fixed-size intervals tied to S_i:

* [S_i + 1, S_i + o_i + 1) with demand s_i + 1, and
* [S_i + 1 + l, S_i + o_i + 1) with demand 1, for l = 1..o_i − 1;

at t = S_i + j exactly 1 + (j − 1) of them cover t, with total demand s_i + j. So
``Cumulative(intervals, demands, M)`` is IP constraint (3) at every t, each request starts once by
construction ((2)), and the objective Σ_i (S_i + o_i − a_i) is (1): the feasible sets and the objective
coincide with ``latency-ip``, hence so do the optima (tested against each other).

Symmetry breaking (valid): requests with identical (a_i, s_i, o_i) are interchangeable -- swapping
their start times maps any schedule to one of equal objective -- so S_i <= S_j is imposed for such
i < j (in the instance's order).
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..solvers.base import SolveResult
from ..solvers.cpsat import cp_model, solve_cp
from .base import FORMULATIONS
from .latency_ip import LatencyIP, canonical_starts, identical_groups, schedule_from_starts, starts_from_schedule


def memory_ramps(m, S, s, o, memory: int) -> list:
    """Request i's ramp s_i + (t − S_i), t = S_i+1..S_i+o_i, as o_i fixed-size intervals tied to S_i (module
    docstring), under one cumulative of capacity ``memory``: IP constraint (3) at every t. Returns the intervals."""
    intervals, demands = [], []
    for i in range(len(S)):
        intervals.append(m.NewFixedSizeIntervalVar(S[i] + 1, int(o[i]), f"base{i}"))
        demands.append(int(s[i]) + 1)
        for ell in range(1, int(o[i])):
            intervals.append(m.NewFixedSizeIntervalVar(S[i] + 1 + ell, int(o[i]) - ell, f"ramp{i}_{ell}"))
            demands.append(1)
    # (3) memory at every time t
    m.AddCumulative(intervals, demands, memory)
    return intervals


@FORMULATIONS.register("latency-cp")
class LatencyCP(LatencyIP):
    name = "latency-cp"
    exact = True
    integral_objective = True
    native_backend = "cpsat"
    summary = "CP-SAT cumulative model equal to latency-ip (start variables, memory ramp as intervals)"
    scalable_alternative = "use --formulation volume-bound for a lower bound that scales"

    def estimate_nonzeros(self) -> int:
        """One interval per active round of each request: Σ o_i."""
        return int(self.inst.output.sum())

    def build(self):
        inst = self.inst
        s, o = inst.prompt, inst.output
        m, S = self.start_model()
        intervals = memory_ramps(m, S, s, o, int(inst.memory))
        self.finish_model(m, S)
        self.n_vars, self.n_rows = inst.n, len(intervals)
        return self

    def start_model(self):
        """(model, S): start variables S_i ∈ {a_i, ..., k̄_i}, the horizon of ``latency-ip``."""
        a = self.inst.arrival.astype(np.int64)
        self.first, self.last = a, self.horizon()
        m = cp_model.CpModel()
        return m, [m.NewIntVar(int(a[i]), int(self.last[i]), f"S{i}") for i in range(self.inst.n)]

    def finish_model(self, m, S) -> None:
        """The parts shared by the CP models over start times: symmetry breaking, the objective floor
        (c) and objective (1)."""
        inst = self.inst
        a, o = inst.arrival.astype(np.int64), inst.output
        # symmetry breaking among identical requests (hints are put in this order: canonical_starts)
        for members in identical_groups(inst):
            for i, j in zip(members, members[1:]):
                m.Add(S[i] <= S[j])
        # (c) of latency-ip: the objective is at least a certified lower bound on OPT
        if self.objective_floor is not None:
            m.Add(sum(S) >= int(np.ceil(self.objective_floor - 1e-6 - float((o - a).sum()))))
        # (1) total latency (constant Σ(o_i − a_i) added back)
        m.Minimize(sum(S))
        self.offset = float((o - a).sum())
        self.cp, self.S = m, S

    def solve(self, profile, warm_schedule=None, stop_when=None) -> SolveResult:
        if profile.backend != "cpsat":
            raise InputError(f"--solver: formulation {self.name!r} is a CP-SAT model; choose a cpsat profile, "
                             f"got {profile.name!r} ({profile.backend})")
        if warm_schedule is not None:
            starts = starts_from_schedule(self.inst, warm_schedule)
            if starts is not None:
                starts = canonical_starts(self.inst, starts)   # the order of the symmetry breaking
                if np.all((starts >= self.first) & (starts <= self.last)):
                    for var, k in zip(self.S, starts):
                        self.cp.AddHint(var, int(k))
        offset = self.offset
        return solve_cp(self.cp, profile, lambda solver: np.array([solver.Value(v) for v in self.S], dtype=np.float64),
                        to_objective=lambda v: v + offset, stop_when=stop_when)

    def extract(self, starts):
        return schedule_from_starts(self.inst, np.round(starts).astype(np.int64))

    def warm_start(self, schedule):
        return schedule  # the hint is set in solve()


def weighted_latency_bound(inst, weights: np.ndarray, seconds: float) -> int:
    """A certified lower bound on min over the schedules of ``inst`` of Σ_i weights_i·(C_i − a_i) (positive integer
    weights), by CP-SAT on this module's cumulative model (one worker, at most ``seconds``): its proven bound, rounded
    up (the objective is an integer), at least Σ_i weights_i·o_i. Used by ``chain-bound`` for its first completion
    (chain.py, "The first completion beside the requests left out").

    Horizon: S_i <= max_j a_j + Σ_j o_j. An optimal schedule has some request active in every round from max_j a_j to
    its last completion: otherwise moving every later start one round earlier keeps (3) (the memory profile only
    shifts, every request has arrived) and lowers the objective, the weights being positive. So its last completion
    is at most max_j a_j + Σ_j o_j. Requests with equal (a, s, o) and weight start in index order (swapping two such
    requests' starts keeps the objective)."""
    a, s, o = (x.astype(np.int64) for x in (inst.arrival, inst.prompt, inst.output))
    weights = np.asarray(weights, dtype=np.int64)
    floor = int((weights * o).sum())
    m = cp_model.CpModel()
    last = int(a.max() + o.sum())
    S = [m.NewIntVar(int(a[i]), last, f"S{i}") for i in range(inst.n)]
    memory_ramps(m, S, s, o, int(inst.memory))
    for members in identical_groups(inst):             # symmetry breaking among identical requests of equal weight
        by_weight: dict = {}
        for i in members:
            by_weight.setdefault(int(weights[i]), []).append(i)
        for same in by_weight.values():
            for i, j in zip(same, same[1:]):
                m.Add(S[i] <= S[j])
    # (1) with weights: Σ w_i (S_i + o_i − a_i)
    m.Minimize(sum(int(weights[i]) * S[i] for i in range(inst.n)))
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = max(float(seconds), 0.001)
    solver.parameters.num_workers = 1
    status = solver.Solve(m)
    if status == cp_model.INFEASIBLE or status == cp_model.MODEL_INVALID:
        return floor
    proven = int(np.ceil(solver.BestObjectiveBound() - 1e-6)) + int((weights * (o - a)).sum())
    return max(proven, floor)
