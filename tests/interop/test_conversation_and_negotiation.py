"""The TCK gaps of issue 9 as live checks: multi-turn ids and contexts, a request without A2A-Version, unknown
request fields, an unsupported part media type, a required extension (and its echo), the extended card without
credentials, the suite's own results held to the data model (camelCase, RFC 3339);
and the version-graded cases as live fault agents (0.3 push codes, the 0.2 extended card, 0.3 subscribe-first)."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp import web
from pydantic import SecretStr

from probe.engine import run_probe
from probe.levels import Level, level
from probe.results import ProbeResult, Status, StepName
from probe.suite import SuiteOptions, run_suite
from probe.target import AuthSpec, Target
from probe.wire.http import HttpClient
from tests.agents.catalogue import run_agent
from tests.agents.sloppy import Sloppy, sloppy_agent
from tests.agents.versioned import rpc, versioned_agent

GAPS = ("lifecycle.unique_task_ids", "lifecycle.context_inferred", "lifecycle.context_mismatch_rejected",
        "lifecycle.unknown_fields_ignored", "errors.content_type_not_supported", "errors.extension_required",
        "errors.missing_version_is_0_3", "security.extended_card_auth", "lifecycle.extensions_echoed",
        "lifecycle.schema", "errors.patch_version_ignored")
EXTENSIONS_CARD = {"capabilities": {"streaming": True, "extendedAgentCard": True,
                                    "extensions": [{"uri": "https://example.com/ext/signed/v1", "required": True}]}}
TOKEN = {"Authorization": SecretStr("Bearer sloppy-token")}
# the same fault seen by an older check as well: one id for every task restarts the completed one; an agent that
# ignores A2A-Version accepts 99.0 too
COLLATERAL = {"same_task_id": {"lifecycle.context_continuity", "lifecycle.message_to_terminal"},
              "version": {"errors.version_not_supported"}}


async def _suite(client: HttpClient, url: str, **target: Any) -> ProbeResult:
    return await run_suite(Target(name="t", url=url, timeout=5.0, **target), client,
                           SuiteOptions(timeout=30.0, input_prompt="input please"))


async def test_a_conforming_agent_passes_every_gap_check(client: HttpClient) -> None:
    async with sloppy_agent(Sloppy(set(), card_extra=EXTENSIONS_CARD)) as url:
        result = await _suite(client, url, headers=TOKEN)
    for check_id in GAPS:
        c = result.check(check_id)
        assert c is not None and c.status is Status.PASS, (check_id, c)
    assert "HTTP 401" in (result.check("security.extended_card_auth") or _never()).message
    assert {n["id"] for n in _not_tested(result)}.isdisjoint(
        {"multi_turn_context", "unknown_fields_ignored", "content_type_not_supported", "extension_required",
         "no_version_is_0_3", "extended_card_auth"})  # the notTested list shrank


def _never() -> Any:
    raise AssertionError("check missing")


def _not_tested(result: ProbeResult) -> list[dict[str, Any]]:
    from probe.report import to_dict

    return list(to_dict(result)["notTested"])


@pytest.mark.parametrize(("broken", "check_id", "severity", "seen", "lvl"), [
    # one id for every task also restarts the completed one (two more lifecycle checks see that)
    ("same_task_id", "lifecycle.unique_task_ids", "MUST", "both got the id the-one-task", Level.MINIMAL),
    ("context_inferred", "lifecycle.context_inferred", "MUST", "got contextId", Level.MINIMAL),
    ("context_mismatch", "lifecycle.context_mismatch_rejected", "MUST", "was accepted", Level.MINIMAL),
    ("unknown_fields", "lifecycle.unknown_fields_ignored", "SHOULD", "a2aProbeUnknownField", Level.PARTIAL),
    ("content_type", "errors.content_type_not_supported", "SHOULD", "expected ContentTypeNotSupportedError",
     Level.PARTIAL),
    ("version", "errors.missing_version_is_0_3", "MUST", "served with 1.0 semantics", Level.PARTIAL),
    # 1.0 §3.6: patch numbers MUST not be considered in negotiation (the TCK's VER-CLIENT-002)
    ("patch_version", "errors.patch_version_ignored", "MUST", "A2A-Version: 1.0.1 was refused: ", Level.PARTIAL),
    ("extension", "errors.extension_required", "MUST", "expected ExtensionSupportRequiredError", Level.PARTIAL),
    ("extended_card_auth", "security.extended_card_auth", "MUST", "the extended card was served", Level.PARTIAL),
    ("extensions_echo", "lifecycle.extensions_echoed", "SHOULD", "A2A-Extensions header is missing", Level.PARTIAL),
    # a GetTask answer the official clients cannot parse, after a first send they could
    ("zoneless", "lifecycle.schema", "MUST", "'2026-03-01T10:00:00' has no time zone", Level.MINIMAL),
])
async def test_each_gap_check_fails_on_its_fault(client: HttpClient, broken: str, check_id: str, severity: str,
                                                 seen: str, lvl: Level) -> None:
    async with sloppy_agent(Sloppy({broken}, card_extra=EXTENSIONS_CARD)) as url:
        result = await _suite(client, url, headers=TOKEN)
    c = result.check(check_id)
    assert c is not None and c.status is Status.FAIL and c.severity == severity, c
    assert seen in c.message and c.recommendation
    assert result.success  # the basic probe is fine: a conformance finding, not a broken agent
    others = {f.id for f in result.failed_checks()} - {check_id}
    assert others == COLLATERAL.get(broken, set()), others
    assert level(result) is lvl


async def test_the_gap_checks_are_graded_by_0_3_text(client: HttpClient) -> None:
    async with run_agent("healthy_03") as agent:
        result = await _suite(client, agent.origin or "", a2a_version="0.3")
    graded = {c.id: c for c in result.checks}
    assert graded["errors.content_type_not_supported"].status is Status.PASS
    assert graded["errors.content_type_not_supported"].severity == "SHOULD"  # 0.3 §8.2: servers SHOULD use it
    assert graded["lifecycle.unique_task_ids"].status is Status.PASS
    for one_0_only in ("lifecycle.context_inferred", "lifecycle.context_mismatch_rejected",
                       "errors.missing_version_is_0_3", "lifecycle.unknown_fields_ignored"):
        assert graded[one_0_only].status is Status.SKIP
        assert graded[one_0_only].message.startswith("not graded: A2A 0.3 has no such requirement")


async def test_a_rest_agent_is_held_to_the_same_gap_checks(client: HttpClient) -> None:
    from tests.agents.rest_mapping import rest_mapping_agent

    async with rest_mapping_agent("1.0.1") as origin:
        result = await run_suite(Target(name="r", url=origin, binding="HTTP+JSON", timeout=3.0), client,
                                 SuiteOptions(timeout=15.0))
    content = result.check("errors.content_type_not_supported")
    assert content is not None and content.status is Status.PASS, content
    assert "HTTP 400 ContentTypeNotSupportedError (CONTENT_TYPE_NOT_SUPPORTED)" in content.message
    unknown = result.check("lifecycle.unknown_fields_ignored")
    assert unknown is not None and unknown.status is Status.PASS  # over the HTTP+JSON body too
    version = result.check("errors.missing_version_is_0_3")  # this agent ignores the header: 1.0 semantics
    assert version is not None and version.status is Status.FAIL and "TaskNotFoundError" in version.message


# ---- the version-graded cases, live (they were grading unit tests only)

async def test_a_0_3_agent_with_another_push_code_misses_a_should_not_a_must(client: HttpClient) -> None:
    async with run_agent("push_code_03") as agent:
        result = await run_suite(Target(name="p", url=agent.origin or "", a2a_version="0.3", timeout=5.0), client,
                                 SuiteOptions(timeout=30.0))
    assert result.protocol_version == "0.3" and result.success and result.reason is None
    push = result.check("errors.push_not_supported")
    assert push is not None and push.status is Status.FAIL and push.severity == "SHOULD"
    assert "-32004" in push.message and "-32003" in push.message
    assert {c.id for c in result.failed_checks()} == {"errors.push_not_supported"}
    assert level(result) is Level.PARTIAL  # a 1.0 agent doing the same breaks a MUST (§3.3.4)


async def test_a_0_2_agent_serves_its_extended_card_by_get_and_is_labelled_0_2(client: HttpClient) -> None:
    extended = {"name": "agent-0.2", "description": "extended", "version": "1.0.0", "url": "x",
                "capabilities": {}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
                "skills": [{"id": "s", "name": "s", "description": "d", "tags": ["t"]},
                           {"id": "vip", "name": "vip", "description": "for callers with credentials", "tags": ["t"]}]}

    async def extended_card(request: web.Request) -> web.Response:
        if request.headers.get("Authorization") != "Bearer xcard":
            return web.Response(status=401, headers={"WWW-Authenticate": "Bearer"}, text="credentials needed")
        return web.json_response(extended)

    task = {"kind": "task", "id": "t1", "contextId": "c1", "status": {"state": "completed"},
            "artifacts": [{"artifactId": "a", "parts": [{"kind": "text", "text": "done"}]}]}
    card_extra = {"supportsAuthenticatedExtendedCard": True,
                  "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}, "security": [{"bearer": []}]}
    async with versioned_agent("0.2", {"message/send": rpc(task), "tasks/get": rpc(task)}, card_headers={},
                               card_extra=card_extra,
                               routes={"GET /agent/authenticatedExtendedCard": extended_card}) as origin:
        target = Target(name="x", url=origin, timeout=5.0, auth=AuthSpec(bearer=SecretStr("xcard")))
        basic = await run_probe(target, client, steps=(StepName.INVOKE,))
        suite = await run_suite(target, client, SuiteOptions(timeout=20.0, safe_only=True))
    assert basic.protocol_version == "0.2" and basic.success and basic.reason is None
    card = basic.check("card.extended")
    assert card is not None and card.status is Status.PASS and "vip" in card.message
    step = basic.step(StepName.EXTENDED_CARD)
    assert step is not None and step.a2a_method == "GET agent/authenticatedExtendedCard"
    assert [e.method for e in step.exchanges] == ["GET"]
    # a 0.2 card that declares its version meets 0.2.5 §5.5: being 0.2 is no finding against it
    assert [c.id for c in basic.failed_checks()] == []
    assert level(basic) is Level.FULL
    auth = suite.check("security.extended_card_auth")
    assert auth is not None and auth.status is Status.PASS and "GET" in auth.message and "401" in auth.message
    not_declared = suite.check("errors.extended_card_not_declared")  # no JSON-RPC method is expected from 0.2
    assert not_declared is not None and not_declared.status is Status.SKIP


@pytest.mark.parametrize(("fault", "version", "status"), [("subscribe_updates_first_03", "0.3", Status.PASS),
                                                           ("subscribe_updates_first", "1.0", Status.FAIL)])
async def test_a_subscription_that_starts_with_an_update_is_a_1_0_failure_only(
        client: HttpClient, fault: str, version: str, status: Status) -> None:
    async with run_agent(fault) as agent:
        result = await run_suite(Target(name="s", url=agent.origin or "", a2a_version=version, timeout=5.0), client,
                                 SuiteOptions(timeout=40.0, slow_prompt="a slow one"))
    assert result.protocol_version == version and result.success
    sub = result.check("streaming.subscribe")
    assert sub is not None and sub.status is status and sub.severity == "MUST", sub
    if status is Status.FAIL:
        assert "the first event is not the Task" in sub.message
        assert level(result) is Level.PARTIAL
    else:
        assert "closed at" in sub.message
        assert {c.id for c in result.failed_checks()} == set()
        assert level(result) is Level.FULL
