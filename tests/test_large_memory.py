"""Slot bounds at large memory (found by an audit): float rounding and int64 products that were exact at the
papers' sizes overstated the bound beyond M ≈ 3·10⁷ (volume-bound) or overflowed (volume-chain-bound)."""
import time

import numpy as np
import pytest

from conftest import run
from lpbench.formulations.completion import ceil_below, least_span
from lpbench.formulations.latency_astar import astar_search
from lpbench.formulations.volume import VolumeBound
from lpbench.formulations.volume_chain import MergedChain, volume_chain_bound
from lpbench.instance import parse_instance


def optimum(data):
    found = astar_search(parse_instance(data), deadline=time.perf_counter() + 30)
    assert found.status == "optimal"
    return found.objective


def test_volume_bound_rounds_its_spans_down_at_large_memory():
    """Three peaks of almost M run one after another: OPT = 8 (shortest first); the old span 9."""
    data = {"memory": 357680938, "requests": {"arrival": [0, 0, 0], "prompt": [357680937, 357680937, 357680935],
                                              "output": [1, 1, 3]}}
    assert optimum(data) == 8
    assert VolumeBound(parse_instance(data)).value() <= 8


def test_least_span_rounded_is_never_above_the_exact_least_integer():
    """Against integers: the least X with m·φ̃(X/m) >= V, i.e. (2M + 1)·m·X − X² >= 2·m·V (h = M + ½), over
    memories up to 10¹² and volumes from tiny to the stretch capacity m·h²/2 (below 2^52). The rounding may
    give up 10⁻⁷ of X (its float error bound), never more, and never rounds above."""
    rng = np.random.default_rng(3)
    for _ in range(4000):
        M = int(10 ** rng.uniform(1, 12))
        m = int(rng.integers(1, 200))
        cap = m * (2 * M + 1) ** 2 // 8                       # m·h²/2, the most m stretches hold
        V = int(min(cap, 2 ** 52 - 1) * rng.choice([rng.uniform(0, 1e-9), rng.uniform(0, 1), 1 - rng.uniform(0, 1e-9)]))
        got = int(ceil_below(least_span(np.array([float(V)]), np.array([m]), M))[0])
        lo, hi = 0, m * (2 * M + 1) // 2 + 1                  # bisection on the exact condition
        while lo < hi:
            mid = (lo + hi) // 2
            if (2 * M + 1) * m * mid - mid * mid >= 2 * m * V:
                hi = mid
            else:
                lo = mid + 1
        assert lo - 1 - 2e-7 * lo <= got <= lo, (M, m, V, got, lo)       # never above; below by its error bound


def test_volume_chain_bound_at_memory_beyond_int64_products():
    """φ(δ) = M·δ − δ(δ−1)/2 overflowed int64 beyond M ≈ 3·10⁹: the bound read 1.6·10¹⁸ where OPT is 19."""
    data = {"memory": 3828553975, "requests": {"arrival": [0, 0, 0], "prompt": [3, 3828553970, 3828553970],
                                               "output": [4, 3, 3]}}
    bound, _ = volume_chain_bound(parse_instance(data), time.perf_counter() + 5)
    assert bound <= optimum(data) == 19


def test_volume_chain_multipliers_stay_in_the_exact_range():
    """With every request in U and a far target, the Polyak steps drove ν past int64 (negative) and λ past 2^53:
    the ascent returned 1945 where OPT is 7. The multipliers are now capped (every capped vector is valid)."""
    data = {"memory": 46879532, "requests": {"arrival": [1, 2, 2], "prompt": [23439765, 4, 3], "output": [1, 2, 4]}}
    inst = parse_instance(data)
    a, s, o = (np.asarray(x, dtype=np.int64) for x in (inst.arrival, inst.prompt, inst.output))
    value, _ = MergedChain(a, s, o, int(inst.memory), np.ones(3, dtype=bool)).ascent(time.perf_counter() + 3, 7.35)
    assert value <= optimum(data) == 7


def test_volumes_beyond_exact_float_sums_and_outputs_beyond_any_schedule_are_refused(capsys, tmp_path):
    """Exit 2 with the reason, not exit 3: the policies allocated 8 TiB for the rounds of a 10¹²-token output."""
    path = tmp_path / "huge.json"
    path.write_text('{"memory": 1099511627776, "requests": {"arrival": [0], "prompt": [1], "output": [1099511627000]}}')
    code, out, err = run(capsys, "solve", str(path), "--formulation", "volume-bound")
    assert code == 2 and err.strip().splitlines()[-1].startswith("lpbench: requests: the volume bounds need"), err
    code, out, err = run(capsys, "simulate", str(path), "--policy", "mc-sf")
    assert code == 2 and "requests[0].output: 1,099,511,627,000 tokens need as many batches" in err, err


def test_an_integral_bound_rounds_up_only_beyond_its_relative_float_error():
    from lpbench.solve import integral_bound

    assert integral_bound(7.5) == 8 and integral_bound(8.0000000001) == 8 and integral_bound(0.0) == 0
    assert integral_bound(1e6 + 0.001) == 1e6          # 10^-9 relative: a solver's float error, not a unit more
    assert integral_bound(1e6 + 2) == 1e6 + 2
