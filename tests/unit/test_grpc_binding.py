"""The gRPC binding's pure parts: URL -> target and TLS, and the refusal where it cannot probe."""

from __future__ import annotations

import pytest

from probe.wire.bindings import BindingUnavailable
from probe.wire.bindings.grpc_binding import GrpcBinding, target_of
from probe.wire.dialects import V03, V1
from probe.wire.http import ClientConfig, Credentials, Deadline, HttpClient


@pytest.mark.parametrize(("url", "expected"), [
    ("127.0.0.1:50051", ("127.0.0.1:50051", False, True)),
    ("http://agent.example:8080", ("agent.example:8080", False, False)),
    ("https://agent.example", ("agent.example:443", True, False)),
    ("grpcs://agent.example:9443/", ("agent.example:9443", True, False)),
])
def test_target_and_tls_follow_the_url(url: str, expected: tuple[str, bool, bool]) -> None:
    assert target_of(url) == expected


def test_metadata_carries_the_version_and_credentials_lowercased() -> None:
    b = GrpcBinding("127.0.0.1:1", V1, {"Authorization": "Bearer x"})
    md = dict(b._metadata_for({"A2A-Version": "99.0"}))
    assert md == {"authorization": "Bearer x", "a2a-version": "99.0"}
    assert dict(b._metadata_for({"authorization": None})) == {"a2a-version": "1.0"}


def test_0_3_grpc_is_refused_as_the_agents_interface_not_a_probe_bug() -> None:
    with pytest.raises(BindingUnavailable) as err:
        GrpcBinding("127.0.0.1:1", V03, {})
    assert not err.value.probe_side


def test_the_auth_flows_credentials_go_in_as_metadata_for_its_origin_only() -> None:
    class Flow:
        def __init__(self, origin: str) -> None:
            self.origin = origin

        def credentials(self, url: str) -> Credentials:
            return Credentials({"Authorization": "Bearer tok"}) if url.startswith(self.origin) else Credentials()

        async def on_unauthorized(self, client: HttpClient, deadline: Deadline) -> bool:
            return False

    mine = GrpcBinding("127.0.0.1:7", V1, {}, ClientConfig(auth=Flow("http://127.0.0.1:7")))
    assert dict(mine._metadata_for(None))["authorization"] == "Bearer tok"
    other = GrpcBinding("127.0.0.1:7", V1, {}, ClientConfig(auth=Flow("http://elsewhere:7")))
    assert "authorization" not in dict(other._metadata_for(None))
