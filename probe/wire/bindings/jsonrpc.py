"""JSON-RPC 2.0 over HTTP POST (spec §9): one URL, method names per protocol version, SSE for streams.

Every JSON-RPC response, errors included, is HTTP 200; anything else is a transport problem. The raw
hatch (`post`) sends bytes as given, for the JSON-RPC-only conformance checks (parse error, invalid
request, unknown method).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, ClassVar

from probe.results import Exchange
from probe.wire import a2a_errors, jsonrpc
from probe.wire.bindings.base import (
    MAX_RESPONSE_BYTES,
    A2AError,
    Answer,
    Context,
    Headers,
    Op,
    Problem,
    ProblemKind,
    StreamEvent,
    merge_headers,
    rate_limited,
    redirected,
    register,
    snippet,
    with_tenant,
)
from probe.wire.card import extensions_header
from probe.wire.dialects import Dialect
from probe.wire.http import DEFAULT_CONFIG, ClientConfig, Deadline, HttpClient, StreamResponse, gateway_problem
from probe.wire.sse import SSEEvent, SSEParser, StreamLimit

# method names per protocol version (the dialects hold shapes, the bindings hold names)
METHODS: dict[str, dict[Op, str]] = {
    "1.0": {Op.SEND: "SendMessage", Op.STREAM: "SendStreamingMessage", Op.GET: "GetTask", Op.LIST: "ListTasks",
            Op.CANCEL: "CancelTask", Op.SUBSCRIBE: "SubscribeToTask",
            Op.PUSH_SET: "CreateTaskPushNotificationConfig", Op.PUSH_GET: "GetTaskPushNotificationConfig",
            Op.PUSH_LIST: "ListTaskPushNotificationConfigs", Op.PUSH_DELETE: "DeleteTaskPushNotificationConfig",
            Op.EXTENDED_CARD: "GetExtendedAgentCard"},
    "0.3": {Op.SEND: "message/send", Op.STREAM: "message/stream", Op.GET: "tasks/get", Op.LIST: "tasks/list",
            Op.CANCEL: "tasks/cancel", Op.SUBSCRIBE: "tasks/resubscribe",
            Op.PUSH_SET: "tasks/pushNotificationConfig/set", Op.PUSH_GET: "tasks/pushNotificationConfig/get",
            Op.PUSH_LIST: "tasks/pushNotificationConfig/list", Op.PUSH_DELETE: "tasks/pushNotificationConfig/delete",
            Op.EXTENDED_CARD: "agent/getAuthenticatedExtendedCard"},
    "0.1": {Op.SEND: "tasks/send", Op.STREAM: "tasks/sendSubscribe", Op.GET: "tasks/get", Op.CANCEL: "tasks/cancel",
            Op.SUBSCRIBE: "tasks/resubscribe", Op.PUSH_SET: "tasks/pushNotification/set",
            Op.PUSH_GET: "tasks/pushNotification/get"},
}


def method_name(version: str, op: Op) -> str:
    return METHODS[version].get(op, "")


class JsonRpcBinding:
    name: ClassVar[str] = "jsonrpc"
    card_name: ClassVar[str] = "JSONRPC"

    def __init__(self, client: HttpClient, url: str, dialect: Dialect, headers: Mapping[str, str],
                 config: ClientConfig = DEFAULT_CONFIG, tenant: str | None = None) -> None:
        self.client = client
        self.config = config  # TLS, fresh connections and the auth flow, for every call
        self.url = url
        self.dialect = dialect
        self.tenant = tenant  # in every request's params (Context.tenant)
        self._headers = {"Content-Type": "application/json", **headers}
        if dialect.header_version:
            self._headers["A2A-Version"] = dialect.header_version
        # every unary call's headers, merged once; a call's own headers are merged over them (the same result
        # as merging both at once, a None still removing one)
        self._unary_headers = merge_headers(self._headers, {"Accept": "application/json"})
        self._stream_headers = merge_headers(self._headers, {"Accept": "text/event-stream"})  # likewise, streams

    @classmethod
    def build(cls, ctx: Context) -> JsonRpcBinding:
        return cls(ctx.http, ctx.url, ctx.dialect, ctx.headers, ctx.config, ctx.tenant)

    def method(self, op: Op) -> str:
        return method_name(self.dialect.version, op)

    async def close(self) -> None:
        return None

    async def call(self, op: Op, params: dict[str, Any], *, deadline: Deadline,
                   headers: Headers | None = None) -> Answer:
        method = self.method(op)
        rid = jsonrpc.new_id()
        params = with_tenant(params, self.tenant)
        return await self.post(jsonrpc.request(method, params, rid), rid, method, deadline=deadline, headers=headers)

    async def post(self, body: bytes, rid: str | None, method: str, *, deadline: Deadline,
                   headers: Headers | None = None) -> Answer:
        """POST bytes as given: the raw hatch for JSON-RPC-only checks, and the path of every unary call. `rid`
        None: the body has no id to read (an unparsable one), so the answer's id is due null."""
        hdrs = merge_headers(self._unary_headers, headers) if headers else self._unary_headers
        resp = await self.client.request("POST", self.url, deadline=deadline, body=body, headers=hdrs,
                                         max_bytes=MAX_RESPONSE_BYTES, follow_redirects=False, config=self.config)
        answer = read_answer(method, rid, resp.exchange, resp.status, resp.content_type, resp.body)
        answer.challenge = resp.headers.get("WWW-Authenticate")
        redirected(answer, resp.headers.get("Location"))
        rate_limited(answer, resp.headers.get("Retry-After"))
        answer.extensions = resp.headers.get(extensions_header(self.dialect.version))
        answer.sent_at, answer.received_at = resp.sent_at, resp.received_at
        return answer

    def open_stream(self, op: Op, params: dict[str, Any], *, deadline: Deadline,
                    headers: Headers | None = None) -> _OpenSse:
        method = self.method(op)
        rid = jsonrpc.new_id()
        hdrs = merge_headers(self._stream_headers, headers) if headers else self._stream_headers
        body = jsonrpc.request(method, with_tenant(params, self.tenant), rid)
        return _OpenSse(self.client.stream("POST", self.url, deadline=deadline, headers=hdrs, body=body,
                                           config=self.config),
                        method, rid)


