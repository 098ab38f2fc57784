"""Console logs are for a person: one line per event, probes only when their state changes (or the probe itself
errs), every probe with --log-level debug. JSON logs keep every probe with every field."""

from __future__ import annotations

import io
import json

import pytest
import structlog

from probe import logs
from probe.reasons import Reason
from probe.results import ProbeResult, Status, StepName, StepResult

SEQUENCE = [True, True, False, False, True, True]  # pass, pass, fail, fail, pass, pass


def _result(success: bool, reason: Reason | None = None) -> ProbeResult:
    reason = reason or (None if success else Reason.INVOKE_ROUTE_NOT_FOUND)
    step = StepResult(name=StepName.PING, status=Status.PASS if success else Status.FAIL, http_status=200 if success
                      else 404, a2a_method="GetTask", detail="" if success else "GetTask answered HTTP 404\n(body)")
    return ProbeResult(agent="a", target_url="http://127.0.0.1:9", success=success, reason=reason, steps=[step],
                       duration_s=0.0123)


def _log(fmt: str, level: str, results: list[ProbeResult]) -> list[str]:
    out = io.StringIO()
    logs.configure(level, fmt, stream=out)
    for i, r in enumerate(results):
        logs.log_probe("ping", r, f"id-{i}")
    return out.getvalue().splitlines()


def test_console_shows_only_state_changes_one_line_each() -> None:
    lines = _log("console", "info", [_result(ok) for ok in SEQUENCE])
    assert len(lines) == 3, lines  # first result, pass -> fail, fail -> pass
    assert "a/ping PASS (first result)" in lines[0] and "HTTP 200" in lines[0] and "12 ms" in lines[0]
    assert "a/ping FAIL (was pass) invoke_route_not_found HTTP 404" in lines[1] and "WARNING" in lines[1]
    assert "GetTask answered HTTP 404 (body)" in lines[1]  # the detail, on the same line
    assert "a/ping PASS (was fail)" in lines[2]


def test_console_debug_shows_every_probe() -> None:
    lines = _log("console", "debug", [_result(ok) for ok in SEQUENCE])
    assert len(lines) == len(SEQUENCE) and sum("(unchanged)" in line for line in lines) == 3


@pytest.mark.parametrize("reason", [Reason.PROBE_CONFIG_ERROR, Reason.PROBE_ERROR])
def test_console_always_shows_the_probes_own_errors(reason: Reason) -> None:
    lines = _log("console", "info", [_result(False, reason)] * 3)
    assert len(lines) == 3 and all("ERROR" in line and reason.value in line for line in lines)


def test_json_logs_keep_every_probe_and_every_field() -> None:
    lines = _log("json", "info", [_result(ok) for ok in SEQUENCE])
    events = [json.loads(line) for line in lines]
    assert len(events) == len(SEQUENCE)
    assert [e["verdict"] for e in events] == ["pass" if ok else "fail" for ok in SEQUENCE]
    assert set(events[2]) == set(logs.probe_fields("ping", _result(False), "x")) | {"event", "level", "timestamp"}


def test_console_exceptions_are_one_line() -> None:
    out = io.StringIO()
    logs.configure("info", "console", stream=out)
    try:
        raise ValueError("boom\nsecond line")
    except ValueError:
        structlog.get_logger("t").exception("probe_internal_error", agent="a")
    lines = out.getvalue().splitlines()
    assert len(lines) == 1 and "error=ValueError: boom second line" in lines[0] and "Traceback" not in lines[0]
