"""Streaming checks beyond the stream step: SubscribeToTask, subscribe to a terminal task, undeclared streaming."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager

from probe.checks import grading
from probe.checks.stream import StreamJudge
from probe.results import Status
from probe.stall import Waited
from probe.suite.context import Skip, Suite, expect_error
from probe.wire import a2a_errors as E
from probe.wire.bindings import Answer, AnswerStream
from probe.wire.dialects import TERMINAL, TaskState, state_name
from probe.wire.http import WireError
from probe.wire.sse import SSEError


class Subscription:
    """SubscribeToTask in the background, judged by the same StreamJudge as the stream step."""

    def __init__(self, s: Suite, task_id: str) -> None:
        self.s = s
        self.task_id = task_id
        self.judge = StreamJudge(s.dialect, close_grace=1.0)
        self.plain: Answer | None = None
        self.method = ""  # the call that opened it (on HTTP+JSON: the subscribe verb the agent took)
        self.error: str | None = None
        self._opened = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._task = asyncio.create_task(self._consume())
        await self.s.wait(self._opened.wait(), 3.0)

    async def _consume(self) -> None:
        try:
            async with self.s.client.subscribe(self.task_id) as es:
                self._opened.set()
                self.method = es.method
                if es.plain is not None:
                    self.plain = es.plain
                    return
                self.judge.opened(es.content_type)
                await self.judge.consume(es, self.s.deadline)
        except WireError as exc:
            self.error = str(exc)
        finally:
            self._opened.set()

    async def finish(self, *, expect: TaskState) -> None:
        assert self._task is not None
        waited, stalled = await self.s.wait(self._task, 5.0)
        if waited is Waited.STALLED:
            self.s.record("streaming.subscribe", Status.SKIP, stalled)
            return
        if waited is Waited.TIMED_OUT:
            self.error = self.error or "the subscription did not end after the task was canceled"
        status, message = self.verdict(expect)
        self.s.record("streaming.subscribe", status, message)
        if self.plain is not None and _not_implemented(self.plain):
            _unimplemented(self.s, "streaming.subscribe", message)

    def verdict(self, expect: TaskState) -> tuple[Status, str]:
        if self.plain is not None:
            err = self.plain.error
            return Status.FAIL, f"not a stream: {self.plain.exchange.outcome} " + (err.describe() if err else "")
        if self.error:
            return Status.FAIL, self.error
        j = self.judge
        # Task first is a 1.0 rule (§3.1.6); 0.3's tasks/resubscribe only resumes the updates (§7.9)
        problems = [f"{cid}: {'; '.join(msgs)}" for cid, msgs in j.problems.items()
                    if msgs and (self.s.v1 or cid != "stream.first_event")]
        if self.s.v1 and (j.first is None or j.first.kind != "task"):
            problems.insert(0, "the first event is not the Task")
        elif j.first is not None and j.first.task_id and j.first.task_id != self.task_id:
            problems.insert(0, f"the first event is task {j.first.task_id}, not {self.task_id}")
        if j.state is not expect:
            problems.append(f"ended {state_name(j.state)}, expected {state_name(expect)}")
        if problems:
            return Status.FAIL, "; ".join(problems)
        first = "Task first, " if self.s.v1 else ""
        return Status.PASS, f"{j.events} event(s), {first}closed at {expect} ({self.method.split(' ')[0]})"


async def subscribe_terminal(s: Suite) -> None:
    if not s.card.streaming:
        raise Skip("the card does not declare streaming")
    task = await s.completed()
    assert task.task_id is not None
    async with s.client.subscribe(task.task_id) as es:
        answer = await refusal(es)
    if answer is not None:
        _depends_on_the_method(s, answer)
    if answer is None:
        if not s.v1:
            # 0.3 proto: returning the final Task and closing is also allowed
            s.record("streaming.subscribe_terminal", Status.PASS, "0.3: the final task was returned")
        else:
            s.record("streaming.subscribe_terminal", Status.FAIL,
                     "a subscription to a COMPLETED task was accepted as a stream")
        return
    names = ({E.UNSUPPORTED_OPERATION} if s.v1
             else {E.UNSUPPORTED_OPERATION, E.TASK_NOT_FOUND, E.TASK_NOT_CANCELABLE, E.INTERNAL})
    expect_error(s, "streaming.subscribe_terminal", answer, names, "SubscribeToTask on a COMPLETED task")
    _note_unimplemented(s, "streaming.subscribe_terminal", answer)


async def subscribe_unknown(s: Suite) -> None:
    if not s.card.streaming:
        raise Skip("the card does not declare streaming (streaming.not_declared covers the refusal)")
    async with s.client.subscribe(f"a2a-probe-missing-{uuid.uuid4()}") as es:
        answer = await refusal(es)
    if answer is not None:
        _depends_on_the_method(s, answer)
    if answer is None:
        s.record("streaming.subscribe_unknown", Status.FAIL,
                 "a subscription to a task that does not exist was accepted as a stream")
        return
    expect_error(s, "streaming.subscribe_unknown", answer, {E.TASK_NOT_FOUND}, "SubscribeToTask with an unknown id")
    _note_unimplemented(s, "streaming.subscribe_unknown", answer)


# SubscribeToTask answered MethodNotFound (JSON-RPC -32601): the agent has no such operation although its card
# declares streaming (1.0 §3.3.4, §3.1.6; 0.3 §7.9). The first check that meets it fails; every later check of the
# operation depends on it (each would fail for that one cause, quoting the same MethodNotFound)
_SUBSCRIBE = "SubscribeToTask"


def _not_implemented(answer: Answer) -> bool:
    return answer.error is not None and answer.error.name == E.METHOD_NOT_FOUND


def _unimplemented(s: Suite, check_id: str, message: str) -> None:
    """`check_id` failed on the MethodNotFound: it carries the cause, if its version grades it (0.2 has no
    streaming.subscribe_terminal, whose failure is then no finding to depend on)."""
    if grading.level_of(check_id, s.result.protocol_version, s.result.binding) is not None:
        s.unimplemented.setdefault(_SUBSCRIBE, f"depends on {check_id}, which failed: {message}"[:300])


def _depends_on_the_method(s: Suite, answer: Answer) -> None:
    if _not_implemented(answer) and _SUBSCRIBE in s.unimplemented:
        raise Skip(s.unimplemented[_SUBSCRIBE])


def _note_unimplemented(s: Suite, check_id: str, answer: Answer) -> None:
    recorded = s.result.check(check_id)
    if _not_implemented(answer) and recorded is not None and recorded.status is Status.FAIL:
        _unimplemented(s, check_id, recorded.message)


async def refusal(es: AnswerStream) -> Answer | None:
    """How a subscription was refused: a plain (non-stream) answer, or an error as its first event; None when
    the server opened a stream that does not start with an error."""
    if es.plain is not None:
        return es.plain
    async for ev in es.events():
        return Answer(es.method, es.exchange, es.content_type, error=ev.error) if ev.error is not None else None
    return None


async def not_declared(s: Suite) -> None:
    if s.card.streaming:
        raise Skip("the card declares streaming; the stream step covers it")
    async with s.client.stream(f"a2a-probe streaming refusal {uuid.uuid4().hex[:8]}") as es:
        if es.plain is not None:
            expect_error(s, "streaming.not_declared", es.plain, {E.UNSUPPORTED_OPERATION},
                         "SendStreamingMessage without streaming")
            return
        first = None
        async for ev in es.events():
            first = ev
            break
    err = first.error if first else None
    if err is not None and err.is_(E.UNSUPPORTED_OPERATION):
        s.record("streaming.not_declared", Status.PASS, f"refused in the stream: {err.describe()}")
    else:
        s.record("streaming.not_declared", Status.FAIL,
                 "the agent streamed although the card does not declare capabilities.streaming")


_MAX_FOLLOWED = 1_000  # events kept per stream: a flood must not grow the probe's memory


Opener = Callable[[], AbstractAsyncContextManager[AnswerStream]]
_CLOSE_SETTLE = 0.5  # seconds for the agent to notice the closed stream before the task is looked at


class _Follower:
    """One of several streams of one task: the events it got, as comparable signatures."""

    def __init__(self, s: Suite, opener: Opener) -> None:
        self.s = s
        self.opener = opener
        self.task_id: str | None = None  # from the first event that names the task
        self.events: list[tuple[object, ...]] = []
        self.state: TaskState | None = None
        self.refused: str | None = None  # a plain answer, an error event or no answer instead of a stream
        self.first = asyncio.Event()  # the first event (or the refusal) arrived
        self.task: asyncio.Task[None] = asyncio.create_task(self._follow())

    async def _follow(self) -> None:
        try:
            async with self.opener() as es:
                if es.plain is not None:
                    self.refused = f"not a stream: {es.plain.describe()}"
                    return
                async for ev in es.events():
                    if ev.error is not None or ev.problem is not None:
                        self.refused = self.refused or (ev.error.describe() if ev.error else str(ev.problem))
                        return
                    if len(self.events) >= _MAX_FOLLOWED:
                        self.refused = f"more than {_MAX_FOLLOWED} events without a terminal state"
                        return
                    item = self.s.dialect.result_item(ev.result)
                    self.events.append((item.kind, item.state, item.artifact_id, item.append, item.last_chunk,
                                        tuple(item.texts), item.status_text))
                    self.task_id = self.task_id or item.task_id
                    self.state = item.state or self.state
                    self.first.set()
                    if item.state in TERMINAL:
                        return
        except WireError as exc:
            self.refused = self.refused or f"no answer: {exc}"
        except SSEError as exc:  # a stream that cannot be read (or too big) is the agent's, never a probe error
            self.refused = self.refused or f"unreadable stream: {exc}"
        finally:
            self.first.set()

    async def close(self) -> None:
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.task


async def _first_events(s: Suite, followers: list[_Follower]) -> None:
    """Wait for every stream's first event; a stream that has none after a wait the probe's stall cut short is not
    the agent's refusal (Skip)."""
    waited, stalled = await s.wait(asyncio.gather(*(f.first.wait() for f in followers)), 3.0)
    if waited is Waited.STALLED:
        raise Skip(stalled)


