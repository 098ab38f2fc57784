"""Kept-alive connections the server dropped are not the next request's fault; fresh ones that fail still are."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager

import pytest

from probe.wire.http import ClientConfig, ConnectFailed, Deadline, DeadlineExceeded, HttpClient, ProbePoolFull

Handler = Callable[[int, int, asyncio.StreamReader, asyncio.StreamWriter], Awaitable[bool]]


def _answer(status: int, *, close_header: bool = False) -> bytes:
    body = b'{"ok": true}'
    head = f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n"
    return (head + ("Connection: close\r\n" if close_header else "") + "\r\n").encode() + body


async def _read_request(reader: asyncio.StreamReader) -> bool:
    head = await reader.readuntil(b"\r\n\r\n") if not reader.at_eof() else b""
    if not head:
        return False
    length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                   if line.lower().startswith(b"content-length:")), 0)
    await reader.readexactly(length)
    return True


@asynccontextmanager
async def raw_server(handler: Handler, *, idle: float | None = None,
                     idle_rst: bool = False) -> AsyncIterator[tuple[str, list[int]]]:
    """A loopback HTTP/1.1 server written by hand, so the test controls exactly when sockets close; with `idle`,
    a connection waiting that long for its next request is closed (reset with `idle_rst`)."""
    connections: list[int] = []

    async def next_request(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        try:
            async with asyncio.timeout(idle):
                return await _read_request(reader)
        except TimeoutError:
            if idle_rst:
                _reset(writer)
            return False

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        conn = len(connections)
        connections.append(0)
        try:
            while await next_request(reader, writer):
                connections[conn] += 1
                if not await handler(conn, connections[conn], reader, writer):
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/rpc", connections
    finally:
        server.close()
        await server.wait_closed()


def _reset(writer: asyncio.StreamWriter) -> None:
    """Abort the connection (RST), as a crashing server or a proxy does."""
    transport = writer.transport
    assert isinstance(transport, asyncio.Transport)
    transport.abort()


async def _post(client: HttpClient, url: str) -> tuple[int, str | None]:
    resp = await client.request("POST", url, deadline=Deadline.after(5), body=b"{}",
                                headers={"Content-Type": "application/json"})
    return resp.status, resp.exchange.retried


@pytest.mark.parametrize("drop", ["close", "reset"])
async def test_a_kept_alive_connection_dropped_after_a_500_is_retried_fresh(drop: str) -> None:
    async def handler(conn: int, nth: int, _r: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        if conn == 0 and nth == 2:  # the server forgot the connection after its 500, without `Connection: close`
            if drop == "reset":
                _reset(writer)
            return False
        writer.write(_answer(500 if conn == 0 else 200))
        await writer.drain()
        return True

    async with HttpClient() as client, raw_server(handler) as (url, connections):
        assert await _post(client, url) == (500, None)
        status, retried = await _post(client, url)
    assert status == 200  # the second request is answered, not blamed for the dropped connection
    assert retried is not None and "reused connection" in retried and "fresh connection" in retried
    assert len(connections) == 2


async def test_connection_close_is_honoured() -> None:
    async def handler(_conn: int, _nth: int, _r: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        writer.write(_answer(500, close_header=True))
        await writer.drain()
        await asyncio.sleep(0.2)  # keep the socket open: only the header says not to reuse it
        return True

    async with HttpClient() as client, raw_server(handler) as (url, connections):
        assert await _post(client, url) == (500, None)
        assert await _post(client, url) == (500, None)
    assert connections == [1, 1]  # a new connection for the second request, no retry needed


async def test_a_server_that_resets_fresh_connections_still_fails() -> None:
    async def handler(_conn: int, _nth: int, _r: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        _reset(writer)
        return False

    async with HttpClient() as client, raw_server(handler) as (url, connections):
        with pytest.raises(ConnectFailed) as info:
            await _post(client, url)
    assert info.value.exchange is not None and info.value.exchange.retried is None
    assert len(connections) == 1  # a fresh connection that fails is not retried


async def test_the_retry_fails_too_when_the_server_resets_every_reused_and_fresh_connection() -> None:
    async def handler(conn: int, _nth: int, _r: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        if conn == 0 and _nth == 1:
            writer.write(_answer(200))
            await writer.drain()
            return True
        _reset(writer)
        return False

    async with HttpClient() as client, raw_server(handler) as (url, connections):
        assert await _post(client, url) == (200, None)
        with pytest.raises(ConnectFailed) as info:
            await _post(client, url)
    assert info.value.exchange is not None and info.value.exchange.retried is not None  # recorded, then failed
    assert len(connections) == 2  # exactly one retry


@pytest.mark.parametrize("method", ["POST", "GET"])
@pytest.mark.parametrize("partial", [b"H", b"HTTP/1.1 200 OK\r\nContent-"])
async def test_a_reused_connection_that_sent_part_of_the_answer_is_not_retried(method: str, partial: bytes) -> None:
    # a byte of the answer arrived: the server took the request and failed it (Go's net/http retries only when
    # nothing was read; aiohttp retried a GET silently, whatever had arrived)
    async def handler(conn: int, nth: int, _r: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        writer.write(partial if nth == 2 else _answer(200))
        await writer.drain()
        return nth == 1

    async with HttpClient() as client, raw_server(handler) as (url, connections):
        body = b"{}" if method == "POST" else None
        assert (await client.request(method, url, deadline=Deadline.after(5), body=body)).status == 200
        with pytest.raises(ConnectFailed) as info:
            await client.request(method, url, deadline=Deadline.after(5), body=body)
    assert info.value.exchange is not None and info.value.exchange.retried is None
    assert connections == [2]  # no second connection


async def test_a_get_on_a_dropped_kept_alive_connection_is_retried_and_recorded() -> None:
    async def handler(conn: int, nth: int, _r: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        if conn == 0 and nth == 2:
            return False  # closed without a byte
        writer.write(_answer(200))
        await writer.drain()
        return True

    async with HttpClient() as client, raw_server(handler) as (url, connections):
        assert (await client.request("GET", url, deadline=Deadline.after(5))).status == 200
        resp = await client.request("GET", url, deadline=Deadline.after(5))
    assert resp.status == 200 and resp.exchange.retried is not None and "fresh connection" in resp.exchange.retried
    assert len(connections) == 2


async def _answer_all(_conn: int, _nth: int, _r: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
    writer.write(_answer(200))
    await writer.drain()
    return True


def idle_closing_server(idle: float, *, rst: bool) -> AbstractAsyncContextManager[tuple[str, list[int]]]:
    """A keep-alive server that closes (FIN, or RST) a connection idle for `idle` seconds, as nginx's
    keepalive_timeout or a NAT/load balancer's idle timer does between two probes."""
    return raw_server(_answer_all, idle=idle, idle_rst=rst)


