"""What every binding shares: the operations, the neutral answer, the stream of answers, and the registry.

A binding carries one A2A operation over its transport and reports what the wire did, unrepaired. Its
answer is binding-neutral: an A2A result (ProtoJSON-shaped, as the dialect reads it), an A2A error by
*name* (from `probe.wire.a2a_errors`), or a transport problem (no A2A route, credentials refused, a status
the binding does not use, a body that is not the binding's framing), plus the exchange record. No answer
at all (connect failure, deadline, oversized body, refused redirect) raises a `WireError` instead.
"""

from __future__ import annotations

import email.utils
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, ClassVar, Protocol
from urllib.parse import urljoin, urlsplit

from probe import redact
from probe.results import Exchange
from probe.wire import a2a_errors
from probe.wire.dialects import Dialect
from probe.wire.http import DEFAULT_CONFIG, ClientConfig, Deadline, HttpClient
from probe.wire.jsonrpc import IdFault

MAX_RESPONSE_BYTES = 4 << 20

Headers = Mapping[str, str | None]  # per-call overrides; None removes a header (or gRPC metadata key)


class Op(StrEnum):
    SEND = "send"
    STREAM = "stream"
    GET = "get"
    LIST = "list"
    CANCEL = "cancel"
    SUBSCRIBE = "subscribe"
    PUSH_SET = "push_set"
    PUSH_GET = "push_get"
    PUSH_LIST = "push_list"
    PUSH_DELETE = "push_delete"
    EXTENDED_CARD = "extended_card"


class ProblemKind(StrEnum):
    """Why an answer is not the A2A answer its binding promises (the engine maps each to a reason)."""

    ROUTE = "route"  # nothing A2A at that address: HTTP 404 without an A2A error body, gRPC UNIMPLEMENTED service
    AUTH = "auth"  # HTTP 401/403, gRPC UNAUTHENTICATED/PERMISSION_DENIED
    VERSION = "version"  # a transport-level refusal of the A2A-Version sent
    STATUS = "status"  # a transport status the binding does not use for this answer
    GATEWAY = "gateway"  # a gateway's own error page in front of the agent (502/503/504, 413, 431), no A2A body
    RATE_LIMITED = "rate_limited"  # HTTP 429, gRPC RESOURCE_EXHAUSTED from the server: refused, not judged
    FRAMING = "framing"  # not a JSON-RPC envelope / ProtoJSON body / gRPC message, or one with deviations


@dataclass(frozen=True, slots=True)
class Problem:
    kind: ProblemKind
    detail: str
    retry_after: float | None = None  # RATE_LIMITED: the seconds its Retry-After names, when it names any


@dataclass(slots=True)
class A2AError:
    """An A2A error by name, with the wire code it came as and what the transport status says about it."""

    name: str | None  # e.g. TaskNotFoundError; None when the wire code is not one the spec defines
    message: str
    code: int | str | None  # JSON-RPC code, HTTP status or gRPC status name, as sent
    binding: str = "jsonrpc"
    reason: str | None = None  # the ErrorInfo reason seen, if any
    details: Any = None  # JSON-RPC error.data / google.rpc.Status details, unrepaired
    mappings: tuple[str, ...] = ()  # HTTP/gRPC: which spec mappings (1.0.0, 1.0.1) the status matches

    @property
    def jsonrpc_code(self) -> int | None:
        spec = a2a_errors.BY_NAME.get(self.name or "")
        return spec.jsonrpc if spec else (self.code if isinstance(self.code, int) and self.binding == "jsonrpc"
                                          else None)

    def describe(self) -> str:
        name = self.name or "error"
        msg = self.message[:200]
        if self.binding == "jsonrpc":
            return f"JSON-RPC {name} {self.code}: {msg}"
        if self.binding == "http_json":  # an error event of a 0.3 stream may declare no status (a2a-java 0.3)
            where = f"HTTP {self.code}" if self.code is not None else "HTTP+JSON"
        else:
            where = f"gRPC {self.code}"
        why = f" ({self.reason})" if self.reason else ""
        return f"{where} {name}{why}: {msg}"

    def is_(self, *names: str) -> bool:
        return self.name in names


