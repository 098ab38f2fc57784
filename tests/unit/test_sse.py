from __future__ import annotations

import json
import random
import re
import subprocess
from pathlib import Path
from typing import Any

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


# ---- the parser against a plain reference: the previous, regex-driven implementation, kept here verbatim in
# behaviour (one regex over the buffer, one line at a time), on random streams cut at random places

_REF_EOL = re.compile(rb"\r\n|\r|\n")


class _Reference:
    def __init__(self, max_event_bytes: int = 1 << 20) -> None:
        self.buf, self.pending_cr, self.data, self.event = bytearray(), False, [], ""
        self.id: str | None = None
        self.size, self.max, self.comments, self.line_endings = 0, max_event_bytes, 0, set()

    def feed(self, chunk: bytes) -> list[tuple[str, str, str | None]]:
        if self.pending_cr:
            self.pending_cr = False
            if chunk.startswith(b"\n"):
                chunk = chunk[1:]
                self.line_endings.discard("CR")
                self.line_endings.add("CRLF")
        self.buf += chunk
        out, start = [], 0
        for m in _REF_EOL.finditer(self.buf):
            if m.group() == b"\r" and m.end() == len(self.buf):
                self.pending_cr = True
            self.line_endings.add({b"\r\n": "CRLF", b"\r": "CR", b"\n": "LF"}[m.group()])
            ev = self.line(bytes(self.buf[start:m.start()]))
            if ev is not None:
                out.append(ev)
            start = m.end()
        del self.buf[:start]
        if len(self.buf) + self.size > self.max:
            raise SSEError("limit")
        return out

    def line(self, raw: bytes) -> tuple[str, str, str | None] | None:
        if not raw:
            data, event = self.data, self.event
            self.data, self.event, self.size = [], "", 0
            joined = "\n".join(data)  # an event with empty data is not given (a2a-sdk and a2a-js skip it)
            return (joined, event or "message", self.id) if joined else None
        line = raw.decode("utf-8", "replace")  # the spec's UTF-8 decode, as httpx-sse and a2a-js read it
        if line.startswith(":"):
            self.comments += 1
            return None
        name, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self.data.append(value)
            self.size += len(raw)
            if self.size > self.max:
                raise SSEError("limit")
        elif name == "event":
            self.event = value
        elif name == "id" and "\0" not in value:
            self.id = value
        return None


_PIECES = [b"data: {\"a\": 1}", b"data:x", b"data:", b"data", b"event: error", b"event:", b"id: 7", b"id: a\0b",
           b"retry: 10", b": ping", b":", b"", b"", b"other: v", b"data:  two spaces", "data: ünï ✓".encode(),
           b"data: \xff bad", b"x" * 40, b"data: \x0b\x0c\x1c\x85 not line ends"]
_ENDS = [b"\n", b"\r\n", b"\r"]


def _run(parser: Any, stream: bytes, cuts: list[int]) -> tuple[Any, ...]:
    events: list[tuple[str, str, str | None]] = []
    error = None
    try:
        prev = 0
        for cut in [*cuts, len(stream)]:
            got = parser.feed(stream[prev:cut])
            events += [(e.event, e.data, e.id) if isinstance(parser, SSEParser) else e for e in got]
            prev = cut
    except ValueError as exc:  # SSEError or the reference's UnicodeDecodeError
        error = exc
    pending = parser.has_partial_event if isinstance(parser, SSEParser) else \
        bool(parser.data) or bool(parser.buf.strip())
    return events, parser.comments, parser.line_endings, error is not None, pending


