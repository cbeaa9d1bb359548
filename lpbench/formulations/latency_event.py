"""An event-based CP-SAT model equal to the latency IP of seed 004 (ours, issue 12; slot model,
eqs. (1)-(4)): memory is checked only at the n completion times, where Lemma 1 of
:mod:`lpbench.formulations.completion` says it peaks.

Variables: start S_j ∈ {a_j, ..., k̄_j} (the horizon of ``latency-ip``, (a) and (b) proven there),
completion C_j = S_j + o_j. Request j is active at round t iff S_j < t <= C_j, with footprint
s_j + (t − S_j). For every ordered pair (h, j), h ≠ j, that can be active together:

* z_hj = 1 if j is active at C_h; forced by  ¬z_hj ⇒ S_j >= C_h  ∨  C_j <= C_h − 1;
* e_hj >= s_j + C_h − S_j when z_hj (e_hj >= 0 always): j's footprint at C_h, or more;

    # (3) at every completion time C_h:   p_h + Σ_j e_hj <= M        (p_h = s_h + o_h, h at its peak)

Exactness. Every schedule satisfies these rows with z, e set to the true activity and footprints.
Conversely, if the rows hold then eq. (3) holds at every t: by Lemma 1, between consecutive
completions nobody leaves and every active footprint grows, so U(t) <= U(C⁺(t)) (C⁺(t): the first
completion >= t), and after the last completion nothing is active. Each request starts once by
construction ((2)), and the objective Σ_j (S_j + o_j − a_j) is (1): the optima equal ``latency-ip``'s
(tested against brute force). Pairs that cannot be co-active get no row: those whose horizons cannot
overlap, and those with p_h + s_j + 1 > M (j at age 1 beside h at its peak), for which the disjunction
S_j >= C_h ∨ C_j < C_h is imposed directly (it is eq. (3) at C_h).

Compared with ``latency-cp`` (Σ_j o_j ramp intervals in one cumulative) the model has O(n²) rows
whatever the output lengths. Symmetry breaking as in ``latency-cp``: identical (a, s, o) start in order.
"""
from __future__ import annotations

import numpy as np

from .base import FORMULATIONS
from .latency_cp import LatencyCP


@FORMULATIONS.register("latency-event")
class LatencyEvent(LatencyCP):
    name = "latency-event"
    summary = "CP-SAT event model equal to latency-ip (memory rows at the n completion times; ours)"

    def estimate_nonzeros(self) -> int:
        """At most one (z, e) pair and three enforced rows per ordered pair of requests."""
        n = self.inst.n
        return 4 * n * (n - 1)

    def build(self):
        inst = self.inst
        n = inst.n
        a = inst.arrival.astype(np.int64)
        s, o, M = inst.prompt.astype(np.int64), inst.output.astype(np.int64), int(inst.memory)
        p = s + o
        m, S = self.start_model()
        c_min, c_max = a + o, self.last + o
        pairs = 0
        for h in range(n):
            self.check_build_deadline(f"the rows of {h} of {n} completions built")
            load = []
            for j in range(n):
                # j active at C_h needs S_j <= C_h - 1 and C_j >= C_h; skip pairs whose horizons exclude it
                if j == h or a[j] >= c_max[h] or c_max[j] < c_min[h]:
                    continue
                starts_after = m.NewBoolVar(f"after{h}_{j}")      # S_j >= C_h
                ends_before = m.NewBoolVar(f"before{h}_{j}")      # C_j <= C_h - 1
                m.Add(S[j] >= S[h] + int(o[h])).OnlyEnforceIf(starts_after)
                m.Add(S[j] + int(o[j]) <= S[h] + int(o[h]) - 1).OnlyEnforceIf(ends_before)
                if p[h] + s[j] + 1 > M:                          # never co-active with h at its peak
                    m.AddBoolOr([starts_after, ends_before])
                    continue
                z = m.NewBoolVar(f"z{h}_{j}")
                m.AddBoolOr([z, starts_after, ends_before])
                e = m.NewIntVar(0, int(p[j]), f"e{h}_{j}")
                m.Add(e >= int(s[j] + o[h]) + S[h] - S[j]).OnlyEnforceIf(z)
                load.append(e)
                pairs += 1
            # (3) memory at every completion time C_h (Lemma 1: enough for every t)
            if load:
                m.Add(sum(load) <= M - int(p[h]))
        self.finish_model(m, S)   # symmetry breaking, floor (c), objective (1), as in latency-cp
        self.n_vars, self.n_rows = n + 2 * pairs, n + pairs
        return self
