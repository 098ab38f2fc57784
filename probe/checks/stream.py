"""Judge a stream as it arrives: content type, framing, first event, ids, ordering, artifacts, close.

Any binding's stream (SSE or gRPC) is judged the same way, from its neutral events.

The judge sees every event once, in arrival order, and keeps only small state (ids, the current
state, known artifacts), so a long or hostile stream costs bounded memory.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from probe import redact
from probe.checks import grading
from probe.checks.catalogue import Severity, make_check, shared_check
from probe.checks.required import RequiredLog
from probe.checks.timestamps import TimestampLog
from probe.reasons import Reason
from probe.results import CheckResult, Status, StepName
from probe.wire import schema
from probe.wire.bindings import AnswerStream
from probe.wire.dialects import INTERRUPTED, TERMINAL, Dialect, Item, TaskState, is_regression
from probe.wire.http import Deadline
from probe.wire.sse import SSEError, StreamLimit

# check id -> the reason it produces when it is the first MUST failure, in order of precedence
_REASON_BY_CHECK: tuple[tuple[str, Reason], ...] = (
    ("stream.content_type", Reason.STREAM_NOT_A_STREAM),
    ("stream.no_regression", Reason.STREAM_STATE_REGRESSION),
    ("stream.events_parse", Reason.STREAM_PROTOCOL_VIOLATION),
    ("stream.schema", Reason.STREAM_PROTOCOL_VIOLATION),
    ("stream.first_event", Reason.STREAM_PROTOCOL_VIOLATION),
    ("stream.consistent_ids", Reason.STREAM_PROTOCOL_VIOLATION),
    ("stream.artifact_chunks", Reason.STREAM_PROTOCOL_VIOLATION),
    ("stream.closes_after_terminal", Reason.STREAM_PROTOCOL_VIOLATION),
    ("stream.terminal", Reason.STREAM_NO_TERMINAL),
)
_MAX_PROBLEMS = 5
# a leading byte order mark: dropped by the event-stream spec's UTF-8 decode (and by a2a-js), kept by a2a-sdk's httpx
# (its "utf-8" codec), whose httpx-sse then reads the first field as "\ufeffdata" and ignores it (first event lost)
BOM_PROBLEM = ("the stream starts with a UTF-8 byte order mark (EF BB BF): a2a-sdk's SSE reader (httpx-sse) keeps it "
               "and drops the field after it (the first event is lost); the event-stream spec and a2a-js drop the mark")
_MAX_TEXT_CHARS = 64 * 1024  # enough to find an expected text; an endless stream can't grow memory
_MAX_ARTIFACTS = 10_000
# validated or not -> (redaction epoch, the checks of a stream that broke nothing): most streams, every probe. The
# objects are shared (never mutated); a new epoch (a secret registered) builds them again through shared_check.
_ALL_PASSED: dict[bool, tuple[int, tuple[CheckResult, ...]]] = {}


class StreamJudge:
    def __init__(self, dialect: Dialect, close_grace: float = 1.0, *, version: str | None = None,
                 binding: str = "JSONRPC", max_events: int = 10_000, max_artifacts: int = _MAX_ARTIFACTS,
                 stamps: TimestampLog | None = None, required: RequiredLog | None = None) -> None:
        self.d = dialect
        self.close_grace = close_grace
        # with a version, every event is also validated against that version's official definitions
        self.version = version
        self.binding = binding
        self.max_events = max_events
        self.max_artifacts = max_artifacts
        self.stamps = stamps  # where the events' status timestamps are noted (invoke.timestamps_utc)
        self.required = required  # where the events' missing REQUIRED fields are noted (invoke.required_fields)
        self.limit_hit: str | None = None  # the bound on work that stopped the reading
        self._valid: set[str] = set()  # raw event data already validated without a problem
        self.started = False
        self.cut_by_deadline = False  # the probe's deadline ended the reading (not the agent closing the stream)
        self.events = 0
        self.last_at: float | None = None  # when the last group of events arrived (time.monotonic)
        self.problems: dict[str, list[str]] = {cid: [] for cid, _ in _REASON_BY_CHECK}
        self.rpc_error: str | None = None
        self.first: Item | None = None
        self.task_id: str | None = None
        self.context_id: str | None = None
        self.state: TaskState | None = None
        self.terminal_at: int | None = None  # event index of the terminal state
        self.unread = 0  # events read as no event of the dialect (stream.events_parse): a state may be in them
        self.closed = False
        self.artifacts: dict[str, bool] = {}  # artifactId -> lastChunk seen
        self.texts: list[str] = []
        self._text_chars = 0
        self.status_text = ""
        self.comments = 0
        self.line_endings: set[str] = set()

    def _problem(self, check_id: str, message: str) -> None:
        bucket = self.problems[check_id]
        if len(bucket) < _MAX_PROBLEMS:
            bucket.append(message)

    def opened(self, content_type: str) -> None:
        self.started = True
        base = content_type.split(";", 1)[0].strip().lower()
        if base not in ("text/event-stream", "application/grpc"):  # SSE, or a gRPC server stream
            self._problem("stream.content_type", f"Content-Type {content_type!r}, expected text/event-stream")

    async def consume(self, es: AnswerStream, deadline: Deadline) -> None:
        """Read events until the server closes; after a terminal event wait at most `close_grace` for it."""
        # the events in the groups that arrived together: the ones already here are taken without a pass through
        # the async iterator each, and without a timer after the terminal event (nothing there can wait)
        it = es.batches().__aiter__()
        try:
            while True:
                if self.terminal_at is not None and es.drained():
                    batch = await it.__anext__()  # the end is here: nothing to wait for, so no timer
                elif self.terminal_at is not None:
                    wait = min(self.close_grace, deadline.remaining())
                    try:
                        async with asyncio.timeout(wait):  # no helper task per event, unlike wait_for on 3.11
                            batch = await it.__anext__()
                    except TimeoutError:
                        if not es.drained():
                            self._problem("stream.closes_after_terminal",
                                          f"still open {self.close_grace:g}s after the terminal event")
                            return
                        # the end is here after all: the probe's own loop stood still past the grace (a block, a
                        # GC pause) and asyncio ran the timer before the read of the close that came meanwhile.
                        # The cancelled reader is spent; a new one reads on from the same body and parser
                        await it.aclose()  # type: ignore[attr-defined]
                        it = es.batches().__aiter__()
                        batch = await it.__anext__()
                else:
                    batch = await it.__anext__()
                self.last_at = time.monotonic()
                for ev in batch:
                    self.on_event(ev.name, ev, ev.problem, ev.raw)
                    if self.rpc_error:
                        return
                    if self._over_limit():
                        return
                    if self.events % 256 == 0:
                        await asyncio.sleep(0)  # many tiny events in one chunk: let the loop breathe
                    if deadline.expired():  # data always ready never suspends a read, so no timeout fires there
                        self.timed_out("the deadline passed while events kept arriving")
                        return
        except StopAsyncIteration:
            self.closed = True
        except StreamLimit as exc:
            self.limit_hit = str(exc)
        except SSEError as exc:
            self._problem("stream.events_parse", str(exc))
        finally:
            self.comments, self.line_endings = es.comments, es.line_endings
            if self.closed and es.partial_event:
                self._problem("stream.events_parse", "the stream ended in the middle of an event")
            if es.bom_lost_field:
                self._problem("stream.events_parse", BOM_PROBLEM)
            await it.aclose()  # type: ignore[attr-defined]

    def _over_limit(self) -> bool:
        if self.events >= self.max_events and self.terminal_at is None:
            self.limit_hit = f"more than {self.max_events} events without a terminal state (max_stream_events)"
        elif len(self.artifacts) >= self.max_artifacts and self.terminal_at is None:
            self.limit_hit = f"more than {self.max_artifacts} artifacts in one stream (max_stream_artifacts)"
        return self.limit_hit is not None

    def timed_out(self, detail: str) -> None:
        self.cut_by_deadline = True
        if self.terminal_at is None:
            self._problem("stream.terminal", f"{detail}: {self.events} event(s), last state {self._state_name()}")

    def _worth_validating(self, raw: str | None) -> bool:
        """Validation is the costliest step per event: skip an event already seen valid (a flood repeats one
        payload) and every event once no further schema problem could be recorded."""
        if len(self.problems["stream.schema"]) >= _MAX_PROBLEMS:
            return False
        return raw is None or raw not in self._valid

    def on_event(self, name: str, envelope: Any, problem: str | None, raw: str | None = None) -> None:
        """One event: `envelope` has .problems, .error (with describe()) and .result (a StreamEvent, or a JSON-RPC
        Envelope offline)."""
        index = self.events
        self.events += 1
        if problem is not None or envelope is None:
            self.unread += 1
            self._problem("stream.events_parse", f"event {index}: {problem or 'unreadable'}")
            return
        if envelope.problems:
            self._problem("stream.events_parse", f"event {index}: " + "; ".join(envelope.problems))
        if envelope.error is not None:
            self.rpc_error = envelope.error.describe() + (" (SSE event: error)" if name == "error" else "")
            return
        if self.stamps is not None:
            self.stamps.see(envelope.result, f"event {index}")
        if self.version is not None and self._worth_validating(raw):
            verdict = schema.validate(self.version, self.binding, schema.Shape.STREAM_EVENT, envelope.result,
                                      root=f"event {index}")
            if verdict.limit is not None:  # the probe's bound: the reading stops here (see _over_limit)
                self.limit_hit = verdict.limit
                return
            for problem in verdict.problems[:2]:
                self._problem("stream.schema", problem)
            if self.required is not None:
                self.required.see(verdict.required, f"event {index}")
            if not verdict.problems and not verdict.required and raw is not None and len(self._valid) < 1024:
                self._valid.add(raw)
        item = self.d.result_item(envelope.result)
        if item.kind == "unknown":
            self.unread += 1
            self._problem("stream.events_parse", f"event {index}: " + "; ".join(item.problems))
            return
        if item.kind == "task" and not item.task_id and self.d.version != "1.0":
            # a2a-sdk 0.3's streaming client tracks the task by its id (ClientTaskManager): a Task event without one
            # stops it ("no current Task"); the 1.0 client reads on (it tracks nothing)
            self._problem("stream.events_parse", f"event {index}: the Task has no id (a2a-sdk 0.3's streaming client "
                                                 "stops: 'no current Task')")
        if self.terminal_at is not None:
            self._after_terminal(index, item)
            return
        if item.kind == "message" and self.first is not None and self.first.kind != "message":
            self._message_in_task_stream(index)
        if self.first is None:
            self._first(item)
        else:
            self._ids(index, item)
        self._advance(index, item)

    def _first(self, item: Item) -> None:
        self.first = item
        if item.kind not in ("task", "message"):
            self._problem("stream.first_event", f"the first event is a {item.kind} update, not the Task")
        self.task_id, self.context_id = item.task_id, item.context_id

    def _ids(self, index: int, item: Item) -> None:
        if self.first is not None and self.first.kind == "message":
            self._problem("stream.first_event", f"event {index} follows a Message reply, which must be the only event")
            return
        if self.task_id is None and item.task_id:
            self.task_id, self.context_id = item.task_id, item.context_id
        if item.task_id and self.task_id and item.task_id != self.task_id:
            self._problem("stream.consistent_ids", f"event {index} has taskId {item.task_id[:40]!r}, "
                                                   f"the stream's task is {self.task_id[:40]!r}")
        if item.context_id and self.context_id and item.context_id != self.context_id:
            self._problem("stream.consistent_ids", f"event {index} has contextId {item.context_id[:40]!r}, "
                                                   f"expected {self.context_id[:40]!r}")

    def _advance(self, index: int, item: Item) -> None:
        if item.kind == "artifact":
            self._artifact(index, item)
        for text in item.texts:
            if self._text_chars < _MAX_TEXT_CHARS:
                self.texts.append(text[: _MAX_TEXT_CHARS - self._text_chars])
                self._text_chars += len(self.texts[-1])
        if item.state is not None:
            if self.state is not None and is_regression(self.state, item.state):
                self._problem("stream.no_regression", f"event {index}: {self.state} -> {item.state}")
            self.state = item.state
            if item.status_text:
                self.status_text = item.status_text
        if (item is self.first and item.kind == "message") or item.state in TERMINAL or item.final:
            self.terminal_at = index
            if item.final and item.state not in TERMINAL | INTERRUPTED:  # 0.3: final ends the stream, not the task
                self._problem("stream.terminal", f"event {index}: final: true on a {self._state_name()} status ends "
                                                 "the stream before the task reached a terminal state")

    def _message_in_task_stream(self, index: int) -> None:
        """A Message after the stream began as a task's: no end of the task (its state goes on), one finding. 0.3:
        a2a-sdk's streaming client raises on it, so it is read as a client reads it (the 0.3 text lists a Message
        among a stream's results and words no rule); 1.0 §3.1.2: a task stream is the Task, then updates only."""
        if self.d.version != "1.0":
            self._problem("stream.events_parse", f"event {index}: a Message in the task's stream (a2a-sdk 0.3's "
                                                 "streaming client stops: 'received a streamed Message from server "
                                                 "after first response')")
        else:
            self._problem("stream.first_event", f"event {index} is a Message in the task's stream, which carries the "
                                                "Task, then status and artifact updates only")

    def _artifact(self, index: int, item: Item) -> None:
        aid = item.artifact_id
        if aid is None:
            self._problem("stream.artifact_chunks", f"event {index}: artifact update without artifactId")
            return
        if item.append and aid not in self.artifacts:
            self._problem("stream.artifact_chunks", f"event {index}: append to unknown artifact {aid[:40]!r}")
        if self.artifacts.get(aid):
            self._problem("stream.artifact_chunks", f"event {index}: chunk for {aid[:40]!r} after its lastChunk")
        if aid in self.artifacts or len(self.artifacts) < self.max_artifacts:
            self.artifacts[aid] = item.last_chunk

    def _after_terminal(self, index: int, item: Item) -> None:
        # a final Task snapshot repeating the terminal state is allowed (spec §7), of the stream's own task only;
        # anything else is not
        if self.first is not None and self.first.kind == "message":
            self._ids(index, item)  # 1.0 §3.1.2: a Message reply is the stream's only event
            return
        if item.kind == "task" and item.state == self.state:
            self._ids(index, item)
            return
        if item.state is not None and self.state in TERMINAL and item.state != self.state:
            self._problem("stream.no_regression",
                          f"event {index}: {self.state} -> {item.state} after the terminal state")
        else:  # (0.3: after a final: true that ended the stream at a state that was not terminal)
            last = "final: true" if self.state is not None and self.state not in TERMINAL else "the terminal event"
            self._problem("stream.closes_after_terminal", f"event {index} ({item.kind}) after {last}")

    def _state_name(self) -> str:
        return self.state.value if self.state else "none"

    def final_item(self) -> Item | None:
        if self.first is not None and self.first.kind == "message":
            return self.first
        if self.state is None:
            return None
        return Item("task", task_id=self.task_id, context_id=self.context_id, state=self.state, texts=self.texts,
                    status_text=self.status_text)

    def _finish_checks(self) -> None:
        if self.limit_hit is not None and self.terminal_at is None:
            self._problem("stream.terminal", f"the probe stopped reading after {self.events} event(s): "
                                             f"{self.limit_hit}")
        if self.terminal_at is None and not self.problems["stream.terminal"] and self.rpc_error is None:
            if self.state in INTERRUPTED:
                return  # closing at INPUT_REQUIRED/AUTH_REQUIRED is allowed; the outcome check reports it
            if self._unread_closed():
                return  # stream.events_parse's: the events it could not read may hold the terminal state
            how = "the server closed the stream" if self.closed else "the stream stopped"
            self._problem("stream.terminal", f"{how} after {self.events} event(s) with no terminal state "
                                             f"(last state {self._state_name()})")
        if (self.first is None and self.rpc_error is None and not self.problems["stream.content_type"]
                and not self.cut_by_deadline  # a stream the deadline cut before its first event: stream.terminal
                and not self.unread):  # events it carried, unreadable: stream.events_parse's
            self._problem("stream.first_event", "the stream carried no events")

    def _unread_closed(self) -> bool:
        """The stream closed and some of its events could not be read (stream.events_parse)."""
        return self.closed and self.unread > 0

    def checks(self) -> list[CheckResult]:
        self._finish_checks()
        validated = self.version is not None
        if not any(self.problems.values()):
            kept = _ALL_PASSED.get(validated)
            if kept is not None and kept[0] == redact.epoch():
                return list(kept[1])  # the same shared objects shared_check would hand out, in the same order
        out = []
        s = StepName.STREAM
        for cid, _ in _REASON_BY_CHECK:
            if cid == "stream.schema" and not validated:
                continue  # not validated (offline transcripts judge shapes only)
            msgs = self.problems[cid]
            if cid == "stream.first_event" and self.first is None and self.cut_by_deadline:
                out.append(shared_check(cid, Status.SKIP, "no event before the deadline", step=s))
                continue
            unjudged = {"stream.terminal": (self.terminal_at, "so the terminal state may be among them"),
                        "stream.first_event": (self.first, "the first among them")}.get(cid)
            if unjudged is not None and unjudged[0] is None and not msgs and self._unread_closed():
                out.append(make_check(cid, Status.SKIP, f"depends on stream.events_parse, which failed: {self.unread} "
                                      f"event(s) could not be read, {unjudged[1]}", step=s))
                continue
            # a pass is one shared, already scrubbed object (catalogue.shared_check); a failure names this stream
            out.append(make_check(cid, Status.FAIL, "; ".join(msgs), step=s) if msgs
                       else shared_check(cid, Status.PASS, step=s))
        if not any(self.problems.values()) and all(redact.is_shared(c) for c in out):
            _ALL_PASSED[validated] = (redact.epoch(), tuple(out))
        return out

    def failure(self) -> tuple[Reason, str] | None:
        if self.rpc_error is not None:
            return Reason.INVOKE_A2A_ERROR, f"the stream carried an error: {self.rpc_error}"
        if self.limit_hit is not None and self.terminal_at is None:
            return Reason.WORK_LIMIT_EXCEEDED, f"the probe stopped reading the stream: {self.limit_hit}"
        version = self.version or self.d.version
        for cid, reason in _REASON_BY_CHECK:
            # a rule the version words below MUST (0.3: the Task first, closing after final) is a finding, not
            # the verdict: a2a-sdk's 0.3 client reads such a stream to its end
            if self.problems[cid] and grading.level_of(cid, version, self.binding) is Severity.MUST:
                return reason, f"{cid}: " + "; ".join(self.problems[cid])
        if self.final_item() is None:
            return Reason.STREAM_NO_TERMINAL, "no task state received"
        return None
