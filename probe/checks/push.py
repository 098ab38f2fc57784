"""Judge what reached the push receiver for one task: delivered, through terminal, in order, named, authenticated.

Pure functions over the recorded deliveries, so the conformance suite and the daemon's `push`
module grade delivery the same way, and unit tests need no sockets.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from probe.inbox import Delivery
from probe.reasons import Reason
from probe.results import PushDelivery
from probe.wire.dialects import TERMINAL, Dialect, TaskState, is_regression
from probe.wire.push import delivery_item

_MAX_LISTED = 4
NOT_DECLARED = "the card does not declare capabilities.pushNotifications"


class DeliveryProblem(StrEnum):
    """Why a delivery round trip fell short: the bounded `problem` label of the push metrics."""

    NOT_DELIVERED = "not_delivered"  # nothing reached the receiver
    NO_TERMINAL = "no_terminal"  # updates came, the terminal one did not
    LATE = "late"  # the terminal delivery came after the module's late_after
    UNAUTHENTICATED = "unauthenticated"  # a delivery lacked the Authorization the config asked for
    OUT_OF_ORDER = "out_of_order"  # a state moved backwards, or came after the terminal one
    WRONG_TASK = "wrong_task"  # a delivery named another task, or none
    BAD_PAYLOAD = "bad_payload"  # not strict JSON, or not the version's payload shape


# the primary failure reason for each problem, in order of precedence (the root cause first)
REASON_OF: tuple[tuple[DeliveryProblem, Reason], ...] = (
    (DeliveryProblem.NOT_DELIVERED, Reason.PUSH_NOT_DELIVERED),
    (DeliveryProblem.UNAUTHENTICATED, Reason.PUSH_UNAUTHENTICATED),
    (DeliveryProblem.BAD_PAYLOAD, Reason.PUSH_BAD_PAYLOAD),
    (DeliveryProblem.WRONG_TASK, Reason.PUSH_BAD_PAYLOAD),
    (DeliveryProblem.OUT_OF_ORDER, Reason.PUSH_OUT_OF_ORDER),
    (DeliveryProblem.NO_TERMINAL, Reason.PUSH_NO_TERMINAL),
)


@dataclass(slots=True)
class DeliveryVerdict:
    deliveries: int = 0
    readable: int = 0  # deliveries whose body is the version's payload
    states: list[TaskState] = field(default_factory=list)  # distinct states in arrival order
    first_s: float | None = None  # send -> first accepted delivery
    terminal_s: float | None = None  # send -> first accepted terminal delivery
    terminal: TaskState | None = None
    problems: dict[DeliveryProblem, list[str]] = field(default_factory=dict)

    def add(self, problem: DeliveryProblem, detail: str) -> None:
        bucket = self.problems.setdefault(problem, [])
        if len(bucket) < _MAX_LISTED:
            bucket.append(detail)

    @property
    def reason(self) -> Reason | None:
        """The one root cause; LATE alone is not a failure (it is measured, and alerted on, separately)."""
        return next((r for p, r in REASON_OF if p in self.problems), None)

    def describe(self, problem: DeliveryProblem) -> str:
        return "; ".join(self.problems.get(problem, []))

    def delivery(self) -> PushDelivery:
        return PushDelivery(deliveries=self.deliveries, first_s=self.first_s, terminal_s=self.terminal_s,
                            problems=[p.value for p in self.problems])

    def summary(self) -> str:
        path = " -> ".join(s.value for s in self.states) or "no state"
        return f"{self.deliveries} delivery(ies): {path}"


def judge(dialect: Dialect, deliveries: list[Delivery], task_id: str | None, sent_at: float, *,
          late_after: float | None = None) -> DeliveryVerdict:
    """Grade the deliveries of one registration, in arrival order, for the task the agent created."""
    v = DeliveryVerdict(deliveries=len(deliveries))
    if not deliveries:
        v.add(DeliveryProblem.NOT_DELIVERED, "no delivery reached the receiver")
        return v
    current: TaskState | None = None
    for n, d in enumerate(deliveries, 1):
        if not d.authorized:
            v.add(DeliveryProblem.UNAUTHENTICATED, f"delivery {n} carried no Authorization: Bearer with the "
                                                   "credentials of the config" + _token_note(d))
        if d.body is None:
            v.add(DeliveryProblem.BAD_PAYLOAD, f"delivery {n}: {d.problem}")
            continue
        item, problems = delivery_item(dialect, d.body)
        if item.kind == "unknown" or problems:
            v.add(DeliveryProblem.BAD_PAYLOAD, f"delivery {n}: {'; '.join(problems[:2])}")
        if item.kind == "unknown":
            continue
        v.readable += 1
        if task_id is not None and item.task_id != task_id:
            v.add(DeliveryProblem.WRONG_TASK, f"delivery {n} names task {item.task_id!r}, expected {task_id!r}")
        if d.accepted and v.first_s is None:
            v.first_s = d.at - sent_at
        state = item.state
        if state is None:
            continue  # an artifact update or a message: no state to order
        if current is not None and state is not current and is_regression(current, state):
            v.add(DeliveryProblem.OUT_OF_ORDER, f"delivery {n}: {state.value} after {current.value}")
            continue
        if state is not current:
            v.states.append(state)
            current = state
        if state in TERMINAL and v.terminal is None:
            v.terminal = state
            if d.accepted:
                v.terminal_s = d.at - sent_at
    if v.terminal is None and v.readable:  # nothing readable: the payload is the root cause, not the states
        v.add(DeliveryProblem.NO_TERMINAL, f"no terminal state among {v.summary()}")
    elif late_after is not None and v.terminal_s is not None and v.terminal_s > late_after:
        v.add(DeliveryProblem.LATE, f"the terminal delivery came {v.terminal_s:.1f}s after the send "
                                    f"(late after {late_after:g}s)")
    return v


def _token_note(d: Delivery) -> str:
    if d.token is True:
        return " (only the X-A2A-Notification-Token)"
    if d.token is False:
        return " (and a wrong X-A2A-Notification-Token)"
    return ""