async def multi_stream(s: Suite) -> None:
    """STREAM-ORDER-002/003/004 (1.0 §3.5.2): the slow prompt's own SendStreamingMessage stream and two
    SubscribeToTask streams of that task; the first is closed (the task must go on), the task canceled; the other
    two both reach the terminal event, with the same events in the same order."""
    if not s.card.streaming:
        raise Skip("the card does not declare streaming")
    if not s.v1:
        raise Skip("0.3 and 0.2 say nothing about several streams of one task")
    prompt = s.opts.slow_prompt
    if not prompt:
        raise Skip("no prompt that keeps a task running (--slow-prompt / slow_prompt)")
    origin = _Follower(s, lambda: s.client.stream(prompt))
    followers = [origin]
    ended: list[TaskState | None] = []
    try:
        await _first_events(s, followers)
        if not origin.events:
            raise Skip(f"SendStreamingMessage with the slow prompt gave {origin.refused or 'no event'}"[:300])
        task_id = origin.task_id
        if origin.events[0][0] == "message":
            raise Skip("the agent answered the slow prompt with a Message, not a Task: no task to follow")
        if task_id is None or origin.state in TERMINAL:
            raise Skip(f"the slow prompt did not leave a running task (got {state_name(origin.state)})")
        followers += [_Follower(s, lambda: s.client.subscribe(task_id)) for _ in range(2)]
        await _judge_streams(s, task_id, followers, ended)
    finally:
        for f in followers:
            await f.close()
        if not ended and origin.task_id:  # leave no task of the suite running
            await _cancel(s, origin.task_id)


