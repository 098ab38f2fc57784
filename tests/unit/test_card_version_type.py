"""A card whose protocolVersion is no string is refused by both official clients, so it is invalid (a MUST of
card.required_fields), not read as an 0.2 card without a version. Found by the differential harness: a 0.3 card
with `"protocolVersion": 7` passed every MUST (sniffed as 0.2, card.protocol_version a SHOULD: 'declares no
protocolVersion') while a2a-sdk 0.3's resolver refuses it ('Input should be a valid string') and a2a-sdk 1.3's
parse_agent_card too (json_format: 'protocolVersion field: expected string'): no call is ever made. The 0.3 and
0.2.5 JSON schemas type it `string` (REQUIRED in both)."""

from __future__ import annotations

from typing import Any

import pytest

from probe.results import Status
from tests.agents.cards import valid_card
from tests.unit.test_card_rules import _checks, _must_failures, _official_0_3_parses, _official_1_0_parses

URL = "https://agent.example.com/rpc"


@pytest.mark.parametrize("bad", [7, {"x": 1}, ["0.3.0"], True])
def test_a_non_string_protocol_version_is_invalid(bad: Any) -> None:
    doc: dict[str, Any] = valid_card(URL, version="0.3")
    doc["protocolVersion"] = bad
    assert not _official_0_3_parses(doc) and not _official_1_0_parses(doc)
    check = _checks(doc)["card.required_fields"]
    assert check.status is Status.FAIL and "protocolVersion" in check.message, check
    assert "card.required_fields" in _must_failures(doc)


def test_a_0_2_card_without_a_version_is_unchanged() -> None:
    doc: dict[str, Any] = valid_card(URL, version="0.3")
    del doc["protocolVersion"], doc["preferredTransport"]
    assert _checks(doc)["card.required_fields"].status is Status.PASS


def test_a_1_0_card_ignores_a_top_level_protocol_version() -> None:
    doc: dict[str, Any] = valid_card(URL)
    doc["protocolVersion"] = 7  # no 1.0 field: unknown, ignored (a2a-sdk 1.3 reads supportedInterfaces)
    assert _official_1_0_parses(doc)
    assert _checks(doc)["card.required_fields"].status is Status.PASS
