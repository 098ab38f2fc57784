"""What every suite check shares: the one A2A client, fresh ids, bounded calls, and how results are recorded.

Every call goes through the engine's A2A client on the selected binding (JSON-RPC-only checks use its one
tagged raw hatch), bounded by the suite's own deadline; every 5xx or dropped connection is remembered for
errors.no_server_errors.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Any

from probe.checks.catalogue import make_check
from probe.engine import ProbeRun, error_status_hook, note_error_status
from probe.inbox import PushInbox
from probe.results import CheckResult, ProbeResult, Status
from probe.stall import StallWatch, Waited, patiently, stall_note
from probe.target import Target
from probe.wire import a2a_errors, schema
from probe.wire.bindings import A2AError, Answer, Binding, Op, ProblemKind
from probe.wire.card import Card
from probe.wire.client import A2AClient, Reply
from probe.wire.dialects import Dialect, Item, TaskState, state_name
from probe.wire.http import Deadline, WireError


@dataclass(frozen=True, slots=True)
class SuiteOptions:
    safe_only: bool = False
    slow_prompt: str | None = None  # a text that keeps a task running for a while (cancel, subscribe)
    input_prompt: str | None = None  # a text that makes the agent ask for input (multi-turn)
    timeout: float = 120.0  # the whole suite, on top of the basic probe
    peer: Target | None = None  # a second agent for the interop checks
    delegation_prompt: str | None = None
    delegation_expect: str | None = None
    inbox: PushInbox | None = None  # the push receiver (the CLI's listener or the daemon's route)


class Skip(Exception):
    """Raised by a check that cannot run here; the message says why."""


# answers the agent never gave: a gateway's own page, a refusal by rate (the suite's checks set them aside)
SET_ASIDE = frozenset({ProblemKind.GATEWAY, ProblemKind.RATE_LIMITED})
NO_INPUT_PROMPT = "no prompt that makes the agent ask for input (--input-prompt / input_prompt)"


@dataclass
class Suite:
    run: ProbeRun
    opts: SuiteOptions
    deadline: Deadline
    server_errors: list[str] = field(default_factory=list)
    # the WireErrors of calls the client's hooks told `_watch` about (already in server_errors): a stream's broken
    # answer reaches `probe.suite._run_check` untold, and is counted there. The errors themselves (compared by
    # identity), not their ids: an id is another object's once the error is collected
    told: set[WireError] = field(default_factory=set)
    # the answers a gateway in front of the agent gave itself (its 502/503/504 page, a size limit): never the
    # agent's crash, and a check whose call got one is not judged (probe.suite._run_check)
    gateway_answers: list[str] = field(default_factory=list)
    validated: int = 0  # results of the suite's own calls checked against the version's definitions
    invalid: list[str] = field(default_factory=list)  # what those definitions reject (lifecycle.schema)
    completed_task: Item | None = None  # a COMPLETED task created by the suite, reused by several checks
    # an operation the agent answered MethodNotFound -> "depends on <check>, which failed: <message>": the one root
    # cause of every later check of that operation (probe.suite.streaming: SubscribeToTask)
    unimplemented: dict[str, str] = field(default_factory=dict)
    # errors whose details were read (errors.details_typed), and the first few whose details are not typed objects
    detailed_errors: int = 0
    untyped_details: list[str] = field(default_factory=list)
    # JSON-RPC's own errors (-32700, -326xx) whose error.data is not an array: 1.0.0 §9.5's example does that
    free_data: list[str] = field(default_factory=list)
    # JSON-RPC error answers the suite judged (expect_error), and those whose `id` member is not the one due, by
    # fault (errors.response_id): one finding for the agent's id handling, never a failure of the check that
    # provoked the error
    rpc_errors: int = 0
    id_faults: dict[str, list[str]] = field(default_factory=dict)
    # tasks answered to historyLength 0 (GetTask, SendMessage), and those that still carried a history field
    asked_no_history: int = 0
    history_at_zero: list[str] = field(default_factory=list)
    # the suite's own loop-lag watch (probe.stall): a wait for the agent that the probe's stall cut short is not judged
    stall: StallWatch = field(default_factory=StallWatch)
    client: A2AClient = field(init=False)

    def __post_init__(self) -> None:
        base = self.run.a2a
        assert base is not None, "the suite runs only once the engine selected an interface"
        self.client = A2AClient(base.binding, self.deadline)  # the same binding, the suite's own budget
        self.client.hooks.append(self._watch)
        self.client.hooks.append(error_status_hook(self.run.r))
        self.client.hooks.append(self._validate)
        self.client.hooks.append(self._details)
        c = self.client
        self._shapes = {c.method(Op.SEND): schema.Shape.SEND_RESULT, c.method(Op.GET): schema.Shape.TASK,
                        c.method(Op.CANCEL): schema.Shape.TASK}

    def _validate(self, label: str, answer: Answer | None, exc: WireError | None) -> None:
        """The suite's results go through the same strict validation as the engine's (1.0 §5.5/§5.6, 0.3 §11.1.5)."""
        shape = self._shapes.get(label)
        if shape is None or answer is None or answer.error is not None or not isinstance(answer.result, dict):
            return
        version = self.run.r.protocol_version or self.dialect.version
        self.run.stamps.see(answer.result, label)
        verdict = schema.validate(version, self.client.binding.card_name, shape, answer.result)
        self.run.required.see(verdict.required, label)
        self.validated += 1
        problems = verdict.problems + ([f"{p} (not camelCase)" for p in verdict.snake_case] if self.v1 else [])
        if problems and len(self.invalid) < 5:
            self.invalid.append(f"{label}: {'; '.join(problems[:3])}")

    def _details(self, label: str, answer: Answer | None, exc: WireError | None) -> None:
        """Every error's details, for errors.details_typed (gRPC's are binary Any: typed by construction)."""
        err = answer.error if answer is not None else None
        if err is None or err.details is None or err.binding == "grpc":
            return
        self.detailed_errors += 1
        if err.binding == "jsonrpc" and not isinstance(err.details, list) and a2a_errors.jsonrpc_own(err.code):
            # 1.0.0 §9.5 maps details to "error.data (array containing google.protobuf.Any messages)", yet its own
            # example answers -32601 with `"data": {"method": ...}`, and JSON-RPC 2.0 §5.1 lets data be any value;
            # only 1.0.1 removed that example. The card cannot tell 1.0.0 from 1.0.1: not the agent's fault.
            self.free_data.append(f"{label} ({err.name or err.code})")
            return
        why = a2a_errors.untyped_details(err.details)
        if why is not None and len(self.untyped_details) < 3:
            self.untyped_details.append(f"{label} ({err.name or err.code}): {why}")

    def _watch(self, label: str, answer: Answer | None, exc: WireError | None) -> None:
        if answer is not None and answer.problem is not None and answer.problem.kind in SET_ASIDE:
            self.gateway_answers.append(answer.problem.detail)
        elif exc is not None:
            self.told.add(exc)
            self.server_errors.append(f"{label}: {exc}")
        elif answer is not None and answer.status is not None and answer.status >= 500 and not _mapped_501(answer):
            self.server_errors.append(f"{label}: HTTP {answer.status} {answer.snippet[:80]}")
        elif answer is not None and answer.exchange.grpc_status in ("INTERNAL", "UNKNOWN", "DATA_LOSS"):
            self.server_errors.append(f"{label}: gRPC {answer.exchange.grpc_status}")

    @property
    def result(self) -> ProbeResult:
        return self.run.r

    @property
    def card(self) -> Card:
        assert self.run.card is not None
        return self.run.card

    @property
    def target(self) -> Target:
        return self.run.t

    @property
    def binding_name(self) -> str:
        return self.client.binding.name

    @property
    def dialect(self) -> Dialect:
        return self.client.dialect

    @property
    def v1(self) -> bool:
        return self.client.v1

    async def wait(self, aw: Awaitable[object], timeout: float) -> tuple[Waited, str]:
        """Wait up to `timeout` (within the suite's deadline) for the agent, as `probe.stall.patiently` does: a
        pending `aw` is cancelled at the end. With `Waited.STALLED` comes the words a check skips with."""
        budget = max(0.1, min(timeout, self.deadline.remaining()))
        began = time.monotonic()
        waited, stalled = await patiently(aw, budget, self.stall.stalled_seconds,
                                          limit=max(0.0, self.deadline.remaining() - budget))
        return waited, stall_note(stalled, time.monotonic() - began) if waited is Waited.STALLED else ""

    def note_history_at_zero(self, call: str, task: dict[str, Any]) -> None:
        """A task answered to historyLength 0: whether its history field was left out (lifecycle.history_omitted).
        Only an empty list counts: messages there are the count's MUST (history_length, history_on_send), one root
        cause; `null` is ProtoJSON's absent value."""
        self.asked_no_history += 1
        if task.get("history") == []:
            self.history_at_zero.append(f"{call} with historyLength 0 answered \"history\": [] instead of leaving it "
                                        "out")

    def note_id(self, check_id: str, answer: Answer) -> None:
        """A JSON-RPC error answer's `id` member, for errors.response_id. JSON-RPC 2.0 §5: REQUIRED; the request's
        id, or null "if there was an error in detecting the id in the Request object (e.g. Parse error/Invalid
        Request)": null is accepted with -32700 and -32600 (the agent says it could not read the request), and is
        the only id due where the probe's body has none to read (errors.parse_error)."""
        err = answer.error
        if err is None or err.binding != "jsonrpc":
            return
        self.rpc_errors += 1
        fault = answer.id_fault
        if fault is None or (fault.present and fault.value is None and err.code in a2a_errors.NO_REQUEST_ID):
            return
        self.id_faults.setdefault(fault.describe(), []).append(f"{check_id} ({err.name or err.code})")

    def record(self, check_id: str, status: Status, message: str = "", *, duration_ms: float = 0.0,
               recommendation: str | None = None) -> CheckResult:
        c = make_check(check_id, status, message, recommendation=recommendation, duration_ms=duration_ms)
        self.result.checks.append(c)
        return c

    # ---- calls: thin names over the client, so checks read as the spec does

    def message(self, text: str, *, task_id: str | None = None, context_id: str | None = None) -> dict[str, Any]:
        return self.client.message(text, task_id=task_id, context_id=context_id)

    async def send(self, text: str, *, task_id: str | None = None, context_id: str | None = None,
                   immediate: bool = False) -> Reply:
        """SendMessage; returns the answer and the parsed result item (None when the agent answered an error)."""
        return await self.client.send(text, task_id=task_id, context_id=context_id, immediate=immediate)

    async def get_task(self, task_id: str, history_length: int | None = None) -> Reply:
        return await self.client.get(task_id, history_length=history_length)

    def client_on(self, binding: Binding) -> A2AClient:
        """An A2A client on another binding of the interface (another identity's): the suite's budget, and the same
        watch on its answers (5xx, a gateway's own, the error statuses) as the suite's own client."""
        client = A2AClient(binding, self.deadline)
        client.hooks.append(self._watch)
        client.hooks.append(error_status_hook(self.run.r))
        return client

    async def completed(self) -> Item:
        """A COMPLETED task of our own (created once per suite run)."""
        if self.completed_task is None:
            answer, item = await self.send(f"a2a-probe conformance {uuid.uuid4().hex[:8]}")
            if item is None:
                raise Skip(f"needs a completed task, but SendMessage answered {describe_answer(answer)}")
            if item.kind != "task":
                raise Skip("the agent answers with a Message, not a Task, so there is no task to test with")
            if item.state is not TaskState.COMPLETED:
                raise Skip(f"needs a completed task, but the task ended {state_name(item.state)}")
            self.completed_task = item
        return self.completed_task


def _mapped_501(answer: Answer) -> bool:
    """HTTP 501 for a not-supported error where its version's mapping says so (a2a-sdk 0.3's REST choice): an
    answer, not a server error."""
    err = answer.error
    return answer.status == 501 and err is not None and err.name is not None and bool(err.mappings)


def _status_named(s: Suite, err: A2AError, names: set[str]) -> str | None:
    """The expected error an unnamed gRPC error's status stands for. 0.3 (@a2a-js/sdk 0.3 sends InvalidParams as
    INVALID_ARGUMENT with its message alone) asks only for an appropriate status, the one the error's category has
    (§3.3.2 of 1.0 fixed them). 1.0 §10.6 asks an ErrorInfo of "A2A-specific errors" only (§5.4's table, -32001 to
    -32009); a validation error is INVALID_ARGUMENT (§3.3.2), and §10.6's own "standard gRPC invalid argument
    error" example carries no ErrorInfo: so in 1.0 a JSON-RPC standard error (InvalidParams) is named by its
    status too (a2a-go's client reads a bare INVALID_ARGUMENT as ErrInvalidParams, grpcutil/errors.go:171-177),
    never an A2A-specific one, whose missing ErrorInfo is a failure."""
    if err.binding != "grpc" or err.name is not None:
        return None
    fits = (n for n in sorted(names) if err.code in a2a_errors.BY_NAME[n].grpc_statuses())
    return next((n for n in fits if not (s.v1 and a2a_errors.is_a2a_specific(n))), None)


def error_of(answer: Answer) -> A2AError | None:
    return answer.error


def describe_answer(answer: Answer) -> str:
    return answer.describe()


def expect_error(s: Suite, check_id: str, answer: Answer, names: set[str], what: str) -> None:
    """Pass when the answer is an A2A error with one of `names` (any non-5xx transport status, or a 501 its
    version maps the error to)."""
    err = answer.error
    note_error_status(s.result, answer)  # also a refusal read from a stream, which no client hook sees
    s.note_id(check_id, answer)  # the id member is errors.response_id's, whatever this check concludes
    problem = answer.problem
    gateway = problem.detail if problem is not None and problem.kind in SET_ASIDE else None
    if gateway is not None and not (s.gateway_answers and s.gateway_answers[-1] is gateway):  # a stream's too
        s.gateway_answers.append(gateway)
    expected = " or ".join(f"{n} ({a2a_errors.code_of(n)})" for n in sorted(names, key=a2a_errors.code_of,
                                                                            reverse=True))
    if err is not None and err.name in names and ((answer.status or 0) < 500 or _mapped_501(answer)):
        mapping = f" [status per the {'/'.join(err.mappings)} mapping]" if err.mappings else ""
        s.record(check_id, Status.PASS, f"{what}: {err.describe()}{mapping}")
    elif err is not None and (fits := _status_named(s, err, names)):
        why = ("1.0 §10.6 asks an ErrorInfo of A2A-specific errors only; §3.3.2: a validation error is "
               "INVALID_ARGUMENT" if s.v1 else "0.3 §3.2.2: A2A errors map to appropriate gRPC status codes")
        s.record(check_id, Status.PASS, f"{what}: {err.describe()} [no ErrorInfo names the error; {err.code} is "
                 f"{fits}'s status, {why}]")
    else:
        s.record(check_id, Status.FAIL, f"{what}: expected {expected}, got {describe_answer(answer)}")