@dataclass(slots=True)
class Answer:
    """One unary call's answer: at most one of result/error, maybe a problem, always the exchange."""

    method: str  # the call as its binding names it: SendMessage, POST /message:send, /lf.a2a.v1.A2AService/GetTask
    exchange: Exchange
    content_type: str = ""
    result: Any = None
    has_result: bool = False
    error: A2AError | None = None
    problem: Problem | None = None
    deviations: list[str] = field(default_factory=list)  # framing faults that still let the answer be read
    # JSON-RPC: an error answer's `id` member where it is not the one due (absent, null, another value); not a
    # deviation, since the official clients read the error whatever its id: errors.response_id judges it
    id_fault: IdFault | None = None
    # the answer's Content-Type where it is not the media type its binding and version name (invoke.content_type):
    # a finding, not a framing fault, since the official clients read the body whatever it says
    media_type: str | None = None
    snippet: str = ""  # the start of the body, for people
    challenge: str | None = None  # WWW-Authenticate (or gRPC equivalent), for 401s
    extensions: str | None = None  # the A2A-Extensions (0.3: X-A2A-Extensions) header of the answer: those activated
    # the call's exchange on the monotonic clock, request taken to last byte (0.0: the binding does not stamp it);
    # the engine's latency runs between them, leaving out the request's building and the answer's reading
    sent_at: float = 0.0
    received_at: float = 0.0

    @property
    def status(self) -> int | None:
        return self.exchange.status

    def describe(self) -> str:
        if self.problem is not None and self.problem.kind is ProblemKind.FRAMING:
            return f"{self.exchange.outcome}, {self.problem.detail}"  # names the error too, when it has one
        if self.error is not None:
            said = self.error.describe()  # an HTTP+JSON or gRPC error names its status itself: not twice
            return said if said.startswith(f"{self.exchange.outcome} ") else f"{self.exchange.outcome}, {said}"
        if self.problem is not None:
            return self.problem.detail
        return f"{self.exchange.outcome} with a result"


@dataclass(slots=True)
class StreamEvent:
    """One stream event: a result, an A2A error, or why it could not be read."""

    name: str = ""  # the SSE event name ("" for message / gRPC)
    raw: str | None = None  # the event's data as received, when there is text to compare (SSE)
    result: Any = None
    has_result: bool = False
    error: A2AError | None = None
    problems: list[str] = field(default_factory=list)  # deviations in an otherwise readable event
    problem: str | None = None  # the event could not be read at all


class AnswerStream(Protocol):
    """A server stream (SSE or gRPC); `plain` is set when the answer was not a stream at all."""

    @property
    def method(self) -> str: ...

    @property
    def exchange(self) -> Exchange: ...

    @property
    def content_type(self) -> str: ...

    @property
    def plain(self) -> Answer | None: ...

    @property
    def status(self) -> int | None: ...

    def events(self) -> AsyncIterator[StreamEvent]: ...

    def batches(self) -> AsyncIterator[Iterable[StreamEvent]]:
        """The same events in the groups that arrived together (one read); never an empty group."""
        ...

    def drained(self) -> bool:
        """True when the next group is the stream's end, reached without waiting (False when it cannot tell)."""
        ...

    def ended_at(self) -> float:
        """When the stream's end reached the probe's event loop (monotonic clock); 0.0 when not known (not ended,
        or a transport that does not stamp it)."""
        ...

    max_bytes: int  # the bound on the bytes read from the stream (the engine sets it per probe)

    # framing facts the stream judge reports (SSE only; 0 / empty / False elsewhere)
    @property
    def comments(self) -> int: ...

    @property
    def line_endings(self) -> set[str]: ...

    @property
    def partial_event(self) -> bool: ...

    @property
    def bom_lost_field(self) -> bool: ...


class EventByEvent:
    """`batches` and `drained` for a stream read one event at a time (gRPC's messages, a scripted stream): each
    event is its own group, and whether the end is already here is not known (the wait after a terminal event keeps
    its close-grace bound)."""

    __slots__ = ()

    def events(self) -> AsyncIterator[StreamEvent]:
        raise NotImplementedError

    async def batches(self) -> AsyncIterator[tuple[StreamEvent]]:
        events = self.events()
        try:
            async for ev in events:
                yield (ev,)
        finally:
            await events.aclose()  # type: ignore[attr-defined]

    def drained(self) -> bool:
        return False

    def ended_at(self) -> float:
        return 0.0


class BindingUnavailable(Exception):
    """A binding cannot be built here: a missing optional dependency (`probe_side`), or a version it lacks."""

    def __init__(self, message: str, *, probe_side: bool) -> None:
        super().__init__(message)
        self.probe_side = probe_side


