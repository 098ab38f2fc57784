"""Who may use the daemon's web endpoints, and how often they may make it probe.

- `WebAuth`: optional bearer or basic authentication of every endpoint but /healthz and /readyz
  (kubelet probes), the expected credential read from a secret file (re-read when it changes, so a
  rotated Secret needs no restart) and registered with the redaction.
- `ProbeThrottle`: /probe runs one agent (or target) at most once per interval; callers in between,
  and concurrent callers, share that run, so scrapes cannot be turned into a flood against an agent.
- `tls_context`: optional TLS for the listener.
- `GuardedRunner`: at most `max_connections` open connections to the web server (a connection over it is
  answered 503 and closed at once, never queued), and a deadline for a new connection's request headers
  (slowloris) and, on TLS, for its handshake (counted from accept: `_TlsGate`); idle keep-alive connections close
  after `keepalive_timeout`. A flood of idle callers would otherwise hold the file descriptors the probe needs for
  its own connections to agents.
"""

from __future__ import annotations

import asyncio
import base64
import hmac
import resource
import ssl
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Generic, TypeVar

from aiohttp import web, web_protocol

from probe import redact
from probe.config import ConfigError

OPEN_PATHS = frozenset({"/healthz", "/readyz"})  # liveness and readiness stay open for the kubelet
T = TypeVar("T")


class WebAuthError(ConfigError):
    pass


class WebAuth:
    def __init__(self, bearer_file: Path | None, basic_file: Path | None) -> None:
        if bearer_file is not None and basic_file is not None:
            raise WebAuthError("set only one of web_auth_bearer_file and web_auth_basic_file")
        self.scheme = "Bearer" if bearer_file is not None else "Basic"
        self._file = bearer_file or basic_file
        self._stamp: tuple[int, int] | None = None
        self._expected = b""
        if self._file is not None:
            self._load()  # a missing or empty file fails at start, not on the first request

    @property
    def enabled(self) -> bool:
        return self._file is not None

    def _load(self) -> None:
        assert self._file is not None
        try:
            st = self._file.stat()
            if self._stamp == (st.st_mtime_ns, st.st_size):
                return
            value = self._file.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise WebAuthError(f"cannot read web auth file {self._file}: {exc.strerror}") from None
        if len(value) < 8 or (self.scheme == "Basic" and ":" not in value):
            raise WebAuthError(f"web auth file {self._file}: expected "
                               + ("user:password" if self.scheme == "Basic" else "a token") + " of 8+ characters")
        redact.register(value)
        if self.scheme == "Basic":
            encoded = base64.b64encode(value.encode()).decode()
            redact.register(f"Basic {encoded}")
            self._expected = f"Basic {encoded}".encode()
        else:
            self._expected = f"Bearer {value}".encode()
        self._stamp = (st.st_mtime_ns, st.st_size)

    def allows(self, authorization: str) -> bool:
        try:
            self._load()
        except WebAuthError:
            return False  # the file vanished mid-run: refuse rather than open up
        return hmac.compare_digest(authorization.strip().encode(), self._expected)

    def challenge(self) -> str:
        return f'{self.scheme} realm="a2a-probe"'


class ProbeThrottle(Generic[T]):
    """At most one run per key per `min_interval`; the keys are bounded (target URLs are caller-chosen)."""

    def __init__(self, min_interval: float, max_keys: int = 1024) -> None:
        self.min_interval = min_interval
        self.max_keys = max_keys
        self._last: OrderedDict[str, tuple[float, T]] = OrderedDict()
        self._running: dict[str, asyncio.Future[T]] = {}

    async def run(self, key: str, fn: Callable[[], Awaitable[T]]) -> tuple[T, bool]:
        """(result, shared): a fresh run, or the last/ongoing one when it is recent enough."""
        hit = self._last.get(key)
        if hit is not None and time.monotonic() - hit[0] < self.min_interval:
            return hit[1], True
        running = self._running.get(key)
        if running is not None:
            return await asyncio.shield(running), True
        task: asyncio.Future[T] = asyncio.ensure_future(fn())
        self._running[key] = task
        task.add_done_callback(lambda t: self._done(key, t))
        return await asyncio.shield(task), False  # a caller that goes away does not cancel the others' run

    def _done(self, key: str, task: asyncio.Future[T]) -> None:
        self._running.pop(key, None)
        if task.cancelled() or task.exception() is not None:
            return
        self._last.pop(key, None)
        self._last[key] = (time.monotonic(), task.result())
        while len(self._last) > self.max_keys:
            self._last.popitem(last=False)


