from __future__ import annotations

import pytest

from probe.wire.sse import SSEError, SSEParser

STREAM = (b"data: {\"a\":1}\r\n\r\n: ping - keepalive\r\n\r\nevent: error\r\ndata: line one\r\n"
          b"data: line two\r\nid: 7\r\n\r\ndata:no-space\n\ndata: cr\r\r")


def _parse_in_chunks(data: bytes, size: int) -> tuple[list[tuple[str, str, str | None]], SSEParser]:
    p = SSEParser()
    out = []
    for i in range(0, len(data), size):
        out += [(e.event, e.data, e.id) for e in p.feed(data[i:i + size])]
    return out, p


EXPECTED = [("message", '{"a":1}', None), ("error", "line one\nline two", "7"), ("message", "no-space", "7"),
            ("message", "cr", "7")]


@pytest.mark.parametrize("size", [1, 2, 3, 5, 7, 64, 4096])
def test_events_survive_any_chunking(size: int) -> None:
    events, parser = _parse_in_chunks(STREAM, size)
    assert events == EXPECTED
    assert parser.comments == 1
    assert parser.line_endings == {"CRLF", "LF", "CR"}


def test_crlf_split_across_chunks_is_one_line_end() -> None:
    p = SSEParser()
    assert p.feed(b"data: x\r") == []
    assert p.feed(b"\n") == []
    events = p.feed(b"\r\n")
    assert [e.data for e in events] == ["x"]
    assert p.line_endings == {"CRLF"}


def test_lf_only_stream_records_lf() -> None:
    p = SSEParser()
    events = p.feed(b"data: 1\n\ndata: 2\n\n")
    assert [e.data for e in events] == ["1", "2"]
    assert p.line_endings == {"LF"}


def test_partial_event_at_close_is_visible() -> None:
    p = SSEParser()
    p.feed(b"data: complete\n\ndata: half")
    assert p.has_partial_event


def test_oversized_event_is_an_error_not_unbounded_memory() -> None:
    p = SSEParser(max_event_bytes=1000)
    for _ in range(9):
        p.feed(b"data: " + b"x" * 100 + b"\n")
    with pytest.raises(SSEError, match="exceeds 1000 bytes"):
        p.feed(b"data: " + b"x" * 100 + b"\n")


def test_oversized_line_without_newline_is_an_error() -> None:
    p = SSEParser(max_event_bytes=1000)
    with pytest.raises(SSEError):
        p.feed(b"data: " + b"x" * 2000)


def test_comment_only_stream_yields_no_events() -> None:
    p = SSEParser()
    assert p.feed(b": ping\n\n: ping\n\n") == []
    assert p.comments == 2


def test_stream_judge_memory_is_bounded_for_endless_artifacts() -> None:
    from probe.checks.stream import StreamJudge
    from probe.wire import jsonrpc
    from probe.wire.dialects import V1

    judge = StreamJudge(V1)
    judge.opened("text/event-stream")
    first = jsonrpc.Envelope(result={"task": {"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}}},
                             has_result=True)
    judge.on_event("message", first, None)
    for i in range(20_000):
        env = jsonrpc.Envelope(result={"artifactUpdate": {"taskId": "t", "contextId": "c", "artifact": {
            "artifactId": f"a{i}", "parts": [{"text": "x" * 100}]}}}, has_result=True)
        judge.on_event("message", env, None)
    assert sum(len(t) for t in judge.texts) <= 64 * 1024
    assert len(judge.artifacts) <= 10_000
