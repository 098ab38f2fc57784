"""An incremental Server-Sent Events parser that keeps what a conformance tester needs to see.

Follows the WHATWG event-stream rules: lines end in LF, CRLF or CR (a CRLF split across two
network chunks is one line end); `:` lines are comments (keep-alives, counted); `data:` lines
join with LF; a blank line dispatches the event. Nothing is repaired: the caller gets the event
name, the raw data and the arrival time of each event.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

_EOL = re.compile(rb"\r\n|\r|\n")
_EOL_NAMES = {b"\r\n": "CRLF", b"\r": "CR", b"\n": "LF"}


class SSEError(ValueError):
    pass


class StreamLimit(SSEError):
    """A bound on the probe's work was hit (event size, stream bytes): the probe stopped reading."""


@dataclass(frozen=True, slots=True)
class SSEEvent:
    data: str
    event: str = "message"
    id: str | None = None
    received_at: float = 0.0


class SSEParser:
    def __init__(self, max_event_bytes: int = 1 << 20) -> None:
        self._buf = bytearray()
        self._pending_cr = False  # the last chunk ended in CR: a following LF belongs to it
        self._data: list[str] = []
        self._event = ""
        self._id: str | None = None
        self._size = 0
        self._max = max_event_bytes
        self.comments = 0
        self.line_endings: set[str] = set()

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """Consume one network chunk; return the events it completed, in order."""
        if self._pending_cr:
            self._pending_cr = False
            if chunk.startswith(b"\n"):  # the second half of a CRLF split across chunks
                chunk = chunk[1:]
                self.line_endings.discard("CR")
                self.line_endings.add("CRLF")
        self._buf += chunk
        events: list[SSEEvent] = []
        start = 0
        for m in _EOL.finditer(self._buf):
            ending = m.group()
            if ending == b"\r" and m.end() == len(self._buf):
                self._pending_cr = True
            self.line_endings.add(_EOL_NAMES[ending])
            ev = self._line(bytes(self._buf[start:m.start()]))
            if ev is not None:
                events.append(ev)
            start = m.end()
        del self._buf[:start]
        if len(self._buf) + self._size > self._max:
            raise StreamLimit(f"an SSE event (or line) exceeds {self._max} bytes")
        return events

    def _line(self, raw: bytes) -> SSEEvent | None:
        if not raw:
            return self._dispatch()
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise SSEError("an SSE line is not UTF-8") from None
        if line.startswith(":"):
            self.comments += 1
            return None
        name, sep, value = line.partition(":")
        if sep and value.startswith(" "):
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
        data, event = self._data, self._event
        self._data, self._event, self._size = [], "", 0
        if not data:
            return None
        return SSEEvent(data="\n".join(data), event=event or "message", id=self._id, received_at=time.monotonic())

    @property
    def has_partial_event(self) -> bool:
        """Unterminated data at the end of the stream: the server closed mid-event."""
        return bool(self._data) or bool(self._buf.strip())
