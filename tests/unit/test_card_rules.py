"""Card rules graded at the level each version's text gives them (docs/conformance-audit.md). Each case is a real
card payload, and each states whether the official parser reads it: a2a-sdk's own (1.0:
`a2a.client.card_resolver.parse_agent_card`, protobuf's json_format after its 0.3-form mapping; 0.3: the models
of the 0.3 JSON schema its 0.3 client validated cards with)."""

from __future__ import annotations

import copy
from typing import Any

import pydantic
import pytest
from a2a.client.card_resolver import parse_agent_card
from a2a.compat.v0_3 import types as t03
from google.protobuf import json_format

from probe.checks import card as checks
from probe.checks import grading
from probe.results import CheckResult, ProbeResult, Severity, Status
from probe.wire import card as wire
from tests.agents.cards import valid_card

URL = "https://agent.example/.well-known/agent-card.json"


def _checks(doc: dict[str, Any]) -> dict[str, CheckResult]:
    card = wire.build(url=URL, doc=doc)
    result = ProbeResult(agent="t", target_url=URL)
    result.protocol_version = card.family
    result.checks = checks.validate(card)
    grading.grade(result)
    return {c.id: c for c in result.checks}


def _must_failures(doc: dict[str, Any]) -> set[str]:
    return {cid for cid, c in _checks(doc).items() if c.status is Status.FAIL and c.severity is Severity.MUST}


def _official_1_0_parses(doc: dict[str, Any]) -> bool:
    try:
        parse_agent_card(copy.deepcopy(doc))
    except json_format.ParseError:
        return False
    return True


def _official_0_3_parses(doc: dict[str, Any]) -> bool:
    try:
        t03.AgentCard.model_validate(doc)
    except pydantic.ValidationError:
        return False
    return True


# --- 1.0 §3.6.1: "Patch version numbers SHOULD NOT be used in requests, responses and Agent Cards" (a SHOULD)

def test_a_patch_version_in_an_interface_is_a_should_not_an_invalid_card() -> None:
    doc = valid_card(("https://agent.example/a2a", "JSONRPC", "1.0.0"))
    assert _official_1_0_parses(doc)
    got = _checks(doc)
    assert got["card.interfaces"].status is Status.PASS, got["card.interfaces"].message  # before: MUST failed
    pv = got["card.protocol_version"]
    assert pv.status is Status.FAIL and pv.severity is Severity.SHOULD
    assert "'1.0.0' has a patch number" in pv.message and "§3.6.1" in pv.message
    assert not _must_failures(doc)
    card = wire.build(url=URL, doc=doc)
    assert card.interfaces[0].version == "1.0.0"


def test_a_version_that_is_not_major_minor_still_fails_the_must() -> None:
    for bad in ("1", "v1.0", "latest", "1.0.0.0"):
        got = _checks(valid_card(("https://agent.example/a2a", "JSONRPC", bad)))
        assert got["card.interfaces"].status is Status.FAIL, bad
        assert "is not Major.Minor" in got["card.interfaces"].message


# --- custom bindings: an open-form string (1.0 proto; 1.0.1 §5.8 SHOULD be a URI; 0.3 §5.5.5 "MAY be used")

@pytest.mark.parametrize("binding", ["https://example.com/bindings/websocket/v1", "WEBSOCKET"])
def test_a_custom_binding_beside_a_core_one_is_valid(binding: str) -> None:
    doc = valid_card("https://agent.example/a2a", ("wss://agent.example/a2a/ws", binding, "1.0"))
    assert _official_1_0_parses(doc)
    got = _checks(doc)
    assert got["card.interfaces"].status is Status.PASS, got["card.interfaces"].message  # before: MUST failed
    assert not _must_failures(doc)


def test_a_core_http_binding_still_needs_an_http_url() -> None:
    got = _checks(valid_card(("wss://agent.example/a2a", "JSONRPC", "1.0")))["card.interfaces"]
    assert got.status is Status.FAIL and "not an absolute http(s) URL" in got.message


