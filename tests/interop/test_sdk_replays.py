"""The probe's verdict on the official Go and Java SDK servers, replayed byte for byte in shape
(tests/agents/replays.py; every shape's source line in docs/replays.md). No external program: the fast loop.

The premise: a2a-sdk's own definitions (the 1.0 proto its clients parse with, strictly; the 0.3 pydantic models of
its 0.3 client) read every replayed answer, so no replay may fail invocation.

`check` (invoke and stream): every replay passes. Findings: a2a-go v2 serves its card without Cache-Control/ETag
(1.0 §8.6.1 SHOULD); a2a-go v0.3.15's card says "protocolVersion": "" (card.protocol_version SHOULD, read as 0.3
by its preferredTransport); a2a-go on a host outside UTC stamps local offsets (1.0 §5.6.1 MUST, a finding, not a
failed call). a2a-java 1.x and 0.3.3 (JSON-RPC and HTTP+JSON): nothing.

The suite: a2a-go v2 breaks five MUSTs (A2A-Version never checked: 99.0 served, a missing header served as 1.0;
GetExtendedAgentCard without the capability answers -32007, not UnsupportedOperationError; a message to a
COMPLETED task is InvalidParams, not UnsupportedOperationError; SubscribeToTask of a finished task is
TaskNotFound, not UnsupportedOperationError); a2a-java 1.x breaks three (A2A-Version checked on SendMessage and
SendStreamingMessage only, so GetTask with 99.0 or without the header is served as 1.0; its parse error has no
`id` member, errors.response_id), a2a-java 0.3.3's JSON-RPC server that one (errors.response_id); a2a-java 0.3.3's
REST server accepts a message to a terminal task (0.3 §7.1) and, at SHOULD, one naming an unknown task and a part
of a media type the card does not accept.

gRPC (go-1.0-grpc, a2a-go v2.3.1's a2agrpc/v1 Handler): a2a-sdk's own GrpcTransport reads every answer and names
every refusal that carries an ErrorInfo. The hello-world example's card has "version": "" (a MUST finding, 1.0 §5.7;
the calls decide); with a Version, `check` passes with two SHOULD findings (no cache headers, a host:port URL) and
the suite finds the five MUSTs of the JSON lines plus ListTasks (always UNAUTHENTICATED) and SendMessage's ignored
historyLength.

gRPC (java-1.0-grpc, a2a-java v1.2.0.Final's GrpcHandler): the same transport reads every answer and names every
refusal (each carries an ErrorInfo). `check` passes with one SHOULD finding (the card's localhost:<port> url); the
suite finds the two MUSTs of a2a-java's JSON lines (A2A-Version read on SendMessage/SendStreamingMessage only) and
the unchecked input modes (SHOULD).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import aiohttp
import pytest
from a2a.compat.v0_3 import a2a_v0_3_pb2
from a2a.compat.v0_3 import proto_utils as v03_proto
from a2a.compat.v0_3 import types as v03
from a2a.types import a2a_pb2
from google.protobuf import json_format

from probe.engine import run_interfaces
from probe.levels import Level, level
from probe.results import ProbeResult, Severity, Status
from probe.suite import SuiteOptions, run_suite_interfaces
from probe.target import Target
from probe.wire.http import HttpClient
from tests.agents.replays import LINES, replay_agent

M, S = Severity.MUST, Severity.SHOULD
GRPC_LINES = [line for line in LINES if line.endswith("grpc")]
HTTP_LINES = [line for line in LINES if line not in GRPC_LINES]
V1_LINES = [line for line in HTTP_LINES if "-1.0-" in line]
V03_LINES = [line for line in LINES if "-0.3-" in line]
V03_RPC_LINES = [line for line in V03_LINES if line.endswith("jsonrpc")]


def _failed(result: ProbeResult) -> set[tuple[str, Severity]]:
    return {(c.id, c.severity) for c in result.failed_checks()}


async def _check(client: HttpClient, line: str, **kw: Any) -> ProbeResult:
    """`a2a-probe check URL --binding all`: discovery, validation, ping, invoke and stream on every interface."""
    async with replay_agent(line, **kw) as origin:
        return await run_interfaces(Target(name=line, url=origin, timeout=5.0), client)


async def _suite(client: HttpClient, line: str, **kw: Any) -> ProbeResult:
    async with replay_agent(line, **kw) as origin:
        return await run_suite_interfaces(Target(name=line, url=origin, timeout=5.0), client,
                                          SuiteOptions(timeout=20.0))


# ---- the premise: official clients read every replayed answer ----------------------------------------------


async def _exchange(line: str, **kw: Any) -> dict[str, Any]:
    """The replay's card, SendMessage answer, stream events and GetTask answer, as sent."""
    version = "1.0" if "-1.0-" in line else "0.3"
    rest = line.endswith("rest")
    message = {"messageId": "m1", "role": "ROLE_USER" if version == "1.0" else "user",
               "parts": [{"text": "hi"} if version == "1.0" else {"kind": "text", "text": "hi"}]}
    base = ""
    if rest and version == "0.3":  # the 0.3 proto's ProtoJSON under /v1
        message, base = {"messageId": "m1", "role": "ROLE_USER", "content": [{"text": "hi"}]}, "/v1"
    out: dict[str, Any] = {}
    async with replay_agent(line, **kw) as origin, aiohttp.ClientSession() as http:
        async with http.get(f"{origin}/.well-known/agent-card.json") as resp:
            out["card"] = json.loads(await resp.read())
        iface = out["card"]["supportedInterfaces"][0]["url"] if version == "1.0" else out["card"]["url"]
        headers = {"A2A-Version": "1.0"} if version == "1.0" else {}

        async def call(method: str, path: str, params: dict[str, Any]) -> tuple[bytes, str]:
            if rest:
                async with http.post(iface + path, json=params, headers=headers) as r:
                    return await r.read(), r.content_type
            body = {"jsonrpc": "2.0", "id": "r1", "method": method, "params": params}
            async with http.post(iface, json=body, headers=headers) as r:
                return await r.read(), r.content_type

        names = ("SendMessage", "SendStreamingMessage", "GetTask") if version == "1.0" else (
            "message/send", "message/stream", "tasks/get")
        sent, _ = await call(names[0], base + "/message:send", {"message": message})
        out["send"] = json.loads(sent)
        raw, ctype = await call(names[1], base + "/message:stream", {"message": message})
        assert ctype == "text/event-stream"
        out["events"] = [json.loads(line[len("data: "):]) for line in raw.decode().split("\n")
                         if line.startswith("data: ")]
        result = out["send"] if rest else out["send"]["result"]
        tid = (result.get("task") or {}).get("id") if version == "1.0" or rest else result.get("id")
        if rest:
            async with http.get(f"{iface}{base}/tasks/{tid}", headers=headers) as r:
                out["get"] = json.loads(await r.read())
        else:
            out["get"] = json.loads((await call(names[2], "", {"id": tid}))[0])
    return out


