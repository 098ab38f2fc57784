"""Runs one probe for the daemon: concurrency slots, hard deadline, metrics, history and the log event.

The scheduler, /probe and /report?refresh=true all come through here, so every run is bounded the
same way and nothing an agent does can escape as an exception.

Waiting for a slot is the probe's own cost, never the agent's: a scheduled run's deadline starts when it
gets its slot, and a run that gets none before its start deadline (half an interval after its planned
start) ends as `probe_overloaded`, counted as a skipped run and never as the agent's run or failure.
So does a run that failed at its deadline while the daemon's own event loop stood still for a good part of
its budget (`stall_clock`, from the loop-lag sampler): its timing says more about the probe than the agent.
"""

from __future__ import annotations

import asyncio
import heapq
import math
import resource
import time
from collections import deque
from collections.abc import Callable
from typing import Any

import structlog

from probe import logs
from probe.checks import grading
from probe.config import MULTI_BINDING, Agent, ConfigError, Module, ProbeConfig, Prober, job_bindings
from probe.engine import run_interfaces
from probe.history import History
from probe.inbox import PushInbox
from probe.metrics import Metrics
from probe.reasons import Reason
from probe.results import BindingName, ProbeResult, StepName
from probe.scheduler import misfire_grace
from probe.suite import SuiteOptions, run_suite
from probe.suite.push import run_push
from probe.target import Target
from probe.wire.cardcache import RESULTS, CardCache
from probe.wire.http import HttpClient

STEPS: dict[Prober, tuple[StepName, ...]] = {
    Prober.PING: (StepName.PING,),
    Prober.INVOKE: (StepName.INVOKE,),
    Prober.STREAM: (StepName.STREAM,),
}
_GRACE = 1.0  # the engine honours its own deadline; this outer bound only catches a probe bug
MIN_SLOTS, MAX_SLOTS = 16, 1024
_BUSY_SHARE = 0.25  # assumed share of its timeout a probe holds its slot (healthy agents answer well inside it)

log = structlog.get_logger("a2a_probe.runner")