def _matches_the_reference(rng: random.Random, pieces: list[bytes], ends: list[bytes]) -> None:
    """One random stream of `pieces` ended by `ends`, cut at random places: ours and the reference agree."""
    stream = b"".join(rng.choice(pieces) + rng.choice(ends) for _ in range(rng.randint(0, 12)))
    if rng.random() < 0.3:
        stream += rng.choice(pieces)  # an unterminated tail
    cuts = sorted(rng.sample(range(len(stream) + 1), min(len(stream) + 1, rng.randint(0, 6))))
    limit = rng.choice([1 << 20, 20, 60])
    ours = _run(SSEParser(max_event_bytes=limit), stream, cuts)
    ref = _run(_Reference(max_event_bytes=limit), stream, cuts)
    ref_events = [(event, data, id_) for data, event, id_ in ref[0]]
    assert (ours[0], *ours[1:]) == (ref_events, *ref[1:]), (stream, cuts, limit)


def test_the_parser_matches_the_reference_on_random_streams() -> None:
    rng = random.Random(6)
    for _ in range(3000):
        _matches_the_reference(rng, _PIECES, _ENDS)


def test_the_ascii_lf_path_matches_the_reference() -> None:
    """Chunks of ASCII with LF line ends and nothing held from the previous chunk take feed's one-decode path;
    against the reference on such streams (its limits included), and on streams that switch paths mid-way."""
    rng = random.Random(7)
    ascii_pieces = [p for p in _PIECES if p.isascii()]
    for n in range(3000):
        _matches_the_reference(rng, ascii_pieces, [b"\n"] if n % 3 else [b"\n", b"\n", b"\r\n"])  # a third mixed


def test_a_whole_stream_in_one_ascii_chunk() -> None:
    p = SSEParser()
    events = p.feed(b": hi\nevent: update\nid: 3\ndata: {\"a\":\ndata: 1}\n\ndata: x\n\ndata: tail")
    assert [(e.event, e.data, e.id) for e in events] == [("update", '{"a":\n1}', "3"), ("message", "x", "3")]
    assert p.comments == 1 and p.line_endings == {"LF"} and p.has_partial_event
    assert [e.data for e in p.feed(b"\n\n")] == ["tail"]


# ---- the WHATWG event-stream edge cases, at every byte boundary, against what a2a-sdk (httpx-sse) reads

EDGES = ("\ufeff"  # a leading BOM: dropped
         ": a comment\r\n"
         "retry: 3000\r\n"  # ignored (the probe never reconnects)
         "id: 41\r\n"
         "event: status\r\n"
         "data: {\"multi\":\r\n"
         "data:\"line é ✓ 😀\"}\r\n"  # no space after the colon; 2-, 3- and 4-byte UTF-8 characters
         "\r\n"
         "data\r"  # a field with no colon is that field with an empty value; lone CR line ends
         "data: second\r"
         "unknown: field\r"
         "\r"
         "data:\n"  # an event whose data is empty: not given
         "\n"
         "id\n"  # an empty id resets the last event id
         "data: third\n"
         "\n"
         "data: at eof without its blank line\n").encode()
EDGES_EXPECTED = [("status", '{"multi":\n"line é ✓ 😀"}', "41"), ("message", "\nsecond", "41"),
                  ("message", "third", "")]


@pytest.mark.parametrize("cut", range(len(EDGES) + 1))
def test_the_edge_cases_read_alike_whatever_byte_the_stream_is_cut_at(cut: int) -> None:
    # two chunks cut at every byte: inside the BOM, inside each CRLF, inside each multi-byte character
    p = SSEParser()
    events = [(e.event, e.data, e.id) for e in p.feed(EDGES[:cut]) + p.feed(EDGES[cut:])]
    assert events == EDGES_EXPECTED
    assert p.bom and not p.bom_lost_field and p.comments == 1 and p.empty_events == 1
    assert p.line_endings == {"CRLF", "CR", "LF"}
    assert p.has_partial_event  # the last event is discarded (WHATWG; httpx-sse too) and said to be cut off


def test_the_edge_cases_read_alike_byte_by_byte() -> None:
    p = SSEParser()
    events = [(e.event, e.data, e.id) for i in range(len(EDGES)) for e in p.feed(EDGES[i:i + 1])]
    assert events == EDGES_EXPECTED and p.bom and p.has_partial_event


