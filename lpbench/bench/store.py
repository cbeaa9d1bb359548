"""The results store: ``<out>/<run>/`` holds ``manifest.json`` and one Parquet part per finished task.

A part is written to a temporary file and linked into place when its task finishes, so a run killed at
any moment keeps every finished task and no half-written file, and an existing part is never replaced. A run
holds an exclusive lock on ``<run>/.lock`` while it runs (released when its process ends, however it ends), so a
second ``--resume`` of a run in progress is refused instead of running its pending tasks twice. A run directory
is never reused: a new run gets a fresh name (``<suite>-<UTC time>``, with ``-2``, ``-3`` on a clash).
``--resume RUN`` reopens one, refuses it when the suite's fingerprint (settings, grace included, and task list)
changed, sets a damaged part aside (``<part>.damaged``) and runs only the tasks without a good part. Rows are
tidy: one per (instance, formulation or policy, solver, repetition), stamped with the git commit that computed
them and the suite fingerprint. Reading a run checks it against its manifest: a part of another task or suite is refused, a
run with fewer parts than tasks is read with a warning naming the command that finishes it.

Everything is checked before the run directory is created (:func:`check_out`, :meth:`RunStore.resume`);
a file that is not a readable manifest, Parquet part or results store is bad input (``InputError``, exit 2).
"""
from __future__ import annotations

import hashlib
import json
import shlex
import warnings
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd
import pyarrow as pa

from .. import __version__
from ..errors import InputError, LpbenchWarning
from ..outputs import writable_directory, write_json, write_parquet
from ..provenance import checkout_commit
from ..tomlfile import PACKAGED, tomllib
from .suite import Suite

MANIFEST = "manifest.json"
LOCK = ".lock"
#: the row columns that ``compare``, ``table`` and ``plot`` read: a Parquet file without them is no results store
COLUMNS = ("instance", "instance_hash", "kind", "method", "formulation", "solver", "repetition", "status",
           "objective", "bound", "gap", "ratio_lower", "ratio_upper", "verified", "build_seconds", "solve_seconds")


def git_commit() -> str | None:
    """The commit of the lpbench checkout (``-dirty`` with uncommitted changes); for a wheel, the commit it was
    built from (``lpbench/_shipped/commit``, written by setup.py); else None. Git is asked only where the package
    sits in its own checkout: an installed copy in a virtual environment inside some checkout is not that
    checkout's code."""
    here = Path(__file__).resolve().parent
    if (here.parents[1] / ".git").exists():
        return checkout_commit(here)
    recorded = PACKAGED / "commit"
    return (recorded.read_text().strip() or None) if recorded.is_file() else None


def part_name(task_key: str) -> str:
    return f"part-{hashlib.sha1(task_key.encode()).hexdigest()[:20]}.parquet"


def check_out(out: str | Path) -> None:
    """Refuse a results directory ``--out`` that is not a directory or cannot be created or written to."""
    writable_directory(Path(out), Path(out), "--out", hint="; give a results directory")


def _damage(e: Exception) -> str:
    return " ".join(str(e).split()).split(". ")[0]  # pyarrow's first sentence names the problem


def _missing(frame: pd.DataFrame) -> list[str]:
    return [c for c in COLUMNS if c not in frame.columns]


def _foreign(path: Path, frame: pd.DataFrame, keys: set[str] | None, fingerprint: str | None) -> str | None:
    """Why the part ``path`` is not one of this run's tasks (None when it is): its rows must hold one task key,
    the one its file is named after, one of the run's ``keys`` (when known), computed for the run's suite
    ``fingerprint`` (when the rows carry it)."""
    if "task_key" not in frame.columns:
        return None  # nothing to check against
    found = sorted(set(frame["task_key"].dropna().astype(str)))
    if len(found) != 1:
        return f"holds rows of {len(found)} task keys ({', '.join(found[:3])})"
    (key,) = found
    if keys is not None and key not in keys:
        return f"holds rows of task {key}, which is not a task of this run"
    if part_name(key) != path.name:
        return f"holds rows of task {key}, whose part is {part_name(key)}"
    if fingerprint and "suite_fingerprint" in frame.columns:
        other = set(frame["suite_fingerprint"].dropna().astype(str)) - {fingerprint}
        if other:
            return (f"was computed for another suite (fingerprint {sorted(other)[0][:12]}..., the run's manifest "
                    f"says {fingerprint[:12]}...)")
    return None


