"""True verdicts: each false pass and false fail of issue 9 as a fault agent, asserting verdict, reason and level."""

from __future__ import annotations

from typing import Any

import pytest

from probe.checks.catalogue import SUITE_CHECKS
from probe.engine import run_probe
from probe.levels import Level, level
from probe.reasons import Reason
from probe.results import ProbeResult, Status, StepName
from probe.suite import SuiteOptions, run_suite
from probe.target import Target
from probe.wire.http import HttpClient
from tests.agents.catalogue import GATEWAY_PREFIX, run_agent
from tests.agents.versioned import rpc, versioned_agent

_ART = [{"artifactId": "a", "parts": [{"text": "done"}]}]


def task_v1(state: str, **extra: Any) -> dict[str, Any]:
    return {"id": "t1", "contextId": "c1", "status": {"state": f"TASK_STATE_{state}"}, "artifacts": _ART, **extra}


def task_03(state: str, **extra: Any) -> dict[str, Any]:
    return {"kind": "task", "id": "t1", "contextId": "c1", "status": {"state": state},
            "artifacts": [{"artifactId": "a", "parts": [{"kind": "text", "text": "done"}]}], **extra}


async def _probe(client: HttpClient, origin: str) -> ProbeResult:
    return await run_probe(Target(name="t", url=origin, timeout=5.0), client, steps=(StepName.INVOKE,))


def _failed(result: ProbeResult) -> dict[str, str]:
    return {c.id: c.message for c in result.failed_checks()}


async def test_a_1_0_agent_that_does_not_block_fails_its_own_must_and_the_run_goes_on(client: HttpClient) -> None:
    replies = {"SendMessage": rpc({"task": task_v1("WORKING")}), "GetTask": rpc(task_v1("COMPLETED"))}
    async with versioned_agent("1.0", replies) as origin:
        result = await _probe(client, origin)
    assert result.reason is Reason.INVOKE_NOT_BLOCKING and not result.success
    blocking = result.check("invoke.blocking")
    assert blocking is not None and blocking.status is Status.FAIL and blocking.severity == "MUST"
    assert "TASK_STATE" not in blocking.message and "WORKING" in blocking.message
    completed = result.check("invoke.task_completed")
    assert completed is not None and completed.status is Status.PASS  # the probe polled on to the end
    assert level(result) is Level.MINIMAL
    assert set(_failed(result)) == {"invoke.blocking"}


async def test_a_0_3_agent_that_does_not_block_misses_a_should(client: HttpClient) -> None:
    replies = {"message/send": rpc(task_03("working")), "tasks/get": rpc(task_03("completed"))}
    async with versioned_agent("0.3", replies) as origin:
        result = await _probe(client, origin)
    assert result.success and result.reason is None
    blocking = result.check("invoke.blocking")
    assert blocking is not None and blocking.status is Status.FAIL and blocking.severity == "SHOULD"
    assert level(result) is Level.PARTIAL


async def test_zone_less_timestamps_fail_naming_field_and_value(client: HttpClient) -> None:
    bad = task_v1("COMPLETED", status={"state": "TASK_STATE_COMPLETED", "timestamp": "2026-03-01T10:00:00"})
    async with versioned_agent("1.0", {"SendMessage": rpc({"task": bad})}) as origin:
        result = await _probe(client, origin)
    assert result.reason is Reason.INVOKE_BAD_RESULT
    message = _failed(result)["invoke.schema"]
    assert "result.task.status.timestamp" in message and "'2026-03-01T10:00:00'" in message
    assert "no time zone" in message
    assert level(result) is Level.NON_CONFORMANT


async def test_wrong_enum_names_fail(client: HttpClient) -> None:
    bad = task_v1("COMPLETED", artifacts=_ART)
    bad["history"] = [{"messageId": "m", "role": "AGENT", "parts": [{"text": "x"}]}]
    async with versioned_agent("1.0", {"SendMessage": rpc({"task": bad})}) as origin:
        result = await _probe(client, origin)
    assert result.reason is Reason.INVOKE_BAD_RESULT
    assert "result.task.history[0].role: 'AGENT' is not a Role name" in _failed(result)["invoke.schema"]


async def test_a_camel_case_violation_is_a_must_failure_the_official_client_survives(client: HttpClient) -> None:
    snake = task_v1("COMPLETED", artifacts=[{"artifact_id": "a", "parts": [{"text": "done"}]}])
    async with versioned_agent("1.0", {"SendMessage": rpc({"task": snake})}) as origin:
        result = await _probe(client, origin)
    assert result.success  # the official parsers accept proto names: every call works
    assert "result.task.artifacts[0].artifact_id" in _failed(result)["invoke.camel_case"]
    assert level(result) is Level.MINIMAL


async def test_a_message_reply_without_context_id_passes(client: HttpClient) -> None:
    message = {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "hello"}]}
    async with versioned_agent("1.0", {"SendMessage": rpc({"message": message})}) as origin:
        result = await _probe(client, origin)
    assert result.success and _failed(result) == {}
    assert level(result) is Level.FULL


async def test_unknown_fields_are_ignored(client: HttpClient) -> None:
    extra = task_v1("COMPLETED", generation="3", vendorExtension={"x": 1})
    async with versioned_agent("1.0", {"SendMessage": rpc({"task": extra})}) as origin:
        result = await _probe(client, origin)
    assert result.success and _failed(result) == {}
    schema = result.check("invoke.schema")
    assert schema is not None and "unknown fields ignored: result.task.generation" in schema.message


@pytest.mark.parametrize(("fault", "carrier", "seen"), [("doubled_prefix", "interface.no_path_repeat", "repeats"),
                                                        ("html_interface", "invoke.framing", "text/html")])
