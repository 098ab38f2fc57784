"""The probe's own overload is never the agent's failure; slots, sizing, loop lag and prompt endpoints."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from probe.config import Agent, Module, ProbeConfig, Prober
from probe.history import History
from probe.metrics import PREFIX, Metrics
from probe.reasons import Reason
from probe.runner import MAX_SLOTS, MIN_SLOTS, Runner, Slots, auto_concurrency
from probe.wire.http import HttpClient
from tests.daemon.helpers import get, running_daemon, wait_for, write_config


async def test_slots_are_fifo_bounded_and_give_up_at_their_deadline() -> None:
    slots = Slots(1)
    assert await slots.acquire(0)
    assert not await slots.acquire(0.05)  # nobody released: the waiter gives up, holding nothing
    assert slots.used == 1
    order: list[int] = []

    async def waiter(i: int) -> None:
        if await slots.acquire(5):
            order.append(i)
            await asyncio.sleep(0.01)
            slots.release()

    tasks = [asyncio.create_task(waiter(i)) for i in range(3)]
    await asyncio.sleep(0.01)
    assert slots.waiting == 3
    slots.release()
    await asyncio.gather(*tasks)
    assert order == [0, 1, 2] and slots.used == 0
    slots.resize(3)  # growing hands slots to waiters at once
    assert all([await slots.acquire(0) for _ in range(3)]) and not await slots.acquire(0)


def test_concurrency_is_sized_from_the_fleet_and_interval() -> None:
    def cfg(n: int, interval: float) -> ProbeConfig:
        return ProbeConfig(modules={"m": Module(prober=Prober.PING, interval=interval, timeout=10)},
                           agents=[Agent(name=f"a{i}", url="http://127.0.0.1:9", modules=["m"]) for i in range(n)])

    assert auto_concurrency(cfg(10, 60)) == MIN_SLOTS
    small, big = auto_concurrency(cfg(2_000, 60)), auto_concurrency(cfg(8_000, 60))
    assert small == 2 * 2_000 * 10 * 0.25 // 60 + 1 and big > small  # Little's law: rate x assumed busy time x 2
    assert auto_concurrency(cfg(8_000, 600)) < big  # longer intervals need fewer slots
    import resource

    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    cap = MAX_SLOTS if soft == resource.RLIM_INFINITY else min(MAX_SLOTS, max(MIN_SLOTS, soft // 2 - 64))
    assert auto_concurrency(cfg(30_000, 10)) == cap  # 15,000 wanted: clamped, and to half the fd limit


async def test_a_run_that_never_got_a_slot_is_not_the_agents_failure() -> None:
    from tests.agents.catalogue import run_agent

    async with run_agent("slow_task") as agent, HttpClient() as client:
        metrics = Metrics([1], [])
        history = History(5)
        runner = Runner(client, metrics, history, max_concurrency=1)
        module = Module(prober=Prober.INVOKE, interval=2, timeout=1.5)
        for name in ("busy", "starved"):
            metrics.add_job(name, "invoke", module.interval, module.timeout)
        busy = Agent(name="busy", url=agent.origin or "")
        starved = Agent(name="starved", url=agent.origin or "")
        now = time.time()
        # both planned now; "starved" can only start after "busy" frees the slot (1.5 s + grace), past its
        # start deadline (half its 2 s interval)
        await asyncio.gather(runner.scheduled(busy, "invoke", module, now),
                             runner.scheduled(starved, "invoke", module, now))

    def sample(name: str, **labels: str) -> float | None:
        return metrics.registry.get_sample_value(PREFIX + name, {"module": "invoke", **labels})

    # the one that ran is counted (and failed on its own)
    assert sample("runs_total", agent="busy", binding="jsonrpc") == 1
    # the starved one: no run, no failure, no verdict, on no binding
    assert not [s for fam in metrics.registry.collect() for s in fam.samples if s.labels.get("agent") == "starved"
                and s.name in (PREFIX + "failures_total", PREFIX + "runs_total", PREFIX + "success")]
    assert sample("scheduler_missed_runs_total", agent="starved", cause="overloaded") == 1
    assert history.recent("starved", "invoke") == [] and len(history.recent("busy", "invoke")) == 1
    waits = metrics.registry.get_sample_value(PREFIX + "slot_wait_seconds_count")
    assert waits == 2


async def test_a_timeout_while_the_probe_itself_stood_still_is_not_the_agents_failure() -> None:
    """The same slow agent times out either way; only the probe's own stall decides whose fault it is."""
    from tests.agents.catalogue import run_agent

    stalled = [0.0]
    async with run_agent("slow_task") as agent, HttpClient() as client:
        metrics = Metrics([1], [])
        runner = Runner(client, metrics, History(5), max_concurrency=2)
        runner.stall_clock = lambda: stalled[0]
        module = Module(prober=Prober.INVOKE, interval=60, timeout=0.6)
        for name in ("calm", "stalled"):
            metrics.add_job(name, "invoke", module.interval, module.timeout)
        calm = await runner.run(Agent(name="calm", url=agent.origin or ""), module, timeout=0.6)
        loop = asyncio.get_running_loop()
        loop.call_later(0.3, lambda: stalled.__setitem__(0, 0.2))  # the loop stood still 0.2 s of the 0.6 s
        held = await runner.run(Agent(name="stalled", url=agent.origin or ""), module, timeout=0.6)
        runner.record("invoke", calm)
        runner.record("invoke", held)
    assert calm.reason is Reason.INVOKE_TIMEOUT  # the agent's own slowness, with a calm probe: its failure
    assert held.reason is Reason.PROBE_OVERLOADED and "stood still 0.20s" in (held.problem or "")

    def sample(name: str, **labels: str) -> float | None:
        return metrics.registry.get_sample_value(PREFIX + name, {"module": "invoke", **labels})

    assert sample("failures_total", agent="calm", binding="jsonrpc", reason="invoke_timeout") == 1
    assert sample("scheduler_missed_runs_total", agent="stalled", cause="overloaded") == 1
    assert not [s for fam in metrics.registry.collect() for s in fam.samples if s.labels.get("agent") == "stalled"
                and s.name in (PREFIX + "failures_total", PREFIX + "runs_total")]


