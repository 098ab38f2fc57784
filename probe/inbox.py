"""The push-notification receiver: a webhook inbox the probe hosts itself, for `check` and for the daemon.

Every registration gets a fresh route token (the last path segment of its URL), a fresh bearer
credential and a fresh config token, all unguessable. A POST to an unknown route is refused (404)
and counted; one without the credential or the token the config asked for is refused (401) but
remembered, so a check can say "delivered without credentials" rather than "never delivered".
Bodies are bounded and parsed as strict JSON. The inbox only ever answers: it never makes a request.
"""

from __future__ import annotations

import asyncio
import hmac
import re
import secrets
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from aiohttp import web
from pydantic import SecretStr

from probe.wire import strictjson

ROUTE_PREFIX = "/-/push/"
ROUTE = ROUTE_PREFIX + "{token}"
MAX_BODY_BYTES = 256 * 1024  # a Task with its history; far above any status update
MAX_DELIVERIES = 64  # per registration: at-least-once delivery may repeat, but not without bound
MAX_REGISTRATIONS = 512  # concurrent round trips; beyond this a new registration is refused
BODY_TIMEOUT = 10.0  # seconds a delivery's body has after its headers (the daemon's: web_header_timeout)
_TOKEN_BYTES = 32
_ROUTE_TOKEN = re.compile(r"^[A-Za-z0-9_-]{43}$")  # token_urlsafe(32)
_JSON_TYPES = ("application/json", "application/a2a+json")


class Refused(StrEnum):
    """Why the receiver turned a request away (a bounded label for the refusal counter)."""

    UNKNOWN_TOKEN = "unknown_token"
    UNAUTHENTICATED = "unauthenticated"
    TOO_LARGE = "too_large"
    MALFORMED = "malformed"
    OVERFLOW = "overflow"  # a registration already holds MAX_DELIVERIES
    TOO_SLOW = "too_slow"  # the body did not arrive within the body deadline (trickled), answered 408


class InboxFull(Exception):
    """No room for another registration (MAX_REGISTRATIONS are active)."""


@dataclass(frozen=True, slots=True)
class Delivery:
    """One POST that reached a known route, as received; `body` is None when it was not strict JSON."""

    at: float  # time.monotonic() on arrival
    authorized: bool  # Authorization carried the credential the config asked for
    token: bool | None  # X-A2A-Notification-Token matched (False: wrong, None: absent)
    content_type: str
    body: Any = None
    problem: str | None = None  # why the body is not JSON (or too large)

    @property
    def accepted(self) -> bool:
        return self.problem is None and (self.authorized or self.token is True)


@dataclass(eq=False)
class Registration:
    """One webhook the probe hands to one agent for one task; secrets stay SecretStr."""

    route: str
    url: str
    token: SecretStr
    credentials: SecretStr
    created: float
    expires: float
    deliveries: list[Delivery] = field(default_factory=list)
    dropped: int = 0  # deliveries beyond MAX_DELIVERIES
    _changed: asyncio.Event = field(default_factory=asyncio.Event, repr=False)

    def secrets(self) -> tuple[str, str, str]:
        """Every value that must never be printed: the route token, the config token and the credential."""
        return self.route, self.token.get_secret_value(), self.credentials.get_secret_value()

    def add(self, delivery: Delivery) -> bool:
        if len(self.deliveries) >= MAX_DELIVERIES:
            self.dropped += 1
            return False
        self.deliveries.append(delivery)
        self._changed.set()
        return True

    async def wait(self, done: Callable[[list[Delivery]], bool], deadline: float) -> bool:
        """Wait until `done(deliveries)` holds or the monotonic `deadline` passes; True when it held."""
        while not done(self.deliveries):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            self._changed.clear()
            try:
                await asyncio.wait_for(self._changed.wait(), remaining)
            except TimeoutError:
                return done(self.deliveries)
        return True


