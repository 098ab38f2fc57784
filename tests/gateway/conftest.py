"""The `gateway` fixture: the official a2a-sdk peer behind a real nginx, one nginx config per test."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest

from tests.gateway.nginx import Nginx, start_nginx
from tests.peers.harness import Peer, free_port, start_peer

ROUTE = "/api/a2a/ns/name"  # the gateway's route prefix for the agent, as kagent lays it out


@dataclass
class Behind:
    """An agent behind a gateway: the base URL clients are given (the card is under it) and both processes."""

    url: str
    peer: Peer
    nginx: Nginx
    port: int  # the gateway's HTTP port
    grpc_port: int  # the gateway's HTTP/2 (gRPC) port


Start = Callable[..., Behind]


@pytest.fixture
def gateway() -> Iterator[Start]:
    """`gateway(servers, public_url=…, public_grpc=…, kind="python")`: start the SDK peer (a2a-sdk, or "js" for
    @a2a-js/sdk) advertising the gateway's URLs, then nginx with `servers` (the http block's server sections).
    Templates may use {gw} and {ggw} (the gateway's HTTP and HTTP/2 ports), {up} and {gup} (the peer's HTTP and
    gRPC ports) and {route}."""
    started: list[Peer | Nginx] = []

    def start(servers: str, public_url: str = "http://127.0.0.1:{gw}{route}",
              public_grpc: str = "http://127.0.0.1:{ggw}", kind: str = "python") -> Behind:
        gw, ggw = free_port(), free_port()
        ports: dict[str, object] = {"gw": gw, "ggw": ggw, "route": ROUTE}
        peer = start_peer(kind, extra_args=("--public-url", public_url.format(**ports),
                                                "--public-grpc", public_grpc.format(**ports)))
        started.append(peer)
        assert peer.grpc_port is not None
        nginx = start_nginx(servers.format(up=peer.port, gup=peer.grpc_port, **ports))
        started.append(nginx)
        return Behind(f"http://127.0.0.1:{gw}{ROUTE}", peer, nginx, gw, ggw)

    try:
        yield start
    finally:
        for proc in reversed(started):
            proc.stop()
