"""Hostile and subtly broken agents at the level of task and event semantics, on every binding.

Each case is one agent that breaks one rule of its version (1.0, or 0.3 where the rule differs there): the verdict,
ONE primary reason naming the root cause, and no traceback. Expectations follow the spec text of the version
(v1.0.1 / v0.3.0 docs/specification.md) and what a2a-sdk's client accepts.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import grpc
import pytest
from google.rpc import error_details_pb2

from probe import redact
from probe.engine import run_probe
from probe.reasons import Reason
from probe.report import render, to_dict
from probe.results import ProbeResult, Severity, Status, StepName
from probe.suite import SuiteOptions, run_suite
from probe.target import AuthSpec, Target
from probe.wire.http import HttpClient
from tests.agents.grpc_scripted import Call, rpc_status, scripted_grpc_agent
from tests.agents.scripted import Reply, artifact, scripted_agent, sse, status, task
from tests.hostile.test_secrets import TOKEN, _assert_clean

Json = dict[str, Any]
STREAM = (StepName.STREAM,)
INVOKE = (StepName.INVOKE,)


async def _probe(client: HttpClient, origin: str, steps: tuple[StepName, ...], *, version: str = "1.0",
                 **kw: Any) -> ProbeResult:
    kw.setdefault("timeout", 3.0)
    return await run_probe(Target(name="t", url=origin, a2a_version=version, **kw), client, steps=steps)


def _held(r: ProbeResult, caplog: pytest.LogCaptureFixture) -> Json:
    """No probe bug: no traceback logged, no internal error; the report is what the assertions read."""
    assert r.reason is not Reason.PROBE_ERROR, to_dict(r)
    ours = [rec for rec in caplog.records if not rec.name.startswith(("grpc", "aiohttp"))]  # not the test agents'
    assert not [rec for rec in ours if rec.exc_info or "Traceback" in rec.getMessage()], caplog.text
    if r.reason is not None:  # one primary reason, carried by one failed check
        assert len([c for c in r.failed_checks() if c.reason is r.reason]) == 1, to_dict(r)
    return to_dict(r)


# ---- 0.3 JSON-RPC shapes


def task03(state: str, tid: str = "t1", cid: str = "c1", **extra: Any) -> Json:
    return {"kind": "task", "id": tid, "contextId": cid, "status": {"state": state}, **extra}


def status03(state: str, final: bool | None = None, tid: str = "t1", cid: str = "c1") -> Json:
    ev: Json = {"kind": "status-update", "taskId": tid, "contextId": cid, "status": {"state": state}}
    return ev if final is None else ev | {"final": final}


def artifact03(aid: str, text: str, *, append: bool = False, last: bool = False) -> Json:
    return {"kind": "artifact-update", "taskId": "t1", "contextId": "c1", "append": append, "lastChunk": last,
            "artifact": {"artifactId": aid, "parts": [{"kind": "text", "text": text}]}}


def _stream(version: str, events: list[str]) -> dict[str, Any]:
    method = "SendStreamingMessage" if version == "1.0" else "message/stream"
    return {method: Reply(content_type="text/event-stream", chunks=events)}


V1_ART = [{"artifactId": "a", "parts": [{"text": "ok"}]}]
V03_ART = [{"artifactId": "a", "parts": [{"kind": "text", "text": "ok"}]}]

STREAM_CASES = [
    # (id, version, events, reason, check id, fragment)
    ("1.0 completed then working", "1.0", sse(task("SUBMITTED"), status("COMPLETED"), status("WORKING")),
     Reason.STREAM_STATE_REGRESSION, "stream.no_regression", "COMPLETED -> WORKING"),
    ("0.3 completed then working", "0.3", sse(task03("submitted"), status03("completed", True),
                                              status03("working", False)),
     Reason.STREAM_STATE_REGRESSION, "stream.no_regression", "COMPLETED -> WORKING"),
    ("1.0 two terminal states", "1.0", sse(task("SUBMITTED"), status("COMPLETED"), status("FAILED")),
     Reason.STREAM_STATE_REGRESSION, "stream.no_regression", "COMPLETED -> FAILED after the terminal state"),
    ("0.3 two terminal states", "0.3", sse(task03("submitted"), status03("completed", True),
                                           status03("failed", True)),
     Reason.STREAM_STATE_REGRESSION, "stream.no_regression", "COMPLETED -> FAILED after the terminal state"),
    ("1.0 the terminal event twice", "1.0", sse(task("SUBMITTED"), status("COMPLETED"), status("COMPLETED")),
     Reason.STREAM_PROTOCOL_VIOLATION, "stream.closes_after_terminal", "event 2 (status) after the terminal"),
    ("0.3 submitted after working", "0.3", sse(task03("submitted"), status03("working", False),
                                               status03("submitted", False), status03("completed", True)),
     Reason.STREAM_STATE_REGRESSION, "stream.no_regression", "WORKING -> SUBMITTED"),
    ("1.0 final status names another task", "1.0", sse(task("SUBMITTED"), status("COMPLETED", tid="t2")),
     Reason.STREAM_PROTOCOL_VIOLATION, "stream.consistent_ids", "taskId 't2'"),
    ("1.0 final status names another context", "1.0", sse(task("SUBMITTED"), status("COMPLETED", cid="c2")),
     Reason.STREAM_PROTOCOL_VIOLATION, "stream.consistent_ids", "contextId 'c2'"),
    ("0.3 final status names another task", "0.3", sse(task03("submitted"), status03("completed", True, tid="t2")),
     Reason.STREAM_PROTOCOL_VIOLATION, "stream.consistent_ids", "taskId 't2'"),
    ("1.0 final Task snapshot of another task", "1.0",
     sse(task("SUBMITTED"), status("COMPLETED"), task("COMPLETED", tid="t2")),
     Reason.STREAM_PROTOCOL_VIOLATION, "stream.consistent_ids", "taskId 't2'"),
    ("0.3 append to an unknown artifact", "0.3", sse(task03("submitted"), artifact03("b", "x", append=True),
                                                     status03("completed", True)),
     Reason.STREAM_PROTOCOL_VIOLATION, "stream.artifact_chunks", "append to unknown artifact 'b'"),
    ("0.3 a chunk after lastChunk", "0.3", sse(task03("submitted"), artifact03("a", "x", last=True),
                                               artifact03("a", "y", append=True), status03("completed", True)),
     Reason.STREAM_PROTOCOL_VIOLATION, "stream.artifact_chunks", "after its lastChunk"),
    ("1.0 stream of 0.3-shaped events", "1.0", sse(task03("submitted"), status03("completed", True)),
     Reason.STREAM_PROTOCOL_VIOLATION, "stream.events_parse", "looks like a 0.3 result"),
    ("0.3 stream of 1.0-shaped events", "0.3", sse(task("SUBMITTED"), status("COMPLETED")),
     Reason.STREAM_PROTOCOL_VIOLATION, "stream.events_parse", "looks like a 1.0 result"),
    ("1.0 artifact first", "1.0", sse(artifact("a", "x"), status("COMPLETED")),
     Reason.STREAM_PROTOCOL_VIOLATION, "stream.first_event", "not the Task"),
    ("1.0 a Task after a Message reply", "1.0",
     sse({"message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "hi"}], "contextId": "c1"}},
         task("COMPLETED")),
     Reason.STREAM_PROTOCOL_VIOLATION, "stream.first_event", "event 1 follows a Message reply"),
    # a Message inside a task's stream is no end of it (Agno 3.1.10 streams its text so, then COMPLETED final):
    # a2a-sdk 0.3's client raises on it (A2AClientInvalidStateError), 1.0 §3.1.2 allows updates only after the Task
    ("0.3 a Message in a task's stream", "0.3",
     sse(status03("working", False), {"kind": "message", "messageId": "m", "role": "agent", "taskId": "t1",
                                      "contextId": "c1", "parts": [{"kind": "text", "text": "hi"}]},
         status03("completed", True), task03("completed")),
     Reason.STREAM_PROTOCOL_VIOLATION, "stream.events_parse", "event 1: a Message in the task's stream"),
    ("1.0 a Message in a task's stream", "1.0",
     sse(task("WORKING"), {"message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "hi"}],
                                       "taskId": "t1", "contextId": "c1"}}, status("COMPLETED")),
     Reason.STREAM_PROTOCOL_VIOLATION, "stream.first_event", "event 1 is a Message in the task's stream"),
    ("1.0 INPUT_REQUIRED and WORKING in a loop, then closed", "1.0",
     sse(task("SUBMITTED"), *[status(s) for _ in range(40) for s in ("INPUT_REQUIRED", "WORKING")]),
     Reason.STREAM_NO_TERMINAL, "stream.terminal", "81 event(s) with no terminal state (last state WORKING)"),
    ("0.3 completed without final", "0.3", sse(task03("submitted"), status03("completed")),
     Reason.STREAM_PROTOCOL_VIOLATION, "stream.schema", "final"),
    ("0.3 final: true on WORKING, then closed", "0.3", sse(task03("submitted"), status03("working", True)),
     Reason.STREAM_NO_TERMINAL, "stream.terminal", "event 1: final: true on a WORKING status ends the stream"),
    ("0.3 final: true on WORKING, then COMPLETED", "0.3", sse(task03("submitted"), status03("working", True),
                                                             status03("completed", True)),
     Reason.STREAM_NO_TERMINAL, "stream.terminal", "event 1: final: true on a WORKING status ends the stream"),
]


@pytest.mark.parametrize(("version", "events", "reason", "check_id", "fragment"),
                         [c[1:] for c in STREAM_CASES], ids=[c[0] for c in STREAM_CASES])
async def test_stream_semantics(client: HttpClient, caplog: pytest.LogCaptureFixture, version: str,
                                events: list[str], reason: Reason, check_id: str, fragment: str) -> None:
    async with scripted_agent(_stream(version, events), version=version) as origin:
        r = await _probe(client, origin, STREAM, version=version)
    rep = _held(r, caplog)
    assert r.reason is reason, rep
    check = r.check(check_id)
    assert check is not None and check.status is Status.FAIL and fragment in check.message, (check, rep)


HELD_STREAMS = [
    # streams a2a-sdk's client reads to the end: the probe passes them, naming a SHOULD it found broken
    ("0.3 status-update first (no MUST in 0.3 §7.2)", "0.3",
     sse(status03("working", False), status03("completed", True)), "stream.first_event"),
    ("0.3 events after final: true (the close is shown, no MUST)", "0.3",
     sse(task03("submitted"), status03("completed", True), artifact03("z", "late")), "stream.closes_after_terminal"),
    ("0.3 final: false on completed, then closed", "0.3", sse(task03("submitted"), status03("completed", False)),
     None),
    ("1.0 final Task snapshot", "1.0", sse(task("SUBMITTED"), status("COMPLETED"), task("COMPLETED")), None),
    ("1.0 statusUpdate carrying final (an unknown field)", "1.0",
     sse(task("SUBMITTED"), {"statusUpdate": {"taskId": "t1", "contextId": "c1", "final": True,
                                              "status": {"state": "TASK_STATE_COMPLETED"}}}), None),
]


@pytest.mark.parametrize(("version", "events", "should"), [c[1:] for c in HELD_STREAMS],
                         ids=[c[0] for c in HELD_STREAMS])
async def test_streams_the_official_client_reads(client: HttpClient, caplog: pytest.LogCaptureFixture, version: str,
                                                 events: list[str], should: str | None) -> None:
    async with scripted_agent(_stream(version, events), version=version) as origin:
        r = await _probe(client, origin, STREAM, version=version)
    rep = _held(r, caplog)
    assert r.success, rep
    if should is not None:
        check = r.check(should)
        assert check is not None and check.status is Status.FAIL and check.severity is Severity.SHOULD, check


# ---- SendMessage, then GetTask until the task ends


def _rpc(result: Json) -> Reply:
    return Reply(chunks=[json.dumps({"jsonrpc": "2.0", "id": "{id}", "result": result})])


def _rpc_error(code: int, message: str) -> Reply:
    return Reply(chunks=[json.dumps({"jsonrpc": "2.0", "id": "{id}", "error": {"code": code, "message": message}})])


def _bare(t: Json) -> Json:
    return t.get("task", t)  # type: ignore[no-any-return]


def _send_get(version: str, sent: Json, got: list[Reply] | Reply) -> dict[str, Any]:
    send, get = ("SendMessage", "GetTask") if version == "1.0" else ("message/send", "tasks/get")
    return {send: _rpc(sent), get: got}


def _v(version: str, state: str, tid: str = "t1", cid: str = "c1", done: bool = False) -> Json:
    """A task in `state` (1.0 upper-case) as the version's JSON-RPC spells it; `done` adds the artifact."""
    if version == "1.0":
        return task(state, tid, cid, **({"artifacts": V1_ART} if done else {}))
    return task03(state.lower().replace("_", "-"), tid, cid, **({"artifacts": V03_ART} if done else {}))


