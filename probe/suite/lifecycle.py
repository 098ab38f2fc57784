"""Lifecycle checks: get, return-immediately, history, cancel, multi-turn, terminal tasks, contexts."""

from __future__ import annotations

import contextlib
import uuid

from probe.results import Status
from probe.suite.context import NO_INPUT_PROMPT, Skip, Suite, describe_answer, expect_error
from probe.wire import a2a_errors as E
from probe.wire.bindings import Answer
from probe.wire.client import PollTimeout
from probe.wire.dialects import TERMINAL, Item, TaskState, state_name


async def get_task(s: Suite) -> None:
    task = await s.completed()
    assert task.task_id is not None
    _, got = await s.get_task(task.task_id)
    if got is None or got.kind != "task":
        s.record("lifecycle.get_task", Status.FAIL, f"GetTask({task.task_id}) did not return the task")
    elif got.task_id != task.task_id or got.state != task.state:
        s.record("lifecycle.get_task", Status.FAIL,
                 f"GetTask returned id {got.task_id} state {state_name(got.state)}; expected {task.task_id} "
                 f"{state_name(task.state)}")
    else:
        s.record("lifecycle.get_task", Status.PASS, f"task {task.task_id} is {state_name(got.state)}")


async def return_immediately(s: Suite) -> None:
    answer, item = await s.send(f"a2a-probe return-immediately {uuid.uuid4().hex[:8]}", immediate=True)
    if item is None:
        raise Skip(f"needs a Task, but SendMessage answered {describe_answer(answer)}")
    if item.kind != "task":
        raise Skip("the agent answered with a Message, not a Task: returnImmediately has no effect on it")
    if item.state in TERMINAL:
        s.record("lifecycle.return_immediately", Status.FAIL,
                 f"the task came back {state_name(item.state)}: the server waited for completion despite "
                 "returnImmediately")
    else:
        s.record("lifecycle.return_immediately", Status.PASS, f"returned at once in state {state_name(item.state)}")
    if item.task_id:
        await _wait_terminal(s, item.task_id)  # leave no task running


async def history_length(s: Suite) -> None:
    task = await s.completed()
    assert task.task_id is not None
    problems, seen = [], []
    # 0.3 never fixed what 0 means (its gRPC proto read it as "unlimited"), so only 1.0 is held to "0 = none"
    cases = ((0, 0), (1, 1)) if s.v1 else ((1, 1),)
    for n, limit in cases:
        answer, _ = await s.get_task(task.task_id, history_length=n)
        if answer.error is not None or not isinstance(answer.result, dict):
            problems.append(f"historyLength={n}: {answer.error.describe() if answer.error else 'no task'}")
            continue
        if n == 0:
            s.note_history_at_zero("GetTask", answer.result)
        history = answer.result.get("history") or []
        said = f"historyLength={n} returned {len(history) if isinstance(history, list) else '?'} message(s)"
        seen.append(said)
        if not isinstance(history, list) or len(history) > limit:
            problems.append(said)
    # a pass says what was asked (0.3 asks for 1 only): the check's title would claim the 1.0 case of 0
    s.record("lifecycle.history_length", Status.FAIL if problems else Status.PASS, "; ".join(problems or seen))


async def message_to_terminal(s: Suite) -> None:
    task = await s.completed()
    answer, item = await s.send("a2a-probe follow-up to a completed task", task_id=task.task_id,
                                context_id=task.context_id)
    if s.v1:
        expect_error(s, "lifecycle.message_to_terminal", answer, {E.UNSUPPORTED_OPERATION},
                     "message to a COMPLETED task")
    elif item is None and answer.error is not None:
        s.record("lifecycle.message_to_terminal", Status.PASS, answer.error.describe())
    else:
        s.record("lifecycle.message_to_terminal", Status.FAIL, "a message to a COMPLETED task was accepted")


async def unknown_task_message(s: Suite) -> None:
    answer, _ = await s.send("a2a-probe message to an unknown task", task_id=f"a2a-probe-missing-{uuid.uuid4()}")
    expect_error(s, "lifecycle.unknown_task_message", answer, {E.TASK_NOT_FOUND}, "message with an unknown taskId")


