"""A2A servers that agent frameworks implement themselves (not the official SDKs' servers), run as real agents,
each pinned in its own venv: the probe's exact verdict on each, every failed check with its level.

Each verdict was checked against the text of the version the agent's card speaks (README, "Third-party peers"):

* LangGraph (langgraph-api 0.16.7, in memory, a graph echoing without an LLM): a 1.0 card with one interface,
  JSON-RPC 1.0 at /a2a/{assistant_id} (its leftover top-level url is no interface: 1.0 has no such field, and
  a2a-sdk 1.3 drops it). SendMessage answers are valid 1.0 (0.3's `kind` left on every object is an unrecognized
  field, ignored: 1.0 §5.7, a2a-sdk 1.3's parse_lenient). SendStreamingMessage wraps the first Task, then sends the
  status and artifact updates unwrapped, in 0.3's shape: 1.0 §3.2.3 (a StreamResponse holds exactly one of
  task/message/statusUpdate/artifactUpdate), which a2a-sdk 1.3 reads as empty events, so a streaming client never
  sees the answer or the COMPLETED state: the verdict, stream_protocol_violation. Its status timestamps carry
  "+00:00" (§5.6.1: MUST NOT include offsets other than 'Z'; a finding, the call is not failed, as both official
  parsers read them). The suite finds besides:
  returnImmediately ignored (§3.2.2 MUST: a slow task answers after 30 s), no SubscribeToTask although the card
  declares streaming (§3.1.6, §3.3.4: MethodNotFound; the checks of that operation depend on the first to meet
  it), the A2A-Version header ignored (§3.6.2: 99.0 served, no
  header served as 1.0), push-config methods MethodNotFound instead of PushNotificationNotSupportedError and
  GetExtendedAgentCard answered without the capability (§3.3.4), ListTasks sending artifacts unasked (§3.1.4), and
  the SHOULDs: no ErrorInfo array in error.data (§3.3.2 on JSON-RPC), no card cache headers (§8.6.1).
* VoltAgent (@voltagent/a2a-server 2.0.3 on @voltagent/server-hono 2.0.14, an Agent on the AI SDK's test model): a
  card without protocolVersion (read as 0.2, as the other such peers; VoltAgent builds on @a2a-js/sdk 0.2.5's
  types) at /.well-known/{serverId}/agent-card.json, JSON-RPC at /a2a/{serverId}. Its message/stream writes each
  event as "data: \x1e{...}", a record separator before the JSON (0.2 §3.3: the data is a JSON-RPC response;
  a2a-sdk's client fails json.loads on it): the verdict, stream_protocol_violation, the first event and the terminal
  state then not judged. Its Tasks carry no `kind` (the 0.2.6 schema requires it: MUST invoke.dialect, a finding:
  a2a-sdk's models default kind and read the object by its fields, so the call is not failed); the answer is in the
  status message, no artifact (SHOULD); and the suite finds: a message to a COMPLETED task accepted (MUST), a
  request without a method answered InternalError at HTTP 400, not -32600 (JSON-RPC 2.0 §5.1, MUST), with
  `"id": null` though the id was readable (0.2 §6.11.2 MUST: errors.response_id), historyLength
  ignored, no TaskNotFoundError for a message or tasks/resubscribe naming an unknown task, MethodNotFound for push
  config and InvalidParams for an unaccepted media type (the SHOULD codes of 0.2 §8.2).
* Google ADK (google-adk[a2a] 2.13.0, to_a2a; an LlmAgent on an echoing BaseLlm): ADK takes a2a-sdk >=0.3.4,<2 and
  a fresh install resolves 1.3.0, so it serves a2a-sdk 1.3's routes: a 1.0 card with one interface, JSON-RPC 1.0 at
  its root (a2a-sdk's 0.3 compatibility on the same route, not advertised), no REST, no gRPC. It passes; the suite's
  findings are SHOULDs of a2a-sdk 1.3 itself: no card cache headers (§8.6.1), an unaccepted media type accepted
  (§13.4 SHOULD; §3.1.1 names ContentTypeNotSupportedError). Its `adk_*` metadata on tasks and events is allowed
  (metadata is free). A long-running tool makes the task INPUT_REQUIRED and the next message on it a new turn:
  lifecycle.input_required and the §3.4.3 context checks pass.
* Strands Agents (strands-agents[a2a] 1.62.0, A2AServer; an Agent on an echoing Model): Strands pins a2a-sdk
  >=0.3.0,<0.4 (0.3.26), an older SDK line than ADK's: a 0.3 card (protocolVersion 0.3.0, preferredTransport
  JSONRPC), JSON-RPC only. It passes, full; the suite finds a2a-sdk 0.3.26's push refusal, InternalError -32603
  "Push notifications are not supported by the agent" (0.3 §8.2 SHOULD -32003: its @validate raises outside the
  handler's try, and JSONRPCApplication's catch-all answers -32603), an unaccepted media type accepted (§8.2), and
  a parse error with no `id` member (model_dump exclude_none drops the null id; §6.11.2 MUST: errors.response_id).
  Its default legacy streaming (the answer in a WORKING status message, then the artifact, then COMPLETED with
  final) is valid 0.3 and what a2a-sdk's client reads to the end. A tool interrupt parks the task INPUT_REQUIRED
  with a data part naming the interruptId, and Strands resumes only on an interruptResponse data part: the probe's
  text follow-up is refused InvalidParams, not judged (the spec leaves the follow-up's content to the agent).
* Agno (agno[os,a2a] 3.1.10, AgentOS(a2a_interface=True); an Agent on an echoing Model): Agno's own FastAPI routes,
  built on a2a-sdk 0.3's types (0.3.26) but not its server. The card (protocolVersion 0.3.0, preferredTransport
  JSONRPC by a2a-sdk's defaults) is at /a2a/agents/{id}/.well-known/agent-card.json and names as its url the route
  /a2a/agents/{id}/v1/message:stream, which validates every body as a message/stream request: message/send and
  tasks/get there are HTTP 400 {"detail": ...} (Agno's message:send, tasks:get and tasks:cancel routes are named by
  no card). 0.3 §5.6.1 (the url MUST support preferredTransport), §11.1.2 (message/send and tasks/get MUST be
  implemented over a declared transport), §11.1.5 (JSON-RPC 2.0 responses): the verdict, invoke_unexpected_status;
  a2a-sdk 0.3.26's client, the one Agno depends on, fails the same way (A2AClientHTTPError 400 with streaming off).
  Its stream (what that client uses by default) sends WORKING, the answer as a Message, COMPLETED final, then the
  Task: a2a-sdk 0.3's streaming client raises A2AClientInvalidStateError at the Message, so the stream module alone
  is stream_protocol_violation (stream.events_parse), with the 0.3 SHOULD that the first event is not the Task. A
  run that raises is streamed as COMPLETED (Agno's stream has no branch for the run's error; message:send says
  FAILED): no rule the probe can see broken.
* Mastra (@mastra/server 1.67.0's A2A routes, registered by @mastra/hono 1.7.9's MastraServer with an
  InMemoryTaskStore as @mastra/deployer does, @mastra/core 1.71.0; an Agent on the AI SDK's test model): a 0.3 card
  (protocolVersion 0.3.0) at /api/.well-known/{agentId}/agent-card.json naming JSON-RPC at /api/a2a/{agentId}, with
  no preferredTransport: 0.3 §5.6.1 "The preferredTransport field is REQUIRED and MUST be present in every
  AgentCard" (§5.6.4 again), a MUST finding (card.interfaces: non-conformant), while the 0.3 schema and a2a-sdk
  0.3's models default it to JSONRPC, so every client reads the card and calls the agent: the verdict is the calls',
  and they pass (message/send, tasks/get, message/stream with the Task first, the artifact, the final status). The suite
  finds: bodies its route's zod schema refuses (not JSON, no method, an unknown method, a message without
  messageId) answered HTTP 400 {"error": "Invalid request body", "issues"}, no JSON-RPC response (0.3 §8.1, MUST);
  tasks/resubscribe of an unknown task opens the SSE stream (HTTP 200) and drops the connection mid-chunk (MUST
  errors.no_server_errors: a dropped connection); an unaccepted media type accepted (§8.2 SHOULD). A model that raises
  leaves the task FAILED but the blocking send answers InternalError -32603. Push configs work, and a second delete
  refused InvalidParams is no 0.3 finding (idempotency is 1.0 §3.1.10; 0.3 §7.8 has none); Mastra refuses to post
  to loopback and private webhook URLs (SSRF), so nothing reaches the probe's loopback receiver.
"""