INVOKE_CASES = [
    # (id, version, SendMessage's task, GetTask's answers, reason, fragment of the step's detail)
    *[(f"{v} GetTask answers another task", v, _v(v, "WORKING"), [_rpc(_bare(_v(v, "COMPLETED", "t2", done=True)))],
       Reason.INVOKE_BAD_RESULT, "GetTask(t1) answered task t2") for v in ("1.0", "0.3")],
    *[(f"{v} GetTask answers another context", v, _v(v, "WORKING"),
       [_rpc(_bare(_v(v, "COMPLETED", cid="c2", done=True)))],
       Reason.INVOKE_BAD_RESULT, "contextId c2") for v in ("1.0", "0.3")],
    *[(f"{v} the task id changes: GetTask does not know it", v, _v(v, "WORKING"), [_rpc_error(-32001, "no task t1")],
       Reason.INVOKE_A2A_ERROR, "GetTask t1: JSON-RPC TaskNotFoundError -32001") for v in ("1.0", "0.3")],
    *[(f"{v} working forever", v, _v(v, "SUBMITTED"), [_rpc(_bare(_v(v, "WORKING")))],
       Reason.TASK_TIMEOUT, "task t1 still WORKING at the deadline") for v in ("1.0", "0.3")],
    *[(f"{v} GetTask after a terminal state says WORKING", v, _v(v, "WORKING"),
       [_rpc(_bare(_v(v, "FAILED"))), _rpc(_bare(_v(v, "WORKING")))],
       Reason.TASK_FAILED, "task t1 ended FAILED") for v in ("1.0", "0.3")],
    ("1.0 GetTask answers a Message", "1.0", _v("1.0", "WORKING"),
     [_rpc({"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "hi"}]})], Reason.INVOKE_BAD_RESULT, "GetTask"),
    # the indeterminate state both versions define (1.0 TASK_STATE_UNSPECIFIED, 0.3 "unknown"): an unfinished task
    ("1.0 SendMessage answers UNSPECIFIED, then COMPLETED", "1.0", _v("1.0", "UNSPECIFIED"),
     [_rpc(_bare(_v("1.0", "COMPLETED", done=True)))], Reason.INVOKE_NOT_BLOCKING, "returned task t1 in UNKNOWN"),
    ("0.3 SendMessage answers unknown, then completed", "0.3", task03("unknown"),
     [_rpc(_bare(_v("0.3", "COMPLETED", done=True)))], None, ""),
    *[(f"{v} indeterminate until the deadline", v, _v(v, "WORKING"), [_rpc(_bare(
        _v("1.0", "UNSPECIFIED") if v == "1.0" else task03("unknown")))],
       Reason.TASK_TIMEOUT, "task t1 still UNKNOWN at the deadline") for v in ("1.0", "0.3")],
    *[(f"{v} input-required", v, _v(v, "INPUT_REQUIRED"), [_rpc(_bare(_v(v, "INPUT_REQUIRED")))],
       Reason.TASK_FAILED, "ended INPUT_REQUIRED") for v in ("1.0", "0.3")],
]


@pytest.mark.parametrize(("version", "sent", "got", "reason", "fragment"), [c[1:] for c in INVOKE_CASES],
                         ids=[c[0] for c in INVOKE_CASES])
async def test_invoke_semantics(client: HttpClient, caplog: pytest.LogCaptureFixture, version: str, sent: Json,
                                got: list[Reply], reason: Reason, fragment: str) -> None:
    async with scripted_agent(_send_get(version, sent, got), version=version) as origin:
        r = await _probe(client, origin, INVOKE, version=version, timeout=1.5)
    rep = _held(r, caplog)
    assert r.reason is reason, rep
    step = r.step(StepName.INVOKE)
    assert step is not None and fragment in step.detail, step.detail
    assert r.duration_s < 3.0


# ---- HTTP+JSON: statuses and bodies of A2A errors

PING = (StepName.PING,)
_EI = "type.googleapis.com/google.rpc.ErrorInfo"


def _google_status(code: int, status_name: str, message: str, *details: Json) -> str:
    return json.dumps({"error": {"code": code, "status": status_name, "message": message, "details": list(details)}})


def _info(reason: str) -> Json:
    return {"@type": _EI, "reason": reason, "domain": "a2a-protocol.org"}


def _rest(status: int, body: str) -> Reply:
    return Reply(status=status, chunks=[body], whole=True)


_V1_TASK = {"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_COMPLETED"}, "artifacts": V1_ART}
_UNKNOWN_DETAIL = {"@type": "type.example.com/acme.Trace", "traceId": "abc"}

REST_CASES = [
    # (id, version, "VERB /path", answer, steps, reason, fragment of the step's detail)
    ("1.0 404 google.rpc.Status with an unknown @type only", "1.0", "GET /tasks/{tid}",
     _rest(404, _google_status(404, "NOT_FOUND", "nope", _UNKNOWN_DETAIL)), PING, Reason.INVOKE_ROUTE_NOT_FOUND,
     "names no A2A error"),
    ("1.0 404 google.rpc.Status without details", "1.0", "GET /tasks/{tid}",
     _rest(404, _google_status(404, "NOT_FOUND", "nope")), PING, Reason.INVOKE_ROUTE_NOT_FOUND, "names no A2A error"),
    ("1.0 404 with a JSON-RPC error envelope", "1.0", "GET /tasks/{tid}",
     _rest(404, json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32001, "message": "Task not found"}})),
     PING, Reason.INVOKE_ROUTE_NOT_FOUND, "names no A2A error"),
    ("0.3 404 google.rpc.Status naming nothing", "0.3", "GET /v1/tasks/{tid}",
     _rest(404, _google_status(404, "NOT_FOUND", "nope")), PING, Reason.INVOKE_ROUTE_NOT_FOUND, "names no A2A error"),
    ("1.0 TaskNotFound answered 200", "1.0", "GET /tasks/{tid}",
     _rest(200, _google_status(404, "NOT_FOUND", "nope", _info("TASK_NOT_FOUND"))), PING,
     Reason.INVOKE_UNEXPECTED_STATUS, "answered HTTP 200 for HTTP 200 TaskNotFoundError"),
    ("1.0 UnsupportedOperation answered 200", "1.0", "POST /message:send",
     _rest(200, _google_status(400, "FAILED_PRECONDITION", "no", _info("UNSUPPORTED_OPERATION"))), INVOKE,
     Reason.INVOKE_UNEXPECTED_STATUS, "the spec maps UnsupportedOperationError to HTTP 400"),
    ("1.0 an unnamed error answered 200", "1.0", "POST /message:send",
     _rest(200, _google_status(500, "INTERNAL", "boom")), INVOKE, Reason.INVOKE_UNEXPECTED_STATUS,
     "with an error body (HTTP 200 error: boom)"),
    ("0.3 UnsupportedOperation answered 200", "0.3", "POST /v1/message:send",
     _rest(200, _google_status(400, "FAILED_PRECONDITION", "no", _info("UNSUPPORTED_OPERATION"))), INVOKE,
     Reason.INVOKE_UNEXPECTED_STATUS, "wants a status that corresponds to UnsupportedOperationError"),
    *[(f"{v} a JSON-RPC result envelope", v, f"POST {'/v1' if v == '0.3' else ''}/message:send",
       _rest(200, json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"task": _V1_TASK}})), INVOKE,
       Reason.INVOKE_NOT_A2A, "with a JSON-RPC 2.0 envelope (id, jsonrpc, result)") for v in ("1.0", "0.3")],
    # held: an A2A error at a status the version does not map it to names the mapping
    ("1.0 TaskNotFound at 500", "1.0", "GET /tasks/{tid}",
     _rest(500, _google_status(500, "INTERNAL", "nope", _info("TASK_NOT_FOUND"))), PING,
     Reason.INVOKE_UNEXPECTED_STATUS, "the spec maps TaskNotFoundError to HTTP 404"),
    ("1.0 InvalidAgentResponse at 503", "1.0", "POST /message:send",
     _rest(503, _google_status(503, "UNAVAILABLE", "bad", _info("INVALID_AGENT_RESPONSE"))), INVOKE,
     Reason.INVOKE_UNEXPECTED_STATUS, "maps InvalidAgentResponseError to HTTP 502 or 500"),
    ("1.0 InvalidAgentResponse at 502 (the 1.0.0 mapping)", "1.0", "POST /message:send",
     _rest(502, _google_status(502, "INTERNAL", "bad", _info("INVALID_AGENT_RESPONSE"))), INVOKE,
     Reason.INVOKE_A2A_ERROR, "HTTP 502 InvalidAgentResponseError"),
    ("1.0 400 with an unknown @type detail only", "1.0", "POST /message:send",
     _rest(400, _google_status(400, "INVALID_ARGUMENT", "bad", _UNKNOWN_DETAIL)), INVOKE, Reason.INVOKE_A2A_ERROR,
     "HTTP 400 error: bad"),
    ("1.0 400 whose error is a string", "1.0", "POST /message:send", _rest(400, json.dumps({"error": "bad request"})),
     INVOKE, Reason.INVOKE_UNEXPECTED_STATUS, "answered HTTP 400"),
]