def resume_command(manifest: dict, path: Path) -> str:
    """The command that finishes the run at ``path``."""
    suite = manifest.get("suite_path") if isinstance(manifest.get("suite_path"), str) else "SUITE"
    return f"lpbench bench {shlex.quote(suite)} --resume {shlex.quote(str(path))}"


class RunStore:
    def __init__(self, path: Path, manifest: dict, lock):
        self.path = path
        self.manifest = manifest
        self.name = path.name
        #: the open, locked ``.lock`` file (:func:`_lock`), held until :meth:`close` or the process ends
        self.lock = lock
        #: the code that computes this session's rows (a resumed run's manifest names the code that started it)
        self.commit = git_commit()

    @classmethod
    def create(cls, out: str | Path, suite: Suite, executor: str) -> "RunStore":
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
        base = f"{suite.name}-{stamp}"
        for k in range(1, 1000):
            path = out / (base if k == 1 else f"{base}-{k}")
            try:
                path.mkdir()  # atomic: two runs can never share a directory
                break
            except FileExistsError:
                continue
        else:
            raise InputError(f"--out: {out} already holds {base} and 998 more runs of that second; choose another "
                             "results directory")
        try:
            lock = _lock(path, "--out")
        except InputError:
            path.rmdir()  # nothing written yet: leave no empty run behind
            raise
        keys = [t.key for t in suite.tasks()]
        manifest = {"suite": suite.name, "suite_path": suite.path, "fingerprint": suite.fingerprint(),
                    "tasks": len(keys), "task_keys": keys, "created": stamp, "executor": executor,
                    "lpbench_version": __version__, "git_commit": git_commit(),
                    "suite_text": Path(suite.path).read_text()}
        write_json(path / MANIFEST, manifest)
        return cls(path, manifest, lock)

    @classmethod
    def resume(cls, out: str | Path, run: str, suite: Suite) -> "RunStore":
        path = Path(run) if Path(run).is_dir() else Path(out) / run
        if not (path / MANIFEST).is_file():
            raise InputError(f"--resume: {run!r} is not a run (no {path / MANIFEST})")
        manifest = _read_manifest(path, "--resume")
        if not isinstance(manifest.get("fingerprint"), str):
            raise InputError(f"--resume: {path / MANIFEST} is not a run manifest (expected an object with a "
                             f"fingerprint, got {json.dumps(manifest)[:60]})")
        if manifest["fingerprint"] != suite.fingerprint() and not _legacy_match(manifest, suite):
            raise InputError(f"--resume: the suite changed since run {path.name} was started (settings, instances "
                             "or task list differ); start a new run instead")
        store = cls(path, manifest, _lock(path, "--resume"))
        then = (manifest.get("lpbench_version"), manifest.get("git_commit"))
        if then != (__version__, store.commit):
            warnings.warn(f"run {path} was started by lpbench {then[0]} at commit {then[1]}; its resumed tasks run "
                          f"lpbench {__version__} at commit {store.commit} (each row names its own)",
                          LpbenchWarning, stacklevel=2)
        return store

    def resume_command(self) -> str:
        return resume_command(self.manifest, self.path)

    def close(self) -> None:
        """Release the run's lock (the end of ``lpbench bench``; a process that ends releases it anyway)."""
        if self.lock is not None:
            self.lock.close()
            self.lock = None

    def pending(self, tasks: list[dict]) -> list[dict]:
        """The tasks without a good part. Each part is read: a damaged one (not readable Parquet, no rows, or
        missing row columns) is renamed ``<part>.damaged`` with a warning and its task runs again; a part that
        is not one of these tasks is refused (``InputError``)."""
        keys = {t["key"] for t in tasks}
        done = set()
        for f in sorted(self.path.glob("part-*.parquet")):
            try:
                frame = pd.read_parquet(f)
                why = ("it holds no rows" if frame.empty else
                       f"it lacks the column(s) {', '.join(_missing(frame)[:4])}" if _missing(frame) else None)
            except (OSError, pa.ArrowException) as e:
                why = _damage(e)
            if why is not None:
                aside = f.with_name(f.name + ".damaged")
                k = 1
                while aside.exists():
                    k += 1
                    aside = f.with_name(f"{f.name}.damaged-{k}")
                f.rename(aside)
                warnings.warn(f"run {self.path}: {f.name} is a damaged part ({why}); moved to {aside.name}, its task "
                              "runs again", LpbenchWarning, stacklevel=2)
                continue
            problem = _foreign(f, frame, keys, self.manifest.get("fingerprint"))
            if problem:
                raise InputError(f"--resume: {f} {problem}; remove it (it is no part of run {self.name}), then "
                                 "resume again")
            done.add(f.name)
        return [t for t in tasks if part_name(t["key"]) not in done]

    def write(self, task: dict, rows: list[dict]) -> None:
        """The rows of one finished task, as its part; refuses (``InputError``) to replace an existing part."""
        frame = pd.DataFrame(rows)
        frame.insert(0, "run", self.name)
        frame["git_commit"] = self.commit
        frame["suite_fingerprint"] = self.manifest.get("fingerprint")
        target = self.path / part_name(task["key"])
        write_parquet(target, frame, flag=f"run {self.path}", make_parents=False,
                      exists=f"run {self.path}: {target.name} already exists: another lpbench bench stored this task "
                             f"meanwhile (two runs writing to one run directory?); its part is kept. Let it finish, "
                             f"then: {self.resume_command()}")


