"""A scripted agent of any protocol version (1.0, 0.3, 0.2): its card, its headers, and replies by method.

For the verdict tests: each fault is a few bytes of a reply or a header, and the card is the version's own
shape, so the probe grades the agent by that version's rules.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from aiohttp import web
from aiohttp.typedefs import Handler

from tests.agents.cards import valid_card
from tests.agents.scripted import Reply
from tests.agents.server import serve

CACHE_HEADERS = {"Cache-Control": "max-age=60", "ETag": '"v1"'}


def card_for(version: str, origin: str, **extra: Any) -> dict[str, Any]:
    """A complete card of `version` whose interface is `{origin}/rpc`."""
    return valid_card(f"{origin}/rpc", name=f"agent-{version}", streaming=False, version=version,
                      description="scripted") | extra


def rpc(result: Any = None, *, error: dict[str, Any] | None = None) -> Reply:
    """A JSON-RPC reply with the request's id."""
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": "{id}"}
    body.update({"error": error} if error is not None else {"result": result})
    return Reply(chunks=[json.dumps(body)])


@asynccontextmanager
async def versioned_agent(version: str, replies: dict[str, Reply], *, card_headers: dict[str, str] | None = None,
                          card_extra: dict[str, Any] | None = None, drop_after_500: bool = False,
                          routes: dict[str, Handler] | None = None) -> AsyncIterator[str]:
    """Serve the card at the well-known path and replies keyed by JSON-RPC method; yields the origin.

    `drop_after_500`: a body that is not JSON gets HTTP 500, and the server then closes the kept-alive
    connection without having said `Connection: close` (as some crashing frameworks do). `routes` adds
    handlers by "VERB /path" (e.g. 0.2's GET /agent/authenticatedExtendedCard)."""
    async def card(_: web.Request) -> web.Response:
        headers = CACHE_HEADERS if card_headers is None else card_headers
        return web.json_response(card_for(version, origin, **(card_extra or {})), headers=headers)

    async def handle(request: web.Request) -> web.StreamResponse:
        try:
            body = await request.json()
        except ValueError:
            crash = web.Response(status=500, text="Internal Server Error")
            await crash.prepare(request)
            await crash.write_eof()
            if drop_after_500 and request.transport is not None:
                request.transport.close()  # forget the connection, without a Connection: close header
            return crash
        reply = replies.get(body.get("method"))
        if reply is None:
            return web.json_response({"jsonrpc": "2.0", "id": body.get("id"),
                                      "error": {"code": -32601, "message": "Method not found"}})
        resp = web.StreamResponse(status=reply.status, headers={"Content-Type": reply.content_type})
        await resp.prepare(request)
        for chunk in reply.chunks:
            await resp.write(chunk.replace("{id}", str(body.get("id"))).encode())
        await resp.write_eof()
        return resp

    app = web.Application()
    app.router.add_get("/.well-known/agent-card.json", card)
    if version == "0.2":
        app.router.add_get("/.well-known/agent.json", card)
    app.router.add_post("/rpc", handle)
    for route, handler in (routes or {}).items():
        verb, path = route.split(" ", 1)
        app.router.add_route(verb, path, handler)
    async with serve(app) as origin:
        yield origin