async def context_continuity(s: Suite) -> None:
    task = await s.completed()
    if not task.context_id:
        raise Skip("the first task has no contextId")
    _, item = await s.send("a2a-probe second turn in the same context", context_id=task.context_id)
    if item is None:
        s.record("lifecycle.context_continuity", Status.FAIL, "the follow-up in the same contextId was rejected")
    elif item.context_id != task.context_id:
        s.record("lifecycle.context_continuity", Status.FAIL,
                 f"the follow-up got contextId {item.context_id}, expected {task.context_id}")
    elif item.kind == "task" and item.task_id == task.task_id:
        s.record("lifecycle.context_continuity", Status.FAIL, "the completed task was restarted instead of a new one")
    else:
        s.record("lifecycle.context_continuity", Status.PASS, f"contextId {task.context_id} kept")


async def input_required(s: Suite) -> None:
    if not s.opts.input_prompt:
        raise Skip(NO_INPUT_PROMPT)
    answer, first = await s.send(s.opts.input_prompt)
    if first is not None and first.kind == "message":
        raise Skip("the agent answered the input prompt with a Message, not a Task: no task to continue")
    if first is None or first.kind != "task" or first.state is not TaskState.INPUT_REQUIRED:
        state = state_name(first.state) if first else describe_answer(answer)
        s.record("lifecycle.input_required", Status.FAIL, f"the input prompt gave {state}, not INPUT_REQUIRED")
        return
    follow_up, second = await s.send("a2a-probe: here is the input", task_id=first.task_id,
                                     context_id=first.context_id)
    if second is None and follow_up.error is not None and _asks_for_data(answer.result):
        # the agent named the input it needs as structured data (Strands' interrupt ids, say), and the spec leaves
        # the follow-up's content to the agent: refusing the probe's plain text is no conformance failure
        s.record("lifecycle.input_required", Status.SKIP,
                 "the agent asks for structured input (a data part in its INPUT_REQUIRED status message), which the "
                 f"probe cannot give; its text follow-up was refused: {describe_answer(follow_up)}")
    elif second is None or second.kind != "task":
        s.record("lifecycle.input_required", Status.FAIL,
                 f"the follow-up with the same taskId was rejected: {describe_answer(follow_up)}")
    elif second.task_id != first.task_id:
        s.record("lifecycle.input_required", Status.FAIL,
                 f"the follow-up created task {second.task_id} instead of continuing {first.task_id}")
    else:
        if second.state not in TERMINAL:
            got, stalled = await _wait_terminal(s, first.task_id or "")
            if stalled:
                s.record("lifecycle.input_required", Status.SKIP, stalled)
                return
            second = got or second
        ok = second.state is TaskState.COMPLETED
        s.record("lifecycle.input_required", Status.PASS if ok else Status.FAIL,
                 f"task {first.task_id}: INPUT_REQUIRED -> {state_name(second.state)}")


def _asks_for_data(result: object) -> bool:
    """Whether a SendMessage result's task status message carries a data part (0.3 `kind: data`, 1.0 `data`; the
    0.3 proto's status message is `update`, its parts `content`)."""
    task = result.get("task", result) if isinstance(result, dict) else None
    status = task.get("status") if isinstance(task, dict) else None
    message = (status.get("message") or status.get("update")) if isinstance(status, dict) else None
    parts = (message.get("parts") or message.get("content")) if isinstance(message, dict) else None
    return isinstance(parts, list) and any(
        isinstance(p, dict) and (p.get("kind") == "data" or "data" in p) for p in parts)


async def cancel_and_subscribe(s: Suite) -> None:
    """One running task serves two checks: SubscribeToTask follows it while CancelTask ends it."""
    if not s.opts.slow_prompt:
        raise Skip("no prompt that keeps a task running (--slow-prompt / slow_prompt)")
    from probe.suite.streaming import _first_events, _Follower

    prompt = s.opts.slow_prompt
    answer, item = await s.send(prompt, immediate=True)
    if item is not None and item.kind == "message":
        raise Skip("the agent answered the slow prompt with a Message, not a Task: nothing to cancel or follow")
    origin = None
    if item is not None and item.kind == "task" and item.state in TERMINAL and s.card.streaming:
        # the server waited for the end despite returnImmediately / blocking false (lifecycle.return_immediately's
        # finding; a2a-sdk 0.2 always waits): the slow prompt's own stream keeps a task running instead
        origin = _Follower(s, lambda: s.client.stream(prompt))
        await _first_events(s, [origin])
    try:
        task_id = origin.task_id if origin is not None and origin.state not in TERMINAL else \
            (item.task_id if item is not None and item.kind == "task" and item.state not in TERMINAL else None)
        if task_id is None:
            got = state_name(item.state) if item else describe_answer(answer)
            if item is not None and item.state in TERMINAL and not s.v1:
                raise Skip(f"the slow prompt's task came back {got}: blocking false mandates nothing in "
                           f"{s.dialect.version}, so no running task to cancel")
            s.record("lifecycle.cancel", Status.FAIL, f"the slow prompt did not leave a running task (got {got})")
            return
        await _cancel_running(s, task_id)
    finally:
        if origin is not None:
            await origin.close()


