"""One shared aiohttp session per process, with per-phase timings, bounded reads and hard deadlines.

Every exchange records an `HttpExchange` (status, content type, phase timings) so the engine can
report exactly what the wire did. Redirects are followed by hand: same-origin ones up to a bound,
cross-origin ones refused unless allowed, and then never with credentials.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any
from urllib.parse import urljoin, urlsplit

import aiohttp
from aiohttp.abc import AbstractResolver
from aiohttp.resolver import DefaultResolver
from multidict import CIMultiDictProxy

from probe import __version__, redact
from probe.results import HttpExchange, HttpPhases
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
    """Filled by the trace hooks of one request."""

    start: float = 0.0
    dns_start: float = 0.0
    dns_end: float = 0.0
    conn_start: float = 0.0
    conn_end: float = 0.0
    sent: float = 0.0
    headers: float = 0.0
    reused: float = 0.0  # set when the request went out on a pooled (kept-alive) connection

    def phases(self, done: float) -> HttpPhases:
        resolve = max(0.0, self.dns_end - self.dns_start)
        # aiohttp resolves inside connection creation; report the connect phase without DNS
        connect = max(0.0, self.conn_end - self.conn_start - resolve)
        sent = self.sent or self.conn_end or self.start
        processing = max(0.0, self.headers - sent) if self.headers else 0.0
        transfer = max(0.0, done - self.headers) if self.headers else 0.0
        return HttpPhases(resolve=resolve, connect=connect, processing=processing, transfer=transfer)


def _hook(attr: str) -> Any:
    async def hook(_session: aiohttp.ClientSession, ctx: SimpleNamespace, _params: object) -> None:
        timer = ctx.trace_request_ctx
        if isinstance(timer, _Timer) and not getattr(timer, attr):
            setattr(timer, attr, time.monotonic())

    return hook


def _trace_config() -> aiohttp.TraceConfig:
    tc = aiohttp.TraceConfig()
    tc.on_request_start.append(_hook("start"))
    tc.on_dns_resolvehost_start.append(_hook("dns_start"))
    tc.on_dns_resolvehost_end.append(_hook("dns_end"))
    tc.on_connection_create_start.append(_hook("conn_start"))
    tc.on_connection_create_end.append(_hook("conn_end"))
    tc.on_request_headers_sent.append(_hook("sent"))
    tc.on_request_end.append(_hook("headers"))
    tc.on_connection_reuseconn.append(_hook("reused"))
    return tc


def origin(url: str) -> tuple[str, str, int | None]:
    p = urlsplit(url)
    port = p.port or {"http": 80, "https": 443}.get(p.scheme)
    return (p.scheme.lower(), (p.hostname or "").lower(), port)


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

    @property
    def exchanges(self) -> list[HttpExchange]:
        return [*self.hops, self.exchange]

    @property
    def content_type(self) -> str:
        return self.headers.get("Content-Type", "")


class HttpClient:
    """Owns the process's single ClientSession; create it inside the running loop."""

    def __init__(self, *, limit: int = 100, limit_per_host: int = 8, egress: Egress | None = None) -> None:
        self.egress = egress  # set for probes of caller-chosen URLs (the SSRF guard)
        self._session: aiohttp.ClientSession | None = None
        self._fresh: aiohttp.ClientSession | None = None
        self._limit = limit
        self._limit_per_host = limit_per_host

    def _new_session(self, connector: aiohttp.TCPConnector) -> aiohttp.ClientSession:
        return aiohttp.ClientSession(
            connector=connector, trace_configs=[_trace_config()], auto_decompress=True,
            headers={"User-Agent": USER_AGENT}, timeout=aiohttp.ClientTimeout(total=None),
            cookie_jar=aiohttp.DummyCookieJar(),  # never carry state between probes or agents
        )

    @property
    def session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            # a response with `Connection: close` is never pooled: aiohttp closes that connection after it
            self._session = self._new_session(aiohttp.TCPConnector(
                limit=self._limit, limit_per_host=self._limit_per_host, keepalive_timeout=30, ttl_dns_cache=60,
                resolver=self._resolver()))
        return self._session

    @property
    def fresh(self) -> aiohttp.ClientSession:
        """A session that opens a new connection for every request and never pools it: the one retry's."""
        if self._fresh is None or self._fresh.closed:
            self._fresh = self._new_session(aiohttp.TCPConnector(limit=self._limit, force_close=True,
                                                                 ttl_dns_cache=60, resolver=self._resolver()))
        return self._fresh

    def _resolver(self) -> AbstractResolver | None:
        return None if self.egress is None else EgressResolver(self.egress, DefaultResolver())

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
        for session in (self._session, self._fresh):
            if session is not None:
                await session.close()
        self._session = self._fresh = None

    async def __aenter__(self) -> HttpClient:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.close()

    async def request(self, method: str, url: str, *, deadline: Deadline, headers: Mapping[str, str] | None = None,
                      body: bytes | None = None, max_bytes: int = 1 << 20,
                      allow_cross_origin_redirect: bool = False, follow_redirects: bool = True) -> Response:
        """One exchange, redirects followed by hand; the body is read up to `max_bytes` and no further."""
        hdrs = dict(headers or {})
        redirects: list[str] = []
        hops: list[HttpExchange] = []
        crossed = False
        current = url
        while True:
            resp = await self._once(method, current, hdrs, body, deadline, max_bytes)
            location = resp.headers.get("Location")
            if not (follow_redirects and resp.status in (301, 302, 303, 307, 308) and location):
                resp.redirects, resp.cross_origin_redirect, resp.hops = redirects, crossed, hops
                return resp
            hops.append(resp.exchange)
            target = urljoin(current, location)
            if len(redirects) >= MAX_REDIRECTS:
                raise RedirectRefused(f"more than {MAX_REDIRECTS} redirects", resp.exchange)
            if origin(target) != origin(current):
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
                    deadline: Deadline, max_bytes: int) -> Response:
        resp, exchange, timer, t0 = await self._open(method, url, headers, body, deadline)
        try:
            async with _guard(deadline, exchange, f"{method} {redact.url(url)}: body"):
                data = await read_bounded(resp, max_bytes, exchange)
        finally:
            _finish(exchange, timer, t0)
            resp.release()  # back to the pool when fully read; closed when not
        return Response(str(resp.url), resp.status, resp.headers, data, exchange)

    async def _open(self, method: str, url: str, headers: Mapping[str, str], body: bytes | None,
                    deadline: Deadline) -> tuple[aiohttp.ClientResponse, HttpExchange, _Timer, float]:
        """Send the request and wait for the response headers, within the deadline."""
        url = redact.strip_userinfo(url)  # userinfo (from a card or a redirect) is never sent as credentials
        timer = _Timer()
        t0 = time.monotonic()
        try:
            check_url(url)  # an advertised or redirected-to URL aiohttp cannot send to is the agent's problem
        except InvalidUrl as exc:
            raise InvalidTarget(f"{method}: {exc}", HttpExchange(method=method, url="<invalid url>")) from None
        if (refused := self._refused(method, url)) is not None:
            raise refused
        exchange = HttpExchange(method=method, url=redact.url(url))
        try:
            async with _guard(deadline, exchange, f"{method} {redact.url(url)}: response headers"):
                try:
                    resp = await self.session.request(method, url, headers=headers, data=body,
                                                      allow_redirects=False, trace_request_ctx=timer)
                except (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError) as exc:
                    if not timer.reused:
                        raise  # a fresh connection failed: that is the agent's (or the network's) doing
                    # the server closed a kept-alive connection (after its previous answer, or idle) before a
                    # byte of this response: not this request's fault (RFC 9112 §9.3.1) — retry it once, fresh
                    exchange.retried = (f"the reused connection failed before any response byte "
                                        f"({_describe(exc)}); retried once on a fresh connection")
                    timer = _Timer()
                    resp = await self.fresh.request(method, url, headers=headers, data=body,
                                                    allow_redirects=False, trace_request_ctx=timer)
        except WireError:
            _finish(exchange, timer, t0)
            raise
        exchange.status = resp.status
        exchange.content_type = resp.headers.get("Content-Type")
        return resp, exchange, timer, t0

    @asynccontextmanager
    async def stream(self, method: str, url: str, *, deadline: Deadline, headers: Mapping[str, str],
                     body: bytes | None) -> AsyncIterator[StreamResponse]:
        """Open a response whose body the caller consumes incrementally (SSE)."""
        resp, exchange, timer, t0 = await self._open(method, url, headers, body, deadline)
        handle = StreamResponse(resp, exchange, timer, t0, deadline)
        try:
            yield handle
        finally:
            handle.finish()
            # close (never pool) the connection: a half-read stream must not be reused
            resp.close()


