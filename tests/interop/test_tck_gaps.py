"""The TCK-gap checks (ListTasks, history, several streams of one task, unknown ids) on the real SDK peers, per
binding and version, and each failure mode on a sloppy agent that gets exactly that rule wrong."""

from __future__ import annotations

import json
from typing import Any

import pytest

from probe.checks.registry import UNCOVERED, requirement
from probe.engine import execute
from probe.results import Status, StepName
from probe.suite import _run_check, errors, streaming, tasks
from probe.suite.context import Suite, SuiteOptions
from probe.target import Target
from probe.wire.http import Deadline, HttpClient
from tests.agents.scripted import Reply, scripted_agent, sse, status, task
from tests.agents.sloppy import Sloppy, sloppy_agent
from tests.peers.harness import Peer

CHECKS = (*tasks.CHECKS, streaming.subscribe_unknown, streaming.multi_stream, errors.cancel_unknown)
IDS = {**tasks.IDS, **streaming.IDS, **errors.IDS}
NEW = ("lifecycle.list_tasks", "lifecycle.list_pagination", "lifecycle.history_on_send", "lifecycle.history_kept",
       "lifecycle.history_order", "streaming.multi_stream", "streaming.subscribe_unknown", "errors.cancel_unknown")
OPTS = SuiteOptions(timeout=40.0, slow_prompt="slow please", input_prompt="input please")


async def _gap_checks(client: HttpClient, url: str, *, binding: str | None = None, version: str | None = None,
                      opts: SuiteOptions = OPTS) -> dict[str, tuple[Status, str]]:
    """Only these checks, through the suite's machinery (one client, skips, grading) on a pinged interface."""
    from probe.checks import grading

    target = Target(name="t", url=url, timeout=5.0, binding=binding, a2a_version=version)
    run = await execute(target, client, steps=(StepName.PING,))
    assert run.a2a is not None, run.r.problem
    s = Suite(run, opts, Deadline.after(opts.timeout))
    for fn in CHECKS:
        await _run_check(s, fn, IDS[fn])
    grading.grade(run.r)
    return {c.id: (c.status, c.message) for c in run.r.checks if c.id in NEW}


# every new check passes on both official SDKs, on every binding each serves, in 1.0
PEERS_1_0 = [("py_peer", None), ("py_peer", "HTTP+JSON"), ("py_peer", "GRPC"), ("js_peer", None),
             ("js_peer", "HTTP+JSON"), ("js_peer", "GRPC")]


@pytest.mark.external
@pytest.mark.parametrize(("peer_name", "binding"), PEERS_1_0)
async def test_gap_checks_pass_on_the_sdk_peers_in_1_0(peer_name: str, binding: str | None, client: HttpClient,
                                                       request: pytest.FixtureRequest) -> None:
    peer: Peer = request.getfixturevalue(peer_name)
    got = await _gap_checks(client, peer.base_url, binding=binding)
    assert {cid: st for cid, (st, _) in got.items()} == dict.fromkeys(NEW, Status.PASS), got
    assert "two turns in order" in got["lifecycle.history_order"][1]  # --input-prompt gives a two-turn task
    assert "CANCELED" in got["streaming.multi_stream"][1]


@pytest.mark.external
@pytest.mark.parametrize("peer_name", ["py_peer_compat", "js_peer_compat"])
async def test_gap_checks_graded_by_0_3_on_the_sdk_peers(peer_name: str, client: HttpClient,
                                                        request: pytest.FixtureRequest) -> None:
    peer: Peer = request.getfixturevalue(peer_name)
    got = await _gap_checks(client, peer.base_url, version="0.3")
    for cid in ("lifecycle.list_tasks", "lifecycle.list_pagination", "streaming.multi_stream"):
        status, message = got[cid]  # 1.0 rules: no ListTasks on 0.3 JSON-RPC, nothing on several streams
        assert status is Status.SKIP and message.startswith("not graded: A2A 0.3"), (cid, message)
    for cid in ("lifecycle.history_on_send", "lifecycle.history_kept", "lifecycle.history_order",
                "streaming.subscribe_unknown", "errors.cancel_unknown"):
        assert got[cid][0] is Status.PASS, (cid, got[cid])
    assert "historyLength 1 honoured" in got["lifecycle.history_on_send"][1]  # 0 is not graded in 0.3