def test_own_overload_needs_the_deadline_and_a_real_stall() -> None:
    from probe.results import ProbeResult
    from probe.runner import own_overload

    failed = ProbeResult(agent="a", target_url="http://x", reason=Reason.INVOKE_TIMEOUT)
    assert own_overload(failed, 2.0, 2.0, 0.6).reason is Reason.PROBE_OVERLOADED
    assert own_overload(failed, 2.0, 2.0, 0.4).reason is Reason.INVOKE_TIMEOUT  # under a quarter of the budget
    assert own_overload(failed, 2.0, 1.0, 1.0).reason is Reason.INVOKE_TIMEOUT  # failed early: its own reason
    assert own_overload(failed, 0.2, 0.2, 0.06).reason is Reason.INVOKE_TIMEOUT  # below the sampler's floor
    ok = ProbeResult(agent="a", target_url="http://x", success=True)
    assert own_overload(ok, 2.0, 2.0, 2.0) is ok  # a pass is a pass, however slow the probe was
    # the run's requests waited for the probe's own pooled connections (a card fetch queued behind neighbours, then
    # the call had no time left): weighed as a stall is, the larger of the two, never their sum
    pooled = own_overload(failed, 1.0, 1.0, 0.0, 0.99)
    assert pooled.reason is Reason.PROBE_OVERLOADED
    assert "waited 0.99s for a free connection in the probe's own pool" in (pooled.problem or "")
    assert own_overload(failed, 2.0, 2.0, 0.3, 0.3).reason is Reason.INVOKE_TIMEOUT  # 0.3 + 0.3, not 0.6
    assert own_overload(failed, 2.0, 1.0, 0.0, 2.0).reason is Reason.INVOKE_TIMEOUT  # failed early: its own


