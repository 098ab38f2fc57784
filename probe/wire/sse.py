"""An incremental Server-Sent Events parser that keeps what a conformance tester needs to see.

Follows the WHATWG event-stream rules: lines end in LF, CRLF or CR (a CRLF split across two
network chunks is one line end); `:` lines are comments (keep-alives, counted); `data:` lines
join with LF; a blank line dispatches the event; one leading UTF-8 byte order mark is dropped (the
spec's "UTF-8 decode", as a2a-js's TextDecoderStream does; noted in `bom`: a2a-sdk's httpx-sse keeps
it and loses the first field, `bom_lost_field`). An event at the end of the stream without its blank line is not
dispatched (the spec; a2a-sdk's httpx-sse discards it too; a2a-js dispatches one whose lines ended):
`has_partial_event` says so. An event whose data is empty is not given either (a2a-sdk's transports
`continue` past it, a2a-js never yields it): counted in `empty_events`. Bytes that are not UTF-8 become U+FFFD
(the spec's UTF-8 decode; httpx-sse's line decoder and a2a-js's TextDecoderStream replace too), counted in
`replaced_lines`: the JSON in the data is then judged as the clients read it. Nothing else is repaired: the
caller gets the event name, the raw data and the arrival time of each event.
"""

from __future__ import annotations

import time
from typing import NamedTuple


class SSEError(ValueError):
    pass


class StreamLimit(SSEError):
    """A bound on the probe's work was hit (event size, stream bytes): the probe stopped reading."""


class SSEEvent(NamedTuple):
    """One dispatched event (immutable; a tuple, the cheapest object to make once per event)."""

    data: str
    event: str = "message"
    id: str | None = None
    received_at: float = 0.0


_ENDING = {b"\n": "LF", b"\r": "CR"}
_BOM = b"\xef\xbb\xbf"


class SSEParser:
    def __init__(self, max_event_bytes: int = 1 << 20) -> None:
        self._buf = bytearray()  # an unterminated line, waiting for its end
        self._pending_cr = False  # the last chunk ended in CR: a following LF belongs to it
        self._data: list[str] = []
        self._event = ""
        self._id: str | None = None
        self._size = 0
        self._max = max_event_bytes
        self.comments = 0
        self.empty_events = 0  # events with empty data, not given (see the module's text)
        self.line_endings: set[str] = set()
        self._head: bytes | None = b""  # the stream's first bytes until a leading BOM is ruled in or out
        self.bom = False  # the stream began with a UTF-8 byte order mark (dropped)
        self.replaced_lines = 0  # lines not UTF-8, read with U+FFFD where the bytes were invalid
        self.bom_lost_field = False  # ... and a field followed it, which a2a-sdk's reader loses to it

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """Consume one network chunk; return the events it completed, in order."""
        if self._head is not None:
            chunk = self._head + chunk
            if len(chunk) <= 3 and _BOM.startswith(chunk):  # a BOM, or not (and what follows one), still to come
                self._head = chunk
                return []
            self._head = None
            if chunk.startswith(_BOM):
                chunk = chunk[3:]
                self.bom = True
                self.bom_lost_field = chunk[:1] not in (b":", b"\r", b"\n")  # a comment or a blank line: no loss
        if self._buf or self._pending_cr or b"\r" in chunk or not chunk.isascii():
            return self._feed_lines(chunk)
        # the common chunk: ASCII, LF line ends, nothing held from the last one. Decoded once and split at LF,
        # each line judged as _line judges it (ASCII: a character is a byte, so sizes count alike)
        lines = chunk.decode("ascii").split("\n")
        rest = lines.pop()  # after the last LF: an unterminated line ("" when the chunk ends in LF)
        if lines:
            self.line_endings.add("LF")
        events: list[SSEEvent] = []
        for line in lines:
            if not line:
                ev = self._dispatch()
                if ev is not None:
                    events.append(ev)
                continue
            if line[0] == ":":
                self.comments += 1
                continue
            name, sep, value = line.partition(":")
            if sep and value[:1] == " ":
                value = value[1:]
            if name == "data":
                self._data.append(value)
                self._size += len(line)
                if self._size > self._max:
                    self._buf[:] = chunk  # as _feed_lines leaves it: nothing of this chunk consumed
                    raise StreamLimit(f"an SSE event exceeds {self._max} bytes")
            elif name == "event":
                self._event = value
            elif name == "id" and "\0" not in value:
                self._id = value
        if rest:
            self._buf += rest.encode("ascii")
            if len(self._buf) + self._size > self._max:
                raise StreamLimit(f"an SSE event (or line) exceeds {self._max} bytes")
        return events

    def _feed_lines(self, chunk: bytes) -> list[SSEEvent]:
        """feed's general path: any bytes, any of the three line ends, a line or a CRLF split across chunks."""
        if self._pending_cr:
            self._pending_cr = False
            if chunk.startswith(b"\n"):  # the second half of a CRLF split across chunks
                chunk = chunk[1:]
                self.line_endings.discard("CR")
                self.line_endings.add("CRLF")
        if self._buf:
            self._buf += chunk
            data = bytes(self._buf)
        else:
            data = chunk
        # bytes.splitlines breaks at exactly the event-stream line ends (LF, CRLF, CR), in C
        lines = data.splitlines(keepends=True)
        rest = lines.pop() if lines and lines[-1][-1:] not in (b"\n", b"\r") else b""  # no line end yet
        events: list[SSEEvent] = []
        endings = self.line_endings
        try:
            for line in lines:
                end = line[-1:]
                if end == b"\n" and line[-2:-1] == b"\r":
                    endings.add("CRLF")
                    raw = line[:-2]
                else:
                    endings.add(_ENDING[end])
                    raw = line[:-1]
                ev = self._line(raw)
                if ev is not None:
                    events.append(ev)
        except SSEError:
            self._buf[:] = data  # as it was: nothing of this chunk consumed
            raise
        self._buf[:] = rest
        if not rest and lines and lines[-1][-1:] == b"\r":
            self._pending_cr = True  # the chunk ended in CR: the next may start with its LF
        if len(self._buf) + self._size > self._max:
            raise StreamLimit(f"an SSE event (or line) exceeds {self._max} bytes")
        return events

    def _line(self, raw: bytes) -> SSEEvent | None:
        if not raw:
            return self._dispatch()
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:  # the spec's "UTF-8 decode" replaces, as httpx-sse and a2a-js's TextDecoder do
            line = raw.decode("utf-8", "replace")
            self.replaced_lines += 1
        if line[0] == ":":
            self.comments += 1
            return None
        name, sep, value = line.partition(":")
        if sep and value[:1] == " ":
            value = value[1:]
        if name == "data":
            self._data.append(value)
            self._size += len(raw)
            if self._size > self._max:
                raise StreamLimit(f"an SSE event exceeds {self._max} bytes")
        elif name == "event":
            self._event = value
        elif name == "id" and "\0" not in value:
            self._id = value
        # `retry` and unknown fields are ignored, as the spec says
        return None

    def _dispatch(self) -> SSEEvent | None:
        data = self._data
        if not data:
            self._event, self._size = "", 0
            return None
        event = self._event
        self._data, self._event, self._size = [], "", 0
        joined = data[0] if len(data) == 1 else "\n".join(data)
        if not joined:
            self.empty_events += 1
            return None
        return SSEEvent(joined, event or "message", self._id, time.monotonic())

    @property
    def has_partial_event(self) -> bool:
        """Unterminated data at the end of the stream: the server closed mid-event."""
        return bool(self._data) or bool(self._buf.strip()) or self._head not in (None, b"", _BOM)