@pytest.mark.parametrize(("version", "route", "answer", "steps", "reason", "fragment"), [c[1:] for c in REST_CASES],
                         ids=[c[0] for c in REST_CASES])
async def test_rest_error_semantics(client: HttpClient, caplog: pytest.LogCaptureFixture, version: str, route: str,
                                    answer: Reply, steps: tuple[StepName, ...], reason: Reason, fragment: str) -> None:
    async with scripted_agent({}, rest={route: answer}, version=version) as origin:
        r = await _probe(client, origin, steps, version=version, binding="HTTP+JSON")
    rep = _held(r, caplog)
    assert r.reason is reason, rep
    step = r.step(steps[0])
    assert step is not None and fragment in step.detail, step.detail


# ---- an agent that echoes the probe's credentials inside these answers: masked in every output

_ECHO = "echo {secret}"  # the whole Authorization value the agent received ("Bearer tok-…")


def _echo_rest_agent() -> dict[str, Reply | list[Reply]]:
    err = _google_status(400, "FAILED_PRECONDITION", _ECHO, _info("UNSUPPORTED_OPERATION") | {"metadata": {
        "auth": _ECHO}}, {"@type": "type.example.com/Echo", "seen": _ECHO})
    stream = [f"data: {json.dumps({'task': task('SUBMITTED', tid=_ECHO)['task']})}\n\n",
              f"data: {json.dumps({'error': json.loads(err)['error']})}\n\n"]
    return {
        "GET /tasks/{tid}": Reply(status=401, chunks=[json.dumps({"error": {"code": 401, "message": _ECHO}})],
                                  whole=True, headers={"WWW-Authenticate": f'Bearer realm="{_ECHO}"'}),
        "GET /tasks/{tid}:subscribe": _rest(404, json.dumps({"error": {"code": 404, "message": _ECHO}})),
        "POST /message:send": [_rest(200, json.dumps({"jsonrpc": "2.0", "id": _ECHO, "result": {"task": _V1_TASK}}))],
        "POST /message:stream": Reply(content_type="text/event-stream", chunks=stream),
        "POST /tasks/{tid}:cancel": _rest(400, err),
    }


