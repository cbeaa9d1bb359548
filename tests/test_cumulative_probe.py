"""benchmarks/cumulative_rows_probe.py: eq. (3) in cumulative variables is the same LP as ``latency-lp``, and the
same IP once x is integral (its figures in docs/seed004-certification.md rest on that)."""
import sys
from pathlib import Path

from dataclasses import replace

import numpy as np

from lpbench.formulations.latency_ip import LatencyLP
from lpbench.generators import jaillet
from lpbench.instance import parse_instance
from lpbench.solvers.base import SolverProfile
from lpbench.solvers.highs import HighsBackend

from test_latency import brute_force
from test_latency_astar import random_instances

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from cumulative_rows_probe import cumulative_model, entries  # noqa: E402


def solve(lp):
    res = HighsBackend().solve(lp, SolverProfile("highs", "highs", time_limit=30))
    assert res.status == "optimal"
    return res.objective


def test_cumulative_rows_give_the_lp_value_and_with_integral_starts_the_optimum():
    for seed, inst in random_instances(50):
        form = LatencyLP(inst)
        plain = form.build()
        lp = cumulative_model(form)
        assert abs(solve(lp) - solve(plain)) < 1e-6, seed
        ip = replace(lp, integer=[np.ones_like(lp.integer[0])] + lp.integer[1:])   # x integral, Y and W follow
        assert abs(solve(ip) - brute_force(inst)) < 1e-6, seed


def test_cumulative_rows_have_fewer_entries_where_outputs_are_long():
    """jaillet-model2 draw 5's first 20 requests (outputs 3-40): fewer entries, the same LP value."""
    inst = parse_instance(jaillet.instance("jaillet-model2", 0, 5, first=20))
    form = LatencyLP(inst, incumbent_objective=999)
    plain, lp = form.build(), cumulative_model(form)
    assert 1.5 * entries(lp) < entries(plain)
    assert abs(solve(lp) - solve(plain)) < 1e-6
