"""A card MUST the official clients read past is graded, and the verdict is the calls': card_invalid only where
their parsers refuse the card (docs/conformance-audit.md, "a card MUST the official clients read past").

Found on Mastra's 0.3 card (no preferredTransport: 0.3 §5.6.1 MUST; a2a-sdk 0.3's models default it to JSONRPC)
and by the differential harness (a 1.0 card without `name`, an interface without `protocolVersion`: a2a-sdk 1.3's
`parse_agent_card` does not enforce REQUIRED, and `_find_best_interface` takes a versionless interface as 1.0).
Each case fails without `probe.checks.card.judge` / `probe.wire.card.dialect_of`: it was card_invalid."""

from __future__ import annotations

from typing import Any

import pytest

from probe.engine import execute
from probe.levels import Level, level
from probe.reasons import Reason
from probe.results import Severity, Status, StepName
from probe.target import Target
from probe.wire import card as cardwire
from probe.wire.bindings import Op
from probe.wire.bindings.fake import FakeBinding, result
from probe.wire.http import HttpClient
from tests.agents.cards import valid_card

URL = "http://agent.test/rpc"
DONE = {"task": {"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_COMPLETED"},
                 "artifacts": [{"artifactId": "a1", "parts": [{"text": "echo: hi"}]}]}}
DONE_03 = {"kind": "task", "id": "t1", "contextId": "c1", "status": {"state": "completed"},
           "artifacts": [{"artifactId": "a1", "parts": [{"kind": "text", "text": "echo: hi"}]}]}


def _without(doc: dict[str, Any], *path: Any) -> dict[str, Any]:
    holder = doc
    for p in path[:-1]:
        holder = holder[p]
    del holder[path[-1]]
    return doc


async def _probe(doc: dict[str, Any], answer: dict[str, Any]) -> Any:
    card = cardwire.build(url="http://agent.test/.well-known/agent-card.json", doc=doc)
    def fake(ctx: Any) -> FakeBinding:  # in the dialect the probe chose from the card
        return FakeBinding({Op.SEND: [result(answer)]}, dialect=ctx.dialect)

    run = await execute(Target(name="read-past", url="http://agent.test", timeout=5.0, expect_text="echo"),
                        HttpClient(), steps=(StepName.INVOKE,), bindings={"JSONRPC": fake}, card=card)
    return run.r


@pytest.mark.parametrize(("doc", "answer", "check_id", "words"), [
    (_without(valid_card(URL), "name"), DONE, "card.required_fields", "name is missing"),
    (_without(valid_card(URL), "skills", 0, "tags"), DONE, "card.skills", "tags"),
    (_without(valid_card(URL), "supportedInterfaces", 0, "protocolVersion"), DONE, "card.interfaces",
     "protocolVersion is missing"),
    (_without(valid_card(URL, version="0.3"), "preferredTransport"), DONE_03, "card.interfaces",
     "preferredTransport is missing"),
], ids=["1.0 no name", "1.0 skill without tags", "1.0 interface without version", "0.3 no preferredTransport"])
async def test_a_must_the_clients_read_past_is_graded_and_the_calls_decide(
        doc: dict[str, Any], answer: dict[str, Any], check_id: str, words: str) -> None:
    r = await _probe(doc, answer)
    assert r.success and r.reason is None, (r.reason, r.problem)
    check = r.check(check_id)
    assert check is not None and check.status is Status.FAIL and check.severity is Severity.MUST, check
    assert words in check.message and check.reason is None, check
    assert r.protocol_version == ("0.3" if "preferredTransport" in words else "1.0")
    assert level(r) is Level.NON_CONFORMANT  # a card MUST: never conformant, only not down


@pytest.mark.parametrize(("doc", "words"), [
    (valid_card(URL, capabilities="all of them"), "capabilities"),  # protobuf's parser refuses it
    ({**valid_card(URL), "skills": None}, "skills"),  # a2a-sdk's resolver iterates the skills: TypeError
])
async def test_a_card_the_clients_refuse_is_card_invalid(doc: dict[str, Any], words: str) -> None:
    r = await _probe(doc, DONE)
    assert not r.success and r.reason is Reason.CARD_INVALID
    carrier = next(c for c in r.failed_checks() if c.reason is Reason.CARD_INVALID)
    assert words in carrier.message, carrier


async def test_an_interface_version_1_is_1_0_as_the_official_client_reads_it() -> None:
    doc = valid_card((URL, "JSONRPC", "1"))
    r = await _probe(doc, DONE)
    assert r.success and r.protocol_version == "1.0", (r.reason, r.problem)
