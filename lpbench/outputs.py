"""Result files: JSON written atomically, never silently overwriting an existing file."""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from .errors import InputError


def write_json(path: str | Path, data, force: bool = False, flag: str = "--out") -> None:
    p = Path(path)
    if p.exists() and not force:
        raise InputError(f"{flag}: {p} already exists; choose another path or pass --force to overwrite")
    if p.parent and not p.parent.exists():
        p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=p.parent or ".", prefix=f".{p.name}.", suffix=".tmp")
    with os.fdopen(fd, "w") as fh:
        json.dump(data, fh, indent=1)
        fh.write("\n")
    os.replace(tmp, p)


def write_instance_columns(path: str | Path, head: dict, columns: dict, force: bool = False,
                           flag: str = "--out", chunk: int = 100_000) -> None:
    """A columnar v1 instance written as one stream (atomically, never silently overwriting):
    ``head``'s fields, then ``"requests": {column: [...]}`` from numpy arrays, ``chunk`` values at a
    time, so that a 10-million-request instance never exists as Python lists."""
    p = Path(path)
    if p.exists() and not force:
        raise InputError(f"{flag}: {p} already exists; choose another path or pass --force to overwrite")
    if p.parent and not p.parent.exists():
        p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=p.parent or ".", prefix=f".{p.name}.", suffix=".tmp")
    with os.fdopen(fd, "w") as fh:
        fh.write("{\n")
        for key, value in head.items():
            fh.write(f"{json.dumps(key)}: {json.dumps(value)},\n")
        fh.write('"requests": {')
        for k, (name, arr) in enumerate(columns.items()):
            fh.write(("," if k else "") + f"\n {json.dumps(name)}: [")
            for lo in range(0, len(arr), chunk):
                fh.write(("," if lo else "") + ",".join(map(repr, arr[lo:lo + chunk].tolist())))
            fh.write("]")
        fh.write("\n}}\n")
    os.replace(tmp, p)


def write_text(path: str | Path, text: str, force: bool = False, flag: str = "--out") -> None:
    """A text file (a profile TOML, a CSV) written atomically, never silently overwriting."""
    p = Path(path)
    if p.exists() and not force:
        raise InputError(f"{flag}: {p} already exists; choose another path or pass --force to overwrite")
    if p.parent and not p.parent.exists():
        p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=p.parent or ".", prefix=f".{p.name}.", suffix=".tmp")
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    os.replace(tmp, p)
def write_parquet(path: str | Path, frame, force: bool = False, flag: str = "--out") -> None:
    """A pandas DataFrame as Parquet, written to a temporary file and renamed into place (atomic)."""
    p = Path(path)
    if p.exists() and not force:
        raise InputError(f"{flag}: {p} already exists; choose another path or pass --force to overwrite")
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=f".{p.name}.", suffix=".tmp")
    os.close(fd)
    try:
        frame.to_parquet(tmp, index=False)
        os.replace(tmp, p)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
