"""The official SDKs' older lines, run as real agents the way platform teams still run them: the probe's exact
verdict on each, every finding justified by the text of the version the agent speaks.

* a2a-sdk 1.0.0 (the Python 1.0 line's first release; venv sdk10, tests/peers/py_agent.py): a 1.0 server on
  JSON-RPC, HTTP+JSON and gRPC from one process, on the 1.0.0 error mapping (TaskNotCancelableError HTTP 409,
  UNIMPLEMENTED for push/unsupported operations), which the report's errorMapping names. `check` passes on all
  three with the current line's SHOULDs (card cache headers, a schemeless gRPC URL). The full suite finds what
  1.3.0 fixed since; see SDK10_DEVIATIONS for each clause. Its JSON-RPC -32600/-32602 carry a string or object
  `data`, as 1.0.0 §9.5's own example does for -32601: not graded (errors.details_typed).
* @a2a-js/sdk 1.0.1 (the JS 1.0 line's earliest release; 1.0.0 exists only as alpha/beta; tests/peers/js10):
  JSON-RPC, HTTP+JSON and gRPC. `check` passes; the full suite finds one root cause behind most findings: each of
  1.0.1's dist bundles (server, server/express, server/grpc) carries its own copy of the A2AError classes, so an
  error the request handler throws fails the transport's `instanceof A2AError` and goes out as JSON-RPC
  InternalError -32603 / HTTP 500 / gRPC UNKNOWN (§5.4's table names the error each MUST be); see JS10_DEVIATIONS.

* @a2a-js/sdk 0.3.14 (the JS 0.3 line's last release; tests/peers/js03): a 0.3 server on JSON-RPC, HTTP+JSON and
  gRPC from one process. `check` passes on all three. The full suite finds two deviations, both SHOULD: no binding
  refuses a part whose media type is not in the card's input modes (0.3 §8.2 ContentTypeNotSupportedError, as no
  SDK does), and its REST `POST /v1/tasks/{id}:subscribe` for an unknown task answers HTTP 500 "Bug: toJson
  serializer and body must be provided" instead of TaskNotFoundError (0.3 §7.9). Its gRPC errors carry no name,
  only §8's message ("Push Notification is not supported") at the status it maps the error to (UNIMPLEMENTED,
  INVALID_ARGUMENT): 0.3 §3.2.2 asks no more ("map A2A error codes to appropriate gRPC status codes").
* a2a-sdk 0.2.16 (the Python 0.2 line's last release): a 0.2 JSON-RPC server, its card at the 0.2 path saying
  protocolVersion 0.2.6 (0.2.5 §5.5 asks that it be declared: it is). `check` passes. The full suite finds real
  faults: every request that fails its pydantic model (an unknown method, a message without messageId) is
  InvalidRequestError -32600 with no `id` member although the id was readable (model_dump exclude_none drops the
  null it sets; JSON-RPC 2.0 §5: REQUIRED, null only when it cannot be read; 0.2.5 §8.1 -32601 / -32602), and its
  parse error has no `id` either (errors.response_id, MUST: 0.2.5 §6.11.2); push without the capability is
  InternalError -32603 wrapping the SDK's own UnsupportedOperation (0.2.5 §7.5: PushNotificationNotSupportedError);
  a COMPLETED task is "canceled" with a result (§7.4: TaskNotCancelableError); tasks/resubscribe does not end when
  the task is canceled. It waits for the end despite `blocking: false` (0.2.5 gives the field no behaviour: a MAY
  finding), so the cancel check takes its running task from the slow prompt's own stream.
"""

from __future__ import annotations

import pytest

from probe.engine import run_interfaces
from probe.levels import Level, level
from probe.report import to_dict
from probe.results import ProbeResult, Severity, Status
from probe.suite import SuiteOptions, run_suite_interfaces
from probe.target import Target
from probe.wire.http import HttpClient
from tests.peers import venv_peers
from tests.peers.venv_peers import VenvPeer

pytestmark = pytest.mark.external
js03_peer, sdk02_peer = venv_peers.js03_peer, venv_peers.sdk02_peer  # the session fixtures, used here
sdk10_peer, js10_peer = venv_peers.sdk10_peer, venv_peers.js10_peer

