"""The one output layer: every file the CLI writes goes through :func:`write_atomic`.

Rules (issue 14):

* the target is checked before anything is computed or written: a directory, a device node or any
  other non-regular file, a path under a regular file, or a directory we cannot write to is refused
  with one line (``InputError``, exit 2); an existing regular file is refused unless ``force``;
* missing parent directories are created when ``make_parents`` (the library default, and
  ``generate --out DIR``); a single-file ``--out`` of the CLI must name an existing directory
  (a typo in a directory name is refused, not silently created);
* the content is written to a temporary file in the target's directory and renamed over the target
  (``os.replace``, atomic on POSIX), so a reader never sees a half-written file and a failure leaves
  the old file (or nothing) in place;
* the file gets the normal permissions of a new file (``0o666`` minus the umask), not ``mkstemp``'s
  ``0o600``.
"""
from __future__ import annotations

import errno
import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Callable

from .errors import InputError


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def check_target(path: str | Path, force: bool = False, flag: str = "--out", make_parents: bool = True,
                 exists: str | None = None) -> Path:
    """Refuse a path that cannot (or must not) receive a regular file; return it as a Path. ``exists``: the
    message for an existing file without ``force`` (default: choose another path or pass --force)."""
    p = Path(path)
    if "\0" in str(path):
        raise InputError(f"{flag}: {str(path)!r} contains a NUL byte")
    if str(path) == "" or p.name in ("", ".", ".."):
        raise InputError(f"{flag}: {str(path)!r} is not a file name")
    try:
        st = os.stat(p)
    except FileNotFoundError:
        st = None
    except NotADirectoryError:
        st = None  # a parent is a regular file: reported below
    except OSError as e:
        raise InputError(f"{flag}: cannot use {p}: {e.strerror}") from None
    if st is not None:
        if stat.S_ISDIR(st.st_mode):
            raise InputError(f"{flag}: {p} is a directory; give a file name")
        if not stat.S_ISREG(st.st_mode):
            raise InputError(f"{flag}: {p} is not a regular file (a device, pipe or socket); refusing to replace it")
        if not force:
            raise InputError(exists or _exists_message(flag, p))
    writable_directory(p.parent if str(p.parent) else Path("."), p, flag, make_parents=make_parents)
    return p


def writable_directory(start: Path, target: Path, flag: str = "--out", make_parents: bool = True,
                       hint: str = "") -> Path:
    """The nearest existing ancestor of ``start`` (``start`` itself if it exists), refused unless it is a
    directory we can write into, on the way to ``target`` (``InputError``; ``hint`` ends the message of a
    non-directory); with ``make_parents`` False, ``start`` must exist."""
    anc = start
    while not anc.exists() and anc != anc.parent:
        if anc.is_symlink():  # a dangling link in the path
            raise InputError(f"{flag}: {anc} is a broken symbolic link")
        anc = anc.parent
    if not anc.is_dir():
        raise InputError(f"{flag}: {anc} is not a directory"
                         + ("" if anc == target else f", so {target} cannot be created under it") + hint)
    if anc != start and not make_parents:
        raise InputError(f"{flag}: directory {start} does not exist; create it first")
    if not os.access(anc, os.W_OK | os.X_OK):
        raise InputError(f"{flag}: cannot write to directory {anc} (permission denied)")
    return anc


def _exists_message(flag: str, p: Path) -> str:
    return f"{flag}: {p} already exists; choose another path or pass --force to overwrite"


def _link_into_place(tmp: str, target: Path) -> None:
    """Put the finished ``tmp`` at ``target`` without ever replacing a file there (``FileExistsError`` if one
    appeared since the check): a hard link, which fails on an existing target; where hard links are not
    supported, ``target`` is reserved with ``O_CREAT | O_EXCL`` and ``tmp`` renamed onto it."""
    try:
        os.link(tmp, target)
    except FileExistsError:
        raise
    except OSError as e:
        if e.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EXDEV, errno.EMLINK):
            raise
        os.close(os.open(target, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        os.replace(tmp, target)


def write_atomic(path: str | Path, write: Callable[[str], None], force: bool = False, flag: str = "--out",
                 suffix: str = ".tmp", make_parents: bool = True, exists: str | None = None) -> Path:
    """Create ``path`` atomically: ``write(tmp_path)`` fills a temporary file in the target directory
    (it may reopen the path, as native LP/MPS writers do), which is then put in place. ``suffix`` is the
    temporary file's ending (native writers choose the format from it). Without ``force`` the file is linked
    into place, so one that another process created meanwhile is never replaced (``exists``, or the default
    message, as for one that was there before)."""
    p = check_target(path, force, flag, make_parents, exists)
    parent = p.parent if str(p.parent) else Path(".")
    try:
        parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=parent, prefix=f".{p.name}.", suffix=suffix)
    except OSError as e:
        raise InputError(f"{flag}: cannot create {p}: {e.strerror or e}") from None
    os.close(fd)
    try:
        os.chmod(tmp, 0o666 & ~_umask())
        write(tmp)
        if not os.path.isfile(tmp) or (os.path.getsize(tmp) == 0):
            raise InputError(f"{flag}: writing {p} produced no data")
        if force:
            os.replace(tmp, p)
        else:
            try:
                _link_into_place(tmp, p)
            except FileExistsError:
                raise InputError(exists or _exists_message(flag, p)) from None
            _remove(tmp)
    except OSError as e:
        _remove(tmp)
        if e.errno in (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM):
            raise InputError(f"{flag}: cannot write {p}: {e.strerror}") from None
        raise
    except BaseException:
        _remove(tmp)
        raise
    return p


def _remove(tmp: str) -> None:
    try:
        os.unlink(tmp)
    except OSError:
        pass


def write_text(path: str | Path, text: str, force: bool = False, flag: str = "--out",
               make_parents: bool = True) -> Path:
    def fill(tmp: str) -> None:
        with open(tmp, "w") as fh:
            fh.write(text)
    return write_atomic(path, fill, force, flag, make_parents=make_parents)


def write_json(path: str | Path, data, force: bool = False, flag: str = "--out", make_parents: bool = True) -> Path:
    # serialise first: a value JSON cannot hold fails before any file is touched
    return write_text(path, json.dumps(data, indent=1) + "\n", force, flag, make_parents)


def write_instance_columns(path: str | Path, head: dict, columns: dict, force: bool = False,
                           flag: str = "--out", chunk: int = 100_000, make_parents: bool = True) -> Path:
    """A columnar v1 instance written as one stream (atomically, never silently overwriting):
    ``head``'s fields, then ``"requests": {column: [...]}`` from numpy arrays, ``chunk`` values at a
    time, so that a 10-million-request instance never exists as Python lists."""
    def fill(tmp: str) -> None:
        with open(tmp, "w") as fh:
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
    return write_atomic(path, fill, force, flag, make_parents=make_parents)


def write_parquet(path: str | Path, frame, force: bool = False, flag: str = "--out", make_parents: bool = True,
                  exists: str | None = None) -> Path:
    """A pandas DataFrame as Parquet, written to a temporary file and put into place (atomic; see write_atomic)."""
    return write_atomic(path, lambda tmp: frame.to_parquet(tmp, index=False), force, flag, suffix=".parquet.tmp",
                        make_parents=make_parents, exists=exists)
