"""lpbench bench's store under interruption and tampering (audit 12: F1, F6-F10, F12): Ctrl-C stops a local run
at once and keeps every finished task, a run is checked against its manifest when read, a damaged part is
run again on --resume, a part is never replaced, resumed rows carry the code that computed them, and
``grace`` is part of the suite fingerprint."""
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pandas as pd
import pytest

from lpbench.bench import executors, runner
from lpbench.bench.store import RunStore, git_commit, part_name, read_run
from lpbench.bench.suite import load_suite
from lpbench.cli import main
from lpbench.errors import InputError, LpbenchWarning

ROOT = Path(__file__).resolve().parent.parent

SIM = """[suite]
name = "sim"
instances = ["ROOT/instances/tiny-slot.json", "ROOT/instances/slot-12.json"]
policies = ["mc-sf"]
time_limit = 2
grace = 3
"""


def write_suite(path: Path, body: str) -> Path:
    path.write_text(body.replace("ROOT", str(ROOT)))
    return path


def jaillet_suite(name: str, time_limit: float, count: int, policies: str = "[]") -> str:
    """A suite of ``count`` full jaillet-model1 draws solved by latency-cp on CP-SAT (and ``policies``)."""
    return f"""[suite]
name = "{name}"
solve = ["latency-cp:cpsat"]
policies = {policies}
time_limit = {time_limit}
grace = 3

[[suite.generate]]
kind = "jaillet-model1"
seed = 0
count = {count}
"""


def cli(capsys, argv):
    """``lpbench argv`` in this process, every warning shown (as the CLI prints it): (exit code, stdout, stderr)."""
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        rc = main(argv)
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.fixture(scope="module")
def sim_run(tmp_path_factory):
    """A finished run of two simulation tasks (tiny-slot and slot-12 under mc-sf): (suite file, run directory)."""
    base = tmp_path_factory.mktemp("sim")
    suite = write_suite(base / "sim.toml", SIM)
    assert main(["bench", str(suite), "--out", str(base / "results"), "-q"]) == 0
    (run,) = (base / "results").iterdir()
    return suite, run


def copy_run(run: Path, dest: Path) -> Path:
    shutil.copytree(run, dest)
    return dest


# F1, F10: Ctrl-C

def _children(pid: int) -> set[int]:
    out = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        out |= {int(c) for c in (task / "children").read_text().split()}
    return out