def _echo_grpc_script() -> dict[str, Any]:
    code = grpc.StatusCode.FAILED_PRECONDITION
    blob = ("grpc-status-details-bin", lambda secret: rpc_status(code, f"echo {secret}", "UNSUPPORTED_OPERATION",
                                                                  auth=f"echo {secret}"))
    echoed = {"id": _ECHO, "contextId": _ECHO, "status": {"state": "TASK_STATE_WORKING", "message": {
        "messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": _ECHO}]}}}
    return {
        "GetTask": Call(code=grpc.StatusCode.NOT_FOUND, details=_ECHO, trailers=[("x-echo", _ECHO)],
                        initial=[("x-seen", _ECHO)]),
        "SendMessage": Call(code=code, details=_ECHO, trailers=[blob, ("x-echo", _ECHO)]),
        "SendStreamingMessage": Call(messages=[{"task": echoed}, {"artifactUpdate": {
            "taskId": _ECHO, "contextId": _ECHO, "artifact": {"artifactId": _ECHO, "parts": [{"text": _ECHO}]}}}],
            code=code, details=_ECHO, trailers=[blob]),
    }


def _echo_jsonrpc_agent() -> dict[str, Reply | list[Reply]]:
    """The semantic faults' own messages quote the agent's ids: a poll that answers another task, a stream whose
    final event names another task and context, all named by the echoed credentials."""
    return {
        "GetTask": _rpc(task("COMPLETED", tid=_ECHO, artifacts=V1_ART)["task"]),
        "SendMessage": _rpc(task("WORKING")),
        "SendStreamingMessage": Reply(content_type="text/event-stream", chunks=sse(
            task("SUBMITTED"), status("COMPLETED", tid=_ECHO, cid=_ECHO), task("COMPLETED", tid=_ECHO))),
    }


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON", "GRPC"])
async def test_echoed_credentials_are_masked_in_every_output(client: HttpClient, caplog: pytest.LogCaptureFixture,
                                                             binding: str) -> None:
    redact.register(TOKEN)
    serving = (scripted_agent(_echo_jsonrpc_agent()) if binding == "JSONRPC"
               else scripted_agent({}, rest=_echo_rest_agent()) if binding == "HTTP+JSON"
               else scripted_grpc_agent(_echo_grpc_script()))
    results = []
    async with serving as origin:
        async with aiohttp.ClientSession() as session, session.get(f"{origin}/.well-known/agent-card.json") as got:
            url = urlsplit((await got.json())["supportedInterfaces"][0]["url"])
        auth = AuthSpec(allowed_origins=(f"{url.scheme}://{url.netloc}",))  # gRPC listens on a port of its own
        for steps in (PING, INVOKE, STREAM):
            r = await _probe(client, origin, steps, binding=binding, headers={"Authorization": f"Bearer {TOKEN}"},
                             auth=auth)
            _held(r, caplog)
            assert steps is PING or r.reason is not None, to_dict(r)
            results.append(r)
        results.append(await run_suite(Target(name="t", url=origin, timeout=3.0, binding=binding, headers={
            "Authorization": f"Bearer {TOKEN}"}, auth=auth), client, SuiteOptions(timeout=10.0, safe_only=True)))
    echoed = " ".join(render(r, "json") for r in results)
    assert "<redacted>" in echoed, echoed  # the echo reached the report, masked
    for r in results:
        for fmt in ("json", "text", "markdown", "junit", "html"):
            _assert_clean(f"{binding} {r.steps[-1].name if r.steps else 'suite'} {fmt}", render(r, fmt))
    _assert_clean("logs", caplog.text)


