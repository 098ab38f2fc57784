"""Who may use the daemon's web endpoints, and how often they may make it probe.

- `WebAuth`: optional bearer or basic authentication of every endpoint but /healthz and /readyz
  (kubelet probes), the expected credential read from a secret file (re-read when it changes, so a
  rotated Secret needs no restart) and registered with the redaction.
- `ProbeThrottle`: /probe runs one agent (or target) at most once per interval; callers in between,
  and concurrent callers, share that run, so scrapes cannot be turned into a flood against an agent.
- `tls_context`: optional TLS for the listener.
- `GuardedRunner`: at most `max_connections` open connections to the web server (a connection over it is
  answered 503 and closed at once, never queued), and a deadline for a new connection's request headers
  (slowloris); idle keep-alive connections close after `keepalive_timeout`. A flood of idle callers would
  otherwise hold the file descriptors the probe needs for its own connections to agents.
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
        return len(self._open)

    def connection_made(self, handler: web_protocol.RequestHandler, transport: asyncio.Transport) -> None:
        if len(self._open) >= self.max_connections:
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

    async def _make_server(self) -> web.Server:
        plain = await super()._make_server()
        # the same arguments aiohttp's AppRunner gave its own Server (handler, request factory, kwargs)
        return _GuardedServer(plain.request_handler, request_factory=plain.request_factory,
                              handler_cancellation=plain.handler_cancellation, loop=plain._loop,
                              max_connections=self._limit, header_timeout=self._header_timeout,
                              refused=self._on_refused, **plain._kwargs)
