"""The probe's schedule: every agent x module job at a stable phase of its interval, on APScheduler 3's clock.

Every job fires at `phase + n * interval` on the Unix clock (phase and jitter on a 50 ms grid, `TICK`),
where the phase is a hash of agent and module: a fleet's runs are spread evenly over the interval from the
first minute on, an unchanged job keeps its slot across reloads and restarts, and adding an agent moves no
other job. Jitter is a small bounded delay after the slot (never added on top of the previous run, so it
cannot drift). A new or changed job gets one earlier first run, spread over a window sized by
`first_pass_rate`, so start-up probes at a bounded rate instead of all at once and small fleets still get
a result within a second.

APScheduler holds one job, the fan-out (`ProbeScheduler`): it wakes at the earliest run due and starts every
run due by then from a heap, each as one task, so the fleet's size costs apscheduler nothing per run.

Runs that cannot start are counted, never dropped silently: `overlap` when the previous run of the
same job is still going (never two at once), `misfire` when the loop was too busy to start it on time.
Deviation from the exporter guideline "run on scrape", documented in docs/: A2A invocations can be
slow and cost money, and counters/histograms need a schedule of their own.
"""

from __future__ import annotations

import asyncio
import hashlib
import heapq
import logging
import math
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Protocol

from apscheduler.executors.base import BaseExecutor
from apscheduler.job import Job
from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.base import BaseTrigger

from probe.config import Agent, Module, ProbeConfig

JobFunc = Callable[[Agent, str, Module, float], Awaitable[None]]  # ..., planned start (Unix time)
MissedFunc = Callable[[str, str, str], None]


class ScheduledJob(Protocol):
    """What a gate reads of a due job (`_Job`)."""

    agent: Agent
    module_name: str
    module: Module


class Admitting(Protocol):
    """The scheduler as a gate's waiting runs see it."""

    def launch(self, job: ScheduledJob, planned: float) -> None: ...
    def gone(self, job: ScheduledJob) -> None: ...


class Waiting(Protocol):
    def cancel(self) -> object: ...


class Gate(Protocol):
    """Where due runs wait for a probe slot without a task each (probe/runner.py `Runner`): `wait` answers None
    when the run may start now (a slot held for it: `held` runs it), or the entry it waits as; the gate then calls
    `launch` once a slot is held for it, or `gone` when it gave up (the skipped run counted by the gate)."""

    def wait(self, job: ScheduledJob, planned: float, owner: Admitting) -> Waiting | None: ...
    def held(self, agent: Agent, module_name: str, module: Module, planned: float) -> Awaitable[None]: ...
SEP = "\x1f"  # job ids are agent SEP module; neither may contain a control character
_M64 = (1 << 64) - 1
# Phases and jitter fall on a 50 ms grid, so the scheduler wakes once per tick for every job due in it rather than
# once per job: at 833 runs a second (50,000 agents at 60 s) its CPU per run fell from 155-217 to 82 µs (10,000
# jobs at 12 s, no-op jobs, 2026-12-01; 20 ms: 104 µs, 100 ms: 77 µs), when each run was still an apscheduler job.
# A run starts at most 50 ms off its exact phase; lateness is measured against the planned time.
TICK = 0.05
_log = logging.getLogger("a2a_probe.scheduler")


def job_id(agent: str, module: str) -> str:
    return f"{agent}{SEP}{module}"


def split_job_id(jid: str) -> tuple[str, str]:
    agent, _, module = jid.partition(SEP)
    return agent, module


