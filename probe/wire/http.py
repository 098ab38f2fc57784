"""One shared aiohttp session per process, with per-phase timings, bounded reads and hard deadlines.

Every exchange records an `HttpExchange` (status, content type, phase timings) so the engine can
report exactly what the wire did. Redirects are followed by hand: same-origin ones up to a bound,
cross-origin ones refused unless allowed, and then never with credentials.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import contextvars
import errno
import functools
import os
import re
import socket
import ssl
import time
import zlib
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC
from typing import Any, Protocol
from urllib.parse import urlencode, urljoin, urlsplit

import aiohappyeyeballs
import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.client_proto import ResponseHandler
from aiohttp.client_reqrep import ConnectionKey, RequestInfo
from aiohttp.http_writer import _serialize_headers
from aiohttp.resolver import DefaultResolver
from aiohttp.streams import StreamReader
from multidict import CIMultiDict, CIMultiDictProxy
from yarl import URL

from probe import __version__, redact
from probe.results import HttpExchange, HttpPhases, TlsInfo
from probe.target import InvalidUrl, check_url
from probe.wire import egress
from probe.wire.egress import Egress, EgressResolver

USER_AGENT = f"a2a-probe/{__version__}"
MAX_REDIRECTS = 5


class WireError(Exception):
    """A transport-level failure; `kind` is a small fixed vocabulary the engine maps to reasons."""

    kind = "error"

    def __init__(self, message: str, exchange: HttpExchange | None = None) -> None:
        super().__init__(message)
        self.exchange = exchange


class ConnectFailed(WireError):
    kind = "connect"


class InvalidTarget(ConnectFailed):
    """The URL to call is malformed (bad port, no host, spaces): nothing was sent."""

    kind = "invalid_url"


class TargetRefused(ConnectFailed):
    """The egress policy of a caller-chosen probe refused the URL or the address it resolves to: nothing sent."""

    kind = "refused"


class ProtocolError(ConnectFailed):
    """The server answered with something that is not valid HTTP/1.1 (status line, headers, chunk framing)."""

    kind = "protocol"


class ConnectionReset(ConnectFailed):
    """The connection was reset, or closed before the body was complete, after the response headers arrived."""

    kind = "reset"


class TlsFailed(ConnectFailed):
    """The TLS handshake failed: the certificate did not verify (expired, wrong host, unknown CA) or the
    server refused the connection's TLS parameters."""

    kind = "tls"


class ClientCertRefused(ConnectFailed):
    """The server rejected (or required and did not get) a TLS client certificate."""

    kind = "client_cert"


class ProbeOutOfFiles(ConnectFailed):
    """The probe could not open a socket: its process (EMFILE) or the host (ENFILE) is out of file descriptors.
    The probe's own overload: nothing reached the agent, so nothing is said about it."""

    kind = "probe_files"


class ProbePoolFull(ConnectFailed):
    """The request waited for a free connection in the probe's own pool (max_connections, or the per-origin bound)
    until its deadline: the probe's overload (the connections are held by other runs), nothing reached the agent."""

    kind = "probe_pool"


class AuthTokenFailed(WireError):
    """Getting a credential from a token endpoint (or its discovery document) failed: the probe's
    own exchange with an identity provider, never the agent's fault."""

    kind = "auth_token"


class DeadlineExceeded(WireError):
    kind = "timeout"


class BodyTooLarge(WireError):
    kind = "too_large"


class RedirectRefused(WireError):
    kind = "redirect"


@dataclass(slots=True)
class Deadline:
    """An absolute point on the loop clock; every await in a probe is bounded by one."""

    at: float

    @classmethod
    def after(cls, seconds: float) -> Deadline:
        return cls(time.monotonic() + seconds)

    def remaining(self) -> float:
        return max(0.0, self.at - time.monotonic())

    def expired(self) -> bool:
        return self.remaining() <= 0.0


@dataclass(slots=True)
class _Timer:
    """The phase stamps of one request, taken by HttpClient's send paths, _TimedResolver and HttpClient._open."""

    start: float = 0.0
    dns_start: float = 0.0
    dns_end: float = 0.0
    conn_start: float = 0.0
    conn_end: float = 0.0
    sent: float = 0.0
    headers: float = 0.0
    reused: float = 0.0  # set when the request went out on a pooled (kept-alive) connection
    tcp_end: float = 0.0  # TCP connected, TLS handshake not yet started (https only; see _connect_fresh)
    tls: TlsInfo | None = None  # what a new TLS connection negotiated (a reused one was measured before)
    cert_requested: bool = False  # the server asked for a TLS client certificate (see _watch_handshake)
    queued: bool = False  # waiting for a free connection in the probe's pool (or a fresh-connection slot)
    protocol: Any = None  # the pooled connection's protocol (a _CountingHandler) and its byte count at sending
    received: int = 0

    def phases(self, done: float) -> HttpPhases:
        resolve = max(0.0, self.dns_end - self.dns_start)
        # aiohttp resolves inside connection creation; report the connect phase without DNS or TLS
        tcp_end = self.tcp_end if self.tcp_end and self.conn_end else self.conn_end
        connect = max(0.0, tcp_end - self.conn_start - resolve)
        tls = max(0.0, self.conn_end - self.tcp_end) if self.tcp_end and self.conn_end else 0.0
        sent = self.sent or self.conn_end or self.start
        processing = max(0.0, self.headers - sent) if self.headers else 0.0
        transfer = max(0.0, done - self.headers) if self.headers else 0.0
        return HttpPhases(resolve=resolve, connect=connect, tls=tls, processing=processing, transfer=transfer)


_TIMER: contextvars.ContextVar[_Timer | None] = contextvars.ContextVar("a2a_probe_timer", default=None)

# the seconds a run's requests waited for a free connection in the probe's own pool: a one-item cell the runner sets
# for each run (runner.own_overload weighs it as it weighs the loop's stalls); None outside a run
POOL_WAITED: contextvars.ContextVar[list[float] | None] = contextvars.ContextVar("a2a_probe_pool_waited",
                                                                                default=None)


def _pool_waited(since: float) -> None:
    if (cell := POOL_WAITED.get()) is not None:
        cell[0] += time.monotonic() - since


class _CountingHandler(ResponseHandler):
    """aiohttp's protocol, counting the bytes that arrive on the connection: a kept-alive connection that fails
    before a byte of the answer arrived is retried fresh; one that had sent part of an answer (a status line, some
    headers) failed that request, as Go's net/http tells them apart (errServerClosedIdle: nothing read)."""

    received = 0
    tls: TlsInfo | None = None  # what the connection's TLS handshake negotiated: a request reusing it reports it
    # When the agent's bytes came, stamped as the loop hands them over, not when the request's task next runs: a
    # busy loop (a fleet's runs ending together, each judged and recorded) runs other work between the two, and
    # that wait is the probe's, never the agent's latency. `arrived`: the latest bytes, or the close that ended a
    # body read to the close; `head_at`: the bytes that completed the latest response head.
    arrived = 0.0
    head_at = 0.0

    def data_received(self, data: bytes,
                      _base: Callable[[ResponseHandler, bytes], None] = ResponseHandler.data_received) -> None:
        if data:  # aiohttp calls it with b"" itself, when the reader resumes (no bytes came)
            self.arrived = time.monotonic()
            self.received += len(data)
        _base(self, data)  # bound at definition: no super() lookup per chunk

    def feed_data(self, data: Any, size: int = 0) -> None:
        self.head_at = self.arrived  # the parser hands over a response head (called from data_received)
        super().feed_data(data, size)

    def connection_lost(self, exc: BaseException | None) -> None:
        payload = getattr(self, "_payload", None)
        if payload is not None and not payload.is_eof():  # the close ends (or cuts) the body being read
            self.arrived = time.monotonic()
        super().connection_lost(exc)