from __future__ import annotations

import asyncio

import pytest

from probe.engine import run_interfaces
from probe.levels import Level, level
from probe.reasons import Reason
from probe.results import ProbeResult, Severity, Status, StepName
from probe.suite import SuiteOptions, run_suite_interfaces
from probe.target import Target
from probe.wire.http import HttpClient
from tests.differential.harness import read03
from tests.peers import venv_peers
from tests.peers.venv_peers import VenvPeer

pytestmark = pytest.mark.external
langgraph_peer, voltagent_peer = venv_peers.langgraph_peer, venv_peers.voltagent_peer  # the session fixtures
adk_peer, strands_peer, agno_peer = venv_peers.adk_peer, venv_peers.strands_peer, venv_peers.agno_peer
mastra_peer = venv_peers.mastra_peer

M, S = Severity.MUST, Severity.SHOULD
STREAM = {("stream.events_parse", M), ("stream.schema", M)}
TIMESTAMPS = {("invoke.timestamps_utc", M)}  # "+00:00", not "Z" (1.0 §5.6.1): a finding, the call not failed
LANGGRAPH_SUITE = {
    ("lifecycle.return_immediately", M), ("streaming.subscribe", M), ("errors.version_not_supported", M),
    ("errors.missing_version_is_0_3", M),
    ("errors.push_not_supported", M), ("errors.extended_card_not_declared", M), ("lifecycle.list_tasks", M),
    ("errors.error_info", S)}


