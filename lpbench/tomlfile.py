"""Reading the TOML files a user may write (solvers.toml, cost-model profiles, bench suites): a missing
file or invalid TOML is bad input (exit 2, naming the file), never a traceback."""
from __future__ import annotations

from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

from .errors import InputError


def read_toml(path, missing: str) -> dict:
    """The TOML document at ``path``; InputError(``missing``) if there is no such file."""
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise InputError(missing) from None
    except tomllib.TOMLDecodeError as e:
        raise InputError(f"{path}: not valid TOML ({e})") from None