@pytest.mark.parametrize("line", V1_LINES)
@pytest.mark.parametrize("message_reply", [False, True])
async def test_the_official_1_0_definitions_read_every_answer(line: str, message_reply: bool) -> None:
    """a2a-sdk's proto definitions (what its clients parse with) take every 1.0 answer, strictly (no unknown
    field): Go's 7-digit timestamps, Java's defaults ("", [], false), Java REST's pretty printing."""
    got = await _exchange(line, message_reply=message_reply)
    json_format.ParseDict(got["card"], a2a_pb2.AgentCard())
    rest = line.endswith("rest")
    sent = got["send"] if rest else got["send"]["result"]
    parsed = json_format.ParseDict(sent, a2a_pb2.SendMessageResponse())
    assert parsed.WhichOneof("payload") == ("message" if message_reply else "task")
    events = got["events"] if rest else [e["result"] for e in got["events"]]
    kinds = [json_format.ParseDict(e, a2a_pb2.StreamResponse()).WhichOneof("payload") for e in events]
    if message_reply:
        assert kinds == ["message"]
    else:
        assert kinds == ["task", "status_update", "artifact_update", "status_update"]
        task = json_format.ParseDict(got["get"] if rest else got["get"]["result"], a2a_pb2.Task())
        assert task.status.state == a2a_pb2.TASK_STATE_COMPLETED and task.artifacts[0].parts[0].text


@pytest.mark.parametrize("line", V03_RPC_LINES)
async def test_the_official_0_3_models_read_every_answer(line: str) -> None:
    """a2a-sdk's 0.3 models (a2a.compat.v0_3.types, the 0.3 client's) take the card, even Go's
    "protocolVersion": "", and every answer."""
    got = await _exchange(line)
    card = v03.AgentCard.model_validate(got["card"])
    assert card.protocol_version == ("" if line.startswith("go") else "0.3.0")
    sent = v03.SendMessageResponse.model_validate(got["send"]).root
    assert isinstance(sent, v03.SendMessageSuccessResponse) and isinstance(sent.result, v03.Task)
    events = [v03.SendStreamingMessageResponse.model_validate(e).root for e in got["events"]]
    assert all(isinstance(e, v03.SendStreamingMessageSuccessResponse) for e in events)
    assert [type(e.result).__name__ for e in events] == [  # type: ignore[union-attr]
        "Task", "TaskStatusUpdateEvent", "TaskArtifactUpdateEvent", "TaskStatusUpdateEvent"]
    task = v03.GetTaskResponse.model_validate(got["get"]).root
    assert isinstance(task, v03.GetTaskSuccessResponse) and task.result.status.state == v03.TaskState.completed


@pytest.mark.parametrize("message_reply", [False, True])
async def test_the_official_0_3_proto_reads_every_java_rest_answer(message_reply: bool) -> None:
    """a2a-java 0.3.3's HTTP+JSON answers are the 0.3 proto's ProtoJSON (pretty bodies, compact stream events):
    a2a-sdk's 0.3 proto (a2a.compat.v0_3, a superset of a2a-java 0.3.3's) parses each one strictly, as a2a-sdk
    0.3's RestTransport does (json_format.ParseDict without ignore_unknown_fields), and its FromProto makes the
    0.3 models of them."""
    got = await _exchange("java-0.3-rest", message_reply=message_reply)
    card = v03.AgentCard.model_validate(got["card"])
    assert card.preferred_transport == "HTTP+JSON" and card.protocol_version == "0.3.0"
    sent = json_format.ParseDict(got["send"], a2a_v0_3_pb2.SendMessageResponse())
    assert sent.WhichOneof("payload") == ("msg" if message_reply else "task")
    events = [json_format.ParseDict(e, a2a_v0_3_pb2.StreamResponse()) for e in got["events"]]
    results = [type(v03_proto.FromProto.stream_response(e)).__name__ for e in events]
    if message_reply:
        assert results == ["Message"]
        return
    assert results == ["Task", "TaskStatusUpdateEvent", "TaskArtifactUpdateEvent", "TaskStatusUpdateEvent"]
    assert events[-1].status_update.final
    task = v03_proto.FromProto.task(json_format.ParseDict(got["get"], a2a_v0_3_pb2.Task()))
    assert task.status.state == v03.TaskState.completed and task.artifacts and task.artifacts[0].parts


# ---- `check` (invoke and stream on every interface): the verdict and every finding ---------------------------


CHECK_FINDINGS: dict[str, set[tuple[str, Severity]]] = {
    # a2a-go serves its card with Content-Type and CORS headers only (a2asrv/agentcard.go:166-172): 1.0 §8.6.1
    # "Agent Card HTTP endpoints SHOULD include a Cache-Control response header with a max-age directive …"
    "go-1.0-jsonrpc": {("card.cache_headers", S)},
    "go-1.0-rest": {("card.cache_headers", S)},
    # "protocolVersion": "" (a2a/agent.go:93, never set by the examples or the TCK server): the card is read as 0.3
    # by its preferredTransport, and the empty version is the finding (0.3 §5.5: the version the agent supports)
    "go-0.3-jsonrpc": {("card.protocol_version", S)},
    # Java's defaults ("", [], false), its 7-line pretty REST bodies, `: SSE stream started` and `data:` before
    # `id:` are all ProtoJSON / SSE the official parsers read: nothing to report
    "java-1.0-jsonrpc": set(),
    "java-1.0-rest": set(),
    "java-0.3-jsonrpc": set(),
    # the 0.3 proto's ProtoJSON, pretty (JsonFormat.printer()) for answers and compact in the stream, with
    # `"metadata": {}` on every Task and Message: nothing to report
    "java-0.3-rest": set(),
}


