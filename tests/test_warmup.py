"""Compiled kernels under a time limit (issue 12, "every backend returns within 10 % of its time limit"): a search
whose kernels are not compiled, and whose compilation would not fit, is not started (it would overrun by up to a
minute after an install); `lpbench warmup` compiles them."""
import time
from pathlib import Path

from lpbench.cli import main
from lpbench.formulations import latency_astar
from lpbench.formulations.compiled import cached, fits
from lpbench.formulations.latency_ip import LatencyIP
from lpbench.heuristics import slot_sgs
from lpbench.instance import load_instance
from lpbench.solve import solve_instance

SLOT12 = Path(__file__).resolve().parents[1] / "instances" / "slot-12.json"


class _Index:
    def __init__(self, entries):
        self.entries = entries

    def _load_index(self):
        return self.entries


class _Dispatcher:
    """numba's dispatcher as `cached` reads it: compiled signatures, and the disk cache's index."""

    def __init__(self, signatures, entries=None):
        self.signatures = signatures
        if entries is not None:
            self._cache = type("Cache", (), {"_cache_file": _Index(entries)})()


class _Kernel:
    def __init__(self, dispatcher):
        self.dispatcher = dispatcher

    def jitted(self):
        return self.dispatcher


def test_cached_reads_the_compiled_signatures_then_the_disk_index():
    compiled_here = _Kernel(_Dispatcher(["(int64,)"], {}))
    on_disk = _Kernel(_Dispatcher([], {"key": "entry"}))
    cold = _Kernel(_Dispatcher([], {}))
    unknown = _Kernel(_Dispatcher([]))              # no _cache: numba's internals moved; as before the check
    assert cached(compiled_here) and cached(on_disk) and cached(unknown)
    assert not cached(cold) and not cached(on_disk, cold)
    assert cached(_Dispatcher([], {"key": "entry"})) and not cached(_Dispatcher([], {}))   # an njit dispatcher
    assert fits(10.0, 8.0, cold) and not fits(7.9, 8.0, cold) and fits(1.0, 8.0, on_disk)


def test_a_kernel_run_once_is_cached():
    inst = load_instance(SLOT12)
    slot_sgs.local_search(inst, iterations=20)
    assert cached(slot_sgs._climb) and slot_sgs.kernel_ready(0.0)


def test_certify_step_without_compiled_search_runs_the_event_model_alone(monkeypatch):
    """With the search's kernels not compiled and no time to compile them, the certify step does not start the
    search: the event model proves slot-12 alone, the run ends within its limit, and the note says why."""
    monkeypatch.setattr(latency_astar, "kernels_ready", lambda seconds_left: False)
    t0 = time.perf_counter()
    rep = solve_instance(load_instance(SLOT12), "latency-ip", "highs", time_limit=20, policies=["mc-sf"])
    assert time.perf_counter() - t0 < 22
    assert rep["status"] == "optimal" and rep["objective"] == rep["bound"] == 91 and rep["verified"]
    assert "latency-astar not run" in rep["message"] and "lpbench warmup" in rep["message"]


def test_lpbench_solve_prints_that_the_model_was_not_built(monkeypatch, capsys):
    monkeypatch.setattr(latency_astar, "kernels_ready", lambda seconds_left: False)
    assert main(["solve", str(SLOT12), "--time-limit", "20", "--policies", "mc-sf"]) == 0
    out = capsys.readouterr().out
    assert "the exact model was not built" in out and "None variables" not in out


def test_latency_astar_not_compiled_reports_the_warm_start(monkeypatch):
    monkeypatch.setattr(latency_astar, "kernels_ready", lambda seconds_left: False)
    rep = solve_instance(load_instance(SLOT12), "latency-astar", time_limit=5, policies=["mc-sf"])
    assert rep["status"] == "time_limit" and rep["verified"]
    assert rep["objective"] is not None and rep["objective"] <= rep["ratios"]["mc-sf"]["objective"]
    assert "search not run" in rep["message"] and "lpbench warmup" in rep["message"]


def test_incumbent_search_not_compiled_is_skipped_with_a_note(monkeypatch):
    monkeypatch.setattr(slot_sgs, "kernel_ready", lambda seconds_left: False)
    inst = load_instance(SLOT12)
    note = LatencyIP.search_incumbent(inst, deadline=time.perf_counter() + 5)
    assert isinstance(note, str) and "lpbench warmup" in note
    rep = solve_instance(inst, "latency-ip", "highs", time_limit=10, policies=["mc-sf"])
    assert rep["verified"] and rep.get("incumbent_search") is None


def test_lpbench_warmup_compiles_every_step(capsys):
    assert main(["warmup"]) == 0
    captured = capsys.readouterr()
    assert "kernels ready" in captured.out
    for what in ("local search", "exact search", "chain-bound", "volume-chain-bound"):
        assert what in captured.err
    assert latency_astar.kernels_ready(0.0) and slot_sgs.kernel_ready(0.0)


def test_chain_bound_without_compiled_kernels_and_time_to_compile_them_is_volume_bound(monkeypatch):
    """chain-bound's two kernels take about 2 s to compile cold: with less time left than COLD_COMPILE_SECONDS and
    neither cached, no chain is started and the bound is volume-bound's, at once; with the time, the chain runs, and
    without the first four completions' block when FOUR_COMPILE_SECONDS more are not left."""
    from lpbench.formulations import chain, compiled
    from lpbench.formulations.volume import VolumeBound
    from lpbench.generators import jaillet
    from lpbench.instance import parse_instance

    inst = parse_instance(jaillet.instance("jaillet-model1", 0, 0, first=24))
    monkeypatch.setattr(compiled, "cached", lambda *kernels: False)
    t = time.perf_counter()
    assert chain.chain_bound(inst, t + chain.COLD_COMPILE_SECONDS - 0.5) == (int(round(VolumeBound(inst).value())),
                                                                           "volume-bound")
    assert time.perf_counter() - t < 0.5
    monkeypatch.setattr(chain, "COLD_COMPILE_SECONDS", 0.0)

    def not_compiled(*args):
        raise AssertionError("the four-block's kernels were called without the time to compile them")

    monkeypatch.setattr(chain, "_four_below", not_compiled)
    assert chain.FOUR_COMPILE_SECONDS > 2
    assert chain.chain_bound(inst, time.perf_counter() + 2)[1] != "volume-bound"
