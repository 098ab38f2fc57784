"""A scripted agent: a valid 1.0 card, and POST answers replayed verbatim from a script.

For wire faults that need exact bytes (envelopes, event order, artifact chunks, streams that stay
open); the request's JSON-RPC id is substituted for the token `{id}`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.agents.cards import valid_card
from tests.agents.server import serve


@dataclass
class Reply:
    status: int = 200
    content_type: str = "application/json"
    chunks: list[str] = field(default_factory=list)  # written in order; "{id}" becomes the request id
    hold_open: float = 0.0  # seconds to keep the connection open after the last chunk
    later: list[tuple[float, str]] = field(default_factory=list)  # (pause in s, chunk) written after the chunks
    whole: bool = False  # the chunks as one body with a Content-Length: the answer and its end in one write


def card(origin: str, **extra: Any) -> dict[str, Any]:
    return valid_card(f"{origin}/rpc", name="scripted", **extra)


def sse(*results: dict[str, Any]) -> list[str]:
    """SSE events carrying JSON-RPC responses with the request id."""
    return ["data: " + json.dumps({"jsonrpc": "2.0", "id": "{id}", "result": r}) + "\n\n" for r in results]


def task(state: str, tid: str = "t1", cid: str = "c1", **extra: Any) -> dict[str, Any]:
    return {"task": {"id": tid, "contextId": cid, "status": {"state": f"TASK_STATE_{state}"}, **extra}}


def status(state: str, tid: str = "t1", cid: str = "c1") -> dict[str, Any]:
    return {"statusUpdate": {"taskId": tid, "contextId": cid, "status": {"state": f"TASK_STATE_{state}"}}}


def artifact(aid: str, text: str, *, append: bool = False, last: bool = False, tid: str = "t1") -> dict[str, Any]:
    return {"artifactUpdate": {"taskId": tid, "contextId": "c1", "append": append, "lastChunk": last,
                               "artifact": {"artifactId": aid, "parts": [{"text": text}]}}}


@asynccontextmanager
async def scripted_agent(replies: dict[str, Reply], card_extra: dict[str, Any] | None = None,
                         card_routes: dict[str, web.Response] | None = None) -> AsyncIterator[str]:
    """Serve replies keyed by JSON-RPC method; yields the origin."""
    origin = ""

    async def card_handler(_: web.Request) -> web.Response:
        return web.json_response(card(origin, **(card_extra or {})), headers={"Cache-Control": "max-age=60",
                                                                               "ETag": '"x"'})

    async def rpc(request: web.Request) -> web.StreamResponse:
        body = await request.json()
        reply = replies.get(body.get("method"))
        if reply is None:
            return web.json_response({"jsonrpc": "2.0", "id": body.get("id"),
                                      "error": {"code": -32601, "message": "Method not found"}})
        if reply.whole:
            return web.Response(status=reply.status, headers={"Content-Type": reply.content_type},
                                body="".join(reply.chunks).replace("{id}", str(body.get("id"))).encode())
        resp = web.StreamResponse(status=reply.status, headers={"Content-Type": reply.content_type})
        await resp.prepare(request)
        for chunk in reply.chunks:
            await resp.write(chunk.replace("{id}", str(body.get("id"))).encode())
        for pause, chunk in reply.later:
            await asyncio.sleep(pause)
            await resp.write(chunk.replace("{id}", str(body.get("id"))).encode())
        if reply.hold_open:
            await asyncio.sleep(reply.hold_open)
        await resp.write_eof()
        return resp

    app = web.Application()
    app.router.add_get("/.well-known/agent-card.json", card_handler)
    for path, response in (card_routes or {}).items():
        app.router.add_get(path, _replay(response))
    app.router.add_post("/rpc", rpc)
    async with serve(app) as served:
        origin = served
        yield origin


def _replay(resp: web.Response) -> Any:
    async def handler(_request: web.Request) -> web.Response:
        return web.Response(status=resp.status, body=resp.body, headers=resp.headers)

    return handler
