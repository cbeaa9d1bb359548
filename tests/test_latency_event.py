"""latency-event (issue 12): the event model's optimum equals brute force, and its schedules verify."""
import pytest

from lpbench.formulations.latency_event import LatencyEvent
from lpbench.solve import solve_instance
from lpbench.solvers.base import SolverProfile
from lpbench.verify import verify
from test_latency import brute_force
from test_latency_astar import jaillet_prefix, random_instances


def solve_event(inst, seconds=20):
    form = LatencyEvent(inst)
    form.build()
    return form, form.solve(SolverProfile("cpsat", "cpsat", time_limit=seconds, threads=2))


@pytest.mark.parametrize("seed,inst", list(random_instances()), ids=lambda v: str(v) if isinstance(v, int) else "")
def test_optimum_equals_brute_force(seed, inst):
    """Memory checked only at completions (Lemma 1) loses no constraint and adds none: the optimum
    is the brute-force one, and the schedule behind it passes the verifier with that latency."""
    opt = brute_force(inst)
    form, res = solve_event(inst)
    assert res.status == "optimal" and res.objective == opt == res.bound
    ver = verify(inst, form.extract(res.x))
    assert ver.feasible and ver.metrics["total_latency"] == opt


def test_pipeline_on_a_jaillet_prefix(monkeypatch):
    """Draw 0's first 8 requests: 701 (the value latency-cp, latency-astar and HiGHS prove), with the
    certify step off so that the event model itself proves it."""
    from lpbench.formulations.latency_ip import LatencyIP

    monkeypatch.setattr(LatencyIP, "certify_bound", classmethod(lambda cls, *args: None))
    rep = solve_instance(jaillet_prefix(0, 8), "latency-event", "cpsat", 60, ["mc-sf"])
    assert rep["status"] == "optimal" and rep["objective"] == 701 and rep["verified"]
    assert rep["objective_source"] == "solver"
