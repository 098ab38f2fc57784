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
from typing import Any, Generic, TypeVar

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
from probe.scheduler import Admitting, ScheduledJob, misfire_grace
from probe.stall import material
from probe.suite import SuiteOptions, run_suite
from probe.suite.push import run_push
from probe.target import Target
from probe.wire.cardcache import RESULTS, CardCache
from probe.wire.http import POOL_WAITED, HttpClient

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


_E = TypeVar("_E")


class _TimerHeap(Generic[_E]):
    """Many entries' deadlines on one loop timer, armed at the earliest deadline of an entry not yet ended; an entry
    that ends is only marked (`_ended`) and dropped when it reaches the heap's top. Subclasses say what ended means
    and what a due entry does (`_due`)."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, _E]] = []  # (deadline, sequence, entry)
        self._seq = 0
        self._timer: asyncio.TimerHandle | None = None
        self._at = math.inf  # when the timer fires
        self._loop: asyncio.AbstractEventLoop | None = None

    @staticmethod
    def _ended(entry: _E) -> bool:
        raise NotImplementedError

    def _due(self, entry: _E) -> None:
        raise NotImplementedError

    def add(self, loop: asyncio.AbstractEventLoop, when: float, entry: _E) -> None:
        if loop is not self._loop:  # a new event loop (tests run one each): the old loop's timer never fires here
            self._heap, self._timer, self._at, self._loop = [], None, math.inf, loop
        self._seq += 1
        heapq.heappush(self._heap, (when, self._seq, entry))
        if when < self._at:  # entries mostly come in deadline order: rare
            self._arm(loop, when)

    def _arm(self, loop: asyncio.AbstractEventLoop, when: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._at = when
        self._timer = loop.call_at(when, self._fire, loop)

    def _fire(self, loop: asyncio.AbstractEventLoop) -> None:
        self._timer, self._at = None, math.inf
        heap, now, ended = self._heap, loop.time(), self._ended
        while heap:
            when, _seq, entry = heap[0]
            if not ended(entry) and when > now:
                self._arm(loop, when)
                return
            heapq.heappop(heap)
            if not ended(entry):
                self._due(entry)


class Slots(_TimerHeap["_Waiter"]):
    """A resizable FIFO concurrency limit whose waiters give up at their own deadline.

    A waiter is a small entry in a queue, not a task: an overloaded daemon holds thousands of runs waiting (50,000
    agents on one core: every run waits), and a task each (its coroutines, frames, future, timeout and timer handle,
    ~18 objects the collector tracks) outlives young collections and is walked by every full one. Every waiter's
    deadline is on one timer of the Slots (as _Deadlines does for runs), armed at the earliest waiter still waiting;
    a waiter handed a slot or expired is marked done and dropped from the queue and the heap lazily.

    `limit` is what the fleet needs at once (slow agents hold slots while they wait on the network); `cap`, at most
    `limit`, is what the lag governor (probe/admission.py) lets in while the event loop is the bottleneck."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit
        self.cap = limit
        self.used = 0
        self._queue: deque[_Waiter] = deque()  # FIFO; done waiters are skipped
        self._live = 0  # waiters not done

    @property
    def waiting(self) -> int:
        return self._live

    @property
    def open(self) -> int:
        """The slots runs may hold now."""
        return min(self.limit, self.cap)

    def try_acquire(self) -> bool:
        """True with a slot held, without waiting; False when the slots are full or others wait first (FIFO)."""
        queue = self._queue
        while queue and queue[0].done:
            queue.popleft()
        if self.used < self.open and not queue:
            self.used += 1
            return True
        return False

    def wait(self, waiter: _Waiter, deadline: float) -> None:
        """Queue `waiter` until loop time `deadline`: it is `admit`ted with a slot held, or `expire`d without one."""
        self._queue.append(waiter)
        self._live += 1
        self.add(asyncio.get_running_loop(), deadline, waiter)

    def drop(self, waiter: _Waiter) -> bool:
        """Take a waiter out (cancelled); False when it was already admitted or expired."""
        if waiter.done:
            return False
        waiter.done = True
        self._live -= 1
        return True

    async def acquire(self, timeout: float) -> bool:
        """True with a slot held; False when none came free within `timeout` seconds."""
        if self.try_acquire():
            return True
        if timeout <= 0:
            return False
        loop = asyncio.get_running_loop()
        waiter = _Awaiting(loop.create_future())
        self.wait(waiter, loop.time() + timeout)
        try:
            return await waiter.fut
        except asyncio.CancelledError:
            if not self.drop(waiter) and waiter.fut.done() and not waiter.fut.cancelled() and waiter.fut.result():
                self.release()  # handed a slot just as it was cancelled: given back
            raise

    def _next(self) -> _Waiter | None:
        queue = self._queue
        while queue:
            waiter = queue.popleft()
            if self.drop(waiter):
                return waiter
        return None

    def release(self) -> None:
        if self.used <= self.open:
            while (waiter := self._next()) is not None:
                if waiter.admit():
                    return  # the slot passes to the next waiter; `used` is unchanged
        self.used -= 1

    def resize(self, limit: int) -> None:
        self.limit = limit
        self.cap = limit  # a new fleet size starts the governor over
        self._fill()

    def govern(self, cap: int) -> None:
        """The lag governor's cap; raising it admits waiters at once."""
        self.cap = max(1, min(cap, self.limit))
        self._fill()

    def _fill(self) -> None:
        while self.used < self.open and (waiter := self._next()) is not None:
            self.used += 1
            if not waiter.admit():
                self.used -= 1

    @staticmethod
    def _ended(waiter: _Waiter) -> bool:
        return waiter.done

    def _due(self, waiter: _Waiter) -> None:
        if self.drop(waiter):
            waiter.expire()  # due without a slot; it stays in the queue, skipped when it reaches the front