class _OpenSse:
    """`open_stream`'s context manager: the HTTP stream read as SSE (or, when the answer is not a stream, read
    whole as a JSON-RPC answer). A class, not a generator: it runs on every stream probe."""

    __slots__ = ("_http", "_method", "_rid")

    def __init__(self, http: AbstractAsyncContextManager[StreamResponse], method: str, rid: str) -> None:
        self._http = http
        self._method = method
        self._rid = rid

    async def __aenter__(self) -> SseStream:
        raw = await self._http.__aenter__()
        try:
            method, rid = self._method, self._rid
            stream = SseStream(method, raw, lambda ev: jsonrpc_event(ev, rid))
            if not stream.is_sse:
                body = await raw.read_body(MAX_RESPONSE_BYTES)
                stream.plain = read_answer(method, rid, raw.exchange, raw.status, raw.content_type, body)
                rate_limited(stream.plain, raw.resp.headers.get("Retry-After"))
        except BaseException as exc:
            await self._http.__aexit__(type(exc), exc, exc.__traceback__)
            raise
        return stream

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self._http.__aexit__(exc_type, exc, tb)


_YIELD_BYTES = 16 << 10  # SseStream.events: at most this much read without a pass of the loop (one chunk may be more)


@dataclass(slots=True)
class SseStream:
    """An HTTP response read as Server-Sent Events; `decode` turns each event into a StreamEvent."""

    method: str
    raw: StreamResponse
    decode: Any  # Callable[[SSEEvent], StreamEvent]
    parser: SSEParser = field(default_factory=SSEParser)
    plain: Answer | None = None
    max_bytes: int = 32 << 20
    bytes_read: int = 0
    _breathe: bool = False  # batches' pass of the loop is due after the group it just gave

    @property
    def exchange(self) -> Exchange:
        return self.raw.exchange

    @property
    def status(self) -> int | None:
        return self.raw.status

    @property
    def content_type(self) -> str:
        return self.raw.content_type

    @property
    def is_sse(self) -> bool:
        return self.raw.content_type.split(";", 1)[0].strip().lower() == "text/event-stream"

    async def events(self) -> AsyncIterator[StreamEvent]:
        """Events as they arrive, one by one (see `batches`)."""
        batches = self.batches()
        try:
            async for batch in batches:
                for ev in batch:
                    yield ev
        finally:
            await batches.aclose()  # type: ignore[attr-defined]

    async def batches(self) -> AsyncIterator[Iterator[StreamEvent]]:
        """Events as they arrive, within the byte bound, in the groups that came in one read (never an empty one),
        each decoded only when it is taken from its group. A read that waited for the network let the loop run
        other work; bytes that were already there did not, so every _YIELD_BYTES of those the stream yields to
        the loop: a flooding stream (data always ready, so no read ever suspends) cannot starve the daemon's other
        work, and a small stream that came whole with its headers costs no extra pass of the loop."""
        raw = self.raw
        waits, unyielded = raw.waits, 0
        async for chunk in raw.chunks():
            self.bytes_read += len(chunk)
            if self.bytes_read > self.max_bytes:
                raise StreamLimit(f"the stream exceeded {self.max_bytes} bytes")
            found = self.parser.feed(chunk)
            if raw.waits != waits:  # this chunk was waited for
                waits, unyielded = raw.waits, 0
            unyielded += len(chunk)
            self._breathe = unyielded >= _YIELD_BYTES  # known before the group goes out: see `drained`
            if found:
                yield map(self.decode, found)
            if self._breathe:
                unyielded, self._breathe = 0, False
                await asyncio.sleep(0)

    def drained(self) -> bool:
        """Whether the stream's end is already here: the body read to its end, nothing the parser could still
        give, and no pass of the loop due before the reading ends. The next group is then the end, reached
        without waiting for anything (so a bound on that wait could never fire)."""
        return not self._breathe and self.raw.at_eof()

    def ended_at(self) -> float:
        return self.raw.ended_at()

    @property
    def comments(self) -> int:
        return self.parser.comments

    @property
    def line_endings(self) -> set[str]:
        return set(self.parser.line_endings)

    @property
    def partial_event(self) -> bool:
        return self.parser.has_partial_event

    @property
    def bom_lost_field(self) -> bool:
        return self.parser.bom_lost_field


