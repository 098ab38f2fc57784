"""A result's duration is the agent's latency: its calls, not the card's fetch nor the probe's own work."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from probe import engine
from probe.engine import execute
from probe.results import StepName
from probe.target import Target
from probe.wire import card as cardwire
from probe.wire.bindings import Op
from probe.wire.bindings.fake import FakeBinding, FakeStream, error, result, stream_of
from probe.wire.http import ConnectFailed, HttpClient
from tests.agents.cards import valid_card

URL = "http://agent.test/rpc"
AGENT = 0.15  # how long the agent takes to answer each call
OWN = 0.3  # the probe's own (slowed down) work before the call and after the answer
DONE = {"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_COMPLETED"},
        "artifacts": [{"artifactId": "a1", "parts": [{"text": "echo: hi"}]}]}


class SlowAgent(FakeBinding):
    async def call(self, op: Op, params: dict[str, Any], **kw: Any) -> Any:
        await asyncio.sleep(AGENT)
        return await super().call(op, params, **kw)

    def open_stream(self, op: Op, params: dict[str, Any], **kw: Any) -> Any:
        inner = super().open_stream(op, params, **kw)

        class Late:
            async def __aenter__(self) -> FakeStream:
                await asyncio.sleep(AGENT)
                return await inner.__aenter__()

            async def __aexit__(self, *exc: object) -> None:
                await inner.__aexit__(*exc)

        return Late()


@pytest.fixture
def slow_probe(monkeypatch: pytest.MonkeyPatch) -> None:
    """The probe's own work made slow: card validation (before the call) and grading (after the answer)."""
    validate, finish = engine.card_checks.judge_cached, engine.grading.finish

    def slow_validate(card: Any) -> Any:
        time.sleep(OWN)
        return validate(card)

    def slow_finish(r: Any) -> None:
        time.sleep(OWN)
        finish(r)

    monkeypatch.setattr(engine.card_checks, "judge_cached", slow_validate)
    monkeypatch.setattr(engine.grading, "finish", slow_finish)


async def _run(script: dict[Op, list[Any]], steps: tuple[StepName, ...]) -> Any:
    card = cardwire.build(url="http://agent.test/.well-known/agent-card.json", doc=valid_card(URL, streaming=True))
    target = Target(name="fake", url="http://agent.test", timeout=5.0, expect_text="echo")
    t0 = time.monotonic()
    run = await execute(target, HttpClient(), steps=steps, bindings={"JSONRPC": lambda _ctx: SlowAgent(script)},
                        card=card)
    return run.r, time.monotonic() - t0


@pytest.mark.usefixtures("slow_probe")
@pytest.mark.parametrize(("script", "steps", "calls"), [
    ({Op.GET: [error("TaskNotFoundError", "no such task")]}, (StepName.PING,), 1),
    ({Op.SEND: [result({"task": DONE})]}, (StepName.INVOKE,), 1),
    ({Op.STREAM: [stream_of({"task": DONE})]}, (StepName.STREAM,), 1),
    ({Op.SEND: [result({"task": DONE})], Op.STREAM: [stream_of({"task": DONE})]},
     (StepName.INVOKE, StepName.STREAM), 2),
], ids=["ping", "invoke", "stream", "invoke+stream"])
async def test_the_duration_holds_the_calls_and_not_the_probes_own_work(
        script: dict[Op, list[Any]], steps: tuple[StepName, ...], calls: int) -> None:
    r, wall = await _run(script, steps)
    assert r.success, (r.reason, r.steps)
    assert wall >= calls * AGENT + 2 * OWN  # the probe did spend its own time
    assert calls * AGENT <= r.duration_s < calls * AGENT + OWN / 2, (r.duration_s, wall)
    # each step still reports its whole wall time (its own checks included)
    validate = r.step(StepName.VALIDATE)
    assert validate is not None and validate.duration_s >= OWN


