"""Who may use the daemon's web endpoints, and how often they may make it probe.

- `WebAuth`: optional bearer or basic authentication of every endpoint but /healthz and /readyz
  (kubelet probes), the expected credential read from a secret file (re-read when it changes, so a
  rotated Secret needs no restart) and registered with the redaction.
- `ProbeThrottle`: /probe runs one agent (or target) at most once per interval; callers in between,
  and concurrent callers, share that run, so scrapes cannot be turned into a flood against an agent.
- `tls_context`: optional TLS for the listener.
"""

from __future__ import annotations

import asyncio
import base64
import hmac
import ssl
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Generic, TypeVar

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
