"""Strict validation against the official definitions: what the official clients reject fails, named."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from a2a.types.a2a_pb2 import SendMessageResponse
from a2a.utils.proto_utils import parse_lenient

from probe.wire.schema import Shape, base64_problem, definitions_for, timestamp_problem, validate

_TASK: dict[str, Any] = {"id": "t-1", "contextId": "c-1",
                         "status": {"state": "TASK_STATE_COMPLETED", "timestamp": "2026-01-01T00:00:00.000Z"}}
_MSG: dict[str, Any] = {"messageId": "m-1", "role": "ROLE_AGENT", "parts": [{"text": "hi"}]}


def _v1(payload: Any, shape: Shape = Shape.SEND_RESULT) -> list[str]:
    return validate("1.0", "JSONRPC", shape, payload).problems


def test_valid_1_0_results_pass() -> None:
    assert _v1({"task": _TASK}) == []
    assert _v1({"message": _MSG}) == []
    assert _v1({"statusUpdate": {"taskId": "t", "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}}},
               Shape.STREAM_EVENT) == []
    assert _v1(_TASK, Shape.TASK) == []


def test_message_without_context_id_is_valid_in_both_versions() -> None:
    assert _v1({"message": _MSG}) == []
    assert validate("0.3", "JSONRPC", Shape.SEND_RESULT,
                    {"kind": "message", "messageId": "m", "role": "agent",
                     "parts": [{"kind": "text", "text": "x"}]}).ok


def test_unknown_fields_are_ignored_and_noted() -> None:
    verdict = validate("1.0", "JSONRPC", Shape.SEND_RESULT, {"task": {**_TASK, "generation": "7", "x": {"y": 1}}})
    assert verdict.ok
    assert verdict.ignored == ["result.task.generation", "result.task.x"]


@pytest.mark.parametrize(("payload", "fragment"), [
    ({"task": {**_TASK, "status": {"state": "TASK_STATE_COMPLETED", "timestamp": "2026-01-01T00:00:00"}}},
     "result.task.status.timestamp: '2026-01-01T00:00:00' has no time zone"),
    ({"task": {**_TASK, "status": {"state": "completed"}}},
     "result.task.status.state: 'completed' is not a TaskState name"),
    ({"message": {**_MSG, "role": "agent"}}, "result.message.role: 'agent' is not a Role name"),
    ({"task": {**_TASK, "id": 5}}, "result.task.id: 5 is int, expected a string"),
    ({"message": {**_MSG, "parts": [{"raw": "a$$b"}]}},
     "result.message.parts[0].raw: 'a$$b' is invalid base64: character '$'"),
    ({"message": {**_MSG, "parts": [{"raw": "abcde"}]}}, "length 5 is one more than a multiple of 4"),
    ({"message": {**_MSG, "parts": [{"text": "x", "url": "http://x"}]}},
     "result.message.parts[0]: text and url are all set"),
    ({}, "result: none of task/message is set"),
    ({"task": _TASK, "message": _MSG}, "result: task and message are all set"),
    ([_TASK], "result: is list, expected a JSON object"),
    ({"task": {**_TASK, "artifacts": [{"artifactId": "a", "parts": [{"text": "x"}], "metadata": 3}]}},
     "result.task.artifacts[0].metadata"),
])
def test_violations_fail_with_field_and_value(payload: Any, fragment: str) -> None:
    problems = _v1(payload)
    assert any(fragment in p for p in problems), problems


@pytest.mark.parametrize(("payload", "fragment"), [
    ({"message": {"role": "ROLE_AGENT", "parts": [{"text": "x"}]}},
     "result.message.messageId: required field is missing"),
    ({"task": {"id": "t", "contextId": "c"}}, "result.task.status: required field is missing"),
    ({"message": {**_MSG, "parts": []}}, "result.message.parts: required field is missing"),
    ({"message": {**_MSG, "parts": [{"mediaType": "text/plain"}]}},
     "result.message.parts[0]: none of text/raw/url/data is set"),
])
def test_required_gaps_are_findings_not_failures(payload: Any, fragment: str) -> None:
    """1.0 §5.7's REQUIRED is a MUST json_format does not enforce: a2a-sdk's client reads these answers, so they are
    no problem of the parse (invoke.schema passes) but gaps (invoke.required_fields reports them)."""
    verdict = validate("1.0", "JSONRPC", Shape.SEND_RESULT, payload)
    assert verdict.ok, verdict.problems
    assert any(fragment in p for p in verdict.required), verdict.required
    parse_lenient(copy.deepcopy(payload), SendMessageResponse())  # the official client's parse reads it


def test_one_problem_is_reported_once() -> None:
    assert len(_v1({"task": _TASK, "message": _MSG})) == 1


def test_snake_case_names_parse_but_are_recorded() -> None:
    verdict = validate("1.0", "HTTP+JSON", Shape.TASK, {"id": "t", "context_id": "c",
                                                         "status": {"state": "TASK_STATE_WORKING"}})
    assert verdict.ok  # the official parsers accept proto field names
    assert verdict.snake_case == ["result.context_id (ProtoJSON name 'contextId')"]


def test_free_form_metadata_and_data_are_not_judged() -> None:
    part = {"data": {"snake_key": [1, {"b": None}]}, "metadata": {"any_thing": True}}
    assert _v1({"message": {**_MSG, "parts": [part], "metadata": {"x_y": {"z": 1}}}}) == []


def test_enum_numbers_and_int64_strings_are_protojson() -> None:
    assert _v1({"task": {**_TASK, "status": {"state": 3}}}) == []
    assert validate("1.0", "JSONRPC", Shape.LIST_TASKS,
                    {"tasks": [], "nextPageToken": "", "pageSize": "50", "totalSize": 0}).ok


def test_0_3_jsonrpc_uses_the_0_3_schema() -> None:
    ok = {"kind": "task", "id": "t", "contextId": "c", "status": {"state": "completed"}}
    assert validate("0.3", "JSONRPC", Shape.SEND_RESULT, ok).ok
    assert validate("0.2.5", "JSONRPC", Shape.SEND_RESULT, ok).ok
    bad = validate("0.3", "JSONRPC", Shape.SEND_RESULT, {**ok, "status": {"state": "TASK_STATE_COMPLETED"}})
    assert any("result.status.state" in p and "'TASK_STATE_COMPLETED'" in p for p in bad.problems), bad.problems
    update = {"kind": "status-update", "taskId": "t", "contextId": "c", "status": {"state": "working"}}
    assert validate("0.3", "JSONRPC", Shape.STREAM_EVENT, update).problems == ["result.final: Field required"]
    part = validate("0.3", "JSONRPC", Shape.SEND_RESULT,
                    {"kind": "message", "messageId": "m", "role": "agent", "parts": [{"kind": "txt", "text": "x"}]})
    assert part.problems == ["result.parts[0].kind: matches none of text/file/data (got 'txt')"]
    assert "not one of task, message" in validate("0.3", "JSONRPC", Shape.SEND_RESULT, {"id": "t"}).problems[0]


def test_0_3_rest_uses_the_0_3_proto() -> None:
    assert definitions_for("0.3", "HTTP+JSON") == "A2A 0.3 proto (a2a.v1)"
    task = {"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"}}
    assert validate("0.3", "HTTP+JSON", Shape.SEND_RESULT, {"task": task}).ok
    assert not validate("0.3", "HTTP+JSON", Shape.SEND_RESULT, {"task": {**task, "status": {"state": "done"}}}).ok


def test_the_card_is_judged_by_the_proto() -> None:
    card = {"name": "a", "description": "d", "version": "1", "capabilities": {"streaming": "yes"},
            "supportedInterfaces": [{"url": "http://x", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
            "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "skills": [{"id": "s", "name": "n", "description": "d", "tags": ["t"]}]}
    problems = validate("1.0", "JSONRPC", Shape.CARD, card, root="card").problems
    assert problems == ["card.capabilities.streaming: 'yes' is str, expected true or false"]


@pytest.mark.parametrize(("value", "ok"), [
    ("2026-01-01T00:00:00Z", True), ("2026-01-01T00:00:00.123456789+02:00", True), ("2026-01-01t00:00:00z", True),
    ("2026-01-01T00:00:00", False), ("2026-01-01 00:00:00Z", False), ("yesterday", False), (17, False),
])
def test_timestamps(value: Any, ok: bool) -> None:
    assert (timestamp_problem(value) is None) is ok


@pytest.mark.parametrize(("value", "ok"), [
    ("AAEC", True), ("AAE", True), ("AA==", True), ("-_8", True), ("a+b/", True),
    ("A", False), ("A===", False), ("a b", False), ("a-b+", False), (None, False),
])
def test_base64(value: Any, ok: bool) -> None:
    assert (base64_problem(value) is None) is ok


def test_long_values_are_shortened() -> None:
    problems = _v1({"task": {**_TASK, "status": {"state": "X" * 500}}})
    assert problems and len(problems[0]) < 400


def test_an_empty_required_string_is_a_gap_even_after_a_cached_pass() -> None:
    """1.0 §5.7: a REQUIRED field "MUST be present and set"; "" is a proto3 string's unset default. The passed-verdict
    cache (keyed by the payload's skeleton, strings erased) must not answer for it from a valid message."""
    assert validate("1.0", "JSONRPC", Shape.SEND_RESULT, {"message": _MSG}).required == []
    verdict = validate("1.0", "JSONRPC", Shape.SEND_RESULT, {"message": {**_MSG, "messageId": ""}})
    assert verdict.ok and verdict.required == ["result.message.messageId: required field is missing (in Message)"]
    optional = validate("1.0", "JSONRPC", Shape.SEND_RESULT, {"message": {**_MSG, "contextId": ""}})
    assert optional.ok and optional.required == []


def test_the_last_pages_empty_token_is_no_gap() -> None:
    """1.0 §3.1.4: nextPageToken is "" on the final page; REQUIRED in the proto, so 9b17b6b's "" = unset rule made it
    a gap on every correct agent's last page (invoke.required_fields failed the suite's ListTasks)."""
    page = {"tasks": [], "nextPageToken": "", "pageSize": 50, "totalSize": 0}
    assert validate("1.0", "JSONRPC", Shape.LIST_TASKS, page).required == []
