"""APScheduler 3 jobs, one per agent and module, each at a stable phase of its interval.

Every job fires at `phase + n * interval` on the Unix clock (phase and jitter on a 50 ms grid, `TICK`),
where the phase is a hash of agent and module: a fleet's runs are spread evenly over the interval from the
first minute on, an unchanged job keeps its slot across reloads and restarts, and adding an agent moves no
other job. Jitter is a small bounded delay after the slot (never added on top of the previous run, so it
cannot drift). A new or changed job gets one earlier first run, spread over a window sized by
`first_pass_rate`, so start-up probes at a bounded rate instead of all at once and small fleets still get
a result within a second.

Runs that cannot start are counted, never dropped silently: `overlap` when the previous run of the
same job is still going (max_instances=1), `misfire` when the loop was too busy to start it on time.
Deviation from the exporter guideline "run on scrape", documented in docs/: A2A invocations can be
slow and cost money, and counters/histograms need a schedule of their own.
"""

from __future__ import annotations

import hashlib
import heapq
import inspect
import logging
import math
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

from apscheduler.events import (
    EVENT_JOB_MAX_INSTANCES,
    EVENT_JOB_MISSED,
    EVENT_JOB_SUBMITTED,
    JobEvent,
    JobSubmissionEvent,
)
from apscheduler.job import Job
from apscheduler.jobstores.base import BaseJobStore, ConflictingIdError, JobLookupError
from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.base import BaseTrigger
from apscheduler.util import datetime_to_utc_timestamp

from probe.config import Agent, Module, ProbeConfig

JobFunc = Callable[[Agent, str, Module, float], Awaitable[None]]  # ..., planned start (Unix time)
MissedFunc = Callable[[str, str, str], None]
SEP = "\x1f"  # job ids are agent SEP module; neither may contain a control character
_M64 = (1 << 64) - 1
# Phases and jitter fall on a 50 ms grid, so the scheduler wakes once per tick for every job due in it rather than
# once per job: at 833 runs a second (50,000 agents at 60 s) its CPU per run fell from 155-217 to 82 µs (10,000
# jobs at 12 s, no-op jobs, 2026-12-01; 20 ms: 104 µs, 100 ms: 77 µs). A run starts at most 50 ms off its exact
# phase; lateness is measured against the tick.
TICK = 0.05


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

    __slots__ = ("_memo", "_seed", "interval", "jitter", "phase")

    def __init__(self, interval: float, phase: float, jitter: float, seed: int) -> None:
        self.interval = interval
        self.phase = phase
        self.jitter = min(jitter, interval / 4)
        self._seed = seed
        # apscheduler asks twice per run for the fire time after the same previous one (in Job._get_run_times,
        # then to update the job): the second answer is the first, 6.7 µs a run saved
        self._memo: tuple[datetime, datetime] | None = None

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

    def get_next_fire_time(self, previous_fire_time: datetime | None, now: datetime) -> datetime:
        if previous_fire_time is None:
            t = self.next_after(now.timestamp())
        else:
            memo = self._memo
            if memo is not None and memo[0] is previous_fire_time:
                return memo[1]  # depends on the previous fire time alone
            # the slot after the previous run's (jitter < interval/4 keeps this the next one); a first-pass
            # run off the grid is followed by the first slot at least half an interval later
            t = self.next_after(previous_fire_time.timestamp(), min_gap=self.interval / 2)
            nxt = datetime.fromtimestamp(t, UTC)
            self._memo = (previous_fire_time, nxt)
            return nxt
        return datetime.fromtimestamp(t, UTC)

    def __str__(self) -> str:
        return f"phase[{self.interval:g}s @ {self.phase:.3f}s, jitter {self.jitter:g}s]"


def first_run(trig: PhaseTrigger, now: float, window: float) -> float:
    """The first run of a new job: its own slot, or earlier within `window` at the same fraction of it."""
    slot = trig.next_after(now)
    early = now + (trig.phase / trig.interval) * min(window, trig.interval)
    return min(slot, early)


