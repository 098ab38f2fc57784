"""The one result model every consumer reads: CLI, daemon, metrics, logs and reports.

A leaf: it imports nothing else from the probe, so every layer can use it (see tests/unit/test_layers.py).
"""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum

from pydantic import BaseModel, Field

from probe.reasons import Reason


class Severity(StrEnum):
    MUST = "MUST"
    SHOULD = "SHOULD"
    MAY = "MAY"


class Category(StrEnum):
    AGENT_CARD = "agent-card"
    INTERFACE = "interface"
    LIFECYCLE = "lifecycle"
    STREAMING = "streaming"
    ERRORS = "error-handling"
    SECURITY = "security"
    INTEROP = "interop"
    PUSH = "push-notifications"
    PROBE = "probe"


class Status(StrEnum):
    PASS = "pass"
    FAIL = "fail"
    SKIP = "skip"


class StepName(StrEnum):
    DISCOVER = "discover"
    VALIDATE = "validate"
    AUTH = "auth"  # the probe's own token exchange (OAuth2 / OIDC), when configured
    EXTENDED_CARD = "extended_card"  # the authenticated extended card, when the card declares one
    PING = "ping"
    INVOKE = "invoke"
    STREAM = "stream"
    PUSH = "push"
    SUITE = "suite"


class BindingName(StrEnum):
    """The bounded binding names: the `binding` label on metrics, config `bindings:`, report entries (never the
    card's own spelling, which an agent chooses)."""

    JSONRPC = "jsonrpc"
    HTTP_JSON = "http_json"
    GRPC = "grpc"

    @property
    def card_name(self) -> str:
        """The card's protocolBinding for this binding."""
        return _CARD_NAMES[self]

    @classmethod
    def of(cls, protocol_binding: str | None) -> BindingName | None:
        """The bounded name of a card's protocolBinding (any case), or of a bounded name; None when unknown."""
        if not protocol_binding:
            return None
        return _BY_CARD_NAME.get(protocol_binding.upper()) or _BY_VALUE.get(protocol_binding)


_CARD_NAMES = {BindingName.JSONRPC: "JSONRPC", BindingName.HTTP_JSON: "HTTP+JSON", BindingName.GRPC: "GRPC"}
_BY_CARD_NAME = {card: name for name, card in _CARD_NAMES.items()}
_BY_VALUE = {name.value: name for name in BindingName}


class Transport(StrEnum):
    HTTP = "http"  # JSON-RPC and HTTP+JSON
    GRPC = "grpc"


class HttpPhases(BaseModel):
    """Seconds spent in each phase of one exchange (blackbox_exporter's phase names); gRPC fills the same ones."""

    resolve: float = 0.0
    connect: float = 0.0
    tls: float = 0.0  # the TLS handshake (0 on plain http and on a reused connection)
    processing: float = 0.0  # request sent -> response headers (time to first byte)
    transfer: float = 0.0  # response headers -> body read (or stream end)


class TlsInfo(BaseModel):
    """What the TLS connection of one exchange negotiated; expiry times are Unix seconds."""

    version: str  # e.g. TLSv1.3 (the probe offers a fixed list, so the values are bounded)
    cipher: str
    earliest_expiry: float | None = None  # across the chain the server presented
    leaf_expiry: float | None = None
    verified: bool = True  # False only when the agent is configured with insecure_skip_verify


class Exchange(BaseModel):
    """One request on the wire, whatever the transport: HTTP (status, content type) or gRPC (status name)."""

    transport: Transport = Transport.HTTP
    method: str  # the HTTP verb, or the gRPC method path (/lf.a2a.v1.A2AService/SendMessage)
    url: str  # credentials never appear in URLs we record (see probe.redact)
    status: int | None = None  # the HTTP status; None for gRPC
    grpc_status: str | None = None  # the gRPC status name (OK, NOT_FOUND, …); None for HTTP
    content_type: str | None = None
    phases: HttpPhases = Field(default_factory=HttpPhases)
    duration_s: float = 0.0
    tls: TlsInfo | None = None
    retried: str | None = None  # why the request was sent again on a fresh connection (see probe.wire.http)

    @property
    def outcome(self) -> str:
        """The status as one string for people: "HTTP 404" or "gRPC NOT_FOUND"."""
        if self.transport is Transport.GRPC:
            return f"gRPC {self.grpc_status or 'no status'}"
        return f"HTTP {self.status}" if self.status is not None else "no HTTP status"


HttpExchange = Exchange  # the pre-binding name, kept while other branches move over


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
    interface: str | None = None  # `--binding all`: the interface it ran on ("grpc 1.0"); None = the agent's


_set = object.__setattr__


def _template(model: type[BaseModel]) -> dict[str, object]:
    """Every field in declaration order, at its default (required ones at None until given)."""
    fields = model.model_fields
    assert all(f.default_factory is None for f in fields.values()), "new_check copies plain defaults only"
    return {name: (None if f.is_required() else f.default) for name, f in fields.items()}


def new_check(id: str, category: Category, severity: Severity, status: Status, message: str, recommendation: str,
              step: StepName | None, duration_ms: float) -> CheckResult:
    """What `CheckResult.model_construct(...)` with exactly these fields builds (unvalidated, every other field
    at its default), without pydantic's per-field work: a probe makes about 20 of them (tests/unit/test_results.py)."""
    c = CheckResult.__new__(CheckResult)
    values = _CHECK_TEMPLATE.copy()  # declaration order, as model_construct keeps it
    values.update(id=id, category=category, severity=severity, status=status, message=message,
                  recommendation=recommendation, step=step, duration_ms=duration_ms)
    _set(c, "__dict__", values)
    _set(c, "__pydantic_fields_set__", set(_CHECK_GIVEN))
    _set(c, "__pydantic_extra__", None)
    _set(c, "__pydantic_private__", None)
    return c


