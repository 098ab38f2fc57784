"""A stream's body reads (`StreamResponse.chunks`) give what the general read loop gives.

`chunks` takes what aiohttp already holds without a timer and waits (under the deadline) only when nothing is
buffered. Against raw servers that send the body at once, trickle it, break its chunked framing, close or reset
mid-body, or stall past the deadline, it yields the same bytes and raises the same error (type and text) as the
general loop (`readany` under `_guard` for every read) — the reference kept here.
"""

from __future__ import annotations

import asyncio
import socket
import struct
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import pytest

from probe.wire import http
from probe.wire.http import Deadline, HttpClient, StreamResponse, WireError

EVENTS = [b'data: {"n": %d}\n\n' % i for i in range(5)]
HEAD = (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n"
        b"Cache-Control: no-cache\r\n\r\n")


def _chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


Send = Callable[[asyncio.StreamWriter], Awaitable[None]]


async def _at_once(w: asyncio.StreamWriter) -> None:
    w.write(HEAD + b"".join(_chunk(e) for e in EVENTS) + b"0\r\n\r\n")


async def _trickle(w: asyncio.StreamWriter) -> None:
    w.write(HEAD)
    for e in EVENTS:
        await w.drain()
        await asyncio.sleep(0.01)
        w.write(_chunk(e))
    await asyncio.sleep(0.01)
    w.write(b"0\r\n\r\n")


async def _then(w: asyncio.StreamWriter, rest: bytes) -> None:
    """The headers and a first event, then (once the client has read them) `rest`."""
    w.write(HEAD + _chunk(EVENTS[0]))
    await w.drain()
    await asyncio.sleep(0.05)
    w.write(rest)


async def _bad_framing(w: asyncio.StreamWriter) -> None:
    await _then(w, b"zz\r\nnot a chunk\r\n")


async def _closed_mid_body(w: asyncio.StreamWriter) -> None:
    await _then(w, b"40\r\n" + EVENTS[1])  # a 64-byte chunk cut short, then EOF


async def _buffered_then_broken(w: asyncio.StreamWriter) -> None:
    w.write(HEAD + _chunk(EVENTS[0]) + _chunk(EVENTS[1]))
    await w.drain()
    await asyncio.sleep(0.05)
    w.write(_chunk(EVENTS[2]) + b"zz\r\n")  # buffered events, then a framing error behind them


async def _reset_mid_body(w: asyncio.StreamWriter) -> None:
    w.write(HEAD + _chunk(EVENTS[0]))
    await w.drain()
    await asyncio.sleep(0.05)
    sock = w.get_extra_info("socket")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close sends RST


async def _stall(w: asyncio.StreamWriter) -> None:
    w.write(HEAD + _chunk(EVENTS[0]))
    await asyncio.sleep(2)


SCENARIOS: dict[str, Send] = {"at-once": _at_once, "trickle": _trickle, "bad-framing": _bad_framing,
                              "closed-mid-body": _closed_mid_body, "reset-mid-body": _reset_mid_body,
                              "buffered-then-broken": _buffered_then_broken, "stall": _stall}


@asynccontextmanager
async def raw_server(send: Send) -> AsyncIterator[str]:
    async def handle(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        try:
            await r.readuntil(b"\r\n\r\n")  # a GET: no request body
            await send(w)
            await w.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            w.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/stream"
    finally:
        server.close()
        await server.wait_closed()


async def _reference(sr: StreamResponse) -> AsyncIterator[bytes]:
    """The general loop: every read, buffered or not, under the deadline's guard."""
    while True:
        async with http._guard(sr._deadline, sr.exchange, "the stream"):
            chunk = await sr.resp.content.readany()
        if not chunk:
            return
        yield chunk


async def _read(url: str, reader: Callable[[StreamResponse], AsyncIterator[bytes]]) -> tuple[bytes, str | None]:
    got = b""
    async with HttpClient() as client, client.stream("GET", url, deadline=Deadline.after(0.5), headers={},
                                                     body=None) as sr:
        try:
            async for chunk in reader(sr):
                got += chunk
        except WireError as exc:
            return got, f"{type(exc).__name__}: {exc}"
    return got, None


@pytest.mark.parametrize("name", list(SCENARIOS))
async def test_chunks_read_what_the_general_loop_reads(name: str) -> None:
    async with raw_server(SCENARIOS[name]) as url:
        fast = await _read(url, lambda sr: sr.chunks())
        general = await _read(url, _reference)
    assert fast == general
    if name in ("at-once", "trickle"):
        assert fast == (b"".join(EVENTS), None)
    else:  # the broken and stalled ones name what happened, after what was read cleanly
        assert fast[1] is not None and fast[0].startswith(EVENTS[0])
    if name == "stall":
        assert fast[1].startswith("DeadlineExceeded")
