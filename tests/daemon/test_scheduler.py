"""Scheduler behaviour with controlled time: phase slots, bounded jitter, first pass, no overlap, coalescing,
missed-run counting."""

from __future__ import annotations

import asyncio
import math
import statistics
from datetime import UTC, datetime, timedelta

import time_machine

from probe.config import Agent, Module, ProbeConfig, Prober
from probe.scheduler import TICK, PhaseTrigger, ProbeScheduler, first_run, job_id, phase_fraction

T0 = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
URL = "http://127.0.0.1:9"


def _agents(n: int, start: int = 0) -> list[Agent]:
    return [Agent(name=f"agent-{i:05d}", url=URL, modules=["m"]) for i in range(start, start + n)]


def _config(agents: list[Agent], jitter: float = 0, interval: float = 60) -> ProbeConfig:
    return ProbeConfig(modules={"m": Module(prober=Prober.PING, interval=interval, timeout=10, jitter=jitter)},
                       agents=agents)


def test_phases_spread_a_fleet_evenly_over_the_interval() -> None:
    n, bins = 12_000, 60
    counts = [0] * bins
    for a in _agents(n):
        counts[int(phase_fraction(a.name, "m") * bins)] += 1
    mean = n / bins
    # a uniform hash: every one-second bin of a 60 s interval holds the mean +- 25% (bunching was 6-12 s)
    assert min(counts) > 0.75 * mean and max(counts) < 1.25 * mean, (min(counts), max(counts))
    assert statistics.pstdev(counts) < 1.5 * mean**0.5  # no worse than random placement


def test_phase_depends_on_agent_and_module_only() -> None:
    assert phase_fraction("a", "ping") == phase_fraction("a", "ping")
    assert phase_fraction("a", "ping") != phase_fraction("a", "invoke")
    assert phase_fraction("a", "ping") != phase_fraction("b", "ping")
    assert all(0 <= phase_fraction(f"x{i}", "m") < 1 for i in range(1000))


def test_fire_times_stay_on_their_slots_with_bounded_jitter_and_no_drift() -> None:
    module = Module(prober=Prober.PING, interval=60, timeout=10, jitter=5)
    trig = PhaseTrigger.for_job("a", "m", module)
    prev = trig.get_next_fire_time(None, T0)
    assert 0 <= (prev - T0).total_seconds() < 60 + 5
    offsets = []
    for _ in range(500):
        nxt = trig.get_next_fire_time(prev, prev)
        slot = trig.phase + trig.slot_index(nxt.timestamp() - trig.jitter) * 60  # the slot this run belongs to
        offset = nxt.timestamp() - slot
        assert 0 <= offset < 5, offset  # within [slot, slot + jitter): jitter never accumulates
        assert 55 < (nxt - prev).total_seconds() < 65
        offsets.append(offset)
        prev = nxt
    assert statistics.pstdev(offsets) > 0.5  # it is jitter, not a constant offset
    # the same slot always gets the same jitter: a restart or reload reproduces the schedule exactly
    again = PhaseTrigger.for_job("a", "m", module)
    assert again.fire_time(12345) == trig.fire_time(12345)
    # asked again after the same previous run (apscheduler asks twice a run): the same answer as a fresh trigger's
    first = trig.get_next_fire_time(prev, T0)
    assert trig.get_next_fire_time(prev, T0 + timedelta(days=1)) == first
    assert PhaseTrigger.for_job("a", "m", module).get_next_fire_time(prev, T0) == first
    assert trig.get_next_fire_time(first, T0) == again.get_next_fire_time(first, T0) > first


def test_fire_times_fall_on_the_tick_grid_so_one_wake_up_starts_every_job_due_in_it() -> None:
    module = Module(prober=Prober.PING, interval=60, timeout=10, jitter=1)
    for i in range(200):
        trig = PhaseTrigger.for_job(f"agent-{i}", "m", module)
        for n in (29_000_000, 29_000_001):
            ticks = trig.fire_time(n) / TICK
            assert abs(ticks - round(ticks)) < 1e-3, (i, n, ticks)


def test_default_jitter_is_small_and_zero_disables_and_large_is_refused() -> None:
    import pytest
    from pydantic import ValidationError

    assert Module(prober=Prober.PING, interval=120, timeout=10).effective_jitter == 1.0
    assert Module(prober=Prober.PING, interval=10, timeout=5).effective_jitter == 0.2
    assert Module(prober=Prober.PING, interval=120, timeout=10, jitter="0s").effective_jitter == 0
    with pytest.raises(ValidationError, match="quarter of the interval"):
        Module(prober=Prober.PING, interval=60, timeout=10, jitter=20)


