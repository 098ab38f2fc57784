"""Task listing and task history: ListTasks (1.0 §3.1.4) and what history holds (1.0 §3.2.4, §3.7; 0.3 §6.1).

These are the official TCK's CORE-LIST-001…005 and CORE-HIST-003…006 requirements, asked of any deployed
agent: every task the checks look at is one the suite created itself, in a context of its own, so the answers
can be judged without knowing anything else the agent holds.
"""

from __future__ import annotations

import itertools
import uuid
from datetime import datetime
from typing import Any

from probe.results import Status
from probe.suite.context import Skip, Suite, describe_answer
from probe.wire import schema
from probe.wire.bindings import Answer
from probe.wire.dialects import TERMINAL, TaskState, named, state_name

# 0.3 §3.5.6/§7.3 lists tasks/list for gRPC and REST only ("JSON-RPC: N/A"), with an empty payload, no rule
# and no rpc in its proto; 0.2 has no such method
_NO_LIST = "ListTasks is an A2A 1.0 operation (0.3 lists tasks/list for gRPC/REST only, with no rule)"
_MAX_PAGES = 4  # two tasks at one per page, plus room for a server that returns an empty page first
_GRPC_ZEROS: dict[str, Any] = {"tasks": [], "nextPageToken": "", "pageSize": 0, "totalSize": 0}
_HISTORY_ASKED = 10  # as the TCK asks: more than the suite's tasks ever hold


def _tasks_of(answer: Answer) -> list[dict[str, Any]] | None:
    result = answer.result
    if answer.error is not None or not isinstance(result, dict):
        return None
    tasks = result.get("tasks", [])  # an empty repeated field is absent in ProtoJSON
    return [t for t in tasks if isinstance(t, dict)] if isinstance(tasks, list) else None


def _token(s: Suite, answer: Answer, problems: list[str], what: str) -> str | None:
    """nextPageToken: MUST always be present, "" on the final page (§3.1.4). gRPC carries it as a proto3 string,
    where "" and absent are the same value."""
    result = answer.result if isinstance(answer.result, dict) else {}
    token = named(s.dialect, result, "nextPageToken")
    if token is None and s.binding_name != "grpc":
        problems.append(f"{what}: no nextPageToken (it MUST always be present, \"\" on the final page)")
        return None
    if token is not None and not isinstance(token, str):
        problems.append(f"{what}: nextPageToken is {type(token).__name__}, not a string")
        return None
    return token or ""


def _id(task: dict[str, Any]) -> str:
    return str(task.get("id"))  # a hostile id (a list, a number) must not break the comparisons


def _timestamp(task: dict[str, Any]) -> datetime | None:
    status = task.get("status")
    raw = status.get("timestamp") if isinstance(status, dict) else None
    if not isinstance(raw, str):
        return None
    try:
        stamp = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        return None  # the list's schema validation names a bad timestamp
    return stamp if stamp.tzinfo is not None else None  # zone-less: a schema problem, and not comparable


async def _two_tasks(s: Suite) -> tuple[str, str, str]:
    """(contextId, older task id, newer task id): two tasks of the suite's own in one context."""
    answer, first = await s.send(f"a2a-probe list-tasks one {uuid.uuid4().hex[:8]}")
    if first is not None and first.kind == "message":
        raise Skip("the agent answers with a Message, not a Task: there is no task to list")
    if first is None or first.kind != "task" or not first.task_id:
        raise Skip(f"needs a task, but SendMessage answered {describe_answer(answer)}")
    if not first.context_id:
        raise Skip("the task has no contextId to list by")
    answer, second = await s.send(f"a2a-probe list-tasks two {uuid.uuid4().hex[:8]}", context_id=first.context_id)
    if second is None or second.kind != "task" or not second.task_id:
        raise Skip(f"needs a second task in the context, but SendMessage answered {describe_answer(answer)}")
    if second.context_id != first.context_id:
        raise Skip(f"the second task got contextId {second.context_id}, not {first.context_id} "
                   "(lifecycle.context_continuity)")
    return first.context_id, first.task_id, second.task_id