@pytest.mark.parametrize(("broken", "failed"), [
    (frozenset(), set()),
    ({"list_tasks"}, {"lifecycle.list_tasks"}),
    ({"list_filter"}, {"lifecycle.list_tasks"}),
    ({"list_pagination"}, {"lifecycle.list_pagination"}),
    ({"history_on_send"}, {"lifecycle.history_on_send"}),
    ({"history_kept"}, {"lifecycle.history_kept"}),
    ({"history_order"}, {"lifecycle.history_order"}),
    ({"multi_stream"}, {"streaming.multi_stream"}),
    ({"stream_bound"}, {"streaming.multi_stream"}),
])
async def test_each_gap_check_fails_on_its_own_fault(broken: set[str], failed: set[str], client: HttpClient) -> None:
    async with sloppy_agent(Sloppy(broken)) as url:
        got = await _gap_checks(client, url)
    assert {cid for cid, (st, _) in got.items() if st is Status.FAIL} == failed, got
    if broken == {"stream_bound"}:
        assert "closing the SendStreamingMessage stream ended task" in got["streaming.multi_stream"][1]
    if broken == {"list_filter"}:
        assert "ListTasks(status=TASK_STATE_WORKING) returned task" in got["lifecycle.list_tasks"][1]
    if broken == {"history_kept"}:
        assert got["lifecycle.history_order"][1].startswith("depends on lifecycle.history_kept")


async def test_messages_name_what_was_wrong(client: HttpClient) -> None:
    async with sloppy_agent(Sloppy({"list_tasks", "list_pagination", "history_order", "multi_stream"})) as url:
        got = await _gap_checks(client, url)
    assert "comes before the newer" in got["lifecycle.list_tasks"][1]  # oldest first
    assert "artifacts present without includeArtifacts" in got["lifecycle.list_tasks"][1]
    assert "page 1 returned" in got["lifecycle.list_pagination"][1]
    assert "not the order they were sent" in got["lifecycle.history_order"][1]
    assert "no terminal event, although CancelTask made the task CANCELED" in got["streaming.multi_stream"][1]


async def test_without_prompts_the_checks_say_what_they_need(client: HttpClient) -> None:
    async with sloppy_agent(Sloppy(set())) as url:
        got = await _gap_checks(client, url, opts=SuiteOptions(timeout=20.0))
    assert got["streaming.multi_stream"] == (Status.SKIP, "no prompt that keeps a task running (--slow-prompt / "
                                                          "slow_prompt)")
    status, message = got["lifecycle.history_order"]  # one message: content only, and it says so
    assert status is Status.PASS and "the order of two needs --input-prompt" in message


def test_the_registry_no_longer_lists_these_as_not_tested() -> None:
    assert not {"list_tasks", "multi_stream", "history_order"} & {u.id for u in UNCOVERED}
    tck = {t for cid in NEW for t in requirement(cid).tck}
    assert {f"CORE-LIST-00{i}" for i in range(1, 6)} <= tck
    assert {"CORE-HIST-004", "CORE-HIST-005", "CORE-HIST-006"} <= tck
    assert "CORE-HIST-003" not in tck  # §3.2.4's SHOULD omit history at 0: not what history_on_send grades (3aba94a)
    assert {"STREAM-ORDER-002", "STREAM-ORDER-003", "STREAM-ORDER-004", "STREAM-SUB-004", "CORE-CANCEL-003"} <= tck
    # graded by each version's own text: ListTasks and several streams are 1.0 rules; history is in 0.3 too
    for cid in ("lifecycle.list_tasks", "lifecycle.list_pagination", "streaming.multi_stream"):
        assert set(requirement(cid).rules) == {"1.0"}
    assert requirement("lifecycle.history_kept").rules["1.0"].level.value == "MAY"
    assert requirement("lifecycle.history_on_send").rules["0.3"].level.value == "SHOULD"


def _rpc(result: Any) -> Reply:
    return Reply(chunks=[json.dumps({"jsonrpc": "2.0", "id": "{id}", "result": result})])


