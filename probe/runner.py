"""Runs one probe for the daemon: concurrency limit, hard deadline, metrics, history and the log event.

The scheduler, /probe and /report?refresh=true all come through here, so every run is bounded the
same way and nothing an agent does can escape as an exception.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import structlog

from probe import logs
from probe.checks import grading
from probe.config import Agent, ConfigError, Module, Prober
from probe.engine import run_probe
from probe.history import History
from probe.inbox import PushInbox
from probe.metrics import Metrics
from probe.reasons import Reason
from probe.results import ProbeResult, StepName
from probe.suite import SuiteOptions, run_suite
from probe.suite.push import run_push
from probe.wire.http import HttpClient

STEPS: dict[Prober, tuple[StepName, ...]] = {
    Prober.PING: (StepName.PING,),
    Prober.INVOKE: (StepName.INVOKE,),
    Prober.STREAM: (StepName.STREAM,),
}
_GRACE = 1.0  # the engine honours its own deadline; this outer bound only catches a probe bug

log = structlog.get_logger("a2a_probe.runner")


class Runner:
    def __init__(self, client: HttpClient, metrics: Metrics, history: History, max_concurrency: int,
                 inbox: PushInbox | None = None) -> None:
        self.client = client
        self.inbox = inbox  # None: the daemon has no push public URL, so nothing may register a webhook
        self.metrics = metrics
        self.history = history
        self._sem = asyncio.Semaphore(max_concurrency)
        self.in_flight: set[asyncio.Task[Any]] = set()

    async def scheduled(self, agent: Agent, module_name: str, module: Module) -> None:
        """The scheduler's job: run, then record in metrics, history and the log."""
        try:
            result = await self.run(agent, module, timeout=module.timeout)
        except asyncio.CancelledError:
            # the outermost frame of the job: a drain that ran out of time ends here, quietly
            log.warning("probe_cancelled", agent=agent.name, module=module_name)
            return
        self.record(module_name, result)

    def record(self, module_name: str, result: ProbeResult) -> None:
        self.metrics.observe(module_name, result)
        self.history.add(module_name, result)
        logs.log_probe(module_name, result, str(uuid.uuid4()))

    async def run(self, agent: Agent, module: Module, *, timeout: float,
                  client: HttpClient | None = None) -> ProbeResult:
        """One bounded probe; waits for a concurrency slot (counted in the deadline)."""
        task = asyncio.current_task()
        assert task is not None
        loop = asyncio.get_running_loop()
        start = loop.time()
        try:
            async with asyncio.timeout(timeout + _GRACE):
                async with self._sem:
                    remaining = max(0.05, timeout - (loop.time() - start))
                    try:
                        target = agent.target(remaining)
                        if limits := module.limits():
                            target = target.model_copy(update=limits)
                    except ConfigError as exc:
                        return _failed(agent, Reason.PROBE_CONFIG_ERROR, str(exc))
                    self.metrics.gauge("probes_in_flight").inc()
                    self.in_flight.add(task)
                    try:
                        if module.prober is Prober.FULL:
                            opts = SuiteOptions(safe_only=module.safe_only, slow_prompt=agent.slow_prompt,
                                                input_prompt=agent.input_prompt, timeout=remaining, inbox=self.inbox)
                            return await run_suite(target, client or self.client, opts)
                        if module.prober is Prober.PUSH:
                            if self.inbox is None:
                                return _failed(agent, Reason.PROBE_CONFIG_ERROR, "the push module needs the "
                                               "daemon's push public URL (A2A_PROBE_PUSH_PUBLIC_URL)")
                            return await run_push(target, client or self.client, self.inbox,
                                                  late_after=module.late_after)
                        return await run_probe(target, client or self.client, steps=STEPS[module.prober])
                    finally:
                        self.in_flight.discard(task)
                        self.metrics.gauge("probes_in_flight").dec()
        except TimeoutError:
            return _failed(agent, Reason.PROBE_ERROR,
                           f"no result within {timeout:g}s (waiting for a free slot, or a probe bug)")


def _failed(agent: Agent, reason: Reason, detail: str) -> ProbeResult:
    """A probe that failed before its first step: no step is blamed, the problem is said in words."""
    result = ProbeResult(agent=agent.name, target_url=agent.card_url or agent.url, reason=reason, problem=detail)
    grading.agree(result)  # a failed check carries the reason, as in every other failed result
    return result