def _list_problems(s: Suite, answer: Answer, what: str) -> list[str]:
    if answer.error is not None or answer.problem is not None or not isinstance(answer.result, dict):
        return [f"{what}: {describe_answer(answer)}"]
    payload = answer.result
    if s.binding_name == "grpc":  # proto3 scalars carry no presence: "" and 0 never reach the wire
        payload = _GRPC_ZEROS | payload
    s.run.stamps.see(payload, "ListTasks")
    verdict = schema.validate("1.0", s.client.binding.card_name, schema.Shape.LIST_TASKS, payload)
    s.run.required.see(verdict.required, "ListTasks")
    return [f"{what}: {p}" for p in verdict.problems[:3]]


async def list_tasks(s: Suite) -> None:
    """CORE-LIST-001/003/004/005 on one call (plus the status filter and historyLength), CORE-LIST-002/004 by
    walking pages of one task each."""
    if not s.v1:
        raise Skip(_NO_LIST)
    ctx, older, newer = await _two_tasks(s)
    what = f"ListTasks(contextId={ctx})"
    answer = await s.client.list(context_id=ctx)
    problems = _list_problems(s, answer, what)
    tasks = _tasks_of(answer)
    if answer.error is not None or answer.problem is not None or tasks is None:
        s.record("lifecycle.list_tasks", Status.FAIL, "; ".join(problems) or f"{what}: tasks is not a list")
        s.record("lifecycle.list_pagination", Status.SKIP,
                 f"depends on lifecycle.list_tasks: {what} answered {describe_answer(answer)}"[:300])
        return
    problems += _listing_problems(s, answer, tasks, what, ctx, (older, newer))
    problems += await _filter_problems(s, ctx, older)
    s.record("lifecycle.list_tasks", Status.FAIL if problems else Status.PASS,
             "; ".join(problems[:5]) or f"{what}: the suite's tasks, newest first, no artifacts, nextPageToken "
             "\"\"; the status filter and historyLength=1 honoured")
    await _pages(s, ctx, {older, newer})


def _listing_problems(s: Suite, answer: Answer, tasks: list[dict[str, Any]], what: str, ctx: str,
                      ours: tuple[str, str]) -> list[str]:
    problems: list[str] = []
    older, newer = ours
    ids = [_id(t) for t in tasks]
    missing = [t for t in ours if t not in ids]
    if missing:
        problems.append(f"{what} lacks the suite's task(s) {', '.join(missing)}")
    others = sorted({str(named(s.dialect, t, "contextId")) for t in tasks if named(s.dialect, t, "contextId") != ctx})
    if others:
        problems.append(f"{what} returned tasks of other contexts ({', '.join(others[:3])})")
    stamp = {_id(t): _timestamp(t) for t in tasks}
    same_time = stamp.get(older) is not None and stamp.get(older) == stamp.get(newer)
    # the older task was last updated before the newer one was created, once it is terminal
    done = {_id(t) for t in tasks if s.dialect.result_item({"task": t}).state in TERMINAL}
    if not missing and not same_time and older in done and ids.index(newer) > ids.index(older):
        problems.append(f"{what}: the older task {older} comes before the newer {newer} "
                        "(tasks MUST be sorted by status timestamp, most recent first)")
    stamps = [ts for ts in map(_timestamp, tasks) if ts is not None]
    if any(a < b for a, b in itertools.pairwise(stamps)):
        problems.append(f"{what}: status timestamps are not in descending order")
    with_artifacts = [_id(t) for t in tasks if "artifacts" in t]
    if with_artifacts:
        problems.append(f"{what}: artifacts present without includeArtifacts (task {with_artifacts[0]}); "
                        "the field MUST be omitted entirely")
    if _token(s, answer, problems, what) not in (None, ""):
        problems.append(f"{what}: the context's few tasks fit the default page of 50, yet nextPageToken is not "
                        "\"\"")
    return problems


