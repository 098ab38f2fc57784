"""Security checks: a card that declares security must reject a call without credentials, and (with a second identity
configured) one caller must neither reach another's task nor learn that it exists."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from urllib.parse import urljoin

from probe.checks import grading
from probe.checks.auth import Anonymous, anonymous_headers, anonymous_outcome, declares_security
from probe.results import Status
from probe.suite import push
from probe.suite.context import Skip, Suite, describe_answer
from probe.suite.streaming import refusal
from probe.trust import auth as authflows
from probe.wire.bindings import Answer, Op, ProblemKind
from probe.wire.client import A2AClient
from probe.wire.http import AuthTokenFailed, without_credentials


async def unauthenticated_rejected(s: Suite) -> None:
    if not declares_security(s.card.doc):
        raise Skip("the card declares no security requirements")
    strip = _anonymous(s)
    with without_credentials():  # none of the auth flow's credentials either (headers, query, cookie)
        call, _ = await s.client.get(f"a2a-probe-auth-{uuid.uuid4()}", headers=strip)
    err, seen = call.error, anonymous_outcome(call)
    if call.status == 401:
        s.record("security.challenge", Status.PASS if call.challenge else Status.FAIL,
                 f"WWW-Authenticate: {call.challenge[:80]}" if call.challenge else "401 without WWW-Authenticate")
    else:
        s.record("security.challenge", Status.SKIP, f"no 401 to inspect (HTTP {call.status})")
    if seen is Anonymous.REFUSED:
        s.record("security.unauthenticated_rejected", Status.PASS, f"HTTP {call.status} without credentials"
                 if call.status in (401, 403) else f"refused without credentials: {call.describe()}")
    elif err is not None and seen is Anonymous.OTHER:
        s.record("security.unauthenticated_rejected", Status.PASS, f"rejected: {err.describe()}")
    else:
        got = err.describe() if err else call.describe()
        s.record("security.unauthenticated_rejected", Status.FAIL,
                 f"a call without credentials was processed ({got}) although the card declares security")


def _anonymous(s: Suite) -> dict[str, str | None]:
    return anonymous_headers(s.run.t.headers)


def declares_extended_card(doc: dict[str, object]) -> bool:
    caps = doc.get("capabilities")
    return (isinstance(caps, dict) and caps.get("extendedAgentCard") is True) or \
        doc.get("supportsAuthenticatedExtendedCard") is True


async def extended_card_auth(s: Suite) -> None:
    """1.0 §13.3 / 0.3 §7.10 / 0.2 §7.10: the extended card is for authenticated callers only."""
    if not declares_extended_card(s.card.doc):
        raise Skip("the card declares no extended card")
    status: int | None
    if s.card.family == "0.2":  # a plain HTTP GET next to the interface, not a JSON-RPC method (0.2.5 §7.10)
        url = urljoin((s.result.interface_url or s.card.url).rstrip("/") + "/", "../agent/authenticatedExtendedCard")
        with without_credentials():
            resp = await s.run.client.request("GET", url, deadline=s.deadline, headers={"Accept": "application/json"},
                                              max_bytes=1 << 20, config=s.run.transport)
        status, what, served = resp.status, f"GET {resp.exchange.url} without credentials", resp.status == 200
        refused_other = "" if served else f"HTTP {status}"
    else:
        with without_credentials():
            answer = await s.client.call(Op.EXTENDED_CARD, {}, headers=_anonymous(s))
        status, what = answer.status, f"{answer.method} without credentials"
        served = answer.error is None and answer.problem is None and isinstance(answer.result, dict)
        if answer.problem is not None and answer.problem.kind is ProblemKind.AUTH:
            status = status or 401  # gRPC UNAUTHENTICATED / PERMISSION_DENIED
        refused_other = describe_answer(answer)
    if served:
        s.record("security.extended_card_auth", Status.FAIL, f"{what}: the extended card was served (HTTP {status})")
    elif status in (401, 403):
        s.record("security.extended_card_auth", Status.PASS, f"{what}: refused, HTTP {status}")
    else:
        s.record("security.extended_card_auth", Status.FAIL,
                 f"{what}: refused, but not as an authentication failure (expected HTTP 401 or 403, gRPC "
                 f"UNAUTHENTICATED): {refused_other}")


# ---- security.scoped_access: a second identity must neither reach the first's task nor learn that it exists

NO_OTHER_IDENTITY = ("no second identity configured: give one as another caller the agent must keep apart from the "
                     "first (check: --other-bearer-token-env VAR or --other-header K=V; the daemon: an agent's "
                     "other_auth)")
_SCOPED = "security.scoped_access"


def _missing() -> str:
    return f"a2a-probe-missing-{uuid.uuid4()}"


def _shape(answer: Answer | None) -> tuple[object, ...]:
    """What tells one answer from another to a client: the A2A error (by name, else its code), the HTTP status and
    the gRPC status. The error's message is not compared: it may quote the id asked for."""
    if answer is None:
        return ("a stream",)
    status, grpc = answer.status, answer.exchange.grpc_status
    if answer.error is not None:
        return ("error", answer.error.name or answer.error.code, status, grpc)
    if answer.problem is not None:
        return ("problem", answer.problem.kind, status, grpc)
    return ("result", status, grpc)


