"""probe.stall: a wait the probe's own stall cut short is waited once more, and never blamed on the agent."""

from __future__ import annotations

import asyncio
import time

from probe.stall import StallWatch, Waited, material, patiently


def _block(seconds: float) -> None:
    time.sleep(seconds)  # the probe's own loop stands still (a collection, a starved container)


async def _never() -> None:
    await asyncio.Event().wait()


def test_material_share() -> None:
    assert not material(0.05, 0.2)  # below the sampler's granularity
    assert not material(1.0, 5.0) and material(1.25, 5.0)


async def test_the_watch_counts_a_stall_while_it_goes_on() -> None:
    watch = StallWatch()
    watch.start()
    try:
        await asyncio.sleep(0.12)
        before = watch.stalled_seconds()
        _block(0.4)
        assert watch.stalled_seconds() - before >= 0.3  # overdue: counted before the sampler even ran
        await asyncio.sleep(0.12)
        assert watch.stalled_seconds() - before >= 0.3
    finally:
        watch.stop()
    assert not watch.running


async def test_an_agent_slow_on_an_idle_probe_times_out() -> None:
    watch = StallWatch()
    watch.start()
    try:
        began = time.monotonic()
        waited, stalled = await patiently(_never(), 0.5, watch.stalled_seconds)
        assert waited is Waited.TIMED_OUT and stalled < 0.1
        assert time.monotonic() - began < 0.8  # no second wait without a stall
    finally:
        watch.stop()


async def test_a_stall_buys_the_agent_its_time_back() -> None:
    """Done 1.1 s after the start; the probe waits 1 s but stood still 0.6 s of it: the second wait sees it done."""
    watch = StallWatch()
    watch.start()
    try:
        asyncio.get_running_loop().call_later(0.1, _block, 0.6)
        waited, stalled = await patiently(asyncio.sleep(1.1), 1.0, watch.stalled_seconds)
        assert waited is Waited.DONE and stalled >= 0.5
    finally:
        watch.stop()


async def test_the_agent_gets_its_full_running_time_then_times_out() -> None:
    """One stall, then an agent that never answers: after the extra wait it had its whole second of a running
    probe, so the timeout is its own."""
    watch = StallWatch()
    watch.start()
    try:
        asyncio.get_running_loop().call_later(0.1, _block, 0.6)
        waited, _ = await patiently(_never(), 1.0, watch.stalled_seconds)
        assert waited is Waited.TIMED_OUT
    finally:
        watch.stop()


async def test_a_probe_that_keeps_stalling_judges_nothing() -> None:
    """A neighbour's flood: the loop stands still through the wait and through the extra one."""
    watch = StallWatch()
    watch.start()
    loop = asyncio.get_running_loop()
    flood = [loop.call_later(0.05 + 0.3 * i, _block, 0.25) for i in range(8)]
    try:
        waited, stalled = await patiently(_never(), 1.0, watch.stalled_seconds)
        assert waited is Waited.STALLED and material(stalled, 1.0)
    finally:
        for handle in flood:
            handle.cancel()
        watch.stop()


async def test_a_pending_wait_is_cancelled_unless_asked_not_to() -> None:
    watch = StallWatch()
    watch.start()
    try:
        task = asyncio.ensure_future(_never())
        await patiently(task, 0.1, watch.stalled_seconds)
        await asyncio.sleep(0)
        assert task.cancelled()
        kept = asyncio.ensure_future(_never())
        await patiently(kept, 0.1, watch.stalled_seconds, cancel=False)
        assert not kept.done()
        kept.cancel()
    finally:
        watch.stop()
