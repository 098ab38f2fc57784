"""The fleet's lasting state kept compact: a loaded config's agents share their default sub-models and fields-sets,
and behave exactly as agents that hold their own."""

from __future__ import annotations

from typing import Any

import pydantic
import pytest

from probe import config
from probe.config import Agent, Auth, CardSignatures, TlsConfig

FLEET = b"""
modules:
  m: {prober: ping, interval: 60s}
agents:
  - {name: a, url: "http://127.0.0.1:9/a", modules: [m]}
  - {name: b, url: "http://127.0.0.1:9/b", modules: [m]}
  - {name: c, url: "http://127.0.0.1:9/c", auth: {allowed_origins: ["http://127.0.0.1:10"]}, tls: {expiry_window: 1h}}
  - {name: d, url: "http://127.0.0.1:9/d", card_signatures: {policy: "off"}, labels: {team: x}}
"""


def test_a_loaded_fleet_shares_its_agents_defaults_and_keeps_everything_else() -> None:
    loaded = config.parse(FLEET, "fleet.yaml")
    a, b, c, d = loaded.agents
    assert a.auth is b.auth and a.tls is b.tls is d.tls and a.card_signatures is b.card_signatures is c.card_signatures
    assert a.auth == Auth() and a.tls == TlsConfig() and a.card_signatures == CardSignatures()
    assert c.auth is not a.auth and c.auth.allowed_origins == ["http://127.0.0.1:10"] and c.tls.expiry_window == 3600
    assert d.card_signatures is not a.card_signatures and d.card_signatures.policy == "off"
    assert a.__pydantic_fields_set__ is b.__pydantic_fields_set__ == {"name", "url", "modules"}
    assert c.__pydantic_fields_set__ == {"name", "url", "auth", "tls"}
    # the same agents as parsed without sharing: equal, the same dumps (exclude_unset too), the same Targets
    for shared in loaded.agents:
        own = Agent.model_validate(shared.model_dump(exclude_unset=True))
        assert shared == own and shared.model_dump() == own.model_dump()
        assert shared.model_dump(exclude_unset=True) == own.model_dump(exclude_unset=True)
        assert shared.target(5.0) == own.target(5.0)
    # frozen, so nothing changes the shared objects in place; a copy's fields-set is its own
    with pytest.raises(pydantic.ValidationError):
        a.auth.allowed_origins = ["http://x"]  # type: ignore[misc]
    copy = a.model_copy(update={"message": "hi"})
    assert "message" in copy.__pydantic_fields_set__ and "message" not in b.__pydantic_fields_set__
    # a reload of the same file gives equal agents (the scheduler keeps their jobs)
    assert config.parse(FLEET, "fleet.yaml").agents == loaded.agents


def _fleet_card(i: int, pad: int = 0) -> bytes:
    import json

    return json.dumps({"name": f"agent-{i:05d}", "description": "a fleet agent" + " " * pad, "version": "1.0.0",
                       "supportedInterfaces": [{"url": f"http://127.0.0.1:9/a/agent-{i:05d}/rpc",
                                                "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
                       "skills": [{"id": "echo", "name": "Echo", "description": "Echoes.", "tags": ["t"]}]}).encode()


def _entry(body: bytes) -> Any:
    from multidict import CIMultiDict, CIMultiDictProxy

    from probe.results import Exchange
    from probe.wire import cardcache as cc
    from probe.wire.card import build, parse
    from probe.wire.http import Response

    url = "http://127.0.0.1:9/a/x/.well-known/agent-card.json"
    h = CIMultiDict([("Content-Type", "application/json"), ("Cache-Control", "max-age=300"), ("ETag", '"v1"')])
    resp = Response(url, 200, CIMultiDictProxy(h), body, Exchange(method="GET", url=url, status=200))
    card = build(url=url, doc=parse(body), response=resp)
    card.requested = url
    key = cc.Key(base_url="http://127.0.0.1:9/a/x", card_url=None, a2a_version=None, tls=(),
                 allow_cross_origin_redirect=False)
    return cc.Entry.of(key, card, (), 200, cc.freshness(h, 0.0, 0.0), 0.0)


def test_cached_cards_are_compressed_against_the_first_card_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fleet's cards differ in names and URLs: each kept body holds little more than those (the first card
    small enough is the dictionary), and every card reads back byte for byte, on any thread."""
    import threading

    from probe.wire import cardcache as cc

    monkeypatch.setattr(cc, "_bodies", [])
    large = _fleet_card(0, pad=cc._MAX_DICTIONARY)
    big = _entry(large)  # too large to be the dictionary: compressed plainly
    assert cc._bodies == [] and big.body[:1] == cc._PLAIN and big.card().response.body == large
    entries = [_entry(_fleet_card(i)) for i in range(1, 100)]
    assert len(cc._bodies) == 1 and all(e.body[:1] == cc._WITH_DICTIONARY for e in entries)
    plain = len(cc._COMPRESSOR.compress(_fleet_card(50)))
    assert max(len(e.body) for e in entries) * 4 < plain, ([len(e.body) for e in entries[:3]], plain)
    for i, e in enumerate(entries, 1):
        card = e.card()
        assert card.response is not None and card.response.body == _fleet_card(i)
        assert card.doc["name"] == f"agent-{i:05d}"
    assert big.card().response.body == large
    seen: list[bytes] = []
    thread = threading.Thread(target=lambda: seen.append(entries[7].card().response.body))
    thread.start()
    thread.join()
    assert seen == [_fleet_card(8)]