@pytest.mark.usefixtures("slow_probe")
async def test_a_failed_call_ends_the_duration_at_its_failure() -> None:
    class Refusing(SlowAgent):
        async def call(self, op: Op, params: dict[str, Any], **kw: Any) -> Any:
            await asyncio.sleep(AGENT)
            raise ConnectFailed("connection refused", None)

    card = cardwire.build(url="http://agent.test/.well-known/agent-card.json", doc=valid_card(URL))
    target = Target(name="fake", url="http://agent.test", timeout=5.0)
    run = await execute(target, HttpClient(), steps=(StepName.PING,), bindings={"JSONRPC": lambda _c: Refusing()},
                        card=card)
    assert not run.r.success
    assert AGENT <= run.r.duration_s < AGENT + OWN / 2


async def test_a_skipped_stream_step_adds_nothing() -> None:
    card = cardwire.build(url="http://agent.test/.well-known/agent-card.json", doc=valid_card(URL, streaming=False))
    target = Target(name="fake", url="http://agent.test", timeout=5.0)
    run = await execute(target, HttpClient(), steps=(StepName.STREAM,), bindings={"JSONRPC": lambda _c: SlowAgent()},
                        card=card)
    assert run.r.step(StepName.STREAM).status.value == "skip"  # type: ignore[union-attr]
    assert run.r.duration_s == 0.0  # no card fetched (given), nothing called


def _slow_discovery(monkeypatch: pytest.MonkeyPatch, fail: bool = False) -> None:
    fetch = cardwire.discover

    async def slow(*args: Any, **kw: Any) -> Any:
        await asyncio.sleep(OWN)
        if fail:
            raise ConnectFailed("connection refused", None)
        return await fetch(*args, **kw)

    monkeypatch.setattr(cardwire, "discover", slow)


async def test_the_cards_fetch_is_not_in_the_duration(monkeypatch: pytest.MonkeyPatch) -> None:
    from probe.engine import run_interfaces
    from tests.agents.catalogue import run_agent

    _slow_discovery(monkeypatch)
    async with run_agent("healthy") as agent, HttpClient() as client:
        r = await run_interfaces(Target(name="a", url=agent.origin or "", fresh_connection=True), client,
                                 steps=(StepName.PING,), agree=False)
    assert r.success, r.steps
    discover, ping = r.step(StepName.DISCOVER), r.step(StepName.PING)
    assert discover is not None and discover.duration_s >= OWN  # the step keeps its own time
    assert ping is not None and r.duration_s <= ping.duration_s < OWN
    assert r.interfaces[0].duration_s == r.duration_s


async def test_a_run_that_called_nothing_lasted_its_discovery(monkeypatch: pytest.MonkeyPatch) -> None:
    from probe.engine import run_interfaces

    _slow_discovery(monkeypatch, fail=True)
    async with HttpClient() as client:
        r = await run_interfaces(Target(name="a", url="http://127.0.0.1:9/"), client, steps=(StepName.PING,),
                                 agree=False)
    assert not r.success
    assert OWN <= r.duration_s < 2 * OWN


