"""A scripted binding for unit tests of the engine's steps and the suite's checks: no socket, no server.

Each operation pops the next scripted reply: an `Answer`, a `FakeStream` (for stream operations), a
`WireError` to raise, or a callable that builds one from the params. Every call is recorded.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, ClassVar

from probe.results import Exchange, Transport
from probe.wire import a2a_errors
from probe.wire.bindings.base import (
    A2AError,
    Answer,
    EventByEvent,
    Headers,
    Op,
    Problem,
    ProblemKind,
    StreamEvent,
)
from probe.wire.dialects import V1, Dialect
from probe.wire.http import Deadline, WireError

Reply = Any  # Answer | FakeStream | WireError | Callable[[dict[str, Any]], Answer | FakeStream]


def exchange(status: int | None = 200) -> Exchange:
    return Exchange(transport=Transport.HTTP, method="POST", url="fake://agent", status=status)


def result(value: Any, *, method: str = "fake") -> Answer:
    return Answer(method, exchange(), "application/json", result=value, has_result=True)


def error(name: str, message: str = "", *, method: str = "fake") -> Answer:
    code = a2a_errors.code_of(name)
    return Answer(method, exchange(), "application/json",
                  error=A2AError(name=name, message=message or name, code=code))


def problem(kind: ProblemKind, detail: str, *, status: int | None = 404, method: str = "fake") -> Answer:
    return Answer(method, exchange(status), "text/html", problem=Problem(kind, detail))


@dataclass(slots=True)
class FakeStream(EventByEvent):
    """A scripted stream: its events in order, or `plain` when the answer is not a stream."""

    scripted: list[StreamEvent] = field(default_factory=list)
    plain: Answer | None = None
    method: str = "fake-stream"
    exchange: Exchange = field(default_factory=exchange)
    content_type: str = "text/event-stream"
    comments: int = 0
    partial_event: bool = False
    bom_lost_field: bool = False
    line_endings: set[str] = field(default_factory=set)
    max_bytes: int = 32 << 20

    @property
    def status(self) -> int | None:
        return self.exchange.status

    async def events(self) -> AsyncIterator[StreamEvent]:
        for ev in self.scripted:
            yield ev


def stream_of(*results: Any) -> FakeStream:
    return FakeStream([StreamEvent(result=r, has_result=True) for r in results])


class FakeBinding:
    name: ClassVar[str] = "fake"
    card_name: ClassVar[str] = "FAKE"

    def __init__(self, script: Mapping[Op, list[Reply]] | None = None, *, dialect: Dialect = V1,
                 url: str = "fake://agent") -> None:
        self.script: dict[Op, list[Reply]] = {op: list(replies) for op, replies in (script or {}).items()}
        self.dialect = dialect
        self.url = url
        self.calls: list[tuple[Op, dict[str, Any], dict[str, str | None]]] = []

    def method(self, op: Op) -> str:
        return f"fake.{op.value}"

    async def close(self) -> None:
        return None

    def _next(self, op: Op, params: dict[str, Any], headers: Headers | None) -> Any:
        self.calls.append((op, params, dict(headers or {})))
        replies = self.script.get(op)
        if not replies:
            raise AssertionError(f"the fake binding has no scripted reply left for {op}")
        reply = replies.pop(0) if len(replies) > 1 else replies[0]  # the last reply repeats
        if callable(reply) and not isinstance(reply, Answer | FakeStream):
            reply = reply(params)
        if isinstance(reply, WireError):
            raise reply
        return reply

    async def call(self, op: Op, params: dict[str, Any], *, deadline: Deadline,
                   headers: Headers | None = None) -> Answer:
        reply = self._next(op, params, headers)
        assert isinstance(reply, Answer), f"scripted reply for {op} is not an Answer"
        return reply

    @asynccontextmanager
    async def open_stream(self, op: Op, params: dict[str, Any], *, deadline: Deadline,
                          headers: Headers | None = None) -> AsyncIterator[FakeStream]:
        reply = self._next(op, params, headers)
        if isinstance(reply, Answer):
            reply = FakeStream(plain=reply, content_type=reply.content_type)
        assert isinstance(reply, FakeStream), f"scripted reply for {op} is not a FakeStream"
        yield reply
