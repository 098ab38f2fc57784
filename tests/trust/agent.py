"""A loopback A2A 1.0 JSON-RPC agent for the trust tests: a card of the test's choosing, an auth gate of
the test's choosing, plain or TLS, and a log of every request it saw (to prove where credentials went)."""

from __future__ import annotations

import json
import ssl
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.agents.cards import valid_card
from tests.agents.server import serve

Gate = Callable[[web.Request], web.Response | None]  # None lets the request through


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    query: dict[str, str]
    cookies: dict[str, str]
    body: dict[str, Any] | None = None


@dataclass
class TrustAgent:
    origin: str = ""
    seen: list[Seen] = field(default_factory=list)
    card: dict[str, Any] = field(default_factory=dict)

    def rpc_calls(self) -> list[Seen]:
        return [s for s in self.seen if s.method == "POST"]

    def all_text(self) -> str:
        """Everything every request carried, for 'this secret never arrived here' assertions."""
        return json.dumps([s.__dict__ for s in self.seen])


def base_card(origin: str, **extra: Any) -> dict[str, Any]:
    return valid_card(f"{origin}/rpc", name="trust-agent", description="loopback trust agent",
                      capabilities={"streaming": False, "extendedAgentCard": False}) | extra


def _task(text: str) -> dict[str, Any]:
    return {"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_COMPLETED"},
            "artifacts": [{"artifactId": "a1", "parts": [{"text": text}]}]}


@asynccontextmanager
async def trust_agent(card: Callable[[str], dict[str, Any]] | None = None, *, gate: Gate | None = None,
                      tls: ssl.SSLContext | None = None, extended: Callable[[str], dict[str, Any]] | None = None,
                      extra_routes: list[web.RouteDef] | None = None) -> AsyncIterator[TrustAgent]:
    agent = TrustAgent()

    def record(request: web.Request, body: dict[str, Any] | None = None) -> None:
        agent.seen.append(Seen(request.method, request.path, dict(request.headers), dict(request.query),
                               dict(request.cookies), body))

    async def card_handler(request: web.Request) -> web.Response:
        record(request)
        agent.card = (card or base_card)(agent.origin)
        return web.json_response(agent.card, headers={"Cache-Control": "max-age=60", "ETag": '"1"'})

    async def rpc(request: web.Request) -> web.Response:
        try:
            body = await request.json()
        except ValueError:
            body = None
        record(request, body)
        denied = gate(request) if gate else None
        if denied is not None:
            return denied
        if not isinstance(body, dict):
            return web.json_response({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse"}})
        rid, method = body.get("id"), body.get("method")
        if method == "GetExtendedAgentCard" and extended is not None:
            return web.json_response({"jsonrpc": "2.0", "id": rid, "result": extended(agent.origin)})
        if method in ("SendMessage", "GetTask"):
            result: dict[str, Any] = {"task": _task("hello")} if method == "SendMessage" else _task("hello")
            return web.json_response({"jsonrpc": "2.0", "id": rid, "result": result})
        return web.json_response({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no method"}})

    app = web.Application()
    app.router.add_get("/.well-known/agent-card.json", card_handler)
    app.router.add_post("/rpc", rpc)
    if extra_routes:
        app.add_routes(extra_routes)
    async with serve(app, ssl_context=tls) as agent.origin:
        yield agent
