"""The solve pipeline: policies -> incumbent -> formulation -> backend -> verified schedule -> ratios.

0. A model too large to build even at the smallest horizon any incumbent could give it is refused at once
   (:func:`refuse_too_large_early`); otherwise its size is checked again before it is built (step 3): an exact
   model still too large there is not built (status ``refused``), and the best verified schedule and the certified
   bound are reported; a relaxation too large there is refused as at step 0 (exit 2).
1. Simulate every applicable policy; each schedule is verified (a failure is a bug and raises).
2. The best verified policy schedule is the incumbent: its objective tightens the model's horizon
   (where the formulation has a proven tightening) and it is passed as a MIP start / hint.
3. Build and solve; an exact formulation's solution is turned into a schedule and verified; its
   verified objective must equal the solver's objective, and the verified value is what is reported.
   For formulations whose objective is integral on every feasible point, the bound is rounded up.
   For the seed-004 exact models the reported bound is the larger of the solver's and the closed-form
   ``volume-bound`` (both valid for the same optimum); ``bound_source`` says which.
   The reported objective is the best verified schedule: the solver's, or -- when the solver found
   none or a worse one before its limit -- the best policy schedule (``objective_source`` names it),
   so a verified schedule is never hidden behind ``objective: null``.
4. Certified competitive ratios. UB = best verified objective (solver or policy), LB = the solver's
   proven bound (or a relaxation's optimum). Proven optimum: ratio = policy / OPT. Otherwise the
   interval [policy / UB, policy / LB]. LB > UB or a ratio below 1 is a bug and raises.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, replace

import numpy as np

from .errors import InputError, PolicyDiverged
from .formulations import FORMULATIONS
from .formulations.base import BuildTimeLimit, Formulation, max_nonzeros
from .instance import Instance, require_requests
from .interrupt import REQUESTED
from .policies import applicable, make_policy
from .sim import simulate
from .solvers import BACKENDS, get_profile
from .solvers.base import SolveResult
from .verify import verify

TOL = 1e-6
#: the solver always gets at least this many seconds, even when simulation and building used up --time-limit
MIN_SOLVE_SECONDS = 1.0


class SolveBugError(RuntimeError):
    """Solver, policy and verifier disagree: a bug to find, not a value to print."""


@dataclass
class PolicyRun:
    name: str
    objective: float
    metrics: dict
    schedule: object


def _gap(upper: float | None, bound: float | None) -> float | None:
    """(upper - bound) / |upper|: upper is the best verified schedule's objective, bound the certified one."""
    if upper is None or bound is None:
        return None
    return abs(upper - bound) / max(abs(upper), 1e-12)


def integral_bound(bound: float) -> float:
    """A bound on an objective that is an integer for every feasible schedule, as an integer: the integer it lies
    within a relative TOL of (a solver's bound carries a float error relative to its size; the absolute 1e-6
    used before turned a bound of 10^6 + 0.001 into 10^6 + 1), else its ceiling."""
    near = round(bound)
    return float(near if abs(bound - near) <= TOL * max(1.0, abs(bound)) else np.ceil(bound))


