"""Exact-byte wire faults from a scripted agent: envelopes, stream order, artifact chunks, redirects, timings."""

from __future__ import annotations

import json

import pytest
from aiohttp import web

from probe.checks.catalogue import get as get_check
from probe.engine import run_probe
from probe.reasons import Reason, recommend
from probe.report import to_dict
from probe.results import ProbeResult, Status, StepName
from probe.target import Target
from probe.wire.http import HttpClient
from tests.agents.scripted import Reply, artifact, scripted_agent, sse, status, task


async def _probe(client: HttpClient, origin: str, steps: tuple[StepName, ...] = (StepName.STREAM,),
                 **kw: object) -> ProbeResult:
    return await run_probe(Target(name="t", url=origin, timeout=3.0, **kw), client, steps=steps)  # type: ignore[arg-type]


def _send(body: dict[str, object], **kw: object) -> dict[str, Reply]:
    return {"SendMessage": Reply(chunks=[json.dumps(body)], **kw)}  # type: ignore[arg-type]


COMPLETED = task("COMPLETED", artifacts=[{"artifactId": "a", "parts": [{"text": "ok"}]}])


@pytest.mark.parametrize(("body", "kw", "fragment"), [
    ({"jsonrpc": "2.0", "id": "wrong", "result": COMPLETED}, {}, "does not echo the request id"),
    ({"jsonrpc": "1.0", "id": "{id}", "result": COMPLETED}, {}, "jsonrpc is '1.0'"),
    ({"jsonrpc": "2.0", "id": "{id}", "result": COMPLETED, "error": {"code": 1, "message": "x"}}, {},
     "both result and error"),
])
async def test_envelope_violations_fail_invoke(client: HttpClient, body: dict[str, object], kw: dict[str, object],
                                               fragment: str) -> None:
    raw = json.dumps(body).replace('"{id}"', '"{id}"')
    async with scripted_agent({"SendMessage": Reply(chunks=[raw], **kw)}) as origin:  # type: ignore[arg-type]
        r = await _probe(client, origin, (StepName.INVOKE,))
    assert r.reason is Reason.INVOKE_NOT_A2A, to_dict(r)
    check = r.check("invoke.framing")
    assert check is not None and check.status is Status.FAIL and fragment in check.message
    assert check.recommendation == get_check("invoke.framing").recommendation


COMPLETED_03 = {"kind": "task", "id": "t", "contextId": "c", "status": {"state": "completed"},
                "artifacts": [{"artifactId": "a", "parts": [{"kind": "text", "text": "ok"}]}]}


@pytest.mark.parametrize(("version", "result", "level"), [
    # 1.0 §9.1 states "Content-Type: application/json for requests and responses" with no RFC 2119 keyword
    ("1.0", COMPLETED, "SHOULD"),
    # 0.3 §3.2.1: "The Content-Type header for HTTP requests and responses containing JSON-RPC payloads MUST be
    # application/json"
    ("0.3", COMPLETED_03, "MUST"),
])
async def test_a_json_rpc_answer_in_another_media_type_is_a_finding_not_a_failed_call(
        client: HttpClient, version: str, result: dict[str, object], level: str) -> None:
    """a2a-sdk's clients read the body whatever its Content-Type: the call works, the media type is a finding at
    the level of the probed version's text."""
    raw = json.dumps({"jsonrpc": "2.0", "id": "{id}", "result": result})
    method = "SendMessage" if version == "1.0" else "message/send"
    async with scripted_agent({method: Reply(chunks=[raw], content_type="text/plain")}, version=version) as origin:
        r = await _probe(client, origin, (StepName.INVOKE,), a2a_version=version)
    assert r.success and r.reason is None, to_dict(r)
    framing, media = r.check("invoke.framing"), r.check("invoke.content_type")
    assert framing is not None and framing.status is Status.PASS
    assert media is not None and media.status is Status.FAIL and media.severity == level
    assert "'text/plain', not application/json" in media.message


async def test_0_3_shapes_in_a_1_0_answer_are_a_bad_result(client: HttpClient) -> None:
    body = {"jsonrpc": "2.0", "id": "{id}", "result": {"kind": "task", "id": "t", "contextId": "c",
                                                       "status": {"state": "completed"}}}
    async with scripted_agent(_send(body)) as origin:
        r = await _probe(client, origin, (StepName.INVOKE,))
    assert r.reason is Reason.INVOKE_BAD_RESULT
    assert "looks like a 0.3 result" in r.check("invoke.result_shape").message  # type: ignore[union-attr]


async def test_0_3_state_spelling_in_1_0_task_fails_dialect_check(client: HttpClient) -> None:
    body = {"jsonrpc": "2.0", "id": "{id}", "result": {"task": {"id": "t", "contextId": "c",
                                                                "status": {"state": "completed"}}}}
    async with scripted_agent(_send(body)) as origin:
        r = await _probe(client, origin, (StepName.INVOKE,))
    dialect = r.check("invoke.dialect")
    assert dialect is not None and dialect.status is Status.FAIL and "0.3 spelling" in dialect.message
    assert r.reason is Reason.INVOKE_BAD_RESULT  # a state the version does not define cannot be judged


