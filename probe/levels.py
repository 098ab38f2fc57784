"""Conformance levels, defined once: full > partial > minimal > non-conformant."""

from __future__ import annotations

from enum import StrEnum

from probe.checks.catalogue import Category, Severity
from probe.results import ProbeResult, Status, StepName


class Level(StrEnum):
    FULL = "full"
    PARTIAL = "partial"
    MINIMAL = "minimal"
    NON_CONFORMANT = "non-conformant"


LEVEL_TEXT: dict[Level, str] = {
    Level.FULL: "every check that ran passed (skips allowed)",
    Level.PARTIAL: "the card and the core lifecycle pass every MUST check; some SHOULD/MAY checks fail",
    Level.MINIMAL: "the card is valid and a basic send works, but some other MUST check fails (e.g. streaming)",
    Level.NON_CONFORMANT: "the card is missing or invalid, or the core lifecycle (send to a terminal task) fails",
}

_CORE = (Category.AGENT_CARD, Category.LIFECYCLE)


def level(result: ProbeResult) -> Level:
    discover = result.step(StepName.DISCOVER)
    if discover is None or discover.status is Status.FAIL:
        return Level.NON_CONFORMANT
    failed = result.failed_checks()
    must = [c for c in failed if c.severity is Severity.MUST]
    if any(c.category in _CORE for c in must):
        return Level.NON_CONFORMANT
    invoke = result.step(StepName.INVOKE)
    if invoke is None or invoke.status is not Status.PASS:
        return Level.NON_CONFORMANT
    if must:
        return Level.MINIMAL
    return Level.PARTIAL if failed else Level.FULL