def run_policies(inst: Instance, names: list[str] | None, metric: str, seed: int = 0, log=None,
                 skipped: dict | None = None, keep_on_interrupt: bool = False, strict: bool = True) -> list[PolicyRun]:
    """Simulate and verify each policy; those that cannot serve the instance or do not finish are
    recorded in ``skipped`` (name -> reason) when running all applicable policies (or named ones with
    ``strict=False``, as a bench task does so that one diverging policy does not void its solve). With
    ``keep_on_interrupt``, Ctrl-C stops here, sets ``interrupt.REQUESTED`` and returns the runs so far."""
    runs = []
    for name in (applicable(inst) if names is None else names):
        if log:
            log(f"simulating policy {name}")
        try:
            res = simulate(inst, make_policy(name, inst, seed=seed))
        except KeyboardInterrupt:
            if not keep_on_interrupt:
                raise
            REQUESTED.set()
            if skipped is not None:
                skipped[name] = "interrupted (Ctrl-C)"
            break
        except (InputError, PolicyDiverged) as e:  # cannot serve this instance / does not finish
            if names is not None and strict:
                raise
            reason = e.problems[0] if isinstance(e, InputError) else str(e)
            if skipped is not None:
                skipped[name] = reason
            if log:
                log(f"  skipped: {reason}")
            continue
        ver = verify(inst, res.schedule)
        if not ver.feasible:
            raise SolveBugError(f"policy {name} produced an infeasible schedule: {ver.violations[0]}")
        runs.append(PolicyRun(name, float(ver.metrics[metric]), ver.metrics, res.schedule))
    return runs


#: share of the time limit given to a formulation's incumbent search (``search_incumbent``). The shares
#: of the steps after the policies are of the time the policies left: at 10,000 requests simulating
#: MC-SF and mc-sf-backfill took about 25 s, past a 60 s limit's 15 s, and the search got no time (since the
#: slot verifier's flat check, e527e35: 4.5 + 0.7 s and 7.2 + 0.6 s to simulate and verify, at load 0.8)
INCUMBENT_SHARE = 0.25


def _search_incumbent(inst, cls, metric, deadline, seed, log, best: PolicyRun) -> PolicyRun | None:
    """The formulation's offline incumbent heuristic (given the best verified policy run ``best`` to start
    from where it can), its schedule verified like any other."""
    if log:
        log("searching an incumbent (offline heuristic)")
    found = cls.search_incumbent(inst, deadline=deadline, seed=seed, incumbent=best.schedule)
    if found is None or isinstance(found, str):
        if log:
            log("  " + (found or "no schedule within the search's share of the time limit"))
        return None
    return _verified_search(inst, found, metric, log)


def _verified_search(inst, found, metric, log) -> PolicyRun:
    """A search's (name, schedule, info), verified like any schedule, as a PolicyRun."""
    name, schedule, info = found
    ver = verify(inst, schedule)
    if not ver.feasible:
        raise SolveBugError(f"incumbent search {name} produced an infeasible schedule: {ver.violations[0]}")
    if log:
        log(f"  {name}: {metric} {ver.metrics[metric]:g} ({info})")
    return PolicyRun(name, float(ver.metrics[metric]), {**ver.metrics, "search": info}, schedule)


#: share of the time limit for a formulation's certified-bound step (``certify_bound``), after the
#: incumbent search and before the exact solve
BOUND_SHARE = 0.1


def _kind(best, searched, certified, beside=None) -> str:
    """Where the best verified schedule came from, for ``objective_source``."""
    if best is searched or (beside is not None and best is beside):
        return "heuristic"
    return "search" if certified is not None and best is certified[3] else "policy"


class _ProvenByBound(Exception):
    """Raised inside the solve block when a certified bound already meets the incumbent."""


class _NoTimeLeft(Exception):
    """Raised inside the solve block when less than ``MIN_SOLVE_SECONDS`` (and a fifth of the limit) is left for
    an exact model and a verified schedule is held: building or solving it would only overrun the limit."""


class _TooLargeAfterSearch(Exception):
    """Raised inside the solve block when an exact model is too large to build at the best verified schedule's
    horizon (the check after the policies, the incumbent search and the certify step): status ``refused``, and the
    schedule and the certified bound they found are reported, not dropped for an exit 2."""


def _check_size_after_search(cls, form, best) -> None:
    try:
        form.check_size()
    except InputError as e:
        if cls.exact and best is not None:
            raise _TooLargeAfterSearch(str(e)) from None
        raise