def _said(answer: Answer | None) -> str:
    return "a stream" if answer is None else describe_answer(answer)[:120]


def _listed(answer: Answer, task_id: str) -> bool:
    result = answer.result if answer.error is None else None
    tasks = result.get("tasks") if isinstance(result, dict) else None
    return isinstance(tasks, list) and any(isinstance(t, dict) and t.get("id") == task_id for t in tasks)


@dataclass
class _Scope:
    """What the second identity's answers on the first identity's task showed, operation by operation."""

    task_id: str
    seen: list[str] = field(default_factory=list)  # it got the task or its data: results are not scoped
    revealed: list[str] = field(default_factory=list)  # refused otherwise than an unknown id: existence revealed
    alike: list[str] = field(default_factory=list)  # answered as for an id that does not exist

    def compare(self, op: str, unknown: Answer | None, got: Answer | None, *, reached: bool) -> None:
        if reached:
            verb = ("opened a stream of it" if got is None else "listed it" if op.startswith("ListTasks")
                    else "listed its push configs" if op.startswith("ListTaskPush") else "answered it")
            self.seen.append(f"{op} {verb}")
        elif _shape(unknown) != _shape(got):
            self.revealed.append(f"{op}: {_said(got)}, where an id that does not exist gets {_said(unknown)}")
        else:
            self.alike.append(op)