# ---- gRPC: statuses without details, details that are no google.rpc.Status, streams that end OK too soon


def _grpc_cases() -> list[tuple[str, dict[str, Any], tuple[StepName, ...], Reason | None, str]]:
    nf, internal, pre = grpc.StatusCode.NOT_FOUND, grpc.StatusCode.INTERNAL, grpc.StatusCode.FAILED_PRECONDITION
    bare_info = error_details_pb2.ErrorInfo(reason="TASK_NOT_FOUND", domain="a2a-protocol.org").SerializeToString()

    def su(state: str, tid: str = "t1") -> Json:
        return status(state, tid=tid)

    first = {"task": task("SUBMITTED")["task"]}
    return [
        # (id, script, steps, reason, fragment of the step's detail)
        ("ping: NOT_FOUND trailers-only, no details (the rpc exists: route reached)",
         {"GetTask": Call(code=nf, details="no task")}, PING, None, "gRPC NOT_FOUND TaskNotFoundError"),
        ("ping: NOT_FOUND whose details are an ErrorInfo, not a google.rpc.Status",
         {"GetTask": Call(code=nf, details="no task", trailers=[("grpc-status-details-bin", bare_info)])}, PING,
         None, "gRPC NOT_FOUND TaskNotFoundError"),
        ("send: INTERNAL trailers-only, no details", {"SendMessage": Call(code=internal, details="boom")}, INVOKE,
         Reason.INVOKE_A2A_ERROR, "gRPC INTERNAL error: boom"),
        ("send: TaskNotFound's ErrorInfo under FAILED_PRECONDITION",
         {"SendMessage": Call(code=pre, details="x", trailers=[("grpc-status-details-bin", rpc_status(
             pre, "x", "TASK_NOT_FOUND"))])}, INVOKE, Reason.INVOKE_UNEXPECTED_STATUS,
         "the spec maps TaskNotFoundError to gRPC NOT_FOUND"),
        ("send: OK with an empty SendMessageResponse", {"SendMessage": Call(messages=[{}])}, INVOKE,
         Reason.INVOKE_BAD_RESULT, "found []"),
        ("stream: ends OK with no terminal event",
         {"SendStreamingMessage": Call(messages=[first, su("WORKING")])}, STREAM, Reason.STREAM_NO_TERMINAL,
         "closed the stream after 2 event(s) with no terminal state (last state WORKING)"),
        ("stream: ends OK with no message at all", {"SendStreamingMessage": Call()}, STREAM,
         Reason.STREAM_PROTOCOL_VIOLATION, "the stream carried no events"),
        ("stream: a status update first", {"SendStreamingMessage": Call(messages=[su("WORKING"), su("COMPLETED")])},
         STREAM, Reason.STREAM_PROTOCOL_VIOLATION, "not the Task"),
        ("stream: WORKING after COMPLETED",
         {"SendStreamingMessage": Call(messages=[first, su("COMPLETED"), su("WORKING")])}, STREAM,
         Reason.STREAM_STATE_REGRESSION, "COMPLETED -> WORKING after the terminal state"),
        ("stream: the final status names another task",
         {"SendStreamingMessage": Call(messages=[first, su("COMPLETED", "t2")])}, STREAM,
         Reason.STREAM_PROTOCOL_VIOLATION, "taskId 't2'"),
        ("stream: an empty StreamResponse",
         {"SendStreamingMessage": Call(messages=[first, {}, su("COMPLETED")])}, STREAM,
         Reason.STREAM_PROTOCOL_VIOLATION, "event 1: 1.0 result must wrap exactly one of"),
        ("stream: ends INTERNAL after the Task",
         {"SendStreamingMessage": Call(messages=[first], code=internal, details="boom")}, STREAM,
         Reason.INVOKE_A2A_ERROR, "the stream carried an error: gRPC INTERNAL error: boom"),
        ("stream: UNIMPLEMENTED (no such rpc)", {}, STREAM, Reason.INVOKE_ROUTE_NOT_FOUND,
         "no lf.a2a.v1.A2AService here"),
    ]


