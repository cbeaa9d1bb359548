"""Reading the TOML files a user may write (solvers.toml, cost-model profiles, bench suites): a missing
file, a directory, bytes that are not UTF-8 or invalid TOML are bad input (exit 2, naming the file), never a
traceback."""
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
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory, not a TOML file") from None
    except OSError as e:
        raise InputError(f"{path}: cannot read it: {e.strerror}") from None
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: not UTF-8 text (byte {e.object[e.start]:#04x} at offset {e.start}); TOML files "
                         "are UTF-8") from None
    except tomllib.TOMLDecodeError as e:
        raise InputError(f"{path}: not valid TOML ({e})") from None