async def test_the_stall_clock_counts_a_blocked_loop() -> None:
    from probe.selfmon import SelfMonitor

    mon = SelfMonitor(Metrics([1], []))
    mon.start()
    try:
        await asyncio.sleep(0.12)
        before = mon.stalled_seconds()
        time.sleep(0.3)  # a neighbour blocks the loop  # noqa: ASYNC251
        during = mon.stalled_seconds()  # the sampler is overdue: counted already
        await asyncio.sleep(0.12)
        after = mon.stalled_seconds()
    finally:
        await mon.stop()
    assert 0.2 <= during - before <= 0.5 and after >= during


async def test_deadline_starts_when_the_probe_starts() -> None:
    """A scheduled run that waited for its slot still gets its whole timeout on the wire."""
    from tests.agents.catalogue import run_agent

    async with run_agent("slow_task") as agent, HttpClient() as client:
        runner = Runner(client, Metrics([1], []), History(5), max_concurrency=1)
        module = Module(prober=Prober.INVOKE, interval=60, timeout=1.0)
        loop = asyncio.get_running_loop()
        assert await runner.slots.acquire(0)  # someone else holds the only slot for 0.6 s
        loop.call_later(0.6, runner.slots.release)
        t0 = loop.time()
        r = await runner.run(Agent(name="a", url=agent.origin or ""), module, timeout=1.0, start_by=t0 + 30)
        elapsed = loop.time() - t0
    assert r.reason is not Reason.PROBE_OVERLOADED
    assert elapsed >= 0.6 + 1.0 - 0.05  # 0.6 s waiting, then the full 1 s on the wire
    assert r.duration_s >= 0.95  # the result's own time starts with the probe, not with the wait


