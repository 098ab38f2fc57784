"""The client's own connections, on its pool (`HttpClient._send_pooled`) and made for one request (`_send_fresh`,
what ping sends by default): aiohttp's protocol, parser and writer without its ClientSession. Against real loopback
servers, every outcome is the one aiohttp's ClientSession gives for the same bytes (the error class and its text;
tests/unit/session_reference.py), and the request's bytes are the ones a ClientSession writes (with `force_close`
for a fresh connection)."""

from __future__ import annotations

import asyncio
import errno
import gzip
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest

from probe.wire import http as wire_http
from probe.wire.http import (
    BodyTooLarge,
    ClientConfig,
    ConnectFailed,
    ConnectionReset,
    Deadline,
    DeadlineExceeded,
    HttpClient,
    ProbeOutOfFiles,
    ProtocolError,
    WireError,
)
from tests.hostile.servers import Hostile, Request, Writer, chunk, gzip_bomb, hostile_agent, raw, reset, response
from tests.unit.session_reference import SessionClient, session

FRESH = ClientConfig(fresh=True)
POOL = ClientConfig()
Handler = Callable[[Writer, Request], Awaitable[None]]


def _send(data: bytes) -> Handler:
    async def h(w: Writer, _req: Request) -> None:
        w.write(data)
    return h


async def _stall(w: Writer, _req: Request) -> None:
    await asyncio.sleep(30)


async def _head_then_stall(w: Writer, _req: Request) -> None:
    w.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
    await w.drain()
    await asyncio.sleep(30)


async def _continue_then_answer(w: Writer, _req: Request) -> None:
    w.write(b"HTTP/1.1 100 Continue\r\n\r\n")
    await w.drain()
    w.write(response(body=b'{"ok":1}'))


async def _truncated_then_reset(w: Writer, _req: Request) -> None:
    w.write(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + b"x" * 10)
    await w.drain()
    await asyncio.sleep(0.05)
    reset(w)


async def _reset_at_once(w: Writer, _req: Request) -> None:
    reset(w)


def _chunked(body: bytes) -> bytes:
    return b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunk(body) + b"0\r\n\r\n"


STACKED = gzip.compress(gzip.compress(b'{"stacked":true}'))

