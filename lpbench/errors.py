"""Errors that the CLI turns into exit code 2 with one line per problem (never a traceback)."""
from __future__ import annotations


class InputError(Exception):
    """Bad user input. ``problems`` holds one human-readable line per problem:
    the field path, the offending value and what was expected."""

    def __init__(self, problems: list[str] | str, source: str | None = None):
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        self.source = source
        super().__init__("\n".join(self.lines()))

    def lines(self) -> list[str]:
        prefix = f"{self.source}: " if self.source else ""
        return [prefix + p for p in self.problems]


class PolicyError(RuntimeError):
    """A policy returned a batch the engine cannot execute (a bug in the policy)."""


class PolicyDiverged(PolicyError):
    """The policy does not finish this instance (e.g. repeated clearing with a small alpha)."""


class LpbenchWarning(UserWarning):
    """A run that goes on but should be read with care (e.g. thresholds outside a theorem's conditions); the
    CLI prints it as one line ``lpbench: warning: ...``."""