M, S, MAY = Severity.MUST, Severity.SHOULD, Severity.MAY
MEDIA = "errors.content_type_not_supported"


def _failed(result: ProbeResult) -> set[tuple[str, Severity, str | None]]:
    return {(c.id, c.severity, c.interface) for c in result.failed_checks()}


async def _suite(client: HttpClient, peer: VenvPeer, timeout: float = 60.0) -> ProbeResult:
    """`a2a-probe check URL --binding all --suite full --slow-prompt slow --input-prompt 'input please'`."""
    return await run_suite_interfaces(Target(name=peer.name, url=peer.base_url, timeout=10.0), client,
                                      SuiteOptions(timeout=timeout, slow_prompt="slow", input_prompt="input please"))


# ---- @a2a-js/sdk 0.3.14


async def test_js_0_3_line_check_passes_on_every_binding(client: HttpClient, js03_peer: VenvPeer) -> None:
    result = await run_interfaces(Target(name="js03", url=js03_peer.base_url, timeout=10.0), client)
    assert result.success and result.reason is None, result.reason
    assert result.protocol_version == "0.3"
    assert result.card_url == js03_peer.base_url + "/.well-known/agent-card.json"
    assert [(i.binding, i.protocol_version, i.interface_url, i.success) for i in result.interfaces] == [
        ("jsonrpc", "0.3", js03_peer.base_url + "/a2a/jsonrpc", True),
        ("http_json", "0.3", js03_peer.rest_url, True),
        ("grpc", "0.3", js03_peer.grpc_url, True)]
    assert _failed(result) == set()
    rest_schema = next(c for c in result.checks if c.id == "invoke.schema" and c.interface == "http_json 0.3")
    assert "A2A 0.3 proto (a2a.v1)" in rest_schema.message  # 0.3.14's REST speaks the proto's JSON, not `kind`
    assert level(result) is Level.FULL


async def test_js_0_3_line_full_suite(client: HttpClient, js03_peer: VenvPeer) -> None:
    result = await _suite(client, js03_peer)
    assert result.success and result.protocol_version == "0.3"
    assert _failed(result) == {(MEDIA, S, "jsonrpc 0.3"), (MEDIA, S, "http_json 0.3"), (MEDIA, S, "grpc 0.3"),
                               ("streaming.subscribe_unknown", S, "http_json 0.3")}
    unknown = next(c for c in result.failed_checks() if c.id == "streaming.subscribe_unknown")
    assert "HTTP 500" in unknown.message and "toJson serializer" in unknown.message  # what the SDK said, quoted
    checks = {(c.id, c.interface): c for c in result.checks}
    for iface in ("jsonrpc 0.3", "http_json 0.3", "grpc 0.3"):
        for cid in ("lifecycle.cancel", "streaming.subscribe", "lifecycle.input_required", "errors.invalid_params",
                    "errors.push_not_supported", "errors.extended_card_not_declared", "errors.task_not_found"):
            assert checks[(cid, iface)].status is Status.PASS, (cid, iface, checks[(cid, iface)].message)
    # before: gRPC INVALID_ARGUMENT without an error name failed the MUST; UNIMPLEMENTED "Push Notification is not
    # supported" was read as a missing a2a.v1.A2AService; REST push got §7.5's body, not only the proto's
    grpc_params = checks[("errors.invalid_params", "grpc 0.3")].message
    assert "INVALID_ARGUMENT" in grpc_params and "0.3 §3.2.2" in grpc_params
    assert "PushNotificationNotSupportedError" in checks[("errors.push_not_supported", "grpc 0.3")].message
    assert "PushNotificationNotSupportedError" in checks[("errors.push_not_supported", "http_json 0.3")].message
    assert level(result) is Level.PARTIAL  # SHOULDs only


# ---- a2a-sdk 0.2.16