def _arrival(protocol: Any, attr: str, since: float) -> float:
    """A protocol's arrival stamp (`arrived` or `head_at`) when it falls in this request (at or after `since`, its
    bytes written), else now: a connection of another kind (the tests' aiohttp session) has none."""
    now = time.monotonic()
    at: float = getattr(protocol, attr, 0.0)
    return at if since <= at <= now else now


async def _connect_one(loop: asyncio.AbstractEventLoop, addr_info: Any) -> socket.socket:
    """A non-blocking socket connected to one address, as aiohappyeyeballs makes it for a single address."""
    family, type_, proto, _, address = addr_info
    sock = socket.socket(family=family, type=type_, proto=proto)
    try:
        sock.setblocking(False)
        await loop.sock_connect(sock, address)
    except BaseException:
        sock.close()
        raise
    return sock


# the exceptions aiohttp's connector maps to its certificate and TLS errors (the same tuples it uses)
_CERT_ERRORS: tuple[type[Exception], ...] = aiohttp.connector.cert_errors  # type: ignore[attr-defined]
_SSL_ERRORS: tuple[type[Exception], ...] = aiohttp.connector.ssl_errors  # type: ignore[attr-defined]


class _TimedResolver(AbstractResolver):
    """Stamps the resolve phase around each real lookup: an IP-literal host or a DNS-cache hit never reaches the
    resolver, so it reports none. A cache miss may resolve in a task aiohttp starts for it; that task copies the
    requesting task's context, so the stamps land on the request that caused the lookup."""

    def __init__(self, inner: AbstractResolver) -> None:
        self._inner = inner

    async def resolve(self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET,
                      ) -> list[ResolveResult]:
        timer = _TIMER.get()
        if timer is not None and not timer.dns_start:
            timer.dns_start = time.monotonic()
        found = await self._inner.resolve(host, port, family)
        if timer is not None and not timer.dns_end:
            timer.dns_end = time.monotonic()
        return found

    async def close(self) -> None:
        await self._inner.close()


_CERTIFICATE_REQUEST = getattr(getattr(ssl, "_TLSMessageType", None), "CERTIFICATE_REQUEST", None)


def _on_handshake_message(_conn: object, direction: str, _version: object, _content_type: object,
                          msg_type: object, _data: object) -> None:
    # runs inside the handshake, in the requesting task's context: note that the server asked for a client
    # certificate, so a connection it then drops is explained as an mTLS refusal, not a broken agent
    if direction == "read" and msg_type == _CERTIFICATE_REQUEST:
        timer = _TIMER.get()
        if timer is not None:
            timer.cert_requested = True


def _watch_handshake(context: ssl.SSLContext) -> ssl.SSLContext:
    """Install the handshake observer (CPython's `_msg_callback`, there since 3.8; absent elsewhere)."""
    if _CERTIFICATE_REQUEST is not None and getattr(context, "_msg_callback", None) is None:
        with contextlib.suppress(AttributeError, TypeError):
            context._msg_callback = _on_handshake_message  # type: ignore[attr-defined]
    return context


_DEFAULT_SSL: ssl.SSLContext | None = None


def _default_ssl() -> ssl.SSLContext:
    """aiohttp's own verifying context (the system trust store), watched; looked up each time, not copied."""
    global _DEFAULT_SSL
    shared = getattr(aiohttp.connector, "_SSL_CONTEXT_VERIFIED", None)
    if isinstance(shared, ssl.SSLContext):
        return _watch_handshake(shared)
    if _DEFAULT_SSL is None:
        _DEFAULT_SSL = _watch_handshake(ssl.create_default_context())
    return _DEFAULT_SSL


@dataclass(frozen=True, slots=True)
class Credentials:
    """What an auth flow adds to one request: headers, query parameters, cookies."""

    headers: Mapping[str, str] = field(default_factory=dict)
    query: Mapping[str, str] = field(default_factory=dict)
    cookies: Mapping[str, str] = field(default_factory=dict)


NO_CREDENTIALS = Credentials()


class RequestAuth(Protocol):
    """An auth flow, as every binding applies it (implemented in probe.trust.auth)."""

    def credentials(self, url: str) -> Credentials:
        """What to add to a request to `url`; nothing for an origin the credentials are not for."""
        ...

    async def on_unauthorized(self, client: HttpClient, deadline: Deadline) -> bool:
        """After a 401: refresh once (e.g. fetch a new token); True when the request is worth retrying."""
        ...


@dataclass(frozen=True, slots=True)
class ClientConfig:
    """How to reach one agent, for every request to it (blackbox_exporter's client config): TLS, a fresh
    connection per request or the pool, and the auth flow."""

    ssl: ssl.SSLContext | None = None  # None: the system trust store, full verification
    fresh: bool = False
    auth: RequestAuth | None = None
    client_cert: bool = False  # the ssl context carries a client certificate (for explaining mTLS refusals)
    # the PEM files behind `ssl` (CA bundle, client certificate, client key), for transports that take bytes
    # rather than an SSLContext (gRPC channel credentials)
    pem_files: tuple[str | None, str | None, str | None] = (None, None, None)


DEFAULT_CONFIG = ClientConfig()


_ANONYMOUS: contextvars.ContextVar[bool] = contextvars.ContextVar("a2a_probe_anonymous", default=False)


@contextlib.contextmanager
def without_credentials() -> Iterator[None]:
    """Requests made inside carry none of the auth flow's credentials (the 'rejected without credentials' check)."""
    token = _ANONYMOUS.set(True)
    try:
        yield
    finally:
        _ANONYMOUS.reset(token)


def with_credentials(url: str, headers: Mapping[str, str], auth: RequestAuth | None) -> tuple[str, dict[str, str]]:
    """The URL and headers of one request with the flow's credentials for that URL's origin applied."""
    out = dict(headers)
    creds = auth.credentials(url) if auth is not None and not _ANONYMOUS.get() else NO_CREDENTIALS
    for key, value in creds.headers.items():
        for existing in [k for k in out if k.lower() == key.lower()]:
            del out[existing]
        out[key] = value
    if creds.cookies:
        jar = "; ".join(f"{k}={v}" for k, v in creds.cookies.items())
        prior = next((k for k in out if k.lower() == "cookie"), None)
        out["Cookie"] = f"{out.pop(prior)}; {jar}" if prior else jar
    if creds.query:
        url = url + ("&" if urlsplit(url).query else "?") + urlencode(dict(creds.query))
    return url, out


def tls_info(transport: asyncio.BaseTransport, verified: bool) -> TlsInfo | None:
    """Version, cipher and certificate expiry of a TLS connection (None on plain http)."""
    obj = transport.get_extra_info("ssl_object")
    if not isinstance(obj, ssl.SSLObject):
        return None
    cipher = obj.cipher()
    expiries = _chain_expiries(obj)
    return TlsInfo(version=obj.version() or "unknown", cipher=cipher[0] if cipher else "unknown",
                   earliest_expiry=min(expiries) if expiries else None,
                   leaf_expiry=expiries[0] if expiries else None, verified=verified)


def _chain_expiries(obj: ssl.SSLObject) -> list[float]:
    """notAfter of each certificate the server presented, leaf first."""
    from cryptography import x509

    chain: list[bytes] = []
    inner = getattr(obj, "_sslobj", None)
    for name in ("get_verified_chain", "get_unverified_chain"):
        getter = getattr(obj, name, None) or getattr(inner, name, None)
        if getter is None:
            continue
        try:
            certs = getter() or []
        except (ssl.SSLError, ValueError):
            continue
        chain = [c if isinstance(c, bytes) else c.public_bytes(ssl._ssl.ENCODING_DER)  # type: ignore[attr-defined]
                 for c in certs]
        if chain:
            break
    if not chain:
        leaf = obj.getpeercert(binary_form=True)
        chain = [leaf] if leaf else []
    out: list[float] = []
    for der in chain:
        try:
            out.append(x509.load_der_x509_certificate(der).not_valid_after_utc.astimezone(UTC).timestamp())
        except ValueError:
            continue
    return out