def _next_runs(s: ProbeScheduler) -> dict[str, datetime]:
    return {j.id: j.next_run_time for j in s.scheduler.get_jobs()}


async def test_schedule_is_stable_across_reloads_and_restarts_and_adding_an_agent_moves_no_one() -> None:
    rec = Recorder()
    with time_machine.travel(T0, tick=False):
        s = ProbeScheduler(rec.job, rec.on_missed, first_pass_rate=0)
        s.scheduler.start(paused=True)
        try:
            cfg = _config(_agents(200))
            s.sync(cfg)
            before = _next_runs(s)
            assert s.sync(cfg) == (set(), set())  # a reload of the same config touches nothing
            assert _next_runs(s) == before
            added, _ = s.sync(_config(_agents(201)))
            assert added == {job_id("agent-00200", "m")}
            after = _next_runs(s)
            assert {k: v for k, v in after.items() if k in before} == before  # no other job moved
        finally:
            s.shutdown()
        # a restart (a new scheduler, same config) puts every job on the same slot
        s2 = ProbeScheduler(rec.job, rec.on_missed, first_pass_rate=0)
        s2.scheduler.start(paused=True)
        try:
            s2.sync(_config(_agents(200)))
            assert _next_runs(s2) == before
        finally:
            s2.shutdown()


def test_first_pass_is_rate_limited_and_spread() -> None:
    module = Module(prober=Prober.PING, interval=600, timeout=10, jitter=0)
    now = T0.timestamp()
    n, rate = 1000, 50.0
    firsts = [first_run(PhaseTrigger.for_job(a.name, "m", module), now, n / rate) - now for a in _agents(n)]
    assert max(firsts) < n / rate  # the whole first pass within N / rate seconds, not the interval
    per_second = [0] * int(n / rate)
    for f in firsts:
        per_second[int(f)] += 1
    assert max(per_second) < 1.5 * rate  # about `rate` runs a second, no burst at start-up


class Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str, datetime, float]] = []
        self.missed: list[tuple[str, str, str]] = []
        self.release = asyncio.Event()
        self.block = True

    async def job(self, agent: Agent, module_name: str, _module: Module, planned: float) -> None:
        self.calls.append((agent.name, module_name, datetime.now(UTC), planned))
        if self.block:
            await self.release.wait()

    def on_missed(self, agent: str, module: str, cause: str) -> None:
        self.missed.append((agent, module, cause))


async def _tick(s: ProbeScheduler) -> None:
    s.scheduler._process_jobs()  # what the scheduler's own timer calls; driven by hand under frozen time
    for _ in range(5):
        await asyncio.sleep(0)


async def test_frozen_clock_every_job_starts_within_its_phase_window() -> None:
    rec = Recorder()
    rec.block = False
    n, interval, jitter, step = 300, 60.0, 1.0, 0.25
    with time_machine.travel(T0, tick=False) as clock:
        s = ProbeScheduler(rec.job, rec.on_missed, first_pass_rate=0)
        s.start()
        try:
            s.sync(_config(_agents(n), jitter=jitter, interval=interval))
            for _ in range(int((2 * interval + jitter) / step) + 2):  # two intervals (+ jitter) in quarter seconds
                clock.shift(timedelta(seconds=step))
                await _tick(s)
        finally:
            s.shutdown()
    assert rec.missed == []
    runs: dict[str, list[float]] = {}
    for agent, _m, at, planned in rec.calls:
        runs.setdefault(agent, []).append(at.timestamp())
        assert 0 <= at.timestamp() - planned <= step + 1e-6  # started when planned (to the clock step)
    assert len(runs) == n and all(len(v) in (2, 3) for v in runs.values()), {len(v) for v in runs.values()}
    for agent, times in runs.items():
        phase = math.floor(phase_fraction(agent, "m") * interval / TICK) * TICK  # the phase, on the scheduler's grid
        assert 0 <= phase_fraction(agent, "m") * interval - phase < TICK
        for t in times:
            into_slot = (t - phase) % interval
            assert into_slot <= jitter + step + 1e-6, (agent, into_slot)  # inside [slot, slot + jitter + step]
    # and spread: no quarter second holds more than a few of the 300 starts (5 per second on average)
    per_step: dict[int, int] = {}
    for _a, _m, at, _p in rec.calls:
        per_step[int(at.timestamp() / step)] = per_step.get(int(at.timestamp() / step), 0) + 1
    assert max(per_step.values()) <= 8


