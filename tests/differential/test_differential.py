"""The probe reads each answer as the official client does: a curated set of the harness's mutants, each with the
agreement recorded in docs/conformance-audit.md ("Differential testing").

(official reads, probe passes): True where the official client read every call (and lost nothing it was sent) /
where the probe's verdict is its verdict on the valid answers. A row whose two values differ is a divergence the
audit decided to keep (the spec's MUST graded where a2a-sdk tolerates it), named in its comment. The full matrix:
`python -m tests.differential.harness` (about a minute a flavour).
"""

from __future__ import annotations

import pytest

from probe.wire.http import HttpClient
from tests.differential import harness
from tests.differential.mutants import V03_RPC, V10_REST, V10_RPC, Flavour, Mutant, generate

Case = tuple[Flavour, str, str, bool, bool]

CASES_10: list[Case] = [
    (V10_RPC, "card", "valid", True, True),
    (V10_RPC, "card", "null card.capabilities.streaming", True, True),  # fixed: null is absent (ProtoJSON)
    (V10_RPC, "card", "wrong type card.skills[0].examples", False, False),
    (V10_RPC, "card", "extra field card.capabilities", True, True),
    # fixed: a card's REQUIRED the parser reads past is card.required_fields' MUST finding; the calls decide
    (V10_RPC, "card", "drop card.name", True, True),
    # fixed: an interface without protocolVersion is called as 1.0 (a2a-sdk's last choice); the MUST is graded
    (V10_RPC, "card", "drop card.supportedInterfaces[0].protocolVersion", True, True),
    (V10_RPC, "card", "null card.supportedInterfaces[0].protocolVersion", True, True),  # null: absent, not "None"
    (V10_RPC, "card", "null card.skills", False, False),  # a2a-sdk's resolver iterates the skills: TypeError
    (V10_RPC, "send", "valid", True, True),
    (V10_RPC, "send", "valid message", True, True),
    (V10_RPC, "send", "extra field result.task", True, True),
    (V10_RPC, "send", "0.3 kind in 1.0 result.task", True, True),
    (V10_RPC, "send", "timestamp offset +02:00 result.task.status.timestamp", True, True),
    (V10_RPC, "send", "timestamp no zone result.task.status.timestamp", False, False),
    (V10_RPC, "send", "timestamp nanos result.task.status.timestamp", True, True),
    (V10_RPC, "send", "wrong type result.task.id", False, False),
    (V10_RPC, "send", "enum 0.3 spelling result.task.status.state = completed", False, False),  # read as UNSPECIFIED
    (V10_RPC, "send", "wrong type result.task", False, False),
    # fixed: ProtoJSON parsers read an enum's number (and its decimal string); a MUST of 1.0 §5.5, graded, not failed
    (V10_RPC, "send", "enum number result.task.status.state = 3", True, True),
    (V10_RPC, "send", "enum number as string result.task.status.state = 3", True, True),
    (V10_RPC, "send", "enum number result.message.role = 2", True, True),
    (V10_RPC, "stream", "enum number event3.statusUpdate.status.state = 3", True, True),
    (V10_REST, "send", "enum number result.task.status.state = 3", True, True),  # "x": read as an empty Task
    # fixed: ProtoJSON parsers read a field by its proto name too; the spelling is invoke.camel_case's MUST finding
    (V10_RPC, "send", "proto name result.task.contextId", True, True),
    (V10_RPC, "stream", "proto name event1.statusUpdate", True, True),
    (V10_REST, "stream", "proto name event2.artifactUpdate.artifact.artifactId", True, True),
    (V10_RPC, "send", "part with two contents result.message.parts[0] (+raw)", False, False),
    (V10_RPC, "send", "0.3 form (bare, kind) result", False, False),
    # fixed: REQUIRED (1.0 §5.7 MUST) json_format does not enforce: invoke.required_fields grades it, the verdict stays
    (V10_RPC, "send", "drop result.task.history[0].messageId", True, True),
    (V10_RPC, "send", "part without content result.message.parts[1]", True, True),
    (V10_RPC, "send", "null result.message.parts[3].raw", True, True),  # null is absent: a Part without content
    (V10_RPC, "send", "empty array result.task.artifacts[0].parts", True, True),
    (V10_RPC, "get", "null task.status.message.messageId", True, True),
    (V10_RPC, "stream", "drop event2.artifactUpdate.artifact.parts", True, True),
    (V10_REST, "stream", "part without content event0.task.history[0].parts[0]", True, True),
    (V10_RPC, "get", "valid", True, True),  # baseline: SendMessage answers WORKING, GetTask ends it
    (V10_RPC, "get", "wrong type task.contextId", False, False),
    (V10_RPC, "get", "extra field task.status", True, True),
    (V10_RPC, "stream", "valid", True, True),
    (V10_RPC, "stream", "wrong type event1.statusUpdate.taskId", False, False),  # fixed: was a probe_error
    (V10_RPC, "stream", "0.3 form (bare, kind) event1", False, False),  # an empty StreamResponse to the caller
    (V10_RPC, "stream", "extra field event2.artifactUpdate.artifact", True, True),
    (V10_REST, "send", "valid", True, True),
    (V10_REST, "send", "wrong type result.task.id", False, False),
    (V10_REST, "stream", "valid", True, True),
    (V10_REST, "stream", "bool as string event2.artifactUpdate.append", False, False),
]