def origin_url(url: str) -> str:
    """`url` as credentials are bound to it: a schemeless host:port (an advertised gRPC URL) is http://host:port."""
    return url if "://" in url else f"http://{url}"


@functools.lru_cache(maxsize=65536)  # pure in its string and parsed ~5 times a probe; bounded
def origin(url: str) -> tuple[str, str, int | None]:
    p = urlsplit(url)
    port = p.port or {"http": 80, "https": 443}.get(p.scheme)
    found = (p.scheme.lower(), (p.hostname or "").lower(), port)
    # one tuple per origin, not per URL: a fleet behind a gateway has one origin for ~2 URLs an agent (~170 bytes
    # each: the tuple and its two strings, 50,000 agents: ~17 MB)
    if len(_ORIGINS) >= 65536:
        _ORIGINS.clear()
    return _ORIGINS.setdefault(found, found)


_ORIGINS: dict[tuple[str, str, int | None], tuple[str, str, int | None]] = {}


@dataclass(slots=True)
class Response:
    url: str
    status: int
    headers: CIMultiDictProxy[str]
    body: bytes
    exchange: HttpExchange
    redirects: list[str] = field(default_factory=list)
    cross_origin_redirect: bool = False
    hops: list[HttpExchange] = field(default_factory=list)  # the redirect responses before this one
    # the exchange on the monotonic clock: from the client taking the request to the body's last byte (its
    # duration_s); what the caller does before and after is its own work, not the agent's latency
    sent_at: float = 0.0
    received_at: float = 0.0

    @property
    def exchanges(self) -> list[HttpExchange]:
        return [*self.hops, self.exchange]

    @property
    def content_type(self) -> str:
        return self.headers.get("Content-Type", "")


class Answered:
    """What the client reads of a response, on a connection of the pool's or of its own: the status and headers from
    aiohttp's parser, the body as its StreamReader (decoded by it, bounded by the reader's limit). Releasing or
    closing it hands the connection back (`done`): the pool keeps it only when the body was read to its end and
    the connection can carry another request; a connection of its own is closed."""

    __slots__ = ("_done", "content", "headers", "protocol", "reason", "status", "url")

    def __init__(self, url: str, protocol: ResponseHandler, message: Any, payload: StreamReader,
                 done: Callable[[], None]) -> None:
        self.url = url
        self.status: int = message.code
        self.reason: str = message.reason
        self.headers: CIMultiDictProxy[str] = message.headers
        self.content = payload
        self.protocol = protocol
        self._done: Callable[[], None] | None = done

    @property
    def content_length(self) -> int | None:
        value = self.headers.get("Content-Length")
        return None if value is None else int(value)

    def release(self) -> None:
        if (done := self._done) is not None:
            self._done = None
            done()

    close = release


class _Pool:
    """The probe's kept-alive connections, per origin (the ConnectionKey, TLS context included), kept as aiohttp's
    TCPConnector keeps them for a ClientSession: at most `limit` requests on them at once and `per_host` per origin
    (0: no bound), an idle connection reused first in, first out within `keepalive` seconds and closed after it.
    A request that finds no free slot waits in line; a slot given back goes to the first one in line its origin
    admits, so no later request overtakes it."""

    def __init__(self, limit: int, per_host: int, keepalive: float = 30.0) -> None:
        self.limit, self.per_host, self.keepalive = limit, per_host, keepalive
        self._idle: dict[ConnectionKey, collections.deque[tuple[ResponseHandler, float]]] = {}
        self._busy = 0
        self._busy_at: dict[ConnectionKey, int] = {}
        self._line: collections.deque[tuple[ConnectionKey, asyncio.Future[None]]] = collections.deque()
        self._sweep: asyncio.TimerHandle | None = None
        self._closed = False  # the client closed: a connection given back is closed, not kept

    def _admits(self, key: ConnectionKey) -> bool:
        return ((not self.limit or self._busy < self.limit)
                and (not self.per_host or self._busy_at.get(key, 0) < self.per_host))

    def _take(self, key: ConnectionKey) -> None:
        self._busy += 1
        self._busy_at[key] = self._busy_at.get(key, 0) + 1

    async def acquire(self, key: ConnectionKey, timer: _Timer) -> ResponseHandler | None:
        """A slot for one request to `key`, and the idle connection to send it on (None: make one)."""
        if self._admits(key):
            self._take(key)
        else:  # a deadline passing here is the probe's overload (see ProbePoolFull)
            await self._wait(key, timer)
        conns = self._idle.get(key)
        if conns is None:
            return None
        now = time.monotonic()
        while conns:
            protocol, since = conns.popleft()
            # should_close: bytes the server sent while the connection sat idle (an answer nobody asked for, which
            # the next request would read as its own) make it unusable, as a close does
            if protocol.is_connected() and not protocol.should_close and now - since <= self.keepalive:
                break
            protocol.close()
        else:
            protocol = None
        if not conns:
            del self._idle[key]
        return protocol

    async def _wait(self, key: ConnectionKey, timer: _Timer) -> None:
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        entry = (key, turn)
        self._line.append(entry)
        timer.queued, since = True, time.monotonic()
        try:
            await turn
        except BaseException:
            if turn.done() and not turn.cancelled():  # given a slot as it was cancelled: pass it on
                self.release(key, None)
            else:
                with contextlib.suppress(ValueError):
                    self._line.remove(entry)
            raise
        finally:
            _pool_waited(since)
        timer.queued = False

    def release(self, key: ConnectionKey, protocol: ResponseHandler | None) -> None:
        """Give a slot back, and its connection to the idle ones when it can carry another request (the body read
        to its end, no `Connection: close`, nothing unread, still open); any other connection is closed."""
        left = self._busy_at[key] - 1
        if left:
            self._busy_at[key] = left
        else:
            del self._busy_at[key]
        self._busy -= 1
        if protocol is not None:
            if self._closed or protocol.should_close or not protocol.is_connected():
                protocol.close()
            else:
                self._idle.setdefault(key, collections.deque()).append((protocol, time.monotonic()))
                if self._sweep is None:
                    self._sweep = asyncio.get_running_loop().call_later(self.keepalive, self._swept)
        for i, (waiting, turn) in enumerate(self._line):
            # a wait cancelled whose task has not run yet is still in line: it leaves it itself (`_wait`)
            if not turn.done() and self._admits(waiting):
                del self._line[i]
                self._take(waiting)
                turn.set_result(None)
                return

    def _swept(self) -> None:
        """Close the connections idle past the keep-alive (aiohttp's connector cleans up on the same period)."""
        self._sweep = None
        stale = time.monotonic() - self.keepalive
        for key in list(self._idle):
            conns = self._idle[key]
            while conns and (conns[0][1] < stale or not conns[0][0].is_connected() or conns[0][0].should_close):
                conns.popleft()[0].close()
            if not conns:
                del self._idle[key]
        if self._idle:
            self._sweep = asyncio.get_running_loop().call_later(self.keepalive, self._swept)

    def close(self) -> None:
        self._closed = True
        if self._sweep is not None:
            self._sweep.cancel()
            self._sweep = None
        for conns in self._idle.values():
            for protocol, _since in conns:
                protocol.close()
        self._idle.clear()



