"""Reading the TOML files a user may write (solvers.toml, cost-model profiles, bench suites): a missing
file, a directory, bytes that are not UTF-8 or invalid TOML are bad input (exit 2, naming the file), never a
traceback."""
from __future__ import annotations

import filecmp
import warnings
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

from .errors import InputError, LpbenchWarning

#: what :func:`note_shadowing` has already said (once per profile and process)
_NOTED: set[str] = set()

#: where a wheel carries the repository's ``models/`` and ``solvers.toml`` (setup.py copies them at build time)
PACKAGED = Path(__file__).resolve().parent / "_shipped"


def shipped(name: str) -> Path:
    """The shipped ``name`` (``models`` or ``solvers.toml``): the repository's own in a checkout or an editable
    install (a stale ``lpbench/_shipped`` left in a checkout cannot shadow it), else the copy inside the package
    that a wheel installed."""
    root = Path(__file__).resolve().parents[1]
    if (root / "pyproject.toml").is_file() and (root / name).exists():
        return root / name
    return PACKAGED / name


def read_toml(path, missing: str) -> dict:
    """The TOML document at ``path``; InputError(``missing``) if there is no such file."""
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise InputError(missing) from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory, not a TOML file") from None
    except OSError as e:
        raise InputError(f"{path}: cannot read it: {e.strerror}") from None
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: not UTF-8 text (byte {e.object[e.start]:#04x} at offset {e.start}); TOML files "
                         "are UTF-8") from None
    except tomllib.TOMLDecodeError as e:
        raise InputError(f"{path}: not valid TOML ({e})") from None


def search_order(places: list[Path]) -> list[Path]:
    """``places`` in order, each once: two spellings of one file or folder (relative and absolute, a link)
    count as one. The user's own places come before the shipped one, so the first definition of a name wins."""
    out: list[Path] = []
    for p in places:
        if not any(_same(p, q) for q in out):
            out.append(p)
    return out


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def is_shipped(path: Path, shipped: Path) -> bool:
    """Whether ``path`` is the shipped file or folder ``shipped``."""
    return _same(path, shipped)


def _identical(a: Path, b: Path) -> bool:
    """Whether files ``a`` and ``b`` have the same bytes (a checkout's own profiles beside an installed wheel's copy
    of them shadow nothing)."""
    try:
        return a.is_file() and b.is_file() and filecmp.cmp(a, b, shallow=False)
    except OSError:
        return False


def note_shadowing(what: str, path: Path, shipped: Path) -> None:
    """Say once per ``what`` and process (an LpbenchWarning; the CLI prints ``lpbench: warning: ...``) that ``what``
    is read from the user's ``path``, which shadows the shipped ``shipped`` of the same name."""
    if what not in _NOTED and not _identical(path, shipped):
        _NOTED.add(what)
        warnings.warn(f"{what} is read from {path}, which shadows the shipped {shipped}", LpbenchWarning, stacklevel=3)
