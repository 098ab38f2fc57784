"""The shapes agent frameworks' own A2A servers send (LangGraph's langgraph-api 0.16.7, VoltAgent's
@voltagent/a2a-server 2.0.3, Strands Agents' A2AServer 1.62.0 on a2a-sdk 0.3.26, Google ADK's to_a2a 2.13.0 on
a2a-sdk 1.3.0; Mastra's @mastra/server 1.67.0 by tests/agents/mastra_shapes.py), replayed by a scripted agent.

The live peer is in tests/interop/test_framework_peers.py; these pin each probe rule the peer showed wrong, and each
deviation or shape it showed, on the exact bytes, with no framework installed. Expectations follow the text of the
version each speaks (v1.0.1 or v0.3.0 docs/specification.md) and a2a-sdk's client of that line.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from probe.engine import run_interfaces, run_probe
from probe.reasons import Reason
from probe.results import Severity, Status, StepName
from probe.target import Target
from probe.wire.http import HttpClient
from tests.agents.scripted import Reply, scripted_agent, sse, task
from tests.hostile.test_semantics import _held  # no probe bug, one primary reason

Json = dict[str, Any]
PART = {"kind": "text", "text": "echo: hi"}


def _kinded_task(state: str) -> Json:
    """A 1.0 Task with 0.3's kind left on it, its history and its parts (langgraph-api's SendMessage answer)."""
    return task(state, kind="task", artifacts=[{"artifactId": "a", "parts": [PART]}],
                history=[{"kind": "message", "messageId": "m", "role": "ROLE_AGENT", "parts": [PART]}])


async def test_a_1_0_answer_with_0_3_kind_fields_and_a_bare_card_url_passes(
        client: HttpClient, caplog: pytest.LogCaptureFixture) -> None:
    # 1.0 §5.7: "Implementations SHOULD ignore unrecognized fields"; a2a-sdk 1.3 parses results with
    # ignore_unknown_fields=True and drops a card's url beside supportedInterfaces. Before: invoke_bad_result
    # (MUST invoke.result_shape and invoke.dialect on 'kind'), and a second "jsonrpc 0.2" interface from the url
    extra: Json = {}
    reply = Reply(chunks=['{"jsonrpc": "2.0", "id": "{id}", "result": ' + json.dumps(_kinded_task("COMPLETED")) + "}"])
    async with scripted_agent({"SendMessage": reply}, card_extra=extra) as origin:
        extra["url"] = f"{origin}/rpc"
        r = await run_interfaces(Target(name="t", url=origin, timeout=3.0), client,
                                 steps=(StepName.INVOKE,))
    rep = _held(r, caplog)
    assert r.success, rep
    assert [(i.binding, i.protocol_version) for i in r.interfaces] == [("jsonrpc", "1.0")]
    for check_id in ("invoke.result_shape", "invoke.dialect", "invoke.schema"):
        c = r.check(check_id)
        assert c is not None and c.status is Status.PASS, c
    schema = r.check("invoke.schema")
    assert schema is not None and "unknown fields ignored" in schema.message and "kind" in schema.message


async def test_unwrapped_1_0_stream_events_are_one_root_cause(client: HttpClient,
                                                              caplog: pytest.LogCaptureFixture) -> None:
    # langgraph-api's SendStreamingMessage: the Task wrapped, then status and artifact updates as bare 0.3 events
    # (no statusUpdate/artifactUpdate member), the COMPLETED one among them. 1.0 §3.2.3: a StreamResponse holds
    # exactly one of task/message/statusUpdate/artifactUpdate; a2a-sdk 1.3 reads those events as empty. The root
    # cause is stream.events_parse; the terminal state was sent, unreadably, so stream.terminal is not judged
    # (before: a second MUST failure, "closed ... with no terminal state (last state SUBMITTED)")
    events = sse(task("SUBMITTED"),
                 {"taskId": "t1", "contextId": "c1", "kind": "status-update", "final": False,
                  "status": {"state": "TASK_STATE_WORKING"}},
                 {"taskId": "t1", "contextId": "c1", "kind": "artifact-update", "append": False, "lastChunk": True,
                  "artifact": {"artifactId": "a", "parts": [PART]}},
                 {"taskId": "t1", "contextId": "c1", "kind": "status-update", "final": True,
                  "status": {"state": "TASK_STATE_COMPLETED"}})
    async with scripted_agent({"SendStreamingMessage": Reply(content_type="text/event-stream",
                                                             chunks=events)}) as origin:
        r = await run_probe(Target(name="t", url=origin, timeout=3.0), client, steps=(StepName.STREAM,))
    rep = _held(r, caplog)
    assert r.reason is Reason.STREAM_PROTOCOL_VIOLATION, rep
    parse = r.check("stream.events_parse")
    assert parse is not None and parse.status is Status.FAIL and "looks like a 0.3 result" in parse.message
    terminal = r.check("stream.terminal")
    assert terminal is not None and terminal.status is Status.SKIP, terminal
    assert terminal.message.startswith("depends on stream.events_parse, which failed: 3 event(s)")


# ---- VoltAgent (@voltagent/a2a-server 2.0.3): 0.2/0.3 JSON-RPC

VOLT_TASK = {"id": "t1", "contextId": "c1", "status": {"state": "completed", "timestamp": "2026-12-04T22:15:24.884Z"},
             "history": [{"kind": "message", "messageId": "m", "role": "agent", "parts": [PART]}]}


async def test_a_0_3_task_without_kind_is_read_as_the_official_client_reads_it(
        client: HttpClient, caplog: pytest.LogCaptureFixture) -> None:
    # VoltAgent's message/send result: a Task with every required field but `kind`. 0.3 §6.1 (and the 0.2.6 JSON
    # schema) require kind: a MUST finding, invoke.dialect ("kind discriminators"). a2a-sdk's client parses it all
    # the same (its Task model defaults kind to 'task', and the result union takes the first member that
    # validates), so the call is not failed. Before: invoke_bad_result, and every suite check that reads a
    # state ("got no state")
    reply = Reply(chunks=['{"jsonrpc": "2.0", "id": "{id}", "result": ' + json.dumps(VOLT_TASK) + "}"])
    async with scripted_agent({"message/send": reply}, version="0.3") as origin:
        r = await run_probe(Target(name="t", url=origin, timeout=3.0), client, steps=(StepName.INVOKE,))
    rep = _held(r, caplog)
    assert r.success, rep
    for check_id in ("invoke.schema", "invoke.result_shape", "invoke.task_completed"):
        c = r.check(check_id)
        assert c is not None and c.status is Status.PASS, c
    dialect = r.check("invoke.dialect")
    assert dialect is not None and dialect.status is Status.FAIL and dialect.severity is Severity.MUST
    assert dialect.message == "0.3 task has no 'kind' (a2a-sdk's client reads it by its fields)"


async def test_sse_data_behind_a_record_separator_is_unreadable_and_only_that(
        client: HttpClient, caplog: pytest.LogCaptureFixture) -> None:
    # VoltAgent's message/stream writes each event as "data: \x1e{...}" (RFC 7464's record separator inside SSE):
    # json.loads in a2a-sdk's client fails on it, as the probe's reading does; every event is unreadable, so
    # neither the first event nor the terminal state can be judged (before: stream.terminal failed "no terminal
    # state", first_event passed on no event)
    events = ["data: \x1e" + json.dumps({"jsonrpc": "2.0", "id": "{id}", "result": {**VOLT_TASK, "kind": "task"}})
              + "\n\n"]
    async with scripted_agent({"message/stream": Reply(content_type="text/event-stream", chunks=events)},
                              version="0.3") as origin:
        r = await run_probe(Target(name="t", url=origin, timeout=3.0), client, steps=(StepName.STREAM,))
    rep = _held(r, caplog)
    assert r.reason is Reason.STREAM_PROTOCOL_VIOLATION, rep
    parse = r.check("stream.events_parse")
    assert parse is not None and parse.message.startswith("event 0: invalid JSON"), parse
    for check_id, tail in (("stream.first_event", "the first among them"),
                           ("stream.terminal", "so the terminal state may be among them")):
        c = r.check(check_id)
        assert c is not None and c.status is Status.SKIP, c
        assert c.message == f"depends on stream.events_parse, which failed: 1 event(s) could not be read, {tail}"


async def test_subscribe_to_task_not_implemented_is_one_root_cause(client: HttpClient,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    # LangGraph declares streaming but has no SubscribeToTask: every call is JSON-RPC MethodNotFound. The first
    # check that meets it fails (1.0 §3.1.6 and §3.3.4: with streaming declared, SubscribeToTask is served, and a
    # terminal task is refused with UnsupportedOperationError); the later ones depend on it, as the suite does for
    # a basic run's root cause. Before: subscribe_terminal and subscribe_unknown both failed, quoting the same
    # MethodNotFound
    from probe.checks import grading
    from probe.engine import execute
    from probe.suite import _run_check, streaming
    from probe.suite.context import Suite, SuiteOptions
    from probe.wire.http import Deadline

    done = task("COMPLETED", artifacts=[{"artifactId": "a", "parts": [{"text": "ok"}]}])
    missing = Reply(chunks=['{"jsonrpc": "2.0", "id": "{id}", "error": {"code": -32601, '
                            '"message": "Method not found: SubscribeToTask"}}'])
    reply = Reply(chunks=['{"jsonrpc": "2.0", "id": "{id}", "result": ' + json.dumps(done) + "}"])
    async with scripted_agent({"SendMessage": reply, "SubscribeToTask": missing}) as origin:
        run = await execute(Target(name="t", url=origin, timeout=3.0), client, steps=(StepName.PING,))
        s = Suite(run, SuiteOptions(timeout=20.0), Deadline.after(20.0))
        for fn in (streaming.subscribe_terminal, streaming.subscribe_unknown):
            await _run_check(s, fn, streaming.IDS[fn])
    grading.grade(run.r)
    assert "Traceback" not in caplog.text
    terminal, unknown = run.r.check("streaming.subscribe_terminal"), run.r.check("streaming.subscribe_unknown")
    assert terminal is not None and terminal.status is Status.FAIL and terminal.severity is Severity.MUST
    assert terminal.message.endswith("JSON-RPC MethodNotFoundError -32601: Method not found: SubscribeToTask")
    assert unknown is not None and unknown.status is Status.SKIP, unknown
    assert unknown.message == f"depends on streaming.subscribe_terminal, which failed: {terminal.message}"


# ---- Strands Agents (strands-agents 1.62.0 on a2a-sdk 0.3.26) and Google ADK (google-adk 2.13.0 on a2a-sdk 1.3.0)

STRANDS_PUSH_REFUSAL = ('{"error":{"code":-32603,"message":"Push notifications are not supported by the agent"},'
                        '"id":"{id}","jsonrpc":"2.0"}')


async def test_a2a_sdk_0_3_push_refusal_is_internal_error_a_should_finding(
        client: HttpClient, caplog: pytest.LogCaptureFixture) -> None:
    # Strands' A2AServer (a2a-sdk 0.3.26's JSONRPCHandler) on tasks/pushNotificationConfig/set without the
    # capability: @validate raises ServerError(UnsupportedOperationError) outside the handler's try, and
    # JSONRPCApplication's catch-all answers InternalError with its text, at HTTP 200. 0.3 §8.2: servers SHOULD use
    # PushNotificationNotSupportedError (-32003): a SHOULD finding, the only one this answer makes (not a server
    # error in errors.no_server_errors' sense: it names why it refused)
    from probe.checks import grading
    from probe.engine import execute
    from probe.suite import _run_check, errors
    from probe.suite.context import Suite, SuiteOptions
    from probe.wire.http import Deadline

    async with scripted_agent({"tasks/pushNotificationConfig/set": Reply(chunks=[STRANDS_PUSH_REFUSAL])},
                              version="0.3") as origin:
        run = await execute(Target(name="t", url=origin, timeout=3.0), client, steps=(StepName.PING,))
        s = Suite(run, SuiteOptions(timeout=20.0), Deadline.after(20.0))
        await _run_check(s, errors.push_not_supported, errors.IDS[errors.push_not_supported])
    grading.grade(run.r)
    assert "Traceback" not in caplog.text
    push = run.r.check("errors.push_not_supported")
    assert push is not None and push.status is Status.FAIL and push.severity is Severity.SHOULD, push
    assert push.message == ("a push-notification config without the capability: expected "
                            "PushNotificationNotSupportedError (-32003), got HTTP 200, JSON-RPC InternalError -32603: "
                            "Push notifications are not supported by the agent")
    assert run.r.reason is None


def _raw_sse(*results: str) -> list[str]:
    return ['data: {"id":"{id}","jsonrpc":"2.0","result":' + r + "}\n\n" for r in results]


STRANDS_USER = ('{"contextId":"c1","kind":"message","messageId":"m2","parts":[{"kind":"text","text":"hi"}],'
                '"role":"user","taskId":"t1"}')
# A2AServer's default (legacy) streaming, as strands 1.62.0 writes it: the answer in a WORKING status message, the
# artifact, then COMPLETED with final (the SDK warns it "does not conform to what is expected in the A2A spec")
STRANDS_LEGACY_STREAM = _raw_sse(
    '{"contextId":"c1","history":[' + STRANDS_USER + '],"id":"t1","kind":"task","status":{"state":"submitted"}}',
    '{"contextId":"c1","final":false,"kind":"status-update","status":{"message":{"contextId":"c1","kind":"message",'
    '"messageId":"m3","parts":[{"kind":"text","text":"echo: hi"}],"role":"agent","taskId":"t1"},"state":"working",'
    '"timestamp":"2026-12-05T07:36:57.507790+00:00"},"taskId":"t1"}',
    '{"artifact":{"artifactId":"a1","name":"agent_response","parts":[{"kind":"text","text":"echo: hi\\n"}]},'
    '"contextId":"c1","kind":"artifact-update","taskId":"t1"}',
    '{"contextId":"c1","final":true,"kind":"status-update","status":{"state":"completed",'
    '"timestamp":"2026-12-05T07:36:57.508068+00:00"},"taskId":"t1"}')
# enable_a2a_compliant_streaming=True: no WORKING state, the artifact in two chunks (the last one empty)
STRANDS_COMPLIANT_STREAM = _raw_sse(
    '{"contextId":"c1","history":[' + STRANDS_USER + '],"id":"t1","kind":"task","status":{"state":"submitted"}}',
    '{"append":false,"artifact":{"artifactId":"a1","name":"agent_response","parts":[{"kind":"text",'
    '"text":"echo: hi"}]},"contextId":"c1","kind":"artifact-update","taskId":"t1"}',
    '{"append":true,"artifact":{"artifactId":"a1","name":"agent_response","parts":[{"kind":"text","text":""}]},'
    '"contextId":"c1","kind":"artifact-update","lastChunk":true,"taskId":"t1"}',
    '{"contextId":"c1","final":true,"kind":"status-update","status":{"state":"completed",'
    '"timestamp":"2026-12-05T07:41:43.379910+00:00"},"taskId":"t1"}')
ADK_META = '"metadata":{"adk_app_name":"echo","adk_user_id":"A2A_USER_c1","adk_session_id":"c1"}'
# to_a2a's SendStreamingMessage (a2a-sdk 1.3's serializer: ", " and ": " separators): WORKING, WORKING with the
# answer, the artifact with lastChunk, COMPLETED; ADK's own fields under each event's metadata
ADK_STREAM = [
    'data: {"result": {"task": {"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_SUBMITTED", '
    '"timestamp": "2026-12-05T07:37:21.383889Z"}, "history": [{"messageId": "m2", "contextId": "c1", "taskId": "t1", '
    '"role": "ROLE_USER", "parts": [{"text": "hi"}]}]}}, "id": "{id}", "jsonrpc": "2.0"}\n\n',
    'data: {"result": {"statusUpdate": {"taskId": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_WORKING", '
    '"timestamp": "2026-12-05T07:37:21.384328Z"}, ' + ADK_META + '}}, "id": "{id}", "jsonrpc": "2.0"}\n\n',
    'data: {"result": {"statusUpdate": {"taskId": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_WORKING", '
    '"message": {"messageId": "m3", "role": "ROLE_AGENT", "parts": [{"text": "echo: hi"}]}, '
    '"timestamp": "2026-12-05T07:37:21.386984Z"}, ' + ADK_META + '}}, "id": "{id}", "jsonrpc": "2.0"}\n\n',
    'data: {"result": {"artifactUpdate": {"taskId": "t1", "contextId": "c1", "artifact": {"artifactId": "a1", '
    '"parts": [{"text": "echo: hi"}]}, "lastChunk": true, ' + ADK_META + '}}, "id": "{id}", "jsonrpc": "2.0"}\n\n',
    'data: {"result": {"statusUpdate": {"taskId": "t1", "contextId": "c1", "status": {"state": '
    '"TASK_STATE_COMPLETED", "timestamp": "2026-12-05T07:37:21.399270Z"}, ' + ADK_META + '}}, "id": "{id}", '
    '"jsonrpc": "2.0"}\n\n']


@pytest.mark.parametrize(("method", "version", "events"), [
    ("message/stream", "0.3", STRANDS_LEGACY_STREAM), ("message/stream", "0.3", STRANDS_COMPLIANT_STREAM),
    ("SendStreamingMessage", "1.0", ADK_STREAM)], ids=["strands-legacy", "strands-compliant", "adk"])
async def test_framework_streams_on_the_official_sdks_reach_their_terminal_event(
        client: HttpClient, caplog: pytest.LogCaptureFixture, method: str, version: str, events: list[str]) -> None:
    # each is valid in the version it speaks and a2a-sdk's client reads it to COMPLETED: the answer in a WORKING
    # status message (0.3 §7.2.2, 1.0 §3.2.3 allow any status message), an artifact closed by an empty chunk,
    # framework metadata (free-form), offsets "+00:00" on 0.3 (ISO 8601; only 1.0 §5.6.1 asks for 'Z')
    async with scripted_agent({method: Reply(content_type="text/event-stream", chunks=events)},
                              version=version) as origin:
        r = await run_probe(Target(name="t", url=origin, timeout=3.0), client, steps=(StepName.STREAM,))
    rep = _held(r, caplog)
    assert r.success and r.reason is None, rep
    assert not r.failed_checks(), rep
    for check_id in ("stream.events_parse", "stream.first_event", "stream.terminal"):
        c = r.check(check_id)
        assert c is not None and c.status is Status.PASS, c


STRANDS_INPUT_REQUIRED = (
    '{"id":"{id}","jsonrpc":"2.0","result":{"contextId":"c1","history":[{"contextId":"c1","kind":"message",'
    '"messageId":"m1","parts":[{"kind":"text","text":"input please"}],"role":"user","taskId":"t1"}],"id":"t1",'
    '"kind":"task","status":{"message":{"contextId":"c1","kind":"message","messageId":"m2","parts":[{"kind":"text",'
    '"text":"Agent requires input:\\n- ask_the_user: need more input"},{"data":{"interrupts":[{"interruptId":'
    '"v1:tool_call:ask-1:099a8370-ad8c-5718-8952-630afdbf639e","name":"ask_the_user","reason":"need more input"}]},'
    '"kind":"data"}],"role":"agent","taskId":"t1"},"state":"input-required",'
    '"timestamp":"2026-12-05T07:44:47.711243+00:00"}}}')
STRANDS_TEXT_REFUSED = ('{"error":{"code":-32602,"message":"Task is awaiting an interrupt response and cannot accept '
                        'a new message"},"id":"{id}","jsonrpc":"2.0"}')


@pytest.mark.parametrize("asks_for_data", [True, False], ids=["data-part", "text-only"])
async def test_input_required_asking_for_structured_input_refuses_text_not_judged(
        client: HttpClient, caplog: pytest.LogCaptureFixture, asks_for_data: bool) -> None:
    # Strands' A2AServer parks a tool interrupt INPUT_REQUIRED with a DataPart naming each interruptId, and resumes
    # only on {"interruptResponse": {"interruptId", "response"}} DataParts: the probe's plain-text follow-up is
    # InvalidParams -32602. The spec leaves the follow-up's content to the agent (0.3 §9.4 is an example; 1.0
    # §3.4.2 only says the taskId continues the task), so a refusal of input the agent did not ask for is not
    # judged. Before: MUST lifecycle.input_required failed "the follow-up with the same taskId was rejected", not
    # quoting the refusal. An agent that asked for nothing structured and refuses the text still fails, now quoted
    from probe.checks import grading
    from probe.engine import execute
    from probe.suite import _run_check, lifecycle
    from probe.suite.context import Suite, SuiteOptions
    from probe.wire.http import Deadline

    first = STRANDS_INPUT_REQUIRED if asks_for_data else STRANDS_INPUT_REQUIRED.replace(
        ',{"data":{"interrupts":[{"interruptId":"v1:tool_call:ask-1:099a8370-ad8c-5718-8952-630afdbf639e","name":'
        '"ask_the_user","reason":"need more input"}]},"kind":"data"}', "")
    replies = [Reply(chunks=[first]), Reply(chunks=[STRANDS_TEXT_REFUSED])]
    async with scripted_agent({"message/send": replies}, version="0.3") as origin:
        run = await execute(Target(name="t", url=origin, timeout=3.0), client, steps=(StepName.PING,))
        s = Suite(run, SuiteOptions(timeout=20.0, input_prompt="input please"), Deadline.after(20.0))
        await _run_check(s, lifecycle.input_required, ("lifecycle.input_required",))
    grading.grade(run.r)
    assert "Traceback" not in caplog.text
    c = run.r.check("lifecycle.input_required")
    refusal = ("HTTP 200, JSON-RPC InvalidParamsError -32602: Task is awaiting an interrupt response and cannot "
               "accept a new message")
    assert c is not None, run.r
    if asks_for_data:
        assert c.status is Status.SKIP, c
        assert c.message == ("the agent asks for structured input (a data part in its INPUT_REQUIRED status "
                             f"message), which the probe cannot give; its text follow-up was refused: {refusal}")
    else:
        assert c.status is Status.FAIL and c.severity is Severity.MUST, c
        assert c.message == f"the follow-up with the same taskId was rejected: {refusal}"


# ---- Mastra (@mastra/server 1.67.0's A2A routes on @mastra/hono 1.7.9): a 0.3 card, Mastra's own JSON-RPC handler,
# replayed by tests/agents/mastra_shapes.py


_MASTRA_RUN: list[Any] = []  # one suite run for the three tests (its push delivery waits out the budget)


async def _mastra_suite(client: HttpClient) -> Any:
    """`check CARD_URL --suite full` of the replay, with a push receiver (Mastra declares push, delivers none)."""
    from probe.inbox import Listener
    from probe.suite import SuiteOptions, run_suite
    from tests.agents.mastra_shapes import mastra_replay

    if not _MASTRA_RUN:
        async with Listener() as inbox, mastra_replay() as card_url:
            _MASTRA_RUN.append(await run_suite(Target(name="mastra", url=card_url, timeout=3.0), client,
                                               SuiteOptions(timeout=8.0, inbox=inbox)))
    return _MASTRA_RUN[0]


async def test_mastra_framework_error_pages_are_no_json_rpc_error_code_0(client: HttpClient) -> None:
    # Mastra's route validation answers a body it refuses HTTP 400 {"error": "Invalid request body", "issues": [...]}:
    # no jsonrpc, no id, error a string (JSON-RPC 2.0 §5: a Response has both, its error is an Object). The checks
    # fail as before (0.3 §8.1: -32700, -32600, -32601, -32602), but say what came: before, "JSON-RPC error 0:
    # Invalid request body", a JSON-RPC error nobody sent (a2a-sdk's client meets an HTTP 400)
    r = await _mastra_suite(client)
    for check_id in ("errors.parse_error", "errors.invalid_request", "errors.unknown_method", "errors.invalid_params"):
        c = r.check(check_id)
        assert c is not None and c.status is Status.FAIL and c.severity is Severity.MUST, c
        assert "error 0" not in c.message and "JSON-RPC error" not in c.message, c.message
        page = 'answered HTTP 400 (application/json: {"error":"Invalid request body","issues":[{"field":'
        assert page in c.message, c.message


async def test_mastra_second_push_delete_refused_is_no_0_3_finding(client: HttpClient) -> None:
    # 0.3 §7.8 tasks/pushNotificationConfig/delete asks no idempotency (1.0 §3.1.10 does: "This operation MUST be
    # idempotent"); Mastra answers a second delete InvalidParamsError -32602 "Push notification config not found".
    # Before: push.config_delete FAIL (MUST) "a second delete is not idempotent", a 1.0 rule graded on 0.3
    r = await _mastra_suite(client)
    assert r.protocol_version == "0.3"
    delete = r.check("push.config_delete")
    assert delete is not None and delete.status is Status.PASS, delete
    assert "a second delete answered HTTP 200, JSON-RPC InvalidParamsError -32602" in delete.message
    assert "(not graded: idempotency is a 1.0 rule, §3.1.10; 0.3 §7.8 has none)" in delete.message


async def test_mastra_stream_dropped_after_its_headers_is_a_dropped_connection(client: HttpClient) -> None:
    # tasks/resubscribe of an unknown task: HTTP 200 text/event-stream, then the connection closed mid-chunk. No
    # answer to judge (streaming.subscribe_unknown is not judged), and the one root cause is the dropped connection,
    # errors.no_server_errors (MUST). Before: it passed, "no 5xx and no dropped connection" (a stream's WireError
    # never reached the client's hooks)
    r = await _mastra_suite(client)
    unknown = r.check("streaming.subscribe_unknown")
    assert unknown is not None and unknown.status is Status.SKIP and unknown.message.startswith("no answer: "), unknown
    crash = r.check("errors.no_server_errors")
    assert crash is not None and crash.status is Status.FAIL, crash
    assert crash.message.startswith("streaming.subscribe_unknown: the stream: "), crash.message
    assert "closed the connection before the body was complete" in crash.message