class _Waiter:
    """What waits in Slots: told once, either `admit` (a slot is held for it) or `expire` (its deadline passed)."""

    __slots__ = ("done",)

    def __init__(self) -> None:
        self.done = False

    def admit(self) -> bool:
        """Take the slot; False when the waiter can no longer take it (the slot goes to the next one)."""
        raise NotImplementedError

    def expire(self) -> None:
        raise NotImplementedError


class _Awaiting(_Waiter):
    """An on-demand run (/probe, /report) awaiting its slot in its own task: the future says True or False."""

    __slots__ = ("fut",)

    def __init__(self, fut: asyncio.Future[bool]) -> None:
        super().__init__()
        self.fut = fut

    def admit(self) -> bool:
        if self.fut.done():  # its task was cancelled and has not run its handler yet: the slot is not its
            return False
        self.fut.set_result(True)
        return True

    def expire(self) -> None:
        if not self.fut.done():
            self.fut.set_result(False)


class _Queued(_Waiter):
    """A scheduled run waiting for its slot: no task until it has one (`Runner.wait`)."""

    __slots__ = ("job", "owner", "planned", "runner", "since", "wait_for")

    def __init__(self, runner: Runner, job: ScheduledJob, planned: float, owner: Admitting, since: float,
                 wait_for: float) -> None:
        super().__init__()
        self.runner, self.job, self.planned, self.owner, self.since, self.wait_for = (
            runner, job, planned, owner, since, wait_for)

    def admit(self) -> bool:
        self.runner.admitted(self)
        return True

    def expire(self) -> None:
        self.runner.expired(self)

    def cancel(self) -> None:
        """The scheduler's shutdown: a run still waiting ends as a cancelled one does."""
        if self.runner.slots.drop(self):
            log.warning("probe_cancelled", agent=self.job.agent.name, module=self.job.module_name)


