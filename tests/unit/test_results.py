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
    pack_check,
    unpack_check,
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


def test_a_packed_check_unpacks_to_a_copy_of_the_original() -> None:
    c = new_check("card.name", Category.AGENT_CARD, Severity.MUST, Status.FAIL, "no name", "add one", StepName.VALIDATE,
                  0.0)
    packed = pack_check(c)
    back = unpack_check(packed)
    assert _state(back) == _state(copy_check(c)) and back is not c
    back.reason = None
    back.message = "changed"  # a later in-place change (grading, agreement) never reaches the cache
    assert _state(unpack_check(packed)) == _state(c)
