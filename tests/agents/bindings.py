"""An agent with several bindings on one card, each breakable on its own: JSON-RPC at /rpc (it works), HTTP+JSON
at /rest with only the routes given (none: every REST call gets aiohttp's plain 404, a missing route), and any
extra interfaces (e.g. a gRPC URL on a port nothing listens on). The card is rebuilt per request from `extra`, so a
test can take an interface off the card while the agent runs."""

from __future__ import annotations

import socket
from collections.abc import Sequence
from typing import Any

from aiohttp import web

from tests.agents.cards import valid_card

Interface = tuple[str, str, str]  # (url, protocolBinding, protocolVersion)


def multi_binding_app(handlers: dict[str, Any], *, also_jsonrpc: bool = True, also_rest: bool = True,
                      extra: Sequence[Interface] = (), middlewares: Sequence[Any] = ()) -> web.Application:
    """REST routes as `handlers` ("VERB /path" -> handler); `extra` is read at every card request."""
    async def card(request: web.Request) -> web.Response:
        origin = f"http://{request.host}"
        ifaces: list[Interface | str] = [*extra]
        if also_rest:
            ifaces.append((f"{origin}/rest", "HTTP+JSON", "1.0"))
        if also_jsonrpc:
            ifaces.append(f"{origin}/rpc")
        return web.json_response(valid_card(*ifaces), headers={"Cache-Control": "max-age=60", "ETag": '"e"'})

    async def rpc(request: web.Request) -> web.Response:
        body = await request.json()
        task = {"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_COMPLETED"},
                "artifacts": [{"artifactId": "a", "parts": [{"text": "ok"}]}]}
        return web.json_response({"jsonrpc": "2.0", "id": body["id"], "result": {"task": task}})

    app = web.Application(middlewares=list(middlewares))
    app.router.add_get("/.well-known/agent-card.json", card)
    app.router.add_post("/rpc", rpc)
    for route, handler in handlers.items():
        verb, path = route.split(" ", 1)
        app.router.add_route(verb, path, handler)
    return app


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port
