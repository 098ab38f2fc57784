"""APScheduler 3 jobs, one per agent and module: interval with jitter, no overlap, coalesced, first run now.

Runs that cannot start are counted, never dropped silently: `overlap` when the previous run of the
same job is still going (max_instances=1), `misfire` when the loop was too busy to start it on time.
Deviation from the exporter guideline "run on scrape", documented in docs/: A2A invocations can be
slow and cost money, and counters/histograms need a schedule of their own.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

from apscheduler.events import EVENT_JOB_MAX_INSTANCES, EVENT_JOB_MISSED, JobEvent
from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.interval import IntervalTrigger

from probe.config import Agent, Module, ProbeConfig

JobFunc = Callable[[Agent, str, Module], Awaitable[None]]
MissedFunc = Callable[[str, str, str], None]
SEP = "\x1f"  # job ids are agent SEP module; neither may contain a control character


def job_id(agent: str, module: str) -> str:
    return f"{agent}{SEP}{module}"


def split_job_id(jid: str) -> tuple[str, str]:
    agent, _, module = jid.partition(SEP)
    return agent, module


def trigger(module: Module) -> IntervalTrigger:
    return IntervalTrigger(seconds=module.interval, jitter=module.effective_jitter or None, timezone=UTC)


class ProbeScheduler:
    def __init__(self, job: JobFunc, on_missed: MissedFunc) -> None:
        self._job = job
        self._on_missed = on_missed
        self.scheduler = AsyncIOScheduler(timezone=UTC)
        self.scheduler.add_listener(self._missed, EVENT_JOB_MAX_INSTANCES | EVENT_JOB_MISSED)
        self.jobs: dict[str, tuple[Agent, str, Module]] = {}

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
        for jid in changed:
            self._add(jid, *wanted[jid])
        return changed, removed

    def _add(self, jid: str, agent: Agent, module_name: str, module: Module) -> None:
        self.scheduler.add_job(
            self._job, trigger(module), args=(agent, module_name, module), id=jid, name=jid,
            max_instances=1, coalesce=True, misfire_grace_time=max(1, int(module.interval / 2)),
            next_run_time=datetime.now(UTC), replace_existing=True,
        )
        self.jobs[jid] = (agent, module_name, module)

    def _remove(self, jid: str) -> None:
        if self.scheduler.get_job(jid) is not None:
            self.scheduler.remove_job(jid)
        self.jobs.pop(jid, None)

    def _missed(self, event: JobEvent) -> None:
        agent, module = split_job_id(event.job_id)
        cause = "overlap" if event.code == EVENT_JOB_MAX_INSTANCES else "misfire"
        self._on_missed(agent, module, cause)

    def next_run(self, agent: str, module: str) -> datetime | None:
        job: Any = self.scheduler.get_job(job_id(agent, module))
        return job.next_run_time if job is not None else None
