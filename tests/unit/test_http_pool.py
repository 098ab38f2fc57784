"""The client's own pool of kept-alive connections (`probe.wire.http._Pool`, what `HttpClient._send_pooled` sends
on): a connection is reused only when its answer was read to the end and it can carry another request; the total
and per-origin bounds hold, a slot is never lost (an error, a cancelled wait), and idle connections are closed after
the keep-alive, as aiohttp's connector kept them for the ClientSession the client used before."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

from probe.wire import http as wire_http
from probe.wire.http import ConnectFailed, Deadline, DeadlineExceeded, HttpClient, WireError
from tests.unit.test_http_connections import _answer, _answer_all, raw_server


@asynccontextmanager
async def _counting_server(delay: float = 0.0, body: bytes = b'{"ok": true}', every: dict[str, int] | None = None,
                           ) -> AsyncIterator[tuple[str, dict[str, int]]]:
    """A keep-alive server that counts connections (made, closed by the client) and requests (all, and the most
    in hand at once); `every`, shared by several servers, counts the requests in hand over all of them."""
    seen = {"made": 0, "closed_by_client": 0, "requests": 0, "in_hand": 0, "most": 0}
    every = every if every is not None else {}
    every.setdefault("in_hand", 0)
    every.setdefault("most", 0)

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen["made"] += 1
        try:
            while True:
                try:
                    await reader.readuntil(b"\r\n\r\n")
                except asyncio.IncompleteReadError:
                    seen["closed_by_client"] += 1
                    return
                seen["requests"] += 1
                for count in (seen, every):
                    count["in_hand"] += 1
                    count["most"] = max(count["most"], count["in_hand"])
                await asyncio.sleep(delay)
                for count in (seen, every):
                    count["in_hand"] -= 1
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
                             % len(body) + body)
                await writer.drain()
        except ConnectionError:
            seen["closed_by_client"] += 1
        finally:
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    try:
        yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/", seen
    finally:
        server.close()


async def _get(client: HttpClient, url: str, max_bytes: int = 1 << 20) -> wire_http.Response:
    return await client.request("GET", url, deadline=Deadline.after(5), max_bytes=max_bytes)


async def test_a_connection_read_to_its_end_carries_the_next_requests() -> None:
    async with _counting_server() as (url, seen), HttpClient() as client:
        first = await _get(client, url)
        later = [await _get(client, url) for _ in range(3)]
    assert seen["made"] == 1 and seen["requests"] == 4
    assert first.exchange.phases.connect > 0
    assert all(r.status == 200 and r.exchange.phases.connect == 0 and r.exchange.retried is None for r in later)


async def test_an_answer_not_read_to_its_end_closes_its_connection() -> None:
    # a body larger than the reader's buffers: what is left of it is still on the wire when the probe stops reading
    # (an answer that had arrived whole is read to its end: its connection is reused, as aiohttp's session did)
    async with _counting_server(body=b"x" * (8 << 20)) as (url, seen), HttpClient() as client:
        with pytest.raises(WireError):
            await _get(client, url, max_bytes=100)  # over the limit: the rest is never read
        assert (await _get(client, url, max_bytes=16 << 20)).status == 200
        async with client.stream("POST", url, deadline=Deadline.after(5), headers={}, body=b"{}") as stream:
            async for _chunk in stream.chunks():
                break  # a stream left half-read
        assert (await _get(client, url, max_bytes=16 << 20)).status == 200
        await asyncio.sleep(0.05)
    assert seen["made"] == 3  # the over-limit body's and the half-read stream's connections were not reused
    assert seen["closed_by_client"] == 2


@pytest.mark.parametrize(("limit", "per_host"), [(100, 2), (3, 8)])
async def test_the_total_and_per_origin_bounds_hold_and_every_request_is_served(limit: int, per_host: int) -> None:
    every: dict[str, int] = {}
    async with _counting_server(0.05, every=every) as (url, seen), \
            _counting_server(0.05, every=every) as (other, seen_other), \
            HttpClient(limit=limit, limit_per_host=per_host) as client:
        results = await asyncio.gather(*(_get(client, u) for u in [url, other] * 6))
        assert [r.status for r in results] == [200] * 12
        idle = sum(len(conns) for conns in client._pool._idle.values())
    # requests in hand at once, per origin and over both (idle connections do not count against the total, as in
    # aiohttp's connector)
    assert max(seen["most"], seen_other["most"]) <= min(per_host, limit)
    assert every["most"] == min(2 * per_host, limit)
    assert client._pool._busy == 0 and client._pool._busy_at == {} and not client._pool._line
    assert idle == seen["made"] + seen_other["made"]  # every connection came back to the pool


async def test_failures_and_deadlines_give_their_slot_back() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}/"
    async with _counting_server(delay=0.2) as (url, _seen), HttpClient(limit=1) as client:
        for _ in range(3):
            with pytest.raises(ConnectFailed):
                await _get(client, closed)
        with pytest.raises(DeadlineExceeded):
            await client.request("GET", url, deadline=Deadline.after(0.05))
        assert (await _get(client, url)).status == 200
        assert client._pool._busy == 0


Waiting = asyncio.Task[wire_http.ResponseHandler | None]


async def _two_in_line() -> tuple[wire_http._Pool, wire_http.ConnectionKey, Waiting, Waiting]:
    """A pool of one slot, taken, and two requests waiting in line for it."""
    pool = wire_http._Pool(limit=1, per_host=1)
    key = wire_http._connection_key(wire_http.URL("http://127.0.0.1:9/"), wire_http._default_ssl())
    assert await pool.acquire(key, wire_http._Timer()) is None
    first = asyncio.create_task(pool.acquire(key, wire_http._Timer()))
    second = asyncio.create_task(pool.acquire(key, wire_http._Timer()))
    await asyncio.sleep(0)
    assert len(pool._line) == 2
    return pool, key, first, second


async def test_a_wait_cancelled_as_its_turn_came_passes_the_slot_on() -> None:
    pool, key, second, third = await _two_in_line()
    pool.release(key, None)  # the second's turn: the slot is handed to it ...
    second.cancel()  # ... and it is cancelled before it runs
    with contextlib.suppress(asyncio.CancelledError):
        await second
    assert await asyncio.wait_for(third, 1) is None  # the slot went on to the third
    assert pool._busy == 1 and not pool._line
    pool.release(key, None)
    assert pool._busy == 0 and pool._busy_at == {}


async def test_idle_connections_are_closed_after_the_keep_alive_and_at_close() -> None:
    async with _counting_server() as (url, seen):
        client = HttpClient()
        client._pool.keepalive = 0.05
        async with client:
            await _get(client, url)
            await asyncio.sleep(0.3)  # the sweep closes it: the server sees the client's end close
            assert seen["closed_by_client"] == 1 and client._pool._idle == {}
            await _get(client, url)
        await asyncio.sleep(0.05)
    assert seen["made"] == 2 and seen["closed_by_client"] == 2  # the second closed with the client


async def test_connection_close_and_http_1_0_answers_are_not_reused() -> None:
    async def one_zero(_conn: int, _nth: int, _r: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        writer.write(_answer(200).replace(b"HTTP/1.1", b"HTTP/1.0"))
        await writer.drain()
        await asyncio.sleep(0.2)  # the socket stays open: only the version says not to reuse it
        return True

    async with raw_server(one_zero) as (url, connections), HttpClient() as client:
        for _ in range(2):
            assert (await _get(client, url)).status == 200
    assert connections == [1, 1]
    async with raw_server(_answer_all) as (url, connections), HttpClient() as client:
        for _ in range(3):
            assert (await _get(client, url)).status == 200
    assert connections == [3]


class _Connection:
    """What the pool asks of a connection it is given back."""

    def __init__(self) -> None:
        self.should_close = False
        self.closed = False

    def is_connected(self) -> bool:
        return not self.closed

    def close(self) -> None:
        self.closed = True


async def test_a_connection_given_back_after_the_client_closed_is_closed_not_kept() -> None:
    pool = wire_http._Pool(limit=2, per_host=2)
    key = wire_http._connection_key(wire_http.URL("http://127.0.0.1:9/"), wire_http._default_ssl())
    kept, late = _Connection(), _Connection()
    for _ in (kept, late):
        assert await pool.acquire(key, wire_http._Timer()) is None
    pool.release(key, kept)  # type: ignore[arg-type]
    assert not kept.closed and len(pool._idle[key]) == 1
    pool.close()  # the idle one is closed at once; the one still in use when it comes back
    assert kept.closed and pool._idle == {}
    pool.release(key, late)  # type: ignore[arg-type]
    assert late.closed and pool._idle == {} and pool._busy == 0


async def test_an_answer_sent_on_an_idle_connection_is_never_read_as_the_next_requests() -> None:
    # a hostile or broken server writes a second, unsolicited answer after the first, while the connection sits in
    # the pool: the next request must get its own answer on another connection, never the stale one (aiohttp's
    # ClientSession, the client's pool before 2026-12-06, read the stale 500 as the second request's answer)
    async def twice(conn: int, nth: int, _r: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        writer.write(_answer(200))
        await writer.drain()
        if conn == 0:
            await asyncio.sleep(0.05)
            writer.write(_answer(500))  # nobody asked
            await writer.drain()
        return True

    async with raw_server(twice) as (url, connections), HttpClient() as client:
        assert (await _get(client, url)).status == 200
        await asyncio.sleep(0.2)
        second = await _get(client, url)
    assert second.status == 200 and second.exchange.retried is None
    assert connections == [1, 1]


async def test_a_slot_freed_while_a_cancelled_wait_is_still_in_line_goes_to_the_next() -> None:
    # a deadline cancels one waiting request; before its task runs (and leaves the line), another request gives its
    # slot back: the slot goes past the cancelled wait to the next one (before: InvalidStateError, an internal error)
    pool, key, cancelled, waiting = await _two_in_line()
    cancelled.cancel()  # its future is cancelled at once; the task resumes (and leaves the line) later
    pool.release(key, None)
    with contextlib.suppress(asyncio.CancelledError):
        await cancelled
    assert await asyncio.wait_for(waiting, 1) is None
    assert pool._busy == 1 and not pool._line