@pytest.mark.parametrize("line", HTTP_LINES)
async def test_check_verdict_on_each_sdk_server(client: HttpClient, line: str) -> None:
    result = await _check(client, line)
    assert result.success and result.reason is None, (result.reason, result.failed_checks())
    version = "1.0" if "-1.0-" in line else "0.3"
    binding = "http_json" if line.endswith("rest") else "jsonrpc"
    assert [(i.binding, i.protocol_version, i.success) for i in result.interfaces] == [(binding, version, True)]
    assert _failed(result) == CHECK_FINDINGS[line]
    for cid in ("invoke.framing", "invoke.schema", "invoke.dialect", "invoke.result_shape", "invoke.task_completed",
                "stream.content_type", "stream.events_parse", "stream.schema", "stream.first_event",
                "stream.terminal", "stream.closes_after_terminal", "stream.task_completed"):
        check = result.check(cid)
        assert check is not None and check.status is Status.PASS, (cid, check)
    if version == "1.0":  # Go's 7-digit 'Z' stamps and Java's ProtoJSON ones are UTC
        stamps = result.check("invoke.timestamps_utc")
        assert stamps is not None and stamps.status is Status.PASS, stamps


async def test_the_empty_protocol_version_of_a2a_go_0_3_is_a_finding_not_an_invalid_card(
        client: HttpClient) -> None:
    """Before: `"protocolVersion": ""` made a card of no recognisable version (card_invalid, interface.selected and
    card.required_fields failed: "supportedInterfaces is missing"), though a2a-sdk 0.3's client reads it (the
    premise test above) and calls its url with message/send."""
    result = await _check(client, "go-0.3-jsonrpc")
    assert result.success and result.protocol_version == "0.3"
    finding = result.check("card.protocol_version")
    assert finding is not None and finding.status is Status.FAIL and finding.severity is S
    assert 'protocolVersion is empty ("")' in finding.message
    assert result.check("card.required_fields").status is Status.PASS  # type: ignore[union-attr]


async def test_go_on_a_host_outside_utc_writes_offsets(client: HttpClient) -> None:
    """a2a.NewStatusUpdateEvent stamps time.Now(), local time (core.go:535-546): on a host at +02:00 every status
    timestamp carries +02:00. 1.0 §5.6.1: "Timestamps MUST NOT include timezone offsets other than 'Z'"; the
    official parsers read the offset, so the call passes and the MUST is a finding."""
    result = await _check(client, "go-1.0-jsonrpc", tz_offset="+02:00")
    assert result.success and result.reason is None
    assert _failed(result) == {("card.cache_headers", S), ("invoke.timestamps_utc", M)}
    assert "+02:00" in result.check("invoke.timestamps_utc").message  # type: ignore[union-attr]


@pytest.mark.parametrize("line", ["go-1.0-jsonrpc", "go-1.0-rest", "java-1.0-jsonrpc", "java-1.0-rest",
                                  "java-0.3-rest"])
async def test_the_hello_world_agents_answer_with_a_message(client: HttpClient, line: str) -> None:
    """The SDKs' hello-world agents answer a Message (Go's without contextId: a2a.NewMessage sets none, and 1.0's
    Message.context_id is optional)."""
    result = await _check(client, line, message_reply=True)
    assert result.success and result.reason is None, result.failed_checks()
    assert _failed(result) == CHECK_FINDINGS[line]


# ---- the conformance suite: what each SDK's server really does with the suite's requests ---------------------

# Judged on the replays: the checks whose requests the replays answer as the SDK's source does (errors, versions,
# follow-ups naming a task, SubscribeToTask). Not replayed, so not asserted: historyLength, returnImmediately,
# ListTasks and content-type validation (the replays' task store is a toy; docs/replays.md).
JUDGED = ("errors.parse_error", "errors.invalid_request", "errors.unknown_method", "errors.invalid_params",
          "errors.task_not_found", "errors.cancel_unknown", "errors.not_cancelable", "errors.version_not_supported",
          "errors.patch_version_ignored", "errors.push_not_supported", "errors.extended_card_not_declared",
          "errors.missing_version_is_0_3", "errors.error_info", "errors.details_typed", "errors.error_status",
          "errors.response_id", "lifecycle.message_to_terminal", "lifecycle.unknown_task_message",
          "streaming.subscribe_terminal", "streaming.subscribe_unknown", "card.cache_headers")
_JSONRPC_ONLY = ("errors.parse_error", "errors.invalid_request", "errors.unknown_method", "errors.response_id")

# The MUSTs each 1.0 server breaks (every other judged check passes):
GO_1_0 = {
    # a2a-go's server never reads A2A-Version (only its client sets it, a2aclient/client.go:263): 1.0 §3.6.2 "If
    # the version is not supported by the interface, agents MUST return a VersionNotSupportedError" and "Agents
    # MUST interpret empty value as 0.3 version"
    "errors.version_not_supported", "errors.missing_version_is_0_3",
    # the default handler checks capabilities only WithCapabilityChecks (handler.go:454-460): -32007
    # ExtendedCardNotConfigured; §3.3.4: without capabilities.extendedAgentCard it MUST be UnsupportedOperationError
    "errors.extended_card_not_declared",
    # a message to a COMPLETED task is InvalidParams (agentexec.go:207-208); §3.1.1's and §3.1.2's errors:
    # "UnsupportedOperationError: Messages sent to Tasks that are in a terminal state … cannot accept further messages"
    "lifecycle.message_to_terminal",
    # SubscribeToTask of a finished task: "task not found: no active execution" (local_manager.go:134-140);
    # §3.1.6: a task in a terminal state MUST get UnsupportedOperationError
    "streaming.subscribe_terminal",
}
# a2a-java validates A2A-Version on SendMessage and SendStreamingMessage only (JSONRPCHandler.java:231-233,
# 289-298; RestHandler.java:298): GetTask with 99.0, or with no header at all, is served with 1.0 semantics
JAVA_1_0 = {"errors.version_not_supported", "errors.missing_version_is_0_3"}
# a2a-java's parse error has no `id` member (test_a_parse_error_without_an_id_member_is_a_finding); on JSON-RPC only
JAVA_1_0_JSONRPC = {*JAVA_1_0, "errors.response_id"}


