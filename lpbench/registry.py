"""Tiny name -> class registries filled by a decorator, so that `lpbench list ...` and the CLI
choices come from the code itself (policies, cost-model forms, formulations, solver backends)."""
from __future__ import annotations

from typing import Callable, Generic, TypeVar

T = TypeVar("T")


class Registry(Generic[T]):
    def __init__(self, kind: str):
        self.kind = kind
        self._items: dict[str, T] = {}

    def register(self, name: str) -> Callable[[T], T]:
        def deco(obj: T) -> T:
            if name in self._items:
                raise ValueError(f"{self.kind} {name!r} registered twice")
            self._items[name] = obj
            return obj

        return deco

    def get(self, name: str) -> T:
        from .errors import InputError

        if name not in self._items:
            raise InputError(f"unknown {self.kind} {name!r}; expected one of: {', '.join(self.names())}")
        return self._items[name]

    def names(self) -> list[str]:
        return sorted(self._items)

    def items(self):
        return sorted(self._items.items())

    def __contains__(self, name: str) -> bool:
        return name in self._items