async def test_task_without_context_id_is_a_bad_result(client: HttpClient) -> None:
    no_context = {"task": {"id": "t", "status": {"state": "TASK_STATE_COMPLETED"}}}
    body = {"jsonrpc": "2.0", "id": "{id}", "result": no_context}
    async with scripted_agent(_send(body)) as origin:
        r = await _probe(client, origin, (StepName.INVOKE,))
    assert r.reason is Reason.INVOKE_BAD_RESULT and "no contextId" in r.step(StepName.INVOKE).detail  # type: ignore[union-attr]


def _stream(*chunks: str, hold_open: float = 0.0, later: list[tuple[float, str]] | None = None,
            whole: bool = False) -> dict[str, Reply]:
    return {"SendStreamingMessage": Reply(content_type="text/event-stream", chunks=list(chunks), hold_open=hold_open,
                                          later=later or [], whole=whole)}


async def test_a_healthy_scripted_stream_passes(client: HttpClient) -> None:
    events = sse(task("SUBMITTED"), status("WORKING"), artifact("a", "hel"),
                 artifact("a", "lo", append=True, last=True), status("COMPLETED"),
                 task("COMPLETED"))  # a final Task snapshot is allowed
    async with scripted_agent(_stream(*events)) as origin:
        r = await _probe(client, origin, expect_text="hel")
    assert r.success, to_dict(r)


@pytest.mark.parametrize(("events", "reason", "check_id", "fragment"), [
    (sse(status("WORKING"), status("COMPLETED")), Reason.STREAM_PROTOCOL_VIOLATION, "stream.first_event",
     "not the Task"),
    (sse(task("SUBMITTED"), artifact("b", "x", append=True), status("COMPLETED")), Reason.STREAM_PROTOCOL_VIOLATION,
     "stream.artifact_chunks", "append to unknown artifact 'b'"),
    (sse(task("SUBMITTED"), artifact("a", "x", last=True), artifact("a", "y", append=True), status("COMPLETED")),
     Reason.STREAM_PROTOCOL_VIOLATION, "stream.artifact_chunks", "after its lastChunk"),
    (sse(task("SUBMITTED"), status("COMPLETED"), artifact("z", "late")), Reason.STREAM_PROTOCOL_VIOLATION,
     "stream.closes_after_terminal", "after the terminal event"),
    (sse(task("SUBMITTED"), status("WORKING"), status("SUBMITTED"), status("COMPLETED")),
     Reason.STREAM_STATE_REGRESSION, "stream.no_regression", "WORKING -> SUBMITTED"),
    ([*sse(task("SUBMITTED")), "data: {not json\n\n", *sse(status("COMPLETED"))], Reason.STREAM_PROTOCOL_VIOLATION,
     "stream.events_parse", "event 1"),
    ([*sse(task("SUBMITTED")), 'data: {"jsonrpc":"2.0","id":"other","result":{"statusUpdate":{"taskId":"t1",'
      '"contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"}}}}\n\n'], Reason.STREAM_PROTOCOL_VIOLATION,
     "stream.events_parse", "does not echo the request id"),
    ([*sse(task("SUBMITTED")), 'data: {"jsonrpc":"2.0"'], Reason.STREAM_PROTOCOL_VIOLATION, "stream.events_parse",
     "ended in the middle of an event"),
    ([], Reason.STREAM_PROTOCOL_VIOLATION, "stream.first_event", "no events"),
])
async def test_stream_rule_violations(client: HttpClient, events: list[str], reason: Reason, check_id: str,
                                      fragment: str) -> None:
    async with scripted_agent(_stream(*events)) as origin:
        r = await _probe(client, origin)
    assert r.reason is reason, to_dict(r)
    check = r.check(check_id)
    assert check is not None and check.status is Status.FAIL and fragment in check.message, check
    assert check.recommendation == get_check(check_id).recommendation
    assert to_dict(r)["reasonRecommendation"] == recommend(reason)


async def test_stream_left_open_after_terminal_is_reported_within_the_grace(client: HttpClient) -> None:
    events = sse(task("SUBMITTED"), status("COMPLETED"))
    async with scripted_agent(_stream(*events, hold_open=5.0)) as origin:
        r = await _probe(client, origin, stream_close_grace=0.3)
    assert r.reason is Reason.STREAM_PROTOCOL_VIOLATION
    assert "still open 0.3s after the terminal event" in r.check("stream.closes_after_terminal").message  # type: ignore[union-attr]
    assert r.duration_s < 2.0


