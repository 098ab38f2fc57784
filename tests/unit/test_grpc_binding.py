"""The gRPC binding's pure parts: URL -> target and TLS, and the refusal where it cannot probe."""

from __future__ import annotations

import pytest

from probe.wire.bindings import BindingUnavailable
from probe.wire.bindings.grpc_binding import GrpcBinding, target_of
from probe.wire.dialects import V03, V1


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