async def test_python_0_2_line_check_passes(client: HttpClient, sdk02_peer: VenvPeer) -> None:
    result = await run_interfaces(Target(name="sdk02", url=sdk02_peer.base_url, timeout=10.0), client)
    assert result.success and result.reason is None, result.reason
    assert result.card_url == sdk02_peer.base_url + "/.well-known/agent.json"  # the 0.2 path
    assert result.protocol_version == "0.2"
    assert [(i.binding, i.protocol_version) for i in result.interfaces] == [("jsonrpc", "0.2")]
    assert _failed(result) == set()
    version = result.check("card.protocol_version")
    assert version is not None and version.status is Status.PASS and "declared 0.2.6" in version.message
    assert level(result) is Level.FULL


async def test_python_0_2_line_full_suite(client: HttpClient, sdk02_peer: VenvPeer) -> None:
    result = await _suite(client, sdk02_peer, timeout=90.0)  # its blocking send of the slow prompt takes 30 s
    assert result.success and result.protocol_version == "0.2"
    assert {(cid, sev) for cid, sev, _ in _failed(result)} == {
        ("errors.unknown_method", M), ("errors.invalid_params", M), ("streaming.subscribe", M),
        ("errors.not_cancelable", S), ("errors.push_not_supported", S), (MEDIA, S),
        ("lifecycle.return_immediately", MAY), ("errors.response_id", M)}
    # its JSONRPCApplication writes errors with model_dump(exclude_none=True): a null id is left out, on the parse
    # error and on every request it could not read as an A2A request (-32600 for an unknown method or bad params
    # too: a null id is allowed with -32600, a missing one never); its 0.2 client reads them all the same
    assert result.check("errors.response_id").message == (  # type: ignore[union-attr]
        'no "id" member (REQUIRED: null for a body whose id could not be read): errors.parse_error (JSONParseError); '
        'no "id" member (REQUIRED: the request\'s id): errors.invalid_request (InvalidRequestError), '
        "errors.unknown_method (InvalidRequestError) and 1 more (4 of 10 JSON-RPC error answers)")
    for cid in ("errors.unknown_method", "errors.invalid_params"):
        c = result.check(cid)
        assert c is not None and "InvalidRequestError -32600" in c.message
    push = result.check("errors.push_not_supported")
    assert push is not None and "InternalError -32603" in push.message
    cancel = result.check("lifecycle.cancel")  # before: failed the MUST ("did not leave a running task")
    assert cancel is not None and cancel.status is Status.PASS, cancel.message



# ---- the official SDKs' first 1.0 releases: a2a-sdk 1.0.0 and @a2a-js/sdk 1.0.1

V1 = ("jsonrpc 1.0", "http_json 1.0", "grpc 1.0")
GRPC_URL = ("interface.grpc_url", S, "grpc 1.0")  # both SDKs advertise gRPC as a schemeless host:port (SHOULD)
# a2a-sdk 1.0.0's real deviations, each by the text of 1.0.0 (1.0.1 says the same unless noted)
SDK10_DEVIATIONS = {
    ("card.cache_headers", S, None), GRPC_URL,  # §8.6.1 SHOULD Cache-Control max-age, as 1.3.0
    # §3.1.1 / §3.1.6: a message to / a subscription of a terminal task is UnsupportedOperationError; 1.0.0 answers
    # InvalidParamsError "Task ... is in terminal state: 3" on every binding
    *{(c, M, i) for c in ("lifecycle.message_to_terminal", "streaming.subscribe_terminal") for i in V1},
    # §3.4.3 "Agents MUST reject messages containing mismatching contextId and taskId": accepted on every binding
    *{("lifecycle.context_mismatch_rejected", M, i) for i in V1},
    # §3.1.4 includeArtifacts false: "the artifacts field MUST be omitted entirely" (the gRPC answer can't tell)
    ("lifecycle.list_tasks", M, "jsonrpc 1.0"), ("lifecycle.list_tasks", M, "http_json 1.0"),
    # §9.5 (1.0.0): "For A2A-specific errors, implementations MUST include a google.rpc.ErrorInfo message in the
    # data array": JSON-RPC TaskNotFoundError comes without data (graded SHOULD, 1.0.1's level)
    ("errors.error_info", S, "jsonrpc 1.0"),
    # §5.7 "Implementations SHOULD ignore unrecognized fields": JSON-RPC and REST refuse them (protobuf ParseDict)
    ("lifecycle.unknown_fields_ignored", S, "jsonrpc 1.0"), ("lifecycle.unknown_fields_ignored", S, "http_json 1.0"),
    # §3.6.2 A2A-Version MUST (§3.6.1: none is 0.3): the gRPC handler ignores the metadata, as 1.3.0 does
    ("errors.version_not_supported", M, "grpc 1.0"), ("errors.missing_version_is_0_3", M, "grpc 1.0"),
    *{(MEDIA, S, i) for i in V1},  # no SDK refuses a media type outside the card's input modes
}
# @a2a-js/sdk 1.0.1: the A2A errors its handler throws leave as InternalError / HTTP 500 / gRPC UNKNOWN (the module
# docstring: duplicated error classes); §5.4 names the error each MUST be, so each of these checks fails
_JS10_UNNAMED = ("lifecycle.message_to_terminal", "lifecycle.unknown_task_message", "streaming.subscribe_terminal",
                 "streaming.subscribe_unknown", "errors.task_not_found", "errors.cancel_unknown",
                 "errors.not_cancelable", "errors.extended_card_not_declared")
