"""The `id` member of JSON-RPC error answers: kept at the wire (absent, null, a value), judged once by the suite.

JSON-RPC 2.0 §5 (restated by A2A 0.3 and 0.2 §6.11.2; 1.0 §9.1/§9.5 bind the binding to JSON-RPC 2.0): "id: This
member is REQUIRED. It MUST be the same as the value of the id member in the Request Object. If there was an
error in detecting the id in the Request object (e.g. Parse error/Invalid Request), it MUST be Null." Every
official client reads an error whatever its id (a2a-sdk 1.x ignores the response id, its 0.3/0.2 models default
it to None; @a2a-js/sdk 1.x reads a unary error before comparing ids), so a wrong id on an error is a finding
(errors.response_id), never a failed call nor a failed errors.* check.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from probe.engine import run_probe
from probe.reasons import Reason
from probe.report import to_dict
from probe.results import Exchange, ProbeResult, Severity, Status, StepName
from probe.suite import SuiteOptions, run_suite
from probe.target import Target
from probe.wire import jsonrpc
from probe.wire.bindings.jsonrpc import read_answer
from probe.wire.http import HttpClient
from tests.agents.scripted import Reply, scripted_agent
from tests.agents.sloppy import Sloppy, sloppy_agent

ERROR = {"code": -32001, "message": "Task not found"}
PARSE = {"code": -32700, "message": "Parse error"}


# ---- the wire: parse_envelope keeps an absent id apart from a null one ----------------------------------------

@pytest.mark.parametrize(("doc", "rid", "fault"), [
    ({"jsonrpc": "2.0", "id": "r1", "error": ERROR}, "r1", None),
    ({"jsonrpc": "2.0", "id": None, "error": PARSE}, None, None),  # null where null is due
    # before: doc.get("id") read the missing member as null, so an answer without any id passed as the null due
    ({"jsonrpc": "2.0", "error": PARSE}, None, jsonrpc.IdFault(False, None, True)),
    ({"jsonrpc": "2.0", "error": ERROR}, "r1", jsonrpc.IdFault(False, None, False)),
    ({"jsonrpc": "2.0", "id": None, "error": ERROR}, "r1", jsonrpc.IdFault(True, None, False)),
    ({"jsonrpc": "2.0", "id": "r2", "error": ERROR}, "r1", jsonrpc.IdFault(True, "r2", False)),
    ({"jsonrpc": "2.0", "id": 0, "error": PARSE}, None, jsonrpc.IdFault(True, 0, True)),
])
def test_an_error_answer_keeps_its_id_member_apart_and_is_not_a_framing_fault(
        doc: dict[str, Any], rid: str | None, fault: jsonrpc.IdFault | None) -> None:
    env = jsonrpc.parse_envelope(json.dumps(doc).encode(), rid)
    assert env.id_fault == fault
    assert env.problems == [] and env.error is not None  # the official clients read the error


@pytest.mark.parametrize(("doc", "described"), [
    ({"jsonrpc": "2.0", "result": {}}, "id 'None' does not echo the request id"),
    ({"jsonrpc": "2.0", "id": None, "result": {}}, "id 'None' does not echo the request id"),
    ({"jsonrpc": "2.0", "id": "r2", "result": {}}, "id 'r2' does not echo the request id"),
])
def test_a_result_with_another_id_is_still_a_framing_fault(doc: dict[str, Any], described: str) -> None:
    env = jsonrpc.parse_envelope(json.dumps(doc).encode(), "r1")
    assert env.problems == [described] and env.id_fault is not None


def test_the_fault_says_what_was_due() -> None:
    assert jsonrpc.IdFault(False, None, True).describe() == \
        'no "id" member (REQUIRED: null for a body whose id could not be read)'
    assert jsonrpc.IdFault(False).describe() == 'no "id" member (REQUIRED: the request\'s id)'
    assert jsonrpc.IdFault(True, None).describe() == '"id" null, not the request\'s id'
    assert jsonrpc.IdFault(True, "r2").describe() == '"id" \'r2\' is not the request\'s id'
    assert jsonrpc.IdFault(True, 0, True).describe() == '"id" \'0\' where null is due (the request\'s id could not ' \
        'be read)'


def test_an_error_answer_without_its_id_is_read_as_the_error() -> None:
    body = json.dumps({"jsonrpc": "2.0", "error": ERROR}).encode()
    a = read_answer("GetTask", "r1", Exchange(method="POST", url="http://a/rpc", status=200), 200,
                    "application/json", body)
    assert a.problem is None and a.deviations == []  # before: a FRAMING problem, "id 'None' does not echo"
    assert a.error is not None and a.error.name == "TaskNotFoundError"
    assert a.id_fault == jsonrpc.IdFault(False)


# ---- a call: an error answered without the request's id is that error, not a framing fault -------------------

@pytest.mark.parametrize("envelope", [{"jsonrpc": "2.0"}, {"jsonrpc": "2.0", "id": None},
                                      {"jsonrpc": "2.0", "id": "someone-else"}])
async def test_an_error_to_send_message_without_its_id_is_that_error(client: HttpClient,
                                                                    envelope: dict[str, Any]) -> None:
    raw = json.dumps(envelope | {"error": {"code": -32603, "message": "boom"}})
    async with scripted_agent({"SendMessage": Reply(chunks=[raw])}) as origin:
        r = await run_probe(Target(name="t", url=origin, timeout=3.0), client, steps=(StepName.INVOKE,))
    # before: invoke_not_a2a, invoke.framing failed with "id ... does not echo the request id"
    assert r.reason is Reason.INVOKE_A2A_ERROR, to_dict(r)
    framing = r.check("invoke.framing")
    assert framing is not None and framing.status is Status.PASS


# ---- the suite: errors.response_id -----------------------------------------------------------------------------

async def _suite(client: HttpClient, url: str) -> ProbeResult:
    return await run_suite(Target(name="t", url=url, timeout=5.0), client, SuiteOptions(timeout=20.0))


async def test_error_answers_with_the_id_due_pass(client: HttpClient) -> None:
    async with sloppy_agent(Sloppy(set())) as url:
        r = await _suite(client, url)
    c = r.check("errors.response_id")
    assert c is not None and c.status is Status.PASS, c
    assert "JSON-RPC error answer(s), each with the id due" in c.message


async def test_an_absent_id_and_a_null_id_where_a_value_is_due_fail(client: HttpClient) -> None:
    async with sloppy_agent(Sloppy({"response_id"})) as url:
        r = await _suite(client, url)
    c = r.check("errors.response_id")
    assert c is not None and c.status is Status.FAIL and c.severity is Severity.MUST, c
    assert ('no "id" member (REQUIRED: null for a body whose id could not be read): errors.parse_error '
            '(JSONParseError)') in c.message
    assert '"id" null, not the request\'s id: lifecycle.message_to_terminal (UnsupportedOperationError), ' in c.message
    assert c.message.endswith("(14 of 15 JSON-RPC error answers)")  # the invalid request's null is its due
    # one root cause, named once: the checks that provoked the errors are judged by the errors alone
    for cid in ("errors.parse_error", "errors.invalid_request", "errors.unknown_method", "errors.task_not_found"):
        check = r.check(cid)
        assert check is not None and check.status is Status.PASS, check
    assert r.check("errors.invalid_request").message.startswith("a request without a method")  # type: ignore[union-attr]
    assert "errors.invalid_request" not in c.message  # -32600 with null: JSON-RPC 2.0 §5's "e.g. Invalid Request"


async def test_a_value_where_null_is_due_and_another_requests_id_fail(client: HttpClient) -> None:
    async with sloppy_agent(Sloppy({"response_id_other"})) as url:
        r = await _suite(client, url)
    c = r.check("errors.response_id")
    assert c is not None and c.status is Status.FAIL and c.severity is Severity.MUST, c
    assert "\"id\" '0' where null is due (the request's id could not be read): errors.parse_error" in c.message
    assert "\"id\" 'another-request' is not the request's id: lifecycle.message_to_terminal" in c.message
    assert c.message.endswith("(15 of 15 JSON-RPC error answers)")
    parse = r.check("errors.parse_error")
    assert parse is not None and parse.status is Status.PASS


@pytest.mark.parametrize(("version", "level"), [("1.0", Severity.MUST), ("0.3", Severity.MUST),
                                                ("0.2", Severity.MUST)])
def test_the_level_per_version(version: str, level: Severity) -> None:
    from probe.checks import grading

    assert grading.level_of("errors.response_id", version, "jsonrpc") is level