@pytest.mark.parametrize(("line", "breaks"), [("go-1.0-jsonrpc", GO_1_0), ("go-1.0-rest", GO_1_0),
                                               ("java-1.0-jsonrpc", JAVA_1_0_JSONRPC), ("java-1.0-rest", JAVA_1_0)])
async def test_suite_findings_on_the_1_0_servers(client: HttpClient, line: str, breaks: set[str]) -> None:
    result = await _suite(client, line)
    assert result.success and result.protocol_version == "1.0", result.reason
    rest = line.endswith("rest")
    judged = list(JUDGED)
    statuses = {cid: result.check(cid) for cid in judged}
    expected = {cid: Status.FAIL if cid in breaks else Status.PASS for cid in judged}
    if rest:
        expected |= {cid: Status.SKIP for cid in _JSONRPC_ONLY if cid in judged}
    else:
        expected["errors.error_status"] = Status.SKIP  # HTTP 200 carries every JSON-RPC error
    expected["card.cache_headers"] = Status.FAIL if line.startswith("go") else Status.PASS
    got = {cid: c.status if c is not None else None for cid, c in statuses.items()}
    assert got == expected, {cid: statuses[cid].message for cid in judged if got[cid] != expected[cid]}  # type: ignore[union-attr]
    for cid in breaks:
        assert statuses[cid].severity is M  # type: ignore[union-attr]
    if line.startswith("go"):
        assert "no active execution" in statuses["streaming.subscribe_terminal"].message  # type: ignore[union-attr]
        assert "-32007" in statuses["errors.extended_card_not_declared"].message or rest  # type: ignore[union-attr]


async def test_java_rest_statuses_follow_the_1_0_0_mapping(client: HttpClient) -> None:
    """a2a-java's A2AErrorCodes (A2AErrorCodes.java:19-61) give TaskNotCancelableError HTTP 409, 1.0.0's status
    (1.0.1 §5.4 says 400): errors.error_status passes on the 1.0.0 mapping, as it does for a2a-sdk 1.0.0."""
    result = await _suite(client, "java-1.0-rest")
    cancel = result.check("errors.not_cancelable")
    assert cancel is not None and cancel.status is Status.PASS and "HTTP 409" in cancel.message
    assert "1.0.0 mapping" in cancel.message


async def test_an_error_event_in_a_rest_stream_is_judged_by_its_own_status(client: HttpClient) -> None:
    """Both SDKs write the SSE headers before SubscribeToTask looks the task up, so its refusal is an event
    `{"error": {"code": 404, "status": "NOT_FOUND", …}}` in an HTTP 200 stream. errors.error_status judges the
    status the event declares. Before: it had no mapping and failed with "TaskNotFoundError came with HTTP 404;
    the spec maps it to HTTP 404"."""
    result = await _suite(client, "go-1.0-rest")
    status = result.check("errors.error_status")
    assert status is not None and status.status is Status.PASS, status
    unknown = result.check("streaming.subscribe_unknown")
    assert unknown is not None and unknown.status is Status.PASS
    assert "HTTP 404 TaskNotFoundError" in unknown.message and "1.0.0/1.0.1 mapping" in unknown.message


@pytest.mark.parametrize("line", ["go-1.0-rest", "java-1.0-rest", "java-0.3-rest"])
async def test_the_suite_on_every_interface_of_a_rest_only_agent(client: HttpClient, line: str) -> None:
    """`check --binding all --suite full` on an agent that offers HTTP+JSON only: one interface, HTTP+JSON. Before,
    each_interface started from the plain choice (JSON-RPC), so the report had a phantom interface failing
    interface.selected ("no JSONRPC 1.0/0.3 interface") and interop.bindings_agree, and the verdict failed."""
    result = await _suite(client, line)
    assert result.success and result.reason is None
    version = "0.3" if "-0.3-" in line else "1.0"
    assert [(i.binding, i.protocol_version, i.success) for i in result.interfaces] == [("http_json", version, True)]
    assert result.check("interface.selected").status is Status.PASS  # type: ignore[union-attr]
    assert result.check("interop.bindings_agree").status is Status.SKIP  # type: ignore[union-attr]


@pytest.mark.parametrize("line", V03_RPC_LINES)
async def test_suite_findings_on_the_0_3_servers(client: HttpClient, line: str) -> None:
    """0.3 has no A2A-Version, no ErrorInfo rule and no HTTP status table for JSON-RPC: those checks are not graded;
    every replayed error is the one 0.3 §8 names."""
    result = await _suite(client, line)
    assert result.success and result.protocol_version == "0.3", result.reason
    for cid in ("errors.parse_error", "errors.invalid_request", "errors.unknown_method", "errors.invalid_params",
                "errors.task_not_found", "errors.cancel_unknown", "errors.not_cancelable", "errors.push_not_supported",
                "streaming.subscribe_unknown"):
        check = result.check(cid)
        assert check is not None and check.status is Status.PASS, (cid, check)
    for cid in ("errors.version_not_supported", "errors.error_info", "errors.missing_version_is_0_3"):
        assert result.check(cid).status is Status.SKIP  # type: ignore[union-attr]