JS10_DEVIATIONS = {
    GRPC_URL,
    *{(c, M, i) for c in _JS10_UNNAMED for i in V1},
    ("errors.invalid_params", M, "jsonrpc 1.0"), ("errors.invalid_params", M, "grpc 1.0"),  # REST's validator is 400
    ("errors.push_not_supported", M, "jsonrpc 1.0"), ("errors.push_not_supported", M, "grpc 1.0"),
    ("lifecycle.context_mismatch_rejected", M, "http_json 1.0"),  # refused, but as HTTP 500 (JSON-RPC/gRPC pass)
    # JSON-RPC 2.0 §5.1: -32600 for a request without a method; it answers -32602, as 1.3.0 still does
    ("errors.invalid_request", M, "jsonrpc 1.0"),
    # VersionNotSupportedError -32009 sent with HTTP 500, which the official clients raise on before reading the body
    ("errors.version_not_supported", M, "jsonrpc 1.0"), ("errors.missing_version_is_0_3", M, "jsonrpc 1.0"),
    # §3.1.4 ListTasks: its InMemoryTaskStore lists nothing ({"pageSize": 50}), without the nextPageToken that
    # "MUST always be present"
    *{(c, M, i) for c in ("lifecycle.list_tasks", "lifecycle.list_pagination") for i in V1},
    *{("errors.no_server_errors", M, i) for i in V1},  # the HTTP 500s / gRPC UNKNOWNs above
    # A2A-Version 1.0.1 refused: the header is looked up verbatim, as 1.3.0 still does (test_suite._PATCH)
    *{("errors.patch_version_ignored", M, i) for i in V1},
    ("interop.bindings_agree", M, None),  # InternalError, HTTP 500, UNKNOWN: no binding names the error (§5.1)
    *{(MEDIA, S, i) for i in V1},
}


async def test_python_first_1_0_release_check_passes_on_every_binding(client: HttpClient,
                                                                      sdk10_peer: VenvPeer) -> None:
    result = await run_interfaces(Target(name="sdk10", url=sdk10_peer.base_url, timeout=10.0), client)
    assert result.success and result.reason is None, result.reason
    assert [(i.binding, i.protocol_version, i.interface_url, i.success) for i in result.interfaces] == [
        ("jsonrpc", "1.0", sdk10_peer.base_url + "/a2a/jsonrpc", True),
        ("http_json", "1.0", sdk10_peer.rest_url, True), ("grpc", "1.0", sdk10_peer.grpc_url, True)]
    assert _failed(result) == {("card.cache_headers", S, None), GRPC_URL}
    assert level(result) is Level.PARTIAL  # SHOULDs only