async def test_the_suite_step_lasts_the_suite_not_the_basic_probes_card_fetch(client: HttpClient) -> None:
    """The `full` module's suite step is its own wall time: the basic probe before it (whose duration is now the
    agent's latency, without the card's fetch) is not folded into it."""
    from probe.suite import SuiteOptions, run_suite
    from tests.agents.cache_agent import CardAgent
    from tests.agents.server import serve

    agent = CardAgent()
    agent.card_delay = 0.4  # a slow card: the basic probe's discover step, before the suite step
    async with serve(agent.app()) as origin:
        r = await run_suite(Target(name="s", url=origin, timeout=10.0), client,
                            SuiteOptions(safe_only=True, timeout=10.0))
    discover, suite = r.step(StepName.DISCOVER), r.step(StepName.SUITE)
    assert discover is not None and suite is not None and discover.duration_s >= 0.4
    assert suite.duration_s <= r.duration_s - discover.duration_s  # steps run one after another


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
async def test_building_the_request_and_reading_the_answer_are_the_probes_own_work(
        monkeypatch: pytest.MonkeyPatch, binding: str) -> None:
    """On the wire the call's ends are its exchange's: the request's body built before it and the answer read after
    its last byte (both slowed down here) are the probe's work, not the agent's latency."""
    from probe.engine import run_interfaces
    from probe.wire import jsonrpc
    from probe.wire.bindings import http_json
    from probe.wire.bindings import jsonrpc as jsonrpc_binding
    from tests.agents.catalogue import run_agent

    def slowed(fn: Any) -> Any:
        def slow(*args: Any, **kw: Any) -> Any:
            time.sleep(OWN)
            return fn(*args, **kw)
        return slow

    monkeypatch.setattr(jsonrpc, "request", slowed(jsonrpc.request))  # the JSON-RPC envelope of the call
    monkeypatch.setattr(jsonrpc_binding, "read_answer", slowed(jsonrpc_binding.read_answer))
    monkeypatch.setattr(http_json, "read_answer", slowed(http_json.read_answer))
    async with run_agent("healthy") as agent, HttpClient() as client:
        t0 = time.monotonic()
        r = await run_interfaces(Target(name="a", url=agent.origin or "", fresh_connection=True, binding=binding),
                                 client, steps=(StepName.PING,), agree=False)
        wall = time.monotonic() - t0
    assert r.success, r.steps
    ping = r.step(StepName.PING)
    assert ping is not None and ping.duration_s >= OWN  # the step keeps its whole wall time
    assert wall >= OWN and r.duration_s < OWN / 2, (r.duration_s, ping.duration_s)
    (exchange,) = ping.exchanges
    assert r.duration_s == pytest.approx(exchange.duration_s)  # exactly the call's exchange


async def test_runs_started_together_do_not_carry_each_others_set_up(monkeypatch: pytest.MonkeyPatch) -> None:
    """The scheduler starts a tick's runs together, on one event loop. A run whose call went out before another
    run's set-up (card checks, here slowed down) would wait for that set-up to finish before reading its answer's
    connection: that wait is the probe's, and neither run's duration holds it."""
    from probe.engine import run_interfaces
    from tests.agents.catalogue import run_agent

    validate = engine.card_checks.judge_cached

    def slow_validate(card: Any) -> Any:
        time.sleep(OWN)
        return validate(card)

    monkeypatch.setattr(engine.card_checks, "judge_cached", slow_validate)
    async with run_agent("healthy") as agent, HttpClient() as client:
        t0 = time.monotonic()
        runs = await asyncio.gather(*(
            run_interfaces(Target(name=f"a{i}", url=agent.origin or "", fresh_connection=True), client,
                           steps=(StepName.PING,), agree=False) for i in range(3)))
        wall = time.monotonic() - t0
    assert wall >= 3 * OWN  # the set-ups did run one after another
    for r in runs:
        assert r.success, r.steps
        assert r.duration_s < OWN / 2, [x.duration_s for x in runs]


async def test_a_streams_duration_ends_when_its_end_came_not_when_the_judge_was_done(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Over SSE the stream's end is the transport's stamp of its last bytes: the probe's own work after it (here
    the judging, slowed down once the stream is read) is not the agent's latency."""
    from probe.checks.stream import StreamJudge
    from probe.engine import run_interfaces
    from tests.agents.catalogue import run_agent

    consume = StreamJudge.consume

    def own_work() -> None:  # the probe's own work once the stream has ended (blocking, as CPU work is)
        time.sleep(OWN)

    async def slow_consume(self: StreamJudge, *args: Any, **kw: Any) -> None:
        await consume(self, *args, **kw)
        own_work()

    monkeypatch.setattr(StreamJudge, "consume", slow_consume)
    async with run_agent("healthy") as agent, HttpClient() as client:
        t0 = time.monotonic()
        r = await run_interfaces(Target(name="a", url=agent.origin or ""), client, steps=(StepName.STREAM,),
                                 agree=False)
        wall = time.monotonic() - t0
    assert r.success, r.steps
    stream = r.step(StepName.STREAM)
    assert stream is not None and stream.duration_s >= OWN and wall >= OWN  # the step keeps its whole wall time
    assert r.duration_s < OWN / 2, r.duration_s