def _failed(result: ProbeResult) -> set[tuple[str, Severity]]:
    return {(c.id, c.severity) for c in result.failed_checks()}


def _message(result: ProbeResult, check_id: str) -> str:
    c = result.check(check_id)
    assert c is not None, check_id
    return c.message


def _the_stream_is_the_one_root_cause(result: ProbeResult) -> None:
    assert result.reason is Reason.STREAM_PROTOCOL_VIOLATION
    assert [c.id for c in result.failed_checks() if c.reason is result.reason] == ["stream.events_parse"]
    parse = _message(result, "stream.events_parse")
    assert parse.startswith("event 1: 1.0 result must wrap exactly one of task/message/statusUpdate/artifactUpdate")
    assert "(looks like a 0.3 result with 'kind')" in parse
    terminal = result.check("stream.terminal")  # COMPLETED was sent, in an event the client cannot read
    assert terminal is not None and terminal.status is Status.SKIP
    assert terminal.message.startswith("depends on stream.events_parse, which failed: 3 event(s)")
    schema = _message(result, "invoke.schema")  # the blocking answer: valid 1.0, its kinds ignored
    assert schema.startswith("valid against the A2A 1.0 proto") and "result.task.kind" in schema
    for check_id in ("invoke.result_shape", "invoke.dialect", "invoke.task_completed", "stream.first_event"):
        c = result.check(check_id)
        assert c is not None and c.status is Status.PASS, c
    assert [(i.binding, i.protocol_version, i.reason) for i in result.interfaces] == [
        ("jsonrpc", "1.0", Reason.STREAM_PROTOCOL_VIOLATION)]  # one interface: the card's url is none


async def test_langgraph_check(client: HttpClient, langgraph_peer: VenvPeer) -> None:
    result = await run_interfaces(Target(name="langgraph", url=langgraph_peer.url, timeout=10.0), client)
    assert result.card_url == langgraph_peer.url + "/.well-known/agent-card.json"
    assert result.protocol_version == "1.0" and not result.success
    _the_stream_is_the_one_root_cause(result)
    assert _failed(result) == STREAM | TIMESTAMPS | {("card.cache_headers", S)}


async def test_langgraph_suite(client: HttpClient, langgraph_peer: VenvPeer) -> None:
    """`a2a-probe check URL --binding all --suite full --slow-prompt slow --input-prompt 'input please'`."""
    result = await run_suite_interfaces(Target(name="langgraph", url=langgraph_peer.url, timeout=10.0), client,
                                        SuiteOptions(timeout=60.0, slow_prompt="slow", input_prompt="input please"))
    _the_stream_is_the_one_root_cause(result)
    assert _failed(result) == STREAM | TIMESTAMPS | LANGGRAPH_SUITE | {("card.cache_headers", S)}
    assert "+00:00" in _message(result, "invoke.timestamps_utc")
    assert "the task came back COMPLETED" in _message(result, "lifecycle.return_immediately")
    subscribe = _message(result, "streaming.subscribe")  # the one root cause of the SubscribeToTask checks
    assert subscribe == "not a stream: HTTP 200 JSON-RPC MethodNotFoundError -32601: Method not found: SubscribeToTask"
    for check_id in ("streaming.subscribe_terminal", "streaming.subscribe_unknown"):
        c = result.check(check_id)
        assert c is not None and c.status is Status.SKIP, c
        assert c.message == f"depends on streaming.subscribe, which failed: {subscribe}"
    assert "A2A-Version: 99.0: expected VersionNotSupportedError (-32009), got HTTP 200, JSON-RPC TaskNotFoundError" \
        in _message(result, "errors.version_not_supported")
    assert "Method not found: CreateTaskPushNotificationConfig" in _message(result, "errors.push_not_supported")
    assert "got HTTP 200 with a result" in _message(result, "errors.extended_card_not_declared")
    assert "artifacts present without includeArtifacts" in _message(result, "lifecycle.list_tasks")
    # what it does right: the graph's exception is a FAILED task, its interrupt INPUT_REQUIRED, CancelTask cancels
    for check_id in ("lifecycle.cancel", "lifecycle.input_required", "lifecycle.get_task", "lifecycle.history_kept",
                     "lifecycle.unknown_fields_ignored", "errors.task_not_found", "errors.invalid_params",
                     "errors.parse_error", "errors.not_cancelable"):
        c = result.check(check_id)
        assert c is not None and c.status is Status.PASS, c
    assert level(result) is Level.MINIMAL


async def test_langgraph_a_graph_that_raises_is_a_failed_task(client: HttpClient, langgraph_peer: VenvPeer) -> None:
    # the node raises on "fail": langgraph-api answers the blocking SendMessage with the task FAILED (its status
    # message "Error executing assistant: RuntimeError"): the agent's own outcome, named once, by invoke
    result = await run_interfaces(Target(name="langgraph", url=langgraph_peer.url, message="please fail",
                                         timeout=10.0), client)
    assert result.reason is Reason.TASK_FAILED
    assert [c.id for c in result.failed_checks() if c.reason is result.reason] == ["invoke.task_completed"]
    assert "Error executing assistant: RuntimeError" in _message(result, "invoke.task_completed")