class Runner:
    def __init__(self, client: HttpClient, metrics: Metrics, history: History, max_concurrency: int,
                 inbox: PushInbox | None = None) -> None:
        self.client = client
        self.inbox = inbox  # None: the daemon has no push public URL, so nothing may register a webhook
        self.metrics = metrics
        self.history = history
        self.slots = Slots(max_concurrency)
        self.metrics.gauge("probe_slots").set(max_concurrency)
        metrics.gauge("probe_slots_open").set_function(lambda: self.slots.open)
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

    def wait(self, job: ScheduledJob, planned: float, owner: Admitting) -> _Queued | None:
        """The scheduler's gate, at the tick a run is due: None when a slot is free (held now for the run, which
        `held` runs), else the entry the run waits as, without a task, until `owner.launch` or its start deadline."""
        now = time.time()
        self._lateness.observe(max(0.0, now - planned))
        if self.slots.try_acquire():
            self._slot_wait.observe(0.0)
            return None
        loop = asyncio.get_running_loop()
        since = loop.time()
        wait_for = planned + self._plan(job.agent, job.module).grace - now
        queued = _Queued(self, job, planned, owner, since, wait_for)
        self.slots.wait(queued, since + wait_for)
        return queued

    def admitted(self, queued: _Queued) -> None:
        self._slot_wait.observe(asyncio.get_running_loop().time() - queued.since)
        queued.owner.launch(queued.job, queued.planned)

    def expired(self, queued: _Queued) -> None:
        self._slot_wait.observe(asyncio.get_running_loop().time() - queued.since)
        # what `record` does with a run that got no slot (a probe_overloaded result): a skipped run, not the agent's
        self.metrics.missed(queued.job.agent.name, queued.job.module_name, "overloaded")
        queued.owner.gone(queued.job)

    async def held(self, agent: Agent, module_name: str, module: Module, planned: float) -> None:
        """A scheduled run started by the gate with its slot held (its lateness and slot wait are observed)."""
        await self.scheduled(agent, module_name, module, planned, held=True)

    async def scheduled(self, agent: Agent, module_name: str, module: Module, planned: float | None = None,
                        held: bool = False) -> None:
        """The scheduler's job: run, then record in metrics, history and the log."""
        now = time.time()
        planned = now if planned is None else planned
        if not held:
            self._lateness.observe(max(0.0, now - planned))
        plan = self._plan(agent, module)
        if plan.hold_until > now:  # the agent asked for a pause (Retry-After): not called, counted as skipped
            if held:
                self.slots.release()
            self.metrics.missed(agent.name, module_name, "rate_limited")
            return
        start_by = asyncio.get_running_loop().time() + (planned + plan.grace - now)
        try:
            result = await self.run(agent, module, timeout=module.timeout, start_by=start_by, held=held)
        except asyncio.CancelledError:
            # the outermost frame of the job: a drain that ran out of time ends here, quietly
            log.warning("probe_cancelled", agent=agent.name, module=module_name)
            return
        if result.retry_after_s is not None and result.reason is Reason.RATE_LIMITED:
            plan.hold_until = time.time() + min(result.retry_after_s, MAX_HOLD)
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
                  client: HttpClient | None = None, held: bool = False) -> ProbeResult:
        """One bounded probe.

        Scheduled runs pass `start_by` (loop time): they wait for a slot until then and get the full
        `timeout` once started. On-demand runs (/probe, /report) have one budget for both: they wait at
        most half of it, and the probe gets what is left. `client` overrides the shared one (/probe?target=).
        `held`: the slot is held for this run already (the scheduler's gate, `wait`); it is released at the end.
        """
        task = asyncio.current_task()
        assert task is not None
        loop = asyncio.get_running_loop()
        start = loop.time()
        if held:
            waited = 0.0  # its wait was observed when the gate handed it the slot
        elif self.slots.try_acquire():
            waited = 0.0  # a free slot: no wait, and no coroutine to find that out
            self._slot_wait.observe(waited)
        else:
            wait_for = (start_by - start) if start_by is not None else timeout / 2
            got = await self.slots.acquire(wait_for)
            waited = loop.time() - start
            if not got:
                self._slot_wait.observe(waited)
                return _failed(agent, Reason.PROBE_OVERLOADED,
                               f"no free probe slot within {max(0.0, wait_for):.2f}s ({self.slots.used} probes "
                               f"running, limit {self.slots.open} of {self.slots.limit}); the agent was not called")
            self._slot_wait.observe(waited)
        remaining = timeout if start_by is not None else max(0.05, timeout - waited)
        stall_clock = self.stall_clock
        stalled_before = stall_clock() if stall_clock is not None else 0.0
        started = start + waited
        pooled = [0.0]  # what this run's requests wait for the probe's own connections (http.POOL_WAITED)
        token = POOL_WAITED.set(pooled)
        try:
            result = await self._probe(agent, module, remaining, client, task,
                                       self.cards if start_by is not None else None, loop, started)
        finally:
            self.slots.release()
            POOL_WAITED.reset(token)
        if not result.success:  # a pass is a pass (own_overload): no clocks read
            stalled = stall_clock() - stalled_before if stall_clock is not None else 0.0
            result = own_overload(result, remaining, loop.time() - started, stalled, pooled[0])
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
# the longest Retry-After the daemon waits out: a longer one (or an HTTP-date days ahead) is read as an hour, so a
# wrong header cannot silence an agent's probes for longer than an alert's window
MAX_HOLD = 3600.0
MAX_PLANS = 65_536  # jobs remembered (as Agent.target's memo): above any fleet one daemon probes


