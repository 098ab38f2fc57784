"""The daemon's watch on itself: event-loop lag, garbage-collection pauses, and GC tuning.

A busy loop makes every probe slow and late, so its lag is exported (a histogram, and the p99 since the
previous scrape) apart from any agent's result. GC pauses are timed by a gc callback that only appends
to a bounded buffer (never a metric lock inside the collector); the sampler moves them into the histogram.

The fleet's lasting state (history rings, cached cards, Targets, metric children, interned values) is built run by
run, long after start-up (the first pass alone takes agents / first_pass_rate seconds), and every full collection
walks what is not frozen. So the same gc callback re-freezes at the end of a full collection when what survived it
has grown by a share of what is already frozen (`REFREEZE_GROWTH`): the state leaves the collector's view as it
grows, in a few steps (geometric), and a fleet that stopped growing is not frozen again. A freeze also freezes
whatever was alive then (runs under way); those are still freed by reference counting, but any cycle among them that
becomes garbage could only be freed by a collection, which frozen objects never see. `thaw` (every `THAW_PERIOD`,
and at each reload) gives everything back to the collector: the next full collection frees such cycles (and a
reload's dropped agents) and its survivors are frozen again, so nothing frozen is held for longer than that.
"""

from __future__ import annotations

import asyncio
import gc
import math
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from probe.metrics import Metrics
from probe.stall import StallWatch

# The lag sampler is probe.stall's StallWatch, a timer callback that re-arms itself: an idle daemon's loop
# (bench/sched_loop.py --jobs 0, CPU clock, shared 2-core machine, 2026-12-01, 3 rounds): 0.36 -> 0.29 % of a core
# against a task sleeping in a loop.
_MAX_SAMPLES = 8192  # lag samples kept between scrapes (about 7 minutes): bounded if nobody scrapes
# Measured with tests/daemon/fleet.py (1,000 agents on ping at 10 s, 40 s, shared 2-core machine, 2026-12-01),
# gc.freeze() after start-up plus this threshold against Python's (700, 10, 10) without freeze:
#   default            4.28 ms CPU per run, GC pause max 0.38 s, p99 0.04 s
#   (5000, 10, 10)     3.69 ms (-14 %),  max 0.18 s, p99 0.15 s   <- kept: most of the saving, half the max pause
#   (20000, 20, 50)    3.60 ms (-16 %),  max 0.31 s, p99 0.31 s
# Fewer young collections cost less in total; each is longer, so the p99 of the (far fewer) pauses rises.
# 5,000 -> 20,000 at 50,000 agents on 60 s (docs/performance.md, "The young generation's threshold"): the ~80 runs in
# flight allocate more than 5,000 objects within a run's life, so each young collection promoted live run state that
# the middle and full collections then walked again; at 20,000 most of it dies young. GC 9.5 -> 3.1 % of the CPU,
# 1.062 -> 0.973 ms CPU a probe (bench/fleet.py, interleaved); in-process (bench/gc_fleet.py) young collections
# 569 -> 38 a minute.
GC_THRESHOLD = (20_000, 10, 10)
REFREEZE_GROWTH = 0.25  # re-freeze when a full collection's survivors are at least this share of the frozen objects
REFREEZE_FLOOR = 10_000  # ... and at least this many (a small daemon is not frozen again for a handful of objects)
THAW_PERIOD = 3600.0  # seconds between thaws: the longest a frozen cycle that became garbage is kept


class SelfMonitor:
    def __init__(self, metrics: Metrics, on_lag: Callable[[float, float], None] | None = None) -> None:
        self.metrics = metrics
        self._on_lag = on_lag  # each lag sample, (loop time, lag): the admission governor's input
        self._lag: deque[float] = deque(maxlen=_MAX_SAMPLES)
        self._gc: deque[tuple[int, float]] = deque(maxlen=_MAX_SAMPLES)
        self._gc_start = 0.0
        self._watch = StallWatch(self._sampled)
        self._frozen = 0  # objects this monitor knows frozen (gc.get_freeze_count() walks them all: not per use)
        self._thaw_at = math.inf  # loop time of the next thaw
        self.refreezes = 0  # re-freezes after full collections, since start
        self._freezing = False
        metrics.gauge("event_loop_lag_p99_seconds").set_function(self.lag_p99_since_last)

    def start(self) -> None:
        if not self._watch.running:
            gc.callbacks.append(self._on_gc)
            self._loop = asyncio.get_running_loop()
            self._lag_hist = self.metrics.histogram("event_loop_lag_seconds")
            self._gc_hist = self.metrics.histogram("gc_pause_seconds")
            self._thaw_at = self._loop.time() + THAW_PERIOD
            self._frozen = gc.get_freeze_count()
            self._watch.start()

    async def stop(self) -> None:
        self._watch.stop()
        if self._on_gc in gc.callbacks:
            gc.callbacks.remove(self._on_gc)
            self.thaw()  # a stopped daemon's frozen cycles are the collector's again (tests run many in one process)

    def _sampled(self, now: float, lag: float) -> None:
        """Each lag sample (the watch's timer): into the histogram; GC pauses move from the buffer into theirs."""
        self._lag.append(lag)
        self._lag_hist.observe(lag)
        if self._on_lag is not None:
            self._on_lag(now, lag)
        while self._gc:
            generation, pause = self._gc.popleft()
            self._gc_hist.labels(str(generation)).observe(pause)
        if now >= self._thaw_at:
            self.thaw()

    def stalled_seconds(self) -> float:
        return self._watch.stalled_seconds()

    def lag_p99_since_last(self) -> float:
        """Called by the registry at scrape time (on the render thread): p99 of the samples since the last call."""
        samples = [self._lag.popleft() for _ in range(len(self._lag))]
        if not samples:
            return 0.0
        samples.sort()
        return samples[min(len(samples) - 1, int(0.99 * len(samples)))]

    def freeze(self, collect: bool = True) -> None:
        """tune_gc, and what is frozen now is the base later re-freezes grow from."""
        self._freezing = True  # its own collection is not a re-freeze: everything is frozen right after it
        try:
            tune_gc(collect)
        finally:
            self._freezing = False
        self._frozen = gc.get_freeze_count()

    def thaw(self) -> None:
        """Give every frozen object back to the collector (into the oldest generation): the next full collection
        frees the frozen cycles that became garbage, and freezes its survivors again (growth over nothing frozen)."""
        gc.unfreeze()
        self._frozen = 0
        if self._watch.running:
            self._thaw_at = self._loop.time() + THAW_PERIOD

    def _on_gc(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._gc_start = time.perf_counter()
            return
        generation = int(info.get("generation", 0))
        if generation == 2 and not self._freezing:
            self._refreeze()
        # the re-freeze is part of the pause: the loop stands still for it too
        self._gc.append((generation, time.perf_counter() - self._gc_start))

    def _refreeze(self) -> None:
        """At the end of a full collection every survivor is in the oldest generation, the young ones are empty:
        freeze them when they have grown enough over what is frozen (the lasting state built since)."""
        survivors = len(gc.get_objects(2))
        if survivors >= max(REFREEZE_FLOOR, REFREEZE_GROWTH * self._frozen):
            gc.freeze()
            self._frozen += survivors
            self.refreezes += 1


def tune_gc(collect: bool = True) -> None:
    """After start-up (and each reload): move the long-lived config and app objects out of the collector's
    view and raise the young-generation threshold (figures in docs/daemon.md). Frozen objects are still
    freed by reference counting when a reload drops them."""
    if collect:
        gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLD)
