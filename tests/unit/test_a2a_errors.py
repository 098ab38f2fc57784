"""The one A2A error table, and how each binding's answer is read into an error by name."""

from __future__ import annotations

import json

import pytest

from probe.results import Exchange
from probe.wire import a2a_errors as E
from probe.wire.bindings import Answer, ProblemKind
from probe.wire.bindings.jsonrpc import read_answer


def test_the_table_covers_every_jsonrpc_code_once() -> None:
    assert sorted(E.BY_CODE) == [-32700, *range(-32603, -32599), *range(-32009, -32000)]
    assert len(E.BY_REASON) == len(E.ERRORS)  # every error has one reason, by the spec's naming rule
    assert E.BY_REASON["TASK_NOT_FOUND"].name == "TaskNotFoundError"


@pytest.mark.parametrize(("status", "reason", "name", "mappings"), [
    (404, "TASK_NOT_FOUND", "TaskNotFoundError", ("1.0.0", "1.0.1")),
    (409, "TASK_NOT_CANCELABLE", "TaskNotCancelableError", ("1.0.0",)),
    (400, "TASK_NOT_CANCELABLE", "TaskNotCancelableError", ("1.0.1",)),
    (415, "CONTENT_TYPE_NOT_SUPPORTED", "ContentTypeNotSupportedError", ("1.0.0",)),
    (400, "CONTENT_TYPE_NOT_SUPPORTED", "ContentTypeNotSupportedError", ("1.0.1",)),
    (502, "INVALID_AGENT_RESPONSE", "InvalidAgentResponseError", ("1.0.0",)),
    (500, "TASK_NOT_FOUND", "TaskNotFoundError", ()),  # the right error with a status neither mapping uses
])
def test_http_status_is_judged_against_both_mappings(status: int, reason: str, name: str,
                                                     mappings: tuple[str, ...]) -> None:
    spec, seen = E.from_http(status, reason)
    assert spec is not None and spec.name == name
    assert seen == mappings


@pytest.mark.parametrize(("status", "reason", "name", "mappings"), [
    ("NOT_FOUND", None, "TaskNotFoundError", ("1.0.0", "1.0.1")),
    ("UNIMPLEMENTED", "VERSION_NOT_SUPPORTED", "VersionNotSupportedError", ("1.0.0",)),
    ("FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED", "VersionNotSupportedError", ("1.0.1",)),
    ("FAILED_PRECONDITION", "PUSH_NOTIFICATION_NOT_SUPPORTED", "PushNotificationNotSupportedError", ("1.0.1",)),
    ("UNIMPLEMENTED", "UNSUPPORTED_OPERATION", "UnsupportedOperationError", ("1.0.0",)),
])
def test_grpc_status_is_judged_against_both_mappings(status: str, reason: str | None, name: str,
                                                     mappings: tuple[str, ...]) -> None:
    spec, seen = E.from_grpc(status, reason)
    assert spec is not None and spec.name == name and seen == mappings


def test_unknown_errors_have_no_name() -> None:
    assert E.from_http(400, "SOMETHING_ELSE") == (None, ())
    assert E.from_grpc("INTERNAL", None) == (None, ())


def test_error_info_reason_prefers_the_a2a_domain() -> None:
    details = [{"@type": "type.googleapis.com/google.rpc.BadRequest"},
               {"@type": E.ERROR_INFO_TYPE, "reason": "OTHER", "domain": "example.com"},
               {"@type": E.ERROR_INFO_TYPE, "reason": "TASK_NOT_FOUND", "domain": E.DOMAIN}]
    assert E.a2a_reason(details) == "TASK_NOT_FOUND"
    assert E.a2a_reason("not a list") is None


def _read(status: int, body: bytes | dict[str, object], ctype: str = "application/json", rid: str = "r1") -> Answer:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    return read_answer("GetTask", rid, Exchange(method="POST", url="http://a/rpc", status=status), status, ctype, raw)


def test_jsonrpc_error_is_read_by_name_with_its_error_info() -> None:
    info = [{"@type": E.ERROR_INFO_TYPE, "reason": "TASK_NOT_FOUND", "domain": E.DOMAIN}]
    a = _read(200, {"jsonrpc": "2.0", "id": "r1", "error": {"code": -32001, "message": "nope", "data": info}})
    assert a.problem is None and a.error is not None
    assert (a.error.name, a.error.code, a.error.reason) == ("TaskNotFoundError", -32001, "TASK_NOT_FOUND")
    assert a.error.describe() == "JSON-RPC TaskNotFoundError -32001: nope"


@pytest.mark.parametrize(("status", "body", "ctype", "kind"), [
    (404, b"<html>not found</html>", "text/html", ProblemKind.ROUTE),
    (401, b"", "text/plain", ProblemKind.AUTH),
    (500, b"internal error", "text/plain", ProblemKind.STATUS),
    (502, b"bad gateway", "text/plain", ProblemKind.GATEWAY),  # a gateway's page, no envelope: not the agent's
    (504, b"<html>504 Gateway Time-out</html>", "text/html", ProblemKind.GATEWAY),
    (431, b"", "text/plain", ProblemKind.GATEWAY),
    # with a JSON-RPC envelope the status is the agent's own (a JSON-RPC endpoint answers 200)
    (503, {"jsonrpc": "2.0", "id": "r1", "error": {"code": -32603, "message": "busy"}}, "application/json",
     ProblemKind.STATUS),
    (400, b"unsupported A2A version", "text/plain", ProblemKind.VERSION),
    (200, b"<html>hello</html>", "text/html", ProblemKind.FRAMING),
    (200, {"jsonrpc": "2.0", "id": "other", "result": {}}, "application/json", ProblemKind.FRAMING),
])
def test_jsonrpc_transport_problems(status: int, body: bytes | dict[str, object], ctype: str,
                                    kind: ProblemKind) -> None:
    a = _read(status, body, ctype)
    assert a.problem is not None and a.problem.kind is kind, a.problem


def test_a_clean_envelope_in_another_media_type_is_read_and_noted() -> None:
    """1.0 §9.1 names application/json with no RFC 2119 keyword, and a2a-sdk's client reads the body whatever it
    says: a finding (invoke.content_type), not a framing problem."""
    a = _read(200, {"jsonrpc": "2.0", "id": "r1", "result": {}}, "text/plain")
    assert a.problem is None and a.has_result
    assert a.media_type == "Content-Type is 'text/plain', not application/json"


def test_a_clean_jsonrpc_result() -> None:
    a = _read(200, {"jsonrpc": "2.0", "id": "r1", "result": {"id": "t"}})
    assert a.problem is None and a.error is None and a.has_result and a.result == {"id": "t"}


@pytest.mark.parametrize(("message", "seen"), [
    ("A2A version '0.3' is not supported by this handler. Expected version '1.0'.", "0.3"),  # a2a-sdk 1.3.0
    ("The requested A2A protocol version '0.3' is not supported. Supported versions: 1.0", "0.3"),  # @a2a-js/sdk
    ("A2A version '' is not supported by this handler.", ""),
    ("A2A version '1.0' is not supported by this handler. Expected version '0.3'.", "1.0"),
    ("Expected version '0.3'", None),  # what the server wants is not what it saw
    ("version not supported", None),
])
def test_the_version_a_version_error_says_it_saw(message: str, seen: str | None) -> None:
    """A VersionNotSupportedError naming another version than the probe sent is the header lost on the way
    (invoke_gateway_error); only the official SDKs' '<v>' is not supported wording is read."""
    from probe.engine import _version_seen

    assert _version_seen(message) == seen
