"""Conformance levels, defined once: full > partial > minimal > non-conformant."""

from __future__ import annotations

from enum import StrEnum

from probe.checks.catalogue import Category, Severity
from probe.checks.push import NOT_DECLARED
from probe.reasons import Reason
from probe.results import CheckResult, ProbeResult, Status, StepName


class Level(StrEnum):
    FULL = "full"
    PARTIAL = "partial"
    MINIMAL = "minimal"
    NON_CONFORMANT = "non-conformant"
    UNKNOWN = "unknown"  # outside the order: a gateway's fault hid the agent


LEVEL_TEXT: dict[Level, str] = {
    Level.FULL: "every MUST and SHOULD check that ran passed (MAY checks are only reported; skips allowed: a "
                "capability the card does not declare, a prompt not configured), and push notifications passed "
                "where the card declares them",
    Level.PARTIAL: "the card and the core lifecycle pass every MUST check; some other check fails (streaming, "
                   "error codes, security, interop, or a SHOULD)",
    Level.MINIMAL: "the card is valid and a basic send (or, with --safe-only, a basic get) works, but a core "
                   "lifecycle MUST check fails",
    Level.NON_CONFORMANT: "the card is missing or invalid or fails a MUST (one the official clients read past "
                          "too), the basic send/get fails, or a request crashed the server (a 5xx or a dropped "
                          "connection: the most severe failure)",
    Level.UNKNOWN: "a gateway in front of the agent failed a call itself (invoke_gateway_error), or the agent or a "
                   "gateway refused a request by rate (rate_limited), and nothing seen of the agent fails a MUST: "
                   "what was kept from the agent cannot be judged",
}
# Offline (`a2a-probe validate`), with no live send: a MUST failure of the card or of a recorded task is
# non-conformant, another MUST failure (e.g. a stream rule) minimal, only SHOULD failures partial.

_BASIC = (StepName.INVOKE, StepName.PING)
SOFT_REASONS = frozenset({Reason.INVOKE_NOT_BLOCKING})
NOT_JUDGED = frozenset({Reason.INVOKE_GATEWAY_ERROR, Reason.RATE_LIMITED})  # the call never reached the agent
CRASH_CHECK = "errors.no_server_errors"


def level(result: ProbeResult) -> Level:
    # a MAY the agent does not do is reported, never held against its level
    failed = [c for c in result.failed_checks() if c.severity is not Severity.MAY]
    must = [c for c in failed if c.severity is Severity.MUST]
    if result.offline:
        return _offline_level(must, failed)
    discover = result.step(StepName.DISCOVER)
    if result.reason is Reason.RATE_LIMITED and discover is not None and discover.status is Status.FAIL:
        return Level.UNKNOWN  # the card was refused by rate: nothing of the agent was seen
    if discover is None or discover.status is Status.FAIL:
        return Level.NON_CONFORMANT
    if any(c.reason in NOT_JUDGED for c in failed):  # a gateway's fault, a rate limit: not the agent's answer
        must = [c for c in must if c.reason not in NOT_JUDGED]
        if any(c.category is Category.AGENT_CARD for c in must):
            return Level.NON_CONFORMANT
        if any(c.category is Category.LIFECYCLE for c in must):
            return Level.MINIMAL
        return Level.PARTIAL if must else Level.UNKNOWN
    basic = next((s for s in result.steps if s.name in _BASIC), None)
    crashed = any(c.id == CRASH_CHECK for c in failed)
    # a send that works but breaks a lifecycle MUST on the way (it did not block) is a working basic send
    works = basic is not None and (basic.status is Status.PASS or basic.reason in SOFT_REASONS)
    if any(c.category is Category.AGENT_CARD for c in must) or not works or crashed:
        return Level.NON_CONFORMANT
    if any(c.category is Category.LIFECYCLE for c in must):
        return Level.MINIMAL
    if failed or _push_untested(result):
        return Level.PARTIAL
    return Level.FULL


def _push_untested(result: ProbeResult) -> bool:
    """Full conformance includes push: an agent that declares it reaches `full` only when push was tested."""
    return any(c.category is Category.PUSH and c.status is Status.SKIP and c.message != NOT_DECLARED
               for c in result.checks)


def _offline_level(must: list[CheckResult], failed: list[CheckResult]) -> Level:
    """A saved card or transcript: judged on what it shows, without a live send."""
    if any(c.category in (Category.AGENT_CARD, Category.LIFECYCLE) for c in must):
        return Level.NON_CONFORMANT
    if must:
        return Level.MINIMAL
    return Level.PARTIAL if failed else Level.FULL