async def _filter_problems(s: Suite, ctx: str, completed: str) -> list[str]:
    """The status filter both ways, and historyLength on the listed tasks (§3.2.4: the same on every operation)."""
    problems: list[str] = []
    what = "ListTasks(status=TASK_STATE_COMPLETED, historyLength=1)"
    answer = await s.client.list(context_id=ctx, status="TASK_STATE_COMPLETED", history_length=1)
    problems += _list_problems(s, answer, what)
    listed = [] if problems else _tasks_of(answer) or []
    if not problems and completed not in {_id(t) for t in listed}:
        problems.append(f"{what} lacks the suite's COMPLETED task {completed}")
    for t in listed:
        if len(_history(t)) > 1:
            problems.append(f"{what} returned {len(_history(t))} history messages for task {t.get('id')}")
            break
    working = await s.client.list(context_id=ctx, status="TASK_STATE_WORKING")
    what = "ListTasks(status=TASK_STATE_WORKING)"
    wrong = _list_problems(s, working, what)
    problems += wrong
    for want, tasks in ((TaskState.COMPLETED, listed), (TaskState.WORKING, [] if wrong else _tasks_of(working) or [])):
        odd = next((t for t in tasks if s.dialect.result_item({"task": t}).state is not want), None)
        if odd is not None:
            got = state_name(s.dialect.result_item({"task": odd}).state)
            problems.append(f"ListTasks(status=TASK_STATE_{want.value}) returned task {_id(odd)} in state {got}")
    return problems


async def _pages(s: Suite, ctx: str, expected: set[str]) -> None:
    problems: list[str] = []
    seen: list[str] = []
    token = ""
    for page in range(1, _MAX_PAGES + 1):
        what = f"ListTasks(pageSize=1) page {page}"
        answer = await s.client.list(context_id=ctx, page_size=1, page_token=token or None)
        problems += _list_problems(s, answer, what)
        tasks = _tasks_of(answer) if not problems else None
        if tasks is None:
            break
        if len(tasks) > 1:
            problems.append(f"{what} returned {len(tasks)} tasks")
        seen += [_id(t) for t in tasks]
        token = _token(s, answer, problems, what) or ""
        if problems or not token:
            break
    else:
        problems.append(f"still a nextPageToken after {_MAX_PAGES} pages of one task for {len(expected)} tasks")
    if not problems:
        if sorted(seen) != sorted(set(seen)):
            problems.append(f"a task came back on two pages ({seen})")
        elif not expected <= set(seen):
            problems.append(f"the pages held {seen}, not both of the suite's tasks {sorted(expected)} "
                            "(the cursor lost a task)")
    s.record("lifecycle.list_pagination", Status.FAIL if problems else Status.PASS,
             "; ".join(problems[:4]) or f"{len(seen)} page(s) of one task by pageToken, the last with "
             "nextPageToken \"\"")


# ---- history


def _task_body(s: Suite, answer: Answer, *, bare: bool) -> dict[str, Any] | None:
    """The Task object of an answer: 1.0 SendMessage wraps it ({"task": …}); GetTask and 0.3 answers are bare."""
    result = answer.result
    if answer.error is not None or not isinstance(result, dict):
        return None
    body = result.get("task") if s.v1 and not bare else result
    return body if isinstance(body, dict) else None


def _history(task: dict[str, Any]) -> list[dict[str, Any]]:
    history = task.get("history") or []
    return [m for m in history if isinstance(m, dict)] if isinstance(history, list) else []


async def history_on_send(s: Suite) -> None:
    """CORE-HIST-003 and the proto's "MUST NOT return more messages than the provided value" on SendMessage."""
    problems: list[str] = []
    # 0.3 never fixed what 0 means (its gRPC proto read it as "unlimited"), so only 1.0 is held to "0 = none"
    for n in (0, 1) if s.v1 else (1,):
        answer, item = await s.client.send(f"a2a-probe history-on-send {n} {uuid.uuid4().hex[:8]}",
                                           history_length=n)
        if item is not None and item.kind == "message":
            raise Skip("the agent answered with a Message: historyLength limits a Task's history only")
        task = _task_body(s, answer, bare=False)
        if task is None or item is None or item.kind != "task":
            raise Skip(f"needs a Task, but SendMessage answered {describe_answer(answer)}")
        if n == 0:
            s.note_history_at_zero("SendMessage", task)
        got = len(_history(task))
        if got > n:
            problems.append(f"historyLength={n} on SendMessage returned {got} message(s)")
    s.record("lifecycle.history_on_send", Status.FAIL if problems else Status.PASS,
             "; ".join(problems) or f"SendMessage configuration.historyLength {'0 and 1' if s.v1 else '1'} "
             "honoured")


