"""The HTTP+JSON binding's routes and how it reads answers: results, A2A errors by name, route 404s, statuses."""

from __future__ import annotations

import json

import pytest
from aiohttp import web

from probe.results import Exchange
from probe.wire.bindings import Answer, Op, ProblemKind
from probe.wire.bindings.http_json import HttpJsonBinding, http_json_event, read_answer, route
from probe.wire.dialects import V03
from probe.wire.http import Deadline, HttpClient
from probe.wire.sse import SSEEvent
from tests.agents.server import serve

INFO = {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "domain": "a2a-protocol.org"}


@pytest.mark.parametrize(("version", "op", "params", "expected"), [
    ("1.0", Op.SEND, {"message": {}}, ("POST", "/message:send")),
    ("1.0", Op.GET, {"id": "a/b", "historyLength": 1}, ("GET", "/tasks/a%2Fb")),
    ("1.0", Op.CANCEL, {"id": "t"}, ("POST", "/tasks/t:cancel")),
    ("1.0", Op.SUBSCRIBE, {"id": "t"}, ("POST", "/tasks/t:subscribe")),
    ("1.0", Op.PUSH_GET, {"taskId": "t", "id": "c"}, ("GET", "/tasks/t/pushNotificationConfigs/c")),
    ("1.0", Op.PUSH_DELETE, {"taskId": "t", "id": "c"}, ("DELETE", "/tasks/t/pushNotificationConfigs/c")),
    ("1.0", Op.EXTENDED_CARD, {}, ("GET", "/extendedAgentCard")),
    ("0.3", Op.SEND, {"message": {}}, ("POST", "/v1/message:send")),
    ("0.3", Op.EXTENDED_CARD, {}, ("GET", "/v1/card")),
])
def test_routes(version: str, op: Op, params: dict[str, object], expected: tuple[str, str]) -> None:
    verb, path, _, _ = route(version, op, params)
    assert (verb, path) == expected


def test_get_puts_history_length_in_the_query() -> None:
    assert route("1.0", Op.GET, {"id": "t", "historyLength": 0})[3] == {"historyLength": 0}


def _read(status: int, body: object, ctype: str = "application/a2a+json") -> Answer:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    return read_answer("GET /tasks/x", Exchange(method="GET", url="http://a/rest/tasks/x", status=status), status,
                       ctype, raw)


def test_a_result_and_its_content_type() -> None:
    a = _read(200, {"id": "t"})
    assert a.problem is None and a.has_result and a.result == {"id": "t"}
    assert _read(200, {"id": "t"}, "application/json").problem is None
    assert _read(200, {"id": "t"}, "application/json").media_type is None  # 1.0.0 §11.1's, read as 1.0's
    # 1.0.1 §11.1 "application/a2a+json SHOULD be used": a finding (invoke.content_type), not a framing fault
    wrong = _read(200, {"id": "t"}, "text/plain")
    assert wrong.problem is None and wrong.has_result
    assert wrong.media_type == "Content-Type is 'text/plain', not application/a2a+json or application/json"


@pytest.mark.parametrize(("status", "reason", "name", "mappings"), [
    (404, "TASK_NOT_FOUND", "TaskNotFoundError", ("1.0.0", "1.0.1")),
    (409, "TASK_NOT_CANCELABLE", "TaskNotCancelableError", ("1.0.0",)),
    (400, "TASK_NOT_CANCELABLE", "TaskNotCancelableError", ("1.0.1",)),
])
def test_an_a2a_error_by_name_with_the_mapping_it_follows(status: int, reason: str, name: str,
                                                          mappings: tuple[str, ...]) -> None:
    a = _read(status, {"error": {"code": status, "message": "m", "details": [{**INFO, "reason": reason}]}},
              "application/json")
    assert a.error is not None and (a.error.name, a.error.mappings) == (name, mappings)
    assert a.problem is None


def test_an_error_with_a_status_no_mapping_uses_is_a_status_problem() -> None:
    a = _read(500, {"error": {"code": 500, "message": "m", "details": [{**INFO, "reason": "TASK_NOT_FOUND"}]}})
    assert a.error is not None and a.error.name == "TaskNotFoundError"
    assert a.problem is not None and a.problem.kind is ProblemKind.STATUS