def test_ctrl_c_stops_a_local_run_at_once_keeps_finished_parts_and_names_the_run(tmp_path):
    suite = write_suite(tmp_path / "j3.toml", jaillet_suite("j3", time_limit=2, count=3, policies='["mc-sf"]'))
    out = tmp_path / "results"
    # SIGINT restored to its default, so the driver takes Ctrl-C even when pytest runs as a background job
    driver = subprocess.Popen([sys.executable, "-m", "lpbench.cli", "bench", str(suite), "--out", str(out),
                               "--workers", "1", "-q"], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.time() + 60
    while time.time() < deadline and not list(out.glob("*/part-*.parquet")):
        time.sleep(0.02)
    time.sleep(0.3)  # the next task's process has started
    running = _children(driver.pid)
    assert running
    t0 = time.perf_counter()
    driver.send_signal(signal.SIGINT)
    stdout, stderr = driver.communicate(timeout=30)
    elapsed = time.perf_counter() - t0
    assert driver.returncode == 130, stderr
    assert elapsed < 5, elapsed  # before: every queued task was still run (about 2.5 s each)
    (run,) = list(out.iterdir())
    parts = list(run.glob("part-*.parquet"))
    assert 1 <= len(parts) < 3 and not list(run.glob(".*tmp"))
    # one line, under -q too, naming the run and the command that resumes it
    assert stdout == "" and stderr.splitlines() == [
        f"lpbench: interrupted: run {out / run.name} holds {len(parts)} of 3 tasks; resume it with "
        f"lpbench bench {suite} --resume {out / run.name}"], stderr
    for pid in running:  # the running task's process was killed, not left to finish
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    # F6: reading the interrupted run says it is incomplete and how to finish it
    with pytest.warns(LpbenchWarning, match=rf"has rows for {len(parts)} of 3 tasks .*--resume {run}"):
        frame = read_run(run)
    assert frame["task_key"].nunique() == len(parts)


def _alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie does not)."""
    try:
        return "\nState:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False


def _task_processes(parents) -> set[int]:
    """The live ``python -m lpbench.bench.runner`` children of the processes ``parents`` (pids; one gone has none)."""
    out = set()
    for parent in parents:
        try:
            children = _children(parent)
        except OSError:
            continue
        for pid in children:
            try:
                if b"\0-m\0lpbench.bench.runner\0" in Path(f"/proc/{pid}/cmdline").read_bytes() and _alive(pid):
                    out.add(pid)
            except OSError:
                pass
    return out


def _wait_for(predicate, seconds: float) -> bool:
    deadline = time.time() + seconds
    while time.time() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def test_a_task_process_whose_parent_dies_ends_at_once(tmp_path):
    """A task's parent (the driver, a Dask worker) killed: the task's process ends within a second or so, where it
    used to run on to its alarm (time_limit + grace + 5 s)."""
    task = load_suite(write_suite(tmp_path / "long.toml", jaillet_suite("long", time_limit=30, count=1))).tasks()[0].to_dict()
    parent = subprocess.Popen([sys.executable, "-c", "import os, subprocess, sys, time; p = subprocess.Popen("
                               "[sys.executable, '-m', 'lpbench.bench.runner'], stdin=subprocess.PIPE, text=True, "
                               "start_new_session=True, env={**os.environ, 'LPBENCH_TASK_PARENT': str(os.getpid())}); "
                               "p.stdin.write(sys.argv[1]); p.stdin.close(); time.sleep(120)", json.dumps(task)])
    children = set()
    try:
        assert _wait_for(lambda: _task_processes({parent.pid}), 20)
        children = _task_processes({parent.pid})
        (child,) = children
        time.sleep(1.0)  # the task is solving
        assert _alive(child)
        parent.kill()
        parent.wait()
        t0 = time.perf_counter()
        assert _wait_for(lambda: not _alive(child), 5), "the orphaned task process still runs"
        assert time.perf_counter() - t0 < 5
    finally:
        parent.kill()
        parent.wait()
        for pid in children:
            if _alive(pid):
                os.killpg(pid, signal.SIGKILL)


def test_dask_stop_kills_the_running_task_processes_on_a_cluster_it_does_not_own(tmp_path):
    """Ctrl-C with ``--scheduler``: the workers live on, and their running task processes are killed through the
    run's stop event (before, they ran to their own deadline); the stopped tasks have no rows."""
    import distributed

    tasks = [t.to_dict() for t in load_suite(write_suite(tmp_path / "long.toml", jaillet_suite("long", time_limit=30, count=2))).tasks()]
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        workers = set(client.run(os.getpid).values())
        run = executors.run_tasks(tasks, "dask", client=client)
        running = set()
        try:
            assert _wait_for(lambda: _task_processes(workers), 30)
            running = _task_processes(workers)
            time.sleep(1.0)
            t0 = time.perf_counter()
            assert run.stop() == []
            run.close()
            assert _wait_for(lambda: not any(_alive(pid) for pid in running), 5), "a task process still runs"
            assert time.perf_counter() - t0 < 5
            time.sleep(0.5)
            assert not _task_processes(workers)  # the queued task was not started either
        finally:
            for pid in running:
                if _alive(pid):
                    os.killpg(pid, signal.SIGKILL)


def _sleeper(rows_status="verified"):
    """A task command that sleeps ``task['sleep']`` seconds and prints one row."""
    return [sys.executable, "-c", "import json, sys, time; t = json.load(sys.stdin); time.sleep(t['sleep']); "
            f"print(json.dumps([{{'status': '{rows_status}', 'key': t['key']}}]))"]


def test_local_run_stop_cancels_queued_tasks_and_kills_running_ones(monkeypatch):
    started = []

    def popen(argv):
        proc = real_popen(argv)
        started.append(proc)
        return proc

    real_popen = runner._popen
    monkeypatch.setattr(runner, "_popen", popen)
    monkeypatch.setattr(executors, "run_isolated",
                        lambda task, command, stopper: runner.run_isolated(task, _sleeper(), stopper))
    tasks = [{"key": k, "sleep": s, "time_limit": 60, "grace": 0} for k, s in
             (("fast", 0), ("slow1", 60), ("slow2", 60), ("queued", 60))]
    run = executors.LocalRun(tasks, workers=2)
    it = iter(run)
    task, rows = next(it)
    assert task["key"] == "fast" and rows[0]["key"] == "fast"
    time.sleep(0.3)  # slow1 and slow2 run, queued waits
    t0 = time.perf_counter()
    finished = run.stop()  # what the CLI does on Ctrl-C or a failed write
    run.close()
    assert time.perf_counter() - t0 < 3
    assert [t["key"] for t, _ in finished] == ["fast"]  # the killed tasks have no rows: --resume runs them again
    assert len(started) == 3 and all(p.poll() is not None for p in started)  # queued never started


# F6: reading a run checks it against its manifest

