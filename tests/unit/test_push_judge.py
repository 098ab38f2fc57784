"""The delivery judge: one verdict for what reached the receiver, per protocol version."""

from __future__ import annotations

from typing import Any

import pytest

from probe.checks.push import DeliveryProblem, judge
from probe.inbox import Delivery
from probe.reasons import Reason
from probe.wire.dialects import V03, V1, TaskState


def v1_status(state: str, task: str = "t1") -> dict[str, Any]:
    return {"statusUpdate": {"taskId": task, "contextId": "c1", "status": {"state": f"TASK_STATE_{state}"}}}


def v03_task(state: str, task: str = "t1") -> dict[str, Any]:
    return {"kind": "task", "id": task, "contextId": "c1", "status": {"state": state}}


def delivered(*bodies: dict[str, Any] | None, authorized: bool = True, start: float = 1.0) -> list[Delivery]:
    return [Delivery(start + i, authorized, None, "application/a2a+json", body=b,
                     problem=None if b is not None else "invalid JSON") for i, b in enumerate(bodies)]


def test_in_order_through_terminal_passes_with_latencies() -> None:
    v = judge(V1, delivered(v1_status("SUBMITTED"), v1_status("WORKING"), v1_status("COMPLETED")), "t1", 0.5)
    assert v.problems == {} and v.reason is None
    assert v.states == [TaskState.SUBMITTED, TaskState.WORKING, TaskState.COMPLETED]
    assert v.first_s == pytest.approx(0.5) and v.terminal_s == pytest.approx(2.5)


def test_duplicates_are_tolerated() -> None:
    v = judge(V1, delivered(v1_status("WORKING"), v1_status("WORKING"), v1_status("COMPLETED"),
                            v1_status("COMPLETED")), "t1", 0.0)
    assert v.problems == {}


def test_nothing_delivered() -> None:
    v = judge(V1, [], "t1", 0.0)
    assert set(v.problems) == {DeliveryProblem.NOT_DELIVERED} and v.reason is Reason.PUSH_NOT_DELIVERED


def test_no_terminal() -> None:
    v = judge(V1, delivered(v1_status("WORKING")), "t1", 0.0)
    assert v.reason is Reason.PUSH_NO_TERMINAL


@pytest.mark.parametrize("order", [("COMPLETED", "WORKING"), ("WORKING", "SUBMITTED", "COMPLETED")])
def test_out_of_order(order: tuple[str, ...]) -> None:
    v = judge(V1, delivered(*(v1_status(s) for s in order)), "t1", 0.0)
    assert DeliveryProblem.OUT_OF_ORDER in v.problems and v.reason is Reason.PUSH_OUT_OF_ORDER


def test_unauthenticated_is_the_root_cause_over_order() -> None:
    v = judge(V1, delivered(v1_status("COMPLETED"), v1_status("WORKING"), authorized=False), "t1", 0.0)
    assert v.reason is Reason.PUSH_UNAUTHENTICATED
    assert v.terminal_s is None  # refused deliveries do not count as delivered in time


def test_wrong_task() -> None:
    v = judge(V1, delivered(v1_status("COMPLETED", task="other")), "t1", 0.0)
    assert DeliveryProblem.WRONG_TASK in v.problems and v.reason is Reason.PUSH_BAD_PAYLOAD


def test_1_0_requires_a_stream_response() -> None:
    v = judge(V1, delivered(v03_task("completed")), "t1", 0.0)
    assert DeliveryProblem.BAD_PAYLOAD in v.problems


def test_malformed_body() -> None:
    v = judge(V1, delivered(None), "t1", 0.0)
    assert v.reason is Reason.PUSH_BAD_PAYLOAD


@pytest.mark.parametrize("body", [v03_task("completed"),
                                  {"kind": "status-update", "taskId": "t1", "contextId": "c1",
                                   "status": {"state": "completed"}, "final": True},
                                  v1_status("COMPLETED")])
def test_0_3_accepts_task_event_or_stream_response(body: dict[str, Any]) -> None:
    v = judge(V03, delivered(body), "t1", 0.0)
    assert v.problems == {} and v.terminal is TaskState.COMPLETED


def test_late_is_measured_not_failed() -> None:
    v = judge(V1, delivered(v1_status("COMPLETED"), start=5.0), "t1", 0.0, late_after=2.0)
    assert DeliveryProblem.LATE in v.problems and v.reason is None
