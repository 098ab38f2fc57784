"""The hostile-agent suite: each case names the right reason, ends within the probe's deadline and stays within a
memory bound (measured with tracemalloc around the probe)."""

from __future__ import annotations

import asyncio
import functools
import json
import ssl
import time
import tracemalloc
import zlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pytest

from probe.engine import run_probe
from probe.reasons import Reason
from probe.report import to_dict
from probe.results import ProbeResult, StepName
from probe.target import Target
from probe.wire.http import HttpClient
from tests.agents.cards import valid_card
from tests.hostile import certs
from tests.hostile.servers import (
    Hostile,
    Request,
    Writer,
    chunk,
    chunked_head,
    deep_json,
    flood,
    gzip,
    gzip_bomb,
    hostile_agent,
    raw,
    response,
    sse_event,
    stream_then_reset,
    task_result,
    trickle,
)

TIMEOUT = 3.0
MEMORY_BOUND = 48 << 20  # what one probe may allocate at its peak, whatever the agent sends


@functools.cache
def _bomb() -> bytes:
    return gzip_bomb(200 << 20)  # built once: compressing 200 MB takes a while




def _artifact(i: int) -> dict[str, object]:
    return {"artifactUpdate": {"taskId": "t1", "contextId": "c1", "lastChunk": True,
                               "artifact": {"artifactId": f"a{i}", "parts": [{"text": "x"}]}}}


# ---- card handlers

def _card(body: bytes, *, encoding: str | None = None, length: int | None = None) -> Callable[..., Awaitable[None]]:
    async def h(w: Writer, _req: Request) -> None:
        extra = {"Content-Encoding": encoding} if encoding else {}
        head = response(body=body, extra=extra)
        if length is not None:
            head = head.replace(f"Content-Length: {len(body)}".encode(), f"Content-Length: {length}".encode())
        w.write(head)
    return h


def _card_of(origin_to_card: Callable[[str], dict[str, object]]) -> Callable[..., Awaitable[None]]:
    """A card built for the agent's own origin (read from the Host header the probe sent)."""
    async def h(w: Writer, req: Request) -> None:
        w.write(response(body=json.dumps(origin_to_card(f"http://{req.headers['host']}")).encode()))
    return h


def _rest_card(origin: str) -> dict[str, object]:
    return valid_card((f"{origin}/rest", "HTTP+JSON", "1.0"), name="rest")


def _card_03(origin: str) -> dict[str, object]:
    return valid_card(f"{origin}/rpc", name="v03", version="0.3")


_LONG = b"9" * 100_000  # past Python's 4300-digit int conversion limit: a bare ValueError out of json


def _task_with_metadata(value: bytes) -> Callable[[str], bytes]:
    """A completed task's JSON-RPC answer whose metadata holds `value` (raw JSON) under "n"."""
    def body(rid: str) -> bytes:
        return (b'{"jsonrpc": "2.0", "id": "%s", "result": {"task": {"id": "t1", "contextId": "c1", "status": '
                b'{"state": "TASK_STATE_COMPLETED"}, "metadata": {"n": %s}}}}' % (rid.encode(), value))
    return body


async def _long_number_event(w: Writer, req: Request) -> None:
    rid = str(req.rpc.get("id"))
    w.write(chunked_head() + chunk(sse_event(rid, task_result("SUBMITTED")))
            + chunk(b'data: {"jsonrpc": "2.0", "id": "%s", "result": {"n": %s}}\n\n' % (rid.encode(), _LONG))
            + b"0\r\n\r\n")


# 60,000 JSON values (of 3 bytes each) in the free-form metadata: more than the 50,000 the probe judges in one
# message (protobuf's pure-Python ParseDict took ~20 s for a 4 MiB answer of such values, the loop held throughout)
_MANY = b"[" + b",".join([b"[]"] * 60_000) + b"]"


