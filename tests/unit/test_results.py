"""The hot-path constructors of check results build exactly what pydantic's own would."""

from __future__ import annotations

from probe.results import (
    Category,
    CheckResult,
    Severity,
    Status,
    StepName,
    copy_check,
    new_check,
)


def _state(c: CheckResult) -> tuple[object, ...]:
    return (dict(c.__dict__), set(c.__pydantic_fields_set__), c.__pydantic_extra__, c.__pydantic_private__,
            c.model_dump(exclude_unset=True), c.model_dump_json())


def test_new_check_is_model_construct() -> None:
    args = dict(id="card.name", category=Category.AGENT_CARD, severity=Severity.MUST, status=Status.FAIL,
                message="no name", recommendation="add one", step=StepName.VALIDATE, duration_ms=1.5)
    fast = new_check(**args)  # type: ignore[arg-type]
    assert _state(fast) == _state(CheckResult.model_construct(**args))  # type: ignore[arg-type]
    assert fast == CheckResult.model_validate(args)


def test_copy_check_is_model_copy() -> None:
    c = CheckResult(id="x", category=Category.INTERFACE, severity=Severity.SHOULD, status=Status.PASS)
    updates: list[dict[str, object]] = [{}, {"severity": Severity.MAY},
                                        {"status": Status.SKIP, "message": "not graded", "recommendation": ""}]
    for update in updates:
        fast, slow = copy_check(c, **update), c.model_copy(update=update)
        assert _state(fast) == _state(slow) and fast is not c
        assert fast.__pydantic_fields_set__ is not c.__pydantic_fields_set__
    assert c.severity is Severity.SHOULD  # the original is untouched
