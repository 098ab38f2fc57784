"""The lag governor (probe/admission.py): fewer runs at once while the event loop is the bottleneck, all of the
slots again once it has room, on the real Slots and, in the last test, on a real loop held busy."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from structlog.testing import capture_logs

from probe import admission
from probe.admission import Governor
from probe.metrics import PREFIX
from probe.runner import Slots
from probe.selfmon import SelfMonitor
from tests.daemon.helpers import get, running_daemon, wait_for, write_config

HIGH, LOW, MID = admission.LAG_HIGH * 3, admission.LAG_LOW / 3, (admission.LAG_HIGH + admission.LAG_LOW) / 2


async def _busy(limit: int, waiting: int) -> tuple[Slots, list[asyncio.Task[bool]]]:
    """Slots with every slot held and `waiting` runs queued behind them."""
    slots = Slots(limit)
    assert all([await slots.acquire(0) for _ in range(limit)])
    waiters = [asyncio.create_task(slots.acquire(60)) for _ in range(waiting)]
    await asyncio.sleep(0)
    assert slots.waiting == waiting
    return slots, waiters


async def test_a_lagging_loop_lowers_the_cap_down_to_the_floor_and_no_further() -> None:
    slots, waiters = await _busy(1024, 5)
    gov = Governor(slots)
    gov.decide(HIGH)
    assert slots.cap == int(1024 * admission.DECREASE) and slots.open == slots.cap
    for _ in range(40):
        gov.decide(HIGH)
    assert slots.cap == admission.MIN_CAP
    assert not await slots.acquire(0)  # 1,024 still held: nobody new gets in until they fall below the cap
    for _ in range(1024 - admission.MIN_CAP):
        slots.release()  # released slots are not handed on while over the cap
    assert slots.used == admission.MIN_CAP and slots.waiting == 5
    slots.release()  # at the cap: the next release hands its slot to a waiter
    assert slots.used == admission.MIN_CAP and slots.waiting == 4
    for w in waiters:
        w.cancel()


async def test_the_cap_comes_back_only_while_runs_wait_on_a_loop_with_room() -> None:
    slots, waiters = await _busy(100, 30)
    gov = Governor(slots)
    gov.decide(HIGH)
    assert slots.cap == 80
    gov.decide(MID)  # between the thresholds: held
    assert slots.cap == 80
    gov.decide(LOW)  # room, runs waiting, every open slot held: x1.25, clamped to the limit
    assert slots.cap == 100 and slots.used == 100
    for _ in range(30):
        slots.release()  # each release hands its slot to a waiter
    await asyncio.sleep(0)
    assert slots.waiting == 0 and all(w.done() and w.result() for w in waiters)
    gov.decide(HIGH)
    gov.decide(LOW)  # no run waits: nothing to grow for
    assert slots.cap == 80


async def test_raising_the_cap_admits_waiters_at_once() -> None:
    slots, waiters = await _busy(40, 10)
    gov = Governor(slots)
    gov.decide(HIGH)  # 32
    for _ in range(8):
        slots.release()  # 40 -> 32 held, none handed on (over the cap)
    assert slots.used == 32 and slots.waiting == 10
    gov.decide(LOW)  # 32 -> 40: eight waiters get a slot now
    await asyncio.sleep(0)
    assert slots.used == 40 and slots.waiting == 2
    assert sum(w.done() for w in waiters) == 8
    for w in waiters:
        w.cancel()


async def test_a_small_limit_is_never_exceeded_and_resize_starts_over() -> None:
    slots, waiters = await _busy(4, 1)
    gov = Governor(slots)
    gov.decide(HIGH)
    assert slots.cap == 4  # the floor is above the limit: the limit wins
    slots.resize(200)
    assert slots.cap == 200 and slots.used == 5  # growing hands a slot to the waiter at once
    await asyncio.gather(*waiters)


def test_the_median_of_a_period_decides_so_one_pause_does_not() -> None:
    slots = Slots(100)
    slots.used = 100  # every slot held (no waiters needed to shrink)
    gov = Governor(slots)
    t = 0.0
    for lag in [LOW] * 10 + [2.0] + [LOW] * 10:  # one 2 s pause (a full collection) among quiet samples
        gov.sample(t, lag)
        t += 0.05
    assert slots.cap == 100 and gov.changes == 0
    for _ in range(25):
        gov.sample(t, HIGH)
        t += 0.05
    assert slots.cap == 80 and gov.changes == 1


async def test_entering_and_leaving_the_capped_state_is_logged_once_each() -> None:
    slots, waiters = await _busy(64, 3)
    gov = Governor(slots)
    with capture_logs() as logs:
        gov.decide(HIGH)
        gov.decide(HIGH)
        for _ in range(10):
            gov.decide(LOW)
    events = [e["event"] for e in logs]
    assert events == ["admission_capped", "admission_restored"], logs
    assert logs[0]["open_slots"] == 51 and logs[0]["slots"] == 64
    assert slots.cap == 64
    for w in waiters:
        w.cancel()


async def test_a_loop_held_busy_lowers_the_open_slots_and_a_quiet_one_restores_them() -> None:
    """The self-monitor's real lag samples drive it: a callback that holds the loop 4 x LAG_HIGH at a time."""
    from probe.metrics import Metrics

    slots, waiters = await _busy(64, 3)
    gov = Governor(slots)
    mon = SelfMonitor(Metrics([0.1], []), on_lag=gov.sample)
    mon.start()
    loop = asyncio.get_running_loop()
    hog: list[asyncio.TimerHandle] = []

    def hold() -> None:
        time.sleep(4 * admission.LAG_HIGH)  # a timer due during it is late by a uniform share: median 2 x HIGH
        hog.append(loop.call_later(0.005, hold))

    try:
        hold()
        await wait_for(lambda: slots.cap < 64, timeout=10)
        hog[-1].cancel()
        hog.append(loop.call_later(3600, lambda: None))
        await wait_for(lambda: slots.cap == 64, timeout=15)  # quiet again, runs waiting: back up, x1.25 a second
    finally:
        hog[-1].cancel()
        await mon.stop()
        for w in waiters:
            w.cancel()


async def test_the_daemon_exports_its_open_slots(tmp_path: Path) -> None:
    async with running_daemon(write_config(tmp_path / "probe.yaml", [])) as (d, base):
        _, text, _ = await get(f"{base}/metrics")
        assert f"{PREFIX}probe_slots_open {float(d.runner.slots.limit)}" in text
        d.runner.slots.govern(d.runner.slots.limit - 3)
        _, text, _ = await get(f"{base}/metrics")
        assert f"{PREFIX}probe_slots_open {float(d.runner.slots.limit - 3)}" in text
        assert d.governor.slots is d.runner.slots