@pytest.mark.parametrize("rst", [False, True], ids=["fin", "rst"])
async def test_a_pooled_connection_closed_while_idle_between_probes_is_no_failure(rst: bool) -> None:
    async with HttpClient() as client, idle_closing_server(0.05, rst=rst) as (url, connections):
        assert await _post(client, url) == (200, None)
        await asyncio.sleep(0.3)  # the server's idle timer fires between the two probes
        status, _retried = await _post(client, url)
    assert status == 200
    assert connections == [1, 1]


@pytest.mark.parametrize("rst", [False, True], ids=["fin", "rst"])
async def test_the_server_idle_timeout_racing_the_probes_reuse_is_no_failure(rst: bool) -> None:
    # the server's keep-alive timeout equals the probe's wait before reusing: the close and the next request cross
    # on the wire, in either order, at each of these offsets around the server's timer
    idle = 0.05
    async with HttpClient() as client, idle_closing_server(idle, rst=rst) as (url, connections):
        for offset in (-0.004, -0.002, -0.001, 0.0, 0.0005, 0.001, 0.002, 0.004):
            assert (await _post(client, url))[0] == 200
            await asyncio.sleep(idle + offset)
            assert (await _post(client, url))[0] == 200
            await asyncio.sleep(idle * 2)  # let the server close the connection before the next round
    assert sum(connections) == 16


@pytest.mark.parametrize("fresh", [False, True], ids=["pool", "fresh"])
async def test_a_deadline_passing_while_waiting_for_a_pooled_connection_is_the_probes(fresh: bool) -> None:
    # every connection of the probe's is held by another run (a neighbour that never answers): the request never
    # left, so its deadline passing says nothing about the agent (before: DeadlineExceeded, an invoke_timeout)
    async def hold(_conn: int, _nth: int, _r: asyncio.StreamReader, _w: asyncio.StreamWriter) -> bool:
        await asyncio.sleep(5)
        return False

    config = ClientConfig(fresh=fresh)
    async with HttpClient(limit=1) as client, raw_server(hold) as (held_url, _), \
            raw_server(_answer_all) as (url, connections):
        neighbour = asyncio.create_task(client.request("POST", held_url, deadline=Deadline.after(3), body=b"{}",
                                                       config=config))
        await asyncio.sleep(0.1)
        with pytest.raises(ProbePoolFull) as info:
            await client.request("POST", url, deadline=Deadline.after(0.3), body=b"{}", config=config)
        neighbour.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await neighbour
        assert info.value.kind == "probe_pool" and "the agent was not called" in str(info.value)
        assert connections == []  # nothing reached the agent
        # a connection that came free in time: an ordinary answer, and a slow agent's timeout is still its own
        assert await _post(client, url) == (200, None)
        with pytest.raises(DeadlineExceeded):
            await client.request("POST", held_url, deadline=Deadline.after(0.3), body=b"{}", config=config)
