"""The one way tests serve an aiohttp app on loopback: an ephemeral port, a short shutdown, the origin."""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

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