VOLTAGENT = {("card.protocol_version", S), ("invoke.dialect", M), ("lifecycle.completed_artifact", S),
             ("stream.events_parse", M)}
VOLTAGENT_SUITE = {
    ("lifecycle.return_immediately", Severity.MAY), ("lifecycle.history_length", S), ("lifecycle.history_on_send", S),
    ("lifecycle.message_to_terminal", M), ("lifecycle.unknown_task_message", S), ("streaming.subscribe_unknown", S),
    ("errors.invalid_request", M), ("errors.push_not_supported", S), ("errors.content_type_not_supported", S),
    ("errors.response_id", M)}


def _voltagent_verdict(result: ProbeResult) -> None:
    assert result.protocol_version == "0.2" and result.reason is Reason.STREAM_PROTOCOL_VIOLATION
    assert [c.id for c in result.failed_checks() if c.reason is result.reason] == ["stream.events_parse"]
    assert _message(result, "stream.events_parse").startswith("event 0: invalid JSON")
    for check_id in ("stream.first_event", "stream.terminal"):
        c = result.check(check_id)
        assert c is not None and c.status is Status.SKIP and c.message.startswith("depends on stream.events_parse"), c
    assert _message(result, "invoke.dialect") == "0.3 task has no 'kind' (a2a-sdk's client reads it by its fields)"
    for check_id in ("invoke.schema", "invoke.result_shape", "invoke.task_completed"):
        c = result.check(check_id)
        assert c is not None and c.status is Status.PASS, c
    assert [(i.binding, i.protocol_version) for i in result.interfaces] == [("jsonrpc", "0.2")]


async def test_voltagent_check(client: HttpClient, voltagent_peer: VenvPeer) -> None:
    result = await run_interfaces(Target(name="voltagent", url=voltagent_peer.card_url, timeout=10.0), client)
    _voltagent_verdict(result)
    assert _failed(result) == VOLTAGENT


async def test_voltagent_suite(client: HttpClient, voltagent_peer: VenvPeer) -> None:
    """`a2a-probe check CARD_URL --binding all --suite full --slow-prompt slow` (VoltAgent's A2A server runs the agent
    to the end: no input-required to ask for)."""
    result = await run_suite_interfaces(Target(name="voltagent", url=voltagent_peer.card_url, timeout=10.0), client,
                                        SuiteOptions(timeout=60.0, slow_prompt="slow"))
    _voltagent_verdict(result)
    assert _failed(result) == VOLTAGENT | VOLTAGENT_SUITE
    # the request without a method gets HTTP 400 InternalError with "id": null, though its id was there to read
    # (null only where the id could not be detected, JSON-RPC 2.0 §5; the code is errors.invalid_request's fault)
    assert _message(result, "errors.response_id") == (
        "\"id\" null, not the request's id: errors.invalid_request (InternalError) (1 of 11 JSON-RPC error answers)")
    assert "got HTTP 400, JSON-RPC InternalError -32603: Body is not a valid JSON-RPC request" in _message(
        result, "errors.invalid_request")
    assert _message(result, "lifecycle.message_to_terminal") == "a message to a COMPLETED task was accepted"
    cancel = result.check("lifecycle.cancel")  # 'slow' ran its 30 s before answering: blocking false is a MAY in 0.2
    assert cancel is not None and cancel.status is Status.SKIP and "came back COMPLETED" in cancel.message
    for check_id in ("lifecycle.get_task", "errors.task_not_found", "errors.parse_error", "errors.unknown_method"):
        c = result.check(check_id)
        assert c is not None and c.status is Status.PASS, c
    assert level(result) is Level.MINIMAL


# ---- Google ADK (google-adk[a2a] 2.13.0 on a2a-sdk 1.3.0) and Strands Agents (strands-agents[a2a] 1.62.0 on
# a2a-sdk 0.3.26): both build on the official Python SDK's server, so what they get wrong is mostly its

ADK_SUITE = {("errors.content_type_not_supported", S)}
# a2a-sdk 0.3.26's JSONRPCApplication writes its errors with model_dump(exclude_none=True): the parse error's null
# id is dropped with its name (JSON-RPC 2.0 §5, 0.3 §6.11.2: REQUIRED, null); its client reads it all the same
STRANDS_SUITE = {("errors.push_not_supported", S), ("errors.content_type_not_supported", S),
                 ("errors.response_id", M)}


def _one_jsonrpc_interface(result: ProbeResult, version: str) -> None:
    assert result.protocol_version == version and result.success and result.reason is None
    assert [(i.binding, i.protocol_version, i.reason) for i in result.interfaces] == [("jsonrpc", version, None)]
    for check_id in ("invoke.schema", "invoke.result_shape", "invoke.dialect", "invoke.task_completed",
                     "stream.events_parse", "stream.first_event", "stream.terminal"):
        c = result.check(check_id)
        assert c is not None and c.status is Status.PASS, c