# a2a-java 0.3.3's REST refuses as its RestHandler does: `{"error": "io.a2a.spec.<Class>", "message": …}` with
# mapErrorToHttpStatus' status; 0.3 §3.2.3 asks statuses "that correspond to A2A error types" and "a consistent JSON
# format that maps to A2A error types", which the class name is. The judged checks and what each answers:
JAVA_0_3_REST_PASS = {
    "errors.invalid_params": "HTTP 422 InvalidParamsError: Invalid parameters",  # FromProto.message: no messageId
    "errors.task_not_found": "HTTP 404 TaskNotFoundError: Task not found",
    "errors.cancel_unknown": "HTTP 404 TaskNotFoundError: Task not found",
    "errors.not_cancelable": "HTTP 409 TaskNotCancelableError: Task cannot be canceled - current state: completed",
    "errors.push_not_supported": "HTTP 501 PushNotificationNotSupportedError",
    "errors.extended_card_not_declared": "HTTP 404 ExtendedAgentCardNotConfiguredError",  # MAY in 0.3
    "errors.error_status": "TaskNotCancelableError HTTP 409",
    # the refusal is the one event of an HTTP 200 stream, with no status of its own
    "streaming.subscribe_unknown": "HTTP+JSON TaskNotFoundError: Task not found",
    # 0.3 asks for 1 only (it never fixed what 0 means): the pass says so, not the 1.0 title's "0 returns none"
    "lifecycle.history_length": "historyLength=1 returned 1 message(s)",
}
JAVA_0_3_REST_FAIL = {
    # DefaultRequestHandler.initMessageSend (v0.3.3, DefaultRequestHandler.java:750-776) continues a terminal task
    # and RequestContext (RequestContext.java:42-47, 103-111) makes an unknown taskId the new task's id: neither is
    # refused. 0.3 §7.1: "Sending a message to such a task will result in an error"; §8.2's SHOULD for -32001
    ("lifecycle.message_to_terminal", M): "was accepted",
    ("lifecycle.unknown_task_message", S): "got HTTP 200 with a result",
    # no input-mode check in a2a-java 0.3.3 (as in both Python SDKs by default): §8.2's SHOULD for -32005
    ("errors.content_type_not_supported", S): "got HTTP 200 with a result",
}


async def test_suite_findings_on_java_0_3_rest(client: HttpClient) -> None:
    result = await _suite(client, "java-0.3-rest")
    assert result.success and result.protocol_version == "0.3", result.reason
    for cid, words in JAVA_0_3_REST_PASS.items():
        check = result.check(cid)
        assert check is not None and check.status is Status.PASS and words in check.message, (cid, check)
    for (cid, sev), words in JAVA_0_3_REST_FAIL.items():
        check = result.check(cid)
        assert check is not None and check.status is Status.FAIL and check.severity is sev, (cid, check)
        assert words in check.message, check.message
    for cid in ("errors.parse_error", "errors.invalid_request", "errors.unknown_method",  # JSON-RPC only
                "errors.version_not_supported", "errors.error_info", "errors.missing_version_is_0_3",
                "errors.details_typed", "streaming.subscribe_terminal"):
        assert result.check(cid).status is Status.SKIP, cid  # type: ignore[union-attr]


async def test_the_0_3_proto_file_part_carries_no_name(client: HttpClient) -> None:
    """errors.content_type_not_supported sends a 0.3 REST/gRPC FilePart of the v0.3.0 proto (file_with_bytes,
    mime_type: no `name`, specification/grpc/a2a.proto:209-215). Before, it sent `name` too, which a2a-java 0.3.3's
    strict JsonFormat.parser() refused ("Cannot find field: name in message a2a.v1.FilePart", HTTP 422
    InvalidParamsError), so the check judged the probe's own stray field instead of the agent's media-type
    handling."""
    result = await _suite(client, "java-0.3-rest")
    check = result.check("errors.content_type_not_supported")
    assert check is not None and "Cannot find field" not in check.message and "with a result" in check.message


@pytest.mark.parametrize("line", ["java-1.0-jsonrpc", "java-0.3-jsonrpc"])
async def test_a_parse_error_without_an_id_member_is_a_finding(client: HttpClient, line: str) -> None:
    """a2a-java answers an unparsable body with no `id` member at all: 1.x's Gson JsonWriter (serializeNulls off)
    drops `"id": null` with its name (jsonrpc-common JsonUtil.writeJsonRpcId), 0.3.3's Jackson NON_ABSENT leaves
    the null id out (JSONRPCResponse.java:13). JSON-RPC 2.0 §5: "id: This member is REQUIRED. … If there was an
    error in detecting the id in the Request object (e.g. Parse error/Invalid Request), it MUST be Null"; the 0.3
    schema's JSONRPCErrorResponse requires `id` too. The official clients read the error anyway (their models
    default the id to None), so this is a suite finding, errors.response_id (MUST in 1.0, 0.3 and 0.2), never a
    failed call nor a failed errors.parse_error: the error itself is the right one. Before, parse_envelope read the
    missing id as null (`doc.get('id')`) and nothing judged it."""
    result = await _suite(client, line)
    assert result.success, result.reason
    parse = result.check("errors.parse_error")
    assert parse is not None and parse.status is Status.PASS, parse
    rid = result.check("errors.response_id")
    assert rid is not None and rid.status is Status.FAIL and rid.severity is M, rid
    assert rid.message.startswith('no "id" member (REQUIRED: null for a body whose id could not be read): '
                                  'errors.parse_error (JSONParseError) (1 of ')  # every other error echoes its id


@pytest.mark.parametrize("line", ["go-1.0-jsonrpc", "go-0.3-jsonrpc"])
async def test_a_go_parse_error_has_its_null_id(client: HttpClient, line: str) -> None:
    """a2a-go writes `"id":null` for an unparsable body and echoes the id on every other error: errors.response_id
    passes, counting every JSON-RPC error answer of the suite."""
    result = await _suite(client, line)
    rid = result.check("errors.response_id")
    assert rid is not None and rid.status is Status.PASS, rid
    assert "JSON-RPC error answer(s), each with the id due" in rid.message


# ---- gRPC: a2a-go v2.3.1's a2agrpc/v1 Handler behind the hello-world gRPC example's card ----------------------

# examples/helloworld/server/grpc/main.go sets no Version (the card says "version": ""); a deployment that sets one
# (as the TCK server does, e2e/tck/sut.go:87) is what the invocation checks and the suite are judged on
VERSIONED = {"card_overrides": {"version": "1.0.0"}}