def _check_time_left(cls, best, t_enter: float, limit: float, step: str) -> None:
    left = limit - (time.perf_counter() - t_enter)
    least = min(MIN_SOLVE_SECONDS, 0.2 * limit)   # a limit of 1 s still solves after policies of a few ms
    if cls.exact and best is not None and left < least:
        raise _NoTimeLeft(f"{max(left, 0.0):.2f}s of the {limit:g}s limit left {step} (less than "
                          f"{least:g}s): the exact model was not {'built or ' * (step == 'to build')}solved")


def _certify_bound(inst, cls, best, profile, deadline, metric, log):
    """(bound, source, message, run) from the formulation's certify step, or None when it does not apply.
    run: a verified PolicyRun, named by the method that found it, when the step also found a schedule
    better than ``best`` (optimal if the step proved its bound), else None."""
    if log:
        log("certifying a lower bound (relaxation or exact search)")
    found = cls.certify_bound(inst, best.objective, best.schedule, profile, deadline)
    if found is None:
        return None
    bound, source, message, better = found
    if log:
        log(f"  {source}: bound {bound:g} ({message})")
    run = None
    if better is not None:
        name, schedule = better
        ver = verify(inst, schedule)
        if not ver.feasible:
            raise SolveBugError(f"certify step {source} produced an infeasible schedule: {ver.violations[0]}")
        run = PolicyRun(name, float(ver.metrics[metric]), ver.metrics, schedule)
        if run.objective < bound - TOL:
            raise SolveBugError(f"certify step {source}: bound {bound} above its own schedule's {metric} {run.objective}")
    return bound, source, message, run


#: formulation used when none is named: the exact IP for the slot model, the closed-form certified
#: bound for the batch model (it computes at any size; infermax-csp is exact but only for small B)
DEFAULT_FORMULATION = {"slot": "latency-ip", "batch": "batch-bound"}
#: the default for an instance of seed 001's ``types`` block alone (no requests to schedule)
DEFAULT_FOR_TYPES_ONLY = "fluid"


def default_formulation(inst: Instance) -> str:
    return DEFAULT_FOR_TYPES_ONLY if inst.n == 0 else DEFAULT_FORMULATION[inst.model]


def applicable_formulations(inst: Instance) -> list[str]:
    return [name for name, cls in FORMULATIONS.items()
            if inst.model in cls.models and (inst.n > 0 or not cls.needs_requests)]


def several_engines(cls) -> bool:
    """Whether a formulation is valid for instances with limits.engines > 1."""
    return getattr(cls, "capacity", False) or getattr(cls, "engines", False)


def check_applicable(inst: Instance, formulation: str):
    cls = FORMULATIONS.get(formulation)
    if inst.model not in cls.models:
        raise InputError(f"--formulation: {formulation!r} is defined for model "
                         f"{' or '.join(map(repr, cls.models))}, but the instance uses model {inst.model!r}; "
                         f"formulations for {inst.model!r}: {', '.join(applicable_formulations(inst))}")
    if cls.needs_requests:
        require_requests(inst, f"formulation {formulation!r}", instead=", or choose a formulation of the types: "
                         + ", ".join(applicable_formulations(inst)))
    largest = getattr(cls, "max_requests", None)
    if largest is not None and inst.n > largest:  # refused before any policy runs
        raise InputError(f"--formulation: {formulation!r} takes instances of at most {largest} requests, "
                         f"{inst.name} has {inst.n}" + (f"; {cls.scalable_alternative}" if cls.scalable_alternative else ""))
    if inst.limits.K > 1 and not several_engines(cls):  # their algebra has one engine
        raise InputError(f"limits.engines: formulation {formulation!r} models one engine, but the instance has "
                         f"{inst.limits.K}; with several engines: "
                         + ", ".join(n for n, c in FORMULATIONS.items() if several_engines(c)))
    return cls