GRPC_CASES = _grpc_cases()


@pytest.mark.parametrize(("script", "steps", "reason", "fragment"), [c[1:] for c in GRPC_CASES],
                         ids=[c[0] for c in GRPC_CASES])
async def test_grpc_semantics(client: HttpClient, caplog: pytest.LogCaptureFixture, script: dict[str, Any],
                              steps: tuple[StepName, ...], reason: Reason | None, fragment: str) -> None:
    async with scripted_grpc_agent(script) as origin:
        r = await _probe(client, origin, steps, binding="GRPC")
    rep = _held(r, caplog)
    assert r.reason is reason, rep
    step = r.step(steps[0])
    assert step is not None and fragment in step.detail, step.detail


async def test_an_input_required_loop_is_judged_once_and_bounded(client: HttpClient,
                                                                caplog: pytest.LogCaptureFixture) -> None:
    """Every message, the follow-up too, answers INPUT_REQUIRED: the suite sends the one follow-up, reads the task
    once more and says so; nothing keeps answering the agent."""
    looping = {"SendMessage": _rpc(task("INPUT_REQUIRED")), "GetTask": _rpc(task("INPUT_REQUIRED")["task"])}
    async with scripted_agent(looping) as origin:
        r = await run_suite(Target(name="t", url=origin, timeout=3.0), client,
                            SuiteOptions(timeout=10.0, input_prompt="input please"))
    _held(r, caplog)
    check = r.check("lifecycle.input_required")
    assert check is not None and check.status is Status.FAIL, check
    assert "task t1: INPUT_REQUIRED -> INPUT_REQUIRED" in check.message
    assert r.duration_s < 8.0