# aiohttp's request defaults, read from it so a request of ours looks like one of its ClientSession's
_AUTO_HEADERS = tuple(aiohttp.ClientRequest.DEFAULT_HEADERS.items())
_NO_BODY = frozenset(aiohttp.ClientRequest.GET_METHODS)  # without a body, others send Content-Length: 0
_TYPED = frozenset(aiohttp.ClientRequest.POST_METHODS)  # given an application/octet-stream type when none is set
_DNS_ERROR: type[aiohttp.ClientConnectorError] = getattr(aiohttp, "ClientConnectorDNSError",
                                                        aiohttp.ClientConnectorError)
_canonical_ipv4: Callable[[str], bool] = getattr(aiohttp.helpers, "is_canonical_ipv4_address", lambda _h: True)


@functools.lru_cache(maxsize=4096)  # pure in the host; every fresh request asks
def _ip_literal(host: str) -> bool | None:
    """True for an IP literal aiohttp connects to, None for one it refuses (a legacy IPv4 form such as 127.1 that
    socket would map onto an address), False for a name to resolve."""
    if not aiohttp.helpers.is_ip_address(host):
        return False
    return True if ":" in host or _canonical_ipv4(host) else None


def _request_head(method: str, url: URL, headers: Mapping[str, str], body: bytes | None, close: bool) -> bytes:
    """The request line and headers aiohttp's ClientSession (our defaults; `close`: its connector's force_close)
    writes for this request, in its order, serialised by its writer (which refuses CR and LF in a name or value)."""
    out: CIMultiDict[str] = CIMultiDict()
    out["Host"] = url.host_port_subcomponent or ""
    out["User-Agent"] = USER_AGENT  # the session's default header: a caller's own replaces it
    for key, value in headers.items():
        out[key] = value
    for key, value in _AUTO_HEADERS:
        if key not in out:
            out[key] = value
    if body is not None:
        if "Content-Length" not in out:
            out["Content-Length"] = str(len(body))
        if "Content-Type" not in out:
            out["Content-Type"] = "application/octet-stream"  # aiohttp's BytesPayload default
    elif method not in _NO_BODY and "Content-Length" not in out:
        out["Content-Length"] = "0"
    if method in _TYPED and "Content-Type" not in out:
        out["Content-Type"] = "application/octet-stream"
    if close and "Connection" not in out:
        out["Connection"] = "close"
    return _serialize_headers(f"{method} {url.raw_path_qs} HTTP/1.1", out)


def _connection_key(target: URL, tls: ssl.SSLContext) -> ConnectionKey:
    """The origin a connection serves, as aiohttp keys its pool (a trailing ".." folded as its connector does)."""
    host = target.raw_host or ""
    if host.endswith(".."):
        host = host.rstrip(".") + "."
    return ConnectionKey(host, target.port, target.scheme == "https", tls, None, None, None)


async def _exchange(protocol: ResponseHandler, method: str, target: URL, headers: Mapping[str, str],
                    body: bytes | None, timer: _Timer, *, close: bool) -> tuple[Any, StreamReader]:
    """Write the request on the connection and wait for its response's head (past any 1xx but 101): what
    ClientRequest.send and ClientResponse.start do, with the session's parser settings."""
    protocol.set_response_params(read_until_eof=True, skip_payload=method == "HEAD", auto_decompress=True,
                                 read_bufsize=2**16, max_line_size=8190, max_field_size=8190)
    transport = protocol.transport
    assert transport is not None
    head = _request_head(method, target, headers, body, close)
    transport.write(head + body if body else head)
    timer.sent = time.monotonic()
    while True:
        try:
            message, payload = await protocol.read()
        except aiohttp.http.HttpProcessingError as exc:  # as ClientResponse.start raises it
            info = RequestInfo(target, method, CIMultiDictProxy(CIMultiDict(headers)), target)
            raise aiohttp.ClientResponseError(info, (), status=exc.code, message=exc.message,
                                              headers=exc.headers) from exc
        if not 100 <= message.code <= 199 or message.code == 101:
            return message, payload


# URLs check_url accepted (a pure function of the string): each agent's card and interface URLs come back every
# probe. Bounded: cleared when full; 2**17 holds two URLs each of 50,000 agents (~15 MiB at the bound).
_CHECKED: dict[str, None] = {}
_CHECKED_MAX = 1 << 17