def copy_check(c: CheckResult, **update: object) -> CheckResult:
    """What `c.model_copy(update=update)` builds (a shallow, unvalidated copy), without its generic work."""
    new = CheckResult.__new__(CheckResult)
    _set(new, "__dict__", {**c.__dict__, **update})
    _set(new, "__pydantic_fields_set__", c.__pydantic_fields_set__ | update.keys())
    _set(new, "__pydantic_extra__", None)
    _set(new, "__pydantic_private__", None)
    return new


class StepResult(BaseModel):
    name: StepName
    status: Status = Status.SKIP
    duration_s: float = 0.0
    http_status: int | None = None
    reason: Reason | None = None
    detail: str = ""
    a2a_method: str | None = None
    exchanges: list[Exchange] = Field(default_factory=list)


class PushDelivery(BaseModel):
    """What one push round trip delivered (the daemon's push module): counts, latencies, bounded problems."""

    deliveries: int = 0
    first_s: float | None = None  # send -> first accepted delivery
    terminal_s: float | None = None  # send -> terminal accepted delivery
    problems: list[str] = Field(default_factory=list)  # probe.checks.push.DeliveryProblem values


class InterfaceResult(BaseModel):
    """One advertised interface probed on its own (`--binding all`): the per-interface verdict."""

    binding: str  # the registry name: jsonrpc, http_json, grpc (bounded)
    protocol_binding: str  # as the card says it: JSONRPC, HTTP+JSON, GRPC
    protocol_version: str | None = None
    interface_url: str | None = None
    success: bool = False
    reason: Reason | None = None
    duration_s: float = 0.0
    final_state: str | None = None  # the invoke step's terminal task state, for the equivalence check
    # what the same operations gave on this interface (op -> A2A error name or result), for the equivalence check
    outcomes: dict[str, str] = Field(default_factory=dict)
    artifacts: list[list[str]] | None = None  # the invoke answer's artifacts: part kinds of each, in order
    artifact_texts: list[str] | None = None  # and their texts (bounded; compared, never rendered on their own)
    steps: list[StepResult] = Field(default_factory=list)  # this interface's own steps (its level needs them)
    detail: str = ""  # what the failed step saw, in words (the status page's evidence line)
    checks_failed: int = 0

    @property
    def key(self) -> str:
        """How reports and checks name it: "grpc 1.0"."""
        return f"{self.binding} {self.protocol_version or '?'}"


class ErrorStatus(BaseModel):
    """An A2A error seen over HTTP+JSON or gRPC, and which error mappings (1.0.0, 1.0.1) its status matches."""

    error: str  # the A2A error name, e.g. TaskNotCancelableError
    binding: str  # http_json or grpc
    status: str  # the HTTP status or gRPC status name it came with
    mappings: list[str] = Field(default_factory=list)  # [] when the status is in neither mapping


MAX_ERROR_STATUSES = 32  # distinct (error, binding, status) triples kept per run


class ProbeResult(BaseModel):
    agent: str
    target_url: str
    card_url: str | None = None
    interface_url: str | None = None
    binding: str | None = None
    protocol_version: str | None = None
    card_name: str | None = None
    card_version: str | None = None
    tls: dict[str, TlsInfo] = Field(default_factory=dict)  # "card" (discovery) or the binding -> TLS seen
    tls_insecure: bool = False  # certificate verification is off for this agent (insecure_skip_verify)
    extended_card: dict[str, list[str]] | None = None  # what the extended card adds: fields, skills, changed
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
    # `--binding all`: one entry per probed interface; the top-level fields describe the first one
    interfaces: list[InterfaceResult] = Field(default_factory=list)
    push: PushDelivery | None = None  # set by the push module
    # A2A errors seen on HTTP+JSON / gRPC with their status: which of the 1.0.0 and 1.0.1 mappings the agent follows
    error_statuses: list[ErrorStatus] = Field(default_factory=list)
    # a rate limit's Retry-After (HTTP 429, or gRPC RetryInfo), in seconds: the daemon waits it out (probe.runner)
    retry_after_s: float | None = None

    def note_error_status(self, error: str, binding: str, status: str, mappings: tuple[str, ...]) -> None:
        """Remember an A2A error's status once (bounded), for the report's errorMapping."""
        seen = ErrorStatus(error=error, binding=binding, status=status, mappings=list(mappings))
        if seen not in self.error_statuses and len(self.error_statuses) < MAX_ERROR_STATUSES:
            self.error_statuses.append(seen)

    def step(self, name: StepName) -> StepResult | None:
        return next((s for s in self.steps if s.name == name), None)

    def check(self, check_id: str) -> CheckResult | None:
        return next((c for c in self.checks if c.id == check_id), None)

    def failed_checks(self) -> list[CheckResult]:
        return [c for c in self.checks if c.status is Status.FAIL]


_CHECK_TEMPLATE = _template(CheckResult)
_CHECK_GIVEN = frozenset({"id", "category", "severity", "status", "message", "recommendation", "step", "duration_ms"})
