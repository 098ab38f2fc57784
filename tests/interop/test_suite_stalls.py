"""The suite's short waits for an agent (a cancel taking effect, a follow-up finishing) are stall-aware: the probe's
own loop standing still through a wait buys the agent its time back, and a probe that keeps stalling judges nothing;
an agent slow on an idle probe still fails.

The agent runs on its own thread and loop, so the probe's stall (a blocking callback on the test's loop) does not
stall it: the agent's clock goes on, as a real agent's does while the probe's process is starved."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any

from aiohttp import web

from probe.engine import execute
from probe.results import Status, StepName
from probe.suite import _run_check, lifecycle
from probe.suite.context import Suite, SuiteOptions
from probe.target import Target
from probe.wire.http import Deadline, HttpClient
from tests.agents.cards import valid_card
from tests.agents.server import serve

OPTS = SuiteOptions(timeout=40.0, slow_prompt="slow please")


class SlowCancelAgent:
    """A 1.0 JSON-RPC agent whose tasks run until canceled; CancelTask answers WORKING and the task is CANCELED
    `cancel_after` seconds later (None: never)."""

    def __init__(self, cancel_after: float | None) -> None:
        self.cancel_after = cancel_after
        self.canceled_at: float | None = None

    def _task(self, state: str) -> dict[str, Any]:
        return {"id": "t1", "contextId": "c1", "status": {"state": f"TASK_STATE_{state}"}}

    def _state(self) -> str:
        if self.canceled_at is None or self.cancel_after is None:
            return "WORKING"
        return "CANCELED" if time.monotonic() - self.canceled_at >= self.cancel_after else "WORKING"

    async def rpc(self, request: web.Request) -> web.Response:
        body = await request.json()
        method, rid = body.get("method"), body.get("id")
        if method == "SendMessage":
            result: dict[str, Any] = {"task": self._task("WORKING")}
        elif method == "CancelTask":
            self.canceled_at = self.canceled_at or time.monotonic()
            result = self._task("WORKING")  # cancel takes effect asynchronously
        elif method == "GetTask":
            result = self._task(self._state())
        else:
            return web.json_response({"jsonrpc": "2.0", "id": rid,
                                      "error": {"code": -32601, "message": "Method not found"}})
        return web.json_response({"jsonrpc": "2.0", "id": rid, "result": result})

    def app(self) -> web.Application:
        app = web.Application()

        async def card(request: web.Request) -> web.Response:
            return web.json_response(valid_card(f"{request.scheme}://{request.host}/rpc", streaming=False))

        app.router.add_get("/.well-known/agent-card.json", card)
        app.router.add_post("/rpc", self.rpc)
        return app


@contextlib.contextmanager
def on_own_thread(agent: SlowCancelAgent) -> Iterator[str]:
    """Serve `agent` from a thread with its own event loop; yields its origin."""
    ready: list[str] = []
    started, stop = threading.Event(), threading.Event()

    async def main() -> None:
        async with serve(agent.app()) as origin:
            ready.append(origin)
            started.set()
            await asyncio.get_running_loop().run_in_executor(None, stop.wait)

    thread = threading.Thread(target=asyncio.run, args=(main(),), daemon=True)
    thread.start()
    assert started.wait(10), "the agent did not start"
    try:
        yield ready[0]
    finally:
        stop.set()
        thread.join(10)


async def _cancel_check(client: HttpClient, origin: str) -> tuple[Status, str]:
    run = await execute(Target(name="t", url=origin, timeout=5.0), client, steps=(StepName.PING,))
    assert run.a2a is not None, run.r.problem
    s = Suite(run, OPTS, Deadline.after(OPTS.timeout))
    s.stall.start()
    try:
        await _run_check(s, lifecycle.cancel_and_subscribe, lifecycle.IDS[lifecycle.cancel_and_subscribe])
    finally:
        s.stall.stop()
    check = run.r.check("lifecycle.cancel")
    assert check is not None
    return check.status, check.message


def _block(seconds: float) -> None:
    time.sleep(seconds)


async def test_a_cancel_that_lands_after_the_probe_stalled_passes(client: HttpClient) -> None:
    """CANCELED 5.6 s after CancelTask; the probe waits 5 s but its loop stood still 3 s of it: it waits once more
    and sees the cancel (before: FAIL "CancelTask on a running task gave WORKING")."""
    with on_own_thread(SlowCancelAgent(cancel_after=5.6)) as origin:
        asyncio.get_running_loop().call_later(1.0, _block, 3.0)
        status, message = await _cancel_check(client, origin)
    assert status is Status.PASS, message


async def test_a_probe_that_keeps_stalling_does_not_judge_the_cancel(client: HttpClient) -> None:
    loop = asyncio.get_running_loop()
    with on_own_thread(SlowCancelAgent(cancel_after=None)) as origin:
        flood = [loop.call_later(0.5 + 0.5 * i, _block, 0.4) for i in range(40)]
        try:
            status, message = await _cancel_check(client, origin)
        finally:
            for handle in flood:
                handle.cancel()
    assert status is Status.SKIP and "the probe's own event loop stood still" in message, message


async def test_a_cancel_that_never_lands_fails_on_an_idle_probe(client: HttpClient) -> None:
    with on_own_thread(SlowCancelAgent(cancel_after=None)) as origin:
        status, message = await _cancel_check(client, origin)
    assert status is Status.FAIL and "gave WORKING" in message, message