async def _many_values_event(w: Writer, req: Request) -> None:
    rid = str(req.rpc.get("id"))
    w.write(chunked_head() + chunk(sse_event(rid, task_result("SUBMITTED")))
            + chunk(b'data: {"jsonrpc": "2.0", "id": "%s", "result": {"statusUpdate": {"taskId": "t1", '
                    b'"contextId": "c1", "status": {"state": "TASK_STATE_WORKING"}, "metadata": {"a": %s}}}}\n\n'
                    % (rid.encode(), _MANY))
            + chunk(sse_event(rid, {"statusUpdate": {"taskId": "t1", "contextId": "c1",
                                                     "status": {"state": "TASK_STATE_COMPLETED"}}})) + b"0\r\n\r\n")


async def _silent_stream(w: Writer, _req: Request) -> None:
    w.write(chunked_head())
    await w.drain()
    await asyncio.sleep(60)


async def _heartbeats_only(w: Writer, _req: Request) -> None:
    w.write(chunked_head())
    while True:
        w.write(chunk(b": keep-alive\n\n"))
        await w.drain()
        await asyncio.sleep(0.01)


async def _endless_line(w: Writer, _req: Request) -> None:
    w.write(chunked_head() + chunk(b"data: "))
    while True:  # never a newline, well under the line limit before the deadline
        w.write(chunk(b"x" * 100))
        await w.drain()
        await asyncio.sleep(0.01)


def _ok_task(rid: str) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "result": task_result("COMPLETED", artifacts=[
        {"artifactId": "a", "parts": [{"text": "ok"}]}])}).encode()


def _deflate(data: bytes) -> bytes:
    c = zlib.compressobj(9, zlib.DEFLATED, 15)
    return c.compress(data) + c.flush()


def _stacked_bomb() -> bytes:
    """gzip of a gzip bomb: 200 MB of zeros inside two layers (the outer one about 200 KB)."""
    return gzip.compress(_bomb())


async def _hundred_mb_chunked(w: Writer, _req: Request) -> None:
    w.write(chunked_head("application/json"))
    piece = chunk(b"[" + b" " * 65534 + b"]")
    for _ in range(1600):  # 100 MB, unless the probe hangs up first
        w.write(piece)
        await w.drain()
        await asyncio.sleep(0)




async def _endless_headers(w: Writer, _req: Request) -> None:
    w.write(b"HTTP/1.1 200 OK\r\n")
    for i in range(100_000):
        w.write(f"X-Slow-{i}: v\r\n".encode())
        await w.drain()
        await asyncio.sleep(0.05)


