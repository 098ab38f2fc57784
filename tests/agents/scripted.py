"""A scripted agent: a valid card, and answers replayed verbatim from a script.

For wire faults that need exact bytes (envelopes, event order, artifact chunks, streams that stay
open); the request's JSON-RPC id is substituted for the token `{id}`, and its Authorization header for
`{secret}` (an agent that echoes the probe's credentials). A 1.0 JSON-RPC card by default;
`version="0.3"` serves a 0.3 card, and `rest` routes ("VERB /path" under /rest) make the card's one
interface HTTP+JSON. A list of replies answers successive calls in turn (the last one repeats).
"""

from __future__ import annotations

import asyncio
import contextlib
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
    headers: dict[str, str] = field(default_factory=dict)  # more response headers ("{secret}" is filled in too)


Replies = Reply | list[Reply]


def card(origin: str, *, version: str = "1.0", rest: bool = False, **extra: Any) -> dict[str, Any]:
    if not rest:
        return valid_card(f"{origin}/rpc", name="scripted", version=version, **extra)
    if version == "1.0":
        return valid_card((f"{origin}/rest", "HTTP+JSON", "1.0"), name="scripted", **extra)
    return valid_card(f"{origin}/rest", name="scripted", version=version, preferredTransport="HTTP+JSON", **extra)


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
async def scripted_agent(replies: dict[str, Replies], card_extra: dict[str, Any] | None = None,
                         card_routes: dict[str, web.Response] | None = None, *, version: str = "1.0",
                         rest: dict[str, Replies] | None = None) -> AsyncIterator[str]:
    """Serve replies keyed by JSON-RPC method (or, with `rest`, by "VERB /path" under /rest); yields the origin."""
    origin = ""
    calls: dict[str, int] = {}

    async def card_handler(_: web.Request) -> web.Response:
        doc = card(origin, version=version, rest=rest is not None, **(card_extra or {}))
        return web.json_response(doc, headers={"Cache-Control": "max-age=60", "ETag": '"x"'})

    def _next(key: str, script: Replies) -> Reply:
        turn = calls[key] = calls.get(key, -1) + 1
        return script if isinstance(script, Reply) else script[min(turn, len(script) - 1)]

    async def play(request: web.Request, reply: Reply, rid: str) -> web.StreamResponse:
        secret = request.headers.get("Authorization", "")

        def fill(chunk: str) -> bytes:
            return chunk.replace("{id}", rid).replace("{secret}", secret).encode()

        headers = {"Content-Type": reply.content_type, **{k: fill(v).decode() for k, v in reply.headers.items()}}
        if reply.whole:
            return web.Response(status=reply.status, headers=headers, body=fill("".join(reply.chunks)))
        resp = web.StreamResponse(status=reply.status, headers=headers)
        await resp.prepare(request)
        # the probe may hang up once it has its verdict (a poll ended, a deadline): not the agent's error to log,
        # and the tests read the log for tracebacks of the probe's own
        with contextlib.suppress(ConnectionResetError):
            for chunk in reply.chunks:
                await resp.write(fill(chunk))
            for pause, chunk in reply.later:
                await asyncio.sleep(pause)
                await resp.write(fill(chunk))
            if reply.hold_open:
                await asyncio.sleep(reply.hold_open)
            await resp.write_eof()
        return resp

    async def rpc(request: web.Request) -> web.StreamResponse:
        try:
            body = await request.json()
        except ValueError:
            return web.json_response({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse"}})
        if not isinstance(body, dict):
            return web.json_response({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Invalid"}})
        script = replies.get(body.get("method"))
        if script is None:
            return web.json_response({"jsonrpc": "2.0", "id": body.get("id"),
                                      "error": {"code": -32601, "message": "Method not found"}})
        return await play(request, _next(body.get("method"), script), str(body.get("id")))

    def rest_route(key: str, script: Replies) -> Any:
        async def handler(request: web.Request) -> web.StreamResponse:
            return await play(request, _next(key, script), "")

        return handler

    app = web.Application()
    app.router.add_get("/.well-known/agent-card.json", card_handler)
    for path, response in (card_routes or {}).items():
        app.router.add_get(path, _replay(response))
    app.router.add_post("/rpc", rpc)
    for key, script in (rest or {}).items():
        verb, path = key.split(" ", 1)
        app.router.add_route(verb, f"/rest{path}", rest_route(key, script))
    async with serve(app) as served:
        origin = served
        yield origin


def _replay(resp: web.Response) -> Any:
    async def handler(_request: web.Request) -> web.Response:
        return web.Response(status=resp.status, body=resp.body, headers=resp.headers)

    return handler