def tls_context(cert_file: Path | None, key_file: Path | None) -> ssl.SSLContext | None:
    if cert_file is None and key_file is None:
        return None
    if cert_file is None or key_file is None:
        raise WebAuthError("TLS needs both web_tls_cert_file and web_tls_key_file")
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        ctx.load_cert_chain(cert_file, key_file)
    except (OSError, ssl.SSLError) as exc:
        raise WebAuthError(f"cannot load the listener's TLS certificate/key: {exc}") from None
    return ctx


CONNECTIONS_DEFAULT = 256
_BUSY = (b"HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nRetry-After: 1\r\n"
         b"Content-Type: text/plain\r\nContent-Length: 37\r\n\r\ntoo many connections to the a2a-probe\n")


def connection_limit(configured: int | None) -> int:
    """The setting, or 256 capped at a quarter of the open-file limit: the rest is the probe's own sockets."""
    if configured is not None:
        return configured
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return CONNECTIONS_DEFAULT if soft == resource.RLIM_INFINITY else max(8, min(CONNECTIONS_DEFAULT, soft // 4))


class _GuardedServer(web.Server):
    """aiohttp's low-level server, with the connection cap and the header deadline (see the module doc)."""

    def __init__(self, *args: Any, max_connections: int, header_timeout: float,
                 refused: Callable[[str], None], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.max_connections = max_connections
        self.header_timeout = header_timeout
        self._refused = refused
        self._open: set[web_protocol.RequestHandler] = set()  # counted from connect to connection_lost
        self._handshakes: set[_TlsGate] = set()  # TLS connections accepted, their handshake not done
        self._waiting: dict[web_protocol.RequestHandler, asyncio.TimerHandle] = {}
        inner = self.request_factory

        def request_factory(message: Any, payload: Any, protocol: web_protocol.RequestHandler, writer: Any,
                            task: Any) -> web.BaseRequest:
            # called once the request line and headers are complete: the first request arrived in time
            if (timer := self._waiting.pop(protocol, None)) is not None:
                timer.cancel()
            return inner(message, payload, protocol, writer, task)

        self.request_factory = request_factory

    @property
    def open_connections(self) -> int:
        return len(self._open) + len(self._handshakes)

    def full(self) -> bool:
        return len(self._open) + len(self._handshakes) >= self.max_connections

    def connection_made(self, handler: web_protocol.RequestHandler, transport: asyncio.Transport) -> None:
        if self.full():
            self._refused("limit")
            transport.write(_BUSY)
            transport.close()  # aiohttp's handler sees connection_lost at once; nothing waits for a slot
            return
        self._open.add(handler)
        self._waiting[handler] = self._loop.call_later(self.header_timeout, self._too_slow, handler)
        super().connection_made(handler, transport)

    def connection_lost(self, handler: web_protocol.RequestHandler, exc: BaseException | None = None) -> None:
        self._open.discard(handler)
        if (timer := self._waiting.pop(handler, None)) is not None:
            timer.cancel()
        super().connection_lost(handler, exc)

    def _too_slow(self, handler: web_protocol.RequestHandler) -> None:
        if self._waiting.pop(handler, None) is not None and handler in self._open:
            self._refused("header_timeout")
            handler.force_close()  # closes the transport; a caller trickling its headers is cut here

    def refused(self, cause: str) -> None:
        self._refused(cause)

    async def shutdown(self, timeout: float | None = None) -> None:
        for gate in list(self._handshakes):
            gate.cancel()
        await super().shutdown(timeout)


class _TlsGate(asyncio.Protocol):
    """A TCP connection accepted by a TLS listener, counted against the cap from accept. With `ssl=` given to the
    event loop, aiohttp's server sees a connection only once its handshake is done: callers that connect and never
    finish a handshake held descriptors uncounted for the loop's 60 s handshake timeout. Here the handshake is ours
    (`loop.start_tls`): over the cap the connection is closed at once (no handshake, so no 503), and a handshake
    not done within the header deadline is cut (`cause="handshake"`, as is one that fails)."""

    def __init__(self, server: _GuardedServer, context: ssl.SSLContext) -> None:
        self._server, self._context = server, context
        self._early: list[bytes] = []  # what the TLS layer decrypted before the handler was connected
        self._eof = False
        self._lost = False
        self._task: asyncio.Task[None] | None = None

    def cancel(self) -> None:
        if self._task is not None:
            self._task.cancel()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        server = self._server
        if server.full():
            server.refused("limit")
            transport.abort()
            return
        transport.pause_reading()  # nothing is read before the TLS layer takes the connection over
        server._handshakes.add(self)
        self._task = asyncio.get_running_loop().create_task(self._handshake(transport))

    async def _handshake(self, transport: asyncio.Transport) -> None:
        server = self._server
        try:
            tls = await asyncio.get_running_loop().start_tls(transport, self, self._context, server_side=True,
                                                             ssl_handshake_timeout=server.header_timeout)
        except (OSError, ssl.SSLError, TimeoutError, ConnectionError):
            server.refused("handshake")
            transport.abort()
            return
        finally:
            server._handshakes.discard(self)
        if tls is None or self._lost:
            return
        handler = server()  # the protocol aiohttp's server makes for a connection
        tls.set_protocol(handler)
        handler.connection_made(tls)  # counted in `_open` from here, with its header deadline
        for data in self._early:
            handler.data_received(data)
        if self._eof:
            handler.eof_received()

    # between the handshake's end and `_handshake` resuming, the TLS layer may already deliver
    def data_received(self, data: bytes) -> None:
        self._early.append(data)

    def eof_received(self) -> bool | None:
        self._eof = True
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self._lost = True


class _TlsGatedSite(web.TCPSite):
    """A TCPSite whose TLS is `_TlsGate`'s: the listener is plain TCP, each connection counted from accept."""

    async def start(self) -> None:
        await web.BaseSite.start(self)  # registers the site with its runner
        server, context = self._runner.server, self._ssl_context
        assert isinstance(server, _GuardedServer) and context is not None
        self._server = await asyncio.get_running_loop().create_server(
            lambda: _TlsGate(server, context), self._host, self._port, backlog=self._backlog,
            reuse_address=self._reuse_address, reuse_port=self._reuse_port)


class GuardedRunner(web.AppRunner):
    """An AppRunner whose server is `_GuardedServer`."""

    def __init__(self, app: web.Application, *, max_connections: int, header_timeout: float,
                 refused: Callable[[str], None], **kwargs: Any) -> None:
        super().__init__(app, **kwargs)
        self._limit, self._header_timeout, self._on_refused = max_connections, header_timeout, refused

    @property
    def open_connections(self) -> int:
        server = self.server
        return server.open_connections if isinstance(server, _GuardedServer) else 0

    def site(self, host: str, port: int, tls: ssl.SSLContext | None) -> web.TCPSite:
        """The listener: plain, or TLS with each connection counted from accept (`_TlsGate`)."""
        if tls is None:
            return web.TCPSite(self, host, port)
        return _TlsGatedSite(self, host, port, ssl_context=tls)

    async def _make_server(self) -> web.Server:
        plain = await super()._make_server()
        # the same arguments aiohttp's AppRunner gave its own Server (handler, request factory, kwargs)
        return _GuardedServer(plain.request_handler, request_factory=plain.request_factory,
                              handler_cancellation=plain.handler_cancellation, loop=plain._loop,
                              max_connections=self._limit, header_timeout=self._header_timeout,
                              refused=self._on_refused, **plain._kwargs)