def _many_headers(n: int) -> Callable[..., Awaitable[None]]:
    async def h(w: Writer, _req: Request) -> None:
        w.write(b"HTTP/1.1 200 OK\r\n" + b"".join(b"X-H%d: v\r\n" % i for i in range(n))
                + b"Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
    return h


async def _redirect_loop(w: Writer, req: Request) -> None:
    w.write(response(302, extra={"Location": req.path}, reason="Found"))


def _redirect_to(location: str) -> Callable[..., Awaitable[None]]:
    async def h(w: Writer, _req: Request) -> None:
        w.write(response(302, extra={"Location": location}, reason="Found"))
    return h


# ---- interface (POST) handlers

def _rpc(body: Callable[[str], bytes], *, encoding: str | None = None) -> Callable[..., Awaitable[None]]:
    async def h(w: Writer, req: Request) -> None:
        w.write(response(body=body(str(req.rpc.get("id"))), extra={"Content-Encoding": encoding} if encoding else {}))
    return h






async def _fifty_mb_line(w: Writer, req: Request) -> None:
    w.write(chunked_head() + chunk(b"data: "))
    piece = chunk(b"x" * 65536)
    for _ in range(800):
        w.write(piece)
        await w.drain()
        await asyncio.sleep(0)


async def _artifacts(w: Writer, req: Request) -> None:
    rid = str(req.rpc.get("id"))
    w.write(chunked_head() + chunk(sse_event(rid, task_result("SUBMITTED"))))
    for i in range(0, 10_000, 100):
        w.write(chunk(b"".join(sse_event(rid, _artifact(j)) for j in range(i, i + 100))))
        await w.drain()
        await asyncio.sleep(0)
    w.write(chunk(sse_event(rid, {"statusUpdate": {"taskId": "t1", "contextId": "c1",
                                                   "status": {"state": "TASK_STATE_COMPLETED"}}})) + b"0\r\n\r\n")




def _sse_coded(coding: str, encode: Callable[[bytes], bytes]) -> Callable[..., Awaitable[None]]:
    """A whole stream (submitted, then completed) in the Content-Encoding `coding`, as `encode` made it."""
    async def h(w: Writer, req: Request) -> None:
        rid = str(req.rpc.get("id"))
        body = encode(sse_event(rid, task_result("SUBMITTED")) + sse_event(rid, {"statusUpdate": {
            "taskId": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_COMPLETED"}}}))
        w.write(response(body=body, content_type="text/event-stream", extra={"Content-Encoding": coding}))
    return h


@dataclass
class Case:
    name: str
    behaviour: Callable[[], Hostile]
    reason: Reason | None  # None: the probe passes
    fragment: str
    steps: tuple[StepName, ...] = (StepName.INVOKE,)
    timeout: float = TIMEOUT  # the bound on work must be hit before the deadline (tracemalloc slows parsing)
    binding: Literal["JSONRPC", "HTTP+JSON", "GRPC"] | None = None


STREAMING = (StepName.STREAM,)
CASES = [
    Case("gzip bomb card", lambda: Hostile(card=_card(_bomb(), encoding="gzip")), Reason.CARD_INVALID,
         "exceeds the 1048576-byte limit"),
    Case("gzip bomb rpc answer", lambda: Hostile(rpc=_rpc(lambda _: _bomb(), encoding="gzip")),
         Reason.WORK_LIMIT_EXCEEDED, "byte limit"),
    Case("100 MB card (declared)", lambda: Hostile(card=_card(b"{}", length=100 << 20)), Reason.CARD_INVALID,
         "body of 104857600 bytes exceeds"),
    Case("100 MB card (chunked)", lambda: Hostile(card=_hundred_mb_chunked), Reason.CARD_INVALID,
         "exceeds the 1048576-byte limit"),
    Case("card trickles a byte a second", lambda: Hostile(card=trickle), Reason.CARD_UNREACHABLE,
         "not complete before the deadline"),
    Case("response headers never finish", lambda: Hostile(card=_endless_headers), Reason.CARD_UNREACHABLE,
         "response headers"),
    Case("10,000 card headers", lambda: Hostile(card=_many_headers(10_000)), Reason.CARD_UNREACHABLE,
         "Too many headers"),
    Case("10,000 rpc headers", lambda: Hostile(rpc=_many_headers(10_000)), Reason.INVOKE_PROTOCOL_ERROR,
         "Too many headers"),
    Case("card nested 100,000 deep", lambda: Hostile(card=_card(deep_json(100_000))), Reason.CARD_INVALID,
         "nested too deeply"),
    Case("rpc answer nested 100,000 deep", lambda: Hostile(rpc=_rpc(lambda _: deep_json(100_000))),
         Reason.INVOKE_NOT_A2A, "nested too deeply"),
    Case("card is not UTF-8", lambda: Hostile(card=_card(b'{"name": "\xff\xfe"}')), Reason.CARD_INVALID,
         "not UTF-8"),
    Case("rpc answer is not UTF-8", lambda: Hostile(rpc=_rpc(lambda _: b'{"jsonrpc": "2.0", "x": "\xc3\x28"}')),
         Reason.INVOKE_NOT_A2A, "not UTF-8"),
    Case("card with a 100,000-digit number", lambda: Hostile(card=_card(b'{"name": "a", "n": ' + _LONG + b"}")),
         Reason.CARD_INVALID, "a number of 100000 digits"),
    Case("rpc answer with a 100,000-digit number", lambda: Hostile(rpc=_rpc(_task_with_metadata(_LONG))),
         Reason.INVOKE_NOT_A2A, "a number of 100000 digits"),
    Case("stream event with a 100,000-digit number", lambda: Hostile(rpc=_long_number_event),
         Reason.STREAM_PROTOCOL_VIOLATION, "a number of 100000 digits", STREAMING),
    Case("REST answer with a 100,000-digit number", lambda: Hostile(card=_card_of(_rest_card),
                                                                    rpc=_rpc(lambda _: b'{"n": ' + _LONG + b"}")),
         Reason.INVOKE_NOT_A2A, "a number of 100000 digits", binding="HTTP+JSON"),
    Case("0.3 answer with a 100,000-digit number", lambda: Hostile(card=_card_of(_card_03),
                                                                   rpc=_rpc(_task_with_metadata(_LONG))),
         Reason.INVOKE_NOT_A2A, "a number of 100000 digits"),
    Case("answer of 60,000 JSON values", lambda: Hostile(rpc=_rpc(_task_with_metadata(_MANY))),
         Reason.WORK_LIMIT_EXCEEDED, "holds more than 50000 JSON values"),
    Case("REST answer of 60,000 JSON values", lambda: Hostile(card=_card_of(_rest_card), rpc=_rpc(
        lambda _: b'{"task": {"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_COMPLETED"}, '
                  b'"metadata": {"a": %s}}}' % _MANY)),
         Reason.WORK_LIMIT_EXCEEDED, "holds more than 50000 JSON values", binding="HTTP+JSON"),
    Case("stream event of 60,000 JSON values", lambda: Hostile(rpc=_many_values_event), Reason.WORK_LIMIT_EXCEEDED,
         "event 1 holds more than 50000 JSON values", STREAMING),
    # open streams that never deliver an event: the deadline is the cause, not a protocol violation
    Case("stream silent after its headers", lambda: Hostile(rpc=_silent_stream), Reason.STREAM_NO_TERMINAL,
         "before the deadline: 0 event(s)", STREAMING, 1.0),
    Case("stream of heartbeat comments only", lambda: Hostile(rpc=_heartbeats_only), Reason.STREAM_NO_TERMINAL,
         "before the deadline: 0 event(s)", STREAMING, 1.0),
    Case("stream of one endless line", lambda: Hostile(rpc=_endless_line), Reason.STREAM_NO_TERMINAL,
         "before the deadline: 0 event(s)", STREAMING, 1.0),
    # RFC 9110 §8.4: codings are listed in the order applied; httpx (the a2a-sdk's client) and undici decode them all
    Case("answer gzip-encoded twice", lambda: Hostile(rpc=_rpc(lambda rid: gzip.compress(gzip.compress(_ok_task(rid))),
                                                             encoding="gzip, gzip")), None, ""),
    Case("answer deflate then gzip", lambda: Hostile(rpc=_rpc(lambda rid: gzip.compress(_deflate(_ok_task(rid))),
                                                            encoding="deflate, gzip")), None, ""),
    Case("answer of an unknown coding in a list", lambda: Hostile(rpc=_rpc(lambda rid: gzip.compress(_ok_task(rid)),
                                                                         encoding="x-rot13, gzip")),
         Reason.INVOKE_PROTOCOL_ERROR, "Content-Encoding 'x-rot13, gzip'"),
    Case("gzip bomb inside gzip", lambda: Hostile(rpc=_rpc(lambda _: _stacked_bomb(), encoding="gzip, gzip")),
         Reason.WORK_LIMIT_EXCEEDED, "exceeds the 4194304-byte limit"),
    # the same on a stream (before: the SSE parser read the still-encoded bytes, "an SSE line is not UTF-8")
    Case("stream gzip-encoded twice", lambda: Hostile(rpc=_sse_coded("gzip, gzip", lambda b: gzip.compress(
        gzip.compress(b)))), None, "", STREAMING),
    Case("stream deflate then gzip", lambda: Hostile(rpc=_sse_coded("deflate, gzip", lambda b: gzip.compress(
        _deflate(b)))), None, "", STREAMING),
    Case("stream gzip bomb inside gzip", lambda: Hostile(rpc=_sse_coded("gzip, gzip", lambda _: _stacked_bomb())),
         Reason.WORK_LIMIT_EXCEEDED, "exceeds 1048576 bytes", STREAMING),
    Case("stream of an unknown coding in a list", lambda: Hostile(rpc=_sse_coded("x-rot13, gzip", gzip.compress)),
         Reason.INVOKE_PROTOCOL_ERROR, "x-rot13 is not a coding the probe offered", STREAMING),
    Case("stream in two codings cut short", lambda: Hostile(rpc=_sse_coded("gzip, gzip", lambda b: gzip.compress(
        gzip.compress(b))[:-30])), Reason.INVOKE_PROTOCOL_ERROR, "the gzip data ends early", STREAMING),
    Case("answer in brotli, never offered", lambda: Hostile(rpc=_rpc(lambda _: b"\x0b\x02\x80{}\x03",
                                                                   encoding="br")),
         Reason.INVOKE_PROTOCOL_ERROR, "Content-Encoding br, which the probe did not offer"),
    Case("redirect loop", lambda: Hostile(card=_redirect_loop), Reason.CARD_UNREACHABLE, "more than 5 redirects"),
    # before: urlsplit's ValueError out of the redirect's origin, probe_error ("internal error") with a traceback
    Case("redirect to a port past 65535", lambda: Hostile(card=_redirect_to("http://127.0.0.1:99999/card")),
         Reason.CARD_UNREACHABLE, "redirect to an invalid URL (Port out of range 0-65535)"),
    Case("redirect to a broken IPv6 literal", lambda: Hostile(card=_redirect_to("http://[::1/card")),
         Reason.CARD_UNREACHABLE, "redirect to an invalid URL (Invalid IPv6 URL)"),
    Case("id not echoed", lambda: Hostile(rpc=_rpc(lambda _: json.dumps(
        {"jsonrpc": "2.0", "id": "someone-else", "result": task_result("COMPLETED")}).encode())),
         Reason.INVOKE_NOT_A2A, "does not echo the request id"),
    Case("bad status line", lambda: Hostile(rpc=raw(b"HTTP/1.1 abc OK\r\nContent-Length: 2\r\n\r\n{}")),
         Reason.INVOKE_PROTOCOL_ERROR, "Bad status line"),
    Case("not HTTP at all", lambda: Hostile(rpc=raw(b"SSH-2.0-OpenSSH_9.6\r\n\r\n")),
         Reason.INVOKE_PROTOCOL_ERROR, "SSH-2.0-OpenSSH"),
    Case("bad chunk size", lambda: Hostile(rpc=raw(chunked_head("application/json") + b"zz\r\n{}\r\n0\r\n\r\n")),
         Reason.INVOKE_PROTOCOL_ERROR, "chunk size"),
    Case("body cut short", lambda: Hostile(rpc=raw(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                                    b"Content-Length: 100\r\n\r\n{\"jsonrpc\"")),
         Reason.INVOKE_PROTOCOL_ERROR, "closed the connection before the body was complete"),
    Case("TCP reset mid-stream", lambda: Hostile(rpc=stream_then_reset), Reason.STREAM_RESET, "reset", STREAMING),
    Case("50 MB SSE line", lambda: Hostile(rpc=_fifty_mb_line), Reason.WORK_LIMIT_EXCEEDED, "exceeds 1048576 bytes",
         STREAMING),
    Case("10,000 artifacts", lambda: Hostile(rpc=_artifacts), Reason.WORK_LIMIT_EXCEEDED,
         "more than 1000 artifacts", STREAMING, 10.0),
    Case("flood of tiny events", lambda: Hostile(rpc=flood), Reason.WORK_LIMIT_EXCEEDED, "more than 10000 events",
         STREAMING, 10.0),
]


async def _measured(target: Target, steps: tuple[StepName, ...]) -> tuple[ProbeResult, float, int]:
    async with HttpClient() as client:
        tracemalloc.start()
        t0 = time.monotonic()
        try:
            r = await run_probe(target, client, steps=steps)
            elapsed = time.monotonic() - t0
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    return r, elapsed, peak


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
async def test_hostile_agent(case: Case) -> None:
    async with hostile_agent(case.behaviour()) as agent:
        r, elapsed, peak = await _measured(Target(name="h", url=agent.origin, timeout=case.timeout,
                                                   binding=case.binding), case.steps)
    detail = " ".join(s.detail for s in r.steps)
    assert r.reason is case.reason, to_dict(r)
    assert case.fragment in detail, detail
    assert elapsed < case.timeout + 0.5, f"took {elapsed:.2f}s"
    assert peak < MEMORY_BOUND, f"peak {peak >> 20} MiB"


def _trust(monkeypatch: pytest.MonkeyPatch, ca: certs.Pem) -> None:
    """Make our throw-away CA trusted, as a system store that holds it would (aiohttp builds its verifying
    context once, at import)."""
    import aiohttp.connector

    monkeypatch.setattr(aiohttp.connector, "_SSL_CONTEXT_VERIFIED", ssl.create_default_context(cafile=str(ca.cert)))


@pytest.fixture(scope="module")
def tls_certs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, certs.Pem]:
    d: Path = tmp_path_factory.mktemp("tls")
    ca_pem, ca_cert, ca_key = certs.make(d, "ca", ca=True)
    return {"ca": ca_pem,
            "good": certs.make(d, "good", issuer=(ca_cert, ca_key))[0],
            "self-signed": certs.make(d, "self")[0],
            "expired": certs.make(d, "expired", issuer=(ca_cert, ca_key), expired=True)[0],
            "wrong host": certs.make(d, "wrong", issuer=(ca_cert, ca_key), host="agent.example.com")[0]}


@pytest.mark.parametrize(("kind", "fragment"), [("self-signed", "self-signed certificate"),
                                                ("expired", "certificate has expired"),
                                                ("wrong host", "mismatch")])
async def test_bad_tls_is_a_certificate_failure_with_the_certificate_problem(
        tls_certs: dict[str, certs.Pem], kind: str, fragment: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _trust(monkeypatch, tls_certs["ca"])
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server.load_cert_chain(tls_certs[kind].cert, tls_certs[kind].key)
    async with hostile_agent(Hostile(), tls=server) as agent:
        r, elapsed, _ = await _measured(Target(name="tls", url=agent.origin, timeout=TIMEOUT), (StepName.PING,))
    assert r.reason is Reason.TLS_CERTIFICATE_INVALID and fragment in r.steps[0].detail, r.steps[0].detail
    assert elapsed < TIMEOUT


async def test_good_tls_passes_the_same_path(tls_certs: dict[str, certs.Pem], monkeypatch: pytest.MonkeyPatch) -> None:
    """The control: the same server with a valid certificate is probed to the JSON-RPC answer."""
    _trust(monkeypatch, tls_certs["ca"])
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server.load_cert_chain(tls_certs["good"].cert, tls_certs["good"].key)

    async def rpc(w: Writer, req: Request) -> None:
        w.write(response(body=json.dumps({"jsonrpc": "2.0", "id": req.rpc.get("id"),
                                          "error": {"code": -32001, "message": "nf"}}).encode()))

    async with hostile_agent(Hostile(rpc=rpc), tls=server) as agent:
        r, _, _ = await _measured(Target(name="tls", url=agent.origin, timeout=TIMEOUT), (StepName.PING,))
    assert r.success, to_dict(r)


async def test_a_flood_that_outlasts_the_deadline_ends_at_the_deadline() -> None:
    """Data that is always ready never suspends a read, so the deadline is checked between events too."""
    async with hostile_agent(Hostile(rpc=flood)) as agent, HttpClient() as client:
        t0 = time.monotonic()
        r = await run_probe(Target(name="h", url=agent.origin, timeout=0.5, max_stream_events=10**9), client,
                            steps=STREAMING)
    assert r.reason is Reason.STREAM_NO_TERMINAL and "deadline" in r.steps[-1].detail
    assert time.monotonic() - t0 < 1.0


# ---- a card of thousands of interfaces: judged on its first MAX_INTERFACES, the real one probed

_MANY_INTERFACES = 9_000  # about 1 MiB of card, under its size bound


def _crowded_card(version: str) -> Callable[[str], dict[str, object]]:
    """A correct card whose one real interface comes first, followed by thousands of distinct others (distinct
    hosts: no memo helps)."""
    def card(origin: str) -> dict[str, object]:
        doc = valid_card(f"{origin}/rpc", name="crowded", version=version)
        if version == "1.0":
            doc["supportedInterfaces"] += [  # type: ignore[operator]
                {"url": f"https://h{i}.example:8443/a2a/{i}", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
                for i in range(_MANY_INTERFACES)]
        else:
            doc["additionalInterfaces"] = [{"url": f"https://h{i}.example:8443/a2a/{i}", "transport": "JSONRPC"}
                                           for i in range(_MANY_INTERFACES)]
        return doc
    return card


def _ok_answer(w: Writer, req: Request) -> Awaitable[None]:
    """A completed task in the shape of the version the probe spoke (0.3: message/send, kind and lower-case state)."""
    rid = req.rpc.get("id")
    result = ({"kind": "task", "id": "t1", "contextId": "c1", "status": {"state": "completed"}}
              if req.rpc.get("method") == "message/send" else task_result("COMPLETED"))
    return _rpc(lambda _: json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}).encode())(w, req)


@pytest.mark.parametrize("version", ["1.0", "0.3"])
async def test_a_card_of_thousands_of_interfaces_is_judged_on_its_first(
        version: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A hostile 1 MiB card of 9,000 interfaces held the event loop ~1.6 s per fetch in URL parsing. The probe
    parses at most MAX_INTERFACES of them, says so, and still probes (and passes) the card's real interface."""
    from probe.checks import card as card_checks
    from probe.wire import card as card_wire

    calls = {"check_url": 0, "parsable": 0}

    def counted(name: str, fn: Callable[..., object]) -> Callable[..., object]:
        def wrapper(*a: object, **k: object) -> object:
            calls[name] += 1
            return fn(*a, **k)
        return wrapper

    monkeypatch.setattr(card_checks, "check_url", counted("check_url", card_checks.check_url))
    monkeypatch.setattr(card_wire, "_parsable", counted("parsable", card_wire._parsable))
    async with hostile_agent(Hostile(card=_card_of(_crowded_card(version)), rpc=_ok_answer)) as agent, \
            HttpClient() as client:
        cpu = time.process_time()
        r = await run_probe(Target(name="crowded", url=agent.origin, timeout=TIMEOUT), client,
                            steps=(StepName.INVOKE,))
        cpu = time.process_time() - cpu
    assert r.success, to_dict(r)
    check = next(c for c in r.checks if c.id == "card.interfaces")
    listed = "supportedInterfaces" if version == "1.0" else "additionalInterfaces"
    assert check.status == "pass", check.message
    assert (f"{listed} has {_MANY_INTERFACES + (version == '1.0')} entries: the probe judged the first "
            f"{card_wire.MAX_INTERFACES}") in check.message, check.message
    # the work is bounded by the probe's bound, not the card's length (each URL parsed a few times at most)
    assert calls["check_url"] <= card_wire.MAX_INTERFACES + 1
    assert calls["parsable"] <= 2 * (card_wire.MAX_INTERFACES + 1), calls
    assert cpu < 0.5, f"{cpu:.2f}s of CPU for one probe"  # generous: ~0.05 s here (0.3 s unbounded)
