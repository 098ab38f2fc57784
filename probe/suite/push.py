"""Push-notification checks: the four config methods, an unknown task, and a delivery round trip.

The round trip sends a message that carries a push config pointing at the probe's own receiver
(never any other URL), then waits, within the deadline, for the notifications of that task
through its terminal state. The same round trip is the daemon's `push` module.

The round trip sends through a `Sender` (params -> Answer) on the one A2A client; the config checks call
the client's push operations.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from probe import redact
from probe.checks.push import NOT_DECLARED, DeliveryProblem, DeliveryVerdict, judge
from probe.engine import ProbeRun, StepFailed, execute
from probe.inbox import InboxFull, PushInbox, Registration
from probe.reasons import Reason
from probe.results import ProbeResult, Status, StepName, StepResult
from probe.suite.context import Skip, Suite, describe_answer, error_of
from probe.target import Target
from probe.wire import a2a_errors as E
from probe.wire import push as wire
from probe.wire.bindings import Answer, Op
from probe.wire.client import A2AClient, Webhook
from probe.wire.dialects import Dialect, Item
from probe.wire.http import Deadline, HttpClient

Sender = Callable[[dict[str, Any]], Awaitable[Answer]]  # SendMessage with these params (from the client)
Recorder = Callable[[str, Status, str], object]

# the config operations, by the names the checks report them under
METHODS: dict[str, Op] = {"create": Op.PUSH_SET, "get": Op.PUSH_GET, "list": Op.PUSH_LIST, "delete": Op.PUSH_DELETE}
SETTLE_SECONDS = 0.3  # after the terminal delivery: long enough to catch a straggler that breaks the order

DELIVERY_CHECKS: dict[DeliveryProblem, str] = {
    DeliveryProblem.NOT_DELIVERED: "push.delivered",
    DeliveryProblem.NO_TERMINAL: "push.delivered",
    DeliveryProblem.OUT_OF_ORDER: "push.in_order",
    DeliveryProblem.WRONG_TASK: "push.names_task",
    DeliveryProblem.UNAUTHENTICATED: "push.authenticated",
    DeliveryProblem.BAD_PAYLOAD: "push.payload",
}
DELIVERY_IDS = ("push.delivered", "push.in_order", "push.names_task", "push.authenticated", "push.payload")


def declared(card_doc: dict[str, Any]) -> bool:
    caps = card_doc.get("capabilities")
    return isinstance(caps, dict) and caps.get("pushNotifications") is True


@dataclass(slots=True)
class RoundTrip:
    """What one delivery round trip showed; `failure` is set when it could not start (or was refused)."""

    verdict: DeliveryVerdict | None = None
    task_id: str | None = None
    failure: tuple[Reason, str] | None = None
    skipped: str | None = None


def register(inbox: PushInbox, deadline: Deadline) -> Registration:
    reg = inbox.register(deadline.remaining() + 5.0)
    for secret in reg.secrets():  # an agent may echo them into anything we log; made for this run only
        redact.register(secret, ephemeral=True)
    return reg


async def round_trip(client: A2AClient, send: Sender, inbox: PushInbox, text: str, deadline: Deadline, *,
                     late_after: float | None = None) -> RoundTrip:
    """Send a task with push on, and judge what reaches the receiver until its terminal state or the deadline."""
    try:
        reg = register(inbox, deadline)
    except InboxFull as exc:  # the probe's own limit: never blamed on the agent
        return RoundTrip(failure=(Reason.PROBE_ERROR, f"the probe's push receiver is full: {exc}"))
    try:
        return await _round_trip(client, send, inbox, reg, text, deadline, late_after)
    finally:
        inbox.release(reg)


async def _round_trip(client: A2AClient, send: Sender, inbox: PushInbox, reg: Registration, text: str,
                      deadline: Deadline, late_after: float | None) -> RoundTrip:
    dialect = client.dialect
    params = client.send_params(client.message(text), immediate=True, push=_webhook(reg))
    sent_at = time.monotonic()
    answer = await send(params)
    err = error_of(answer)
    if err is not None:
        detail = inbox.redact(f"{answer.method} with a push config: {err.describe()}")
        reason = Reason.PUSH_NOT_SUPPORTED if err.is_(E.PUSH_NOT_SUPPORTED) else Reason.PUSH_CONFIG_FAILED
        return RoundTrip(failure=(reason, detail))
    item = _item(dialect, answer)
    if item is None or item.kind != "task" or not item.task_id:
        got = item.kind if item else describe_answer(answer)
        return RoundTrip(skipped=f"the agent answered with {inbox.redact(got)}, not a Task: there is no task to be "
                                 "notified about")
    task_id = item.task_id

    def terminal(deliveries: list[Any]) -> bool:
        return judge(dialect, deliveries, task_id, sent_at).terminal is not None

    if await reg.wait(terminal, deadline.at):
        await reg.wait(lambda _ds: False, min(deadline.at, time.monotonic() + SETTLE_SECONDS))
    verdict = judge(dialect, list(reg.deliveries), task_id, sent_at, late_after=late_after)
    return RoundTrip(verdict=verdict, task_id=task_id)


def _webhook(reg: Registration) -> Webhook:
    return reg.url, reg.token.get_secret_value(), reg.credentials.get_secret_value()


def _item(dialect: Dialect, answer: Answer) -> Item | None:
    if answer.error is not None or not answer.has_result:
        return None
    return dialect.result_item(answer.result)


# ---- the suite's checks


def _require(s: Suite) -> PushInbox:
    if not declared(s.card.doc):
        raise Skip(NOT_DECLARED)
    if s.opts.inbox is None:
        raise Skip("no push receiver (check --suite full starts one; the daemon needs push_public_url)")
    return s.opts.inbox


async def delivery(s: Suite) -> None:
    inbox = _require(s)

    async def send(params: dict[str, Any]) -> Answer:
        return await s.client.call(Op.SEND, params)

    trip = await round_trip(s.client, send, inbox, f"a2a-probe push {uuid.uuid4().hex[:8]}", s.deadline)
    if trip.skipped:
        raise Skip(trip.skipped)
    if trip.failure is not None:
        reason, detail = trip.failure
        for check_id in DELIVERY_IDS:
            s.record(check_id, Status.FAIL if check_id == "push.delivered" else Status.SKIP,
                     f"{detail} ({reason.value})" if check_id == "push.delivered" else "no delivery to judge")
        return
    v = trip.verdict
    assert v is not None
    record_verdict(lambda cid, status, msg: s.record(cid, status, msg), v)


def record_verdict(record: Recorder, v: DeliveryVerdict) -> None:
    failed: dict[str, list[str]] = {}
    for problem, check_id in DELIVERY_CHECKS.items():
        if problem in v.problems:
            failed.setdefault(check_id, []).append(v.describe(problem))
    nothing = DeliveryProblem.NOT_DELIVERED in v.problems
    unreadable = not nothing and v.readable == 0
    for check_id in DELIVERY_IDS:
        if unreadable and check_id in ("push.delivered", "push.in_order", "push.names_task"):
            record(check_id, Status.SKIP, f"none of the {v.deliveries} delivery(ies) could be read (see push.payload)")
        elif check_id in failed:
            message = "; ".join(failed[check_id])
            if check_id == "push.delivered" and nothing:
                message += f" ({Reason.PUSH_NOT_DELIVERED.value}: the agent could not reach the receiver URL)"
            record(check_id, Status.FAIL, message)
        elif nothing:
            record(check_id, Status.SKIP, "nothing was delivered")
        else:
            record(check_id, Status.PASS, _pass_message(check_id, v))


def _pass_message(check_id: str, v: DeliveryVerdict) -> str:
    if check_id == "push.delivered":
        first = f"first after {v.first_s:.2f}s, " if v.first_s is not None else ""
        terminal = f"terminal {v.terminal.value} after {v.terminal_s:.2f}s" if v.terminal and v.terminal_s else ""
        return f"{v.summary()}; {first}{terminal}".rstrip("; ")
    return {"push.in_order": "states never moved backwards", "push.names_task": "every delivery named the task",
            "push.authenticated": "every delivery carried Authorization: Bearer with the config's credentials",
            "push.payload": "every body is the version's payload, as strict JSON"}[check_id]


async def config_methods(s: Suite) -> None:
    """Create -> get -> list -> delete (twice) -> get, on a task of our own."""
    inbox = _require(s)
    task = await s.completed()
    assert task.task_id is not None
    methods = {name: s.client.method(op) for name, op in METHODS.items()}
    reg = register(inbox, s.deadline)
    try:
        create = await s.client.push_set(task.task_id, *_webhook(reg))
        err = error_of(create)
        if err is not None or not create.has_result:
            why = inbox.redact(describe_answer(create))
            if err is not None and err.is_(E.PUSH_NOT_SUPPORTED):
                why += (f" — the card declares pushNotifications but the agent refuses push configs "
                        f"({Reason.PUSH_NOT_SUPPORTED.value})")
            s.record("push.config_create", Status.FAIL, f"{methods['create']}: {why}")
            return
        config_id, url, problems = wire.read_config(s.dialect, create.result)
        if url is not None and url != reg.url:
            problems.append("the returned url is not the one registered")
        if config_id is None and s.v1:
            problems.append("no server-assigned config id")
        _record(s, "push.config_create", problems, f"{methods['create']} returned the config")
        await _get(s, methods, task.task_id, config_id, reg, inbox)
        await _list(s, methods, task.task_id, config_id, reg, inbox)
        await _delete(s, methods, task.task_id, config_id, inbox)
    finally:
        inbox.release(reg)


async def _get(s: Suite, methods: dict[str, str], task_id: str, config_id: str | None, reg: Registration,
               inbox: PushInbox) -> None:
    if config_id is None:
        raise Skip("no config id to get")
    call = await s.client.push_get(task_id, config_id)
    if call.error is not None or not call.has_result:
        s.record("push.config_get", Status.FAIL, inbox.redact(f"{methods['get']}: {describe_answer(call)}"))
        return
    got_id, url, problems = wire.read_config(s.dialect, call.result)
    if got_id not in (None, config_id):
        problems.append(f"asked for config {config_id}, got {got_id}")
    if url != reg.url:
        problems.append("the url is not the one registered")
    _record(s, "push.config_get", problems, f"{methods['get']} returned the config")


async def _list(s: Suite, methods: dict[str, str], task_id: str, config_id: str | None, reg: Registration,
                inbox: PushInbox) -> None:
    call = await s.client.push_list(task_id)
    if call.error is not None or not call.has_result:
        s.record("push.config_list", Status.FAIL, inbox.redact(f"{methods['list']}: {describe_answer(call)}"))
        return
    configs, problem = wire.listed_configs(s.dialect, call.result)
    if configs is None:
        s.record("push.config_list", Status.FAIL, f"{methods['list']}: {problem}")
        return
    ours = [c for c in configs if wire.read_config(s.dialect, c)[1] == reg.url]
    ok = bool(ours)
    s.record("push.config_list", Status.PASS if ok else Status.FAIL,
             f"{len(configs)} config(s), ours among them" if ok
             else f"{methods['list']} returned {len(configs)} config(s), not the one just created")


async def _delete(s: Suite, methods: dict[str, str], task_id: str, config_id: str | None, inbox: PushInbox) -> None:
    if config_id is None:
        raise Skip("no config id to delete")
    first = await s.client.push_delete(task_id, config_id)
    second = await s.client.push_delete(task_id, config_id)
    after = await s.client.push_get(task_id, config_id)
    problems = []
    if error_of(first) is not None or not first.has_result:
        problems.append(f"delete: {describe_answer(first)}")
    second_ok = error_of(second) is None and second.has_result
    if not second_ok and s.v1:  # 1.0 §3.1.10: "This operation MUST be idempotent"
        problems.append(f"a second delete is not idempotent: {describe_answer(second)}")
    if error_of(after) is None:
        problems.append("get still returns the deleted config")
    # 0.3 §7.8 asks no idempotency (its errors name TaskNotFoundError): a second delete refused is not graded there
    second_said = ("a second delete succeeded too" if second_ok else
                   f"a second delete answered {describe_answer(second)} (not graded: idempotency is a 1.0 rule, "
                   "§3.1.10; 0.3 §7.8 has none)")
    _record(s, "push.config_delete", [inbox.redact(p) for p in problems],
            inbox.redact(f"deleted; {second_said}; get then errors"))


async def unknown_task(s: Suite) -> None:
    inbox = _require(s)
    reg = register(inbox, s.deadline)
    try:
        missing = f"a2a-probe-missing-{uuid.uuid4()}"
        method = s.client.method(Op.PUSH_SET)
        call = await s.client.push_set(missing, *_webhook(reg))
    finally:
        inbox.release(reg)
    err = error_of(call)
    ok = err is not None and err.is_(E.TASK_NOT_FOUND) and (call.status or 0) < 500
    s.record("push.unknown_task", Status.PASS if ok else Status.FAIL,
             f"{method} for an unknown task: " + (err.describe() if ok and err else
                                                   f"expected -32001 TaskNotFoundError, got "
                                                   f"{inbox.redact(describe_answer(call))}"))


def _record(s: Suite, check_id: str, problems: list[str], ok: str) -> None:
    s.record(check_id, Status.FAIL if problems else Status.PASS, "; ".join(problems) or ok)


CHECKS = (config_methods, unknown_task, delivery)
IDS = {config_methods: ("push.config_create", "push.config_get", "push.config_list", "push.config_delete"),
       unknown_task: ("push.unknown_task",), delivery: DELIVERY_IDS}


# ---- the daemon's push module: discover, validate, then one round trip


async def run_push(target: Target, client: HttpClient, inbox: PushInbox, *,
                   late_after: float | None = None) -> ProbeResult:
    """Discover and validate as every module does, then one delivery round trip; always returns a result."""
    t0 = time.monotonic()
    run = await execute(target, client, steps=())
    if run.card is None or run.binding is None:
        return run.r

    async def step_fn(step: StepResult) -> bool:
        return await _push_step(run, step, inbox, late_after)

    await run._step(StepName.PUSH, step_fn)
    run.r.success = run.r.reason is None
    run.r.duration_s = time.monotonic() - t0
    return run.r


async def _push_step(run: ProbeRun, step: StepResult, inbox: PushInbox, late_after: float | None) -> bool:
    card, client = run.card, run.a2a
    assert card is not None and client is not None
    step.a2a_method = client.method(Op.SEND)
    if not declared(card.doc):
        raise StepFailed(Reason.PUSH_NOT_SUPPORTED, f"{NOT_DECLARED}: the push module needs an agent that does")

    async def send(params: dict[str, Any]) -> Answer:
        return await run._call(step, StepName.PUSH, client.call(Op.SEND, params), Op.SEND)

    trip = await round_trip(client, send, inbox, run.t.message, run.deadline, late_after=late_after)
    if trip.skipped:
        step.detail = trip.skipped
        return True
    if trip.failure is not None:
        raise StepFailed(*trip.failure)
    verdict = trip.verdict
    assert verdict is not None
    run.r.push = verdict.delivery()

    def record(check_id: str, status: Status, message: str) -> None:
        run.check(check_id, status, message, step=StepName.PUSH)

    record_verdict(record, verdict)
    step.detail = verdict.summary()
    reason = verdict.reason
    if reason is not None:
        problems = "; ".join(v for ps in verdict.problems.values() for v in ps[:1])
        raise StepFailed(reason, f"task {trip.task_id}: {problems}")
    return False