def test_0_3_custom_transports_are_allowed() -> None:
    doc = valid_card("https://agent.example/a2a", version="0.3", preferredTransport="WEBSOCKET",
                     additionalInterfaces=[{"url": "https://agent.example/a2a", "transport": "JSONRPC"}])
    assert _official_0_3_parses(doc)
    assert _checks(doc)["card.interfaces"].status is Status.PASS  # before: "is not JSONRPC, GRPC or HTTP+JSON"


def test_0_3_preferred_transport_must_be_present() -> None:
    doc = valid_card("https://agent.example/a2a", version="0.3")
    del doc["preferredTransport"]
    got = _checks(doc)["card.interfaces"]
    assert got.status is Status.FAIL and got.severity is Severity.MUST  # before: passed
    assert "preferredTransport is missing" in got.message and "§5.6.1" in got.message
    doc_02 = valid_card("https://agent.example/a2a", version="0.2")  # 0.2 has no preferredTransport
    assert _checks(doc_02)["card.interfaces"].status is not Status.FAIL


# --- OAuth flows: 1.0 requires what its proto marks REQUIRED, 0.3 what its JSON schema requires

def _oauth(flows: dict[str, Any], *, v1: bool = True) -> dict[str, Any]:
    scheme = {"oauth2SecurityScheme": {"flows": flows}} if v1 else {"type": "oauth2", "flows": flows}
    version = "1.0" if v1 else "0.3"
    return valid_card("https://agent.example/a2a", version=version, securitySchemes={"oauth": scheme},
                      **({"securityRequirements": [{"schemes": {"oauth": {"list": []}}}]} if v1
                         else {"security": [{"oauth": []}]}))


@pytest.mark.parametrize("flows", [
    {"implicit": {}},  # deprecated in 1.0, no REQUIRED field
    {"password": {"tokenUrl": "https://idp.example/token"}},
    {"clientCredentials": {"tokenUrl": "https://idp.example/token"}},  # ProtoJSON omits the empty scopes map
])
def test_1_0_flows_need_only_what_the_proto_requires(flows: dict[str, Any]) -> None:
    doc = _oauth(flows)
    assert _official_1_0_parses(doc)
    assert _checks(doc)["card.security_schemes"].status is Status.PASS  # before: "needs a scopes map" and more
    assert not _must_failures(doc)


@pytest.mark.parametrize(("flows", "missing"), [
    ({"implicit": {"scopes": {}}}, "needs authorizationUrl"),
    ({"password": {"tokenUrl": "https://idp.example/token"}}, "needs a scopes map"),
    ({"clientCredentials": {"tokenUrl": "https://idp.example/token"}}, "needs a scopes map"),
])
def test_0_3_flows_need_what_its_schema_requires(flows: dict[str, Any], missing: str) -> None:
    doc = _oauth(flows, v1=False)
    assert not _official_0_3_parses(doc)
    got = _checks(doc)["card.security_schemes"]
    assert got.status is Status.FAIL and missing in got.message


def test_1_0_device_code_still_needs_its_urls() -> None:
    got = _checks(_oauth({"deviceCode": {"tokenUrl": "https://idp.example/token"}}))["card.security_schemes"]
    assert got.status is Status.FAIL and "needs deviceAuthorizationUrl" in got.message




# --- 0.2.5 §5.5: protocolVersion is required ("the version of the A2A protocol this agent supports"), no more

_CARD_02 = {"name": "a", "description": "d", "url": "https://agent.example/", "version": "1",
            "capabilities": {}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "skills": [{"id": "s", "name": "s", "description": "d", "tags": ["t"]}]}


def test_a_0_2_card_that_declares_its_version_is_not_blamed_for_being_0_2() -> None:
    """a2a-sdk 0.2.16's card says protocolVersion 0.2.6: what 0.2.5 §5.5 asks (before: a SHOULD failure)."""
    pv = _checks(_CARD_02 | {"protocolVersion": "0.2.6"})["card.protocol_version"]
    assert pv.status is Status.PASS and "declared 0.2.6" in pv.message


def test_a_0_2_card_without_protocol_version_still_fails() -> None:
    pv = _checks(_CARD_02)["card.protocol_version"]
    assert pv.status is Status.FAIL and pv.severity is Severity.SHOULD and "declares no protocolVersion" in pv.message