@pytest.mark.parametrize(("status", "body", "ctype", "kind"), [
    (404, b"<html>Cannot GET</html>", "text/html", ProblemKind.ROUTE),
    (404, b"", "text/plain", ProblemKind.ROUTE),
    (401, b"", "text/plain", ProblemKind.AUTH),
    (500, b"internal error", "text/plain", ProblemKind.STATUS),
    # a gateway's own page: its upstream (502/503/504) or its size limits (413, 431, nginx's 400 for headers)
    (502, b"bad gateway", "text/plain", ProblemKind.GATEWAY),
    (413, b"<html><title>413 Request Entity Too Large</title>", "text/html", ProblemKind.GATEWAY),
    (400, b"<html><title>400 Request Header Or Cookie Too Large</title>", "text/html", ProblemKind.GATEWAY),
    (200, b"<html>", "text/html", ProblemKind.FRAMING),
])
def test_transport_problems(status: int, body: bytes, ctype: str, kind: ProblemKind) -> None:
    a = _read(status, body, ctype)
    assert a.problem is not None and a.problem.kind is kind


def test_stream_events_are_bare_stream_responses() -> None:
    ok = http_json_event(SSEEvent(event="", data='{"statusUpdate": {"taskId": "t"}}', id=None))
    assert ok.has_result and ok.result == {"statusUpdate": {"taskId": "t"}}
    err = http_json_event(SSEEvent(event="error", data=json.dumps(
        {"error": {"code": 400, "message": "no", "details": [{**INFO, "reason": "UNSUPPORTED_OPERATION"}]}}), id=None))
    assert err.error is not None and err.error.name == "UnsupportedOperationError"
    assert http_json_event(SSEEvent(event="", data="[1]", id=None)).problem is not None


# ---- 0.3 (the /v1 routes, the 0.3 proto's bodies, and error bodies without a fixed format)


@pytest.mark.parametrize(("op", "params", "expected"), [
    (Op.GET, {"id": "t", "historyLength": 1}, ("GET", "/v1/tasks/t", None)),
    (Op.CANCEL, {"id": "t"}, ("POST", "/v1/tasks/t:cancel", {})),
    (Op.LIST, {}, ("GET", "/v1/tasks", None)),
    (Op.SUBSCRIBE, {"id": "t"}, ("POST", "/v1/tasks/t:subscribe", None)),
    # the neutral 0.3 push params ({id, pushNotificationConfigId}) name the task and the config in the path
    (Op.PUSH_GET, {"id": "t", "pushNotificationConfigId": "c"}, ("GET", "/v1/tasks/t/pushNotificationConfigs/c",
                                                                  None)),
    (Op.PUSH_LIST, {"id": "t"}, ("GET", "/v1/tasks/t/pushNotificationConfigs", None)),
    (Op.PUSH_DELETE, {"id": "t", "pushNotificationConfigId": "c"},
     ("DELETE", "/v1/tasks/t/pushNotificationConfigs/c", None)),
    # §7.5's REST payload `{config: TaskPushNotificationConfig}`: the CreateTaskPushNotificationConfigRequest
    (Op.PUSH_SET, {"taskId": "t", "pushNotificationConfig": {"url": "http://h/x"}},
     ("POST", "/v1/tasks/t/pushNotificationConfigs", {"parent": "tasks/t", "configId": "", "config": {
         "name": "", "pushNotificationConfig": {"url": "http://h/x"}}})),
])
def test_0_3_routes_and_bodies(op: Op, params: dict[str, object], expected: tuple[str, str, object]) -> None:
    verb, path, body, _ = route("0.3", op, params)
    assert (verb, path, body) == expected


def _read03(status: int, body: object, ctype: str = "application/json") -> Answer:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    return read_answer("GET /v1/tasks/x", Exchange(method="GET", url="http://a/rest/v1/tasks/x", status=status),
                       status, ctype, raw, version="0.3")


@pytest.mark.parametrize(("status", "body", "name"), [
    # a2a-sdk 0.3.26: a bare {message}, read by the 0.3 text's typical messages or the one error the status means
    (404, {"message": "Task not found"}, "TaskNotFoundError"),
    (404, {"message": "Task t1 was specified but does not exist"}, "TaskNotFoundError"),
    (409, {"message": "whatever the server says"}, "TaskNotCancelableError"),
    (422, {"message": "bad"}, "InvalidParamsError"),
    (501, {"message": "Push notifications are not supported by the agent"}, "PushNotificationNotSupportedError"),
    # @a2a-js/sdk's 0.3 layer: a JSON-RPC error object
    (404, {"code": -32001, "message": "Task not found: x"}, "TaskNotFoundError"),
    (400, {"code": -32002, "message": "Task not cancelable: x"}, "TaskNotCancelableError"),
    # a2a-sdk 1.x's 0.3 layer: the 1.0 google.rpc.Status
    (404, {"error": {"code": 404, "status": "NOT_FOUND", "message": "Task not found",
                     "details": [{**INFO, "reason": "TASK_NOT_FOUND"}]}}, "TaskNotFoundError"),
])
def test_0_3_error_bodies_are_read_by_name(status: int, body: object, name: str) -> None:
    a = _read03(status, body)
    assert a.error is not None and a.error.name == name, a.describe()
    assert a.problem is None and a.error.mappings == ("0.3",)