async def test_hostile_answers_fail_the_checks_without_breaking_them(client: HttpClient) -> None:
    """Junk ids, parts and tokens, and a subscription that floods without end: failures naming what was wrong,
    never a probe error, and a bounded number of events kept."""
    junk_history = [{"messageId": ["x"], "role": "ROLE_USER", "parts": 5}, "not a message"]
    done = task("COMPLETED", history=junk_history)
    replies = {"SendMessage": _rpc(done), "GetTask": _rpc(done["task"]),
               "ListTasks": _rpc({"tasks": [{"id": ["x"], "contextId": "c1", "status": {"state": 3}}, "junk"],
                                  "nextPageToken": 7})}
    async with scripted_agent(replies) as url:
        got = await _gap_checks(client, url)
    assert not [m for _, m in got.values() if m.startswith("probe error")], got
    assert got["lifecycle.list_tasks"][0] is Status.FAIL and "result.tasks" in got["lifecycle.list_tasks"][1]
    assert got["lifecycle.history_on_send"][0] is Status.FAIL  # historyLength=0, one message back
    flood = {"SendStreamingMessage": Reply(content_type="text/event-stream", chunks=sse(task("WORKING"))),
             "SendMessage": _rpc(task("WORKING")), "CancelTask": _rpc(task("CANCELED")["task"]),
             "SubscribeToTask": Reply(content_type="text/event-stream",
                                      chunks=sse(task("WORKING"), *[status("WORKING")] * 1500))}
    async with scripted_agent(flood) as url:
        got = await _gap_checks(client, url)
    status_, message = got["streaming.multi_stream"]
    assert status_ is Status.FAIL and "more than 1000 events without a terminal state" in message, message


async def test_an_unreadable_subscription_is_the_agents_not_a_probe_error(client: HttpClient) -> None:
    """SubscribeToTask answering bytes that are not UTF-8: the stream is the agent's fault, said as such (the bytes
    read as U+FFFD, as the official clients' decoders read them, and that is no JSON)."""
    from aiohttp import web

    from tests.agents.cards import valid_card
    from tests.agents.server import serve

    origin = ""

    async def card(_: web.Request) -> web.Response:
        return web.json_response(valid_card(f"{origin}/rpc"))

    async def rpc(request: web.Request) -> web.StreamResponse:
        body = await request.json()
        method, rid = body.get("method"), body.get("id")
        if method in ("GetTask", "CancelTask"):
            state = "CANCELED" if method == "CancelTask" else "WORKING"
            return web.json_response({"jsonrpc": "2.0", "id": rid, "result": task(state)["task"]})
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        if method == "SendStreamingMessage":
            await resp.write(sse(task("WORKING"))[0].replace("{id}", str(rid)).encode())
        else:
            await resp.write(b"data: \xff\xfe\n\n")
        await resp.write_eof()
        return resp

    app = web.Application()
    app.router.add_get("/.well-known/agent-card.json", card)
    app.router.add_post("/rpc", rpc)
    async with serve(app) as served:
        origin = served
        got = await _gap_checks(client, served)
    status_, message = got["streaming.multi_stream"]
    assert status_ is Status.SKIP and "invalid JSON" in message, message


@pytest.mark.parametrize(("broken", "expected"), [
    (set(), Status.PASS),  # the field left out at 0 on GetTask and SendMessage
    ({"history_empty"}, Status.FAIL),  # "history": [] on GetTask at 0: a SHOULD (1.0 §3.2.4), the only failure
    ({"history_length"}, Status.PASS),  # every message at 0: the count's MUST (history_length) alone, one root cause
])
async def test_history_omitted_at_zero(client: HttpClient, broken: set[str], expected: Status) -> None:
    from probe.suite import run_suite

    async with sloppy_agent(Sloppy(broken)) as url:
        r = await run_suite(Target(name="t", url=url, timeout=5.0), client, SuiteOptions(timeout=20.0))
    check = r.check("lifecycle.history_omitted")
    assert check is not None and check.status is expected, check
    failed = {c.id for c in r.checks if c.status is Status.FAIL}
    if broken == {"history_empty"}:
        assert check.severity.value == "SHOULD" and '"history": []' in check.message
        assert "lifecycle.history_length" not in failed
    if broken == {"history_length"}:
        assert "lifecycle.history_length" in failed


def test_history_omitted_is_graded_in_1_0_over_json_only() -> None:
    from probe.checks import grading
    from probe.results import Severity

    assert grading.level_of("lifecycle.history_omitted", "1.0", "JSONRPC") is Severity.SHOULD
    assert grading.level_of("lifecycle.history_omitted", "1.0", "HTTP+JSON") is Severity.SHOULD
    # a protobuf repeated field has no absent state; 0.3 and 0.2 never fixed what 0 means
    assert grading.level_of("lifecycle.history_omitted", "1.0", "GRPC") is None
    assert grading.level_of("lifecycle.history_omitted", "0.3", "JSONRPC") is None