class _JobPlan:
    """One scheduled job's shared parts: its misfire grace, the bindings it probes and its last Target."""

    __slots__ = ("agent", "base", "grace", "hold_until", "live", "module", "only", "remaining", "target")

    def __init__(self, agent: Agent, module: Module) -> None:
        self.agent, self.module = agent, module  # kept: the key's ids stay theirs
        self.grace = misfire_grace(module)
        self.only = job_bindings(agent, module)
        self.live = agent.reads_live_inputs()
        self.base: Target | None = None  # what Agent.target returned
        self.target: Target | None = None  # that, narrowed to the job (limits, binding)
        self.remaining = 0.0
        self.hold_until = 0.0  # wall time: a rate limit's Retry-After, waited out before the next run (`scheduled`)


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


class _Deadlines(_TimerHeap["_Deadline"]):
    """Every run's outer deadline on one loop timer, armed at the earliest deadline of a run still going.

    A TimerHandle a run (what asyncio.timeout costs) goes into the loop's heap of timers, ordered by a Python
    `__lt__`, and stays there cancelled until its time comes or the loop rebuilds the heap: at 833 runs a second
    some 9,000 of them. Here a run's deadline is a tuple on a heap of our own (compared in C) and a run that ends
    only marks its entry; the one timer fires at the earliest deadline of a run still going, expires every run due
    by then (exactly at its deadline, as before), drops the ended ones and re-arms for the next."""

    @staticmethod
    def _ended(deadline: _Deadline) -> bool:
        return deadline.over

    def _due(self, deadline: _Deadline) -> None:
        deadline()  # due: the run is cancelled, and ends as a timeout


# A failed run is the probe's own overload, not the agent's, when it ran into its deadline while the loop stood
# still for a material share of the budget (probe.stall.material).
_AT_DEADLINE = 0.9  # a run that ended before 90 % of its budget failed for its own reasons, whatever the loop did


def own_overload(result: ProbeResult, budget: float, elapsed: float, stalled: float,
                 pooled: float = 0.0) -> ProbeResult:
    """The result, or `probe_overloaded` when the probe's own stall, or its requests' waits for a free connection in
    its own pool (`pooled`), not the agent, ran the run out of time. The two may overlap (a wait goes on through a
    stall): the larger is weighed, never their sum."""
    if result.success or result.reason is Reason.PROBE_OVERLOADED or elapsed < _AT_DEADLINE * budget:
        return result
    if not material(max(stalled, pooled), budget):
        return result
    seen = result.reason.value if result.reason is not None else "a failure"
    what = (f"the probe's own event loop stood still {stalled:.2f}s" if stalled >= pooled else
            f"this run's requests waited {pooled:.2f}s for a free connection in the probe's own pool")
    out = ProbeResult(agent=result.agent, target_url=result.target_url, reason=Reason.PROBE_OVERLOADED,
                      problem=f"{what} of this run's {budget:g}s budget, so {seen} at the deadline says nothing "
                              "about the agent; not counted")
    grading.agree(out)
    return out


def _failed(agent: Agent, reason: Reason, detail: str) -> ProbeResult:
    """A probe that failed before its first step: no step is blamed, the problem is said in words."""
    result = ProbeResult(agent=agent.name, target_url=agent.card_url or agent.url, reason=reason, problem=detail)
    grading.agree(result)  # a failed check carries the reason, as in every other failed result
    return result