async def test_a_route_fault_is_named_once_not_cascaded(client: HttpClient, fault: str, carrier: str,
                                                        seen: str) -> None:
    async with run_agent(fault) as agent:
        base = f"{agent.origin}{GATEWAY_PREFIX}" if fault == "doubled_prefix" else agent.origin or ""
        result = await run_suite(Target(name=fault, url=base, timeout=3.0), client, SuiteOptions(timeout=10.0))
    suite_ids = {c.id for c in SUITE_CHECKS}
    assert not [c.id for c in result.failed_checks() if c.id in suite_ids]  # no second blame for the same fault
    skipped = [c for c in result.checks if c.id in suite_ids and c.step is None]  # the suite's own checks
    assert skipped and all(c.status is Status.SKIP for c in skipped)
    assert all(c.message.startswith(f"depends on {carrier}, which failed: ") for c in skipped), skipped[0].message
    assert seen in skipped[0].message  # what was observed, said


async def test_skips_say_what_was_observed_never_none(client: HttpClient) -> None:
    error = {"code": -32603, "message": "boom"}
    replies = {"SendMessage": rpc(error=error), "GetTask": rpc(error={"code": -32001, "message": "nope"})}
    async with versioned_agent("1.0", replies) as origin:
        result = await run_suite(Target(name="t", url=origin, timeout=3.0), client, SuiteOptions(timeout=10.0))
    texts = " ".join(c.message for c in result.checks)
    assert "None" not in texts
    get_task = result.check("lifecycle.get_task")
    assert get_task is not None and get_task.status is Status.SKIP
    assert "SendMessage answered" in get_task.message and "-32603" in get_task.message
    assert "answers with a Message" not in texts


_CARD_03 = {"kind": "task", "id": "t1", "contextId": "c1", "status": {"state": "completed"},
            "artifacts": [{"artifactId": "a", "parts": [{"kind": "text", "text": "done"}]}]}


async def test_a_0_3_agent_answering_32601_to_the_extended_card_method_passes(client: HttpClient) -> None:
    replies = {"message/send": rpc(_CARD_03), "tasks/get": rpc(_CARD_03)}  # every other method: -32601
    async with versioned_agent("0.3", replies, card_headers={}) as origin:
        result = await run_suite(Target(name="t", url=origin, timeout=3.0), client, SuiteOptions(timeout=15.0))
    assert result.protocol_version == "0.3"
    check = result.check("errors.extended_card_not_declared")
    assert check is not None and check.status is Status.PASS and "-32601" in check.message
    assert check.severity == "MAY"
    cache = result.check("card.cache_headers")  # no cache headers: a 1.0 rule, not graded for 0.3
    assert cache is not None and cache.status is Status.SKIP
    push = result.check("errors.push_not_supported")  # 0.3 §8.2: A2A codes are a SHOULD
    assert push is not None and push.severity == "SHOULD"


async def test_a_0_3_agent_without_cache_headers_reaches_full(client: HttpClient) -> None:
    async with versioned_agent("0.3", {"message/send": rpc(_CARD_03)}, card_headers={}) as origin:
        result = await _probe(client, origin)
    assert result.success and level(result) is Level.FULL and _failed(result) == {}


async def test_a_server_closing_after_each_500_does_not_get_the_next_request_blamed(client: HttpClient) -> None:
    replies = {"SendMessage": rpc({"task": task_v1("COMPLETED")}), "GetTask": rpc(error={"code": -32001,
                                                                                          "message": "no task"})}
    async with versioned_agent("1.0", replies, drop_after_500=True) as origin:
        result = await run_suite(Target(name="t", url=origin, timeout=3.0), client, SuiteOptions(timeout=15.0))
    no_answer = [c for c in result.checks if "no answer" in c.message or "closed the connection" in c.message]
    assert no_answer == []  # the dropped pooled connection is nobody's fault: the request was retried fresh
    crash = result.check("errors.no_server_errors")
    assert crash is not None and crash.status is Status.FAIL and "500" in crash.message  # the real fault, named
    suite_step = result.step(StepName.SUITE)
    assert suite_step is not None
    retried = [e for s in result.steps for e in s.exchanges if e.retried]
    assert all("fresh connection" in (e.retried or "") for e in retried)


async def test_interop_fails_when_one_side_cannot_parse_the_other(client: HttpClient) -> None:
    good = {"SendMessage": rpc({"task": task_v1("COMPLETED")})}
    zoneless = task_v1("COMPLETED", status={"state": "TASK_STATE_COMPLETED", "timestamp": "2026-03-01T10:00:00"})
    async with versioned_agent("1.0", good) as a, versioned_agent("1.0", {"SendMessage": rpc({"task": zoneless})}) as b:
        opts = SuiteOptions(timeout=15.0, peer=Target(name="b", url=b, timeout=3.0))
        result = await run_suite(Target(name="a", url=a, timeout=3.0), client, opts)
    parse = result.check("interop.parse_each_other")
    assert parse is not None and parse.status is Status.FAIL
    assert "the peer's answers cannot be parsed by a 1.0 client" in parse.message and "no time zone" in parse.message
    common = result.check("interop.common_interface")
    assert common is not None and common.status is Status.PASS  # callable in common, yet not interoperable


async def test_interop_passes_when_both_parse(client: HttpClient) -> None:
    good = {"SendMessage": rpc({"task": task_v1("COMPLETED")})}
    async with versioned_agent("1.0", good) as a, versioned_agent("1.0", good) as b:
        opts = SuiteOptions(timeout=15.0, peer=Target(name="b", url=b, timeout=3.0))
        result = await run_suite(Target(name="a", url=a, timeout=3.0), client, opts)
    parse = result.check("interop.parse_each_other")
    assert parse is not None and parse.status is Status.PASS and "JSONRPC 1.0" in parse.message
