"""Per-phase timings of one exchange (resolve, connect, processing, transfer), taken by the HTTP client's own
connector and resolver, and the deadline and error naming of each part of the exchange."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from aiohttp import web

from probe.results import HttpExchange, HttpPhases
from probe.wire import http
from probe.wire.http import (
    BodyTooLarge,
    ClientConfig,
    ConnectionReset,
    Deadline,
    DeadlineExceeded,
    HttpClient,
    InvalidTarget,
)
from tests.agents.server import serve

FRESH = ClientConfig(fresh=True)


async def _card(_request: web.Request) -> web.Response:
    await asyncio.sleep(0.02)  # a measurable time to the first byte
    return web.json_response({"name": "x"})


async def _slow_body(request: web.Request) -> web.StreamResponse:
    resp = web.StreamResponse(headers={"Content-Type": "application/json", "Content-Length": "2"})
    await resp.prepare(request)
    await resp.write(b"{")
    await asyncio.sleep(float(request.query.get("wait", "0.2")))
    with contextlib.suppress(ConnectionError):  # the client may have given up
        await resp.write(b"}")
    return resp


async def _chunked(request: web.Request) -> web.StreamResponse:
    resp = web.StreamResponse(headers={"Content-Type": "application/json"})
    resp.enable_chunked_encoding()
    await resp.prepare(request)
    await resp.write(b"[" + b"1," * 50 + b"1]")
    return resp


async def _truncated(request: web.Request) -> web.StreamResponse:
    resp = web.StreamResponse(headers={"Content-Type": "application/json", "Content-Length": "100"})
    await resp.prepare(request)
    await resp.write(b'{"a": 1')
    assert request.transport is not None
    request.transport.close()  # the server goes away before the promised 100 bytes
    return resp


async def _slow_headers(_request: web.Request) -> web.Response:
    await asyncio.sleep(1)
    return web.json_response({})


@asynccontextmanager
async def server() -> AsyncIterator[int]:
    app = web.Application()
    app.router.add_get("/card", _card)
    app.router.add_get("/slow-body", _slow_body)
    app.router.add_get("/chunked", _chunked)
    app.router.add_get("/truncated", _truncated)
    app.router.add_get("/slow-headers", _slow_headers)
    async with serve(app) as origin:
        yield int(origin.rsplit(":", 1)[1])


def _consistent(ex: HttpExchange) -> None:
    p = ex.phases
    assert min(p.resolve, p.connect, p.tls, p.processing, p.transfer) >= 0
    assert p.resolve + p.connect + p.tls + p.processing + p.transfer <= ex.duration_s + 1e-6


async def test_a_fresh_connection_to_a_host_name_times_resolve_connect_and_processing() -> None:
    async with server() as port, HttpClient() as client:
        resp = await client.request("GET", f"http://localhost:{port}/card", deadline=Deadline.after(5), config=FRESH)
        again = await client.request("GET", f"http://localhost:{port}/card", deadline=Deadline.after(5),
                                     config=FRESH)
    for r in (resp, again):  # fresh: DNS, TCP and the wait for the first byte, every time
        p = r.exchange.phases
        assert r.status == 200 and p.resolve > 0 and p.connect > 0 and p.processing >= 0.015 and p.tls == 0
        _consistent(r.exchange)


async def test_an_address_literal_has_no_resolve_phase_and_the_pool_hides_connect() -> None:
    async with server() as port, HttpClient() as client:
        url = f"http://127.0.0.1:{port}/card"
        first = await client.request("GET", url, deadline=Deadline.after(5))
        second = await client.request("GET", url, deadline=Deadline.after(5))
        fresh = await client.request("GET", url, deadline=Deadline.after(5), config=FRESH)
    assert first.exchange.phases.resolve == 0 and first.exchange.phases.connect > 0
    # kept alive: the second request went out on the first one's connection, so only processing and transfer
    assert second.exchange.phases.connect == 0 and second.exchange.phases.resolve == 0
    assert second.exchange.phases.processing >= 0.015
    assert fresh.exchange.phases.connect > 0  # a fresh connection is measured even with a warm pool
    for r in (first, second, fresh):
        _consistent(r.exchange)


async def test_the_pool_resolves_a_host_name_once_and_charges_it_to_the_request_that_did() -> None:
    async with server() as port, HttpClient() as client:
        url = f"http://localhost:{port}/card"
        first = await client.request("GET", url, deadline=Deadline.after(5))
        second = await client.request("GET", url, deadline=Deadline.after(5))
    assert first.exchange.phases.resolve > 0 and first.exchange.phases.connect > 0
    assert second.exchange.phases.resolve == 0 and second.exchange.phases.connect == 0  # kept alive: no lookup


async def test_a_body_that_arrives_later_is_timed_as_transfer() -> None:
    async with server() as port, HttpClient() as client:
        resp = await client.request("GET", f"http://127.0.0.1:{port}/slow-body?wait=0.2", deadline=Deadline.after(5))
    assert resp.body == b"{}" and resp.exchange.phases.transfer >= 0.15
    _consistent(resp.exchange)


async def test_the_deadline_bounds_the_body_and_names_it() -> None:
    async with server() as port, HttpClient() as client:
        with pytest.raises(DeadlineExceeded) as err:
            await client.request("GET", f"http://127.0.0.1:{port}/slow-body?wait=2", deadline=Deadline.after(0.3))
    # named by the request, its query values redacted
    assert str(err.value).endswith("/slow-body?wait=<redacted>: body: not complete before the deadline")
    assert str(err.value).startswith("GET http://127.0.0.1:")
    ex = err.value.exchange
    assert ex is not None and ex.status == 200 and 0.25 <= ex.duration_s < 1.5  # the exchange so far is kept


async def test_the_deadline_bounds_the_response_headers_and_names_them() -> None:
    async with server() as port, HttpClient() as client:
        with pytest.raises(DeadlineExceeded) as err:
            await client.request("GET", f"http://127.0.0.1:{port}/slow-headers?token=s3cret",
                                 deadline=Deadline.after(0.2), config=FRESH)
    text = str(err.value)
    assert "response headers: not complete before the deadline" in text and "s3cret" not in text
    ex = err.value.exchange
    assert ex is not None and ex.status is None and ex.duration_s >= 0.15 and ex.phases.connect > 0


async def test_a_body_over_the_limit_is_refused_without_a_declared_length() -> None:
    async with server() as port, HttpClient() as client:
        ok = await client.request("GET", f"http://127.0.0.1:{port}/chunked", deadline=Deadline.after(5))
        with pytest.raises(BodyTooLarge):
            await client.request("GET", f"http://127.0.0.1:{port}/chunked", deadline=Deadline.after(5),
                                 max_bytes=10)
    assert ok.body.startswith(b"[1,") and len(ok.body) == 103


async def test_a_body_cut_short_is_a_connection_reset() -> None:
    async with server() as port, HttpClient() as client:
        with pytest.raises(ConnectionReset) as err:
            await client.request("GET", f"http://127.0.0.1:{port}/truncated", deadline=Deadline.after(5))
    assert ": body: the server closed the connection before the body was complete" in str(err.value)


def test_filling_an_exchange_is_what_pydantic_assignment_does() -> None:
    assert not HttpExchange.model_config.get("validate_assignment")  # _fill relies on it: nothing to validate
    phases = HttpPhases(connect=0.1, processing=0.2)
    by_fill = HttpExchange(method="GET", url="http://a/")
    http._fill(by_fill, status=200, content_type="application/json", phases=phases, duration_s=0.5)
    by_setattr = HttpExchange(method="GET", url="http://a/")
    by_setattr.status, by_setattr.content_type, by_setattr.phases, by_setattr.duration_s = (
        200, "application/json", phases, 0.5)
    assert by_fill == by_setattr and by_fill.model_fields_set == by_setattr.model_fields_set
    assert by_fill.model_dump_json() == by_setattr.model_dump_json()


async def test_a_url_refused_once_is_refused_every_time_and_an_accepted_one_is_remembered() -> None:
    async with server() as port, HttpClient() as client:
        good = f"http://127.0.0.1:{port}/card"
        for _ in range(2):
            assert (await client.request("GET", good, deadline=Deadline.after(5))).status == 200
            with pytest.raises(InvalidTarget, match="port"):
                await client.request("GET", f"http://127.0.0.1:{port}0000/card", deadline=Deadline.after(5))
    assert good in http._CHECKED and f"http://127.0.0.1:{port}0000/card" not in http._CHECKED


# ---- the answer's arrival is stamped as the loop hands its bytes over, not when the request's task next runs

AGENT_S = 0.1  # the agent's latency
BUSY_S = 0.15  # the loop busy while the answer comes in (the answer waits in the kernel: it counts)
NEIGHBOUR_S = 0.3  # work the loop runs after the answer came, before the request's task runs again


def _answer_then_neighbour(listener: socket.socket, neighbour: socket.socket, chunks: list[bytes]) -> None:
    """A server thread: read one request, answer it after AGENT_S (in `chunks`), then wake a neighbour."""
    conn, _ = listener.accept()
    with conn:
        seen = b""
        while b"\r\n\r\n" not in seen:
            seen += conn.recv(65536)
        head, _, body = seen.partition(b"\r\n\r\n")
        length = int(next((line.split(b":")[1] for line in head.split(b"\r\n")
                           if line.lower().startswith(b"content-length:")), b"0"))
        while len(body) < length:
            body += conn.recv(65536)
        time.sleep(AGENT_S)
        for chunk in chunks:
            conn.sendall(chunk)
        time.sleep(0.02)
        neighbour.send(b"x")  # after the answer's bytes: the loop sees both at once, the answer's first
        time.sleep(NEIGHBOUR_S + BUSY_S + 0.5)  # the connection stays open while the client reads


@asynccontextmanager
async def _answered_then_busy(chunks: list[bytes]) -> AsyncIterator[str]:
    """A loopback server (a thread) that answers one request with `chunks` after AGENT_S, while this loop is busy
    (BUSY_S) as the answer comes; then a neighbour's bytes, whose reader keeps the loop NEIGHBOUR_S more (the other
    runs' judging and recording) before the request's task runs again. Yields the server's origin."""
    loop = asyncio.get_running_loop()
    listener = socket.create_server(("127.0.0.1", 0))
    hog_r, hog_w = socket.socketpair()
    hog_r.setblocking(False)

    def neighbour() -> None:
        hog_r.recv(1)
        time.sleep(NEIGHBOUR_S)

    loop.add_reader(hog_r.fileno(), neighbour)
    server = threading.Thread(target=_answer_then_neighbour, args=(listener, hog_w, chunks), daemon=True)
    server.start()
    try:
        loop.call_later(AGENT_S / 2, time.sleep, BUSY_S)
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        loop.remove_reader(hog_r.fileno())
        server.join(5)
        for s in (listener, hog_r, hog_w):
            s.close()


