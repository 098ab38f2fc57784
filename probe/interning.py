"""One object for equal values that the daemon keeps per agent (50,000 agents at scale): a bounded table of the
first object seen for each value. Past the bound a value is kept as given (its agent's own object)."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Generic, TypeVar

T = TypeVar("T", bound=Hashable)


class Interned(Generic[T]):
    __slots__ = ("_kept", "_limit")

    def __init__(self, limit: int) -> None:
        self._kept: dict[T, T] = {}
        self._limit = limit

    def __call__(self, value: T) -> T:
        kept = self._kept.get(value)
        if kept is not None:
            return kept
        if len(self._kept) < self._limit:
            self._kept[value] = value
        return value

    def __len__(self) -> int:
        return len(self._kept)