_GARBLED = [
    # (id, grpc-status-details-bin of a NOT_FOUND "no task" call, fragment of errors.error_info's message)
    ("bytes that are no google.rpc.Status", b"\xff\x00not a Status", "is not a google.rpc.Status"),
    ("a google.rpc.Status of another code", rpc_status(grpc.StatusCode.INTERNAL, "no task", "TASK_NOT_FOUND"),
     "a google.rpc.Status of code 13 and message 'no task', not the call's NOT_FOUND (5) 'no task'"),
    ("a google.rpc.Status of another message", rpc_status(grpc.StatusCode.NOT_FOUND, "other", "TASK_NOT_FOUND"),
     "message 'other', not the call's NOT_FOUND (5) 'no task'"),
]


@pytest.mark.parametrize(("blob", "fragment"), [c[1:] for c in _GARBLED], ids=[c[0] for c in _GARBLED])
async def test_grpc_status_details_the_official_client_refuses_are_named(
        client: HttpClient, caplog: pytest.LogCaptureFixture, blob: bytes, fragment: str) -> None:
    """a2a-sdk's client raises on a details trailer that is no google.rpc.Status or contradicts the call's status
    (DecodeError, 'Mismatched status code/message'): its ErrorInfo names nothing, and errors.error_info (MUST on gRPC)
    says why; the status alone still names TaskNotFoundError, as a client without the trailer reads it."""
    script = {"GetTask": Call(code=grpc.StatusCode.NOT_FOUND, details="no task",
                              trailers=[("grpc-status-details-bin", blob)])}
    async with scripted_grpc_agent(script) as origin:
        r = await run_suite(Target(name="t", url=origin, timeout=3.0, binding="GRPC"), client,
                            SuiteOptions(timeout=10.0, safe_only=True))
    _held(r, caplog)
    found, info = r.check("errors.task_not_found"), r.check("errors.error_info")
    assert found is not None and found.status is Status.PASS, found
    assert info is not None and info.status is Status.FAIL and fragment in info.message, info


