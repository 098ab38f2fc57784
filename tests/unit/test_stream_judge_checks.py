"""The judge's checks of a stream that broke nothing are kept per redaction epoch: the same shared objects, in the
same order, as building them through `shared_check`; a failing stream and a new epoch build them again."""

from __future__ import annotations

from typing import Any

import pytest

from probe import redact
from probe.checks import stream as stream_checks
from probe.checks.catalogue import shared_check
from probe.checks.stream import _REASON_BY_CHECK, StreamJudge
from probe.results import Status, StepName
from probe.wire.dialects import for_version

V1 = for_version("1.0")
TS = "2026-12-01T16:22:10Z"
GOOD: list[dict[str, Any]] = [
    {"task": {"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_SUBMITTED", "timestamp": TS}}},
    {"statusUpdate": {"taskId": "t", "contextId": "c", "status": {"state": "TASK_STATE_WORKING", "timestamp": TS}}},
    {"statusUpdate": {"taskId": "t", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED", "timestamp": TS}}},
]


class _Env:
    def __init__(self, result: Any) -> None:
        self.result, self.problems, self.error = result, [], None


def _judge(events: list[dict[str, Any]], version: str | None = "1.0") -> StreamJudge:
    judge = StreamJudge(V1, version=version)
    judge.opened("text/event-stream")
    for ev in events:
        judge.on_event("message", _Env(ev), None)
    judge.closed = True
    return judge


def _built(version: str | None) -> list[Any]:
    """What the general path hands out for a stream without problems."""
    return [shared_check(cid, Status.PASS, step=StepName.STREAM) for cid, _ in _REASON_BY_CHECK
            if not (cid == "stream.schema" and version is None)]


@pytest.mark.parametrize("version", ["1.0", None])
def test_a_clean_streams_checks_are_the_shared_ones(version: str | None) -> None:
    stream_checks._ALL_PASSED.clear()
    first = _judge(GOOD, version).checks()
    again = _judge(GOOD, version).checks()
    assert stream_checks._ALL_PASSED[version is not None][0] == redact.epoch()  # kept, so `again` came from it
    built = _built(version)
    assert [id(c) for c in first] == [id(c) for c in again] == [id(c) for c in built]
    assert again is not first  # each result gets its own list


def test_a_failing_stream_and_a_new_epoch_build_their_checks() -> None:
    stream_checks._ALL_PASSED.clear()
    _judge(GOOD).checks()
    bad = _judge([GOOD[1], GOOD[0]]).checks()  # the first event is not the Task
    assert any(c.status is Status.FAIL and c.id == "stream.first_event" for c in bad)
    kept = stream_checks._ALL_PASSED[True][1]
    redact.register("a-secret-registered-later")  # a new epoch: what was shared is shared no longer
    fresh = _judge(GOOD).checks()
    assert all(redact.is_shared(c) for c in fresh)
    assert [id(c) for c in fresh] != [id(c) for c in kept]
    assert [(c.id, c.status, c.message) for c in fresh] == [(c.id, c.status, c.message) for c in kept]