async def test_no_overlap_coalescing_and_misfire_counting() -> None:
    rec = Recorder()
    with time_machine.travel(T0, tick=False) as clock:
        s = ProbeScheduler(rec.job, rec.on_missed)
        s.start()  # its own timer runs _process_jobs too; with time frozen both see the same clock
        try:
            s.sync(_config([Agent(name="a", url=URL, modules=["m"])]))
            clock.shift(timedelta(seconds=0.05))  # one new job: its first-pass run is within 1/50 s
            await _tick(s)
            assert [c[:2] for c in rec.calls] == [("a", "m")]
            trig = s.scheduler.get_job(job_id("a", "m")).trigger
            # the run is still going when the next one is due: counted as overlap, not started
            clock.move_to(datetime.fromtimestamp(trig.next_after(T0.timestamp() + 31), UTC))
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
        cfg = _config([Agent(name="a", url=URL, modules=["m"])])
        added, removed = s.sync(cfg)
        assert added == {"a\x1fm"} and removed == set()
        assert s.sync(cfg) == (set(), set())  # unchanged config keeps the schedule
        cfg2 = ProbeConfig(modules=cfg.modules, agents=[Agent(name="b", url=URL, modules=["m"])])
        added, removed = s.sync(cfg2)
        assert added == {"b\x1fm"} and removed == {"a\x1fm"}
        assert [j.id for j in s.scheduler.get_jobs()] == ["b\x1fm"]
        job = s.scheduler.get_job("b\x1fm")
        assert job.max_instances == 1 and job.coalesce is True
    finally:
        s.shutdown()


def test_the_heap_job_store_answers_as_apschedulers_memory_store_does() -> None:
    """Random adds, updates (same time, new time, paused), removals and due-job rounds, replayed on both stores:
    every answer the scheduler asks for is the same, in the same order."""
    import random
    from types import SimpleNamespace

    import pytest
    from apscheduler.jobstores.base import ConflictingIdError, JobLookupError
    from apscheduler.jobstores.memory import MemoryJobStore

    from probe.scheduler import HeapJobStore

    rnd = random.Random(15)
    heap, memory = HeapJobStore(), MemoryJobStore()
    now = T0
    ids = [f"job-{i:03d}" for i in range(60)]

    def job(jid: str, at: datetime | None) -> SimpleNamespace:  # the two attributes a store reads
        return SimpleNamespace(id=jid, next_run_time=at)

    def when() -> datetime | None:
        if rnd.random() < 0.1:
            return None  # a paused job
        return now + timedelta(seconds=rnd.choice([0.0, 0.05, 0.05, 1.0, -2.0, rnd.uniform(-5, 30)]))

    for _step in range(3000):
        jid, op = rnd.choice(ids), rnd.random()
        present = memory.lookup_job(jid) is not None
        if op < 0.35:
            j = job(jid, when())
            if present:
                for store in (heap, memory):
                    with pytest.raises(ConflictingIdError):
                        store.add_job(j)
            else:
                heap.add_job(j)
                memory.add_job(j)
        elif op < 0.7:
            j = job(jid, rnd.choice([when(), getattr(memory.lookup_job(jid), "next_run_time", None)]))
            if present:
                heap.update_job(j)
                memory.update_job(j)
            else:
                with pytest.raises(JobLookupError):
                    heap.update_job(j)
        elif op < 0.8:
            if present:
                heap.remove_job(jid)
                memory.remove_job(jid)
            else:
                with pytest.raises(JobLookupError):
                    heap.remove_job(jid)
        else:  # a scheduler round: the due jobs, each moved on to a later time (or removed), as _process_jobs does
            now += timedelta(seconds=rnd.uniform(0, 2))
            due = memory.get_due_jobs(now)
            assert [j.id for j in heap.get_due_jobs(now)] == [j.id for j in due]
            for j in due:
                if rnd.random() < 0.1:
                    heap.remove_job(j.id)
                    memory.remove_job(j.id)
                elif rnd.random() < 0.9:
                    later = job(j.id, now + timedelta(seconds=rnd.uniform(0.05, 20)))
                    heap.update_job(later)
                    memory.update_job(later)
        assert heap.get_next_run_time() == memory.get_next_run_time()
        assert [j.id for j in heap.get_all_jobs()] == [j.id for j in memory.get_all_jobs()]
        assert heap.lookup_job(jid) is memory.lookup_job(jid)
    assert len(heap._heap) <= 2 * len(heap._jobs) + 1024 + 1  # stale entries stay bounded
    heap.remove_all_jobs()
    assert heap.get_all_jobs() == [] and heap.get_next_run_time() is None and heap.get_due_jobs(now) == []
