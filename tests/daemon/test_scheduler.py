"""Scheduler behaviour with controlled time: phase slots, bounded jitter, first pass, no overlap, coalescing,
missed-run counting."""

from __future__ import annotations

import asyncio
import math
import statistics
from datetime import UTC, datetime, timedelta
from typing import Any

import time_machine

from probe.config import Agent, Module, ProbeConfig, Prober
from probe.scheduler import FAN_OUT_ID, TICK, PhaseTrigger, ProbeScheduler, first_run, job_id, phase_fraction

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
    # the run after a given one depends on that one alone: the same answer at any time, and a fresh trigger's
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


def _next_runs(s: ProbeScheduler) -> dict[str, float]:
    return s.next_runs()


async def test_schedule_is_stable_across_reloads_and_restarts_and_adding_an_agent_moves_no_one() -> None:
    rec = Recorder()
    with time_machine.travel(T0, tick=False):
        s = ProbeScheduler(rec.job, rec.on_missed, first_pass_rate=0)
        s.start(paused=True)
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
        s2.start(paused=True)
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
            trig = s.trigger("a", "m")
            assert trig is not None
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
    s.start(paused=True)
    try:
        cfg = _config([Agent(name="a", url=URL, modules=["m"])])
        added, removed = s.sync(cfg)
        assert added == {"a\x1fm"} and removed == set()
        assert s.sync(cfg) == (set(), set())  # unchanged config keeps the schedule
        cfg2 = ProbeConfig(modules=cfg.modules, agents=[Agent(name="b", url=URL, modules=["m"])])
        added, removed = s.sync(cfg2)
        assert added == {"b\x1fm"} and removed == {"a\x1fm"}
        assert list(s.next_runs()) == ["b\x1fm"] and s.next_run("a", "m") is None
        # apscheduler holds one job, the fan-out, whatever the fleet
        assert [j.id for j in s.scheduler.get_jobs()] == [FAN_OUT_ID]
    finally:
        s.shutdown()


class Concurrency:
    """A job that holds its run until released (for the chosen agents) and checks no job ever runs twice at once."""

    def __init__(self, hold: set[str] = frozenset()) -> None:  # type: ignore[assignment]
        self.hold = set(hold)
        self.active: dict[str, int] = {}
        self.starts: list[tuple[str, float, float]] = []  # agent, started (Unix), planned
        self.missed: list[tuple[str, str, str]] = []
        self.release = asyncio.Event()

    async def job(self, agent: Agent, _module_name: str, _module: Module, planned: float) -> None:
        self.active[agent.name] = self.active.get(agent.name, 0) + 1
        assert self.active[agent.name] == 1, agent.name  # never two runs of one job at once
        self.starts.append((agent.name, datetime.now(UTC).timestamp(), planned))
        try:
            if agent.name in self.hold:
                await self.release.wait()
        finally:
            self.active[agent.name] -= 1

    def on_missed(self, agent: str, module: str, cause: str) -> None:
        self.missed.append((agent, module, cause))

    def runs(self, since: float = 0.0) -> dict[str, int]:
        out: dict[str, int] = {}
        for agent, at, _p in self.starts:
            if at > since:
                out[agent] = out.get(agent, 0) + 1
        return out


async def _advance(s: ProbeScheduler, clock: Any, seconds: float, step: float = TICK) -> None:
    for _ in range(round(seconds / step)):
        clock.shift(timedelta(seconds=step))
        await _tick(s)


