"""The InferMax CSP (seed 003 §5) as a MILP for HiGHS and Gurobi: the exact linearisation of notes
seed-003 §3.9.7 for the makespan objective.

Same variables, constraints (1)-(4), horizon J, symmetry breaking and valid inequalities (V1)-(V3)
as :mod:`lpbench.formulations.infermax_csp` (whose docstring states them and proves their
validity); here every logical constraint is a pair of big-M rows with the per-request constant
U_i = I_i + O_i (notes §3.9.1-2), never the KV capacity M. With R_{i,j} = S_{i,j-1} − m_{i,j-1} and
d_{i,j} = done_{i,j-1}:

    (3) token generation     c >= R − U(1 − g),   c <= R − 1 + U g
    (2) tokens to process    c <= R,              c <= (U − 1)(1 − e − d)
    (1) memory management    m_{i,j} <= m_{i,j-1} + c,  m_{i,j} >= m_{i,j-1} + c − U(e + d),  m_{i,j} <= (U − 1)(1 − e − d)
    run length               L_{i,j} = S_{i,j-1} if e else L_{i,j-1}   (four rows, big-M U)
    phase                    m_{i,j-1} >= L_{i,j-1} − U(1 − δ),  m_{i,j-1} <= L_{i,j-1} − 1 + U δ
    completed before j       S_{i,j-1} − I_i >= O_i d,  S_{i,j-1} <= U − 1 + d
    steps                    dstep = δ ∧ z (three rows), pstep = z − dstep, z = [c >= 1]

**Objective** (makespan, offline: every request arrives at the same time a_0). Because the makespan
is a plain sum of batch times, a_0 + Σ_j T_j, the quadratic prefill feature telescopes (notes
§3.9.7): over the prefill steps of one run, Σ (c² + 2cm) = Σ ((m + c)² − m²) = X², where X is the
run's extent when it ends -- at a *prefill end* (g ∧ pstep, i.e. g − dstep, as a decode step always
generates), X = S_{i,j-1}; at an *eviction in prefill* (evp = e ∧ ¬δ), X = m_{i,j-1}. Every run ends in
one of the two (every request completes). So

    Σ_j T_j = layers · [ a_o Σ c + b_o Σ y + a_d Σ kvd + b_d Σ y^d + s_d Σ dstep
                         + a_p Σ (w^pe + w^ev) + b_p Σ y^p + s_p Σ pstep + m_p Σ mpp ]

with the products written exactly (binary × bounded integer; every one has a positive objective
coefficient, so lower McCormick rows suffice, and the minimum over the auxiliaries equals the
product at every integer point):

    kvd >= m_{i,j-1} + 1 − U(1 − dstep),  kvd >= (I + 1) dstep      decode reads m + 1 keys
    mpp >= m_{i,j-1} − (U − 1)(1 − pstep)                            prefill m_p term
    X^pe >= S_{i,j-1} − U(1 − pend),  X^pe >= I pend                  pend = g − dstep
    w^pe >= 2k X^pe − k² pend      for every integer k in [I_i, U_i − 1]
    X^ev >= m_{i,j-1} − (U − 1)(1 − evp),  X^ev >= evp,  evp >= e − δ
    w^ev >= 2k X^ev − k² evp       for every integer k in [1, U_i − 2]
    y^d >= dstep,  y^p >= pstep    (phase biases)

The tangent rows are the perspective of X² (zero when the event is off) and are exact at every
integer X in their range: max_k (2kX − k²) = X² at k = X. Hence the MILP objective of any feasible
point equals the cost model's makespan of its schedule, which the tests check by fixing every policy
schedule into the model.

Limits, refused with a clear error: the GQA factor (1 + φ[n > 1]) multiplies per-batch attention
terms and breaks the telescoping (φ must be 0, as for Llama-2-7B); with different arrival times the
makespan includes idle time that depends on individual batch times (use ``infermax-csp``).

Size: the tangent rows number about n·J·(I + O) -- 2,623 rows for §5.1 at I = 1, 8,341 at I = 64 --
so the MILP is for small instances; on the §5.1 family CP-SAT on ``infermax-csp`` is much stronger
(README, "Seed 003 §5.1").
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..semantics import BATCH, RequestStates
from .base import FORMULATIONS, INF, LinearModel
from .infermax_csp import InferMaxBatchModel, generation_capacities, interchangeable_successors, schedule_from_batches


class _Rows:
    """Vectorised rows: ``add(name, terms, lo, hi)`` with terms [(coef, var_idx), ...] broadcast to one
    shape; one row per element."""

    def __init__(self, model: LinearModel):
        self.model = model

    def add(self, name, terms, lo=-INF, hi=INF):
        shape = np.broadcast_shapes(*(np.shape(a) for term in terms for a in term))
        k = int(np.prod(shape))
        rows, cols, vals = [], [], []
        local = np.arange(k)
        for coef, idx in terms:
            rows.append(local)
            cols.append(np.broadcast_to(idx, shape).ravel())
            vals.append(np.broadcast_to(np.asarray(coef, dtype=np.float64), shape).ravel())
        lo = np.broadcast_to(np.asarray(lo, dtype=np.float64), shape).ravel()
        hi = np.broadcast_to(np.asarray(hi, dtype=np.float64), shape).ravel()
        self.model.add_rows(name, k, np.concatenate(rows), np.concatenate(cols), np.concatenate(vals), lo, hi)

    def sums(self, name, terms, axis, extra=(), lo=-INF, hi=INF):
        """One row per index of the other axis of (n, J) arrays: Σ over ``axis`` of the terms, plus
        ``extra`` [(coef, idx)] with one variable per row (axis=1: per request; axis=0: per batch)."""
        rows, cols, vals = [], [], []
        for coef, idx in terms:
            r = np.indices(idx.shape)[1 - axis]
            rows.append(r.ravel())
            cols.append(idx.ravel())
            vals.append(np.broadcast_to(np.asarray(coef, dtype=np.float64), idx.shape).ravel())
        k = terms[0][1].shape[1 - axis]
        for coef, idx in extra:
            rows.append(np.arange(k))
            cols.append(np.asarray(idx))
            vals.append(np.broadcast_to(np.asarray(coef, dtype=np.float64), (k,)))
        lo = np.broadcast_to(np.asarray(lo, dtype=np.float64), (k,))
        hi = np.broadcast_to(np.asarray(hi, dtype=np.float64), (k,))
        self.model.add_rows(name, k, np.concatenate(rows), np.concatenate(cols), np.concatenate(vals), lo, hi)


@FORMULATIONS.register("infermax-milp")
class InferMaxMILP(InferMaxBatchModel):
    name = "infermax-milp"
    summary = "seed 003 §5 CSP as an exact MILP (telescoped prefill attention), HiGHS/Gurobi; φ = 0, offline"

    def __init__(self, inst, incumbent_objective=None, batches: int | None = None, cuts: bool = True):
        super().__init__(inst, incumbent_objective, batches, cuts)
        if inst.cost_model.phi != 0:
            raise InputError(f"--formulation: infermax-milp needs the GQA factor phi = 0 (it breaks the "
                             f"telescoped prefill cost); the cost model has phi = {inst.cost_model.phi}; "
                             "use infermax-csp")
        if np.any(inst.arrival != inst.arrival[0]):
            raise InputError("--formulation: infermax-milp is the offline model (every request arriving at the "
                             "same time); this instance has different arrival times; use infermax-csp")

    def build(self) -> LinearModel:
        inst, cm = self.inst, self.inst.cost_model
        n = inst.n
        J = self.J = self.horizon()
        I = inst.prompt.astype(np.int64)[:, None]          # (n, 1): broadcasts against (n, J)
        O = inst.output.astype(np.int64)[:, None]
        U = I + O
        lim = inst.limits
        # objective in ms (unit 1e-3 s): in seconds the a_p coefficient (~5e-9 per unit) would sit below
        # the solvers' dual feasibility tolerance and its auxiliaries could float to their upper bounds
        lm = LinearModel(f"{self.name}:{inst.name}", offset=float(inst.arrival[0]) * 1e3, unit=1e-3)
        to_ms = float(cm.layers)          # per-layer ms -> ms
        nJ = (n, J)

        def state(name, lo, hi, first):
            """(n, J+1) state after batch j = 0..J; column 0 is the initial state, fixed."""
            lo = np.broadcast_to(lo, (n, J + 1)).astype(float).copy()
            hi = np.broadcast_to(hi, (n, J + 1)).astype(float).copy()
            lo[:, 0] = hi[:, 0] = np.broadcast_to(first, (n, 1))[:, 0]
            return lm.add_vars(name, n * (J + 1), lo.ravel(), hi.ravel(), integer=True,
                               names=[f"{name}_{i}_{j}" for i in range(n) for j in range(J + 1)]).reshape(n, J + 1)

        def per_batch(name, hi=1.0, integer=True, cost=0.0, lo=0.0):
            return lm.add_vars(name, n * J, lo, np.broadcast_to(hi, nJ).ravel(), integer=integer,
                               cost=np.broadcast_to(cost, nJ).ravel(),
                               names=[f"{name}_{i}_{j}" for i in range(n) for j in range(1, J + 1)]).reshape(nJ)

        S = state("S", I, U, I)
        m = state("m", 0, U - 1, 0)
        L = state("L", I, U, I)
        c = per_batch("c", U - 1, cost=cm.a_o * to_ms)
        g, e, d, delta = (per_batch(v) for v in ("g", "e", "done", "delta"))
        # s_p Σ pstep + s_d Σ dstep with pstep = z − dstep
        z = per_batch("z", cost=cm.s_p * to_ms)
        dstep = per_batch("dstep", cost=(cm.s_d - cm.s_p) * to_ms)
        evp = per_batch("evp")
        kvd = per_batch("kvd", U, integer=False, cost=cm.a_d * to_ms)
        mpp = per_batch("mpp", U - 1, integer=False, cost=cm.m_p * to_ms)
        Xpe = per_batch("Xpe", U - 1, integer=False)
        wpe = per_batch("wpe", (U - 1) ** 2, integer=False, cost=cm.a_p * to_ms)
        Xev = per_batch("Xev", U - 2, integer=False)
        wev = per_batch("wev", (U - 2) ** 2, integer=False, cost=cm.a_p * to_ms)
        y, yd, yp = (lm.add_vars(v, J, 0, 1, integer=True, cost=b * to_ms, names=[f"{v}_{j}" for j in range(1, J + 1)])
                     for v, b in (("y", cm.b_o), ("yd", cm.b_d), ("yp", cm.b_p)))
        Sp, Sc, mp, mc, Lp, Lc = S[:, :-1], S[:, 1:], m[:, :-1], m[:, 1:], L[:, :-1], L[:, 1:]
        R = [(1, Sp), (-1, mp)]
        rows = _Rows(lm)

        # termination and non-decreasing length
        rows.sums("termination: Σ_j g = O", [(1, g)], axis=1, lo=inst.output, hi=inst.output)
        rows.add("length: S = S_prev + g", [(1, Sc), (-1, Sp), (-1, g)], lo=0, hi=0)
        # completed before batch j: d = [S_{j-1} = U]
        rows.add("done => S_prev = U", [(1, Sp), (-O, d)], lo=I)
        rows.add("not done => S_prev <= U - 1", [(1, Sp), (-1, d)], hi=U - 1)
        rows.add("no eviction after completion", [(1, e), (1, d)], hi=1)
        rows.add("evict only a request holding KV", [(1, mp), (-1, e)], lo=0)
        rows.add("evict only in a non-empty batch", [(1, e), (-1, y[None, :])], hi=0)
        if inst.restarts:  # restart: the eviction-free optimum (lpbench.formulations.infermax_csp, docstring)
            rows.add("restart: no eviction", [(1, e)], hi=0)
        # (1) memory management
        rows.add("(1) m <= m_prev + c", [(1, mc), (-1, mp), (-1, c)], hi=0)
        rows.add("(1) m >= m_prev + c unless idle", [(1, mc), (-1, mp), (-1, c), (U, e), (U, d)], lo=0)
        rows.add("(1) m = 0 when idle", [(1, mc), (U - 1, e), (U - 1, d)], hi=U - 1)
        # (2) tokens to process
        rows.add("(2) c <= R", [(1, c)] + [(-a, v) for a, v in R], hi=0)
        rows.add("(2) c = 0 when idle", [(1, c), (U - 1, e), (U - 1, d)], hi=U - 1)
        # (3) token generation, biconditional
        rows.add("(3) g => c >= R", [(1, c)] + [(-a, v) for a, v in R] + [(-U, g)], lo=-U)
        rows.add("(3) not g => c <= R - 1", [(1, c)] + [(-a, v) for a, v in R] + [(-U, g)], hi=-1)
        # run length: L = S_prev at an eviction, else L_prev
        rows.add("L <= L_prev unless evicted", [(1, Lc), (-1, Lp), (-U, e)], hi=0)
        rows.add("L >= L_prev unless evicted", [(1, Lc), (-1, Lp), (U, e)], lo=0)
        rows.add("L <= S_prev if evicted", [(1, Lc), (-1, Sp), (U, e)], hi=U)
        rows.add("L >= S_prev if evicted", [(1, Lc), (-1, Sp), (-U, e)], lo=-U)
        # z = [c >= 1]; phase δ = [m_prev >= L_prev]; dstep = δ ∧ z
        rows.add("z => c >= 1", [(1, c), (-1, z)], lo=0)
        rows.add("c >= 1 => z", [(1, c), (-(U - 1), z)], hi=0)
        rows.add("delta => m_prev >= L_prev", [(1, mp), (-1, Lp), (-U, delta)], lo=-U)
        rows.add("not delta => m_prev <= L_prev - 1", [(1, mp), (-1, Lp), (-U, delta)], hi=-1)
        rows.add("dstep <= delta", [(1, dstep), (-1, delta)], hi=0)
        rows.add("dstep <= z", [(1, dstep), (-1, z)], hi=0)
        rows.add("dstep >= delta + z - 1", [(1, dstep), (-1, delta), (-1, z)], lo=-1)
        # (4) batch constraints (post-batch KV; prefill budget on prefill-step tokens)
        if lim.token_budget is not None:
            rows.sums("(4) Σ_i c <= C", [(1, c)], axis=0, hi=lim.token_budget)
        rows.sums("(4) Σ_i m <= M", [(1, mc)], axis=0, hi=inst.memory)
        if lim.prefill_budget is not None:
            cp = per_batch("cp", U - 1, integer=False)
            rows.add("cp >= c on a prefill step", [(1, cp), (-1, c), (-(U - 1), z), (U - 1, dstep)], lo=-(U - 1))
            rows.sums("(4) Σ_i c over prefill steps <= P", [(1, cp)], axis=0, hi=lim.prefill_budget)
        if lim.max_batch_requests is not None:
            rows.sums("(4) Σ_i z <= max_batch_requests", [(1, z)], axis=0, hi=lim.max_batch_requests)
        # batches: y_j = any z; non-empty batches first; phase biases
        rows.add("z <= y", [(1, z), (-1, y[None, :])], hi=0)
        rows.sums("y <= Σ_i z", [(-1, z)], axis=0, extra=[(1, y)], hi=0)
        rows.add("non-empty batches first", [(1, y[1:]), (-1, y[:-1])], hi=0)
        rows.add("yd >= dstep", [(1, yd[None, :]), (-1, dstep)], lo=0)
        rows.add("yp >= pstep", [(1, yp[None, :]), (-1, z), (1, dstep)], lo=0)
        # objective products (exact at integer points)
        rows.add("kvd >= (m_prev + 1) dstep", [(1, kvd), (-1, mp), (-U, dstep)], lo=1 - U)
        rows.add("kvd >= (I + 1) dstep", [(1, kvd), (-(I + 1), dstep)], lo=0)
        rows.add("mpp >= m_prev pstep", [(1, mpp), (-1, mp), (-(U - 1), z), (U - 1, dstep)], lo=-(U - 1))
        rows.add("Xpe >= S_prev pend", [(1, Xpe), (-1, Sp), (-U, g), (U, dstep)], lo=-U)
        rows.add("Xpe >= I pend", [(1, Xpe), (-I, g), (I, dstep)], lo=0)
        rows.add("evp >= e - delta", [(1, evp), (-1, e), (1, delta)], lo=-1)
        rows.add("Xev >= m_prev evp", [(1, Xev), (-1, mp), (-(U - 1), evp)], lo=-(U - 1))
        rows.add("Xev >= evp", [(1, Xev), (-1, evp)], lo=0)
        for i in range(n):
            Ii, Ui = int(I[i, 0]), int(U[i, 0])
            k = np.arange(Ii, Ui)[:, None]              # tangent points of X^2 at prefill ends
            rows.add(f"w^pe >= 2kX - k^2 pend (request {i})",
                     [(1, wpe[i][None, :]), (-2 * k, Xpe[i][None, :]), (k * k, g[i][None, :]), (-k * k, dstep[i][None, :])],
                     lo=0)
            k = np.arange(1, Ui - 1)[:, None]           # ... and at evictions in prefill
            if len(k):
                rows.add(f"w^ev >= 2kX - k^2 evp (request {i})",
                         [(1, wev[i][None, :]), (-2 * k, Xev[i][None, :]), (k * k, evp[i][None, :])], lo=0)
        # redundant cuts (module docstring of infermax_csp)
        rows.sums("Σ_j z >= O", [(1, z)], axis=1, lo=inst.output)
        rows.add("m_prev >= I delta", [(1, mp), (-I, delta)], lo=0)
        rows.add("m >= (I + 1) dstep", [(1, mc), (-(I + 1), dstep)], lo=0)
        # symmetry: among identical requests the one listed first completes no later
        for i, i2 in interchangeable_successors(inst):
            rows.add(f"symmetry {i}", [(1, d[i2]), (-1, d[i])], hi=0)
        if self.cuts:
            self._add_cuts(rows, I, O, c, g, dstep, wpe, y, yd, yp)
        self.vars = dict(S=S, m=m, L=L, c=c, g=g, e=e, z=z, d=d, delta=delta, dstep=dstep, evp=evp, kvd=kvd,
                         mpp=mpp, Xpe=Xpe, wpe=wpe, Xev=Xev, wev=wev, y=y, yd=yd, yp=yp)
        if lim.prefill_budget is not None:
            self.vars["cp"] = cp
        self.model = lm
        return lm

    def _add_cuts(self, rows, I, O, c, g, dstep, wpe, y, yd, yp):
        """(V1)-(V3) of :mod:`lpbench.formulations.infermax_csp`; (V2) in telescoped form."""
        Kg, Kgd, Kd = generation_capacities(self.inst.prompt, self.inst.memory)
        I, O = I[:, 0], O[:, 0]
        rows.sums("(V1) Σ_j c >= I (O − Σ_j dstep) + O − 1", [(1, c), (I[:, None], dstep)], axis=1, lo=I * O + O - 1)
        # the first prefill end has extent X = I, so Σ_j w^pe >= I²; every request has a prefill end
        rows.sums("(V2) Σ_j w^pe >= I^2", [(1, wpe)], axis=1, lo=I * I)
        rows.sums("(V2) Σ_j pend >= 1", [(1, g), (-1, dstep)], axis=1, lo=1)
        rows.sums("(V3) Σ_i g <= Kg y − (Kg − Kgd) yd", [(1, g)], axis=0, extra=[(-Kg, y), (Kg - Kgd, yd)], hi=0)
        rows.sums("(V3) Σ_i dstep <= Kd yd", [(1, dstep)], axis=0, extra=[(-Kd, yd)], hi=0)
        rows.sums("(V3) Σ_i pend <= Kg yp", [(1, g), (-1, dstep)], axis=0, extra=[(-Kg, yp)], hi=0)

    # -- schedules <-> solutions ----------------------------------------------------------------------
    def warm_start(self, schedule) -> np.ndarray | None:
        """The model point of a schedule (None if it has more than J batches, or evicts on a restart instance,
        where the model has no evictions): states replayed with :class:`~lpbench.semantics.RequestStates`,
        products and telescoped features evaluated."""
        if schedule.n_batches > self.J or (self.inst.restarts and len(schedule.evict)):
            return None
        inst, n, J, v = self.inst, self.inst.n, self.J, self.vars
        x = np.zeros(self.model.n_vars)
        st = RequestStates(inst.prompt, inst.output, BATCH)
        x[v["S"][:, 0]], x[v["L"][:, 0]] = inst.prompt, inst.prompt
        U = inst.prompt + inst.output
        mp = np.zeros(n, dtype=np.int64)                  # the model's m_{i,j-1} (see below)
        for j in range(J):
            Sp, Lp = st.S.copy(), st.L.copy()
            done = Sp == U
            delta = mp >= Lp
            c = np.zeros(n, dtype=np.int64)
            ev = np.zeros(n, dtype=bool)
            if j < schedule.n_batches:
                req, tok, evi = schedule.batch(j)
                c[req] = tok
                ev[evi] = True
                if len(evi):
                    st.evict(evi)
                _, fin = st.process(req, tok)
                st.release(req[fin])
            z = c > 0
            gen = st.S > Sp
            dstep = delta & z
            pstep = z & ~delta
            pend = gen & ~dstep
            evp = ev & ~delta
            vals = dict(c=c, g=gen, e=ev, z=z, d=done, delta=delta, dstep=dstep, evp=evp,
                        kvd=(mp + 1) * dstep, mpp=mp * pstep, Xpe=Sp * pend, wpe=(Sp * pend) ** 2,
                        Xev=mp * evp, wev=(mp * evp) ** 2)
            for name, val in vals.items():
                x[v[name][:, j]] = val
            if "cp" in v:
                x[v["cp"][:, j]] = c * pstep
            x[v["y"][j]], x[v["yd"][j]], x[v["yp"][j]] = z.any(), dstep.any(), pstep.any()
            # post-batch states; in the model a request that completed in batch j still holds its
            # KV after it (counted in (4)) and releases it in batch j + 1
            mp = st.m.copy()
            mp[st.done & ~done] = Sp[st.done & ~done]
            x[v["S"][:, j + 1]], x[v["m"][:, j + 1]], x[v["L"][:, j + 1]] = st.S, mp, st.L
        return x

    def extract(self, x: np.ndarray):
        v = self.vars
        c = np.rint(x[v["c"]]).astype(np.int64)
        e = np.rint(x[v["e"]]).astype(bool)
        batches = []
        for j in range(self.J):
            req = np.flatnonzero(c[:, j] > 0)
            if len(req):
                batches.append((req, c[req, j], np.flatnonzero(e[:, j])))
        return schedule_from_batches(self.inst, batches)