async def test_the_outer_deadline_ends_a_hung_probe_and_leaves_anyone_elses_cancellation_alone(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A probe that ignores its own timeout (a bug) ends at timeout + grace as probe_error; a drain's cancellation
    during a run still cancels it, and neither leaves a cancel request behind on the task."""
    import probe.runner as runner_mod

    async def hang(*_a: Any, **_k: Any) -> Any:
        await asyncio.sleep(3600)

    monkeypatch.setattr(runner_mod, "_GRACE", 0.1)
    monkeypatch.setattr(runner_mod, "run_interfaces", hang)
    async with HttpClient() as client:
        runner = Runner(client, Metrics([1], []), History(5), max_concurrency=2)
        module = Module(prober=Prober.PING, interval=60, timeout=0.2)
        agent = Agent(name="a", url="http://127.0.0.1:9")
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        result = await runner.run(agent, module, timeout=0.2, start_by=t0 + 30)
        task = asyncio.current_task()
        assert task is not None and task.cancelling() == 0  # its own cancellation withdrawn
        assert result.reason is Reason.PROBE_ERROR and "0.2s + 0.1s grace (a probe bug)" in (result.problem or "")
        assert 0.3 - 0.05 <= loop.time() - t0 < 1.0
        assert runner.slots.used == 0 and not runner.in_flight

        drained = asyncio.create_task(runner.run(agent, module, timeout=0.2, start_by=loop.time() + 30))
        await asyncio.sleep(0.05)
        drained.cancel()  # a drain that ran out of time, before the deadline
        with pytest.raises(asyncio.CancelledError):
            await drained
        assert runner.slots.used == 0 and not runner.in_flight


async def test_every_run_ends_at_its_own_deadline_on_the_runners_one_timer(monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs started in any order with different budgets each end at their own deadline (a shorter one started later
    re-arms the timer); a run that answers in time is left alone; a new event loop starts afresh."""
    import probe.runner as runner_mod

    answers = {"quick": 0.05}

    async def probe(target: Any, *_a: Any, **_k: Any) -> Any:
        await asyncio.sleep(answers.get(target.name, 3600))
        return ProbeResult(agent=target.name, target_url="http://127.0.0.1:9/", success=True)

    from probe.results import ProbeResult

    monkeypatch.setattr(runner_mod, "_GRACE", 0.05)
    monkeypatch.setattr(runner_mod, "run_interfaces", probe)
    async with HttpClient() as client:
        runner = Runner(client, Metrics([1], []), History(5), max_concurrency=8)
        loop = asyncio.get_running_loop()
        ended: dict[str, float] = {}

        async def one(name: str, timeout: float, after: float) -> Any:
            await asyncio.sleep(after)
            module = Module(prober=Prober.PING, interval=60, timeout=timeout)
            t0 = loop.time()
            r = await runner.run(Agent(name=name, url="http://127.0.0.1:9"), module, timeout=timeout, start_by=t0 + 30)
            ended[name] = loop.time() - t0
            return r

        results = await asyncio.gather(one("long", 0.6, 0), one("short", 0.15, 0.05), one("quick", 0.3, 0),
                                       one("mid", 0.35, 0.1))
    by = {r.agent if r.success else r.problem: r for r in results}
    assert by["quick"].success and 0.04 <= ended["quick"] < 0.3  # answered in time: never cancelled
    for name, budget in (("long", 0.6), ("short", 0.15), ("mid", 0.35)):
        assert budget + 0.05 - 0.02 <= ended[name] < budget + 0.05 + 0.25, (name, ended[name])
    assert sum(1 for r in results if not r.success and r.reason is Reason.PROBE_ERROR) == 3
    assert runner.slots.used == 0 and not runner.in_flight


async def test_loop_lag_is_exported_and_healthz_and_metrics_answer_under_load(tmp_path: Path) -> None:
    from tests.agents.catalogue import run_agent

    async with run_agent("healthy") as agent:
        agents = [{"name": f"a{i}", "url": agent.origin, "modules": ["fast"]} for i in range(60)]
        cfg = write_config(tmp_path / "c.yaml", agents,
                           modules={"fast": {"prober": "ping", "interval": "1s", "timeout": "0.9s"}})
        async with running_daemon(cfg) as (d, url):
            await wait_for(lambda: len(d.history.keys()) == 60, timeout=10)
            # a neighbour hogs the loop in 30 ms slices: lag shows, endpoints still answer
            stop = time.monotonic() + 1.5

            async def hog() -> None:
                while time.monotonic() < stop:
                    time.sleep(0.03)  # noqa: ASYNC251  (the point: a neighbour that blocks the loop)
                    await asyncio.sleep(0)

            hogger = asyncio.create_task(hog())
            await asyncio.sleep(0.5)
            loop = asyncio.get_running_loop()
            t0 = loop.time()
            status, _, _ = await get(url + "/healthz")
            healthz_s = loop.time() - t0
            t0 = loop.time()
            status_m, body, _ = await get(url + "/metrics")
            metrics_s = loop.time() - t0
            await hogger
    assert status == 200 and status_m == 200
    assert healthz_s < 1.0 and metrics_s < 2.0
    p99 = [float(line.split()[1]) for line in body.splitlines() if line.startswith(PREFIX + "event_loop_lag_p99")]
    assert p99 and p99[0] >= 0.02, p99  # the 30 ms slices show up in the lag p99 since the last scrape
    count = [float(line.split()[1]) for line in body.splitlines()
             if line.startswith(PREFIX + "event_loop_lag_seconds_count")]
    assert count and count[0] > 10


@pytest.mark.parametrize("detailed", [False, True])
async def test_series_per_agent_on_a_running_daemon(tmp_path: Path, detailed: bool) -> None:
    """Fails when the per-agent series count grows past what docs/metrics.md documents."""
    from probe.config import MetricsConfig
    from probe.metrics import series_per_job
    from tests.agents.catalogue import run_agent

    async with run_agent("healthy") as agent:
        agents = [{"name": f"a{i}", "url": agent.origin} for i in range(20)]
        cfg = write_config(tmp_path / "c.yaml", agents, metrics={"detailed": detailed})
        async with running_daemon(cfg) as (d, url):
            await wait_for(lambda: len(d.history.keys()) == 20, timeout=10)
            _, body, _ = await get(url + "/metrics")
    per_agent: dict[str, int] = {}
    for line in body.splitlines():
        if line.startswith(PREFIX) and 'module="ping"' in line and "_created" not in line.split("{")[0]:
            name = line.split('agent="', 1)[1].split('"', 1)[0]
            per_agent[name] = per_agent.get(name, 0) + 1
    expected = series_per_job(3, len(MetricsConfig().duration_buckets), detailed=detailed)
    assert len(per_agent) == 20 and set(per_agent.values()) == {expected}, per_agent
    if not detailed:
        assert expected <= 15


async def test_memory_per_agent_is_bounded_and_flat(tmp_path: Path) -> None:
    """After warm-up, more probe cycles of the same fleet leave nothing behind (history, caches, series)."""
    import gc
    import tracemalloc

    from tests.daemon.fleet import agent_process

    n, limit = 30, 5

    async def quiet_snapshot(d: Any) -> tracemalloc.Snapshot:
        # no probe in flight: what is left is what the daemon keeps
        d.scheduler.scheduler.pause()
        await wait_for(lambda: not d.runner.in_flight and d.runner.slots.used == 0, timeout=10)
        gc.collect()
        snap = tracemalloc.take_snapshot()
        d.scheduler.scheduler.resume()
        return snap

    tracemalloc.start()  # before the daemon starts, so objects replaced later cancel out
    try:
        with agent_process() as origin:  # in a child process: its memory is not the daemon's
            agents = [{"name": f"a{i}", "url": origin, "modules": ["fast"]} for i in range(n)]
            cfg = write_config(tmp_path / "c.yaml", agents,
                               modules={"fast": {"prober": "ping", "interval": "2s", "timeout": "1.5s"}})
            async with running_daemon(cfg, history_limit=limit) as (d, url):
                def runs() -> float:
                    return sum(d.metrics.registry.get_sample_value(
                        PREFIX + "runs_total", {"agent": f"a{i}", "module": "fast", "binding": "jsonrpc"}) or 0
                        for i in range(n))

                await wait_for(lambda: runs() >= (limit + 1) * n, timeout=60)  # warm-up: the rings are full
                await get(url + "/metrics")
                before = await quiet_snapshot(d)
                start = runs()
                await wait_for(lambda: runs() >= start + 5 * n, timeout=60)  # five more cycles of the fleet
                await get(url + "/metrics")
                after = await quiet_snapshot(d)
                done = runs() - start
    finally:
        tracemalloc.stop()
    # the test harness keeps every log record it captures: that is pytest's memory, not the daemon's
    harness = [tracemalloc.Filter(False, pattern) for pattern in ("*/logging/*", "*/_pytest/*", "*/tracemalloc.py")]
    grown = sum(s.size_diff for s in after.filter_traces(harness).compare_to(before.filter_traces(harness), "filename"))
    # measured: ~28 KB over ~200 runs (parser buffers, a few lazily created series: bounded). One packed result
    # kept per run would be >= 1.5 KB a run (>= 225 KB here); one live ProbeResult a run, ~32 KB each
    assert done >= 5 * n and grown < 64 * 1024, (grown, done, [str(s) for s in after.compare_to(before, "lineno")[:8]])
    assert len(d.history.keys()) == n and all(len(d.history.recent(f"a{i}", "fast")) <= limit for i in range(n))
    # and small: everything the daemon allocated since start-up and still holds, fixed overhead included, per
    # agent: measured ~45 KB at 30 agents (2026-12-01 23:19; most of it fixed: the compression contexts and
    # dictionaries of the history and the card cache; per agent at 10,000 the whole state is ~13.7 KiB,
    # bench/memory.py); five kept live results alone were ~160 KB an agent
    held = sum(s.size for s in after.filter_traces(harness).statistics("filename"))
    assert held / n < 64 * 1024, held / n


def test_connection_limits_default_to_one_gateway_fronting_many_agents(tmp_path: Path) -> None:
    from probe.config import Settings, load
    from probe.daemon import Daemon

    cfg = write_config(tmp_path / "c.yaml", [{"name": f"a{i}", "url": "http://127.0.0.1:9"} for i in range(3)])
    config, sha = load(cfg)
    d = Daemon(Settings(listen_address="127.0.0.1:0"), config, sha, cfg)
    # no per-host cap below the overall one: agents behind one gateway share the whole pool
    assert d.client._limit == 100 and d.client._limit_per_host == 100
    assert d.runner.slots.limit == MIN_SLOTS
    d = Daemon(Settings(listen_address="127.0.0.1:0", max_concurrency=40, max_connections_per_origin=12),
               config, sha, cfg)
    assert d.runner.slots.limit == 40 and d.client._limit == 100 and d.client._limit_per_host == 12
    d = Daemon(Settings(listen_address="127.0.0.1:0", max_concurrency=400), config, sha, cfg)
    assert d.client._limit == 800 == d.client._limit_per_host


async def test_the_fleets_lasting_state_is_frozen_once_every_job_has_run(tmp_path: Path) -> None:
    import gc

    from probe.config import Settings, load
    from probe.daemon import Daemon

    cfg = write_config(tmp_path / "c.yaml", [{"name": "a", "url": "http://127.0.0.1:9", "modules": ["m"]}],
                       modules={"m": {"prober": "ping", "interval": "1s", "timeout": "0.5s"}})
    config, sha = load(cfg)
    d = Daemon(Settings(listen_address="127.0.0.1:0"), config, sha, cfg)
    await d.start()
    try:
        assert d._settled is not None
        assert d._settled.when() - asyncio.get_running_loop().time() == pytest.approx(1.5, abs=0.3)
        frozen = gc.get_freeze_count()
        kept = [[object()] for _ in range(1000)]  # state made after start-up, like the history rings
        await asyncio.sleep(1.8)
        assert gc.get_freeze_count() >= frozen + len(kept)
    finally:
        await d.stop()


async def test_a_really_blocked_loop_during_runs_in_flight_makes_skips_not_failures(tmp_path: Path) -> None:
    """The whole chain on a real daemon: its SelfMonitor's stall clock, the runner and the engine. A healthy agent whose
    streams take 0.4 s of a 1 s budget; three times while runs are in flight the daemon's loop is blocked 1.3 s (a
    neighbour's CPU work, a GC pause): the runs that ran out of time during a block are the probe's overload (skipped,
    scheduler_missed_runs_total{cause="overloaded"}), never a failure of the agent."""
    from tests.agents.catalogue import run_agent
    from tests.agents.fault_agent import Faults

    async with run_agent(Faults(task_delay=0.4)) as agent:
        agents = [{"name": f"s{i}", "url": agent.origin, "modules": ["s"]} for i in range(3)]
        cfg = write_config(tmp_path / "c.yaml", agents,
                           modules={"s": {"prober": "stream", "interval": "1s", "timeout": "1s", "jitter": 0}})
        async with running_daemon(cfg) as (d, _url):
            await wait_for(lambda: len(d.history.keys()) == 3, timeout=10)
            for _ in range(3):
                await wait_for(lambda: d.runner.slots.used > 0, timeout=5)
                await asyncio.sleep(0.1)  # the runs' requests are out, their answers 0.3 s away
                time.sleep(1.3)  # noqa: ASYNC251  (the point: the probe's own loop stands still past their deadline)
                await asyncio.sleep(1.0)
            registry = d.metrics.registry

    def total(name: str, **labels: str) -> float:
        return sum(s.value for fam in registry.collect() for s in fam.samples
                   if s.name == PREFIX + name and all(s.labels.get(k) == v for k, v in labels.items()))

    assert total("failures_total") == 0, [(s.labels, s.value) for fam in registry.collect() for s in fam.samples
                                          if s.name == PREFIX + "failures_total"]
    assert total("scheduler_missed_runs_total", cause="overloaded") >= 1  # the blocks did hit runs in flight
    assert total("runs_total") >= 3