def test_a2a_sdk_reads_the_edge_cases_as_the_parser_does_after_the_first_field() -> None:
    """What a2a-sdk's reader (httpx-sse, as its transports use it: events with empty data skipped) gives for the
    same bytes, run in its own venv: the same events, except the first, whose first line it loses to the BOM."""
    python = Path(__file__).parents[1] / "peers" / "venvs" / "sdk03" / "bin" / "python"
    if not python.exists():
        pytest.skip("the a2a-sdk peer venv is not installed")
    script = (
        "import sys, json\n"
        "from httpx_sse._decoders import SSEDecoder, SSELineDecoder\n"
        "import codecs\n"
        "data = sys.stdin.buffer.read()\n"
        "text = codecs.getincrementaldecoder('utf-8')(errors='replace').decode(data, True)\n"  # as httpx decodes
        "lines, dec, out = SSELineDecoder(), SSEDecoder(), []\n"
        "for line in lines.decode(text) + lines.flush():\n"
        "    sse = dec.decode(line.rstrip('\\n'))\n"
        "    if sse is not None and sse.data:\n"
        "        out.append([sse.event or 'message', sse.data, sse.id])\n"
        "print(json.dumps(out))\n")
    done = subprocess.run([str(python), "-c", script], input=EDGES, capture_output=True, check=True, timeout=60)
    theirs = [tuple(e) for e in json.loads(done.stdout)]
    # the BOM costs httpx-sse the comment line only here (a comment is first); what follows reads alike
    assert theirs == EDGES_EXPECTED
    bom_first = b"\xef\xbb\xbfdata: first\n\ndata: second\n\n"
    done = subprocess.run([str(python), "-c", script], input=bom_first, capture_output=True, check=True, timeout=60)
    assert [e[1] for e in json.loads(done.stdout)] == ["second"]  # the first event lost to the BOM
    p = SSEParser()
    assert [e.data for e in p.feed(bom_first)] == ["first", "second"] and p.bom_lost_field  # read, and said


def test_a_bom_split_over_the_first_chunks_is_dropped_and_a_near_bom_is_not() -> None:
    p = SSEParser()
    assert p.feed(b"\xef") == [] and p.feed(b"\xbb") == []
    assert p.feed(b"\xbf") == []  # what follows the BOM decides whether a2a-sdk loses a field
    assert [e.data for e in p.feed(b"data: x\n\n")] == ["x"] and p.bom and p.bom_lost_field
    q = SSEParser()
    assert q.feed(b"\xef\xbb") == []
    # not a BOM: the bytes are the line's, not UTF-8, read as U+FFFD: a field named "\ufffdXdata", ignored
    assert q.feed(b"Xdata: x\n\n") == [] and q.replaced_lines == 1
    assert not q.bom
    r = SSEParser()
    assert [e.data for e in r.feed(b"data: x\n\n\xef\xbb\xbfdata: y\n\n")] == ["x"]  # mid-stream: the field's name


def test_bytes_that_are_not_utf8_are_read_as_u_fffd_as_the_official_clients_read_them() -> None:
    """WHATWG HTML §9.2.6: the stream is decoded with "UTF-8 decode", which replaces invalid bytes; httpx's line
    decoder (a2a-sdk) and a2a-js's TextDecoderStream do the same. A text part with a stray Latin-1 byte is an
    event both clients read, so the probe reads it too (before: SSEError, a failed stream.events_parse)."""
    p = SSEParser()
    raw = b'data: {"text": "caf\xe9"}\n\n'
    for i in range(1, len(raw)):  # split anywhere, the line decodes whole
        p = SSEParser()
        events = p.feed(raw[:i]) + p.feed(raw[i:])
        assert [json.loads(e.data)["text"] for e in events] == ["caf\ufffd"] and p.replaced_lines == 1
    q = SSEParser()
    assert [e.data for e in q.feed("data: caf\u00e9\n\n".encode())] == ["caf\u00e9"] and q.replaced_lines == 0