async def test_adk_check(client: HttpClient, adk_peer: VenvPeer) -> None:
    # to_a2a's card: supportedInterfaces [JSONRPC 1.0 at its root], no REST, no gRPC. a2a-sdk 1.3's card route
    # sends no Cache-Control (1.0 §8.6.1 SHOULD), the one finding
    result = await run_interfaces(Target(name="adk", url=adk_peer.url, timeout=10.0), client)
    _one_jsonrpc_interface(result, "1.0")
    assert _failed(result) == {("card.cache_headers", S)}
    assert _message(result, "card.cache_headers") == "missing Cache-Control max-age"


async def test_adk_suite(client: HttpClient, adk_peer: VenvPeer) -> None:
    """`a2a-probe check URL --binding all --suite full --slow-prompt slow --input-prompt 'input please'`."""
    result = await run_suite_interfaces(Target(name="adk", url=adk_peer.url, timeout=10.0), client,
                                        SuiteOptions(timeout=60.0, slow_prompt="slow", input_prompt="input please"))
    _one_jsonrpc_interface(result, "1.0")
    assert _failed(result) == ADK_SUITE | {("card.cache_headers", S)}
    # a2a-sdk 1.3's handler never compares a part's media type with the card's input modes (1.0 §13.4 SHOULD)
    assert _message(result, "errors.content_type_not_supported").endswith("expected ContentTypeNotSupportedError "
                                                                          "(-32005), got HTTP 200 with a result")
    # a long-running tool call: INPUT_REQUIRED (its call as a data part in the status message), the follow-up on
    # the task a new turn to COMPLETED, the context inferred from the task and a mismatched one refused (§3.4.3)
    for check_id in ("lifecycle.input_required", "lifecycle.context_inferred", "lifecycle.context_mismatch_rejected",
                     "lifecycle.cancel", "lifecycle.return_immediately", "lifecycle.get_task", "lifecycle.list_tasks",
                     "streaming.subscribe", "streaming.subscribe_terminal", "errors.push_not_supported",
                     "errors.version_not_supported", "errors.task_not_found", "errors.invalid_params",
                     "errors.parse_error", "errors.error_info", "errors.details_typed"):
        c = result.check(check_id)
        assert c is not None and c.status is Status.PASS, c
    assert level(result) is Level.PARTIAL


async def test_strands_check(client: HttpClient, strands_peer: VenvPeer) -> None:
    # A2AServer's card: protocolVersion 0.3.0, preferredTransport JSONRPC at its url, no additionalInterfaces.
    # Its legacy streaming (the default) sends the answer as a WORKING status message, then the artifact, then
    # COMPLETED final: valid 0.3 events (the SDK warns it is not what the spec expects; no 0.3 rule is broken)
    result = await run_interfaces(Target(name="strands", url=strands_peer.url, timeout=10.0), client)
    _one_jsonrpc_interface(result, "0.3")
    assert _failed(result) == set()
    assert level(result) is Level.FULL


async def test_strands_suite(client: HttpClient, strands_peer: VenvPeer) -> None:
    """`a2a-probe check URL --binding all --suite full --slow-prompt slow --input-prompt 'input please'`."""
    result = await run_suite_interfaces(Target(name="strands", url=strands_peer.url, timeout=10.0), client,
                                        SuiteOptions(timeout=60.0, slow_prompt="slow", input_prompt="input please"))
    _one_jsonrpc_interface(result, "0.3")
    assert _failed(result) == STRANDS_SUITE
    assert _message(result, "errors.response_id").startswith(
        'no "id" member (REQUIRED: null for a body whose id could not be read): errors.parse_error (JSONParseError) '
        "(1 of ")
    # a2a-sdk 0.3.26's JSON-RPC handler: @validate(capabilities.push_notifications) raises outside the method's
    # try, and JSONRPCApplication's catch-all answers InternalError with its text (0.3 §8.2 SHOULD -32003)
    assert _message(result, "errors.push_not_supported") == (
        "a push-notification config without the capability: expected PushNotificationNotSupportedError (-32003), "
        "got HTTP 200, JSON-RPC InternalError -32603: Push notifications are not supported by the agent")
    # a Strands interrupt: INPUT_REQUIRED with a data part naming its interruptId; the probe's text follow-up is
    # refused InvalidParams (Strands resumes only on its interruptResponse data part): not judged, the agent asked
    # for input the probe cannot give
    ask = result.check("lifecycle.input_required")
    assert ask is not None and ask.status is Status.SKIP, ask
    assert ask.message.endswith("its text follow-up was refused: HTTP 200, JSON-RPC InvalidParamsError -32602: Task "
                                "is awaiting an interrupt response and cannot accept a new message")
    for check_id in ("lifecycle.cancel", "lifecycle.get_task", "streaming.subscribe", "errors.task_not_found",
                     "errors.invalid_params", "errors.parse_error", "errors.unknown_method"):
        c = result.check(check_id)
        assert c is not None and c.status is Status.PASS, c
    assert level(result) is Level.PARTIAL