def _grpc_03_cases() -> list[tuple[str, dict[str, Any], tuple[StepName, ...], Reason | None, str]]:
    def su(state: str, final: bool = False) -> Json:
        return {"statusUpdate": {"taskId": "t1", "contextId": "c1", "status": {"state": f"TASK_STATE_{state}"},
                                 "final": final}}

    first = {"task": {"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_SUBMITTED"}}}
    nf, pre = grpc.StatusCode.NOT_FOUND, grpc.StatusCode.FAILED_PRECONDITION
    return [
        # 0.3 fixed no status table: a status only TaskNotFoundError uses names it, and an unnamed error still
        # proves the A2A service answered
        ("0.3 ping: NOT_FOUND without details", {"GetTask": Call(code=nf, details="no task")}, PING, None,
         "TaskNotFoundError"),
        ("0.3 ping: FAILED_PRECONDITION without details", {"GetTask": Call(code=pre, details="hm")}, PING, None,
         "gRPC FAILED_PRECONDITION"),
        ("0.3 stream: final: true on WORKING", {"SendStreamingMessage": Call(messages=[first, su("WORKING", True)])},
         STREAM, Reason.STREAM_NO_TERMINAL, "final: true on a WORKING status ends the stream"),
        ("0.3 stream: ends OK with no terminal event",
         {"SendStreamingMessage": Call(messages=[first, su("WORKING")])}, STREAM, Reason.STREAM_NO_TERMINAL,
         "with no terminal state (last state WORKING)"),
        ("0.3 stream: a status update first (no MUST in 0.3)",
         {"SendStreamingMessage": Call(messages=[su("WORKING"), su("COMPLETED", True)])}, STREAM, None, ""),
    ]


GRPC_03_CASES = _grpc_03_cases()


@pytest.mark.parametrize(("script", "steps", "reason", "fragment"), [c[1:] for c in GRPC_03_CASES],
                         ids=[c[0] for c in GRPC_03_CASES])
async def test_grpc_03_semantics(client: HttpClient, caplog: pytest.LogCaptureFixture, script: dict[str, Any],
                                 steps: tuple[StepName, ...], reason: Reason | None, fragment: str) -> None:
    async with scripted_grpc_agent(script, version="0.3") as origin:
        r = await _probe(client, origin, steps, version="0.3", binding="GRPC")
    rep = _held(r, caplog)
    assert r.reason is reason, rep
    step = r.step(steps[0])
    assert step is not None and fragment in step.detail, step.detail


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON", "GRPC"])
async def test_a_stream_that_stays_working_ends_at_the_deadline(client: HttpClient, caplog: pytest.LogCaptureFixture,
                                                                binding: str) -> None:
    """A streamed task that stays WORKING, its stream open and silent: the probe's deadline ends it, and the
    reason says so with the last state seen (no hang, no traceback)."""
    events = [task("SUBMITTED"), status("WORKING")]
    if binding == "GRPC":
        serving = scripted_grpc_agent({"SendStreamingMessage": Call(messages=events, hold=30.0)})
    else:
        reply = Reply(content_type="text/event-stream", hold_open=30.0,
                      chunks=[f"data: {json.dumps(e)}\n\n" for e in events] if binding == "HTTP+JSON" else sse(*events))
        serving = (scripted_agent({}, rest={"POST /message:stream": reply}) if binding == "HTTP+JSON"
                   else scripted_agent({"SendStreamingMessage": reply}))
    async with serving as origin:
        r = await _probe(client, origin, STREAM, binding=binding, timeout=1.5)
    rep = _held(r, caplog)
    assert r.reason is Reason.STREAM_NO_TERMINAL, rep
    step = r.step(StepName.STREAM)
    assert step is not None and "2 event(s), last state WORKING" in step.detail, step.detail
    assert r.duration_s < 3.0

