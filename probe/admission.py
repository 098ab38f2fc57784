"""Admission by the event loop's lag: how many probes run at once while the probe's own CPU is the bottleneck.

The slots are sized for the network (`runner.auto_concurrency`: slow agents hold a slot each while they wait), which
is right while the loop keeps up. When it does not, more runs at once add no throughput: each run only takes longer
(the probe's own queueing, measured as the agent's latency) and everything it holds lives through the young
collections into the oldest generation, which every full collection walks. Measured with bench/gc_fleet.py (50,000
agents on ping at 60 s, one core, 2026-12-05): 1,024 slots at once served 817 probes/s at 1.221 ms CPU a probe, GC
20.5 % of it, 25,000 runs waiting; 64 slots served all 846/s due at 1.018 ms, GC 7.4 %, none waiting. The thresholds
from bench/fleet.py's steady state (docs/performance.md, "The lag governor"): 3 / 10 ms held 16-27 slots, too few to
keep up; 20 / 50 ms settled at 86-108 (1.272 ms a probe); 12 / 30 ms, kept: 1.244 ms (1.428 without a governor).

So the governor caps the slots (`Slots.govern`) from the loop's lag, additive-increase / multiplicative-decrease on
the median lag sample of each `CONTROL_PERIOD` (a lone GC pause is one sample, not a median): above `LAG_HIGH` the cap
drops to `DECREASE` of the runs in flight; below `LAG_LOW`, with runs waiting for a slot and every open slot held, it
grows by `INCREASE`; never below `MIN_CAP` (slow agents keep getting slots) nor above the configured limit. An idle or
network-bound daemon has no lag, and its cap stays at the limit.
"""

from __future__ import annotations

import math
from typing import Protocol

import structlog

log = structlog.get_logger("a2a_probe.admission")

CONTROL_PERIOD = 1.0  # seconds of lag samples (20 of them: probe.stall.LAG_PERIOD) per decision
LAG_HIGH = 0.030  # median lag above which the loop is the bottleneck
LAG_LOW = 0.012  # median lag below which it has room
DECREASE = 0.8
INCREASE = 1.25
MIN_CAP = 16


class Governed(Protocol):
    """What the governor reads and sets: probe.runner.Slots."""

    limit: int
    cap: int
    used: int

    @property
    def waiting(self) -> int: ...

    @property
    def open(self) -> int: ...

    def govern(self, cap: int) -> None: ...


class Governor:
    """Fed every lag sample (`sample`, the self-monitor's StallWatch callback); decides once a `CONTROL_PERIOD`."""

    def __init__(self, slots: Governed) -> None:
        self.slots = slots
        self._lags: list[float] = []
        self._decide_at: float | None = None  # loop time of the next decision
        self.changes = 0

    def sample(self, now: float, lag: float) -> None:
        self._lags.append(lag)
        if self._decide_at is None:
            self._decide_at = now + CONTROL_PERIOD
        if now < self._decide_at:
            return
        self._decide_at = now + CONTROL_PERIOD
        lags, self._lags = sorted(self._lags), []
        self.decide(lags[len(lags) // 2])

    def decide(self, lag: float) -> None:
        """One decision on the period's median lag."""
        slots = self.slots
        if lag > LAG_HIGH:
            cap = max(MIN_CAP, int(min(slots.cap, slots.used) * DECREASE))
        elif lag < LAG_LOW and slots.waiting and slots.used >= slots.open:
            cap = max(slots.cap + 1, math.ceil(slots.cap * INCREASE))
        else:
            return
        cap = min(cap, slots.limit)
        if cap == slots.cap:
            return
        was = slots.cap
        slots.govern(cap)
        self.changes += 1
        if (was >= slots.limit) != (cap >= slots.limit):  # entering or leaving the governed state: worth a log line
            log.info("admission_capped" if cap < slots.limit else "admission_restored", open_slots=cap,
                     slots=slots.limit, loop_lag_median_seconds=round(lag, 4))