class HttpClient:
    """The process's HTTP client: the kept-alive pool and connections made for one request. Create it inside the
    running loop."""

    def __init__(self, *, limit: int = 100, limit_per_host: int = 8, egress: Egress | None = None) -> None:
        self.egress = egress  # set for probes of caller-chosen URLs (the SSRF guard)
        self._limit = limit
        self._limit_per_host = limit_per_host
        self._pool = _Pool(limit, limit_per_host)
        self._resolver: AbstractResolver | None = None  # made on the first name to resolve
        # at most `limit` fresh connections open at once, as the pool bounds its own (MAX_CONNECTIONS)
        self._fresh_slots = asyncio.Semaphore(limit) if limit else None

    async def _send_fresh(self, method: str, url: str, headers: Mapping[str, str], body: bytes | None,
                          tls: ssl.SSLContext, timer: _Timer) -> Answered:
        """One request on a connection made for it and closed after it, which holds one of the client's
        fresh-connection slots until it is closed."""
        target = URL(url)
        if (slots := self._fresh_slots) is not None:
            if slots.locked():  # a deadline passing here is the probe's overload (see ProbePoolFull)
                timer.queued, since = True, time.monotonic()
                try:
                    await slots.acquire()
                finally:
                    _pool_waited(since)
                timer.queued = False
            else:
                await slots.acquire()
        try:
            protocol = await self._fresh_connection(target, tls, timer)
            try:
                message, payload = await _exchange(protocol, method, target, headers, body, timer, close=True)
            except BaseException:
                protocol.close()
                raise
        except BaseException:
            if slots is not None:
                slots.release()
            raise

        def done() -> None:
            protocol.close()
            if slots is not None:
                slots.release()

        return Answered(url, protocol, message, payload, done)

    async def _send_pooled(self, method: str, url: str, headers: Mapping[str, str], body: bytes | None,
                           tls: ssl.SSLContext, timer: _Timer) -> Answered:
        """One request on a kept-alive connection of the pool (an idle one, or one made for it and kept after it).
        Both paths go through aiohttp's own layers (its resolver, ResponseHandler protocol, C response parser and
        header writer) without a ClientSession: no cookie jar, trace signals, redirect loop or timeout objects, none
        of which the probe uses. The request's bytes, the errors raised and the parser's limits are a session's
        (`tests/unit/test_http_fresh.py` holds them to one): `_guard` maps them as it mapped the session's."""
        target = URL(url)
        key = _connection_key(target, tls)
        pool = self._pool
        protocol = await pool.acquire(key, timer)
        try:
            if protocol is None:
                protocol = await self._fresh_connection(target, tls, timer)
            else:  # a failure before a byte of the answer came is retried once, fresh (`_open`)
                timer.reused = time.monotonic()
                timer.protocol, timer.received = protocol, getattr(protocol, "received", 0)
            message, payload = await _exchange(protocol, method, target, headers, body, timer, close=False)
        except BaseException:
            if protocol is not None:
                protocol.close()
            pool.release(key, None)
            raise
        return Answered(url, protocol, message, payload, functools.partial(pool.release, key, protocol))

    async def _fresh_connection(self, target: URL, tls: ssl.SSLContext, timer: _Timer) -> ResponseHandler:
        """Resolve and connect as TCPConnector's `_create_direct_connection` does, stamping conn_start/conn_end."""
        key = _connection_key(target, tls)
        host, port, secure = key.host, key.port, key.is_ssl
        timer.conn_start = time.monotonic()
        if (literal := _ip_literal(host)) is None:
            raise aiohttp.InvalidUrlClientError(host, "is not a canonical IPv4 address")
        if literal:
            found: list[tuple[str, int]] = [(host, port or 0)]
        else:
            if self._resolver is None:
                inner: AbstractResolver = DefaultResolver()
                self._resolver = _TimedResolver(inner if self.egress is None else EgressResolver(self.egress, inner))
            try:
                found = [(h["host"], h["port"]) for h in await self._resolver.resolve(
                    host, port or 0, family=socket.AF_UNSPEC)]
            except OSError as exc:
                if exc.errno is None and isinstance(exc, asyncio.TimeoutError):
                    raise
                raise _DNS_ERROR(key, exc) from exc
        if not found:
            raise _DNS_ERROR(key, OSError(f"{host} has no address"))
        addr_infos: list[Any] = [
            (socket.AF_INET6, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (h, p, 0, 0)) if ":" in h
            else (socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (h, p)) for h, p in found]
        protocol = await self._connect_fresh(asyncio.get_running_loop(), addr_infos, key,
                                             tls if secure else None, host.rstrip(".") if secure else None, timer)
        timer.conn_end = time.monotonic()
        return protocol

    @staticmethod
    async def _connect_fresh(loop: asyncio.AbstractEventLoop, addr_infos: list[Any], key: ConnectionKey,
                             context: ssl.SSLContext | None, server_hostname: str | None,
                             timer: _Timer) -> _CountingHandler:
        """TCPConnector's `_create_direct_connection` for a connection of our own: the addresses raced as
        aiohappyeyeballs does (one: a plain connect), TLS on the connected socket; an address that fails is
        dropped and the next tried; the errors aiohttp's connector raises."""
        last: Exception | None = None
        while addr_infos:
            try:
                try:
                    sock = (await _connect_one(loop, addr_infos[0]) if len(addr_infos) == 1
                            else await aiohappyeyeballs.start_connection(addr_infos, happy_eyeballs_delay=0.25,
                                                                         loop=loop))
                    if context is not None:
                        timer.tcp_end = time.monotonic()
                    transport, protocol = await loop.create_connection(
                        functools.partial(_CountingHandler, loop), sock=sock, ssl=context,
                        server_hostname=server_hostname)
                except _CERT_ERRORS as exc:
                    raise aiohttp.ClientConnectorCertificateError(key, exc) from exc
                except _SSL_ERRORS as exc:
                    raise aiohttp.ClientConnectorSSLError(key, exc) from exc
                except OSError as exc:
                    if exc.errno is None and isinstance(exc, asyncio.TimeoutError):
                        raise
                    raise aiohttp.ClientConnectorError(key, exc) from exc
            except aiohttp.ClientConnectorError as exc:
                last = exc
                aiohappyeyeballs.pop_addr_infos_interleave(addr_infos, None)
                continue
            if context is not None:
                timer.tls = protocol.tls = tls_info(transport, verified=context.verify_mode != ssl.CERT_NONE)
            return protocol
        assert last is not None
        raise last

    def _refused(self, method: str, url: str) -> TargetRefused | None:
        """The egress policy's objection to this URL (pattern, or an IP-literal host), checked before sending."""
        if self.egress is None:
            return None
        why = self.egress.url_problem(url) or self.egress.address_problem(urlsplit(url).hostname or "")
        if why is None:
            return None
        return TargetRefused(f"{method} {redact.url(url)} refused by the probe's target policy: {why}",
                             HttpExchange(method=method, url=redact.url(url)))

    async def close(self) -> None:
        self._pool.close()
        resolver, self._resolver = self._resolver, None
        if resolver is not None:
            await resolver.close()

    async def __aenter__(self) -> HttpClient:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.close()

    async def request(self, method: str, url: str, *, deadline: Deadline, headers: Mapping[str, str] | None = None,
                      body: bytes | None = None, max_bytes: int = 1 << 20,
                      allow_cross_origin_redirect: bool = False, follow_redirects: bool = True,
                      config: ClientConfig = DEFAULT_CONFIG) -> Response:
        """One exchange, redirects followed by hand; the body is read up to `max_bytes` and no further.
        The auth flow's credentials are applied per hop, for that hop's origin; one 401 may refresh them."""
        hdrs = dict(headers or {})
        redirects: list[str] = []
        hops: list[HttpExchange] = []
        crossed = refreshed = False
        current = url
        sent_at = 0.0
        while True:
            resp = await self._once(method, current, hdrs, body, deadline, max_bytes, config)
            sent_at = sent_at or resp.sent_at  # the first hop's: a refresh or a redirect is part of the call
            if (resp.status == 401 and config.auth is not None and not refreshed and not _ANONYMOUS.get()
                    and await config.auth.on_unauthorized(self, deadline)):
                refreshed = True
                hops.append(resp.exchange)
                continue
            location = resp.headers.get("Location")
            if not (follow_redirects and resp.status in (301, 302, 303, 307, 308) and location):
                resp.redirects, resp.cross_origin_redirect, resp.hops = redirects, crossed, hops
                resp.sent_at = sent_at
                return resp
            hops.append(resp.exchange)
            try:  # an agent's Location: a port past 65535 or a broken IPv6 literal raised ValueError, a probe bug
                target = urljoin(current, location)
                crossing = origin(target) != origin(current)
            except ValueError as exc:
                raise RedirectRefused(f"redirect to an invalid URL ({exc})", resp.exchange) from None
            if len(redirects) >= MAX_REDIRECTS:
                raise RedirectRefused(f"more than {MAX_REDIRECTS} redirects", resp.exchange)
            if crossing:
                if not allow_cross_origin_redirect:
                    raise RedirectRefused(
                        f"cross-origin redirect to {redact.url(target)} refused", resp.exchange)
                crossed = True
                # credentials are for the origin they were configured for, never another host
                hdrs = {k: v for k, v in hdrs.items() if not redact.is_secret_header(k)}
            redirects.append(redact.url(target))
            if resp.status == 303:
                method, body = "GET", None
            current = target

    async def _once(self, method: str, url: str, headers: Mapping[str, str], body: bytes | None,
                    deadline: Deadline, max_bytes: int, config: ClientConfig) -> Response:
        resp, exchange, timer, t0 = await self._open(method, url, headers, body, deadline, config)
        last = 0.0  # the body's last byte came (0.0: a body that failed ends when it failed)
        try:
            if resp.content.is_eof():  # the whole body came with the headers: reading it never waits
                data = _read_buffered(resp, max_bytes, exchange, method, url)
            else:
                async with _guard(deadline, exchange, "body", method, url):
                    data = await read_bounded(resp, max_bytes, exchange)
            last = _arrival(resp.protocol, "arrived", timer.headers)
            coding = resp.headers.get("Content-Encoding")
            if coding is not None and "," in coding:  # one coding aiohttp decodes itself; a list it leaves to us
                data = _decode_stacked(data, coding, max_bytes, exchange, f"{method} {redact.url(url)}")
        finally:
            done = _finish(exchange, timer, t0, last)
            resp.release()  # back to the pool when fully read; closed when not
        return Response(str(resp.url), resp.status, resp.headers, data, exchange, sent_at=t0, received_at=done)

    async def _open(self, method: str, url: str, headers: Mapping[str, str], body: bytes | None,
                    deadline: Deadline, config: ClientConfig = DEFAULT_CONFIG,
                    ) -> tuple[Answered, HttpExchange, _Timer, float]:
        """Send the request and wait for the response headers, within the deadline."""
        url = redact.strip_userinfo(url)  # userinfo (from a card or a redirect) is never sent as credentials
        t0 = time.monotonic()
        if url not in _CHECKED:
            try:
                check_url(url)  # an advertised or redirected-to URL aiohttp cannot send to is the agent's problem
            except InvalidUrl as exc:
                raise InvalidTarget(f"{method}: {exc}", HttpExchange(method=method, url="<invalid url>")) from None
            if len(_CHECKED) >= _CHECKED_MAX:
                _CHECKED.clear()
            _CHECKED[url] = None
        if (refused := self._refused(method, url)) is not None:
            raise refused
        exchange = HttpExchange(method=method, url=redact.url(url))
        if config.auth is not None:  # without a flow, with_credentials only copies the headers
            url, headers = with_credentials(url, headers, config.auth)
        tls = _watch_handshake(config.ssl) if config.ssl is not None else _default_ssl()
        timer = _Timer()
        _TIMER.set(timer)  # the resolver and the TLS handshake's observer stamp it
        resp: Answered | None = None
        try:
            async with _guard(deadline, exchange, "response headers", method, url):
                try:
                    timer.start = time.monotonic()
                    send = self._send_fresh if config.fresh else self._send_pooled
                    resp = await send(method, url, headers, body, tls, timer)
                except (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError) as exc:
                    if not timer.reused or getattr(timer.protocol, "received", 0) != timer.received:
                        raise  # a fresh connection failed, or part of the answer came: the agent's (or network's)
                    # the server closed a kept-alive connection (after its previous answer, or idle) before a
                    # byte of this response: not this request's fault (RFC 9112 §9.3.1) — retry it once, fresh
                    exchange.retried = (f"the reused connection failed before any response byte "
                                        f"({_describe(exc)}); retried once on a fresh connection")
                    timer = _Timer()
                    _TIMER.set(timer)
                    timer.start = time.monotonic()
                    resp = await self._send_fresh(method, url, headers, body, tls, timer)
                timer.headers = _arrival(resp.protocol, "head_at", timer.sent)  # the response head came
        except ConnectFailed as exc:
            _finish(exchange, timer, t0)
            if resp is not None:  # the deadline passed as the headers came: never left open
                resp.close()
            if timer.cert_requested and not isinstance(exc, TlsFailed | ClientCertRefused):
                what = "refused the TLS client certificate" if config.client_cert else (
                    "asked for a TLS client certificate (mTLS) and none is configured")
                raise ClientCertRefused(f"{method} {redact.url(url)}: the server {what}, then closed the "
                                        "connection", exchange) from None
            raise
        except WireError as exc:
            _finish(exchange, timer, t0)
            if resp is not None:
                resp.close()
            if isinstance(exc, DeadlineExceeded) and timer.queued:
                raise ProbePoolFull(f"{method} {redact.url(url)}: no connection of the probe's own came free "
                                    f"before the deadline (all {self._limit} busy, or the per-origin bound of "
                                    f"{self._limit_per_host}); the agent was not called", exchange) from None
            raise
        finally:
            _TIMER.set(None)
        # a reused connection's TLS was measured when it was made
        _fill(exchange, status=resp.status, content_type=resp.headers.get("Content-Type"),
              tls=timer.tls or getattr(resp.protocol, "tls", None))
        return resp, exchange, timer, t0

    def stream(self, method: str, url: str, *, deadline: Deadline, headers: Mapping[str, str],
               body: bytes | None, config: ClientConfig = DEFAULT_CONFIG) -> _OpenStream:
        """Open a response whose body the caller consumes incrementally (SSE); one 401 may refresh the auth.
        Used as `async with client.stream(...) as response`."""
        return _OpenStream(self, method, url, headers, body, deadline, config)

    async def _open_stream(self, method: str, url: str, headers: Mapping[str, str], body: bytes | None,
                           deadline: Deadline, config: ClientConfig) -> StreamResponse:
        resp, exchange, timer, t0 = await self._open(method, url, headers, body, deadline, config)
        if (resp.status == 401 and config.auth is not None and not _ANONYMOUS.get()
                and await config.auth.on_unauthorized(self, deadline)):
            _finish(exchange, timer, t0)
            resp.close()
            resp, exchange, timer, t0 = await self._open(method, url, headers, body, deadline, config)
        return StreamResponse(resp, exchange, timer, t0, deadline)