@pytest.mark.parametrize("name", ["adk", "strands"])
async def test_a_model_that_raises_is_a_failed_task(client: HttpClient, name: str,
                                                    request: pytest.FixtureRequest) -> None:
    # the echo model raises on "fail": each framework's executor fails the task (ADK's status message carries the
    # exception's text, Strands' "Agent execution failed"): the agent's own outcome, named once, by invoke
    peer: VenvPeer = request.getfixturevalue(f"{name}_peer")
    result = await run_interfaces(Target(name=name, url=peer.url, message="please fail", timeout=10.0), client)
    assert result.reason is Reason.TASK_FAILED
    assert [c.id for c in result.failed_checks() if c.reason is result.reason] == ["invoke.task_completed"]
    text = {"adk": "failed on request", "strands": "Agent execution failed"}[name]
    assert _message(result, "invoke.task_completed").endswith(f"ended FAILED: {text}")


@pytest.mark.parametrize("name", ["adk", "strands"])
@pytest.mark.parametrize("steps", [(StepName.PING,), (StepName.INVOKE,), (StepName.STREAM,)],
                         ids=["ping", "invoke", "stream"])
async def test_each_daemon_module_passes(client: HttpClient, name: str, steps: tuple[StepName, ...],
                                         request: pytest.FixtureRequest) -> None:
    # the daemon's ping, invoke and stream modules, each on its own as a scheduled job runs it (agree=False): each
    # reaches its end (SendMessage a COMPLETED task, the stream its COMPLETED final event) with no MUST failed
    peer: VenvPeer = request.getfixturevalue(f"{name}_peer")
    result = await run_interfaces(Target(name=name, url=peer.url, timeout=10.0), client, steps=steps, agree=False)
    assert result.success and result.reason is None, _failed(result)
    assert {sev for _, sev in _failed(result)} <= {S}
    step = {StepName.PING: None, StepName.INVOKE: "invoke.task_completed", StepName.STREAM: "stream.terminal"}[steps[0]]
    if step is not None:
        c = result.check(step)
        assert c is not None and c.status is Status.PASS, c


# ---- Agno (agno[os,a2a] 3.1.10, AgentOS's A2A interface: its own routes on a2a-sdk 0.3.26's types)

AGNO_URL_ROUTE = "/v1/message:stream"  # the card's url: the route that reads every body as message/stream


def _agno_refused(result: ProbeResult, method: str, peer: VenvPeer) -> None:
    """The one root cause: the card's JSON-RPC url answers `method` HTTP 400 with FastAPI's {"detail"} body."""
    assert result.protocol_version == "0.3" and not result.success
    assert result.reason is Reason.INVOKE_UNEXPECTED_STATUS
    assert [(i.binding, i.protocol_version, i.reason) for i in result.interfaces] == [
        ("jsonrpc", "0.3", Reason.INVOKE_UNEXPECTED_STATUS)]
    assert _message(result, "interface.selected") == f"JSONRPC 0.3 at {peer.url}{AGNO_URL_ROUTE}"
    assert _message(result, "invoke.transport").startswith(
        f"{method} to {peer.url}{AGNO_URL_ROUTE} answered HTTP 400 (application/json: "
        '{"detail":"Invalid A2A request: ')
    assert [c.id for c in result.failed_checks() if c.reason is result.reason] == ["invoke.transport"]
    for check_id in ("card.discovered", "card.schema", "card.required_fields", "card.interfaces", "card.skills"):
        c = result.check(check_id)
        assert c is not None and c.status is Status.PASS, c


async def test_agno_check(client: HttpClient, agno_peer: VenvPeer) -> None:
    # 0.3 §5.6.1: the url MUST support the preferredTransport (JSONRPC); §11.1.2: message/send MUST be implemented
    # over a declared transport. The card's url takes message/stream only; the stream step is not run after the
    # failed send (the engine names the root cause once; test_agno_stream_module runs it on its own)
    result = await run_interfaces(Target(name="agno", url=agno_peer.url, timeout=10.0), client)
    _agno_refused(result, "message/send", agno_peer)
    assert _failed(result) == {("invoke.transport", M)}
    assert level(result) is Level.NON_CONFORMANT


async def test_agno_suite(client: HttpClient, agno_peer: VenvPeer) -> None:
    """`a2a-probe check URL --binding all --suite full --slow-prompt slow`: every suite check depends on the send."""
    result = await run_suite_interfaces(Target(name="agno", url=agno_peer.url, timeout=10.0), client,
                                        SuiteOptions(timeout=60.0, slow_prompt="slow"))
    _agno_refused(result, "message/send", agno_peer)
    assert _failed(result) == {("invoke.transport", M)}
    for check_id in ("lifecycle.get_task", "lifecycle.cancel", "streaming.subscribe", "errors.task_not_found"):
        c = result.check(check_id)
        assert c is not None and c.status is Status.SKIP and c.message.startswith("depends on invoke.transport"), c
    assert level(result) is Level.NON_CONFORMANT


