"""Every registered HTTP binding applies the client config's auth flow (and only for its origin)."""

from __future__ import annotations

from pathlib import Path

import pytest
from aiohttp import web

from probe.wire.bindings import REGISTRY, Context, Op
from probe.wire.dialects import for_version
from probe.wire.http import ClientConfig, Credentials, Deadline, HttpClient
from tests.agents.server import serve


class Recording:
    """A RequestAuth that hands out one header, one query parameter and one cookie for one origin."""

    def __init__(self, origin: str) -> None:
        self.origin = origin

    def credentials(self, url: str) -> Credentials:
        if not url.startswith(self.origin):
            return Credentials()
        return Credentials({"Authorization": "Bearer ZqFbind-tok"}, {"k": "ZqFquery"}, {"c": "ZqFcookie"})

    async def on_unauthorized(self, client: HttpClient, deadline: Deadline) -> bool:
        return False


# gRPC needs HTTP/2: its metadata and channel credentials are checked in the test below
@pytest.mark.parametrize("name", sorted(n for n in REGISTRY if n not in ("fake", "grpc")))
async def test_every_binding_sends_the_flows_credentials(name: str, client: HttpClient) -> None:
    seen: list[web.Request] = []

    async def anything(request: web.Request) -> web.Response:
        seen.append(request)
        return web.json_response({})

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", anything)
    async with serve(app) as origin:
        dialect = for_version("1.0")
        assert dialect is not None
        binding = REGISTRY[name].factory(Context(client, f"{origin}/a2a", dialect, {},
                                                 ClientConfig(auth=Recording(origin))))
        await binding.call(Op.GET, {"id": "t1"}, deadline=Deadline.after(5))
    assert seen, name
    request = seen[0]
    assert request.headers.get("Authorization") == "Bearer ZqFbind-tok", name
    assert request.query.get("k") == "ZqFquery" and request.cookies.get("c") == "ZqFcookie", name


def test_grpc_channel_credentials_use_the_agents_tls_material(tmp_path: Path) -> None:
    from probe.wire.bindings.grpc_binding import GrpcBinding

    ca, cert, key = tmp_path / "ca.pem", tmp_path / "c.crt", tmp_path / "c.key"
    for path, data in ((ca, b"CA"), (cert, b"CERT"), (key, b"KEY")):
        path.write_bytes(data)
    dialect = for_version("1.0")
    assert dialect is not None
    config = ClientConfig(pem_files=(str(ca), str(cert), str(key)), auth=Recording("https://agent.example:443"))
    binding = GrpcBinding("https://agent.example:443", dialect, {}, config)
    assert binding.tls_material() == {"root_certificates": b"CA", "certificate_chain": b"CERT", "private_key": b"KEY"}
    assert GrpcBinding("https://agent.example:443", dialect, {}).tls_material() == {}  # the system roots
    metadata = dict(binding._metadata_for(None))
    assert metadata["authorization"] == "Bearer ZqFbind-tok"  # the flow's credentials, as gRPC metadata