def test_a_0_3_error_body_with_the_wrong_status_is_a_status_problem() -> None:
    a = _read03(500, {"code": -32001, "message": "Task not found"})
    assert a.error is not None and a.error.name == "TaskNotFoundError"
    assert a.problem is not None and a.problem.kind is ProblemKind.STATUS
    assert "corresponds to TaskNotFoundError: HTTP 404" in a.problem.detail


@pytest.mark.parametrize(("body", "ctype"), [
    ({"detail": "Not Found"}, "application/json"),  # FastAPI's own 404: no A2A error
    (b"Not Found", "text/plain"),
    ({"message": "Not Found"}, "application/json"),  # nothing names an A2A error
])
def test_a_0_3_route_404_is_not_a_task_not_found(body: object, ctype: str) -> None:
    a = _read03(404, body, ctype)
    assert a.error is None and a.problem is not None and a.problem.kind is ProblemKind.ROUTE


def test_0_3_stream_error_events_are_read_by_name() -> None:
    ev = http_json_event(SSEEvent(event="error", data='{"code":-32001,"message":"Task not found"}'), version="0.3")
    assert ev.error is not None and ev.error.name == "TaskNotFoundError" and not ev.has_result
    ok = http_json_event(SSEEvent(data='{"statusUpdate":{"taskId":"t","final":true}}'), version="0.3")
    assert ok.has_result and ok.error is None


@pytest.mark.parametrize(("status", "body", "name"), [
    # a2a-java 0.3.3's RestHandler.HTTPRestErrorResponse: the error's class name and its message, whatever it says
    (500, '{"error": "io.a2a.spec.InternalError", "message": "Parts cannot be empty"}', "InternalError"),
    (400, '{"error": "io.a2a.spec.InvalidRequestError", "message": "Request body is required"}',
     "InvalidRequestError"),
    (404, '{"error": "io.a2a.spec.AuthenticatedExtendedCardNotConfiguredError", "message": "null"}',
     "ExtendedAgentCardNotConfiguredError"),
])
def test_a2a_java_0_3_error_bodies_are_read_by_their_class_name(status: int, body: str, name: str) -> None:
    """Before, only the message named the error: a message that is not 0.3 §8's typical one, at a status more than
    one error shares (400, 500), left the A2A error unnamed (a STATUS or gateway problem)."""
    a = _read03(status, body.encode())
    assert a.error is not None and a.error.name == name and a.error.mappings == ("0.3",), a.describe()
    assert a.problem is None
    event = http_json_event(SSEEvent(data=body), version="0.3")  # the one event of a refused 0.3 stream
    assert event.error is not None and event.error.name == name and not event.has_result
    assert event.error.describe().startswith(f"HTTP+JSON {name}")  # the event declares no status: not "HTTP None"


def test_0_3_rest_answers_in_application_json_only() -> None:
    assert _read03(200, {"task": {}}, "application/json; charset=utf-8").problem is None
    a = _read03(200, {"task": {}}, "application/a2a+json")  # the 1.0.1 media type, not 0.3's
    # a finding (invoke.content_type, MUST in 0.3 §3.2.3), not a framing fault: official clients read the body
    assert a.has_result and a.problem is None and a.media_type is not None
    assert "not application/json (0.3)" in a.media_type


async def test_0_3_push_set_falls_back_to_the_protos_body_and_remembers_it(client: HttpClient) -> None:
    """@a2a-js/sdk 1.x's 0.3 layer reads the proto's `body: "config"` (the TaskPushNotificationConfig itself) and
    refuses §7.5's `{config: …}` as InvalidParams: the other documented body is tried, then kept."""
    seen: list[list[str]] = []

    async def create(request: web.Request) -> web.Response:
        body = await request.json()
        seen.append(sorted(body))
        if "pushNotificationConfig" not in body:
            return web.json_response({"code": -32602, "message": "Invalid parameters"}, status=400)
        return web.json_response({"name": "tasks/t/pushNotificationConfigs/c",
                                  "pushNotificationConfig": body["pushNotificationConfig"]})

    app = web.Application()
    app.router.add_post("/v1/tasks/{id}/pushNotificationConfigs", create)
    async with serve(app) as origin:
        binding = HttpJsonBinding(client, origin, V03, {})
        for _ in range(2):
            answer = await binding.call(Op.PUSH_SET, {"taskId": "t", "pushNotificationConfig": {"url": "http://h/x"}},
                                        deadline=Deadline.after(5.0))
            assert answer.error is None and answer.result is not None, answer.describe()
    assert seen == [["config", "configId", "parent"], ["name", "pushNotificationConfig"],
                    ["name", "pushNotificationConfig"]]
    assert binding.push_body == "config"