class _OpenStream:
    """`HttpClient.stream`'s context manager: a class, not a generator (it runs on every stream probe). On exit the
    exchange is finished and the response closed: a half-read stream's connection is never pooled (aiohttp had
    already returned a connection read to its end to the pool)."""

    __slots__ = ("_args", "_client", "_handle")

    def __init__(self, client: HttpClient, *args: Any) -> None:
        self._client = client
        self._args = args
        self._handle: StreamResponse | None = None

    async def __aenter__(self) -> StreamResponse:
        self._handle = await self._client._open_stream(*self._args)
        return self._handle

    async def __aexit__(self, *_exc: object) -> None:
        handle = self._handle
        if handle is not None:
            handle.finish()
            handle.resp.close()


class StreamResponse:
    def __init__(self, resp: Answered, exchange: HttpExchange, timer: _Timer, t0: float,
                 deadline: Deadline) -> None:
        self.resp = resp
        self.exchange = exchange
        self._timer = timer
        self._t0 = t0
        self._deadline = deadline
        self.waits = 0  # reads that waited for the network (the loop ran other work meanwhile)

    @property
    def status(self) -> int:
        return self.resp.status

    @property
    def content_type(self) -> str:
        return self.resp.headers.get("Content-Type", "")

    def chunks(self) -> AsyncIterator[bytes]:
        """Body chunks as they arrive (decoded); raises DeadlineExceeded when the deadline passes mid-stream."""
        coding = self.resp.headers.get("Content-Encoding")
        if coding is not None and "," in coding:  # one coding aiohttp decodes itself; a list it leaves to us
            return _decoded_stream(self._chunks(), coding, self.exchange)
        return self._chunks()

    async def _chunks(self) -> AsyncIterator[bytes]:
        """The body's chunks as aiohttp has them. What aiohttp already holds is taken without a timer (nothing can
        wait: the same bytes `readany` would return, the same errors it would raise); only a read that waits for
        the network is bounded by the deadline."""
        content = self.resp.content
        while True:
            try:
                chunk = content.read_nowait(-1)  # never waits: b"" when nothing is buffered
            except Exception as exc:
                if (err := _translate(exc, "the stream", self.exchange)) is None:
                    raise
                raise err from None
            if not chunk:
                if content.at_eof():
                    return
                self.waits += 1
                async with _guard(self._deadline, self.exchange, "the stream"):
                    chunk = await content.readany()
                if not chunk:
                    return
            yield chunk

    def at_eof(self) -> bool:
        """The body is read to its end: `chunks` has nothing left to give and nothing to wait for. False for a body
        whose codings the probe undoes (`_decoded_stream`), whose decoder may still hold pieces to give."""
        coding = self.resp.headers.get("Content-Encoding")
        return (coding is None or "," not in coding) and self.resp.content.at_eof()

    async def read_body(self, max_bytes: int) -> bytes:
        async with _guard(self._deadline, self.exchange, "the body"):
            return await read_bounded(self.resp, max_bytes, self.exchange)

    def ended_at(self) -> float:
        """When the body's end (its last bytes, or the close that ended it) reached the event loop, on the monotonic
        clock; 0.0 while the body is not read to its end."""
        if not self.resp.content.at_eof():
            return 0.0
        return _arrival(self.resp.protocol, "arrived", self._timer.headers)

    def finish(self) -> None:
        _finish(self.exchange, self._timer, self._t0, self.ended_at())


