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