def refuse_too_large_early(inst: Instance, cls) -> None:
    """Refuse, before any policy runs, a model too large to build even at the smallest size an incumbent could
    give it (``check_size`` raises the usual size message). Valid: a model's size grows with the incumbent
    objective (horizon (b) of ``latency-ip``: k̄_i <= a_i + UB − Σo), and no verified schedule lies below the
    closed-form ``volume-bound`` (a lower bound on OPT), so the model sized after the incumbent search is at
    least as large as the one sized here at UB = ``volume-bound``. Where the model fits at the serial horizon
    (no incumbent) nothing more is computed. Not on instances the certify step's exact search takes (up to
    ``astar_max_requests``): it proves optima without building the model, whatever the model's size."""
    if cls.estimate_nonzeros is Formulation.estimate_nonzeros:
        return                              # sized by construction
    if inst.model != "slot" or cls.objective_metric != "total_latency":
        return                              # no closed-form floor under the incumbent: sized after the search
    if (cls.exact and getattr(cls, "certify_bound", None) is not None
            and inst.n <= getattr(cls, "astar_max_requests", 0)):
        return
    nnz = cls(inst).estimate_nonzeros()
    if nnz is None or nnz <= max_nonzeros():
        return
    from .formulations.volume import VolumeBound

    cls(inst, incumbent_objective=float(np.ceil(VolumeBound(inst).value() - 1e-6))).check_size()