class _guard:  # a lower-case name: used as `async with _guard(...)`, like the function it replaced
    """Bound an await by the deadline and turn transport errors into WireErrors that carry the exchange.

    A class rather than a generator context manager (it runs at least twice a request); the text naming what
    was awaited is only built when something failed: `what` alone, or `method url: what` when a URL is given
    (redacted then, never on the way)."""

    __slots__ = ("_deadline", "_exchange", "_method", "_timeout", "_url", "_what")

    def __init__(self, deadline: Deadline, exchange: HttpExchange, what: str, method: str = "",
                 url: str | None = None) -> None:
        self._deadline = deadline
        self._exchange = exchange
        self._what = what
        self._method = method
        self._url = url

    def _text(self) -> str:
        return self._what if self._url is None else f"{self._method} {redact.url(self._url)}: {self._what}"

    async def __aenter__(self) -> None:
        self._timeout = asyncio.timeout(self._deadline.remaining())
        await self._timeout.__aenter__()

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: object) -> None:
        try:
            await self._timeout.__aexit__(exc_type, exc, tb)  # type: ignore[arg-type]
        except TimeoutError:
            raise DeadlineExceeded(f"{self._text()}: not complete before the deadline", self._exchange) from None
        if exc is not None and (err := _translate(exc, self._text(), self._exchange)) is not None:
            raise err from None


def _translate(exc: BaseException, what: str, exchange: HttpExchange) -> WireError | None:
    """The WireError for an exception out of aiohttp (None: not a transport error, let it pass)."""
    if isinstance(exc, TimeoutError):
        return DeadlineExceeded(f"{what}: not complete before the deadline", exchange)
    if isinstance(exc, aiohttp.ClientConnectorCertificateError):
        return TlsFailed(f"{what}: the TLS certificate did not verify: {exc.certificate_error}", exchange)
    if isinstance(exc, aiohttp.ClientSSLError):
        cause = _describe_ssl(exc)
        if "certificate required" in cause or "bad certificate" in cause or "unknown ca" in cause:
            return ClientCertRefused(f"{what}: the server refused the TLS client certificate ({cause})", exchange)
        if any(words in cause for words in _NOT_TLS):  # the server answered the ClientHello in plain text
            return ConnectFailed(f"{what}: the server there does not speak TLS (handshake: {cause}): the URL says "
                                 "https:// for a plain-HTTP listener; use http://, or terminate TLS there (a gateway "
                                 "that rewrites the card's scheme, or trusts X-Forwarded-Proto, advertises https)",
                                 exchange)
        return TlsFailed(f"{what}: TLS handshake failed: {cause}", exchange)
    if isinstance(exc, aiohttp.ClientError):
        if isinstance(exc, aiohttp.ClientOSError) and _refused_client_cert(exc):
            return ClientCertRefused(f"{what}: the server refused the TLS client certificate ({_describe(exc)})",
                                     exchange)
        return _wire_error(exc, what, exchange)
    return None


def _wire_error(exc: aiohttp.ClientError, what: str, exchange: HttpExchange) -> WireError:
    """Name what the wire did: a refused address, broken HTTP framing, a reset mid-body, or no connection."""
    if (refused := egress.describe(exc)) is not None:
        return TargetRefused(f"{what}: refused by the probe's target policy: {refused}", exchange)
    if _out_of_files(exc):
        return ProbeOutOfFiles(f"{what}: the probe is out of file descriptors ({_describe(exc)}); the agent was "
                               "not reached", exchange)
    if isinstance(exc, aiohttp.ClientPayloadError):
        if _was_reset(exc):
            return ConnectionReset(f"{what}: the connection was reset (TCP RST) before the body was complete",
                                   exchange)
        if "Not enough data" in str(exc):
            return ConnectionReset(f"{what}: the server closed the connection before the body was complete "
                                   f"({_seen(exc.__cause__ or exc)})", exchange)
        return ProtocolError(f"{what}: invalid HTTP body framing: {_seen(exc.__cause__ or exc)}", exchange)
    if (isinstance(exc, aiohttp.ClientResponseError) and exc.__cause__ is not None
            and (named := _CODING_NAMED.search(str(exc.__cause__))) is not None):
        # aiohttp's own words ("Please install `Brotli`") read as the probe's fault; it offered only _OFFERED
        return ProtocolError(f"{what}: the body is in Content-Encoding {named[1]}, which the probe did not offer "
                             f"(Accept-Encoding: {_OFFERED})", exchange)
    if isinstance(exc, aiohttp.ClientResponseError) and exc.__cause__ is not None:
        # aiohttp's parser error (bad status line, too many or too long headers, bad chunk size) is the cause;
        # the ClientResponseError's own "400" is aiohttp's, the server never sent it
        return ProtocolError(f"{what}: not valid HTTP: {_seen(exc.__cause__)}", exchange)
    return ConnectFailed(f"{what}: {_describe(exc)}", exchange)


def _was_reset(exc: BaseException) -> bool:
    seen: set[int] = set()
    e: BaseException | None = exc
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if isinstance(e, ConnectionResetError) or "ConnectionResetError" in str(e):
            return True
        e = e.__cause__ or e.__context__
    return False


def _seen(exc: BaseException) -> str:
    """aiohttp's parser message on one line, without its caret marker, bounded."""
    text = getattr(exc, "message", None) or str(exc)
    if not isinstance(text, str):
        text = str(exc)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and set(ln.strip()) != {"^"}]
    return " ".join(lines)[:300] or type(exc).__name__


# what a gateway's or proxy's own error status means when it comes without an A2A body (RFC 9110 §15.6.3, §15.6.5:
# 502 and 504 are a gateway's own words about its upstream; 413 and 431 (RFC 6585 §5) refuse the request's size)
GATEWAY_STATUSES = {
    502: "a gateway in front of the agent could not get an answer from it (upstream down, refused or reset)",
    503: "a gateway in front of the agent has no available upstream for this route (or sheds load)",
    504: "a gateway in front of the agent gave up waiting for it (the agent was slower than the gateway's read "
         "timeout, e.g. nginx proxy_read_timeout)",
    413: "the request body is over a size limit on the way to the agent (e.g. nginx client_max_body_size)",
    431: "the request's headers are over a size limit on the way to the agent (e.g. nginx "
         "large_client_header_buffers; a long Authorization token is the usual one)",
}


def gateway_problem(status: int | None, snippet_text: str) -> str | None:
    """Why an HTTP error answered without an A2A body is a gateway's own page, or None. A 400 counts only with
    the header-size words nginx uses for it ("Request Header Or Cookie Too Large")."""
    if status in GATEWAY_STATUSES:
        return GATEWAY_STATUSES[status]
    text = snippet_text.lower()
    if status == 400 and "header" in text and "too large" in text:
        return GATEWAY_STATUSES[431]
    return None


# OpenSSL's words for a plain-text answer to a ClientHello ("HTTP/1.1 400 …" read as a TLS record): no certificate
# was ever offered, so this is not a certificate fault but the wrong scheme for the port
_NOT_TLS = ("wrong version number", "packet length too long", "record layer failure")


def _describe_ssl(exc: aiohttp.ClientSSLError) -> str:
    inner = getattr(exc, "os_error", None) or exc
    return str(getattr(inner, "reason", None) or inner).lower().replace("_", " ")


def _refused_client_cert(exc: aiohttp.ClientOSError) -> bool:
    # TLS 1.3: the client's handshake ends before the server checks the client certificate, so the refusal
    # (alert 116 certificate_required, or 42 bad_certificate) arrives as an SSLError on the first read
    inner: BaseException | None = exc
    while inner is not None:
        if isinstance(inner, ssl.SSLError):
            text = f"{inner.reason} {inner}".lower()
            return any(w in text for w in ("certificate required", "certificate_required", "bad certificate",
                                           "bad_certificate", "unknown ca", "unknown_ca"))
        inner = inner.__cause__ or inner.__context__
    return "certificate" in str(exc).lower() and "alert" in str(exc).lower()


async def read_bounded(resp: Answered, max_bytes: int, exchange: HttpExchange) -> bytes:
    """Read at most `max_bytes`; abort (never buffer more) when the body is larger."""
    declared = resp.content_length
    if declared is not None and declared > max_bytes:
        raise BodyTooLarge(f"body of {declared} bytes exceeds the {max_bytes}-byte limit", exchange)
    content = resp.content
    chunk = await content.read(65536)
    if content.at_eof() and len(chunk) <= max_bytes:
        return chunk  # the usual small body, in one piece
    buf = bytearray(chunk)
    while True:
        if len(buf) > max_bytes:
            raise BodyTooLarge(f"body exceeds the {max_bytes}-byte limit", exchange)
        chunk = await content.read(65536)
        if not chunk:
            return bytes(buf)
        buf += chunk


