from __future__ import annotations

import pytest

from probe.checks.catalogue import make_check
from probe.levels import Level, level
from probe.results import ProbeResult, Status, StepName, StepResult


def _result(basic: Status = Status.PASS, failing: tuple[str, ...] = (), offline: bool = False) -> ProbeResult:
    steps = [StepResult(name=StepName.DISCOVER, status=Status.PASS), StepResult(name=StepName.INVOKE, status=basic)]
    checks = [make_check(cid, Status.FAIL, "x") for cid in failing] + [make_check("card.size", Status.PASS)]
    return ProbeResult(agent="a", target_url="u", steps=[] if offline else steps, checks=checks, offline=offline)


@pytest.mark.parametrize(("basic", "failing", "expected"), [
    (Status.PASS, (), Level.FULL),
    (Status.PASS, ("card.cache_headers",), Level.PARTIAL),  # a SHOULD
    (Status.PASS, ("errors.invalid_request",), Level.PARTIAL),  # a MUST outside the core
    (Status.PASS, ("stream.terminal",), Level.PARTIAL),
    (Status.PASS, ("lifecycle.cancel",), Level.MINIMAL),  # a core lifecycle MUST
    (Status.PASS, ("card.required_fields",), Level.NON_CONFORMANT),
    (Status.FAIL, (), Level.NON_CONFORMANT),  # the basic send failed
    (Status.PASS, ("errors.no_server_errors",), Level.NON_CONFORMANT),  # a crash is the most severe failure
])
def test_levels(basic: Status, failing: tuple[str, ...], expected: Level) -> None:
    assert level(_result(basic, failing)) is expected


def test_no_card_is_non_conformant() -> None:
    r = ProbeResult(agent="a", target_url="u", steps=[StepResult(name=StepName.DISCOVER, status=Status.FAIL)])
    assert level(r) is Level.NON_CONFORMANT


@pytest.mark.parametrize(("failing", "expected"), [
    ((), Level.FULL), (("lifecycle.completed_artifact",), Level.PARTIAL), (("stream.terminal",), Level.MINIMAL),
    (("card.strict_json",), Level.NON_CONFORMANT), (("invoke.dialect",), Level.NON_CONFORMANT),
])
def test_offline_levels(failing: tuple[str, ...], expected: Level) -> None:
    assert level(_result(failing=failing, offline=True)) is expected