def _lock(path: Path, flag: str):
    """Run directory ``path`` locked for this process: its ``.lock`` file, open, with an exclusive ``flock``. A
    lock that another process holds is refused (``InputError``); the operating system releases it when the
    holder exits, even when killed, so a stale lock cannot block a resume. Without ``fcntl`` (Windows), or on a
    filesystem that refuses ``flock`` (some NFS, Lustre or FUSE mounts; a warning says so), nothing is locked, and
    only the refusal to replace a part keeps two runs of one directory apart. Where ``flock`` is local to a host
    (NFS with ``local_lock``), it keeps apart the runs of one host only."""
    try:
        import fcntl
    except ModuleNotFoundError:
        return None
    try:
        fh = open(path / LOCK, "a")
    except OSError as e:
        raise InputError(f"{flag}: cannot open {path / LOCK}: {e.strerror}") from None
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        fh.close()
        raise InputError(f"{flag}: run {path} is in progress in another lpbench bench (it holds {path / LOCK}); "
                         "let it finish, or stop it, then resume") from None
    except OSError as e:
        fh.close()
        warnings.warn(f"run {path}: cannot lock {LOCK} on this filesystem ({e.strerror}); a second --resume of "
                      "this run while it runs is not refused", LpbenchWarning, stacklevel=3)
        return None
    return fh