class PushInbox:
    """Registrations by route token, and the aiohttp handler that receives deliveries for them."""

    def __init__(self, public_url: str, *, max_registrations: int = MAX_REGISTRATIONS,
                 on_refused: Callable[[Refused], None] | None = None, body_timeout: float = BODY_TIMEOUT) -> None:
        self.public_url = public_url.rstrip("/")
        self.max_registrations = max_registrations
        self.body_timeout = body_timeout
        self.refused: Counter[Refused] = Counter()
        self._on_refused = on_refused
        self._regs: dict[str, Registration] = {}

    def __len__(self) -> int:
        return len(self._regs)

    def register(self, ttl: float) -> Registration:
        """A fresh webhook valid for `ttl` seconds (released earlier by `release`)."""
        now = time.monotonic()
        for route in [r for r, reg in self._regs.items() if reg.expires <= now]:
            del self._regs[route]
        if len(self._regs) >= self.max_registrations:
            raise InboxFull(f"the push receiver already holds {len(self._regs)} registrations")
        route = secrets.token_urlsafe(_TOKEN_BYTES)
        reg = Registration(route=route, url=self.public_url + ROUTE_PREFIX + route,
                           token=SecretStr(secrets.token_urlsafe(_TOKEN_BYTES)),
                           credentials=SecretStr(secrets.token_urlsafe(_TOKEN_BYTES)), created=now, expires=now + ttl)
        self._regs[route] = reg
        return reg

    def release(self, reg: Registration) -> None:
        self._regs.pop(reg.route, None)

    def redact(self, text: str) -> str:
        """Mask every active registration's secrets in `text` (an agent may echo them back)."""
        for reg in self._regs.values():
            for value in reg.secrets():
                text = text.replace(value, "<redacted>")
        return text

    def _refuse(self, why: Refused, status: int) -> web.Response:
        self.refused[why] += 1
        if self._on_refused is not None:
            self._on_refused(why)
        return web.json_response({"error": why.value}, status=status)

    async def handle(self, request: web.Request) -> web.Response:
        """POST /-/push/{token}: store the delivery; 204 when accepted."""
        route = request.match_info.get("token", "")
        reg = self._regs.get(route) if _ROUTE_TOKEN.match(route) else None
        if reg is None or reg.expires <= time.monotonic():
            return self._refuse(Refused.UNKNOWN_TOKEN, 404)
        at = time.monotonic()
        ctype = request.headers.get("Content-Type", "")
        authorized = _authorized(request.headers.get("Authorization"), reg.credentials)
        token = _token(request.headers.get("X-A2A-Notification-Token"), reg.token)
        try:
            # a body trickled after complete headers is bounded in time, not only in size: it would hold one of
            # the web server's connections (and with many, all of them) for as long as the caller likes
            async with asyncio.timeout(self.body_timeout):
                raw = await _read_bounded(request)
        except TimeoutError:
            reg.add(Delivery(at, authorized, token, ctype,
                             problem=f"the body did not arrive within {self.body_timeout:g} s of its headers"))
            response = self._refuse(Refused.TOO_SLOW, 408)
            await response.prepare(request)
            await response.write_eof()
            request.protocol.force_close()  # closed now: no lingering over the rest of a trickled body
            return response
        if raw is None:
            reg.add(Delivery(at, authorized, token, ctype, problem=f"body larger than {MAX_BODY_BYTES} bytes"))
            return self._refuse(Refused.TOO_LARGE, 413)
        delivery = _parse(at, authorized, token, ctype, raw)
        if not reg.add(delivery):
            return self._refuse(Refused.OVERFLOW, 429)
        if delivery.problem is not None:
            return self._refuse(Refused.MALFORMED, 400)
        if not delivery.accepted:
            return self._refuse(Refused.UNAUTHENTICATED, 401)
        return web.Response(status=204)


def _authorized(header: str | None, credentials: SecretStr) -> bool:
    if not header:
        return False
    scheme, _, value = header.strip().partition(" ")
    expected = credentials.get_secret_value().encode()
    return scheme.lower() == "bearer" and hmac.compare_digest(value.strip().encode(), expected)


def _token(header: str | None, token: SecretStr) -> bool | None:
    if header is None:
        return None
    return hmac.compare_digest(header.strip().encode(), token.get_secret_value().encode())


async def _read_bounded(request: web.Request) -> bytes | None:
    """The body, or None past MAX_BODY_BYTES (read from the stream: the app-wide client_max_size is smaller)."""
    if request.content_length is not None and request.content_length > MAX_BODY_BYTES:
        return None
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.content.iter_chunked(64 * 1024):
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def _parse(at: float, authorized: bool, token: bool | None, ctype: str, raw: bytes) -> Delivery:
    media = ctype.split(";", 1)[0].strip().lower()
    if media not in _JSON_TYPES:
        return Delivery(at, authorized, token, ctype, problem=f"Content-Type {ctype or 'missing'!r} is not JSON")
    try:
        body = strictjson.loads(raw)
    except strictjson.StrictJSONError as exc:
        return Delivery(at, authorized, token, ctype, problem=str(exc))
    if not isinstance(body, dict):
        return Delivery(at, authorized, token, ctype, problem=f"the body is a JSON {type(body).__name__}, "
                                                             "not an object")
    return Delivery(at, authorized, token, ctype, body=body)


def add_route(app: web.Application, inbox: PushInbox) -> None:
    """Mount the receiver on an aiohttp app (the daemon's web server, or the listener of `check`)."""
    app.router.add_post(ROUTE, inbox.handle)


class Listener:
    """The receiver of a one-shot `check`: its own small server, loopback and ephemeral by default."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, public_url: str | None = None) -> None:
        self.host, self.port = host, port
        self._public_url = public_url
        self._runner: web.AppRunner | None = None
        self.inbox: PushInbox | None = None

    async def __aenter__(self) -> PushInbox:
        app = web.Application(client_max_size=MAX_BODY_BYTES)
        inbox = PushInbox(self._public_url or "http://placeholder")
        add_route(app, inbox)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        server = site._server  # aiohttp exposes the bound sockets only here
        sockets = getattr(server, "sockets", None) or []
        bound_port = sockets[0].getsockname()[1] if sockets else self.port
        if self._public_url is None:
            host = f"[{self.host}]" if ":" in self.host else self.host
            inbox.public_url = f"http://{host}:{bound_port}"
        self.inbox = inbox
        return inbox

    async def __aexit__(self, *_exc: object) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
