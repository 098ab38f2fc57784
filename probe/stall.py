"""How long the probe's own event loop stood still, and waits that do not blame an agent for it.

A wait for an agent ("the stream closes within 5 s", "the task is CANCELED within 5 s") measures the agent only
while the probe itself could run: a loop blocked by the probe's own work (a collection, a neighbour's flood, a
starved container) makes every answer late. `StallWatch` measures the stall (a timer that re-arms itself; how late
it fires is the loop's lag); the daemon's self-monitor is built on it and a suite run has its own. `patiently`
waits for an awaitable and, when the wait timed out while the loop stood still for a material share of it
(`material`), waits once more for what the stall took: `STALLED` when the agent still has not had its full time
of a running probe, never a timeout blamed on it.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable
from enum import Enum
from typing import TypeVar

LAG_PERIOD = 0.05  # seconds between lag samples: 20 wake-ups a second, negligible CPU
# A wait (or a run) is the probe's stall, not the agent's slowness, when the loop stood still for at least this share
# of it, and at least STALL_FLOOR seconds (the sampler's granularity)
STALL_SHARE = 0.25
STALL_FLOOR = 0.1

T = TypeVar("T")
StallClock = Callable[[], float]  # seconds the loop has stood still so far (monotonic)


def material(stalled: float, budget: float) -> bool:
    """Whether a stall of `stalled` seconds in a wait of `budget` seconds says more about the probe than the agent."""
    return stalled >= max(STALL_FLOOR, STALL_SHARE * budget)


def stall_note(stalled: float, waited: float) -> str:
    return (f"not judged: the probe's own event loop stood still {stalled:.2f}s of the {waited:.2f}s it waited, "
            "so the agent did not get its time")


class StallWatch:
    """The loop's lag, sampled by a timer callback that re-arms itself (not a task sleeping in a loop: a task's sleep
    costs a future, a second loop iteration and a coroutine resumption per wake-up). `on_sample(now, lag)` is
    called at each wake-up."""

    def __init__(self, on_sample: Callable[[float, float], None] | None = None) -> None:
        self._on_sample = on_sample
        self._timer: asyncio.TimerHandle | None = None
        self._armed = 0.0  # loop time the timer was armed at
        self._stalled = 0.0  # total lag seen: how long the loop has stood still since start
        self._woke: float | None = None  # loop time of the last wake-up

    @property
    def running(self) -> bool:
        return self._timer is not None

    def start(self) -> None:
        if self._timer is None:
            self._loop = asyncio.get_running_loop()
            self._arm(self._loop.time())

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def stalled_seconds(self) -> float:
        """Seconds the loop has stood still since start, counting a stall still going on (the sampler overdue).

        Called from the loop, so "overdue" means the current callback started late: the stall that delayed it."""
        if self._woke is None or self._timer is None:
            return self._stalled
        overdue = self._loop.time() - self._woke - LAG_PERIOD
        return self._stalled + max(0.0, overdue)

    def _arm(self, now: float) -> None:
        self._armed = now
        self._timer = self._loop.call_at(now + LAG_PERIOD, self._sample)

    def _sample(self) -> None:
        now = self._woke = self._loop.time()
        try:
            lag = max(0.0, now - self._armed - LAG_PERIOD)
            self._stalled += lag
            if self._on_sample is not None:
                self._on_sample(now, lag)
        finally:
            self._arm(now)  # re-armed whatever happened: the watch never stops by itself


class Waited(Enum):
    DONE = "done"
    TIMED_OUT = "timed_out"  # the agent had its full time of a running probe
    STALLED = "stalled"  # it did not: the probe's loop stood still through a material share of the wait


async def patiently(aw: Awaitable[T], timeout: float, clock: StallClock, *, limit: float = math.inf,
                    cancel: bool = True) -> tuple[Waited, float]:
    """Wait up to `timeout` for `aw`; after a timeout with a material stall, once more for the time the stall took
    (never past `limit` more seconds). Returns the outcome and the stall seen. `cancel`: a pending `aw` is
    cancelled on a timeout (as `asyncio.wait_for` does)."""
    fut = asyncio.ensure_future(aw)
    loop = asyncio.get_running_loop()
    started, stalled_before = loop.time(), clock()
    budget, extended = timeout, False
    try:
        while True:
            done, _ = await asyncio.wait({fut}, timeout=max(0.0, budget))
            stalled = clock() - stalled_before
            if done:
                return Waited.DONE, stalled
            running = loop.time() - started - stalled  # the time the agent had while the probe could run
            if running >= timeout * 0.99 or not material(stalled, timeout):
                return Waited.TIMED_OUT, stalled
            budget = min(timeout - running, limit - (loop.time() - started - timeout))
            if extended or budget <= 0:
                return Waited.STALLED, stalled
            extended = True
    finally:
        if cancel and not fut.done():
            fut.cancel()
