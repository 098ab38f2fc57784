"""Bindings: how an A2A operation travels. JSON-RPC now; HTTP+JSON and gRPC implement the same protocol.

A binding takes an operation (send, stream, get, cancel) with its params and returns what the
wire did, unrepaired: HTTP status, content type, the parsed envelope or why it isn't one, and for
streams every SSE event with its arrival time.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar, Protocol

from probe.results import HttpExchange
from probe.wire import jsonrpc
from probe.wire.dialects import Dialect
from probe.wire.http import Deadline, HttpClient, StreamResponse
from probe.wire.sse import SSEEvent, SSEParser, StreamLimit

MAX_RESPONSE_BYTES = 4 << 20


class Op(StrEnum):
    SEND = "send"
    STREAM = "stream"
    GET = "get"
    CANCEL = "cancel"
    SUBSCRIBE = "subscribe"
    PUSH_SET = "push_set"
    EXTENDED_CARD = "extended_card"


@dataclass(slots=True)
class Call:
    method: str
    exchange: HttpExchange
    status: int | None
    content_type: str
    envelope: jsonrpc.Envelope | None = None
    not_jsonrpc: str | None = None  # why the body is not a JSON-RPC response
    snippet: str = ""
    challenge: str | None = None  # WWW-Authenticate, for 401s


@dataclass(slots=True)
class StreamEvent:
    sse: SSEEvent
    envelope: jsonrpc.Envelope | None
    problem: str | None = None


@dataclass(slots=True)
class EventStream:
    method: str
    raw: StreamResponse
    request_id: str
    parser: SSEParser = field(default_factory=SSEParser)
    plain: Call | None = None  # set when the answer was not SSE (an error before the stream, or a bad server)
    max_bytes: int = 32 << 20
    bytes_read: int = 0

    @property
    def is_sse(self) -> bool:
        return self.raw.content_type.split(";", 1)[0].strip().lower() == "text/event-stream"

    async def events(self) -> AsyncIterator[StreamEvent]:
        """Events as they arrive, within the byte bound; yields to the loop between chunks so a flooding
        stream (data always ready, so no read ever suspends) cannot starve the daemon's other work."""
        async for chunk in self.raw.chunks():
            self.bytes_read += len(chunk)
            if self.bytes_read > self.max_bytes:
                raise StreamLimit(f"the stream exceeded {self.max_bytes} bytes")
            for ev in self.parser.feed(chunk):
                yield _stream_event(ev, self.request_id)
            await asyncio.sleep(0)


def _stream_event(ev: SSEEvent, request_id: str) -> StreamEvent:
    try:
        return StreamEvent(ev, jsonrpc.parse_envelope(ev.data, request_id))
    except jsonrpc.NotJsonRpc as exc:
        return StreamEvent(ev, None, str(exc))


class Binding(Protocol):
    name: ClassVar[str]
    dialect: Dialect
    url: str

    def method(self, op: Op) -> str: ...

    async def call(self, op: Op, params: dict[str, Any], *, deadline: Deadline) -> Call: ...

    def open_stream(self, op: Op, params: dict[str, Any], *,
                    deadline: Deadline) -> Any: ...  # an async context manager of EventStream


class JsonRpcBinding:
    name: ClassVar[str] = "JSONRPC"

    def __init__(self, client: HttpClient, url: str, dialect: Dialect, headers: Mapping[str, str],
                 version_header: str | None) -> None:
        self.client = client
        self.url = url
        self.dialect = dialect
        self._headers = {"Content-Type": "application/json", **headers}
        if version_header:
            self._headers["A2A-Version"] = version_header

    def method(self, op: Op) -> str:
        return str(getattr(self.dialect, op.value))

    async def call(self, op: Op, params: dict[str, Any], *, deadline: Deadline) -> Call:
        method = self.method(op)
        rid = jsonrpc.new_id()
        return await self.post(jsonrpc.request(method, params, rid), rid, method, deadline=deadline)

    async def post(self, body: bytes, rid: str, method: str, *, deadline: Deadline,
                   headers: Mapping[str, str | None] | None = None) -> Call:
        """POST raw bytes (the conformance suite sends malformed requests too); a None header value removes it."""
        hdrs = _merge(self._headers, {"Accept": "application/json", **(headers or {})})
        resp = await self.client.request("POST", self.url, deadline=deadline, body=body, headers=hdrs,
                                         max_bytes=MAX_RESPONSE_BYTES, follow_redirects=False)
        call = _read_call(method, rid, resp.exchange, resp.status, resp.content_type, resp.body)
        call.challenge = resp.headers.get("WWW-Authenticate")
        return call

    @asynccontextmanager
    async def open_stream(self, op: Op, params: dict[str, Any], *, deadline: Deadline) -> AsyncIterator[EventStream]:
        method = self.method(op)
        rid = jsonrpc.new_id()
        headers = {**self._headers, "Accept": "text/event-stream"}
        async with self.client.stream("POST", self.url, deadline=deadline, headers=headers,
                                      body=jsonrpc.request(method, params, rid)) as raw:
            stream = EventStream(method, raw, rid)
            if not stream.is_sse:
                body = await raw.read_body(MAX_RESPONSE_BYTES)
                stream.plain = _read_call(method, rid, raw.exchange, raw.status, raw.content_type, body)
            yield stream


def _merge(base: Mapping[str, str], extra: Mapping[str, str | None]) -> dict[str, str]:
    out = dict(base)
    for key, value in extra.items():
        for existing in [k for k in out if k.lower() == key.lower()]:
            del out[existing]
        if value is not None:
            out[key] = value
    return out


def _read_call(method: str, rid: str, exchange: HttpExchange, status: int | None, content_type: str,
               body: bytes) -> Call:
    call = Call(method, exchange, status, content_type, snippet=_snippet(body))
    try:
        call.envelope = jsonrpc.parse_envelope(body, rid)
    except jsonrpc.NotJsonRpc as exc:
        call.not_jsonrpc = str(exc)
    return call


def _snippet(body: bytes, limit: int = 160) -> str:
    text = body[:limit].decode("utf-8", "replace")
    return " ".join(text.split()) + ("…" if len(body) > limit else "")


BINDINGS: dict[str, type[JsonRpcBinding]] = {JsonRpcBinding.name: JsonRpcBinding}