async def _grpc_card(origin: str) -> a2a_pb2.AgentCard:
    async with aiohttp.ClientSession() as http, http.get(f"{origin}/.well-known/agent-card.json") as resp:
        return json_format.ParseDict(json.loads(await resp.read()), a2a_pb2.AgentCard())

async def _grpc_round_trip(transport: Any, message_reply: bool) -> a2a_pb2.Task | None:
    """SendMessage, the stream's events and GetTask through a2a-sdk 1.3's GrpcTransport, as every gRPC replay answers
    them: the completed task, or None for an agent that answers with a Message (nothing more to ask it)."""
    message = a2a_pb2.Message(message_id="m1", role=a2a_pb2.ROLE_USER, parts=[a2a_pb2.Part(text="hi")])
    sent = await transport.send_message(a2a_pb2.SendMessageRequest(message=message))
    assert sent.WhichOneof("payload") == ("message" if message_reply else "task")
    kinds = [e.WhichOneof("payload") async for e in transport.send_message_streaming(
        a2a_pb2.SendMessageRequest(message=message))]
    if message_reply:
        assert kinds == ["message"]
        return None
    assert kinds == ["task", "status_update", "artifact_update", "status_update"]
    task = await transport.get_task(a2a_pb2.GetTaskRequest(id=sent.task.id))
    assert task.status.state == a2a_pb2.TASK_STATE_COMPLETED and task.artifacts[0].parts[0].text
    return task



@pytest.mark.parametrize("message_reply", [False, True])
async def test_the_official_grpc_client_reads_every_go_answer(message_reply: bool) -> None:
    """a2a-sdk 1.3's GrpcTransport (what its Client calls gRPC agents with) reads the card's host:port interface,
    SendMessage (Task or Message), the stream's events and GetTask, and names each refusal a2a-go sends with an
    ErrorInfo (reason, domain a2a-protocol.org) by its A2A error; pbconv's conversion errors carry no details, and
    its client reads them as a bare gRPC error, as it does UNAUTHENTICATED (no A2A reason of its own)."""
    import grpc.aio
    from a2a.client.errors import A2AClientError
    from a2a.client.transports.grpc import GrpcTransport
    from a2a.utils import errors as sdk_errors

    async with replay_agent("go-1.0-grpc", message_reply=message_reply) as origin:
        card = await _grpc_card(origin)
        iface = card.supported_interfaces[0]
        assert (iface.protocol_binding, iface.protocol_version, card.version) == ("GRPC", "1.0", "")
        assert "://" not in iface.url  # "127.0.0.1:<port>", NewAgentInterface(addr, GRPC)
        transport = GrpcTransport(grpc.aio.insecure_channel(iface.url), card)
        try:
            task = await _grpc_round_trip(transport, message_reply)
            if task is None:
                return
            refusals = {
                "unknown task": (transport.get_task(a2a_pb2.GetTaskRequest(id="nope")), sdk_errors.TaskNotFoundError),
                "cancel": (transport.cancel_task(a2a_pb2.CancelTaskRequest(id=task.id)),
                           sdk_errors.TaskNotCancelableError),
                "follow-up": (transport.send_message(a2a_pb2.SendMessageRequest(message=a2a_pb2.Message(
                    message_id="m2", role=a2a_pb2.ROLE_USER, task_id=task.id, parts=[a2a_pb2.Part(text="more")]))),
                    sdk_errors.InvalidParamsError),
                "push": (transport.create_task_push_notification_config(a2a_pb2.TaskPushNotificationConfig(
                    task_id=task.id, url="https://example.com/hook")), sdk_errors.PushNotificationNotSupportedError),
            }
            for call, expected in refusals.values():
                with pytest.raises(expected):
                    await call
            with pytest.raises(sdk_errors.TaskNotFoundError, match="no active execution"):
                _ = [e async for e in transport.subscribe(a2a_pb2.SubscribeToTaskRequest(id=task.id))]
            with pytest.raises(A2AClientError, match="gRPC Error INVALID_ARGUMENT: failed to convert request: "
                               "message id cannot be empty") as bare:
                await transport.send_message(a2a_pb2.SendMessageRequest(message=a2a_pb2.Message(
                    role=a2a_pb2.ROLE_USER, parts=[a2a_pb2.Part(text="x")])))
            assert type(bare.value) is A2AClientError  # no InvalidParamsError: no ErrorInfo to name it
            with pytest.raises(A2AClientError, match="gRPC Error UNAUTHENTICATED: failed to list tasks"):
                await transport.list_tasks(a2a_pb2.ListTasksRequest())
        finally:
            await transport.close()


async def test_the_go_hello_world_grpc_card_fails_a_must_the_client_reads_past(client: HttpClient) -> None:
    """The hello-world gRPC example's card has no Version: `"version": ""` (a2a/agent.go:75, no omitempty). 1.0
    §5.7: a REQUIRED field "MUST be present and set"; "" is ProtoJSON's unset default, and a2a-sdk 1.3 reads it so
    too (proto_utils._check_required_field_violation: a value equal to the default is "Field is required."), yet its
    client does not validate a card it fetches and calls the agent: the MUST is graded (non-conformant), and the
    verdict is the calls' (docs/conformance-audit.md); plus the SHOULDs below."""
    result = await _check(client, "go-1.0-grpc")
    assert result.success and result.reason is None, result.reason
    assert level(result) is Level.NON_CONFORMANT
    assert {(c.id, c.severity) for c in result.failed_checks() if c.severity is M} == {("card.required_fields", M)}
    assert result.check("card.required_fields").message == "version is empty"  # type: ignore[union-attr]


GO_GRPC_CHECK_FINDINGS = {
    # a2asrv.NewStaticAgentCardHandler: Content-Type and CORS only (agentcard.go:166-172), 1.0 §8.6.1 SHOULD
    ("card.cache_headers", S),
    # "127.0.0.1:<port>": the proto's AgentInterface.url "Must be a valid absolute HTTPS URL in production"
    # (a2a.proto:337); graded SHOULD (registry.py interface.grpc_url): TLS or not, the scheme would say
    ("interface.grpc_url", S),
}