def solve_instance(inst: Instance, formulation: str | None = None, solver: str | None = None,
                   time_limit: float | None = None, policies: list[str] | None = None, seed: int = 0,
                   log=None, strict: bool = True, solver_seed: int | None = None) -> dict:
    """Run the pipeline above. The profile's time limit bounds the whole call: the solver is given
    what policy simulation and model building left of it. An exact model with less than ``MIN_SOLVE_SECONDS``
    (and less than a fifth of the limit) left is neither built nor solved when a verified schedule is held (status ``time_limit``, that schedule
    reported); a relaxation is given at least ``MIN_SOLVE_SECONDS``. Every policy is simulated whatever the
    clock says: its ratio is the report's purpose, and which ratios a report holds must not depend on the
    machine's speed."""
    t_enter = time.perf_counter()
    if formulation is None:
        formulation = default_formulation(inst)
        if log:
            log(f"formulation {formulation} (the default for model {inst.model!r}"
                f"{' and an instance of prompt types alone' if inst.n == 0 else ''}; "
                f"also applicable: {', '.join(f for f in applicable_formulations(inst) if f != formulation)})")
    cls = check_applicable(inst, formulation)
    if solver is None:  # the formulation's native solver (latency-cp, infermax-csp: cpsat), else highs
        solver = getattr(cls, "native_backend", None) or "highs"
    profile = get_profile(solver, time_limit)
    if solver_seed is not None:  # the solver's own random seed (proof-time spread), not the policies'
        profile.seed = solver_seed
    backend = BACKENDS.get(profile.backend)()
    if getattr(cls, "native_backend", None) and profile.backend != cls.native_backend:
        raise InputError(f"--solver: formulation {formulation!r} is a {cls.native_backend} model; choose a "
                         f"{cls.native_backend} profile, got {profile.name!r} ({profile.backend})")
    metric = cls.objective_metric
    refuse_too_large_early(inst, cls)
    skipped: dict = {}
    capacity_form = cls(inst) if getattr(cls, "capacity", False) else None  # bad input: exit 2 before simulating
    REQUESTED.clear()
    runs = (run_policies(inst, policies, metric, seed, log, skipped, keep_on_interrupt=True, strict=strict)
            if getattr(cls, "runs_policies", True) else [])
    if capacity_form is not None:  # a throughput bound (requests/s), reported under "capacity"
        from .formulations.capacity import solve_capacity

        t0 = time.perf_counter()
        cap = solve_capacity(inst, capacity_form, profile, backend, runs)
        return {"instance": inst.name, "formulation": formulation, "exact": False, "objective_metric": "capacity",
                "solver": profile.name, "backend": profile.backend, "bound_source": profile.backend, "gap": None,
                "build_seconds": time.perf_counter() - t0 - cap.get("solve_seconds", 0.0), "verified": None,
                "warm_start": None, "best_known": None, "message": cap.get("message", ""), "ratios": {},
                "skipped_policies": skipped, "_schedule": None, "objective": None, "bound": None,
                "solve_seconds": 0.0, "variables": 0, "rows": 0,
                "_policy_metrics": {r.name: r.metrics for r in runs}, **cap}
    best = min(runs, key=lambda r: r.objective) if runs else None
    searched = form = model = warm = certified = beside = None
    build_seconds = 0.0
    t_steps = time.perf_counter()    # the shares below are of what the policies left of the limit
    steps_budget = max(profile.time_limit - (t_steps - t_enter), 0.0)
    try:
        if REQUESTED.is_set():  # Ctrl-C while the policies ran: keep what they found, do not solve
            raise KeyboardInterrupt
        if getattr(cls, "search_incumbent", None) is not None and best is not None:
            searched = _search_incumbent(inst, cls, metric, t_steps + INCUMBENT_SHARE * steps_budget, seed, log, best)
            if searched is not None and searched.objective < best.objective - TOL:
                best = searched

        if cls.exact and getattr(cls, "certify_bound", None) is not None and best is not None and not REQUESTED.is_set():
            share = (cls.certify_share(inst) if hasattr(cls, "certify_share") else None) or BOUND_SHARE
            if hasattr(cls, "search_beside"):   # on the other core, until the end of the exact solve
                beside = cls.search_beside(inst, t_enter + profile.time_limit, seed)
            certified = _certify_bound(inst, cls, best, profile, t_steps + (INCUMBENT_SHARE + share) * steps_budget,
                                       metric, log)
            if certified is not None and certified[3] is not None and certified[3].objective < best.objective - TOL:
                best = certified[3]   # the step found a better schedule (optimal if it proved its bound)
        if certified is not None and certified[0] >= best.objective - TOL:
            raise _ProvenByBound
        t0 = time.perf_counter()
        form = cls(inst, incumbent_objective=best.objective if best else None)
        if certified is not None:
            form.objective_floor = certified[0]
        _check_size_after_search(cls, form, best)      # first: too large is the answer whatever the time left
        _check_time_left(cls, best, t_enter, profile.time_limit, "to build")
        if log:
            log(f"building {formulation}")
        form.build_deadline = t_enter + profile.time_limit
        model = form.build()
        native = getattr(cls, "native_backend", None) or getattr(cls, "closed_form", False)
        warm = form.warm_start(best.schedule) if best is not None else None
        if warm is not None and not native:
            # one semantics: the best policy schedule must be a feasible point of the model, same objective
            viol, val = model.max_violation(warm), model.objective_value(warm)
            if viol > TOL or abs(val - best.objective) > TOL * max(1.0, abs(best.objective)):
                raise SolveBugError(f"{formulation} rejects the verified {best.name} schedule (violation {viol}, "
                                    f"objective {val} vs verified {best.objective})")
        build_seconds = time.perf_counter() - t0
        _check_time_left(cls, best, t_enter, profile.time_limit, "to solve")
        left = replace(profile, time_limit=max(profile.time_limit - (time.perf_counter() - t_enter), MIN_SOLVE_SECONDS))
        # the limit the solver gets: what the policies, the search and the certify step left of the whole one
        limit = f"time limit {left.time_limit:.1f}s of {profile.time_limit:g}s"
        if log and getattr(cls, "closed_form", False):
            log(f"running {getattr(cls, 'engine', 'the closed form')} ({limit})"
                + ("; incumbent " + best.name if warm is not None else ""))
        elif log:
            log(f"  {model.n_vars} variables, {model.n_rows} {'intervals' if native else 'rows'}, built in "
                f"{build_seconds:.2f}s" + ("; warm start from " + best.name if warm is not None else ""))
            log(f"solving with {profile.name} ({profile.backend}, {limit})")
        res = form.solve(left, warm) if native else model.reported(backend.solve(model, left, warm))
        if log:
            log(f"  {res.status} in {res.solve_seconds:.2f}s")
    except _ProvenByBound:  # a relaxation's certified bound meets the best verified schedule: nothing to solve
        res = SolveResult("optimal", best.objective, certified[0], 0.0,
                          message=f"proven by the {certified[1]} bound ({certified[2]}); the exact model was not solved")
        if log:
            log(f"  proven optimal: {certified[1]} bound {certified[0]:g} = verified {best.name}")
    except _TooLargeAfterSearch as e:  # keep the best verified schedule and the certified bound
        res = SolveResult("refused", message=str(e))
        if log:
            log(f"  {e}")
    except (_NoTimeLeft, BuildTimeLimit) as e:  # no time left, or a model too large to build in it: keep the best
        if isinstance(e, BuildTimeLimit):       # verified schedule
            build_seconds = time.perf_counter() - t0
        res = SolveResult("time_limit", message=str(e))
        if log:
            log(f"  {e}")
    except KeyboardInterrupt:  # before or while building; a running solver reports "interrupted" itself
        REQUESTED.set()
        res = SolveResult("interrupted", message="interrupted (Ctrl-C) before the solver started, "
                                                 "or in a backend without interrupt support")
        if log:
            log("  interrupted before the solver started")
    finally:                   # the search beside the certify step and the exact solve stops with them
        found = beside() if beside is not None else None
    searched_beside = None if found is None else _verified_search(inst, found, metric, log)
    if searched_beside is not None and searched_beside.objective < best.objective - TOL:
        best = searched_beside

    verified = None
    schedule = None
    objective = res.objective
    if cls.exact and res.x is not None:
        schedule = form.extract(res.x)
        ver = verify(inst, schedule)
        if not ver.feasible:
            raise SolveBugError(f"{formulation} solution fails verification: {ver.violations[0]}")
        tol = max(TOL, getattr(form, "objective_rtol", 0.0))  # > TOL only for a stated rounded scaling
        if abs(ver.metrics[metric] - res.objective) > tol * max(1.0, abs(res.objective)):
            raise SolveBugError(f"{formulation}: solver objective {res.objective} != verified {metric} "
                                f"{ver.metrics[metric]}")
        verified = True
        objective = float(ver.metrics[metric])  # report the verifier's number, not the solver's float
    elif cls.exact and certified is not None and res.status == "optimal" and res.x is None:
        verified = True  # proven by a bound: the objective is the best verified schedule (below)
    elif cls.exact:
        verified = False
    objective_source = "solver" if verified and res.x is not None else None
    if certified is not None and res.x is None and res.status == "optimal":
        objective, schedule = best.objective, best.schedule
        objective_source = f"{_kind(best, searched, certified, searched_beside)} {best.name}"
    if cls.exact and best is not None and res.status != "optimal" and (not verified or best.objective < objective):
        # the solver stopped without a schedule at least as good: report the best verified policy schedule
        objective, schedule, verified = best.objective, best.schedule, True
        objective_source = f"{_kind(best, searched, certified, searched_beside)} {best.name}"
        why = "the solver did not run" if model is None else "the solver found no better one"
        note = f"the objective is the verified {best.name} schedule ({why})"
        res = replace(res, message=f"{res.message}; {note}" if res.message else note)

    backend_name = (getattr(cls, "engine", "closed-form") if getattr(cls, "closed_form", False)
                    else profile.backend)  # engine: a search of lpbench's own (latency-astar: "astar")
    bound, bound_source = res.bound, ((getattr(form, "bound_source", None) or backend_name)
                                      if res.bound is not None else None)
    if certified is not None:
        bound_source = certified[1] if res.x is None and res.status == "optimal" else bound_source
        if bound is None or certified[0] >= bound:   # a tie: the solver was given it as its floor (c)
            bound, bound_source = certified[0], certified[1]
    if cls.exact and metric == "total_latency" and inst.model == "slot":
        # the closed-form volume bound is valid for the same optimum and costs milliseconds: a solver
        # stopped before its root LP can report a weaker (even negative) dual bound
        from .formulations.volume import VolumeBound

        vb = VolumeBound(inst).value()
        if bound is None or vb > bound:
            bound, bound_source = vb, "volume-bound"
    if cls.exact and inst.model == "batch" and metric in ("total_latency", "makespan"):
        from .formulations.batch_bound import BatchBound

        try:
            bb = BatchBound(inst).bounds()[metric]
        except InputError:  # a cost-model form the closed-form bound does not cover
            bb = None
        if bb is not None and (bound is None or bb > bound):
            bound, bound_source = bb, "batch-bound"
    if bound is not None and cls.integral_objective:
        bound = integral_bound(bound)
    if (cls.exact and res.status == "optimal" and objective is not None and bound is not None
            and bound < objective - TOL * max(1.0, abs(objective))):
        # the solver stopped at its relative gap tolerance (the profile's rel_gap), which it also calls optimal:
        # not a proof, so neither the status nor the ratios say proven
        note = (f"the solver stopped within its gap tolerance (rel_gap {profile.rel_gap:g}), not at a proof: "
                f"gap {(objective - bound) / max(abs(objective), 1e-12):.3g}")
        res = replace(res, status="feasible", message=f"{res.message}; {note}" if res.message else note)
    upper_candidates = [r.objective for r in runs] + ([best.objective] if best else []) + ([objective] if verified else [])
    ub = min(upper_candidates) if upper_candidates else None
    proven = cls.exact and res.status == "optimal" and verified
    if ub is not None and bound is not None and bound > ub + TOL * max(1.0, abs(ub)):
        raise SolveBugError(f"lower bound {bound} exceeds a verified schedule's {metric} {ub}")
    ratios = {}
    for r in runs:
        if proven:
            lo = hi = r.objective / objective
        else:
            lo = r.objective / ub
            hi = r.objective / bound if bound and bound > 0 else None
        if lo < 1 - TOL:
            raise SolveBugError(f"competitive ratio of {r.name} below 1 ({lo})")
        ratios[r.name] = {"objective": r.objective, "lower": lo, "upper": hi}
    return {
        "instance": inst.name,
        "formulation": formulation,
        "exact": cls.exact,
        "objective_metric": metric,
        "solver": None if getattr(cls, "closed_form", False) else profile.name,
        "backend": backend_name,
        "status": res.status,
        "objective": objective,
        "objective_source": objective_source,
        "bound": bound,
        "bound_source": bound_source,
        # (best verified - bound) / best verified, as the README defines it; a relaxation's value is not a
        # schedule's, so its gap is to the best verified policy schedule (None without one)
        "gap": _gap(objective if cls.exact else ub, bound),
        "build_seconds": build_seconds,
        "solve_seconds": res.solve_seconds,
        "verified": verified,
        "variables": model.n_vars if model is not None else None,
        "rows": model.n_rows if model is not None else None,
        "warm_start": best.name if warm is not None else None,
        "incumbent_search": None if searched is None else {"name": searched.name, "objective": searched.objective,
                                                           **searched.metrics.get("search", {})},
        "search_beside": None if searched_beside is None else {"name": searched_beside.name,
                                                               "objective": searched_beside.objective,
                                                               **searched_beside.metrics.get("search", {})},
        "best_known": ub,
        "message": res.message,
        "ratios": ratios,
        "skipped_policies": skipped,
        **(form.report(res) if hasattr(form, "report") else {}),
        "_schedule": schedule,
        "_policy_metrics": {r.name: r.metrics for r in runs},  # verified metrics of each policy (bench rows)
    }
