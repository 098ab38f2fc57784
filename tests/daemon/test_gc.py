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
from tests.daemon.helpers import write_config


class _Node:
    """A cycle's member that a weak reference can watch."""

    def __init__(self) -> None:
        self.other: _Node | None = None


def _cycle() -> weakref.ref[_Node]:
    a, b = _Node(), _Node()
    a.other, b.other = b, a
    return weakref.ref(a)


async def test_a_full_collection_freezes_the_lasting_state_grown_since_the_last_freeze() -> None:
    mon = SelfMonitor(Metrics([1], []))
    mon.start()
    try:
        mon.freeze()
        frozen = gc.get_freeze_count()
        grown = max(selfmon.REFREEZE_FLOOR, int(selfmon.REFREEZE_GROWTH * frozen)) + 1000
        kept = [[i] for i in range(grown)]  # lasting state built after the freeze (history rings, cached cards)
        gc.collect()  # a full collection, as the collector makes them
        assert gc.get_freeze_count() >= frozen + len(kept) and mon.refreezes == 1
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
        assert gc.get_freeze_count() >= frozen + len(kept)
    finally:
        await d.stop()