async def _cancel_running(s: Suite, task_id: str) -> None:
    from probe.suite.streaming import Subscription

    sub = Subscription(s, task_id) if s.card.streaming else None
    if sub is not None:
        await sub.start()
    answer, canceled = await s.client.cancel(task_id)
    stalled = ""
    if canceled is not None and canceled.state is not TaskState.CANCELED:
        got, stalled = await _wait_terminal(s, task_id)  # cancel may be asynchronous
        canceled = got or canceled
    if stalled:
        s.record("lifecycle.cancel", Status.SKIP, stalled)
    elif canceled is not None and canceled.state is TaskState.CANCELED:
        s.record("lifecycle.cancel", Status.PASS, f"task {task_id} CANCELED")
    else:
        gave = state_name(canceled.state) if canceled else describe_answer(answer)
        s.record("lifecycle.cancel", Status.FAIL, f"CancelTask on a running task gave {gave}")
    if sub is not None:
        await sub.finish(expect=TaskState.CANCELED)


async def _wait_terminal(s: Suite, task_id: str, budget: float = 5.0) -> tuple[Item | None, str]:
    """Poll GetTask briefly until the task is terminal or interrupted (also to leave no task running): the last
    task seen, and the words to skip with when the probe's own stall cut the wait short (Suite.wait)."""
    last: Item | None = None

    def seen(answer: Answer) -> None:
        nonlocal last
        last = s.client.item(answer, bare_task=True) or last

    async def follow() -> None:
        with contextlib.suppress(PollTimeout):  # the suite's deadline: Suite.wait's own timeout comes first
            await s.client.poll(task_id, deadline=s.deadline, observe=seen, start=0.0, cap=0.5)

    _, stalled = await s.wait(follow(), budget)
    return last, stalled if last is None or last.state not in TERMINAL else ""


def history_omitted(s: Suite) -> None:
    """lifecycle.history_omitted, over the tasks answered to historyLength 0 during the suite (1.0 §3.2.4)."""
    if not s.v1:
        s.record("lifecycle.history_omitted", Status.SKIP,
                 f"{s.dialect.version} never fixed what historyLength 0 means")
    elif s.binding_name == "grpc":
        s.record("lifecycle.history_omitted", Status.SKIP,
                 "gRPC: a protobuf repeated field has no absent state to tell from an empty one")
    elif not s.asked_no_history:
        s.record("lifecycle.history_omitted", Status.SKIP, "no task was answered to historyLength 0")
    else:
        s.record("lifecycle.history_omitted", Status.FAIL if s.history_at_zero else Status.PASS,
                 "; ".join(s.history_at_zero) or f"{s.asked_no_history} task(s) asked with historyLength 0 came "
                 "without a history field")


FINAL = (history_omitted,)  # judged over the whole suite's answers, after every other check
FINAL_IDS = ("lifecycle.history_omitted",)

CHECKS = (get_task, return_immediately, history_length, message_to_terminal, unknown_task_message,
          context_continuity, input_required, cancel_and_subscribe)
IDS = {get_task: ("lifecycle.get_task",), return_immediately: ("lifecycle.return_immediately",),
       history_length: ("lifecycle.history_length",), message_to_terminal: ("lifecycle.message_to_terminal",),
       unknown_task_message: ("lifecycle.unknown_task_message",),
       context_continuity: ("lifecycle.context_continuity",), input_required: ("lifecycle.input_required",),
       cancel_and_subscribe: ("lifecycle.cancel", "streaming.subscribe")}