async def _judge_streams(s: Suite, task_id: str, followers: list[_Follower], ended: list[TaskState | None]) -> None:
    await _first_events(s, followers)
    origin, kept = followers[0], followers[1:]
    served = [f for f in kept if f.events]  # opened and sent the Task (it may break later: judged below)
    if not served:
        raise Skip(f"no SubscribeToTask stream opened ({kept[0].refused or 'no event'}): streaming.subscribe")
    if len(served) < len(kept):
        # 1.0 §3.5.2: an agent MAY serve several streams of one task; the rules bind when it does
        refusal = next(f.refused or "no event" for f in kept if f not in served)
        raise Skip(f"the agent serves fewer streams of a task than asked (MAY, §3.5.2); a further one got: "
                   f"{refusal}"[:300])
    await origin.close()  # closing one MUST NOT affect the others, nor the task (its lifecycle is its own)
    await asyncio.sleep(min(_CLOSE_SETTLE, s.deadline.remaining()))
    _, now = await s.client.get(task_id)
    if now is not None and now.state in TERMINAL:
        ended.append(now.state)
        if now.state is TaskState.COMPLETED:
            raise Skip("the task completed by itself before it could be canceled: the slow prompt must keep it "
                       "running for a few seconds")
        s.record("streaming.multi_stream", Status.FAIL,
                 f"closing the SendStreamingMessage stream ended task {task_id} ({state_name(now.state)}): a "
                 "task's lifecycle is independent of any one stream's (1.0 §3.5.2)")
        return
    canceled = await _cancel(s, task_id)
    ended.append(canceled)
    waited, stalled = await s.wait(asyncio.gather(*(f.task for f in kept), return_exceptions=True), 5.0)
    if waited is Waited.STALLED and any(f.state not in TERMINAL for f in kept):
        raise Skip(stalled)
    if canceled not in TERMINAL and all(f.state not in TERMINAL for f in kept):
        raise Skip(f"the task did not end after CancelTask ({state_name(canceled)}), so no stream could finish")
    why = f"CancelTask made the task {state_name(canceled)}" if canceled in TERMINAL else "another stream ended"
    problems = [f"subscription {i + 1} stopped at {state_name(f.state)}: no terminal event, although {why}"
                if f.refused is None else f"subscription {i + 1}: {f.refused}"
                for i, f in enumerate(kept) if f.state not in TERMINAL]
    # the first event is each stream's own Task snapshot; what follows is what the task broadcast while both
    # were open, so the later-opened stream's events are the tail of the earlier one's
    a, b = sorted((f.events[1:] for f in kept), key=len, reverse=True)
    if not problems and not a and all(f.events[0][1] in TERMINAL for f in kept):
        raise Skip(f"the task was already {state_name(kept[0].state)} when the streams opened: nothing was "
                   "broadcast to compare (the slow prompt must keep a task running)")
    if not problems and a[len(a) - len(b):] != b:
        problems.append(f"the two subscriptions got different events: {len(a)} vs {len(b)} after the Task, "
                        f"first difference at {_first_difference(a, b)}")
    s.record("streaming.multi_stream", Status.FAIL if problems else Status.PASS,
             "; ".join(problems) or f"task {task_id}: its SendStreamingMessage stream closed, the task went on; "
             f"both subscriptions got the same {len(b)} event(s) after the Task, through {state_name(kept[0].state)}")


def _first_difference(a: list[tuple[object, ...]], b: list[tuple[object, ...]]) -> str:
    tail = a[len(a) - len(b):]
    index = next((i for i, (x, y) in enumerate(zip(tail, b, strict=False)) if x != y), len(b))
    return f"event {index + 1}: {tail[index][:2] if index < len(tail) else None} vs " \
           f"{b[index][:2] if index < len(b) else None}"


async def _cancel(s: Suite, task_id: str) -> TaskState | None:
    _, canceled = await s.client.cancel(task_id)
    return canceled.state if canceled is not None else None


CHECKS = (subscribe_terminal, subscribe_unknown, not_declared, multi_stream)
IDS = {subscribe_terminal: ("streaming.subscribe_terminal",), subscribe_unknown: ("streaming.subscribe_unknown",),
       not_declared: ("streaming.not_declared",), multi_stream: ("streaming.multi_stream",)}
