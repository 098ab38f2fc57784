"""Recent results per agent and module, bounded; the last failure is kept even when it scrolls out."""

from __future__ import annotations

from collections import deque

from probe.results import ProbeResult

Key = tuple[str, str]  # (agent, module)


class History:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._recent: dict[Key, deque[ProbeResult]] = {}
        self._last_failure: dict[Key, ProbeResult] = {}

    def add(self, module: str, result: ProbeResult) -> None:
        key = (result.agent, module)
        self._recent.setdefault(key, deque(maxlen=self.limit)).append(result)
        if not result.success:
            self._last_failure[key] = result

    def latest(self, agent: str, module: str | None = None) -> tuple[str, ProbeResult] | None:
        """The newest result of an agent (for one module, or across its modules)."""
        best: tuple[str, ProbeResult] | None = None
        for (a, m), results in self._recent.items():
            if a == agent and (module is None or m == module) and results:
                r = results[-1]
                if best is None or r.started_at > best[1].started_at:
                    best = (m, r)
        return best

    def recent(self, agent: str, module: str) -> list[ProbeResult]:
        return list(self._recent.get((agent, module), ()))

    def last_failure(self, agent: str, module: str) -> ProbeResult | None:
        return self._last_failure.get((agent, module))

    def keys(self) -> list[Key]:
        return list(self._recent)

    def forget(self, agent: str, module: str | None = None) -> None:
        for key in [k for k in self._recent if k[0] == agent and (module is None or k[1] == module)]:
            self._recent.pop(key, None)
            self._last_failure.pop(key, None)
