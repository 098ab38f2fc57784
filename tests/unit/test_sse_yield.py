"""An SSE stream yields to the loop for bytes that were already there, not after a read that waited.

`SseStream.events` must not let a flooding stream (data always buffered, so no read suspends) starve the daemon's
other probes, and must not cost a small stream that came whole with its headers an extra pass of the loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from probe.wire.bindings import jsonrpc
from probe.wire.bindings.jsonrpc import SseStream
from probe.wire.sse import SSEEvent


class _Raw:
    """What SseStream reads: chunks, and how many reads waited for the network."""

    def __init__(self, chunks: list[bytes], waited: set[int]) -> None:
        self._chunks = chunks
        self._waited = waited  # indexes of the chunks whose read waited
        self.waits = 0

    async def chunks(self) -> AsyncIterator[bytes]:
        for i, chunk in enumerate(self._chunks):
            if i in self._waited:
                self.waits += 1
                await asyncio.sleep(0)  # the network: the loop runs other work
            yield chunk


def _event(n: int, size: int) -> bytes:
    return b"data: " + (b'{"n": %d, "pad": "' % n) + b"x" * size + b'"}\n\n'


async def _ticks_while_reading(raw: _Raw) -> tuple[int, int]:
    """(events read, passes of the loop another task got meanwhile)."""
    stream = SseStream("m", raw, lambda ev: ev)  # type: ignore[arg-type]
    ticks = 0
    done = False

    async def ticker() -> None:
        nonlocal ticks
        while not done:
            await asyncio.sleep(0)
            ticks += 1

    task = asyncio.create_task(ticker())
    await asyncio.sleep(0)
    start, events = ticks, 0
    async for ev in stream.events():
        assert isinstance(ev, SSEEvent)
        events += 1
    during = ticks - start
    done = True
    await task
    return events, during


async def test_a_buffered_flood_yields_every_yield_bytes() -> None:
    chunk = b"".join(_event(i, 900) for i in range(1))  # ~1 KiB a chunk, all already buffered
    n = 200
    events, ticks = await _ticks_while_reading(_Raw([chunk] * n, waited=set()))
    assert events == n
    assert ticks >= (n * len(chunk)) // jsonrpc._YIELD_BYTES - 1


async def test_one_big_buffered_chunk_is_followed_by_a_yield() -> None:
    big = b"".join(_event(i, 100) for i in range(400))  # > _YIELD_BYTES in one read
    assert len(big) >= jsonrpc._YIELD_BYTES
    events, ticks = await _ticks_while_reading(_Raw([big, big], waited=set()))
    assert events == 800 and ticks >= 2


async def test_a_small_stream_that_came_whole_costs_no_pass_of_the_loop() -> None:
    events, ticks = await _ticks_while_reading(_Raw([b"".join(_event(i, 50) for i in range(4))], waited=set()))
    assert events == 4 and ticks == 0


async def test_a_read_that_waited_restarts_the_count() -> None:
    # 15 KiB buffered, then chunks each waited for: the waits are the passes, no extra yield is added
    chunk = _event(0, 1000)
    raw = _Raw([chunk] * 15 + [chunk] * 10, waited=set(range(15, 25)))
    events, ticks = await _ticks_while_reading(raw)
    assert events == 25
    assert ticks == 10  # one pass for each read that waited, none forced