@pytest.mark.parametrize("message_reply", [False, True])
async def test_check_verdict_on_the_go_grpc_server(client: HttpClient, message_reply: bool) -> None:
    result = await _check(client, "go-1.0-grpc", message_reply=message_reply, **VERSIONED)
    assert result.success and result.reason is None, (result.reason, result.failed_checks())
    assert [(i.binding, i.protocol_version, i.success) for i in result.interfaces] == [("grpc", "1.0", True)]
    assert _failed(result) == GO_GRPC_CHECK_FINDINGS
    for cid in ("invoke.framing", "invoke.schema", "invoke.result_shape", "stream.events_parse", "stream.schema",
                "stream.first_event", "stream.terminal", "stream.closes_after_terminal"):
        check = result.check(cid)
        assert check is not None and check.status is Status.PASS, (cid, check)
    if not message_reply:
        for cid in ("invoke.task_completed", "stream.task_completed"):
            assert result.check(cid).status is Status.PASS, cid  # type: ignore[union-attr]


GO_GRPC_BREAKS = GO_1_0 | {
    # ListTasks: taskstore.InMemory.List needs a user name (inmemory.go:170-176), and without auth middleware the
    # call context's User has none (a2asrv/middleware.go:36-39): every ListTasks is UNAUTHENTICATED, on a card that
    # declares no security. §3.1.4 is a core operation (§3: "all A2A implementations must support")
    "lifecycle.list_tasks",
    # SendMessageConfiguration.historyLength is converted (pbconv from_proto.go:165-169) and never applied: only
    # GetTask and ListTasks read it (a2asrv/handler.go:264-273). a2a.proto:150-153: "The server MUST NOT return
    # more messages than the provided value"
    "lifecycle.history_on_send",
}
GO_GRPC_JUDGED = (*(cid for cid in JUDGED if cid not in _JSONRPC_ONLY and cid != "errors.details_typed"),
                  "lifecycle.list_tasks", "lifecycle.history_on_send", "lifecycle.history_length",
                  "lifecycle.return_immediately")

def _grpc_suite(result: ProbeResult, judged: Iterable[str], failing: set[str],
                musts: Iterable[str]) -> dict[str, Any]:
    """The suite's verdict on a gRPC replay: a 1.0 success; each judged check fails where listed (the `musts` among
    them at MUST) and passes otherwise; the JSON-RPC-only checks and errors.details_typed skipped (gRPC details are
    binary google.protobuf.Any: typed by construction); an unaccepted media type accepted (neither SDK checks input
    modes: §3.3.2 SHOULD). Returns the judged checks by id."""
    assert result.success and result.protocol_version == "1.0", result.reason
    statuses = {cid: result.check(cid) for cid in judged}
    expected = {cid: Status.FAIL if cid in failing else Status.PASS for cid in statuses}
    got = {cid: c.status if c is not None else None for cid, c in statuses.items()}
    assert got == expected, {cid: statuses[cid].message for cid in got if got[cid] != expected[cid]}  # type: ignore[union-attr]
    for cid in musts:
        assert statuses[cid].severity is M, cid  # type: ignore[union-attr]
    for cid in (*_JSONRPC_ONLY, "errors.details_typed"):
        assert result.check(cid).status is Status.SKIP, cid  # type: ignore[union-attr]
    unsupported = result.check("errors.content_type_not_supported")
    assert unsupported is not None and unsupported.status is Status.FAIL and unsupported.severity is S
    return statuses


async def test_suite_findings_on_the_go_grpc_server(client: HttpClient) -> None:
    result = await _suite(client, "go-1.0-grpc", **VERSIONED)
    statuses = _grpc_suite(result, GO_GRPC_JUDGED, {*GO_GRPC_BREAKS, "card.cache_headers"}, GO_GRPC_BREAKS)
    assert "failed to list tasks: unauthenticated" in statuses["lifecycle.list_tasks"].message  # type: ignore[union-attr]


async def test_a_bare_invalid_argument_is_invalid_params_on_1_0_grpc(client: HttpClient) -> None:
    """a2a-go refuses a message without messageId in pbconv, before its handler: `status.Errorf(codes.
    InvalidArgument, "failed to convert request: message id cannot be empty")`, no details (a2agrpc/v1
    handler.go:52-55). 1.0 §10.6 asks an ErrorInfo of A2A-specific errors (§5.4's table) only, and its own
    "standard gRPC invalid argument error" example has none; §3.3.2 makes INVALID_ARGUMENT the validation
    status. Before: errors.invalid_params failed (MUST) "expected InvalidParamsError (-32602), got gRPC
    INVALID_ARGUMENT, gRPC INVALID_ARGUMENT error: …", the status named twice as well."""
    result = await _suite(client, "go-1.0-grpc", **VERSIONED)
    check = result.check("errors.invalid_params")
    assert check is not None and check.status is Status.PASS, check
    assert "no ErrorInfo names the error; INVALID_ARGUMENT is InvalidParamsError's status" in check.message
    terminal = result.check("lifecycle.message_to_terminal")
    assert terminal is not None and "got gRPC INVALID_ARGUMENT InvalidParamsError (INVALID_PARAMS)" in terminal.message
    assert "INVALID_ARGUMENT, gRPC" not in terminal.message


# ---- gRPC: a2a-java v1.2.0.Final's GrpcHandler (reference/grpc QuarkusGrpcHandler) -----------------------------