async def test_python_first_1_0_release_full_suite(client: HttpClient, sdk10_peer: VenvPeer) -> None:
    result = await _suite(client, sdk10_peer)
    assert result.success and result.protocol_version == "1.0"
    assert _failed(result) == SDK10_DEVIATIONS
    report = to_dict(result)
    assert report["errorMapping"] == "1.0.0", report["errorMappingEvidence"]  # 409, UNIMPLEMENTED: 1.0.0 only
    assert "TaskNotCancelableError HTTP 409: 1.0.0 only" in report["errorMappingEvidence"]
    checks = {(c.id, c.interface): c for c in result.checks}
    for iface in ("http_json 1.0", "grpc 1.0"):  # the 1.0.0 statuses are graded as 1.0.0's, not failed
        status = checks[("errors.error_status", iface)]
        assert status.status is Status.PASS, status.message
    assert "TaskNotCancelableError HTTP 409" in checks[("errors.error_status", "http_json 1.0")].message
    assert "UnsupportedOperationError gRPC UNIMPLEMENTED" in checks[("errors.error_status", "grpc 1.0")].message
    # before: details_typed failed the MUST for -32600's string and -32602's object data (1.0.0 §9.5's example)
    typed = checks[("errors.details_typed", "jsonrpc 1.0")]
    assert typed.status is Status.SKIP and "not graded: 3 JSON-RPC error(s) of its own" in typed.message, typed
    assert "InvalidParamsError" in typed.message  # (its A2A errors carry no data at all: errors.error_info)
    for iface in V1:
        for cid in ("lifecycle.cancel", "streaming.subscribe", "lifecycle.input_required", "errors.task_not_found",
                    "errors.not_cancelable", "errors.push_not_supported", "lifecycle.history_length"):
            assert checks[(cid, iface)].status is Status.PASS, (cid, iface, checks[(cid, iface)].message)
    assert level(result) is Level.MINIMAL  # lifecycle MUSTs fail (context mismatch, includeArtifacts)


async def test_js_first_1_0_release_check_passes_on_every_binding(client: HttpClient, js10_peer: VenvPeer) -> None:
    result = await run_interfaces(Target(name="js10", url=js10_peer.base_url, timeout=10.0), client)
    assert result.success and result.reason is None, result.reason
    assert [(i.binding, i.protocol_version, i.interface_url, i.success) for i in result.interfaces] == [
        ("jsonrpc", "1.0", js10_peer.base_url + "/a2a/jsonrpc", True),
        ("http_json", "1.0", js10_peer.rest_url, True), ("grpc", "1.0", js10_peer.grpc_url, True)]
    # the quick check's cross-binding probe of an unknown task already meets the unnamed errors: 1.0 §5.1 "all
    # supported protocols MUST: ... Same Error Handling: Map errors consistently using appropriate protocol-specific
    # codes" (InternalError, HTTP 500, gRPC UNKNOWN for a task that does not exist are no such codes)
    assert _failed(result) == {GRPC_URL, ("interop.bindings_agree", M, None)}


async def test_js_first_1_0_release_full_suite(client: HttpClient, js10_peer: VenvPeer) -> None:
    result = await _suite(client, js10_peer)
    assert result.success and result.protocol_version == "1.0"
    assert _failed(result) == JS10_DEVIATIONS
    checks = {(c.id, c.interface): c for c in result.checks}
    assert "InternalError -32603: Task not found" in checks[("errors.task_not_found", "jsonrpc 1.0")].message
    assert "HTTP 500" in checks[("errors.task_not_found", "http_json 1.0")].message
    assert "gRPC UNKNOWN" in checks[("errors.task_not_found", "grpc 1.0")].message
    # the one named A2A error on gRPC is 1.0.1's: VersionNotSupportedError FAILED_PRECONDITION (1.0.0: UNIMPLEMENTED)
    assert to_dict(result)["errorMapping"] == "1.0.1"
    for iface in V1:
        for cid in ("lifecycle.cancel", "streaming.subscribe", "lifecycle.input_required", "lifecycle.history_length"):
            assert checks[(cid, iface)].status is Status.PASS, (cid, iface, checks[(cid, iface)].message)
    assert level(result) is Level.NON_CONFORMANT  # requests crashed the server (HTTP 500, gRPC UNKNOWN)
