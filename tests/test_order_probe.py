"""The order-relaxation probe of benchmarks/order_relaxation_probe.py (issue 12): its rows, with the co-activity
rows of Lemma 2″, hold on verified schedules, and its least value over all completion orders is below the
brute-force optimum (the probe's numbers are estimates of a relaxation whose minimum over orders is <= OPT).
The branch-and-bound over orders of benchmarks/order_branch_and_bound.py: its node rows hold on verified schedules,
and run to the end it finds the least leaf value of an enumeration of every order."""
import itertools
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from lpbench.formulations.latency_ip import schedule_from_starts
from lpbench.heuristics.slot_sgs import eq3_ramps, serial_sgs
from lpbench.verify import verify

from test_certify import draw
from test_latency import brute_force
from test_latency_astar import random_instances

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from order_branch_and_bound import NodeLP, branch_and_bound, depth_limited, rounded_up  # noqa: E402
from order_relaxation_probe import OrderLP  # noqa: E402


def coactivity_excess(inst, C) -> float:
    """max over h of p_h + Σ_{j ≠ h, C_j >= C_h} max(0, p_j·(1 − (C_j − C_h)/o_j)) − M (Lemma 2″: <= 0)."""
    p, o = inst.prompt + inst.output, inst.output
    x = C[None, :] - C[:, None]                                       # [h, j] = C_j − C_h
    g = np.where(x >= 0, np.maximum(0.0, p[None, :] * (1 - x / o[None, :])), 0.0)
    np.fill_diagonal(g, 0.0)
    return float((p + g.sum(axis=1)).max() - inst.memory)


def verified_random_schedules(inst, rng, count: int):
    """``count`` serial-SGS schedules of random orders, each verified: (completion times, completion order with
    ties by index, total latency)."""
    for _ in range(count):
        start = serial_sgs(inst.arrival.astype(np.int64), eq3_ramps(inst.prompt, inst.output), int(inst.memory),
                           rng.permutation(inst.n))
        ver = verify(inst, schedule_from_starts(inst, start))
        assert ver.feasible
        C = start + inst.output
        yield C, np.lexsort((np.arange(inst.n), C)), ver.metrics["total_latency"]


def test_coactivity_rows_hold_on_verified_schedules():
    """Serial-SGS schedules of random orders, each verified: every row of Lemma 2″ holds (and binds on some),
    and LP_e with all rows at the schedule's completion order is at most its total latency."""
    rng = np.random.default_rng(0)
    cases = [inst for _, inst in random_instances(30)]
    cases += [draw(m, k, 20) for m in ("jaillet-model1", "jaillet-model2") for k in range(2)]
    binding = 0
    for inst in cases:
        lp = OrderLP(inst)
        for C, order, latency in verified_random_schedules(inst, rng, 4):
            excess = coactivity_excess(inst, C)
            assert excess <= 1e-9
            binding += excess > -1e-9
            assert lp.value(order, coact=True) <= latency + 1e-6
    assert binding > 0


@pytest.mark.parametrize("part", range(2))
def test_least_value_over_all_orders_is_below_brute_force(part):
    """50 random small instances (3-5 requests, with arrivals): min over every completion order of LP_e with the
    chain, volume and co-activity rows <= OPT, and >= the same minimum without the co-activity rows."""
    for seed, inst in list(random_instances(50))[part::2]:
        lp = OrderLP(inst)
        orders = [np.array(e) for e in itertools.permutations(range(inst.n))]
        with_rows = min(lp.value(e, coact=True) for e in orders)
        assert with_rows <= brute_force(inst) + 1e-6, seed
        assert with_rows >= min(lp.value(e) for e in orders) - 1e-6, seed


def test_branch_and_bound_node_rows_hold_on_verified_schedules():
    """At every node along a verified schedule's completion order (σ its last k completers, P the rest, for every
    k), the node's LP is at most the schedule's total latency; with and without P's order statistics."""
    rng = np.random.default_rng(1)
    cases = [inst for _, inst in random_instances(30)] + [draw("jaillet-model2", 0, 8)]
    for inst in cases:
        lps = NodeLP(inst), NodeLP(inst, order_statistics=False)
        for _, order, latency in verified_random_schedules(inst, rng, 3):
            order = order.tolist()
            for k in range(inst.n + 1):
                sigma, P = tuple(order[inst.n - k:]), order[:inst.n - k]
                for lp in lps:
                    assert lp.value(sigma, P) <= latency + 1e-6, (k, sigma)


def test_branch_and_bound_run_to_the_end_is_the_least_leaf_over_every_order():
    """On 25 random small instances: without a UB the search converges to the least leaf value over an enumeration
    of every order, which is <= the brute-force optimum; with UB = OPT its bound is OPT or that least leaf; the
    depth-1 minimum is below both."""
    for seed, inst in list(random_instances(50))[::2]:
        opt = brute_force(inst)
        lp = NodeLP(inst)
        leaves = min(rounded_up(lp.value(tuple(e), [])) for e in itertools.permutations(range(inst.n)))
        free = branch_and_bound(inst, seconds=30)
        assert free["converged"] and free["bound"] == leaves <= opt, (seed, free["bound"], leaves, opt)
        pruned = branch_and_bound(inst, ub=opt, seconds=30)
        assert pruned["converged"] and pruned["bound"] == min(leaves, opt), seed
        assert depth_limited(inst, math.inf, 1)[0] <= leaves, seed