async def test_agno_ping_module(client: HttpClient, agno_peer: VenvPeer) -> None:
    # the daemon's ping: tasks/get (0.3 §11.1.2 MUST) at the card's url, answered as a malformed message/stream
    result = await run_interfaces(Target(name="agno", url=agno_peer.url, timeout=10.0), client,
                                  steps=(StepName.PING,), agree=False)
    _agno_refused(result, "tasks/get", agno_peer)
    assert _failed(result) == {("invoke.transport", M)}


async def test_agno_as_a2a_sdk_03_reads_it(agno_peer: VenvPeer) -> None:
    # what the probe names, the official 0.3 client (a2a-sdk 0.3.26, Agno's own dependency, in the sdk03 venv) meets:
    # with streaming off, message/send at the card's url is HTTP 400; with it on (its default, as the card declares
    # streaming), the stream's Message after the first event stops it
    send, stream = await asyncio.to_thread(read03, [(agno_peer.url, "send"), (agno_peer.url, "stream")])
    assert send is not None and send.startswith("A2AClientHTTPError: HTTP Error 400: Client error '400 Bad Request'")
    assert stream == ("A2AClientInvalidStateError: Invalid state error: received a streamed Message from server after "
                      "first response; this is not supported")


@pytest.mark.parametrize(("text", "answered"), [("hello", True), ("please fail", False)],
                         ids=["echo", "a raising model"])
async def test_agno_stream_module(client: HttpClient, agno_peer: VenvPeer, text: str, answered: bool) -> None:
    # the daemon's stream module on its own: message/stream at the card's url works. Agno streams a status update
    # first (0.3: the Task first is shown, no MUST: the SHOULD), then its text as a Message in the task's stream,
    # which a2a-sdk 0.3.26's streaming client refuses (A2AClientInvalidStateError 'received a streamed Message from
    # server after first response'): stream.events_parse, the one root cause. COMPLETED final, then the Task
    # (allowed: a repeat of the terminal state). A model that raises sends no Message and ends COMPLETED anyway
    # (agno/os/interfaces/a2a/utils.py has no branch for the run's error): the stream passes, an empty answer
    result = await run_interfaces(Target(name="agno", url=agno_peer.url, message=text, timeout=10.0), client,
                                  steps=(StepName.STREAM,), agree=False)
    assert [(i.binding, i.protocol_version) for i in result.interfaces] == [("jsonrpc", "0.3")]
    assert _message(result, "stream.first_event") == "the first event is a status update, not the Task"
    for check_id in ("stream.content_type", "stream.schema", "stream.consistent_ids", "stream.terminal",
                     "stream.closes_after_terminal", "stream.no_regression"):
        c = result.check(check_id)
        assert c is not None and c.status is Status.PASS, c
    if answered:
        assert result.reason is Reason.STREAM_PROTOCOL_VIOLATION
        assert _failed(result) == {("stream.events_parse", M), ("stream.first_event", S)}
        assert [c.id for c in result.failed_checks() if c.reason is result.reason] == ["stream.events_parse"]
        assert _message(result, "stream.events_parse") == (
            "event 1: a Message in the task's stream (a2a-sdk 0.3's streaming client stops: 'received a streamed "
            "Message from server after first response')")
    else:
        assert result.success and result.reason is None
        assert _failed(result) == {("stream.first_event", S)}
        c = result.check("stream.task_completed")
        assert c is not None and c.status is Status.PASS, c


# ---- Mastra (@mastra/core 1.71.0, @mastra/server 1.67.0's A2A routes on @mastra/hono 1.7.9): its own JSON-RPC
# handler on @a2a-js/sdk 0.3's types, a 0.3 card without preferredTransport

MASTRA_SUITE = {("errors.parse_error", M), ("errors.invalid_request", M), ("errors.unknown_method", M),
                ("errors.invalid_params", M), ("errors.content_type_not_supported", S), ("errors.no_server_errors", M)}


def _mastra_verdict(result: ProbeResult, peer: VenvPeer) -> None:
    # 0.3 §5.6.1 "The preferredTransport field is REQUIRED and MUST be present in every AgentCard" (§5.6.4 again):
    # graded (card.interfaces, MUST); the 0.3 schema and a2a-sdk 0.3's models default it to JSONRPC, so every
    # client reads the card and calls the agent: the verdict is the calls' (docs/conformance-audit.md), and they pass
    assert result.protocol_version == "0.3" and result.reason is None and result.success, result.reason
    c = result.check("card.interfaces")
    assert c is not None and c.status is Status.FAIL and c.severity is M and c.reason is None, c
    assert _message(result, "card.interfaces") == (
        "preferredTransport is missing (0.3 §5.6.1: REQUIRED, MUST be present in every card)")
    assert _message(result, "interface.selected") == f"JSONRPC 0.3 at {peer.base_url}/api/a2a/echo"
    for check_id in ("card.schema", "card.required_fields", "invoke.schema", "invoke.result_shape", "invoke.dialect",
                     "invoke.task_completed", "stream.events_parse", "stream.first_event", "stream.terminal",
                     "stream.task_completed"):
        c = result.check(check_id)
        assert c is not None and c.status is Status.PASS, c
    assert [(i.binding, i.protocol_version, i.reason) for i in result.interfaces] == [("jsonrpc", "0.3", None)]