def test_table_of_an_incomplete_run_warns_and_names_the_resume_command(sim_run, tmp_path, capsys):
    suite, run = sim_run
    cut = copy_run(run, tmp_path / "cut")
    next(cut.glob("part-*.parquet")).unlink()
    rc, out, err = cli(capsys, ["table", str(cut), "--kind", "latency"])
    assert rc == 0 and "mc-sf" in out
    assert err.splitlines() == [f"lpbench: warning: run {cut} has rows for 1 of 2 tasks (incomplete); resume it with "
                                f"lpbench bench {suite} --resume {cut}"]
    rc, out, err = cli(capsys, ["table", str(run), "--kind", "latency"])  # the complete run: no warning
    assert rc == 0 and err == ""


def test_a_part_of_another_run_is_refused(sim_run, tmp_path, capsys):
    suite, run = sim_run
    # a task of another suite, copied in under its own part name
    other = write_suite(tmp_path / "other.toml", SIM.replace('"sim"', '"other"').replace(
        '"ROOT/instances/tiny-slot.json", "ROOT/instances/slot-12.json"', '"ROOT/instances/slot-12.json"').replace(
        '"mc-sf"', '"mc-benchmark"'))
    assert main(["bench", str(other), "--out", str(tmp_path / "o"), "-q"]) == 0
    (orun,) = (tmp_path / "o").iterdir()
    (foreign,) = orun.glob("part-*.parquet")
    mixed = copy_run(run, tmp_path / "mixed")
    shutil.copy(foreign, mixed / foreign.name)
    for argv in (["table", str(mixed)], ["compare", str(run), str(mixed)],
                 ["plot", "ratio", "--run", str(mixed), "--out", str(tmp_path / "fig")]):
        rc, out, err = cli(capsys, argv)
        assert rc == 2 and f"{mixed / foreign.name} holds rows of task" in err and "not a task of this run" in err
        assert len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "fig.png").exists()
    # the same task (same key, same part name) computed for another suite: its suite fingerprint differs
    same = write_suite(tmp_path / "same.toml", SIM.replace('"sim"', '"same"'))
    assert main(["bench", str(same), "--out", str(tmp_path / "s"), "-q"]) == 0
    (srun,) = (tmp_path / "s").iterdir()
    swapped = copy_run(run, tmp_path / "swapped")
    name = sorted(p.name for p in srun.glob("part-*.parquet"))[0]
    shutil.copy(srun / name, swapped / name)
    rc, out, err = cli(capsys, ["table", str(swapped)])
    assert rc == 2 and f"{swapped / name} was computed for another suite" in err
    # a part renamed to another task's name
    renamed = copy_run(run, tmp_path / "renamed")
    a, b = sorted(renamed.glob("part-*.parquet"))
    b.unlink()
    a.rename(b)
    rc, out, err = cli(capsys, ["table", str(renamed)])
    assert rc == 2 and "whose part is part-" in err


# F9: a damaged part on --resume

def test_resume_sets_a_damaged_part_aside_and_runs_its_task_again(sim_run, tmp_path, capsys):
    suite, run = sim_run
    damaged = copy_run(run, tmp_path / "damaged")
    part = sorted(damaged.glob("part-*.parquet"))[0]
    cut = part.read_bytes()[:100]
    part.write_bytes(cut)
    rc, out, err = cli(capsys, ["table", str(damaged)])
    assert rc == 2 and "is a damaged part" in err and f"--resume {damaged}" in err
    rc, out, err = cli(capsys, ["bench", str(suite), "--resume", str(damaged), "-q"])
    assert rc == 0, err
    assert "ran 1 of 2 tasks (1 verified)" in out
    assert f"{part.name} is a damaged part" in err and f"moved to {part.name}.damaged" in err
    assert (damaged / f"{part.name}.damaged").read_bytes() == cut  # kept for a look, out of the run's parts
    frame = read_run(damaged)
    assert len(frame) == 2 and set(frame["status"]) == {"verified"}
    rc, out, err = cli(capsys, ["bench", str(suite), "--resume", str(damaged), "-q"])
    assert rc == 0 and "nothing to do" in out and err == ""


# F8: a part is never replaced

def test_a_second_write_of_a_task_is_refused_and_keeps_the_first(sim_run, tmp_path):
    suite, run = sim_run
    copy = copy_run(run, tmp_path / "copy")
    s = load_suite(suite)
    store = RunStore.resume(tmp_path, str(copy), s)
    task = s.tasks()[0].to_dict()
    before = (copy / part_name(task["key"])).read_bytes()
    with pytest.raises(InputError) as e:
        store.write(task, [{"status": "error", "message": "late"}])
    (msg,) = e.value.lines()
    assert "already exists" in msg and "--force" not in msg and f"--resume {copy}" in msg
    assert (copy / part_name(task["key"])).read_bytes() == before
    store.close()
    assert not [p for p in copy.iterdir() if p.name.startswith(".") and p.name != ".lock"]  # no temporary file left