def _read_buffered(resp: Answered, max_bytes: int, exchange: HttpExchange, method: str,
                   url: str) -> bytes:
    """read_bounded of a body aiohttp already holds in full (its parser is done: `is_eof`), in one read without a
    coroutine or a timer (nothing can wait); the same limit and errors as read_bounded under `_guard` (a framing
    error or a reset the parser saw is raised by the read)."""
    declared = resp.content_length
    if declared is not None and declared > max_bytes:
        raise BodyTooLarge(f"body of {declared} bytes exceeds the {max_bytes}-byte limit", exchange)
    try:
        data = resp.content.read_nowait(-1)
    except Exception as exc:
        if (err := _translate(exc, f"{method} {redact.url(url)}: body", exchange)) is None:
            raise
        raise err from None
    if len(data) > max_bytes:
        raise BodyTooLarge(f"body exceeds the {max_bytes}-byte limit", exchange)
    return data


# RFC 9110 §8.4: the codings in the order they were applied, decoded in reverse (as httpx, the a2a-sdk's client,
# and undici do); aiohttp decodes a single coding only. The ones the probe offers (aiohttp's Accept-Encoding).
_ZLIB_WBITS = {"gzip": 31, "x-gzip": 31, "deflate": 15}
_OFFERED = "gzip, deflate"
_CODING_NAMED = re.compile(r"Can not decode content-encoding: \S+ \(([\w-]+)\)")  # aiohttp's (C or Python parser)


def _decode_stacked(data: bytes, coding: str, max_bytes: int, exchange: HttpExchange, what: str) -> bytes:
    """`data` with every listed coding undone, never more than `max_bytes` out of any layer."""
    codings = [c for c in (part.strip().lower() for part in coding.split(",")) if c and c != "identity"]
    unknown = [c for c in codings if c not in _ZLIB_WBITS]
    if unknown:
        raise ProtocolError(f"{what}: body in Content-Encoding {coding!r}: {', '.join(unknown)} is not a coding the "
                            f"probe offered (Accept-Encoding: {_OFFERED})", exchange)
    for c in reversed(codings):
        wbits = _ZLIB_WBITS[c]
        if c == "deflate" and data[:1] and data[0] & 0x0F != 8:
            wbits = -15  # raw deflate without the zlib header, as aiohttp (and browsers) accept
        d = zlib.decompressobj(wbits)
        try:
            out = d.decompress(data, max_bytes + 1)
        except zlib.error as exc:
            raise ProtocolError(f"{what}: body in Content-Encoding {coding!r}: invalid {c} data ({exc})",
                                exchange) from None
        if len(out) > max_bytes:
            raise BodyTooLarge(f"body exceeds the {max_bytes}-byte limit (decompressed)", exchange)
        if not d.eof:
            raise ProtocolError(f"{what}: body in Content-Encoding {coding!r}: the {c} data ends early", exchange)
        data = out
    return data


_PIECE = 64 * 1024  # a stream's decoded output, at most this much at a time from each layer


async def _decoded_stream(chunks: AsyncIterator[bytes], coding: str, exchange: HttpExchange,
                          ) -> AsyncIterator[bytes]:
    """A stream with a list of codings undone as it arrives (`_decode_stacked`'s rules). Each layer gives its output
    in pieces of at most _PIECE bytes, so a bomb is stopped by the stream's own bounds (its bytes, an event's size),
    never inflated whole."""
    codings = [c for c in (part.strip().lower() for part in coding.split(",")) if c and c != "identity"]
    if unknown := [c for c in codings if c not in _ZLIB_WBITS]:
        raise ProtocolError(f"the stream: body in Content-Encoding {coding!r}: {', '.join(unknown)} is not a coding "
                            f"the probe offered (Accept-Encoding: {_OFFERED})", exchange)
    layers: list[Any] = [None] * len(codings)  # the decompressor of each coding, outermost first, made on its data
    order = codings[::-1]

    def through(i: int, data: bytes) -> Iterator[bytes]:
        if i == len(order):
            yield data
            return
        d = layers[i]
        if d is None:
            wbits = _ZLIB_WBITS[order[i]]
            if order[i] == "deflate" and data[0] & 0x0F != 8:
                wbits = -15  # raw deflate without the zlib header, as aiohttp (and browsers) accept
            d = layers[i] = zlib.decompressobj(wbits)
        try:
            while data:
                out = d.decompress(data, _PIECE)
                data = d.unconsumed_tail
                if out:
                    yield from through(i + 1, out)
        except zlib.error as exc:
            raise ProtocolError(f"the stream: body in Content-Encoding {coding!r}: invalid {order[i]} data ({exc})",
                                exchange) from None

    async for chunk in chunks:
        if chunk:
            for piece in through(0, chunk):
                yield piece
    for c, d in zip(order, layers, strict=True):
        if d is None or not d.eof:
            raise ProtocolError(f"the stream: body in Content-Encoding {coding!r}: the {c} data ends early", exchange)


def _finish(exchange: HttpExchange, timer: _Timer, t0: float, done: float = 0.0) -> float:
    """Close the exchange's timing at `done` (the answer's last byte came; 0.0: now); returns it."""
    done = done or time.monotonic()
    _fill(exchange, phases=timer.phases(done), duration_s=done - t0)
    return done


def _fill(exchange: HttpExchange, **values: Any) -> None:
    """Set fields of an exchange as pydantic's `__setattr__` does (the record has no validate_assignment: the
    value and the fields-set), in one step instead of one Python-level call per field."""
    exchange.__dict__.update(values)
    exchange.__pydantic_fields_set__.update(values)


OWN_ERRNOS = _OWN_ERRNOS = frozenset({errno.EMFILE, errno.ENFILE})  # the probe's own: out of descriptors


def _out_of_files(exc: BaseException) -> bool:
    """EMFILE/ENFILE anywhere in the error's chain (aiohttp wraps the socket's OSError once or twice); for a failed
    name lookup, whether the process can open a descriptor now (glibc's getaddrinfo says EAI_NONAME, "Name or
    service not known", when it cannot open /etc/hosts or a resolver socket: the errno is lost)."""
    seen: BaseException | None = exc
    for _ in range(4):
        if seen is None:
            break
        if isinstance(seen, OSError) and seen.errno in _OWN_ERRNOS:
            return True
        if isinstance(seen, aiohttp.ClientConnectorError) and seen.os_error.errno in _OWN_ERRNOS:
            return True
        seen = seen.__cause__ or seen.__context__
    return isinstance(exc, aiohttp.ClientConnectorDNSError) and out_of_descriptors()


def out_of_descriptors() -> bool:
    """The process (EMFILE) or the host (ENFILE) has no file descriptor free right now. Asked only after a failure
    whose cause is lost (a name lookup, gRPC's UNAVAILABLE): what an agent answered cannot make it true."""
    try:
        os.close(os.open(os.devnull, os.O_RDONLY))
    except OSError as exc:
        return exc.errno in _OWN_ERRNOS
    return False


def _describe(exc: BaseException) -> str:
    if isinstance(exc, aiohttp.ClientConnectorError):
        return f"cannot connect to {exc.host}:{exc.port} ({exc.os_error.strerror or exc.os_error})"
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return "server closed the connection"
    if isinstance(exc, aiohttp.InvalidURL):
        return f"invalid URL {redact.url(str(exc.url))}"
    return type(exc).__name__ + (f": {exc}" if str(exc) else "")