class Binding(Protocol):
    name: ClassVar[str]  # the registry name: jsonrpc, http_json, grpc (a bounded metric label value)
    card_name: ClassVar[str]  # the card's protocolBinding: JSONRPC, HTTP+JSON, GRPC

    @property
    def dialect(self) -> Dialect: ...

    @property
    def url(self) -> str: ...

    def method(self, op: Op) -> str: ...

    async def call(self, op: Op, params: dict[str, Any], *, deadline: Deadline,
                   headers: Headers | None = None) -> Answer: ...

    def open_stream(self, op: Op, params: dict[str, Any], *, deadline: Deadline,
                    headers: Headers | None = None) -> AbstractAsyncContextManager[AnswerStream]: ...

    async def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class Context:
    """What a binding needs to be built: the shared HTTP client, the interface, the dialect and the headers."""

    http: HttpClient
    url: str
    dialect: Dialect
    headers: Mapping[str, str]  # extra (non-secret) headers for every call (HTTP headers / gRPC metadata)
    # TLS, fresh connections and the auth flow (probe.trust.auth): every binding applies `config.auth`'s
    # credentials for the URL it calls (HTTP: HttpClient does it per request; gRPC: as metadata) and its TLS
    config: ClientConfig = DEFAULT_CONFIG
    # the interface's 1.0 `tenant`: 1.0.1 §8.3.2 "Set the tenant field in every request message to exactly the
    # value declared in the selected AgentInterface entry" (1.0.0's proto: "Tenant ID to be used in the request");
    # None: omitted. Both official clients apply it (TenantTransportDecorator)
    tenant: str | None = None


Factory = Callable[[Context], Binding]


def with_tenant(params: dict[str, Any], tenant: str | None) -> dict[str, Any]:
    """A request's params with the interface's tenant in the request message's `tenant` field."""
    return {**params, "tenant": tenant} if tenant and "tenant" not in params else params


@dataclass(frozen=True, slots=True)
class Registration:
    name: str
    card_name: str
    factory: Factory


REGISTRY: dict[str, Registration] = {}
BY_CARD_NAME: dict[str, Registration] = {}


def register(name: str, card_name: str, factory: Factory) -> None:
    reg = Registration(name, card_name, factory)
    REGISTRY[name] = reg
    BY_CARD_NAME[card_name.upper()] = reg


def rate_limited(answer: Answer, retry_after: str | None) -> None:
    """An HTTP 429 (RFC 6585 §4) is a refusal by rate, whatever body comes with it (a JSON-RPC error, a
    google.rpc.Status, a gateway's page): the request was not served, so nothing of the answer is the agent's to
    judge. The Retry-After it names (RFC 9110 §10.2.3) is read as seconds, never quoted."""
    if answer.status != 429:
        return
    seconds = retry_after_seconds(retry_after)
    wait = f"; Retry-After {seconds:.0f} s" if seconds is not None else "; no Retry-After"
    body = f" ({answer.content_type or 'no content type'}: {answer.snippet[:120]})" if answer.snippet else ""
    answer.problem = Problem(ProblemKind.RATE_LIMITED, f"{answer.method} to {answer.exchange.url} answered HTTP 429 "
                             f"Too Many Requests{body}{wait}: refused by a rate limit, the agent not judged",
                             seconds)


def retry_after_seconds(value: str | None) -> float | None:
    """RFC 9110 §10.2.3: delay-seconds or an HTTP-date; None when absent or unreadable (a date in the past: 0)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(min(int(value[:12]), 10**9))
    try:
        when = email.utils.parsedate_to_datetime(value[:64])
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:
        return None  # RFC 9110 §5.6.7: an HTTP-date is GMT; a date without a zone is not one
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def redirected(answer: Answer, location: str | None) -> None:
    """A redirect answering an A2A call names where it points and why clients stop there: they send their POST to
    the advertised URL and follow no redirect (a2a-sdk's httpx client follows none; a 301/302 would turn the POST
    into a GET)."""
    if answer.problem is None or answer.status not in (301, 302, 303, 307, 308):
        return
    if not location:
        answer.problem = Problem(answer.problem.kind, answer.problem.detail + ", with no Location")
        return
    try:
        to = urljoin(answer.exchange.url, location)
    except ValueError:
        to = location
    here, there = urlsplit(answer.exchange.url), urlsplit(to)
    why = ("http to https: advertise the https URL" if (here.scheme, there.scheme) == ("http", "https")
           and here.path == there.path
           else "a trailing-slash redirect: advertise the URL with the slash, or route it without"
           if there.path == here.path + "/" or here.path == there.path + "/"
           else "advertise the URL it points to")
    answer.problem = Problem(answer.problem.kind, f"{answer.problem.detail}, redirecting to {redact.url(to)} "
                             f"({why}): A2A clients POST to the advertised URL and follow no redirect")


def snippet(body: bytes, limit: int = 160) -> str:
    text = body[:limit].decode("utf-8", "replace")
    return " ".join(text.split()) + ("…" if len(body) > limit else "")


def merge_headers(base: Mapping[str, str], extra: Headers | None) -> dict[str, str]:
    """`base` with `extra` applied case-insensitively; a None value removes the header."""
    out = dict(base)
    for key, value in (extra or {}).items():
        for existing in [k for k in out if k.lower() == key.lower()]:
            del out[existing]
        if value is not None:
            out[key] = value
    return out