async def history(s: Suite) -> None:
    """CORE-HIST-004 (messages persisted), CORE-HIST-005/006 (in order, as sent) on a task of the suite's own:
    two turns of one task with --input-prompt, else one."""
    sent, task_id = await _exchange(s)
    answer, _ = await s.get_task(task_id, history_length=_HISTORY_ASKED)
    task = _task_body(s, answer, bare=True)
    if task is None:
        raise Skip(f"GetTask({task_id}) answered {describe_answer(answer)}")
    entries = _history(task)
    # the official clients' ProtoJSON parsers also read the proto name (message_id): so does this check
    by_id = {str(named(s.dialect, m, "messageId")): (i, m) for i, m in enumerate(entries)}
    found = [(msg, by_id[msg["messageId"]]) for msg in sent if msg["messageId"] in by_id]
    if not found:
        s.record("lifecycle.history_kept", Status.FAIL,
                 f"GetTask(historyLength={_HISTORY_ASKED}) holds {len(entries)} message(s), none of the "
                 f"{len(sent)} the probe sent")
        s.record("lifecycle.history_order", Status.SKIP,
                 "depends on lifecycle.history_kept: the history holds none of the messages sent")
        return
    s.record("lifecycle.history_kept", Status.PASS,
             f"{len(found)} of the {len(sent)} message(s) sent are in the task's history")
    problems: list[str] = []
    user = s.dialect.roles[0]
    key = s.dialect.message_parts  # `content` in the 0.3 proto's JSON (0.3 HTTP+JSON and gRPC)
    for msg, (index, entry) in found:
        parts = entry.get(key)
        texts = [p.get("text") for p in parts if isinstance(p, dict) and "text" in p] if isinstance(parts, list) else []
        want = [p["text"] for p in msg[key]]
        if texts != want or entry.get("role") != user:
            problems.append(f"history entry {index} (messageId {msg['messageId']}) is {entry.get('role')} "
                            f"{texts!r}, sent as {user} {want!r}")
    positions = [index for _, (index, _) in found]
    if positions != sorted(positions):
        problems.append(f"the messages sent are at history positions {positions}: not the order they were sent")
    order = "two turns in order" if len(found) > 1 else "one message (the order of two needs --input-prompt)"
    s.record("lifecycle.history_order", Status.FAIL if problems else Status.PASS,
             "; ".join(problems[:3]) or f"as sent: {order}")


async def _exchange(s: Suite) -> tuple[list[dict[str, Any]], str]:
    """The messages sent to one task of the suite's own, in order, and that task's id."""
    first = s.message(s.opts.input_prompt or f"a2a-probe history {uuid.uuid4().hex[:8]}")
    answer, item = await s.client.send(first)
    if item is not None and item.kind == "message":
        raise Skip("the agent answers with a Message, not a Task: there is no task history")
    if item is None or item.kind != "task" or not item.task_id:
        raise Skip(f"needs a task, but SendMessage answered {describe_answer(answer)}")
    if not s.opts.input_prompt or item.state is not TaskState.INPUT_REQUIRED:
        return [first], item.task_id
    second = s.message("a2a-probe: here is the input", task_id=item.task_id, context_id=item.context_id)
    answer, follow = await s.client.send(second)
    if follow is None or follow.task_id != item.task_id:
        return [first], item.task_id  # lifecycle.input_required judges the follow-up
    if follow.state not in TERMINAL:
        _, follow = await s.client.get(item.task_id)
    if follow is not None and follow.state is not None and follow.state not in TERMINAL:
        raise Skip(f"the two-turn task is still {state_name(follow.state)}")
    return [first, second], item.task_id


CHECKS = (list_tasks, history_on_send, history)
IDS = {list_tasks: ("lifecycle.list_tasks", "lifecycle.list_pagination"),
       history_on_send: ("lifecycle.history_on_send",),
       history: ("lifecycle.history_kept", "lifecycle.history_order")}
