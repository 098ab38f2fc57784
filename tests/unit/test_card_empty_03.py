"""0.3 and 0.2 cards may hold empty strings and arrays in their required fields: no text of theirs forbids it, and
a2a-sdk 0.3's resolver reads them. Found by the differential harness: a 0.3 card with `"name": ""`,
`"defaultInputModes": []` or a skill whose `id` is "" failed card.required_fields / card.skills (MUST, card_invalid)
while the 0.3 models accept it and the client calls the agent. The 0.3 JSON schema types them `string` / `array`
without minLength or minItems; only 1.0 §5.7 says a REQUIRED field MUST be "present and set" and a required array
MUST hold an element (kept: a 1.0 card with "" or [] still fails)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.agents.cards import valid_card
from tests.unit.test_card_rules import _must_failures, _official_0_3_parses

URL = "https://agent.example.com/rpc"


def _edit(doc: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    holder = doc
    for p in path[:-1]:
        holder = holder[p]
    holder[path[-1]] = value
    return doc


CASES = [(("name",), ""), (("description",), ""), (("version",), ""), (("defaultInputModes",), []),
         (("defaultOutputModes",), []), (("skills", 0, "id"), ""), (("skills", 0, "name"), ""),
         (("skills", 0, "description"), "")]


@pytest.mark.parametrize(("path", "value"), CASES)
def test_a_0_3_card_may_hold_empty_values(path: tuple[Any, ...], value: Any) -> None:
    doc = _edit(valid_card(URL, version="0.3"), path, value)
    assert _official_0_3_parses(doc)
    assert not _must_failures(doc)


@pytest.mark.parametrize(("path", "value"), CASES)
def test_a_1_0_card_may_not(path: tuple[Any, ...], value: Any) -> None:
    doc = _edit(valid_card(URL), path, value)
    assert _must_failures(doc) & {"card.required_fields", "card.skills", "card.schema"}
