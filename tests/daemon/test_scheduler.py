"""Scheduler behaviour with controlled time: jitter bounds, no overlap, coalescing, missed-run counting."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import time_machine

from probe.config import Agent, Module, ProbeConfig, Prober
from probe.scheduler import ProbeScheduler, trigger

T0 = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)


def test_jitter_stays_within_bounds() -> None:
    module = Module(prober=Prober.PING, interval=60, timeout=10, jitter=5)
    trig = trigger(module)
    prev = T0
    for _ in range(500):
        nxt = trig.get_next_fire_time(prev, prev)
        assert nxt is not None
        delta = (nxt - prev).total_seconds()
        assert 60 <= delta <= 65, delta
        prev = nxt


def test_default_jitter_is_ten_percent_and_zero_disables() -> None:
    assert Module(prober=Prober.PING, interval=120, timeout=10).effective_jitter == 12
    assert Module(prober=Prober.PING, interval=120, timeout=10, jitter="0s").effective_jitter == 0


class Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str, datetime]] = []
        self.missed: list[tuple[str, str, str]] = []
        self.release = asyncio.Event()

    async def job(self, agent: Agent, module_name: str, _module: Module) -> None:
        self.calls.append((agent.name, module_name, datetime.now(UTC)))
        await self.release.wait()

    def on_missed(self, agent: str, module: str, cause: str) -> None:
        self.missed.append((agent, module, cause))


def _config() -> ProbeConfig:
    return ProbeConfig(modules={"m": Module(prober=Prober.PING, interval=60, timeout=10, jitter=0)},
                       agents=[Agent(name="a", url="http://127.0.0.1:9", modules=["m"])])


async def _tick(s: ProbeScheduler) -> None:
    s.scheduler._process_jobs()  # what the scheduler's own timer calls; driven by hand under frozen time
    for _ in range(5):
        await asyncio.sleep(0)


async def test_first_run_at_start_no_overlap_coalescing_and_misfire_counting() -> None:
    rec = Recorder()
    with time_machine.travel(T0, tick=False) as clock:
        s = ProbeScheduler(rec.job, rec.on_missed)
        s.start()  # its own timer runs _process_jobs too; with time frozen both see the same clock
        try:
            s.sync(_config())
            await _tick(s)
            assert [c[:2] for c in rec.calls] == [("a", "m")]  # first run at start-up
            # the run is still going when the next one is due: counted as overlap, not started
            clock.shift(timedelta(seconds=60))
            await _tick(s)
            assert len(rec.calls) == 1 and rec.missed == [("a", "m", "overlap")]
            rec.release.set()
            await asyncio.sleep(0.01)
            # ten intervals pass at once: coalesced into a single run
            clock.shift(timedelta(seconds=600 + 10))
            await _tick(s)
            await asyncio.sleep(0.01)
            assert len(rec.calls) == 2
            # a run that can only start long after its time (beyond the grace) is a misfire
            clock.shift(timedelta(seconds=60 + 45))
            await _tick(s)
            await asyncio.sleep(0.01)
            assert len(rec.calls) == 2
            assert rec.missed[-1] == ("a", "m", "misfire")
        finally:
            s.shutdown()


async def test_sync_adds_changes_and_removes_jobs() -> None:
    rec = Recorder()
    s = ProbeScheduler(rec.job, rec.on_missed)
    s.scheduler.start(paused=True)
    try:
        cfg = _config()
        added, removed = s.sync(cfg)
        assert added == {"a\x1fm"} and removed == set()
        assert s.sync(cfg) == (set(), set())  # unchanged config keeps the schedule
        cfg2 = ProbeConfig(modules=cfg.modules, agents=[Agent(name="b", url="http://127.0.0.1:9", modules=["m"])])
        added, removed = s.sync(cfg2)
        assert added == {"b\x1fm"} and removed == {"a\x1fm"}
        assert [j.id for j in s.scheduler.get_jobs()] == ["b\x1fm"]
        job = s.scheduler.get_job("b\x1fm")
        assert job.max_instances == 1 and job.coalesce is True
    finally:
        s.shutdown()
