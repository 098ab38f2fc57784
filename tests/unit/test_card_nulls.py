"""ProtoJSON null is a field's default value: a capability flag sent as null is absent, as both official clients
read it. Found by the differential harness (tests/differential): `"streaming": null` (and pushNotifications,
extendedAgentCard; 0.3 supportsAuthenticatedExtendedCard) failed card.capabilities (MUST, card_invalid) while
a2a-sdk 1.3's `parse_agent_card` (json_format: "null is the default") and a2a-sdk 0.3's models
(`streaming: bool | None`) read the card and call the agent. 1.0 proto: `optional bool streaming = 1;` (no
field_behavior REQUIRED); 0.3 JSON schema: optional booleans."""

from __future__ import annotations

from typing import Any

import pytest

from probe.results import Status
from tests.agents.cards import valid_card
from tests.unit.test_card_rules import _checks, _must_failures, _official_0_3_parses, _official_1_0_parses

URL = "https://agent.example.com/rpc"


@pytest.mark.parametrize("flag", ["streaming", "pushNotifications", "extendedAgentCard"])
def test_a_1_0_null_capability_is_absent(flag: str) -> None:
    doc: dict[str, Any] = valid_card(URL)
    doc["capabilities"][flag] = None
    assert _official_1_0_parses(doc)
    assert _checks(doc)["card.capabilities"].status is Status.PASS
    assert not _must_failures(doc)


@pytest.mark.parametrize(("where", "key"), [("capabilities", "streaming"), ("capabilities", "pushNotifications"),
                                            ("", "supportsAuthenticatedExtendedCard")])
def test_a_0_3_null_capability_is_absent(where: str, key: str) -> None:
    doc: dict[str, Any] = valid_card(URL, version="0.3")
    (doc[where] if where else doc)[key] = None
    assert _official_0_3_parses(doc)
    assert _checks(doc)["card.capabilities"].status is Status.PASS
    assert not _must_failures(doc)


def test_a_string_flag_still_fails() -> None:
    doc: dict[str, Any] = valid_card(URL)
    doc["capabilities"]["streaming"] = "yes"
    assert not _official_1_0_parses(doc)
    assert _checks(doc)["card.capabilities"].status is Status.FAIL
