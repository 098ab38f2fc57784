"""Grade check results by the protocol version the agent was probed in, from the registry's rules.

A check's level is the one that version's specification gives it; a check whose requirement the version
does not have is not graded (skipped, saying so and what was observed), so a 1.0 rule never fails a 0.3 agent.
"""

from __future__ import annotations

from probe.checks.catalogue import Rule, Severity, get
from probe.results import CheckResult, ProbeResult, Status


def family(version: str | None) -> str | None:
    """"1.0.1" -> "1.0", "0.3.0" -> "0.3", "0.2.5" -> "0.2"; None when unknown."""
    if not version:
        return None
    parts = version.strip().split(".")
    return ".".join(parts[:2]) if len(parts) >= 2 else version.strip()


def rule_for(check_id: str, version: str | None) -> Rule | None:
    fam = family(version)
    return get(check_id).rules.get(fam) if fam else None


def level_of(check_id: str, version: str | None) -> Severity | None:
    """The check's level in `version`; None when that version has no such requirement."""
    check = get(check_id)
    if not check.rules:
        return check.severity
    fam = family(version)
    if fam is None:
        return check.severity
    rule = check.rules.get(fam)
    return rule.level if rule else None


def grade(result: ProbeResult) -> None:
    """Apply the probed version's levels to every check result, in place."""
    version = result.protocol_version
    if family(version) is None:
        return
    for index, c in enumerate(result.checks):
        graded = _graded(c, version)
        if graded is not c:
            result.checks[index] = graded


def _graded(c: CheckResult, version: str | None) -> CheckResult:
    check = get(c.id)
    if not check.rules:
        return c
    level = level_of(c.id, version)
    if level is None:
        others = ", ".join(f"{v} {r.section}" for v, r in check.rules.items())
        observed = f"; observed: {c.message}" if c.message and c.message != check.title else ""
        return c.model_copy(update={
            "status": Status.SKIP, "recommendation": "",
            "message": f"not graded: A2A {family(version)} has no such requirement ({others}){observed}"})
    if level is c.severity:
        return c
    return c.model_copy(update={"severity": level})
