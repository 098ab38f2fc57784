"""The one result model every consumer reads: CLI, daemon, metrics, logs and reports."""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum

from pydantic import BaseModel, Field

from probe.checks.catalogue import Category, Severity
from probe.checks.catalogue import get as get_check
from probe.reasons import Reason


class Status(StrEnum):
    PASS = "pass"
    FAIL = "fail"
    SKIP = "skip"


class StepName(StrEnum):
    DISCOVER = "discover"
    VALIDATE = "validate"
    PING = "ping"
    INVOKE = "invoke"
    STREAM = "stream"
    PUSH = "push"
    SUITE = "suite"


class HttpPhases(BaseModel):
    """Seconds spent in each phase of one HTTP exchange (blackbox_exporter's phase names)."""

    resolve: float = 0.0
    connect: float = 0.0
    processing: float = 0.0  # request sent -> response headers (time to first byte)
    transfer: float = 0.0  # response headers -> body read (or stream end)


class HttpExchange(BaseModel):
    method: str
    url: str  # credentials never appear in URLs we record (see probe.redact)
    status: int | None = None
    content_type: str | None = None
    phases: HttpPhases = Field(default_factory=HttpPhases)
    duration_s: float = 0.0
    retried: str | None = None  # why the request was sent again on a fresh connection (see probe.wire.http)


class CheckResult(BaseModel):
    id: str
    category: Category
    severity: Severity
    status: Status
    message: str = ""
    recommendation: str = ""
    step: StepName | None = None
    duration_ms: float = 0.0
    reason: Reason | None = None  # set on the failed check that carries the verdict's reason


class StepResult(BaseModel):
    name: StepName
    status: Status = Status.SKIP
    duration_s: float = 0.0
    http_status: int | None = None
    reason: Reason | None = None
    detail: str = ""
    a2a_method: str | None = None
    exchanges: list[HttpExchange] = Field(default_factory=list)


class PushDelivery(BaseModel):
    """What one push round trip delivered (the daemon's push module): counts, latencies, bounded problems."""

    deliveries: int = 0
    first_s: float | None = None  # send -> first accepted delivery
    terminal_s: float | None = None  # send -> terminal accepted delivery
    problems: list[str] = Field(default_factory=list)  # probe.checks.push.DeliveryProblem values


class ProbeResult(BaseModel):
    agent: str
    target_url: str
    card_url: str | None = None
    interface_url: str | None = None
    binding: str | None = None
    protocol_version: str | None = None
    card_name: str | None = None
    card_version: str | None = None
    card_signature: str | None = None  # probe.trust.signatures.Outcome, when a trusted JWKS is configured
    started_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    duration_s: float = 0.0
    success: bool = False
    reason: Reason | None = None
    offline: bool = False  # judged from a saved card or transcript, without a live call
    # a failure before any step ran (the probe's own config, e.g. a credential it cannot read): what, in words
    problem: str | None = None
    steps: list[StepResult] = Field(default_factory=list)
    checks: list[CheckResult] = Field(default_factory=list)
    push: PushDelivery | None = None  # set by the push module

    def step(self, name: StepName) -> StepResult | None:
        return next((s for s in self.steps if s.name == name), None)

    def check(self, check_id: str) -> CheckResult | None:
        return next((c for c in self.checks if c.id == check_id), None)

    def failed_checks(self) -> list[CheckResult]:
        return [c for c in self.checks if c.status is Status.FAIL]


def from_problems(check_id: str, problems: list[str], ok_message: str = "", *, step: StepName | None = None,
                  listed: int = 8) -> CheckResult:
    """PASS when there are no problems, else FAIL listing them, so a person can fix them all in one pass."""
    if not problems:
        return make_check(check_id, Status.PASS, ok_message, step=step)
    more = f" … (+{len(problems) - listed} more)" if len(problems) > listed else ""
    return make_check(check_id, Status.FAIL, "; ".join(problems[:listed]) + more, step=step)


def make_check(check_id: str, status: Status, message: str = "", *, step: StepName | None = None,
               recommendation: str | None = None, duration_ms: float = 0.0) -> CheckResult:
    """A result for a catalogued check; the catalogue supplies category, severity and the default advice."""
    spec = get_check(check_id)
    rec = "" if status is Status.PASS else (recommendation or spec.recommendation)
    # every field comes typed from the catalogue and our own enums: skip re-validation on the hot path
    return CheckResult.model_construct(id=spec.id, category=spec.category, severity=spec.severity, status=status,
                                       message=message or spec.title, recommendation=rec, step=step,
                                       duration_ms=duration_ms)