def _read_manifest(path: Path, flag: str) -> dict:
    try:
        manifest = json.loads((path / MANIFEST).read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InputError(f"{flag}: {path / MANIFEST} is not a readable run manifest ({e})") from None
    if not isinstance(manifest, dict):
        raise InputError(f"{flag}: {path / MANIFEST} is not a run manifest (expected an object with a "
                         f"fingerprint, got {json.dumps(manifest)[:60]})")
    return manifest


def _legacy_match(manifest: dict, suite: Suite) -> bool:
    """A run made before ``grace`` was part of the fingerprint: the old fingerprint, and the grace of the suite
    text its manifest keeps."""
    if "task_keys" in manifest or manifest["fingerprint"] != suite.fingerprint(legacy=True):
        return False
    try:
        grace = tomllib.loads(manifest.get("suite_text", ""))["suite"].get("grace", 10.0)
    except (tomllib.TOMLDecodeError, KeyError, TypeError, AttributeError):
        return False
    return isinstance(grace, (int, float)) and float(grace) == suite.grace


def _read_part(path: Path, run: Path | None = None, manifest: dict | None = None) -> pd.DataFrame:
    """One Parquet file of rows: a part of ``run``, or a file given alone (``run`` None)."""
    try:
        frame = pd.read_parquet(path)
    except (OSError, pa.ArrowException) as e:
        why = _damage(e)
        if run is None:
            raise InputError(f"RUN: {path} is not an lpbench results store (not a Parquet file: {why}); give a "
                             "run directory or a Parquet file of its rows") from None
        raise InputError(f"RUN: {path} is a damaged part ({why}); run its task again with "
                         f"{resume_command(manifest or {}, run)} (it sets the damaged part aside)") from None
    missing = _missing(frame)
    if missing:
        raise InputError(f"RUN: {path} is not an lpbench results store (it lacks the column(s) "
                         f"{', '.join(missing[:4])}{', ...' if len(missing) > 4 else ''})")
    return frame


def _read_run_dir(p: Path) -> pd.DataFrame:
    """The parts of run ``p``, checked against its manifest: a part that is not one of its tasks is refused, a run
    with fewer parts than tasks is read with a warning (``LpbenchWarning``)."""
    manifest = _read_manifest(p, "RUN")
    parts = sorted(p.glob("part-*.parquet"))
    if not parts:
        raise InputError(f"RUN: {p} holds no finished task yet")
    frames = [_read_part(f, p, manifest) for f in parts]
    keys = manifest.get("task_keys")
    keys = set(keys) if isinstance(keys, list) else None
    for f, frame in zip(parts, frames):
        problem = _foreign(f, frame, keys, manifest.get("fingerprint") if isinstance(manifest.get("fingerprint"),
                                                                                      str) else None)
        if problem:
            raise InputError(f"RUN: {f} {problem}: it is no part of run {p.name} (copied from another run?); "
                             "remove it, or read it alone")
    total = manifest.get("tasks")
    if not isinstance(total, int) or isinstance(total, bool):
        warnings.warn(f"run {p}: its {MANIFEST} has no task count; whether the run is complete is not checked",
                      LpbenchWarning, stacklevel=3)
    elif len(parts) > total:
        raise InputError(f"RUN: {p} holds {len(parts)} parts for its {total} tasks: some are no part of this run "
                         "(copied from another run?); remove them, or read the parts alone")
    elif len(parts) < total:
        warnings.warn(f"run {p} has rows for {len(parts)} of {total} tasks (incomplete); resume it with "
                      f"{resume_command(manifest, p)}", LpbenchWarning, stacklevel=3)
    return pd.concat(frames, ignore_index=True)


def read_run(path: str | Path) -> pd.DataFrame:
    """Every row of a run (a run directory, or a single Parquet file), in a stable order, with the derived
    column ``family`` (the instance name without a generator's ``-s<seed>-<k>`` suffix). A file that is not
    Parquet, lacks the row columns (:data:`COLUMNS`) or holds no row is refused (``InputError``); so is a part of
    a run directory that is not one of its manifest's tasks, and a run with fewer parts than its manifest's tasks
    is read with a warning (``LpbenchWarning``, printed by the CLI as ``lpbench: warning: ...``)."""
    p = Path(path)
    if p.is_file():
        frame = _read_part(p)
    elif not (p / MANIFEST).exists():
        raise InputError(f"RUN: {p} is not a run directory (no {MANIFEST})")
    else:
        frame = _read_run_dir(p)
    if frame.empty:
        raise InputError(f"RUN: {p} holds no rows")
    # derived, not stored: generated instances are named KIND-s<seed>-<k>, so "family" groups a generator's draws
    frame["family"] = frame["instance"].str.replace(r"-s\d+-\d+$", "", regex=True)
    return frame.sort_values(["instance", "kind", "method", "formulation", "solver", "repetition"],
                             na_position="first", kind="stable").reset_index(drop=True)
