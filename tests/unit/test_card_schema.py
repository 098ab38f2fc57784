"""Cards judged as strictly as the official clients parse them (card.schema; docs/conformance-audit.md): 1.0 as
a2a-sdk's resolver hands it to protobuf's json_format, 0.3 by the models of the 0.3 JSON schema its 0.3 client
validated cards with; 1.0 §5.7's required fields and non-empty required arrays on top (a MUST of the text)."""

from __future__ import annotations

from typing import Any

import pytest

from probe.results import Severity, Status
from tests.agents.cards import valid_card
from tests.unit.test_card_rules import _checks, _must_failures, _oauth, _official_0_3_parses, _official_1_0_parses


def _v1(**extra: Any) -> dict[str, Any]:
    return valid_card("https://agent.example/a2a", **extra)


_SKILL = {"id": "echo", "name": "Echo", "description": "echoes", "tags": ["test"]}

REFUSED_1_0 = {
    "examples as a string": _v1(skills=[_SKILL | {"examples": "say hi"}]),
    "inputModes as a string": _v1(skills=[_SKILL | {"inputModes": "text/plain"}]),
    "streaming as a string": _v1(capabilities={"streaming": "yes"}),
    "extension required as a string": _v1(capabilities={"extensions": [{"uri": "urn:x", "required": "true"}]}),
    "provider as a number": _v1(provider=7),
    "two OAuth flows in the one-of": _oauth({
        "authorizationCode": {"authorizationUrl": "https://idp.example/a", "tokenUrl": "https://idp.example/t",
                              "scopes": {}},
        "clientCredentials": {"tokenUrl": "https://idp.example/t", "scopes": {}}}),
    "a scheme with two kinds": _v1(securitySchemes={"k": {
        "apiKeySecurityScheme": {"name": "X-Key", "location": "header"},
        "httpAuthSecurityScheme": {"scheme": "bearer"}}}),
    "iconUrl as a number": _v1(iconUrl=7),
}


# what a field check already fails (capabilities.streaming is not a boolean) it names, card.schema the rest
FIELD_CHECKED = {"streaming as a string": "card.capabilities"}


@pytest.mark.parametrize("case", sorted(REFUSED_1_0))
def test_a_1_0_card_the_official_parser_refuses_is_invalid(case: str) -> None:
    doc = REFUSED_1_0[case]
    assert not _official_1_0_parses(doc), case
    got = _checks(doc)
    cid = FIELD_CHECKED.get(case, "card.schema")
    assert got[cid].status is Status.FAIL and got[cid].severity is Severity.MUST, (case, got[cid].message)
    assert _must_failures(doc) == {cid}, case  # named once; before, only card.capabilities saw any of these


ACCEPTED_1_0 = {
    "unknown fields": _v1(**{"x-vendor": {"a": 1}}, skills=[_SKILL | {"x-rank": 3}]),
    "the JS SDK's empty fields": _v1(documentationUrl="", securitySchemes={}, signatures=[],
                                     supportedInterfaces=[{"url": "https://agent.example/a2a", "tenant": "",
                                                           "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]),
    "0.3-form schemes and security in a hybrid card": _v1(
        url="https://agent.example/a2a", protocolVersion="0.3.0", preferredTransport="JSONRPC",
        supportsAuthenticatedExtendedCard=False,
        securitySchemes={"key": {"type": "apiKey", "in": "header", "name": "X-Key"},
                         "bearer": {"type": "http", "scheme": "bearer"}},
        security=[{"key": []}, {"bearer": []}]),
    "a provider and a skill's own security": _v1(
        provider={"organization": "Example", "url": "https://example.com"},
        securitySchemes={"bearer": {"httpAuthSecurityScheme": {"scheme": "bearer"}}},
        skills=[_SKILL | {"securityRequirements": [{"schemes": {"bearer": {"list": []}}}]}]),
}


@pytest.mark.parametrize("case", sorted(ACCEPTED_1_0))
def test_a_1_0_card_the_official_parser_accepts_passes_card_schema(case: str) -> None:
    doc = ACCEPTED_1_0[case]
    assert _official_1_0_parses(doc), case
    got = _checks(doc)
    assert got["card.schema"].status is Status.PASS, (case, got["card.schema"].message)
    assert not _must_failures(doc), {c: got[c].message for c in _must_failures(doc)}


@pytest.mark.parametrize(("doc", "where"), [
    (_v1(skills=[]), "card.skills: required field is missing"),
    (_v1(skills=[_SKILL | {"tags": []}]), "card.skills[0].tags: required field is missing"),
    (_v1(provider={"organization": "Example"}), "card.provider.url: required field is missing"),
    (_v1(signatures=[{"protected": "eyJhbGciOiJFUzI1NiJ9"}]), "card.signatures[0].signature: required field"),
])
def test_1_0_required_fields_and_non_empty_required_arrays(doc: dict[str, Any], where: str) -> None:
    # 1.0 §5.7: REQUIRED fields "MUST be present and set"; "Arrays marked as required MUST contain at least one
    # element" (json_format itself does not enforce field_behavior: the text's MUST does)
    got = _checks(doc)["card.schema"]
    assert got.status is Status.FAIL and where in got.message, got.message


@pytest.mark.parametrize(("doc", "where"), [
    (valid_card("https://agent.example/a2a", version="0.3", provider={"organization": "Example"}), "provider.url"),
    (valid_card("https://agent.example/a2a", version="0.3", skills=[_SKILL | {"examples": "say hi"}]),
     "skills[0].examples"),
    (valid_card("https://agent.example/a2a", version="0.3",
                capabilities={"extensions": [{"description": "no uri"}]}), "capabilities.extensions[0].uri"),
])
def test_a_0_3_card_its_schema_refuses_fails_card_schema(doc: dict[str, Any], where: str) -> None:
    assert not _official_0_3_parses(doc)
    got = _checks(doc)["card.schema"]
    assert got.status is Status.FAIL and where in got.message, got.message  # before: the card passed


def test_a_field_already_failed_is_named_once() -> None:
    doc = _v1()
    del doc["description"]
    got = _checks(doc)
    assert got["card.required_fields"].status is Status.FAIL
    assert got["card.schema"].status is Status.PASS  # the same missing field, reported by the field check only


def test_0_2_cards_are_left_to_the_field_checks() -> None:
    got = _checks(valid_card("https://agent.example/a2a", version="0.2"))["card.schema"]
    assert got.status is Status.SKIP
