from __future__ import annotations

import pytest

from probe.checks.urls import diagnose, doubled_prefix

CARD = "https://gw.example.com/api/a2a/ns/name/.well-known/agent-card.json"


@pytest.mark.parametrize(("card", "advertised", "run"), [
    (CARD, "https://gw.example.com/api/a2a/api/a2a/ns/name", "/api/a2a"),
    (CARD, "https://gw.example.com/api/a2a/ns/name", None),
    (CARD, "https://gw.example.com/api/a2a/ns/name/", None),
    (CARD, "https://gw.example.com/api/a2a/ns/name/jsonrpc", None),
    # agentgateway #2981: pathPrefix /a2a/tick with urlRewrite /a2a/tock
    ("http://gateway/a2a/tick/.well-known/agent-card.json", "http://gateway/a2a/tick/a2a/tock/", "/a2a"),
    ("http://h/.well-known/agent-card.json", "http://h/a2a/jsonrpc", None),
    ("http://h/.well-known/agent-card.json", "http://h/a2a/a2a/jsonrpc", "/a2a"),
    # segment boundaries: weather vs weather-v2 is not a repetition
    ("http://gw/weather/.well-known/agent-card.json", "http://gw/weather-v2/weather", None),
])
def test_doubled_prefix(card: str, advertised: str, run: str | None) -> None:
    assert doubled_prefix(card, advertised) == run


@pytest.mark.parametrize(("card", "advertised", "check_id"), [
    (CARD, "http://agent.default.svc.cluster.local:8080/", "interface.routable_host"),
    (CARD, "http://kagent-controller.kagent.svc:8083/api/a2a/ns/name", "interface.routable_host"),
    (CARD, "http://0.0.0.0:8080/", "interface.routable_host"),
    (CARD, "http://localhost:8080/", "interface.routable_host"),
    (CARD, "https://10.0.3.4/a2a", "interface.routable_host"),
    (CARD, "http://gw.example.com/api/a2a/ns/name", "interface.scheme"),
    ("http://127.0.0.1:9/.well-known/agent-card.json", "http://0.0.0.0:9/", "interface.routable_host"),
])
def test_unroutable_and_scheme(card: str, advertised: str, check_id: str) -> None:
    assert check_id in {f.check_id for f in diagnose(card, advertised)}


@pytest.mark.parametrize("advertised", ["http://127.0.0.1:9/a2a", "http://localhost:9/a2a"])
def test_loopback_card_may_advertise_loopback(advertised: str) -> None:
    assert diagnose("http://127.0.0.1:9/.well-known/agent-card.json", advertised) == ()


def test_private_card_may_advertise_private_and_cluster_card_cluster() -> None:
    assert diagnose("http://10.1.2.3/.well-known/agent-card.json", "http://10.9.9.9/a2a") == ()
    assert diagnose("http://a.ns.svc/.well-known/agent-card.json", "http://b.ns.svc/a2a") == ()


def test_doubled_prefix_recommendation_names_the_fix() -> None:
    [f] = diagnose(CARD, "https://gw.example.com/api/a2a/api/a2a/ns/name")
    assert "base-URL setting should hold only scheme and host" in f.recommendation
    assert "https://gw.example.com/api/a2a/ns/name" in f.recommendation
