"""Garbage collection at fleet scale: the lasting state leaves the collector's view as it grows, and nothing frozen is
kept once it became garbage (probe/selfmon.py)."""

from __future__ import annotations

import asyncio
import gc
import weakref
from pathlib import Path

import pytest

from probe import selfmon
from probe.metrics import Metrics
from probe.selfmon import SelfMonitor
from tests.daemon.helpers import wait_for, write_config


class _Node:
    """A cycle's member that a weak reference can watch."""

    def __init__(self) -> None:
        self.other: _Node | None = None


def _cycle() -> weakref.ref[_Node]:
    a, b = _Node(), _Node()
    a.other, b.other = b, a
    return weakref.ref(a)


def _all_frozen(objs: list[list[int]]) -> bool:
    """Every object is out of the collector's generations (frozen): compared by identity, since the freeze count
    also drops when other frozen objects are freed meanwhile (an earlier test's state, a run's buffers)."""
    ids = {id(o) for o in objs}
    return not any(id(o) in ids for o in gc.get_objects())


async def test_a_full_collection_freezes_the_lasting_state_grown_since_the_last_freeze() -> None:
    mon = SelfMonitor(Metrics([1], []))
    mon.start()
    try:
        mon.freeze()
        frozen = gc.get_freeze_count()
        grown = max(selfmon.REFREEZE_FLOOR, int(selfmon.REFREEZE_GROWTH * frozen)) + 1000
        kept = [[i] for i in range(grown)]  # lasting state built after the freeze (history rings, cached cards)
        gc.collect()  # a full collection, as the collector makes them
        assert _all_frozen(kept) and mon.refreezes == 1
        # a fleet that stopped growing is not frozen again: what a run holds meanwhile stays the collector's
        short = [[i] for i in range(100)]
        for _ in range(5):
            gc.collect()
        assert mon.refreezes == 1
        assert len(kept) + len(short) == grown + 100
    finally:
        await mon.stop()


async def test_a_frozen_cycle_that_became_garbage_is_freed_after_a_thaw() -> None:
    mon = SelfMonitor(Metrics([1], []))
    mon.start()
    try:
        ref = _cycle()
        mon.freeze(collect=False)  # frozen while alive, like a run under way at a re-freeze
        assert ref() is not None  # now garbage, but frozen: no collection sees it
        gc.collect()
        assert ref() is not None
        mon.thaw()
        gc.collect()  # the next full collection after a thaw: frees it, and freezes what survived
        assert ref() is None
        assert gc.get_freeze_count() > 0
    finally:
        await mon.stop()