async def scoped_access(s: Suite) -> None:
    """1.0 §13.1 / §3.3.2: a second caller gets, cancels, lists the push configs of, subscribes to and lists the first
    caller's task exactly as a task that does not exist; never the task, never a refusal that says it exists."""
    other = s.target.other_auth
    if other is None:
        raise Skip(NO_OTHER_IDENTITY)
    if grading.level_of(_SCOPED, s.result.protocol_version, s.result.binding) is None:
        raise Skip(f"not a rule of A2A {s.result.protocol_version}: its §4.6 leaves authorization to the "
                   "implementation and says nothing of other callers' tasks")
    if not declares_security(s.card.doc):
        raise Skip("the card declares no security requirements: it authenticates no caller to scope tasks to")
    if s.run.withheld:
        raise Skip("the interface is on another origin than the credentials are configured for: neither identity's "
                   "were sent")
    task = await s.completed()  # the first identity's, as the suite's other checks use it
    assert task.task_id is not None
    answer, own = await s.get_task(task.task_id)
    if own is None or own.task_id != task.task_id:
        raise Skip(f"inconclusive: the first identity's own GetTask of its task {task.task_id} answered "
                   f"{describe_answer(answer)[:150]}, so another caller's answer cannot be told apart from it")
    t = s.target
    flow = authflows.build(other, s.card.doc, [t.url, t.card_url or t.url, s.card.url], s.run.transport)
    if flow.problems:
        raise Skip("the second identity's credentials cannot be placed: " + "; ".join(flow.problems))
    try:
        await flow.prepare(s.run.client, s.deadline)
    except AuthTokenFailed as exc:
        raise Skip(f"the second identity's token could not be obtained: {exc}"[:300]) from None
    binding = s.run.rebind(flow)
    try:
        scope = await _as_other(s, s.client_on(binding), task.task_id, task.context_id)
    finally:
        await binding.close()
    tid = task.task_id
    if scope.seen:
        also = f"; other answers differ from an unknown id's too: {'; '.join(scope.revealed)}" if scope.revealed else ""
        s.record(_SCOPED, Status.FAIL, f"tasks are not scoped to their caller: the second identity reaches the first "
                 f"identity's task {tid} ({'; '.join(scope.seen)}){also}"[:600])
    elif scope.revealed:
        s.record(_SCOPED, Status.FAIL, f"the second identity is refused the first identity's task {tid} otherwise "
                 f"than a task that does not exist, which reveals that it exists: {'; '.join(scope.revealed)}"[:600])
    else:
        s.record(_SCOPED, Status.PASS, f"as the second identity, {', '.join(scope.alike)} on the first identity's "
                 "task answered as for a task that does not exist, and no listing held it")


async def _as_other(s: Suite, b: A2AClient, tid: str, ctx: str | None) -> _Scope:
    scope = _Scope(tid)
    unknown, _ = await b.get(_missing())
    if anonymous_outcome(unknown) is Anonymous.REFUSED:
        raise Skip(f"the second identity is refused outright (GetTask of an unknown id: {_said(unknown)}): check "
                   "its credentials; scoping cannot be seen")
    if unknown.error is None:
        raise Skip(f"inconclusive: as the second identity, GetTask of an id that does not exist answered "
                   f"{_said(unknown)}, not an A2A error, so there is no refusal to compare with "
                   "(errors.task_not_found)")
    got, item = await b.get(tid)
    scope.compare("GetTask", unknown, got, reached=item is not None and item.task_id == tid)
    unknown, _ = await b.cancel(_missing())
    got, item = await b.cancel(tid)
    scope.compare("CancelTask", unknown, got, reached=item is not None and item.task_id == tid)
    if push.declared(s.card.doc):  # a task's push configs are the task's: another caller's listing is its own
        unknown = await b.push_list(_missing())
        got = await b.push_list(tid)
        served = got.error is None and got.problem is None and got.has_result and unknown.error is not None
        scope.compare("ListTaskPushNotificationConfigs", unknown, got, reached=served)
    if s.card.streaming:
        async with b.subscribe(_missing()) as es:
            unknown_sub = await refusal(es)
        async with b.subscribe(tid) as es:
            got_sub = await refusal(es)
        opened = got_sub is None or (got_sub.error is None and got_sub.has_result)
        scope.compare("SubscribeToTask", unknown_sub, got_sub,
                      reached=opened and _shape(unknown_sub) != _shape(got_sub))
    if s.v1:  # ListTasks is a 1.0 operation; §13.1: scoped "even when contextId or other filter parameters are not
        # specified"
        everything = await b.list()
        if _listed(everything, tid):
            scope.seen.append("ListTasks without a filter listed it")
        else:
            scope.alike.append("ListTasks")
        if ctx:
            unknown = await b.list(context_id=_missing())
            got = await b.list(context_id=ctx)
            scope.compare(f"ListTasks(contextId={ctx})", unknown, got, reached=_listed(got, tid))
    return scope


CHECKS = (unauthenticated_rejected, extended_card_auth, scoped_access)
IDS = {unauthenticated_rejected: ("security.unauthenticated_rejected", "security.challenge"),
       extended_card_auth: ("security.extended_card_auth",), scoped_access: (_SCOPED,)}