def phase_fraction(agent: str, module: str) -> float:
    """Where in its interval a job runs, in [0, 1): a hash of its identity only, so it never moves."""
    digest = hashlib.blake2b(job_id(agent, module).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2.0**64


def _mix(x: int) -> int:
    """splitmix64: a cheap, well-spread hash of an integer (the per-slot jitter)."""
    x = (x + 0x9E3779B97F4A7C15) & _M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _M64
    return x ^ (x >> 31)


def misfire_grace(module: Module) -> float:
    """How late a run may start and still count: half an interval, so it never runs into the next one."""
    return max(1.0, module.interval / 2)


class PhaseTrigger(BaseTrigger):  # type: ignore[misc]  # apscheduler 3 ships no type hints
    """Fires at `phase + n * interval (+ jitter in [0, jitter))`, Unix seconds; jitter is per slot and bounded."""

    __slots__ = ("_seed", "interval", "jitter", "phase")

    def __init__(self, interval: float, phase: float, jitter: float, seed: int) -> None:
        self.interval = interval
        self.phase = phase
        self.jitter = min(jitter, interval / 4)
        self._seed = seed

    @classmethod
    def for_job(cls, agent: str, module_name: str, module: Module) -> PhaseTrigger:
        frac = phase_fraction(agent, module_name)
        phase = math.floor(frac * module.interval / TICK) * TICK
        return cls(module.interval, phase, module.effective_jitter, int(frac * 2**53))

    def slot_index(self, t: float) -> int:
        """The first slot at or after Unix time t."""
        return math.ceil((t - self.phase) / self.interval)

    def fire_time(self, n: int) -> float:
        slot = self.phase + n * self.interval
        if not self.jitter:
            return slot
        return slot + math.floor(self.jitter * (_mix(self._seed ^ (n & _M64)) / 2.0**64) / TICK) * TICK

    def next_after(self, t: float, *, min_gap: float = 0.0) -> float:
        return self.fire_time(self.slot_index(t + min_gap))

    def after(self, previous: float) -> float:
        """The run after the one at `previous`: the next slot's (jitter < interval/4 keeps it the next one); a
        first-pass run off the grid is followed by the first slot at least half an interval later."""
        return self.fire_time(self.slot_index(previous + self.interval / 2))

    def get_next_fire_time(self, previous_fire_time: datetime | None, now: datetime) -> datetime:
        """apscheduler's trigger API (the same times as the fan-out's)."""
        if previous_fire_time is None:
            return datetime.fromtimestamp(self.next_after(now.timestamp()), UTC)
        return datetime.fromtimestamp(self.after(previous_fire_time.timestamp()), UTC)

    def __str__(self) -> str:
        return f"phase[{self.interval:g}s @ {self.phase:.3f}s, jitter {self.jitter:g}s]"


def first_run(trig: PhaseTrigger, now: float, window: float) -> float:
    """The first run of a new job: its own slot, or earlier within `window` at the same fraction of it."""
    slot = trig.next_after(now)
    early = now + (trig.phase / trig.interval) * min(window, trig.interval)
    return min(slot, early)


class _Job:
    """One agent x module: what to run, its trigger, and its place in the fan-out heap."""

    __slots__ = ("agent", "grace", "id", "module", "module_name", "next", "seq", "trigger")

    def __init__(self, jid: str, agent: Agent, module_name: str, module: Module, trigger: PhaseTrigger,
                 first: float, seq: int) -> None:
        self.id, self.agent, self.module_name, self.module, self.trigger = jid, agent, module_name, module, trigger
        self.grace = float(math.ceil(misfire_grace(module)))  # whole seconds, as apscheduler's misfire_grace_time was
        self.next = first
        self.seq = seq


class InLoopExecutor(BaseExecutor):  # type: ignore[misc]  # apscheduler 3 ships no type hints
    """An apscheduler 3 executor (its pluggable API) that calls a synchronous job function inside the scheduler's
    own wake-up, on the event loop: no task, no thread, no instance count and no per-run events. Only the fan-out
    job runs here; it returns at once (it starts the due runs as tasks of their own)."""

    def submit_job(self, job: Job, run_times: list[datetime]) -> None:
        self._do_submit_job(job, run_times)

    def _do_submit_job(self, job: Job, run_times: list[datetime]) -> None:
        try:
            job.func(*job.args, **job.kwargs)
        except Exception:
            self._logger.exception("the scheduler's fan-out failed; it runs again at the next due time")


class _DueTrigger(BaseTrigger):  # type: ignore[misc]
    """The fan-out job's trigger: the earliest run due among all jobs, always after `now`."""

    def __init__(self, owner: ProbeScheduler) -> None:
        self._owner = owner

    def get_next_fire_time(self, previous_fire_time: datetime | None, now: datetime) -> datetime:
        t = self._owner.earliest()
        at = now + _IDLE if t is None else datetime.fromtimestamp(t, UTC)
        # strictly later than `now`: apscheduler asks again until the answer is (its catch-up loop), and the runs
        # due now are started by the call this answer follows
        return at if at > now else now + _EPSILON

    def __str__(self) -> str:
        return "due[fan-out]"


_IDLE = timedelta(hours=1)  # no job: the fan-out sleeps (a sync that adds one wakes it)
_EPSILON = timedelta(microseconds=1)
_SLACK = 1e-6  # a run due within a microsecond is due: apscheduler's clock has microseconds
FAN_OUT_ID = "a2a-probe-fan-out"


class ProbeScheduler:
    """Every agent x module job on one apscheduler 3 job that fans out.

    apscheduler stays the clock (its timer, pause/resume, shutdown), but holds one job: the fan-out, due at the
    earliest run of any job. Each wake-up starts every run due by then, from a heap of (time, job id, sequence)
    entries with lazy deletion, and puts each job back at its next fire time. Per run this is a heap pop and push and
    one task; apscheduler's per-job path (datetimes, `_get_run_times`, `submit_job` under a lock, a task for
    `run_coroutine_job`, a submission and an execution event, `Job._modify`, the job store) is gone.
    apscheduler's semantics per job are kept: coalescing (a job behind by several slots runs once, for the last),
    `overlap` when its previous run is still going (never two runs of one job at once), `misfire` when the last due
    slot is more than the grace (half an interval, whole seconds) behind.
    """

    def __init__(self, job: JobFunc, on_missed: MissedFunc, first_pass_rate: float = 50.0,
                 gate: Gate | None = None) -> None:
        self._job = job
        self.gate = gate  # None: every due run is a task at once, waiting in `job` for whatever it needs
        self._on_missed = on_missed
        self.first_pass_rate = first_pass_rate
        self.scheduler = AsyncIOScheduler(timezone=UTC, executors={"default": InLoopExecutor()})
        logging.getLogger("apscheduler.scheduler").setLevel(logging.ERROR)  # one job: its add/run lines say nothing
        self.jobs: dict[str, tuple[Agent, str, Module]] = {}
        self._entries: dict[str, _Job] = {}
        self._heap: list[tuple[float, str, int]] = []
        self._seq = 0
        self._running: dict[str, asyncio.Task[None] | Waiting] = {}  # job id -> its run under way (or waiting)
        self._fan_out = self.scheduler.add_job(self._tick, _DueTrigger(self), id=FAN_OUT_ID, name=FAN_OUT_ID,
                                               max_instances=1, coalesce=True, misfire_grace_time=None)

    @property
    def running(self) -> bool:
        return bool(self.scheduler.running)

    def start(self, paused: bool = False) -> None:
        self.scheduler.start(paused=paused)

    def pause(self) -> None:
        if self.scheduler.running:
            self.scheduler.pause()

    def resume(self) -> None:
        if self.scheduler.running:
            self.scheduler.resume()

    def shutdown(self) -> None:
        if self.scheduler.running:
            self.scheduler.shutdown(wait=False)
        for task in self._running.values():  # as apscheduler's executor did: runs still going are cancelled
            task.cancel()

    def sync(self, config: ProbeConfig) -> tuple[set[str], set[str]]:
        """Make the jobs match the config; return (added or changed, removed) job ids."""
        modules = config.all_modules()
        wanted = {job_id(a.name, m): (a, m, modules[m]) for a in config.agents for m in a.modules}
        removed = set(self.jobs) - set(wanted)
        for jid in removed:
            self._remove(jid)
        changed = {jid for jid, spec in wanted.items() if self.jobs.get(jid) != spec}
        # the first pass over the new jobs runs at first_pass_rate; 0 means: wait for each job's own slot
        window = len(changed) / self.first_pass_rate if self.first_pass_rate > 0 else math.inf
        now = time.time()
        for jid in changed:
            self._add(jid, *wanted[jid], now=now, window=window)
        if len(self._heap) > 2 * len(self._entries) + 1024:  # many stale entries (reloads): rebuild
            self._heap = [(e.next, jid, e.seq) for jid, e in self._entries.items()]
            heapq.heapify(self._heap)
        self._wake()
        return changed, removed

    def _add(self, jid: str, agent: Agent, module_name: str, module: Module, *, now: float, window: float) -> None:
        trig = PhaseTrigger.for_job(agent.name, module_name, module)
        self._seq += 1
        entry = self._entries[jid] = _Job(jid, agent, module_name, module, trig, first_run(trig, now, window),
                                          self._seq)
        heapq.heappush(self._heap, (entry.next, jid, entry.seq))
        self.jobs[jid] = (agent, module_name, module)

    def _remove(self, jid: str) -> None:
        self._entries.pop(jid, None)  # its heap entry goes stale
        self.jobs.pop(jid, None)

    def earliest(self) -> float | None:
        """The next run due among all jobs (Unix time), or None without jobs."""
        heap, entries = self._heap, self._entries
        while heap:
            t, jid, seq = heap[0]
            entry = entries.get(jid)
            if entry is not None and entry.seq == seq:
                return t
            heapq.heappop(heap)  # stale: removed or replaced
        return None

    def _wake(self) -> None:
        """After a sync: bring the fan-out forward if a new job is due before it (before start, start computes it)."""
        t = self.earliest()
        current = getattr(self._fan_out, "next_run_time", None)  # unset while the scheduler has not started
        if t is None or current is None or t >= current.timestamp():
            return
        self.scheduler.modify_job(FAN_OUT_ID, next_run_time=max(datetime.fromtimestamp(t, UTC), datetime.now(UTC)))

    def _tick(self) -> None:
        """The fan-out: start every run due by now, in (time, job id) order; each job moves on to its next slot."""
        now = time.time() + _SLACK
        heap, entries, running, gate = self._heap, self._entries, self._running, self.gate
        loop = asyncio.get_running_loop()
        while heap and heap[0][0] <= now:
            t, jid, seq = heapq.heappop(heap)
            entry = entries.get(jid)
            if entry is None or entry.seq != seq:
                continue  # stale
            trig, last = entry.trigger, t
            nxt = trig.after(last)
            while nxt <= now:  # behind by whole slots: coalesced into one run, for the last one due
                last, nxt = nxt, trig.after(nxt)
            entry.next = nxt
            heapq.heappush(heap, (nxt, jid, seq))  # the same sequence: the entry stays live
            if jid in running:
                self._on_missed(entry.agent.name, entry.module_name, "overlap")
            elif now - last > entry.grace:
                self._on_missed(entry.agent.name, entry.module_name, "misfire")
            elif gate is None:
                running[jid] = loop.create_task(self._run(entry, last, self._job))
            else:
                running[jid] = gate.wait(entry, last, self) or loop.create_task(self._run(entry, last, gate.held))

    def launch(self, job: ScheduledJob, planned: float) -> None:
        """The gate holds a slot for this waiting run now: it becomes a task."""
        assert self.gate is not None and isinstance(job, _Job)
        self._running[job.id] = asyncio.get_running_loop().create_task(self._run(job, planned, self.gate.held))

    def gone(self, job: ScheduledJob) -> None:
        assert isinstance(job, _Job)
        self._running.pop(job.id, None)

    async def _run(self, entry: _Job, planned: float, job: JobFunc) -> None:
        try:
            await job(entry.agent, entry.module_name, entry.module, planned)
        except Exception:
            _log.exception("Job %r raised an exception", entry.id)  # a probe bug: logged, the schedule goes on
        finally:
            self._running.pop(entry.id, None)

    def trigger(self, agent: str, module: str) -> PhaseTrigger | None:
        entry = self._entries.get(job_id(agent, module))
        return entry.trigger if entry is not None else None

    def next_run(self, agent: str, module: str) -> datetime | None:
        entry = self._entries.get(job_id(agent, module))
        return datetime.fromtimestamp(entry.next, UTC) if entry is not None else None

    def next_runs(self) -> dict[str, float]:
        """Every job's next run (Unix time)."""
        return {jid: e.next for jid, e in self._entries.items()}
