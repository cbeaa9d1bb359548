"""The results store: ``<out>/<run>/`` holds ``manifest.json`` and one Parquet part per finished task.

A part is written to a temporary file and renamed into place when its task finishes, so a run killed at
any moment keeps every finished task and no half-written file. A run directory is never reused: a new run
gets a fresh name (``<suite>-<UTC time>``, with ``-2``, ``-3`` on a clash). ``--resume RUN`` reopens one,
refuses it when the suite's fingerprint (settings and task list) changed, and runs only the tasks without
a part. Rows are tidy: one per (instance, formulation or policy, solver, repetition).

Everything is checked before the run directory is created (:func:`check_out`, :meth:`RunStore.resume`);
a file that is not a readable manifest, Parquet part or results store is bad input (``InputError``, exit 2).
"""
from __future__ import annotations

import hashlib
import json
import subprocess
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd
import pyarrow as pa

from .. import __version__
from ..errors import InputError
from ..outputs import writable_directory, write_json, write_parquet
from .suite import Suite

MANIFEST = "manifest.json"
#: the row columns that ``compare``, ``table`` and ``plot`` read: a Parquet file without them is no results store
COLUMNS = ("instance", "instance_hash", "kind", "method", "formulation", "solver", "repetition", "status",
           "objective", "bound", "gap", "ratio_lower", "ratio_upper", "verified", "build_seconds", "solve_seconds")


def git_commit() -> str | None:
    """The commit of the lpbench checkout (``-dirty`` with uncommitted changes), or None outside git."""
    here = Path(__file__).resolve().parent
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, timeout=10)
        if head.returncode != 0:
            return None
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=here,
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return head.stdout.strip() + ("-dirty" if dirty else "")
    except (OSError, subprocess.TimeoutExpired):
        return None


def part_name(task_key: str) -> str:
    return f"part-{hashlib.sha1(task_key.encode()).hexdigest()[:20]}.parquet"


def check_out(out: str | Path) -> None:
    """Refuse a results directory ``--out`` that is not a directory or cannot be created or written to."""
    writable_directory(Path(out), Path(out), "--out", hint="; give a results directory")


class RunStore:
    def __init__(self, path: Path, manifest: dict):
        self.path = path
        self.manifest = manifest
        self.name = path.name

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
        manifest = {"suite": suite.name, "suite_path": suite.path, "fingerprint": suite.fingerprint(),
                    "tasks": len(suite.tasks()), "created": stamp, "executor": executor,
                    "lpbench_version": __version__, "git_commit": git_commit(),
                    "suite_text": Path(suite.path).read_text()}
        write_json(path / MANIFEST, manifest)
        return cls(path, manifest)

    @classmethod
    def resume(cls, out: str | Path, run: str, suite: Suite) -> "RunStore":
        path = Path(run) if Path(run).is_dir() else Path(out) / run
        if not (path / MANIFEST).is_file():
            raise InputError(f"--resume: {run!r} is not a run (no {path / MANIFEST})")
        try:
            manifest = json.loads((path / MANIFEST).read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
            raise InputError(f"--resume: {path / MANIFEST} is not a readable run manifest ({e})") from None
        if not isinstance(manifest, dict) or not isinstance(manifest.get("fingerprint"), str):
            raise InputError(f"--resume: {path / MANIFEST} is not a run manifest (expected an object with a "
                             f"fingerprint, got {json.dumps(manifest)[:60]})")
        if manifest["fingerprint"] != suite.fingerprint():
            raise InputError(f"--resume: the suite changed since run {path.name} was started (settings, instances "
                             "or task list differ); start a new run instead")
        return cls(path, manifest)

    def done(self) -> set[str]:
        return {p.name for p in self.path.glob("part-*.parquet")}

    def pending(self, tasks: list[dict]) -> list[dict]:
        done = self.done()
        return [t for t in tasks if part_name(t["key"]) not in done]

    def write(self, task: dict, rows: list[dict]) -> None:
        frame = pd.DataFrame(rows)
        frame.insert(0, "run", self.name)
        frame["git_commit"] = self.manifest.get("git_commit")
        write_parquet(self.path / part_name(task["key"]), frame)


def _read_part(path: Path, run: Path | None = None) -> pd.DataFrame:
    """One Parquet file of rows: a part of ``run``, or a file given alone (``run`` None)."""
    try:
        frame = pd.read_parquet(path)
    except (OSError, pa.ArrowException) as e:
        why = " ".join(str(e).split()).split(". ")[0]  # pyarrow's first sentence names the problem
        if run is None:
            raise InputError(f"RUN: {path} is not an lpbench results store (not a Parquet file: {why}); give a "
                             "run directory or a Parquet file of its rows") from None
        raise InputError(f"RUN: {path} is a damaged part ({why}); delete it, then run its task again with "
                         f"lpbench bench SUITE --resume {run}") from None
    missing = [c for c in COLUMNS if c not in frame.columns]
    if missing:
        raise InputError(f"RUN: {path} is not an lpbench results store (it lacks the column(s) "
                         f"{', '.join(missing[:4])}{', ...' if len(missing) > 4 else ''})")
    return frame


def read_run(path: str | Path) -> pd.DataFrame:
    """Every row of a run (a run directory, or a single Parquet file), in a stable order, with the derived
    column ``family`` (the instance name without a generator's ``-s<seed>-<k>`` suffix). A file that is not
    Parquet, lacks the row columns (:data:`COLUMNS`) or holds no row is refused (``InputError``)."""
    p = Path(path)
    if p.is_file():
        frame = _read_part(p)
    elif not (p / MANIFEST).exists():
        raise InputError(f"RUN: {p} is not a run directory (no {MANIFEST})")
    else:
        parts = sorted(p.glob("part-*.parquet"))
        if not parts:
            raise InputError(f"RUN: {p} holds no finished task yet")
        frame = pd.concat([_read_part(f, p) for f in parts], ignore_index=True)
    if frame.empty:
        raise InputError(f"RUN: {p} holds no rows")
    # derived, not stored: generated instances are named KIND-s<seed>-<k>, so "family" groups a generator's draws
    frame["family"] = frame["instance"].str.replace(r"-s\d+-\d+$", "", regex=True)
    return frame.sort_values(["instance", "kind", "method", "formulation", "solver", "repetition"],
                             na_position="first", kind="stable").reset_index(drop=True)
