"""An agent for the card cache: a 1.0 card whose caching headers, ETag, status and interface a test changes while
it runs, counting the card requests it serves and the validators they carry (probe.wire.cardcache)."""

from __future__ import annotations

import asyncio

from aiohttp import web

from tests.agents.cards import valid_card


class CardAgent:
    """A 1.0 agent whose card headers, ETag, card status and interface status a test changes while it runs."""

    def __init__(self) -> None:
        self.cache_headers: dict[str, str] = {"Cache-Control": "max-age=300"}
        self.etag: str | None = '"v1"'
        self.etag_on_304: str | None = None  # the 304 names this ETag instead of the current one
        self.card_delay = 0.0  # seconds the card's answer takes
        self.bare_304 = False  # the 304 to a matching If-None-Match carries no header field at all
        self.status_after_304: int | None = None  # the card's status once a 304 was sent
        self.card_version = "1.0.0"
        self.card_status = 200
        self.rpc_status = 200
        self.card_requests: list[dict[str, str]] = []  # the validators of each card GET
        self.rpc_requests = 0

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/.well-known/agent-card.json", self.card)
        app.router.add_post("/rpc", self.rpc)
        return app

    async def card(self, request: web.Request) -> web.Response:
        if self.card_delay:
            await asyncio.sleep(self.card_delay)
        self.card_requests.append({k: v for k in ("If-None-Match", "If-Modified-Since")
                                   if (v := request.headers.get(k)) is not None})
        if self.card_status == 304:  # Not Modified whatever was asked (a broken cache in front of the agent)
            return web.Response(status=304)
        if self.card_status != 200:
            return web.Response(status=self.card_status, text="card backend down")
        headers = dict(self.cache_headers)
        if self.etag is not None:
            headers["ETag"] = self.etag
        if self.etag is not None and request.headers.get("If-None-Match") == self.etag:
            if self.etag_on_304 is not None:
                headers["ETag"] = self.etag_on_304
            if self.status_after_304 is not None:
                self.card_status = self.status_after_304
            return web.Response(status=304, headers={} if self.bare_304 else headers)
        doc = valid_card(f"http://{request.host}/rpc", name="cached") | {"version": self.card_version}
        return web.json_response(doc, headers=headers)

    async def rpc(self, request: web.Request) -> web.Response:
        self.rpc_requests += 1
        if self.rpc_status != 200:  # a gateway that lost the route: the card still answers 200
            return web.Response(status=self.rpc_status, text="no route")
        body = await request.json()
        error = {"code": -32001, "message": "task not found"}
        return web.json_response({"jsonrpc": "2.0", "id": body["id"], "error": error})