CASES_03: list[Case] = [
    (V03_RPC, "card", "valid", True, True),
    (V03_RPC, "card", "null card.capabilities.streaming", True, True),  # fixed: null is absent (bool | None)
    (V03_RPC, "card", "wrong type card.protocolVersion", False, False),  # fixed: was sniffed as a 0.2 card
    # fixed: 0.3 §5.6.1's MUST (card.interfaces, graded); the models default it to JSONRPC and the calls decide
    (V03_RPC, "card", "drop card.preferredTransport", True, True),
    (V03_RPC, "send", "valid", True, True),
    (V03_RPC, "send", "1.0 form (wrapped) result", False, False),
    (V03_RPC, "send", "enum 1.0 spelling result.status.state = TASK_STATE_COMPLETED", False, False),
    (V03_RPC, "send", "drop result.kind", True, True),  # fixed: read by its fields as pydantic does; the 0.3 schema
    # requires kind: a MUST finding (invoke.dialect), the call stands (docs/conformance-audit.md, as timestamps_utc)
    (V03_RPC, "stream", "valid", True, True),
    (V03_RPC, "stream", "empty string event0.id", False, False),  # fixed: the 0.3 client stops ('no current Task')
    (V03_RPC, "stream", "empty string event3.taskId", True, True),  # an update's id: the tracker keeps the Task's
]


def _mutants(cases: list[Case]) -> list[Mutant]:
    by_id = {(m.flavour, m.target, m.name): m for f in {c[0] for c in cases} for m in generate(f)}
    return [by_id[(f, target, name)] for f, target, name, _, _ in cases]


async def _check(client: HttpClient, cases: list[Case]) -> None:
    outcomes = await harness.run(_mutants(cases), client)
    wrong = [f"{o.row()} (expected official {'reads' if off else 'refuses'}, probe {'passes' if ok else 'fails'})"
             for o, (_, _, _, off, ok) in zip(outcomes, cases, strict=True)
             if (o.official_ok, o.probe_ok) != (off, ok)]
    assert not wrong, "\n".join(wrong)
    # the valid answers pass both readers outright (their verdict is the baseline of every other row); "get" is
    # judged after a SendMessage that did not block, which the probe reports
    assert all(o.reason is None for o in outcomes if o.mutant.name == "valid" and o.mutant.target != "get"), \
        [o.row() for o in outcomes]


async def test_1_0_mutants_are_read_as_a2a_sdk_reads_them(client: HttpClient) -> None:
    await _check(client, CASES_10)


@pytest.mark.external  # a2a-sdk 0.3.26 runs in its own venv (tests/peers/venvs/sdk03)
async def test_0_3_mutants_are_read_as_a2a_sdk_0_3_reads_them(client: HttpClient) -> None:
    if not harness.SDK03_PYTHON.exists():
        pytest.skip("the sdk03 peer venv is not installed (.ci/run)")
    await _check(client, CASES_03)


@pytest.mark.parametrize(("flavour", "target", "name", "gap"), [
    (V10_RPC, "send", "drop result.task.history[0].messageId", "result.task.history[0].messageId"),
    (V10_RPC, "stream", "drop event2.artifactUpdate.artifact.parts", "event 2.artifactUpdate.artifact.parts"),
    (V10_REST, "get", "part without content task.artifacts[0].parts[0]", "GetTask: result.artifacts[0].parts[0]"),
])
async def test_a_required_gap_is_graded_and_the_verdict_stays(client: HttpClient, flavour: Flavour, target: str,
                                                              name: str, gap: str) -> None:
    """1.0 §5.7 (MUST) graded by invoke.required_fields; the call works through a2a-sdk, so no step fails."""
    m, = _mutants([(flavour, target, name, True, True)])
    async with harness.served([m]) as (base,):
        assert await harness.official10(m, base) is None
        _, _, r = await harness.probe(client, m, base)
    check = r.check("invoke.required_fields")
    assert check is not None and check.status.value == "fail" and check.severity.value == "MUST", check
    assert gap in check.message, check.message
    schema_check = r.check("stream.schema" if target == "stream" else "invoke.schema")
    assert schema_check is not None and schema_check.status.value == "pass", schema_check
    assert r.reason is None or r.reason.value == "invoke_not_blocking", r.reason  # "get": SendMessage said WORKING


@pytest.mark.parametrize(("name", "check_id", "gap"), [
    ("drop card.name", "card.required_fields", "name is missing"),
    ("drop card.skills[0].tags", "card.skills", "tags"),
])
async def test_a_card_gap_the_parser_reads_past_is_graded_and_the_verdict_stays(
        client: HttpClient, name: str, check_id: str, gap: str) -> None:
    """1.0 §5.7 (MUST) graded on the card; a2a-sdk reads the card and calls the agent, so the verdict is the calls'
    (the level non-conformant: a card MUST), never card_invalid."""
    m, = _mutants([(V10_RPC, "card", name, True, True)])
    async with harness.served([m]) as (base,):
        assert await harness.official10(m, base) is None
        _, _, r = await harness.probe(client, m, base)
    check = r.check(check_id)
    assert check is not None and check.status.value == "fail" and check.severity.value == "MUST", check
    assert gap in check.message, check.message
    assert r.success and r.reason is None, r.reason
