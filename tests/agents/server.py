"""The one way tests serve an aiohttp app on loopback: an ephemeral port, a short shutdown, the origin."""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import grpc
from aiohttp import web


@asynccontextmanager
async def serve(app: web.Application, *, host: str = "127.0.0.1",
                ssl_context: ssl.SSLContext | None = None) -> AsyncIterator[str]:
    """Serve `app` on `host` and a free port (TLS with `ssl_context`); yields the origin ``http(s)://host:port``."""
    runner = web.AppRunner(app, shutdown_timeout=0.5, access_log=None)
    await runner.setup()
    try:
        site = web.TCPSite(runner, host, 0, ssl_context=ssl_context)
        await site.start()
        bound_host, port = runner.addresses[0][:2]
        yield f"{'https' if ssl_context else 'http'}://{bound_host}:{port}"
    finally:
        await runner.cleanup()


@asynccontextmanager
async def serve_grpc(server: grpc.aio.Server, card: Callable[[web.Request, int], Awaitable[web.StreamResponse]],
                     *, grace: float = 0.0) -> AsyncIterator[str]:
    """Start a gRPC `server` on a free loopback port and serve its Agent Card (`card(request, grpc_port)`) over
    HTTP; yields the card's origin. Both stop on exit."""
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        async with serve_card(card, port) as origin:
            yield origin
    finally:
        await server.stop(grace=grace)


@asynccontextmanager
async def serve_card(card: Callable[[web.Request, int], Awaitable[web.StreamResponse]],
                     port: int) -> AsyncIterator[str]:
    """Serve the Agent Card (`card(request, port)`) of an agent listening on `port` over HTTP; yields its origin."""
    async def card_route(request: web.Request) -> web.StreamResponse:
        return await card(request, port)

    app = web.Application()
    app.router.add_get("/.well-known/agent-card.json", card_route)
    async with serve(app) as origin:
        yield origin