class HeapJobStore(BaseJobStore):  # type: ignore[misc]  # apscheduler 3 ships no type hints
    """apscheduler's MemoryJobStore, on a heap: the same answers, without its sorted list.

    MemoryJobStore keeps every job in one list sorted by next run time, so each run's update is a bisection in
    Python (twice) and a delete and an insert that move the list: per run, O(log n) Python steps plus O(n)
    memory moves at 10,000-50,000 jobs. Here the order lives in a heap of (timestamp, job id, sequence) entries
    with lazy deletion: an update or removal leaves the old entry behind, stale (its sequence is no longer the
    job's), and stale entries are dropped when they reach the top. Due jobs come out in the same order
    (timestamp, then id); paused jobs (no next run time) are in no heap entry. Single-threaded use only, as the
    asyncio scheduler makes it (apscheduler also holds its job-store lock around every call).
    bench/sched_loop.py (no-op probe, CPU clock, shared machine): 10,000 jobs at 12 s 164 -> 155 µs a run,
    50,000 at 60 s 195 -> 149 µs.
    """

    def __init__(self) -> None:
        super().__init__()
        self._jobs: dict[str, tuple[Job, float | None, int]] = {}  # id -> (job, timestamp, sequence)
        self._heap: list[tuple[float, str, int]] = []
        self._seq = 0

    def _push(self, job: Job) -> None:
        self._seq += 1
        timestamp = datetime_to_utc_timestamp(job.next_run_time)
        self._jobs[job.id] = (job, timestamp, self._seq)
        if timestamp is not None:
            heapq.heappush(self._heap, (timestamp, job.id, self._seq))
            if len(self._heap) > 2 * len(self._jobs) + 1024:  # many stale entries (reloads): rebuild
                self._heap = [(ts, jid, seq) for jid, (_j, ts, seq) in self._jobs.items() if ts is not None]
                heapq.heapify(self._heap)

    def _live(self, entry: tuple[float, str, int]) -> bool:
        held = self._jobs.get(entry[1])
        return held is not None and held[2] == entry[2]

    def lookup_job(self, job_id: str) -> Job | None:
        held = self._jobs.get(job_id)
        return held[0] if held is not None else None

    def get_due_jobs(self, now: datetime) -> list[Job]:
        now_timestamp = datetime_to_utc_timestamp(now)
        heap, due = self._heap, []
        while heap and heap[0][0] <= now_timestamp:
            entry = heapq.heappop(heap)
            if self._live(entry):
                due.append(entry)
        for entry in due:  # still live until the scheduler updates or removes them: keep their entries
            heapq.heappush(heap, entry)
        return [self._jobs[jid][0] for _ts, jid, _seq in due]

    def get_next_run_time(self) -> datetime | None:
        heap = self._heap
        while heap and not self._live(heap[0]):
            heapq.heappop(heap)
        return self._jobs[heap[0][1]][0].next_run_time if heap else None

    def get_all_jobs(self) -> list[Job]:
        ordered = sorted(self._jobs.values(), key=lambda h: (math.inf if h[1] is None else h[1], h[0].id))
        return [job for job, _ts, _seq in ordered]

    def add_job(self, job: Job) -> None:
        if job.id in self._jobs:
            raise ConflictingIdError(job.id)
        self._push(job)

    def update_job(self, job: Job) -> None:
        if job.id not in self._jobs:
            raise JobLookupError(job.id)
        self._push(job)

    def remove_job(self, job_id: str) -> None:
        if self._jobs.pop(job_id, None) is None:
            raise JobLookupError(job_id)

    def remove_all_jobs(self) -> None:
        self._jobs = {}
        self._heap = []

    def shutdown(self) -> None:
        self.remove_all_jobs()


class ProbeScheduler:
    def __init__(self, job: JobFunc, on_missed: MissedFunc, first_pass_rate: float = 50.0) -> None:
        self._job = job
        self._on_missed = on_missed
        self.first_pass_rate = first_pass_rate
        self.scheduler = AsyncIOScheduler(timezone=UTC, jobstores={"default": HeapJobStore()})
        # missed and overlapping runs are counted (a2a_probe_scheduler_missed_runs_total); a warning line per
        # run on top would make an overloaded daemon spend its time logging. Job errors still log.
        for name in ("apscheduler.scheduler", "apscheduler.executors.default"):
            logging.getLogger(name).setLevel(logging.ERROR)
        self.scheduler.add_listener(self._missed, EVENT_JOB_MAX_INSTANCES | EVENT_JOB_MISSED)
        self.scheduler.add_listener(self._submitted, EVENT_JOB_SUBMITTED)
        self.jobs: dict[str, tuple[Agent, str, Module]] = {}
        self._planned: dict[str, float] = {}  # job id -> the planned start of its current run (Unix time)

    @property
    def running(self) -> bool:
        return bool(self.scheduler.running)

    def start(self) -> None:
        self.scheduler.start()

    def pause(self) -> None:
        if self.scheduler.running:
            self.scheduler.pause()

    def shutdown(self) -> None:
        if self.scheduler.running:
            self.scheduler.shutdown(wait=False)

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
        return changed, removed

    def _add(self, jid: str, agent: Agent, module_name: str, module: Module, *, now: float, window: float) -> None:
        trig = PhaseTrigger.for_job(agent.name, module_name, module)
        self.scheduler.add_job(
            self._fire, trig, args=(agent, module_name, module), id=jid, name=jid,
            max_instances=1, coalesce=True, misfire_grace_time=math.ceil(misfire_grace(module)),
            next_run_time=datetime.fromtimestamp(first_run(trig, now, window), UTC), replace_existing=True,
        )
        self.jobs[jid] = (agent, module_name, module)

    def _remove(self, jid: str) -> None:
        if self.scheduler.get_job(jid) is not None:
            self.scheduler.remove_job(jid)
        self.jobs.pop(jid, None)
        self._planned.pop(jid, None)

    async def _fire(self, agent: Agent, module_name: str, module: Module) -> None:
        planned = self._planned.get(job_id(agent.name, module_name), time.time())
        await self._job(agent, module_name, module, planned)

    def _submitted(self, event: JobSubmissionEvent) -> None:
        # called synchronously when the job's task is created, before it first runs
        if event.scheduled_run_times:
            self._planned[event.job_id] = event.scheduled_run_times[-1].timestamp()

    def _missed(self, event: JobEvent) -> None:
        agent, module = split_job_id(event.job_id)
        cause = "overlap" if event.code == EVENT_JOB_MAX_INSTANCES else "misfire"
        self._on_missed(agent, module, cause)

    # apscheduler checks a job's callable against its args with inspect.signature on every add_job: a third of
    # the start-up of 10,000 jobs. The signature never changes, so it is computed once.
    _fire.__signature__ = inspect.signature(_fire)  # type: ignore[attr-defined]

    def next_run(self, agent: str, module: str) -> datetime | None:
        job: Any = self.scheduler.get_job(job_id(agent, module))
        return job.next_run_time if job is not None else None
