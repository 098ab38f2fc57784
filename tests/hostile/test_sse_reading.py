"""SSE bytes the event-stream spec allows but the official clients read differently, judged end to end as a2a-sdk's
client (httpx-sse) reads them first (see probe/wire/sse.py's module text for what each client does)."""

from __future__ import annotations

import asyncio
import queue
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from probe.checks.stream import BOM_PROBLEM
from probe.engine import run_probe
from probe.reasons import Reason
from probe.results import Status, StepName
from probe.target import Target
from probe.wire.http import HttpClient
from tests.agents.scripted import Reply, scripted_agent, sse, status, task
from tests.hostile.test_semantics import _held


@contextmanager
def _in_a_thread(replies: dict[str, Reply]) -> Iterator[str]:
    """A scripted agent on its own event loop in a thread: a block of the probe's loop does not stop it."""
    origins: queue.Queue[str] = queue.Queue()
    stop: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []

    async def serve() -> None:
        done = asyncio.Event()
        stop.append((asyncio.get_running_loop(), done))
        async with scripted_agent(replies) as origin:
            origins.put(origin)
            await done.wait()

    thread = threading.Thread(target=asyncio.run, args=(serve(),), daemon=True)
    thread.start()
    try:
        yield origins.get(timeout=10)
    finally:
        loop, done = stop[0]
        loop.call_soon_threadsafe(done.set)
        thread.join(10)


def _stream(*chunks: str) -> dict[str, Reply]:
    return {"SendStreamingMessage": Reply(content_type="text/event-stream", chunks=list(chunks))}


async def test_an_event_with_empty_data_is_skipped_as_the_official_clients_skip_it(
        client: HttpClient, caplog: pytest.LogCaptureFixture) -> None:
    # "data:\n\n" dispatches an event with empty data (WHATWG); a2a-sdk's transports `continue` past it and a2a-js
    # never yields it. Before: stream.events_parse failed "event 1: ..." on the empty event
    first, last = sse(task("WORKING"), status("COMPLETED"))
    async with scripted_agent(_stream(first, "data:\n\n", ": keep-alive\n\n", last)) as origin:
        r = await run_probe(Target(name="t", url=origin, timeout=3.0), client, steps=(StepName.STREAM,))
    rep = _held(r, caplog)
    assert r.success, rep
    parse = r.check("stream.events_parse")
    assert parse is not None and parse.status is Status.PASS, parse


async def test_a_byte_order_mark_before_the_first_field_is_named_once(client: HttpClient,
                                                                     caplog: pytest.LogCaptureFixture) -> None:
    # the spec's UTF-8 decode drops a leading BOM (a2a-js's TextDecoderStream too); a2a-sdk's httpx keeps it and
    # httpx-sse then reads "\ufeffdata" as an unknown field: the first event is lost. The probe reads the events (no
    # second finding about the lost Task) and says why a2a-sdk would not. Before: the first event vanished silently
    first, last = sse(task("WORKING"), status("COMPLETED"))
    async with scripted_agent(_stream("\ufeff" + first, last)) as origin:
        r = await run_probe(Target(name="t", url=origin, timeout=3.0), client, steps=(StepName.STREAM,))
    rep = _held(r, caplog)
    assert r.reason is Reason.STREAM_PROTOCOL_VIOLATION, rep
    parse = r.check("stream.events_parse")
    assert parse is not None and parse.status is Status.FAIL and BOM_PROBLEM in parse.message, parse
    terminal = r.check("stream.terminal")
    assert terminal is not None and terminal.status in (Status.PASS, Status.SKIP), terminal


async def test_a_byte_order_mark_before_a_comment_costs_no_client_anything(
        client: HttpClient, caplog: pytest.LogCaptureFixture) -> None:
    first, last = sse(task("WORKING"), status("COMPLETED"))
    async with scripted_agent(_stream("\ufeff: hello\n\n" + first, last)) as origin:
        r = await run_probe(Target(name="t", url=origin, timeout=3.0), client, steps=(StepName.STREAM,))
    rep = _held(r, caplog)
    assert r.success, rep


async def test_a_loop_blocked_while_waiting_for_the_close_after_the_terminal_event_is_not_the_agents(
        client: HttpClient, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """The agent closes 0.2 s after its terminal event; the probe's loop is blocked 1.5 s just then (a neighbour's
    work, a GC pause), longer than the 1 s close grace. The close is in the socket when the loop wakes, and asyncio
    runs the grace timer's callback before the read's: the probe must read what is there before blaming the agent
    for a stream 'still open 1s after the terminal event'."""
    from probe.checks import stream as stream_checks

    original = stream_checks.StreamJudge.on_event
    blocked: list[bool] = []

    def on_event(self: stream_checks.StreamJudge, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        if self.terminal_at is not None and not blocked:
            blocked.append(True)
            asyncio.get_running_loop().call_soon(time.sleep, 1.5)  # the probe's own loop stands still

    monkeypatch.setattr(stream_checks.StreamJudge, "on_event", on_event)
    events = sse(task("WORKING"), status("COMPLETED"))
    reply = Reply(content_type="text/event-stream", chunks=events, hold_open=0.2)
    with _in_a_thread({"SendStreamingMessage": reply}) as origin:  # its own loop: the probe's block is not its
        r = await run_probe(Target(name="t", url=origin, timeout=5.0), client, steps=(StepName.STREAM,))
    assert blocked
    rep = _held(r, caplog)
    assert r.success, rep
    closes = r.check("stream.closes_after_terminal")
    assert closes is not None and closes.status is Status.PASS, closes