def auto_concurrency(config: ProbeConfig) -> int:
    """Slots from the fleet (Little's law): 2 x sum over jobs of (assumed busy time / interval), clamped.

    Bounded by [16, 1024] and by half the process's open-file limit: each slot can hold one socket.
    """
    modules = config.all_modules()
    busy = sum(modules[m].timeout * _BUSY_SHARE / modules[m].interval for a in config.agents for m in a.modules)
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    cap = MAX_SLOTS if soft == resource.RLIM_INFINITY else max(MIN_SLOTS, min(MAX_SLOTS, soft // 2 - 64))
    return max(MIN_SLOTS, min(cap, math.ceil(2 * busy)))


class Slots:
    """A resizable FIFO concurrency limit whose waiters give up at their own deadline."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0
        self._waiters: deque[asyncio.Future[None]] = deque()

    @property
    def waiting(self) -> int:
        return sum(1 for f in self._waiters if not f.done())

    def try_acquire(self) -> bool:
        """True with a slot held, without waiting; False when the slots are full or others wait first (FIFO)."""
        while self._waiters and self._waiters[0].done():
            self._waiters.popleft()
        if self.used < self.limit and not self._waiters:
            self.used += 1
            return True
        return False

    async def acquire(self, timeout: float) -> bool:
        """True with a slot held; False when none came free within `timeout` seconds."""
        if self.try_acquire():
            return True
        if timeout <= 0:
            return False
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        try:
            async with asyncio.timeout(timeout):
                await fut
            return True
        except TimeoutError:
            return fut.done() and not fut.cancelled()  # handed over just as the timeout fired: ours
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():
                self.release()
            raise

    def release(self) -> None:
        if self.used <= self.limit:
            while self._waiters:
                fut = self._waiters.popleft()
                if not fut.done():
                    fut.set_result(None)  # the slot passes to the next waiter; `used` is unchanged
                    return
        self.used -= 1

    def resize(self, limit: int) -> None:
        self.limit = limit
        while self.used < self.limit and self._waiters:
            fut = self._waiters.popleft()
            if not fut.done():
                self.used += 1
                fut.set_result(None)


class Runner:
    def __init__(self, client: HttpClient, metrics: Metrics, history: History, max_concurrency: int,
                 inbox: PushInbox | None = None) -> None:
        self.client = client
        self.inbox = inbox  # None: the daemon has no push public URL, so nothing may register a webhook
        self.metrics = metrics
        self.history = history
        self.slots = Slots(max_concurrency)
        self.metrics.gauge("probe_slots").set(max_concurrency)
        self.in_flight: set[asyncio.Task[Any]] = set()
        # counted at scrape time, not with an inc and a dec (and their locks) per run
        metrics.gauge("probes_in_flight").set_function(lambda: len(self.in_flight))
        self._lateness = metrics.histogram("scheduler_lateness_seconds")
        self._slot_wait = metrics.histogram("slot_wait_seconds")
        self._bookkeeping = metrics.counter("bookkeeping_cpu_seconds")
        # seconds the daemon's event loop has stood still so far (SelfMonitor.stalled_seconds); None: not watched
        self.stall_clock: Callable[[], float] | None = None
        # the Agent Cards of scheduled ping/invoke/stream runs (RFC 9111); on-demand runs always fetch the card
        cached = metrics.counter("card_cache")
        counters = {r: cached.labels(r) for r in RESULTS}
        self.cards = CardCache(on_result=lambda r: counters[r].inc())
        metrics.gauge("card_cache_entries").set_function(lambda: len(self.cards))
        self._deadlines = _Deadlines()
        self._plans: dict[tuple[int, int], _JobPlan] = {}

    def resize(self, max_concurrency: int) -> None:
        self.slots.resize(max_concurrency)
        self.metrics.gauge("probe_slots").set(max_concurrency)

    async def scheduled(self, agent: Agent, module_name: str, module: Module, planned: float | None = None) -> None:
        """The scheduler's job: run, then record in metrics, history and the log."""
        now = time.time()
        planned = now if planned is None else planned
        self._lateness.observe(max(0.0, now - planned))
        start_by = asyncio.get_running_loop().time() + (planned + self._plan(agent, module).grace - now)
        try:
            result = await self.run(agent, module, timeout=module.timeout, start_by=start_by)
        except asyncio.CancelledError:
            # the outermost frame of the job: a drain that ran out of time ends here, quietly
            log.warning("probe_cancelled", agent=agent.name, module=module_name)
            return
        self.record(module_name, result)

    def _plan(self, agent: Agent, module: Module) -> _JobPlan:
        """What every scheduled run of this agent x module shares (the config's objects: a reload makes new ones)."""
        key = (id(agent), id(module))
        plan = self._plans.get(key)
        if plan is None or plan.agent is not agent or plan.module is not module:
            if plan is None and len(self._plans) >= MAX_PLANS:
                del self._plans[next(iter(self._plans))]  # the oldest: most often a job of a config reloaded since
            plan = self._plans[key] = _JobPlan(agent, module)
        return plan

    def _scheduled_target(self, agent: Agent, module: Module, remaining: float) -> tuple[Target, Bindings]:
        """A scheduled run's Target, memoised per job: `Agent.target` is called every run whose agent reads live
        inputs (secrets, a JWKS file), and the job's narrowing of it (limits, the binding) is done again only when
        it returns another Target; an agent without live inputs gets the job's Target without the call."""
        plan = self._plan(agent, module)
        if plan.target is None or plan.live or plan.remaining != remaining:
            base = agent.target(remaining, fresh_connection=module.fresh)
            if base is not plan.base or plan.target is None or plan.remaining != remaining:
                plan.target, plan.base, plan.remaining = _narrow(base, module, plan.only), base, remaining
        return plan.target, plan.only

    def record(self, module_name: str, result: ProbeResult) -> None:
        if result.reason is Reason.PROBE_OVERLOADED:
            # the probe's own overload: counted as a skipped run, never as the agent's run or failure,
            # and not logged per run (under overload, per-run bookkeeping is what feeds the overload)
            self.metrics.missed(result.agent, module_name, "overloaded")
            return
        t0 = time.thread_time()  # synchronous: this thread's CPU is exactly the bookkeeping's
        self.metrics.observe(module_name, result)
        self.history.add(module_name, result)
        logs.log_probe(module_name, result, logs.new_probe_id())
        # with the batched writes of earlier lines (made by the log's timer): the log line's whole cost
        self._bookkeeping.inc(time.thread_time() - t0 + logs.take_timer_cpu())

    async def run(self, agent: Agent, module: Module, *, timeout: float, start_by: float | None = None,
                  client: HttpClient | None = None) -> ProbeResult:
        """One bounded probe.

        Scheduled runs pass `start_by` (loop time): they wait for a slot until then and get the full
        `timeout` once started. On-demand runs (/probe, /report) have one budget for both: they wait at
        most half of it, and the probe gets what is left. `client` overrides the shared one (/probe?target=).
        """
        task = asyncio.current_task()
        assert task is not None
        loop = asyncio.get_running_loop()
        start = loop.time()
        if self.slots.try_acquire():
            waited = 0.0  # a free slot: no wait, and no coroutine to find that out
        else:
            wait_for = (start_by - start) if start_by is not None else timeout / 2
            got = await self.slots.acquire(wait_for)
            waited = loop.time() - start
            if not got:
                self._slot_wait.observe(waited)
                return _failed(agent, Reason.PROBE_OVERLOADED,
                               f"no free probe slot within {max(0.0, wait_for):.2f}s ({self.slots.used} probes "
                               f"running, limit {self.slots.limit}); the agent was not called")
        self._slot_wait.observe(waited)
        remaining = timeout if start_by is not None else max(0.05, timeout - waited)
        stall_clock = self.stall_clock
        stalled_before = stall_clock() if stall_clock is not None else 0.0
        started = start + waited
        try:
            result = await self._probe(agent, module, remaining, client, task,
                                       self.cards if start_by is not None else None, loop, started)
        finally:
            self.slots.release()
        if stall_clock is not None and not result.success:  # a pass is a pass (own_overload): no clocks read
            result = own_overload(result, remaining, loop.time() - started, stall_clock() - stalled_before)
        return result

    async def _probe(self, agent: Agent, module: Module, remaining: float, client: HttpClient | None,
                     task: asyncio.Task[Any], cards: CardCache | None, loop: asyncio.AbstractEventLoop,
                     started: float) -> ProbeResult:
        # the outer bound: asyncio.timeout's work, on the runner's one timer for every run's deadline (_Deadlines);
        # `started` is the loop's time now (the slot is held: nothing was awaited since)
        deadline = _Deadline(task)
        self._deadlines.add(loop, started + remaining + _GRACE, deadline)
        try:
            try:
                if cards is not None:  # a scheduled run
                    target, only = self._scheduled_target(agent, module, remaining)
                else:
                    only = job_bindings(agent, module)
                    target = _narrow(agent.target(remaining, fresh_connection=module.fresh), module, only)
            except ConfigError as exc:
                return _failed(agent, Reason.PROBE_CONFIG_ERROR, str(exc))
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
                    return await run_push(target, client or self.client, self.inbox, late_after=module.late_after)
                # every advertised interface (or the configured subset), without the equivalence check's
                # extra calls: one interface costs what a plain probe costs
                return await run_interfaces(target, client or self.client, steps=STEPS[module.prober],
                                            only=only, agree=False, cards=cards)
            finally:
                self.in_flight.discard(task)
        except asyncio.CancelledError:
            if deadline.withdraw():
                return _failed(agent, Reason.PROBE_ERROR,
                               f"no result within {remaining:g}s + {_GRACE:g}s grace (a probe bug)")
            raise
        finally:
            deadline.over = True
            deadline.withdraw()  # whatever the ending: a cancellation of its own never outlives the run


Bindings = frozenset[BindingName] | None
MAX_PLANS = 65_536  # jobs remembered (as Agent.target's memo): above any fleet one daemon probes


class _JobPlan:
    """One scheduled job's shared parts: its misfire grace, the bindings it probes and its last Target."""

    __slots__ = ("agent", "base", "grace", "live", "module", "only", "remaining", "target")

    def __init__(self, agent: Agent, module: Module) -> None:
        self.agent, self.module = agent, module  # kept: the key's ids stay theirs
        self.grace = misfire_grace(module)
        self.only = job_bindings(agent, module)
        self.live = agent.reads_live_inputs()
        self.base: Target | None = None  # what Agent.target returned
        self.target: Target | None = None  # that, narrowed to the job (limits, binding)
        self.remaining = 0.0


def _narrow(target: Target, module: Module, only: Bindings) -> Target:
    """The agent's Target for one job: the module's limits, and one binding for the suite and push."""
    if limits := module.limits():
        target = target.model_copy(update=limits)
    if only and target.binding is None and module.prober not in MULTI_BINDING:
        # the suite and push probe one interface: the most preferred of the agent's bindings
        preferred = min(only, key=list(BindingName).index)  # the enum is in preference order
        target = target.model_copy(update={"binding": preferred.card_name})
    return target


class _Deadline:
    """The outer bound of one run: cancels its task when due, and tells that cancellation apart from anyone else's
    (a drain's), as asyncio.timeout does (the task's cancel count before and after)."""

    __slots__ = ("_before", "_fired", "_task", "over")

    def __init__(self, task: asyncio.Task[Any]) -> None:
        self._task = task
        self._before = task.cancelling()
        self._fired = False
        self.over = False  # the run has ended: nothing to cancel any more

    def __call__(self) -> None:
        self._fired = True
        self._task.cancel()

    def withdraw(self) -> bool:
        """Take back this deadline's cancellation, once: True when it fired and no one else cancelled the task (the
        run timed out), False when it never fired or someone else's cancellation stands."""
        if not self._fired:
            return False
        self._fired = False
        return self._task.uncancel() <= self._before


class _Deadlines:
    """Every run's outer deadline on one loop timer, armed at the earliest deadline of a run still going.

    A TimerHandle a run (what asyncio.timeout costs) goes into the loop's heap of timers, ordered by a Python
    `__lt__`, and stays there cancelled until its time comes or the loop rebuilds the heap: at 833 runs a second
    some 9,000 of them. Here a run's deadline is a tuple on a heap of our own (compared in C) and a run that ends
    only marks its entry; the one timer fires at the earliest deadline of a run still going, expires every run due
    by then (exactly at its deadline, as before), drops the ended ones and re-arms for the next."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, _Deadline]] = []
        self._seq = 0
        self._timer: asyncio.TimerHandle | None = None
        self._at = math.inf  # when the timer fires
        self._loop: asyncio.AbstractEventLoop | None = None

    def add(self, loop: asyncio.AbstractEventLoop, when: float, deadline: _Deadline) -> None:
        if loop is not self._loop:  # a new event loop (tests run one each): the old loop's timer never fires here
            self._heap, self._timer, self._at, self._loop = [], None, math.inf, loop
        self._seq += 1
        heapq.heappush(self._heap, (when, self._seq, deadline))
        if when < self._at:  # scheduled runs of one module come in deadline order: rare
            self._arm(loop, when)

    def _arm(self, loop: asyncio.AbstractEventLoop, when: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._at = when
        self._timer = loop.call_at(when, self._fire, loop)

    def _fire(self, loop: asyncio.AbstractEventLoop) -> None:
        self._timer, self._at = None, math.inf
        heap, now = self._heap, loop.time()
        while heap:
            when, _seq, deadline = heap[0]
            if not deadline.over and when > now:
                self._arm(loop, when)
                return
            heapq.heappop(heap)
            if not deadline.over:
                deadline()  # due: the run is cancelled, and ends as a timeout


# A failed run is the probe's own overload, not the agent's, when it ran into its deadline while the loop stood
# still for at least this share of the budget (and at least STALL_FLOOR seconds: sampler granularity).
STALL_SHARE = 0.25
STALL_FLOOR = 0.1
_AT_DEADLINE = 0.9  # a run that ended before 90 % of its budget failed for its own reasons, whatever the loop did


def own_overload(result: ProbeResult, budget: float, elapsed: float, stalled: float) -> ProbeResult:
    """The result, or `probe_overloaded` when the probe's own stall, not the agent, ran the run out of time."""
    if result.success or result.reason is Reason.PROBE_OVERLOADED or elapsed < _AT_DEADLINE * budget:
        return result
    if stalled < max(STALL_FLOOR, STALL_SHARE * budget):
        return result
    seen = result.reason.value if result.reason is not None else "a failure"
    out = ProbeResult(agent=result.agent, target_url=result.target_url, reason=Reason.PROBE_OVERLOADED,
                      problem=f"the probe's own event loop stood still {stalled:.2f}s of this run's {budget:g}s "
                              f"budget, so {seen} at the deadline says nothing about the agent; not counted")
    grading.agree(out)
    return out


def _failed(agent: Agent, reason: Reason, detail: str) -> ProbeResult:
    """A probe that failed before its first step: no step is blamed, the problem is said in words."""
    result = ProbeResult(agent=agent.name, target_url=agent.card_url or agent.url, reason=reason, problem=detail)
    grading.agree(result)  # a failed check carries the reason, as in every other failed result
    return result
