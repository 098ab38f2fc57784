"""The interface's `tenant` travels in every request (1.0.1 §8.3.2: clients MUST "Set the tenant field in every
request message to exactly the value declared in the selected AgentInterface entry"; 1.0.0's proto: "Tenant ID
to be used in the request"), as both official clients send it (a2a-sdk's and @a2a-js/sdk's
TenantTransportDecorator).

The agent is the real a2a-sdk peer behind a multi-tenant gateway on loopback: its card declares tenant "acme" on
each interface, the gateway forwards a JSON-RPC request only when its params name that tenant and a REST request
only under /acme/ (the proto's `/{tenant}/message:send` paths), and answers anything else as a gateway does for an
unknown route. Before the probe sent the tenant, every call was refused (the gateway's -32001 or 404:
invoke_a2a_error)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from probe.engine import run_probe
from probe.results import Status
from probe.target import Target
from probe.wire.http import HttpClient
from tests.agents.server import serve
from tests.peers.harness import Peer

pytestmark = pytest.mark.external

TENANT = "acme"


@asynccontextmanager
async def tenant_gateway(peer: Peer) -> AsyncIterator[tuple[str, list[str]]]:
    """(origin, the tenants seen) of a gateway serving the peer's card with `tenant` on its HTTP interfaces."""
    seen: list[str] = []
    session = aiohttp.ClientSession(auto_decompress=False)

    async def relay(request: web.Request, url: str, body: bytes) -> web.StreamResponse:
        headers = {k: v for k, v in request.headers.items() if k.lower() not in ("host", "content-length")}
        async with session.request(request.method, url, data=body or None, headers=headers) as upstream:
            out = web.StreamResponse(status=upstream.status, headers={
                k: v for k, v in upstream.headers.items()
                if k.lower() not in ("content-length", "transfer-encoding", "connection")})
            await out.prepare(request)
            async for chunk in upstream.content.iter_any():
                await out.write(chunk)
            await out.write_eof()
            return out

    async def card(request: web.Request) -> web.Response:
        origin = f"{request.scheme}://{request.host}"
        async with session.get(peer.card_url, headers={"A2A-Version": "1.0"}) as resp:
            doc: dict[str, Any] = await resp.json()
        doc["supportedInterfaces"] = [
            {"url": f"{origin}/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0", "tenant": TENANT},
            {"url": f"{origin}/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0", "tenant": TENANT}]
        return web.json_response(doc, headers={"Cache-Control": "max-age=60", "ETag": '"t"'})

    async def rpc(request: web.Request) -> web.StreamResponse:
        body = await request.read()
        params = json.loads(body).get("params") if body.startswith(b"{") else None
        tenant = params.get("tenant") if isinstance(params, dict) else None
        seen.append(str(tenant))
        if tenant != TENANT:  # the gateway cannot route it: no agent without a tenant
            return web.json_response({"jsonrpc": "2.0", "id": json.loads(body).get("id"),
                                      "error": {"code": -32001, "message": "no such tenant"}})
        return await relay(request, peer.jsonrpc_url, body)

    async def rest(request: web.Request) -> web.StreamResponse:
        tenant, _, rest_path = request.match_info["tail"].partition("/")
        seen.append(tenant)
        if tenant != TENANT:
            return web.json_response({"error": {"code": 404, "message": "no such route"}}, status=404)
        query = f"?{request.query_string}" if request.query_string else ""
        return await relay(request, f"{peer.rest_url}/{rest_path}{query}", await request.read())

    app = web.Application()
    app.router.add_get("/.well-known/agent-card.json", card)
    app.router.add_post("/rpc", rpc)
    app.router.add_route("*", "/rest/{tail:.*}", rest)
    try:
        async with serve(app) as origin:
            yield origin, seen
    finally:
        await session.close()


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
async def test_the_interfaces_tenant_is_sent_on_every_call(client: HttpClient, py_peer: Peer, binding: str) -> None:
    async with tenant_gateway(py_peer) as (origin, seen):
        result = await run_probe(Target(name="tenant", url=origin, binding=binding, timeout=20.0), client)
    assert result.reason is None, (result.reason, result.problem)
    for step in ("invoke.task_completed", "stream.task_completed"):
        check = result.check(step)
        assert check is not None and check.status is Status.PASS, (step, check)
    assert seen and set(seen) == {TENANT}, seen  # every call (send, get, stream) named the tenant