class StreamResponse:
    def __init__(self, resp: aiohttp.ClientResponse, exchange: HttpExchange, timer: _Timer, t0: float,
                 deadline: Deadline) -> None:
        self.resp = resp
        self.exchange = exchange
        self._timer = timer
        self._t0 = t0
        self._deadline = deadline

    @property
    def status(self) -> int:
        return self.resp.status

    @property
    def content_type(self) -> str:
        return self.resp.headers.get("Content-Type", "")

    async def chunks(self) -> AsyncIterator[bytes]:
        """Body chunks as they arrive; raises DeadlineExceeded when the deadline passes mid-stream."""
        while True:
            async with _guard(self._deadline, self.exchange, "the stream"):
                chunk = await self.resp.content.readany()
            if not chunk:
                return
            yield chunk

    async def read_body(self, max_bytes: int) -> bytes:
        async with _guard(self._deadline, self.exchange, "the body"):
            return await read_bounded(self.resp, max_bytes, self.exchange)

    def finish(self) -> None:
        _finish(self.exchange, self._timer, self._t0)


@asynccontextmanager
async def _guard(deadline: Deadline, exchange: HttpExchange, what: str) -> AsyncIterator[None]:
    """Bound an await by the deadline and turn transport errors into WireErrors that carry the exchange."""
    try:
        async with asyncio.timeout(deadline.remaining()):
            yield
    except TimeoutError:
        raise DeadlineExceeded(f"{what}: not complete before the deadline", exchange) from None
    except aiohttp.ClientError as exc:
        raise _wire_error(exc, what, exchange) from None


