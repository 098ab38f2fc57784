"""The engine's steps on the fake binding: every verdict from scripted answers, no socket."""

from __future__ import annotations

from typing import Any

import pytest

from probe.engine import execute
from probe.reasons import Reason
from probe.results import Status, StepName
from probe.target import Target
from probe.wire import card as cardwire
from probe.wire.bindings import Op, ProblemKind, StreamEvent
from probe.wire.bindings.fake import FakeBinding, FakeStream, error, problem, result, stream_of
from probe.wire.http import ConnectFailed, HttpClient
from tests.agents.cards import valid_card

URL = "http://agent.test/rpc"


def task(state: str, tid: str = "t1", **extra: Any) -> dict[str, Any]:
    return {"id": tid, "contextId": "c1", "status": {"state": f"TASK_STATE_{state}"}, **extra}


DONE = task("COMPLETED", artifacts=[{"artifactId": "a1", "parts": [{"text": "echo: hi"}]}])


async def probe(script: dict[Op, list[Any]], *, steps: tuple[StepName, ...] = (StepName.INVOKE, StepName.STREAM),
                timeout: float = 5.0, streaming: bool = True) -> tuple[Any, FakeBinding]:
    fake = FakeBinding(script)
    card = cardwire.build(url="http://agent.test/.well-known/agent-card.json",
                          doc=valid_card(URL, streaming=streaming))
    target = Target(name="fake", url="http://agent.test", timeout=timeout, expect_text="echo")
    run = await execute(target, HttpClient(), steps=steps, bindings={"JSONRPC": lambda _ctx: fake}, card=card)
    return run.r, fake


async def test_a_healthy_agent_passes_invoke() -> None:
    r, fake = await probe({Op.SEND: [result({"task": DONE})]}, steps=(StepName.INVOKE,))
    assert r.success and r.reason is None, r.steps
    assert [op for op, _, _ in fake.calls] == [Op.SEND]
    assert r.check("invoke.transport").status is Status.PASS  # type: ignore[union-attr]


async def test_an_unfinished_blocking_answer_is_polled_to_the_end_and_still_fails() -> None:
    r, fake = await probe({
        Op.SEND: [result({"task": task("WORKING")})],
        Op.GET: [result(task("WORKING")), result(DONE)],
    }, steps=(StepName.INVOKE,))
    assert r.reason is Reason.INVOKE_NOT_BLOCKING  # 1.0 MUST: a blocking send returns a terminal task
    assert [op for op, _, _ in fake.calls] == [Op.SEND, Op.GET, Op.GET]
    invoke = r.step(StepName.INVOKE)
    assert invoke is not None and len(invoke.exchanges) == 3
    assert r.check("invoke.task_completed").status is Status.PASS  # type: ignore[union-attr]


@pytest.mark.parametrize(("kind", "reason"), [
    (ProblemKind.ROUTE, Reason.INVOKE_ROUTE_NOT_FOUND), (ProblemKind.AUTH, Reason.INVOKE_AUTH),
    (ProblemKind.STATUS, Reason.INVOKE_UNEXPECTED_STATUS), (ProblemKind.VERSION, Reason.INVOKE_VERSION_UNSUPPORTED),
    (ProblemKind.FRAMING, Reason.INVOKE_NOT_A2A),
])
async def test_each_transport_problem_has_its_reason(kind: ProblemKind, reason: Reason) -> None:
    r, _ = await probe({Op.SEND: [problem(kind, f"scripted {kind}")]}, steps=(StepName.INVOKE,))
    assert r.reason is reason
    failed = "invoke.framing" if kind is ProblemKind.FRAMING else "invoke.transport"
    assert r.check(failed).status is Status.FAIL  # type: ignore[union-attr]


@pytest.mark.parametrize(("name", "reason"), [
    ("VersionNotSupportedError", Reason.INVOKE_VERSION_UNSUPPORTED),
    ("MethodNotFoundError", Reason.INVOKE_VERSION_UNSUPPORTED),  # a 1.0 method unknown at a 1.0 interface
    ("InvalidParamsError", Reason.INVOKE_A2A_ERROR),
])
async def test_a2a_errors_on_send(name: str, reason: Reason) -> None:
    r, _ = await probe({Op.SEND: [error(name, "no")]}, steps=(StepName.INVOKE,))
    assert r.reason is reason
    assert name in (r.step(StepName.INVOKE).detail or "")  # type: ignore[union-attr]


async def test_no_answer_is_unreachable() -> None:
    r, _ = await probe({Op.SEND: [ConnectFailed("cannot connect to agent.test:80")]}, steps=(StepName.INVOKE,))
    assert r.reason is Reason.INVOKE_UNREACHABLE


async def test_ping_accepts_task_not_found_and_fails_on_version() -> None:
    ok, _ = await probe({Op.GET: [error("TaskNotFoundError")]}, steps=(StepName.PING,))
    assert ok.success, ok.steps
    bad, _ = await probe({Op.GET: [error("VersionNotSupportedError")]}, steps=(StepName.PING,))
    assert bad.reason is Reason.INVOKE_VERSION_UNSUPPORTED


async def test_a_task_that_never_finishes_times_out() -> None:
    r, fake = await probe({Op.SEND: [result({"task": task("WORKING")})], Op.GET: [result(task("WORKING"))]},
                          steps=(StepName.INVOKE,), timeout=0.4)
    assert r.check("invoke.blocking").status is Status.FAIL  # type: ignore[union-attr]
    assert r.reason is Reason.TASK_TIMEOUT
    assert len(fake.calls) >= 3  # it polled with backoff until the deadline


async def test_stream_verdicts() -> None:
    status = {"statusUpdate": {"taskId": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_WORKING"}}}
    regress = [{"task": task("COMPLETED")}, status]
    r, _ = await probe({Op.SEND: [result({"task": DONE})], Op.STREAM: [stream_of(*regress)]})
    assert r.reason is Reason.STREAM_STATE_REGRESSION
    refused = FakeStream(plain=error("UnsupportedOperationError", "no streams"))
    r, _ = await probe({Op.SEND: [result({"task": DONE})], Op.STREAM: [refused]})
    assert r.reason is Reason.INVOKE_A2A_ERROR
    broken = FakeStream([StreamEvent(problem="not JSON")])
    r, _ = await probe({Op.SEND: [result({"task": DONE})], Op.STREAM: [broken]})
    assert r.reason is Reason.STREAM_PROTOCOL_VIOLATION
    good = stream_of({"task": task("SUBMITTED")}, {"artifactUpdate": {"taskId": "t1", "contextId": "c1", "artifact": {
        "artifactId": "a", "parts": [{"text": "echo: hi"}]}}}, {"statusUpdate": {
            "taskId": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_COMPLETED"}}})
    r, _ = await probe({Op.SEND: [result({"task": DONE})], Op.STREAM: [good]})
    assert r.success, r.steps


async def test_an_unknown_stream_method_names_the_stream_method() -> None:
    """A -32601 to the stream call says the server lacks SendStreamingMessage, not the SendMessage that worked."""
    unknown = FakeStream(plain=error("MethodNotFoundError", "no such method"))
    r, fake = await probe({Op.SEND: [result({"task": DONE})], Op.STREAM: [unknown]})
    assert r.reason is Reason.INVOKE_VERSION_UNSUPPORTED
    detail = r.step(StepName.STREAM).detail or ""  # type: ignore[union-attr]
    assert fake.method(Op.STREAM) in detail and f"method {fake.method(Op.SEND)} " not in detail, detail