async def test_keepalives_after_the_terminal_event_do_not_extend_the_grace(client: HttpClient) -> None:
    """The grace bounds the wait for the stream's end, across every read after the terminal event: comments
    every 0.1 s keep bytes coming but bring no end."""
    events = sse(task("SUBMITTED"), status("COMPLETED"))
    async with scripted_agent(_stream(*events, later=[(0.1, ": ping\n\n")] * 20)) as origin:
        r = await _probe(client, origin, stream_close_grace=0.35)
    assert r.reason is Reason.STREAM_PROTOCOL_VIOLATION, to_dict(r)
    assert "still open 0.35s after the terminal event" in r.check("stream.closes_after_terminal").message  # type: ignore[union-attr]
    assert r.duration_s < 1.5


@pytest.mark.parametrize("grace", [0.0, 1.0])
async def test_the_end_of_a_stream_that_came_whole_needs_no_grace(client: HttpClient, grace: float) -> None:
    """A stream whose every byte and end arrived with its last event closes as it should, even with no grace at all;
    with a grace of 0 an end that is still on its way is a stream left open."""
    events = sse(task("SUBMITTED"), status("WORKING"), status("COMPLETED"))
    async with scripted_agent(_stream(*events, whole=True)) as origin:  # one write: the events and the end
        r = await _probe(client, origin, stream_close_grace=grace)
    assert r.success, to_dict(r)
    async with scripted_agent(_stream(*events[:2], later=[(0.2, events[2])], hold_open=0.3)) as origin:
        late = await _probe(client, origin, stream_close_grace=grace)
    if grace:
        assert late.success, to_dict(late)
    else:
        assert "still open 0s after the terminal event" in late.check("stream.closes_after_terminal").message  # type: ignore[union-attr]


async def test_an_end_shortly_after_the_terminal_event_is_within_the_grace(client: HttpClient) -> None:
    events = sse(task("SUBMITTED"), status("COMPLETED"))
    async with scripted_agent(_stream(*events, later=[(0.15, ": bye\n\n")], hold_open=0.1)) as origin:
        r = await _probe(client, origin, stream_close_grace=1.0)
    assert r.success, to_dict(r)
    assert r.check("stream.closes_after_terminal").status is Status.PASS  # type: ignore[union-attr]


async def test_stream_that_closes_at_input_required_is_an_interrupted_task(client: HttpClient) -> None:
    async with scripted_agent(_stream(*sse(task("SUBMITTED"), status("INPUT_REQUIRED")))) as origin:
        r = await _probe(client, origin)
    assert r.reason is Reason.TASK_FAILED and r.check("stream.terminal").status is Status.PASS  # type: ignore[union-attr]
    assert "INPUT_REQUIRED" in r.step(StepName.STREAM).detail  # type: ignore[union-attr]


async def test_error_before_stream_as_plain_json(client: HttpClient) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": "{id}", "error": {"code": -32009, "message": "version"}})
    async with scripted_agent({"SendStreamingMessage": Reply(chunks=[body])}) as origin:
        r = await _probe(client, origin)
    assert r.reason is Reason.INVOKE_VERSION_UNSUPPORTED


async def test_same_origin_redirect_is_followed_and_phases_are_timed(client: HttpClient) -> None:
    routes = {"/old/.well-known/agent-card.json":
              web.Response(status=301, headers={"Location": "/.well-known/agent-card.json"})}
    events = sse(task("SUBMITTED"), status("COMPLETED"))
    async with scripted_agent(_stream(*events), card_routes=routes) as origin, HttpClient() as fresh:
        r = await _probe(fresh, f"{origin}/old")
    assert r.success, to_dict(r)
    discover = r.step(StepName.DISCOVER)
    assert discover is not None and r.card_url == f"{origin}/.well-known/agent-card.json"
    assert r.check("card.no_cross_origin_redirect").status is Status.PASS  # type: ignore[union-attr]
    first = discover.exchanges[0]
    assert first.phases.connect > 0 and first.phases.processing > 0  # a fresh connection on a new client
    stream = r.step(StepName.STREAM)
    assert stream is not None
    exchange = stream.exchanges[0]
    # the head's and the end's arrival stamps: a stream that came in one read has no transfer time
    assert exchange.phases.processing > 0 and exchange.phases.transfer >= 0
    assert exchange.duration_s is not None
    assert exchange.phases.processing + exchange.phases.transfer <= exchange.duration_s
    assert exchange.phases.connect == 0  # keep-alive: the card's connection was reused


async def test_redirect_loop_is_bounded(client: HttpClient) -> None:
    routes = {"/loop/.well-known/agent-card.json":
              web.Response(status=302, headers={"Location": "/loop/.well-known/agent-card.json"})}
    async with scripted_agent({}, card_routes=routes) as origin:
        r = await _probe(client, f"{origin}/loop")
    assert r.reason is Reason.CARD_UNREACHABLE and "more than 5 redirects" in r.step(StepName.DISCOVER).detail  # type: ignore[union-attr]