@pytest.mark.parametrize("fresh", [True, False], ids=["fresh", "pooled"])
@pytest.mark.parametrize("chunks", [
    [b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"],
    [b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n",
     b"2\r\n{}\r\n0\r\n\r\n"],
], ids=["length", "chunked"])
async def test_a_busy_loop_after_the_answer_came_is_not_the_agents_latency(fresh: bool, chunks: list[bytes]) -> None:
    """A fleet's runs end together: each answer's task waits while the loop judges and records the others. The
    exchange's duration, its phases and the response's span end where the answer's bytes came in."""
    async with HttpClient() as client, _answered_then_busy(chunks) as origin:
        resp = await client.request("POST", f"{origin}/rpc", deadline=Deadline.after(5), body=b"{}",
                                    config=FRESH if fresh else ClientConfig())
        ended = time.monotonic()
    assert resp.status == 200 and resp.body == b"{}"
    took = resp.exchange.duration_s
    assert took is not None
    # the answer was handed over after the busy spell (AGENT_S / 2 + BUSY_S), the neighbour ran NEIGHBOUR_S after
    assert AGENT_S <= took < AGENT_S / 2 + BUSY_S + NEIGHBOUR_S / 2, took
    assert ended - resp.sent_at >= took + NEIGHBOUR_S * 0.9  # the task itself did wait for the neighbour
    assert resp.received_at - resp.sent_at == pytest.approx(took)
    phases = resp.exchange.phases
    assert phases is not None and phases.transfer < NEIGHBOUR_S / 2 and phases.processing < took


_EVENT = b'data: {"a":1}\n\n'


@pytest.mark.parametrize("chunks", [
    [b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n",
     b"%x\r\n%s\r\n0\r\n\r\n" % (len(_EVENT), _EVENT)],
    [b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 13\r\n\r\n", b"data: {}\n\n\n\n\n"],
], ids=["chunked", "length"])
async def test_a_busy_loop_after_a_stream_ended_is_not_the_agents_latency(chunks: list[bytes]) -> None:
    """The same for a stream: its end is when its last bytes came (`ended_at`), and the exchange ends there."""
    async with (HttpClient() as client, _answered_then_busy(chunks) as origin,
                client.stream("POST", f"{origin}/rpc", deadline=Deadline.after(5), headers={}, body=b"{}",
                              config=FRESH) as handle):
        body = b"".join([c async for c in handle.chunks()])
        ended, resumed = handle.ended_at(), time.monotonic()
    assert body.startswith(b"data: {")
    assert 0 < ended <= resumed - NEIGHBOUR_S * 0.9  # the stream's end came before the neighbour's work
    took = handle.exchange.duration_s
    assert took is not None and AGENT_S <= took < AGENT_S / 2 + BUSY_S + NEIGHBOUR_S / 2, took