def rpc_error(err: jsonrpc.RpcError) -> A2AError:
    spec = a2a_errors.from_jsonrpc(err.code)
    return A2AError(name=spec.name if spec else None, message=err.message, code=err.code, binding="jsonrpc",
                    reason=a2a_errors.a2a_reason(err.data), details=err.data)


def jsonrpc_event(ev: SSEEvent, request_id: str) -> StreamEvent:
    try:
        env = jsonrpc.parse_envelope(ev.data, request_id)
    except jsonrpc.NotJsonRpc as exc:
        return StreamEvent(ev.event, ev.data, problem=str(exc))
    return StreamEvent(ev.event, ev.data, result=env.result, has_result=env.has_result,
                       error=rpc_error(env.error) if env.error else None, problems=env.problems)  # env is ours alone


def read_answer(method: str, rid: str | None, exchange: Exchange, status: int | None, content_type: str,
                body: bytes) -> Answer:
    """Read a JSON-RPC response: anything but HTTP 200 with a clean envelope is a problem as well."""
    answer = Answer(method, exchange, content_type, snippet=snippet(body))
    not_rpc: str | None = None
    try:
        env = jsonrpc.parse_envelope(body, rid)
    except jsonrpc.NotJsonRpc as exc:
        not_rpc = str(exc)
    else:
        answer.result, answer.has_result = env.result, env.has_result
        answer.error = rpc_error(env.error) if env.error else None
        answer.deviations = list(env.problems)
        answer.id_fault = env.id_fault
        if not jsonrpc.is_json_content_type(content_type):
            answer.media_type = f"Content-Type is {content_type or 'missing'!r}, not application/json"
    answer.problem = _status_problem(answer, status) or _framing_problem(answer, status, not_rpc)
    return answer


def _status_problem(answer: Answer, status: int | None) -> Problem | None:
    if status == 200:
        return None
    what = f"{answer.method} to {answer.exchange.url} answered HTTP {status}"
    body = f" ({answer.content_type or 'no content type'}: {answer.snippet[:120]})" if answer.snippet else ""
    if status == 404:
        return Problem(ProblemKind.ROUTE, what + body)
    if status in (401, 403):
        return Problem(ProblemKind.AUTH, what + body)
    err = answer.error
    if err is not None and err.is_(a2a_errors.VERSION_NOT_SUPPORTED):
        return Problem(ProblemKind.VERSION, what + ": " + err.describe())
    gateway = gateway_problem(status, answer.snippet) if err is None else None
    if gateway is not None:
        return Problem(ProblemKind.GATEWAY, f"{what}{body}: {gateway}")
    if status == 400 and "version" in answer.snippet.lower():
        return Problem(ProblemKind.VERSION, what + body + " — the server rejects the A2A-Version sent")
    return Problem(ProblemKind.STATUS, what + body)


def _framing_problem(answer: Answer, status: int | None, not_rpc: str | None) -> Problem | None:
    ctype = answer.content_type or "no content type"
    if not_rpc is not None:
        return Problem(ProblemKind.FRAMING, f"HTTP {status} {ctype} is not a JSON-RPC response: {not_rpc}"
                       + (f" — body starts {answer.snippet[:80]!r}" if answer.snippet else ""))
    if answer.deviations:
        err = answer.error  # the error official clients read from such an answer, said beside the deviation
        carried = f" (the error: {err.describe()})" if err is not None and err.name is not None else ""
        return Problem(ProblemKind.FRAMING, "; ".join(answer.deviations) + carried)
    return None


register(JsonRpcBinding.name, JsonRpcBinding.card_name, JsonRpcBinding.build)