@pytest.mark.parametrize("message_reply", [False, True])
async def test_the_official_grpc_client_reads_every_java_answer(message_reply: bool) -> None:
    """a2a-sdk 1.3's GrpcTransport reads the card's `localhost:<port>` interface (the hello-world example's GRPC
    form, AgentCardProducer.java:39-46), SendMessage (Task or Message), the stream's events, GetTask and ListTasks,
    and names every refusal by its ErrorInfo: a2a-java puts one in every A2A error it answers (GrpcHandler.
    handleError), InvalidParams from its proto mappers and VersionNotSupported included."""
    import grpc.aio
    from a2a.client.transports.grpc import GrpcTransport, _map_grpc_error
    from a2a.types import a2a_pb2_grpc
    from a2a.utils import errors as sdk_errors

    async with replay_agent("java-1.0-grpc", message_reply=message_reply) as origin:
        card = await _grpc_card(origin)
        iface = card.supported_interfaces[0]
        assert (iface.protocol_binding, iface.protocol_version, card.version) == ("GRPC", "1.0", "1.0.0")
        assert iface.url.startswith("localhost:")
        channel = grpc.aio.insecure_channel(iface.url)
        transport = GrpcTransport(channel, card)
        try:
            task = await _grpc_round_trip(transport, message_reply)
            if task is None:
                return
            listed = await transport.list_tasks(a2a_pb2.ListTasksRequest())
            # InMemoryTaskStore.list: newest first, no history (historyLength 0 by default), no artifacts
            assert listed.total_size == 2 and len(listed.tasks) == 2 and not listed.next_page_token
            assert all(not t.history and not t.artifacts for t in listed.tasks)
            refusals = {
                "unknown task": (transport.get_task(a2a_pb2.GetTaskRequest(id="nope")), sdk_errors.TaskNotFoundError),
                "cancel": (transport.cancel_task(a2a_pb2.CancelTaskRequest(id=task.id)),
                           sdk_errors.TaskNotCancelableError),
                "follow-up": (transport.send_message(a2a_pb2.SendMessageRequest(message=a2a_pb2.Message(
                    message_id="m2", role=a2a_pb2.ROLE_USER, task_id=task.id, parts=[a2a_pb2.Part(text="more")]))),
                    sdk_errors.UnsupportedOperationError),
                "no messageId": (transport.send_message(a2a_pb2.SendMessageRequest(message=a2a_pb2.Message(
                    role=a2a_pb2.ROLE_USER, parts=[a2a_pb2.Part(text="x")]))), sdk_errors.InvalidParamsError),
                "push": (transport.create_task_push_notification_config(a2a_pb2.TaskPushNotificationConfig(
                    task_id=task.id, url="https://example.com/hook")), sdk_errors.PushNotificationNotSupportedError),
                "page size": (transport.list_tasks(a2a_pb2.ListTasksRequest(page_size=0)),
                              sdk_errors.InvalidParamsError),
            }
            for call, expected in refusals.values():
                with pytest.raises(expected):
                    await call
            with pytest.raises(sdk_errors.UnsupportedOperationError, match="terminal state"):
                _ = [e async for e in transport.subscribe(a2a_pb2.SubscribeToTaskRequest(id=task.id))]
            # Calls the transport does not make as such (it always sends a2a-version 1.0, and answers
            # GetExtendedAgentCard with the card it has when the card declares no extended one): raw stub calls,
            # their statuses read by the transport's own _map_grpc_error
            stub = a2a_pb2_grpc.A2AServiceStub(channel)
            raw = {
                "version": (stub.SendMessage(a2a_pb2.SendMessageRequest(message=a2a_pb2.Message(
                    message_id="m9", role=a2a_pb2.ROLE_USER, parts=[a2a_pb2.Part(text="hi")])),
                                             metadata=(("a2a-version", "99.0"),)),
                            sdk_errors.VersionNotSupportedError, r"Protocol version '99\.0' is not supported"),
                "extended card": (stub.GetExtendedAgentCard(a2a_pb2.GetExtendedAgentCardRequest()),
                                  sdk_errors.UnsupportedOperationError, "This operation is not supported"),
            }
            for call, expected, text in raw.values():
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await call
                assert refused.value.code() is grpc.StatusCode.UNIMPLEMENTED  # 1.0.0's mapping
                with pytest.raises(expected, match=text):
                    _map_grpc_error(refused.value)
        finally:
            await transport.close()


async def test_check_verdict_on_the_java_grpc_server(client: HttpClient) -> None:
    """`check`: passes; one SHOULD finding, the card's `localhost:<port>` url (no scheme: a2a.proto AgentInterface.url
    "Must be a valid absolute HTTPS URL in production"). a2a-java serves its card with the cache headers (§8.6.1)."""
    for message_reply in (False, True):
        result = await _check(client, "java-1.0-grpc", message_reply=message_reply)
        assert result.success and result.reason is None, (result.reason, result.failed_checks())
        assert [(i.binding, i.protocol_version, i.success) for i in result.interfaces] == [("grpc", "1.0", True)]
        assert _failed(result) == {("interface.grpc_url", S)}
        assert level(result) is not Level.NON_CONFORMANT
        for cid in ("invoke.framing", "invoke.schema", "invoke.result_shape", "stream.events_parse", "stream.schema",
                    "stream.first_event", "stream.terminal", "stream.closes_after_terminal", "card.cache_headers"):
            check = result.check(cid)
            assert check is not None and check.status is Status.PASS, (cid, check)


JAVA_GRPC_JUDGED = (*GO_GRPC_JUDGED, "lifecycle.list_pagination")


async def test_suite_findings_on_the_java_grpc_server(client: HttpClient) -> None:
    """The suite: a2a-java's gRPC handler breaks the two MUSTs of its JSON lines (A2A-Version is validated on
    SendMessage and SendStreamingMessage only, GrpcHandler.java:202, 398: GetTask with 99.0 or with no
    `a2a-version` is served) and, at SHOULD, checks no input mode (§3.3.2). Everything else judged passes:
    UNIMPLEMENTED for UnsupportedOperation, PushNotificationNotSupported and VersionNotSupported is 1.0.0's mapping
    (1.0.1's is FAILED_PRECONDITION; both accepted), every A2A error carries its ErrorInfo, ListTasks pages,
    historyLength is honoured on GetTask and SendMessage, returnImmediately answers SUBMITTED."""
    result = await _suite(client, "java-1.0-grpc")
    statuses = _grpc_suite(result, JAVA_GRPC_JUDGED, set(JAVA_1_0), JAVA_1_0)
    # FromProto's InvalidParamsError carries its ErrorInfo (GrpcHandler.handleError): read as such, by its reason
    assert "INVALID_PARAMS" in statuses["errors.invalid_params"].message  # type: ignore[union-attr]
    assert {(c.id, c.severity) for c in result.failed_checks()} == {
        ("errors.version_not_supported", M), ("errors.missing_version_is_0_3", M),
        ("errors.content_type_not_supported", S), ("interface.grpc_url", S)}
