"""A loopback identity provider: an OAuth2 client-credentials token endpoint and an OIDC discovery document."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.agents.server import serve

CLIENT_ID, CLIENT_SECRET = "probe-client", "ZqCs3cr3t-client"


@dataclass
class Idp:
    origin: str = ""
    issued: list[str] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    expires_in: int = 3600
    fail_with: int | None = None  # answer every token request with this status

    @property
    def token_url(self) -> str:
        return f"{self.origin}/oauth/token"

    @property
    def discovery_url(self) -> str:
        return f"{self.origin}/.well-known/openid-configuration"

    @property
    def current(self) -> str | None:
        return self.issued[-1] if self.issued else None


@asynccontextmanager
async def idp() -> AsyncIterator[Idp]:
    state = Idp()

    async def token(request: web.Request) -> web.Response:
        form = dict(await request.post())
        state.requests.append({"headers": dict(request.headers), "form": form})
        if state.fail_with is not None:
            return web.json_response({"error": "invalid_client"}, status=state.fail_with)
        auth = request.headers.get("Authorization", "")
        expected = "Basic " + base64.b64encode(f"{CLIENT_ID}:{CLIENT_SECRET}".encode()).decode()
        if auth != expected or form.get("grant_type") != "client_credentials":
            return web.json_response({"error": "invalid_client"}, status=401)
        issued = f"ZqDtok{len(state.issued) + 1}-abcdefgh"
        state.issued.append(issued)
        return web.json_response({"access_token": issued, "token_type": "Bearer", "expires_in": state.expires_in})

    async def discovery(_: web.Request) -> web.Response:
        return web.json_response({"issuer": state.origin, "token_endpoint": state.token_url})

    app = web.Application()
    app.router.add_post("/oauth/token", token)
    app.router.add_get("/.well-known/openid-configuration", discovery)
    async with serve(app) as state.origin:
        yield state