async def test_the_fan_out_runs_each_job_once_per_interval_through_overlap_reload_and_pause() -> None:
    interval = 10.0
    rec = Concurrency(hold={"agent-00003"})
    with time_machine.travel(T0, tick=False) as clock:
        s = ProbeScheduler(rec.job, rec.on_missed, first_pass_rate=0)  # every job at its own phase
        s.start()
        try:
            s.sync(_config(_agents(60), interval=interval))
            assert [j.id for j in s.scheduler.get_jobs()] == [FAN_OUT_ID]  # one apscheduler job for the fleet
            await _advance(s, clock, 2 * interval)
            runs = rec.runs()
            # every job twice in two intervals, at its phase (to the 50 ms tick), lateness against the planned tick;
            # the held one once: its second slot found it still running, counted as overlap, not started
            assert {a: n for a, n in runs.items() if a != "agent-00003"} == {
                a.name: 2 for a in _agents(60) if a.name != "agent-00003"}
            assert runs["agent-00003"] == 1 and rec.missed == [("agent-00003", "m", "overlap")]
            for agent, at, planned in rec.starts:
                phase = math.floor(phase_fraction(agent, "m") * interval / TICK) * TICK
                assert 0 <= at - planned <= TICK + 1e-6 and abs((planned - phase) % interval) < 1e-6, agent
            rec.release.set()
            await asyncio.sleep(0)

            # a reload: 10 removed, one changed (its URL), 5 added; the rest keep their slots
            before = s.next_runs()
            agents = _agents(50, start=10) + _agents(5, start=100)
            agents[0] = Agent(name="agent-00010", url=URL + "/moved", modules=["m"])
            added, removed = s.sync(_config(agents, interval=interval))
            assert removed == {job_id(f"agent-{i:05d}", "m") for i in range(10)}
            assert added == {job_id(a, "m") for a in ["agent-00010"] + [f"agent-{i:05d}" for i in range(100, 105)]}
            kept = set(before) - removed - added
            assert {j: t for j, t in s.next_runs().items() if j in kept} == {j: before[j] for j in kept}
            mark = datetime.now(UTC).timestamp()
            await _advance(s, clock, interval)
            assert rec.runs(mark) == {a.name: 1 for a in agents}  # the removed never again, the new at their phase
            changed = [(at, planned) for a, at, planned in rec.starts if a == "agent-00010" and at > mark]
            assert changed and changed[0][1] == s.trigger("agent-00010", "m").next_after(mark)  # type: ignore[union-attr]

            # paused: nothing starts; on resume each job runs once for its last slot (coalesced) when that slot is
            # within the grace (5 s), and counts one misfire otherwise
            s.pause()
            mark, missed = datetime.now(UTC).timestamp(), len(rec.missed)
            await _advance(s, clock, 3 * interval)
            assert rec.runs(mark) == {}
            s.resume()
            await _tick(s)
            ran = rec.runs(mark)
            misfired = {a for a, _m, cause in rec.missed[missed:] if cause == "misfire"}
            assert set(ran) | misfired == {a.name for a in agents} and not set(ran) & misfired
            assert set(ran.values()) == {1} and ran and misfired
            mark = datetime.now(UTC).timestamp()
            await _advance(s, clock, interval)
            assert rec.runs(mark) == {a.name: 1 for a in agents}  # and back on the schedule
        finally:
            s.shutdown()
    assert all(n == 0 for n in rec.active.values())


async def test_the_first_pass_through_the_fan_out_is_rate_limited() -> None:
    rec = Concurrency()
    n, rate = 200, 50.0
    with time_machine.travel(T0, tick=False) as clock:
        s = ProbeScheduler(rec.job, rec.on_missed, first_pass_rate=rate)
        s.start()
        try:
            s.sync(_config(_agents(n), interval=600))
            await _advance(s, clock, n / rate + 0.5)
        finally:
            s.shutdown()
    assert sorted(rec.runs()) == [a.name for a in _agents(n)] and set(rec.runs().values()) == {1}
    per_second: dict[int, int] = {}
    for _a, at, _p in rec.starts:
        per_second[int(at - T0.timestamp())] = per_second.get(int(at - T0.timestamp()), 0) + 1
    # the whole pass planned within N / rate seconds, each started at its tick, about `rate` a second: no burst
    assert max(p for _a, _at, p in rec.starts) - T0.timestamp() < n / rate
    assert all(0 <= at - p <= TICK + 1e-6 for _a, at, p in rec.starts)
    assert max(per_second.values()) < 1.5 * rate


async def test_a_job_added_to_a_running_idle_scheduler_starts_without_waiting_for_the_idle_wake_up() -> None:
    rec = Concurrency()
    s = ProbeScheduler(rec.job, rec.on_missed, first_pass_rate=50)
    s.start()
    try:
        await asyncio.sleep(0.05)  # no job: the fan-out sleeps for an hour
        s.sync(_config([Agent(name="a", url=URL, modules=["m"])]))
        for _ in range(100):
            if rec.starts:
                break
            await asyncio.sleep(0.01)
        assert [a for a, _at, _p in rec.starts] == ["a"]  # its first-pass run, within 1/50 s of the sync
    finally:
        s.shutdown()


async def test_a_failing_job_is_logged_and_the_schedule_goes_on(caplog: Any) -> None:
    calls: list[str] = []

    async def boom(agent: Agent, _m: str, _mod: Module, _planned: float) -> None:
        calls.append(agent.name)
        raise RuntimeError("a probe bug")

    with time_machine.travel(T0, tick=False) as clock:
        s = ProbeScheduler(boom, lambda *_: None, first_pass_rate=0)
        s.start()
        try:
            s.sync(_config(_agents(3), interval=10))
            await _advance(s, clock, 20)
        finally:
            s.shutdown()
    assert sorted(calls) == sorted(2 * [a.name for a in _agents(3)])
    assert any("raised an exception" in r.getMessage() for r in caplog.records)