def test_a_filesystem_without_flock_runs_unlocked_with_a_warning(sim_run, tmp_path, capsys, monkeypatch):
    """flock refused by the filesystem (ENOLCK: some NFS, Lustre, FUSE mounts) is not "another run holds it": the
    run goes on unlocked and says so, where it used to be refused with a false message and an empty directory."""
    import errno
    import fcntl

    def no_locks(fh, op):
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(fcntl, "flock", no_locks)
    suite, _ = sim_run
    out = tmp_path / "results"
    rc, stdout, err = cli(capsys, ["bench", str(suite), "--out", str(out), "-q"])
    assert rc == 0 and "cannot lock .lock on this filesystem (No locks available)" in err, err
    (run,) = out.iterdir()
    assert len(list(run.glob("part-*.parquet"))) == 2


def test_a_run_in_progress_cannot_be_resumed_twice(sim_run, tmp_path, capsys):
    """Two --resume of one run would run its pending tasks twice: the second is refused (exit 2) while the
    first holds the run, and accepted once it is done; a process killed while holding it leaves no stale lock."""
    suite, run = sim_run
    copy = copy_run(run, tmp_path / "copy")
    part = sorted(copy.glob("part-*.parquet"))[0]
    part.unlink()
    first = RunStore.resume(tmp_path, str(copy), load_suite(suite))
    rc, out, err = cli(capsys, ["bench", str(suite), "--resume", str(copy), "-q"])
    assert rc == 2 and "is in progress in another lpbench bench" in err and str(copy / ".lock") in err, err
    assert not part.exists()  # the refused resume ran nothing
    first.close()
    holder = subprocess.Popen([sys.executable, "-c", "import fcntl, sys, time; f = open(sys.argv[1], 'a'); "
                               "fcntl.flock(f, fcntl.LOCK_EX); print(1, flush=True); time.sleep(60)",
                               str(copy / ".lock")], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "1"
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()
    rc, out, err = cli(capsys, ["bench", str(suite), "--resume", str(copy), "-q"])
    assert rc == 0 and "ran 1 of 2 tasks" in out, err
    assert part.exists()
    rc, out, err = cli(capsys, ["bench", str(suite), "--resume", str(copy), "-q"])  # the lock was released
    assert rc == 0 and "nothing to do" in out


# F7: resumed rows carry the code that computed them

def test_resumed_rows_carry_the_current_commit_and_a_changed_commit_is_noted(sim_run, tmp_path, capsys):
    suite, run = sim_run
    old = copy_run(run, tmp_path / "old")
    manifest = json.loads((old / "manifest.json").read_text())
    manifest["git_commit"] = "0" * 40
    (old / "manifest.json").write_text(json.dumps(manifest))
    part = sorted(old.glob("part-*.parquet"))[0]
    part.unlink()
    rc, out, err = cli(capsys, ["bench", str(suite), "--resume", str(old), "-q"])
    assert rc == 0, err
    (line,) = err.splitlines()
    assert line.startswith(f"lpbench: warning: run {old} was started by lpbench ") and f"commit {'0' * 40}" in line
    assert set(pd.read_parquet(part)["git_commit"]) == {git_commit()}


# F12: grace is part of the fingerprint

def test_grace_is_part_of_the_fingerprint(sim_run, tmp_path, capsys):
    suite, run = sim_run
    changed = write_suite(tmp_path / "g.toml", SIM.replace("grace = 3", "grace = 30"))
    assert load_suite(changed).fingerprint() != load_suite(suite).fingerprint()
    rc, out, err = cli(capsys, ["bench", str(changed), "--resume", str(run), "-q"])
    assert rc == 2 and "the suite changed" in err
    # a run made before grace was in the fingerprint resumes under its own grace only
    legacy = copy_run(run, tmp_path / "legacy")
    manifest = json.loads((legacy / "manifest.json").read_text())
    del manifest["task_keys"]
    manifest["fingerprint"] = load_suite(suite).fingerprint(legacy=True)
    (legacy / "manifest.json").write_text(json.dumps(manifest))
    store = RunStore.resume(tmp_path, str(legacy), load_suite(suite))
    assert store.path == legacy
    store.close()
    with pytest.raises(InputError, match="the suite changed"):
        RunStore.resume(tmp_path, str(legacy), load_suite(changed))