async def test_mastra_check(client: HttpClient, mastra_peer: VenvPeer) -> None:
    result = await run_interfaces(Target(name="mastra", url=mastra_peer.card_url, timeout=10.0), client)
    _mastra_verdict(result, mastra_peer)
    assert _failed(result) == {("card.interfaces", M)}
    assert level(result) is Level.NON_CONFORMANT


async def test_mastra_suite(client: HttpClient, mastra_peer: VenvPeer) -> None:
    """`a2a-probe check CARD_URL --binding all --suite full --slow-prompt slow` (no input-required: the echo agent has
    no suspending tool; no push receiver, as for the other peers: test_mastra_refuses_a_loopback_webhook)."""
    result = await run_suite_interfaces(Target(name="mastra", url=mastra_peer.card_url, timeout=10.0), client,
                                        SuiteOptions(timeout=60.0, slow_prompt="slow"))
    _mastra_verdict(result, mastra_peer)
    assert _failed(result) == {("card.interfaces", M)} | MASTRA_SUITE
    # the route's zod schema refuses these bodies before Mastra's JSON-RPC handler sees them: HTTP 400 with Hono's
    # own {"error": "Invalid request body", "issues"}, no JSON-RPC response (JSON-RPC 2.0 §5, 0.3 §8.1)
    for check_id, what in (("errors.parse_error", "(invalid JSON)"), ("errors.invalid_request", "(no method)"),
                           ("errors.unknown_method", "a2a-probe/NoSuchMethod"), ("errors.invalid_params",
                                                                                  "message/send")):
        assert f'got {what} to {mastra_peer.base_url}/api/a2a/echo answered HTTP 400 (application/json: ' \
               '{"error":"Invalid request body","issues":[' in _message(result, check_id), check_id
    # tasks/resubscribe of an unknown task: HTTP 200 text/event-stream, then the connection closed mid-chunk (its
    # generator throws TaskNotFound inside the SSE body): a dropped connection, the one root cause
    assert _message(result, "errors.no_server_errors") == (
        "streaming.subscribe_unknown: the stream: the server closed the connection before the body was complete "
        "(Not enough data to satisfy transfer length header.)")
    unknown = result.check("streaming.subscribe_unknown")
    assert unknown is not None and unknown.status is Status.SKIP and unknown.message.startswith("no answer: "), unknown
    assert _message(result, "lifecycle.message_to_terminal").startswith("JSON-RPC InvalidRequestError -32600: Task ")
    for check_id in ("lifecycle.get_task", "lifecycle.cancel", "lifecycle.return_immediately",
                     "lifecycle.history_length", "lifecycle.unknown_task_message", "lifecycle.completed_artifact",
                     "lifecycle.context_continuity", "streaming.subscribe", "errors.task_not_found",
                     "errors.not_cancelable"):
        c = result.check(check_id)
        assert c is not None and c.status is Status.PASS, c
    assert level(result) is Level.NON_CONFORMANT


async def test_mastra_a_model_that_raises_is_an_internal_error(client: HttpClient, mastra_peer: VenvPeer) -> None:
    # Mastra saves the task FAILED ("Handler failed: ...") but answers the blocking message/send with JSON-RPC
    # InternalError -32603 and the exception's text (0.3 §7.1: a JSONRPCError on failure): the agent's own outcome,
    # named by invoke.no_error, the verdict's reason
    result = await run_interfaces(Target(name="mastra", url=mastra_peer.card_url, message="please fail",
                                         timeout=10.0), client)
    assert result.reason is Reason.INVOKE_A2A_ERROR
    assert _failed(result) == {("card.interfaces", M), ("invoke.no_error", M)}
    assert _message(result, "invoke.no_error") == "JSON-RPC InternalError -32603: failed on request"


async def test_mastra_refuses_a_loopback_webhook(client: HttpClient, mastra_peer: VenvPeer) -> None:
    # the daemon's push module with the probe's receiver on 127.0.0.1: Mastra accepts the config, then refuses to
    # post to a loopback address (@mastra/server's DefaultPushNotificationSender.resolveValidatedDestination: "Push
    # notification URL must not target local or private IPs", logged nowhere: its A2A route passes no logger), as
    # the 0.3 push guidance advises against SSRF (topics/streaming-and-async: servers SHOULD NOT blindly POST to any
    # url). The probe cannot tell that refusal from an unreachable receiver: not delivered (push_not_delivered's fix
    # names a refusal by policy)
    from probe.inbox import Listener
    from probe.suite.push import run_push

    async with Listener() as inbox:
        result = await run_push(Target(name="mastra", url=mastra_peer.card_url, timeout=5.0), client, inbox)
    assert result.reason is Reason.PUSH_NOT_DELIVERED  # the round trip ran, nothing delivered
    assert result.push is not None and result.push.deliveries == 0 and result.push.problems == ["not_delivered"]
