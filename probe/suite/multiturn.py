"""Multi-turn checks (1.0 §3.4): unique task ids, and follow-ups that name a task (its contextId inferred, a
mismatching one rejected). The follow-up checks need an interrupted task, so they run with --input-prompt."""

from __future__ import annotations

import uuid

from probe.results import Status
from probe.suite.context import NO_INPUT_PROMPT, Skip, Suite, describe_answer
from probe.wire.dialects import TERMINAL, Item, TaskState, state_name


async def unique_task_ids(s: Suite) -> None:
    first = await s.completed()
    _, second = await s.send(f"a2a-probe second task {uuid.uuid4().hex[:8]}")
    if second is None or second.kind != "task":
        raise Skip("the second message did not create a task, so there are no two ids to compare")
    if not first.task_id or not second.task_id:
        s.record("lifecycle.unique_task_ids", Status.FAIL, "a new task came back without an id")
    elif first.task_id == second.task_id:
        s.record("lifecycle.unique_task_ids", Status.FAIL,
                 f"two new tasks (two messages, no taskId) both got the id {first.task_id}")
    else:
        s.record("lifecycle.unique_task_ids", Status.PASS, f"{first.task_id} and {second.task_id}")


async def _interrupted(s: Suite) -> Item:
    """A fresh task the input prompt left in INPUT_REQUIRED (with its id and contextId), or Skip saying why not."""
    if not s.opts.input_prompt:
        raise Skip(NO_INPUT_PROMPT)
    answer, item = await s.send(s.opts.input_prompt)
    if item is None:
        raise Skip(f"needs an INPUT_REQUIRED task, but the input prompt got {describe_answer(answer)}")
    if item.kind != "task":
        raise Skip("the agent answered the input prompt with a Message, not a Task: no task to continue")
    if item.state is not TaskState.INPUT_REQUIRED or not item.task_id or not item.context_id:
        got = state_name(item.state) if item.task_id and item.context_id else "a task without an id or contextId"
        raise Skip(f"needs an INPUT_REQUIRED task with an id and a contextId, but the input prompt gave {got} "
                   "(lifecycle.input_required judges that)")
    return item


async def follow_ups(s: Suite) -> None:
    """Only taskId: the task's contextId is inferred; then, on a second task, a wrong contextId is rejected."""
    if not s.v1:
        raise Skip("1.0 rules (§3.4.3); 0.3 says nothing about inferring or checking a follow-up's contextId")
    task = await _interrupted(s)
    answer, item = await s.send("a2a-probe: here is the input (taskId only)", task_id=task.task_id)
    if item is None:
        s.record("lifecycle.context_inferred", Status.FAIL,
                 f"a follow-up naming only task {task.task_id} was rejected: {describe_answer(answer)}")
    elif item.context_id != task.context_id:
        s.record("lifecycle.context_inferred", Status.FAIL,
                 f"the follow-up naming only task {task.task_id} got contextId {item.context_id}, not the task's "
                 f"{task.context_id}")
    elif item.kind == "task" and item.task_id != task.task_id:
        s.record("lifecycle.context_inferred", Status.FAIL,
                 f"the follow-up naming task {task.task_id} came back as task {item.task_id}")
    else:
        s.record("lifecycle.context_inferred", Status.PASS,
                 f"task {task.task_id} continued in its contextId {task.context_id} ({state_name(item.state)})")
    other = await _interrupted(s)
    wrong = f"a2a-probe-other-context-{uuid.uuid4()}"
    answer, item = await s.send("a2a-probe: input with a contextId that is not the task's", task_id=other.task_id,
                                context_id=wrong)
    if item is None and answer.error is not None and (answer.status or 0) < 500:
        s.record("lifecycle.context_mismatch_rejected", Status.PASS,
                 f"task {other.task_id} with contextId {wrong}: {answer.error.describe()}")
        await s.send("a2a-probe: here is the input", task_id=other.task_id, context_id=other.context_id)  # finish
    elif item is None:
        s.record("lifecycle.context_mismatch_rejected", Status.FAIL,
                 f"expected an A2A error for task {other.task_id} with another contextId, got "
                 f"{describe_answer(answer)}")
    else:
        moved = f", now in contextId {item.context_id}" if item.context_id not in (None, other.context_id) else ""
        ended = state_name(item.state) if item.state in TERMINAL else "accepted"
        s.record("lifecycle.context_mismatch_rejected", Status.FAIL,
                 f"a follow-up naming task {other.task_id} (contextId {other.context_id}) with contextId {wrong} "
                 f"was accepted ({ended}{moved})")


CHECKS = (unique_task_ids, follow_ups)
IDS = {unique_task_ids: ("lifecycle.unique_task_ids",),
       follow_ups: ("lifecycle.context_inferred", "lifecycle.context_mismatch_rejected")}
