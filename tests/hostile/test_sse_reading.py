"""SSE bytes the event-stream spec allows but the official clients read differently, judged end to end as a2a-sdk's
client (httpx-sse) reads them first (see probe/wire/sse.py's module text for what each client does)."""

from __future__ import annotations

import pytest

from probe.checks.stream import BOM_PROBLEM
from probe.engine import run_probe
from probe.reasons import Reason
from probe.results import Status, StepName
from probe.target import Target
from probe.wire.http import HttpClient
from tests.agents.scripted import Reply, scripted_agent, sse, status, task
from tests.hostile.test_semantics import _held


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