def _wire_error(exc: aiohttp.ClientError, what: str, exchange: HttpExchange) -> WireError:
    """Name what the wire did: a refused address, broken HTTP framing, a reset mid-body, or no connection."""
    if (refused := egress.describe(exc)) is not None:
        return TargetRefused(f"{what}: refused by the probe's target policy: {refused}", exchange)
    if isinstance(exc, aiohttp.ClientPayloadError):
        if _was_reset(exc):
            return ConnectionReset(f"{what}: the connection was reset (TCP RST) before the body was complete",
                                   exchange)
        if "Not enough data" in str(exc):
            return ConnectionReset(f"{what}: the server closed the connection before the body was complete "
                                   f"({_seen(exc.__cause__ or exc)})", exchange)
        return ProtocolError(f"{what}: invalid HTTP body framing: {_seen(exc.__cause__ or exc)}", exchange)
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


async def read_bounded(resp: aiohttp.ClientResponse, max_bytes: int, exchange: HttpExchange) -> bytes:
    """Read at most `max_bytes`; abort (never buffer more) when the body is larger."""
    declared = resp.content_length
    if declared is not None and declared > max_bytes:
        raise BodyTooLarge(f"body of {declared} bytes exceeds the {max_bytes}-byte limit", exchange)
    buf = bytearray()
    while True:
        chunk = await resp.content.read(65536)
        if not chunk:
            return bytes(buf)
        buf += chunk
        if len(buf) > max_bytes:
            raise BodyTooLarge(f"body exceeds the {max_bytes}-byte limit", exchange)


def _finish(exchange: HttpExchange, timer: _Timer, t0: float) -> None:
    done = time.monotonic()
    exchange.phases = timer.phases(done)
    exchange.duration_s = done - t0


def _describe(exc: BaseException) -> str:
    if isinstance(exc, aiohttp.ClientConnectorError):
        return f"cannot connect to {exc.host}:{exc.port} ({exc.os_error.strerror or exc.os_error})"
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return "server closed the connection"
    if isinstance(exc, aiohttp.InvalidURL):
        return f"invalid URL {redact.url(str(exc.url))}"
    return type(exc).__name__ + (f": {exc}" if str(exc) else "")