# name -> (what the agent does, the error expected, or None with the body expected)
CASES: dict[str, tuple[Handler, type[WireError] | None, bytes | None]] = {
    "ok": (_send(response(body=b'{"ok":true}')), None, b'{"ok":true}'),
    "chunked": (_send(_chunked(b'{"c":1}')), None, b'{"c":1}'),
    "interim_100": (_continue_then_answer, None, b'{"ok":1}'),
    "until_close": (raw(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n" + b'{"e":1}'), None, b'{"e":1}'),
    "gzip": (_send(response(body=gzip.compress(b'{"g":1}'), extra={"Content-Encoding": "gzip"})), None, b'{"g":1}'),
    "stacked_codings": (_send(response(body=STACKED, extra={"Content-Encoding": "gzip, gzip"})), None,
                        b'{"stacked":true}'),
    "declared_too_large": (_send(response(body=b"x" * 5000)), BodyTooLarge, None),
    "chunked_too_large": (_send(_chunked(b"x" * 5000)), BodyTooLarge, None),
    "gzip_bomb": (_send(response(body=gzip_bomb(2 << 20), extra={"Content-Encoding": "gzip"})), BodyTooLarge, None),
    "unoffered_coding": (_send(response(body=b"\x00\x01", extra={"Content-Encoding": "br"})), ProtocolError, None),
    "bad_status_line": (_send(b"HTTP/1.1 abc nonsense\r\n\r\n"), ProtocolError, None),
    "bad_chunk_size": (_send(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nx\r\n"), ProtocolError,
                       None),
    "closed_mid_body": (raw(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + b"x" * 10), ConnectionReset, None),
    "reset_mid_body": (_truncated_then_reset, ConnectionReset, None),
    "closed_before_answer": (raw(b""), ConnectFailed, None),
    "reset_before_answer": (_reset_at_once, ConnectFailed, None),
    "no_headers": (_stall, DeadlineExceeded, None),
    "body_stalls": (_head_then_stall, DeadlineExceeded, None),
}


async def _outcome(url: str, config: ClientConfig, method: str = "POST", client_class: type[HttpClient] = HttpClient,
                   ) -> tuple[str, str | bytes, int | None]:
    async with client_class() as client:
        try:
            r = await client.request(method, url, deadline=Deadline.after(1.5),
                                     body=b"{}" if method == "POST" else None, max_bytes=4096, config=config)
        except WireError as exc:
            return type(exc).__name__, str(exc), None
    return "ok", r.body, r.status


async def _four(url: str, method: str = "POST") -> list[tuple[str, str | bytes, int | None]]:
    """The outcome on the client's fresh and pooled connections, then aiohttp's session's (force_close, pooled)."""
    return [await _outcome(url, config, method, made)
            for made in (HttpClient, SessionClient) for config in (FRESH, POOL)]


@pytest.mark.parametrize("case", sorted(CASES))
async def test_the_clients_connections_give_what_aiohttps_session_gives(case: str) -> None:
    handler, error, body = CASES[case]
    async with hostile_agent(Hostile(rpc=handler)) as agent:
        fresh, pooled, reference_fresh, reference_pooled = await _four(agent.origin + "/rpc")
    assert fresh == pooled == reference_fresh == reference_pooled, (fresh, pooled, reference_fresh, reference_pooled)
    if error is None:
        assert fresh == ("ok", body, 200)
    else:
        assert fresh[0] == error.__name__, fresh
    if case == "unoffered_coding":
        assert "br" in str(fresh[1]) and "did not offer" in str(fresh[1])


async def test_head_and_no_content_answers_have_no_body() -> None:
    async def head(w: Writer, req: Request) -> None:
        w.write(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n" if req.method == "HEAD"
                else b"HTTP/1.1 204 No Content\r\n\r\n")

    async with hostile_agent(Hostile(card=head, rpc=head)) as agent:
        for method in ("HEAD", "POST"):
            assert await _four(agent.origin + "/", method) == [("ok", b"", 200 if method == "HEAD" else 204)] * 4


@asynccontextmanager
async def _recorder() -> AsyncIterator[tuple[str, list[bytes]]]:
    """A server that keeps each request's head as it came (order and case) and answers 200 with Connection: close."""
    heads: list[bytes] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = next((int(ln.split(b":", 1)[1]) for ln in head.split(b"\r\n") if ln.lower().startswith(
            b"content-length:")), 0)
        heads.append(head + await reader.readexactly(length))
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    try:
        yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}", heads
    finally:
        server.close()


REQUESTS: list[tuple[str, str, dict[str, str], bytes | None]] = [
    ("GET", "/.well-known/agent-card.json", {"A2A-Version": "1.0"}, None),
    ("POST", "/rpc", {"Content-Type": "application/json", "Accept": "application/json"}, b'{"id":1}'),
    ("POST", "/rpc", {}, b"{}"),
    ("POST", "/v1/tasks/t1:cancel?x=1", {"user-agent": "theirs", "X-Many": "a"}, None),
    ("DELETE", "/v1/tasks/t1/pushNotificationConfigs/c", {"Authorization": "Bearer t"}, None),
    ("GET", "/caf%C3%A9/ü?q=a%20b&r=é", {"Connection": "keep-alive"}, None),
]


@pytest.mark.parametrize("config", [FRESH, POOL], ids=["fresh", "pool"])
async def test_the_request_bytes_are_a_sessions(config: ClientConfig) -> None:
    async with _recorder() as (origin, heads):
        async with HttpClient() as client:
            for method, path, headers, body in REQUESTS:
                await client.request(method, origin + path, deadline=Deadline.after(5), headers=headers, body=body,
                                     config=config)
        ours = list(heads)
        heads.clear()
        async with session(force_close=config.fresh) as reference:  # what the client's own connections replaced
            for method, path, headers, body in REQUESTS:
                async with reference.request(method, origin + path, headers=headers, data=body) as r:
                    await r.read()
    assert len(ours) == len(heads) == len(REQUESTS)
    assert ours == heads, "\n".join(f"{a!r}\n{b!r}" for a, b in zip(ours, heads, strict=True) if a != b)
    assert all((b"Connection: close" in head) == config.fresh for head in ours if b"keep-alive" not in head)


@pytest.mark.parametrize("config", [FRESH, POOL], ids=["fresh", "pool"])
async def test_a_header_with_a_line_break_is_never_sent(config: ClientConfig) -> None:
    async with _recorder() as (origin, heads), HttpClient() as client:
        with pytest.raises(ValueError, match="header injection"):  # aiohttp's writer refuses it, on both paths
            await client.request("GET", origin + "/", deadline=Deadline.after(5),
                                 headers={"X-Echo": "a\r\nX-Injected: 1"}, config=config)
    assert heads == []


async def test_the_connection_is_closed_after_the_answer() -> None:
    closed = asyncio.Event()

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(response(body=b"{}"))  # keep-alive offered: the fresh connection closes it anyway
        await writer.drain()
        if await reader.read() == b"":
            closed.set()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    try:
        async with HttpClient() as client:
            r = await client.request("GET", f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/",
                                     deadline=Deadline.after(5), config=FRESH)
            assert r.status == 200 and r.exchange.phases.connect > 0 and r.exchange.retried is None
            await asyncio.wait_for(closed.wait(), 5)
    finally:
        server.close()


async def test_out_of_file_descriptors_on_a_fresh_connection_is_the_probes(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_socket(*_args: Any, **_kwargs: Any) -> socket.socket:
        raise OSError(errno.EMFILE, "Too many open files")

    class _Module:  # probe/wire/http.py's socket module, but for socket.socket
        def __getattr__(self, name: str) -> Any:
            return no_socket if name == "socket" else getattr(socket, name)

    async with hostile_agent(Hostile(rpc=_send(response(body=b"{}")))) as agent:
        monkeypatch.setattr(wire_http, "socket", _Module())
        kind, text, _ = await _outcome(agent.origin + "/rpc", FRESH)
    assert kind == "ProbeOutOfFiles" and "out of file descriptors" in str(text), text
    assert issubclass(ProbeOutOfFiles, ConnectFailed)


async def test_a_refused_connection_and_a_failed_lookup_are_unreachable() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    refused = await _four(f"http://127.0.0.1:{port}/rpc")
    assert refused == [refused[0]] * 4
    assert refused[0][0] == "ConnectFailed" and "cannot connect to 127.0.0.1" in str(refused[0][1])
    lookup = await _four("http://no-such-host.invalid/rpc")
    assert lookup == [lookup[0]] * 4
    assert lookup[0][0] == "ConnectFailed" and "no-such-host.invalid" in str(lookup[0][1])


async def test_a_legacy_ipv4_form_is_refused_as_the_session_refuses_it() -> None:
    # 127.1 is 127.0.0.1 to socket, but aiohttp refuses it (a policy on the raw host would not see the address)
    outcomes = await _four("http://127.1:9/rpc")
    fresh = outcomes[0]
    assert outcomes == [fresh] * 4
    assert fresh[0] in ("ConnectFailed", "InvalidTarget") and "127.1" in str(fresh[1]), fresh


async def test_a_stream_on_a_fresh_connection_reads_as_on_the_pool() -> None:
    async def sse(w: Writer, _req: Request) -> None:
        w.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
                + chunk(b"data: 1\n\n"))
        await w.drain()
        await asyncio.sleep(0.05)  # the second event needs a read that waits
        w.write(chunk(b"data: 2\n\n") + b"0\r\n\r\n")

    async def read(config: ClientConfig, made: type[HttpClient] = HttpClient) -> tuple[int, str, bytes, float]:
        async with made() as client, client.stream("POST", agent.origin + "/rpc", deadline=Deadline.after(5),
                                                         headers={}, body=b"{}", config=config) as stream:
            data = b"".join([c async for c in stream.chunks()])
        return stream.status, stream.content_type, data, stream.exchange.phases.connect  # timed at the exit

    async with hostile_agent(Hostile(rpc=sse)) as agent:
        fresh, pooled, reference = await read(FRESH), await read(POOL), await read(POOL, SessionClient)
    assert fresh[:3] == pooled[:3] == reference[:3] == (200, "text/event-stream", b"data: 1\n\ndata: 2\n\n")
    assert fresh[3] > 0


async def test_fresh_connections_are_bounded_by_the_clients_limit_and_given_back() -> None:
    open_now, most = 0, 0

    async def slow(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal open_now, most
        open_now += 1
        most = max(most, open_now)
        try:
            await reader.readuntil(b"\r\n\r\n")
            await asyncio.sleep(0.1)
            writer.write(response(body=b"{}"))
            await writer.drain()
            await reader.read()  # until the client closes its end
        finally:
            open_now -= 1
            writer.close()

    server = await asyncio.start_server(slow, "127.0.0.1", 0)
    url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/"
    try:
        async with HttpClient(limit=2) as client:
            results = await asyncio.gather(*(client.request("GET", url, deadline=Deadline.after(10), config=FRESH)
                                             for _ in range(6)))
            assert [r.status for r in results] == [200] * 6
            assert most == 2  # as the pool's connector bounds its own: MAX_CONNECTIONS
            # failures give their slot back: with one slot, refused connections, a timeout, then an answer
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                closed = f"http://127.0.0.1:{s.getsockname()[1]}/"
        async with HttpClient(limit=1) as client:
            for _ in range(3):
                with pytest.raises(ConnectFailed):
                    await client.request("GET", closed, deadline=Deadline.after(5), config=FRESH)
            with pytest.raises(DeadlineExceeded):
                await client.request("GET", url, deadline=Deadline.after(0.05), config=FRESH)
            r = await client.request("GET", url, deadline=Deadline.after(5), config=FRESH)
            assert r.status == 200
    finally:
        server.close()


async def test_a_large_body_is_read_whole_through_the_readers_flow_control() -> None:
    big = bytes(range(256)) * (3 << 12)  # 3 MiB: the reader pauses and resumes the socket many times

    async def send(w: Writer, _req: Request) -> None:
        w.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(big))
        for i in range(0, len(big), 1 << 16):
            w.write(big[i:i + (1 << 16)])
            await w.drain()

    async with hostile_agent(Hostile(rpc=send)) as agent, HttpClient() as client:
        for config in (FRESH, POOL):
            r = await client.request("POST", agent.origin + "/rpc", deadline=Deadline.after(20), body=b"{}",
                                     max_bytes=4 << 20, config=config)
            assert r.status == 200 and r.body == big
