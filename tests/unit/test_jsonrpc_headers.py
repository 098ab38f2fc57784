"""The headers of a JSON-RPC unary call: the binding's own, Accept, then the call's, case-insensitively."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp import web

from probe.wire.bindings.base import Op
from probe.wire.bindings.jsonrpc import JsonRpcBinding
from probe.wire.dialects import V1
from probe.wire.http import Deadline, HttpClient


@pytest.mark.parametrize(("extra", "expect"), [
    (None, {"Accept": "application/json", "A2A-Version": "1.0", "X-Agent": "a"}),
    ({"accept": "text/plain"}, {"Accept": "text/plain", "A2A-Version": "1.0", "X-Agent": "a"}),
    # removed: aiohttp then sends its own default Accept
    ({"Accept": None, "x-agent": None}, {"Accept": "*/*", "A2A-Version": "1.0", "X-Agent": None}),
    ({"A2A-Version": "0.3", "X-Call": "c"}, {"Accept": "application/json", "A2A-Version": "0.3", "X-Call": "c"}),
])
async def test_a_calls_headers_are_merged_over_the_bindings(extra: dict[str, Any] | None,
                                                            expect: dict[str, str | None]) -> None:
    seen: list[dict[str, str]] = []

    async def rpc(request: web.Request) -> web.Response:
        seen.append(dict(request.headers))
        body = await request.json()
        return web.json_response({"jsonrpc": "2.0", "id": body["id"], "error": {"code": -32001, "message": "nf"}})

    app = web.Application()
    app.router.add_post("/rpc", rpc)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        async with HttpClient() as client:
            binding = JsonRpcBinding(client, f"http://127.0.0.1:{port}/rpc", V1, {"X-Agent": "a"})
            for _ in range(2):  # the binding's merged headers are not changed by a call
                answer = await binding.call(Op.GET, {"id": "t"}, deadline=Deadline.after(5), headers=extra)
                assert answer.error is not None
    finally:
        await runner.cleanup()
    for got in seen:
        assert got["Content-Type"] == "application/json"
        for name, value in expect.items():
            assert got.get(name) == value, (name, got)