async def test_the_monitor_thaws_on_its_own_every_period(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(selfmon, "THAW_PERIOD", 0.2)
    mon = SelfMonitor(Metrics([1], []))
    mon.start()
    try:
        ref = _cycle()
        mon.freeze(collect=False)
        await asyncio.sleep(0.4)  # the sampler's thaw
        gc.collect()
        assert ref() is None
    finally:
        await mon.stop()


async def test_a_reload_leaves_no_frozen_cycle_of_the_dropped_state(tmp_path: Path) -> None:
    from probe.config import Settings, load
    from probe.daemon import Daemon

    modules = {"m": {"prober": "ping", "interval": "60s", "timeout": "0.5s"}}
    agents = [{"name": f"a{i}", "url": "http://127.0.0.1:9", "modules": ["m"]} for i in range(3)]
    cfg = write_config(tmp_path / "c.yaml", agents, modules=modules)
    config, sha = load(cfg)
    d = Daemon(Settings(listen_address="127.0.0.1:0"), config, sha, cfg)
    await d.start()
    try:
        ref = _cycle()  # state of an agent a reload drops, frozen when the fleet's state was
        d.selfmon.freeze(collect=False)
        write_config(cfg, agents[:1], modules=modules)
        ok, _ = await d.reload()
        assert ok
        gc.collect()
        assert ref() is None
    finally:
        await d.stop()


async def test_the_fleets_lasting_state_built_after_the_settle_time_is_frozen(tmp_path: Path) -> None:
    """The first pass of a big fleet runs at first_pass_rate, long after one interval: state built later leaves the
    collector's view at the next full collection after it grew by a share of what is frozen."""
    from probe.config import Settings, load
    from probe.daemon import Daemon

    cfg = write_config(tmp_path / "c.yaml", [{"name": "a", "url": "http://127.0.0.1:9", "modules": ["m"]}],
                       modules={"m": {"prober": "ping", "interval": "1s", "timeout": "0.2s"}})
    config, sha = load(cfg)
    d = Daemon(Settings(listen_address="127.0.0.1:0"), config, sha, cfg)
    await d.start()
    try:
        await asyncio.sleep(1.5)  # past the settle freeze (one interval and a timeout)
        frozen = gc.get_freeze_count()
        kept = [[i] for i in range(max(selfmon.REFREEZE_FLOOR, int(selfmon.REFREEZE_GROWTH * frozen)) + 1000)]
        await asyncio.sleep(1.2)  # runs go on
        gc.collect()
        assert _all_frozen(kept)
    finally:
        await d.stop()


async def _blackhole() -> tuple[asyncio.Server, str]:
    """Accepts connections and never answers (a bare protocol: no task per connection in this process)."""
    server = await asyncio.get_running_loop().create_server(asyncio.Protocol, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    return server, f"http://127.0.0.1:{port}"


async def test_an_overloaded_daemons_backlog_holds_no_task_per_waiting_run(tmp_path: Path) -> None:
    """One slot, held by a run its agent never answers: the other due runs wait as small entries (no task, future,
    timeout or timer handle each), and the ones that got no slot by their start deadline are skipped runs,
    counted as `overloaded`, each with its lateness and its slot wait observed, none the agent's run or failure."""
    from probe.metrics import PREFIX
    from tests.daemon.helpers import running_daemon

    server, origin = await _blackhole()
    n = 40
    agents = [{"name": f"a{i:02d}", "url": origin, "modules": ["m"]} for i in range(n)]
    # grace: half the 4 s interval, so the waiting runs give up at 2 s; the one running ends at its 3 s timeout
    cfg = write_config(tmp_path / "c.yaml", agents, modules={"m": {"prober": "ping", "interval": "4s",
                                                                   "timeout": "3s", "jitter": "0s"}})
    try:
        async with running_daemon(cfg, max_concurrency=1, first_pass_rate=2000) as (d, _url):
            await wait_for(lambda: d.runner.slots.waiting >= n - 1)
            assert d.runner.slots.waiting == n - 1 and d.runner.slots.used == 1
            tasks = len(asyncio.all_tasks())
            assert tasks < 10, f"{tasks} tasks for {n - 1} waiting runs"

            def sample(name: str, **labels: str) -> float:
                return sum(d.metrics.registry.get_sample_value(PREFIX + name, {"agent": f"a{i:02d}", "module": "m",
                                                                              **labels}) or 0 for i in range(n))

            await wait_for(lambda: sample("scheduler_missed_runs_total", cause="overloaded") >= n - 1)
            assert sample("scheduler_missed_runs_total", cause="overloaded") == n - 1
            registry = d.metrics.registry
            waits = registry.get_sample_value(PREFIX + "slot_wait_seconds_count") or 0
            assert waits >= n  # the one that ran (no wait) and every one that gave up
            # every due run's lateness is observed at once; its slot wait when it got a slot or gave up
            late = registry.get_sample_value(PREFIX + "scheduler_lateness_seconds_count")
            assert late == waits + d.runner.slots.waiting
            for i in range(n):
                starved = {"agent": f"a{i:02d}", "module": "m"}
                if registry.get_sample_value(PREFIX + "scheduler_missed_runs_total",
                                             {**starved, "cause": "overloaded"}):
                    assert not registry.get_sample_value(PREFIX + "runs_total", {**starved, "binding": "jsonrpc"})
                    assert not registry.get_sample_value(PREFIX + "failures_total", {**starved, "binding": "jsonrpc"})
    finally:
        server.close()


async def test_runs_still_waiting_at_shutdown_end_as_cancelled(tmp_path: Path) -> None:
    import structlog

    from tests.daemon.helpers import running_daemon

    server, origin = await _blackhole()
    agents = [{"name": f"a{i}", "url": origin, "modules": ["m"]} for i in range(5)]
    cfg = write_config(tmp_path / "c.yaml", agents, modules={"m": {"prober": "ping", "interval": "60s",
                                                                   "timeout": "30s"}})
    try:
        with structlog.testing.capture_logs() as logs:
            async with running_daemon(cfg, max_concurrency=1, first_pass_rate=2000, drain_timeout=0.1) as (d, _):
                await wait_for(lambda: d.runner.slots.waiting >= 4)
                assert d.runner.slots.waiting == 4
        assert d.runner.slots.waiting == 0
        assert sum(1 for e in logs if e["event"] == "probe_cancelled") == 5  # the four waiting and the one running
    finally:
        server.close()


async def test_a_waiter_cancelled_just_before_its_slot_came_passes_the_slot_on() -> None:
    """The cancelled task has not run its handler yet when the slot is released: the next waiter gets it."""
    from probe.runner import Slots

    slots = Slots(1)
    assert slots.try_acquire()
    first = asyncio.create_task(slots.acquire(5))
    second = asyncio.create_task(slots.acquire(5))
    await asyncio.sleep(0.01)
    assert slots.waiting == 2
    first.cancel()  # its future is cancelled now; its except clause runs on a later pass of the loop
    slots.release()
    assert await second and slots.used == 1
    with pytest.raises(asyncio.CancelledError):
        await first
    slots.release()
    assert slots.used == 0 and slots.waiting == 0
