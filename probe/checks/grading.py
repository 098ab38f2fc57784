"""Grade check results by the protocol version the agent was probed in, from the registry's rules.

A check's level is the one that version's specification gives it, on the binding it ran on where that version's
text differs per binding (the registry's `Requirement.bindings`); a check whose requirement the version does not
have is not graded (skipped, saying so and what was observed), so a 1.0 rule never fails a 0.3 agent.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

from probe import redact
from probe.checks.catalogue import Category, Rule, Severity, get, make_check
from probe.checks.registry import REQUIREMENTS
from probe.reasons import Reason
from probe.results import BindingName, CheckResult, ProbeResult, Status, StepName, copy_check


@lru_cache(maxsize=256)  # a handful of versions, asked about ~30 times a probe
def family(version: str | None) -> str | None:
    """"1.0.1" -> "1.0", "0.3.0" -> "0.3", "0.2.5" -> "0.2"; None when unknown."""
    if not version:
        return None
    parts = version.strip().split(".")
    return ".".join(parts[:2]) if len(parts) >= 2 else version.strip()


def _rules(check_id: str) -> Mapping[str, Rule]:
    req = REQUIREMENTS.get(check_id)
    return req.rules if req is not None else {}


@lru_cache(maxsize=64)  # the card's spelling or a registry name: a handful of values
def binding_of(binding: str | None) -> str | None:
    """The registry name (jsonrpc, http_json, grpc) of a card's protocolBinding or a registry name; None if other."""
    name = BindingName.of(binding)
    return name.value if name is not None else None


def rule_for(check_id: str, version: str | None, binding: str | None = None) -> Rule | None:
    """The rule `version`'s text gives the check on `binding` (the card's protocolBinding or the registry name;
    None: not known, the version's general rule)."""
    fam = family(version)
    req = REQUIREMENTS.get(check_id)
    return req.rule(fam, binding_of(binding)) if req is not None and fam else None


@lru_cache(maxsize=4096)  # checks x versions x bindings: bounded by the catalogue, a pure function of the registry
def level_of(check_id: str, version: str | None, binding: str | None = None) -> Severity | None:
    """The check's level in `version` on `binding` (the registry's); None when that version has no such
    requirement."""
    rules = _rules(check_id)
    fam = family(version)
    if not rules or fam is None:
        return get(check_id).severity
    rule = rule_for(check_id, version, binding)
    return rule.level if rule else None


def check_binding(c: CheckResult, binding: str | None) -> str | None:
    """The binding a check ran on: its interface's (`--binding all` tags it "grpc 1.0"), else the run's."""
    return c.interface.partition(" ")[0] if c.interface else binding


def finish(result: ProbeResult) -> None:
    """The last pass over a run: grade by version, then make the checks carry the verdict's reason."""
    grade(result)
    agree(result)


def grade(result: ProbeResult) -> None:
    """Apply the probed version's levels to every check result, in place."""
    version = result.protocol_version
    if family(version) is None:
        return
    global _graded_epoch, _graded_size
    if _graded_epoch != redact.epoch():  # a secret registered since: the shared checks are others now
        _GRADED.clear()
        _graded_size = 0
        _graded_epoch = redact.epoch()
    checks = result.checks
    run_on = binding_of(result.binding)
    run_table = _GRADED.get((version, run_on))  # the run's own binding's table: most checks carry no interface
    for index, c in enumerate(checks):
        if c.interface:
            on = binding_of(c.interface.partition(" ")[0])  # check_binding's: the interface's binding
            table = _GRADED.get((version, on))
        else:
            on, table = run_on, run_table
        memo = table.get(id(c)) if table is not None else None
        if memo is not None and memo[0] is c:
            graded = memo[1]
        else:
            graded = _graded(c, version, on)
            if redact.is_shared(c) and _graded_size < _MAX_GRADED:  # immutable: one grade per version, kept
                if graded is not c:
                    redact.share(graded)
                if table is None:
                    table = _GRADED[(version, on)] = {}
                    if on == run_on:
                        run_table = table
                if id(c) not in table:
                    _graded_size += 1
                table[id(c)] = (c, graded)
        if graded is not c:
            checks[index] = graded


# (version, binding) -> id of a shared check -> (the check, kept alive so the id stays its own; the check as graded
# there); admitted while there is room (the shared checks are bounded too), forgotten with the shared objects. One
# table per (version, binding): a probe looks its run's table up once, then each check by its id alone.
_GRADED: dict[tuple[str | None, str | None], dict[int, tuple[CheckResult, CheckResult]]] = {}
_MAX_GRADED = 8_192  # entries over all the tables
_graded_size = 0
_graded_epoch = 0


def _graded(c: CheckResult, version: str | None, binding: str | None) -> CheckResult:
    rules = _rules(c.id)
    if not rules or (c.status is Status.SKIP and c.message.startswith("not graded")):
        return c
    level = level_of(c.id, version, binding)
    if level is None:
        fam = family(version)
        observed = f"; observed: {c.message}" if c.message and c.message != get(c.id).title else ""
        general = rules.get(fam) if fam else None
        if general is not None:  # the version has it, for other bindings than this one
            why = f"A2A {fam} states it for other bindings than {binding} ({general.section})"
        else:
            why = f"A2A {fam} has no such requirement ({', '.join(f'{v} {r.section}' for v, r in rules.items())})"
        return copy_check(c, status=Status.SKIP, recommendation="", message=f"not graded: {why}{observed}")
    if level is c.severity:
        return c
    return copy_check(c, severity=level)


# reason -> the checks that can carry it: a failed one is marked; when none failed, the first whose prefix fits
# the failed step is recorded as failed (e.g. a refused connection, which no check had named)
CARRIERS: dict[Reason, tuple[str, ...]] = {
    Reason.CARD_UNREACHABLE: ("card.discovered", "card.no_cross_origin_redirect"),
    Reason.CARD_HTTP_STATUS: ("card.discovered",),
    Reason.CARD_INVALID: ("card.size", "card.strict_json", "card.required_fields", "card.schema", "card.interfaces",
                          "card.skills", "card.capabilities", "card.security", "card.security_schemes"),
    Reason.NO_USABLE_INTERFACE: ("interface.selected",),
    Reason.CARD_UNSIGNED: ("card.signature_trusted",),
    Reason.CARD_SIGNATURE_INVALID: ("card.signature",),
    Reason.CARD_SIGNATURE_UNTRUSTED: ("card.signature_trusted",),
    Reason.INTERFACE_PATH_DOUBLED: ("interface.no_path_repeat",),
    Reason.INTERFACE_URL_UNROUTABLE: ("interface.routable_host",),
    Reason.INVOKE_UNREACHABLE: ("invoke.transport", "stream.content_type"),
    Reason.INVOKE_TIMEOUT: ("invoke.transport", "stream.content_type"),
    Reason.INVOKE_ROUTE_NOT_FOUND: ("invoke.transport", "stream.content_type"),
    Reason.INVOKE_UNEXPECTED_STATUS: ("invoke.transport", "stream.content_type"),
    Reason.INVOKE_GATEWAY_ERROR: ("invoke.transport", "stream.content_type"),
    Reason.RATE_LIMITED: ("card.discovered", "invoke.transport", "stream.content_type"),
    Reason.INVOKE_AUTH: ("invoke.transport", "stream.content_type"),
    Reason.INVOKE_NOT_A2A: ("invoke.framing", "stream.events_parse"),
    Reason.INVOKE_A2A_ERROR: ("invoke.no_error", "stream.no_error"),
    Reason.INVOKE_VERSION_UNSUPPORTED: ("invoke.version_accepted", "stream.no_error"),
    Reason.INVOKE_LEGACY_PROTOCOL: ("interface.selected",),
    Reason.INVOKE_BAD_RESULT: ("invoke.schema", "invoke.result_shape", "invoke.dialect", "invoke.polled_task"),
    Reason.INVOKE_NOT_BLOCKING: ("invoke.blocking",),
    Reason.TASK_FAILED: ("invoke.task_completed", "stream.task_completed"),
    Reason.TASK_TIMEOUT: ("invoke.task_completed", "stream.terminal"),
    Reason.EXPECTED_TEXT_MISSING: ("invoke.expected_text", "stream.expected_text"),
    Reason.STREAM_NOT_A_STREAM: ("stream.content_type",),
    Reason.STREAM_NO_TERMINAL: ("stream.terminal",),
    Reason.STREAM_STATE_REGRESSION: ("stream.no_regression",),
    Reason.STREAM_PROTOCOL_VIOLATION: ("stream.events_parse", "stream.schema", "stream.first_event",
                                       "stream.consistent_ids", "stream.artifact_chunks",
                                       "stream.closes_after_terminal"),
    Reason.STREAM_RESET: ("stream.terminal", "stream.events_parse"),
    Reason.INVOKE_PROTOCOL_ERROR: ("invoke.transport", "stream.content_type"),
    Reason.WORK_LIMIT_EXCEEDED: ("invoke.framing", "stream.events_parse"),
    Reason.TLS_CERTIFICATE_INVALID: ("tls.verified",),
    Reason.TLS_CLIENT_CERT_REFUSED: ("invoke.transport", "card.discovered"),
    Reason.AUTH_TOKEN_FAILED: ("security.credentials_match",),
    Reason.PUSH_NOT_SUPPORTED: ("push.config_create",),
    Reason.PUSH_CONFIG_FAILED: ("push.config_create", "push.config_get", "push.config_list", "push.config_delete"),
    Reason.PUSH_NOT_DELIVERED: ("push.delivered",),
    Reason.PUSH_NO_TERMINAL: ("push.delivered",),
    Reason.PUSH_OUT_OF_ORDER: ("push.in_order",),
    Reason.PUSH_UNAUTHENTICATED: ("push.authenticated",),
    Reason.PUSH_BAD_PAYLOAD: ("push.payload", "push.names_task"),
    # the probe's own doing (its config, its egress policy, its load, a bug): never a verdict on the agent
    Reason.PROBE_CONFIG_ERROR: ("probe.completed",),
    Reason.PROBE_ERROR: ("probe.completed",),
    Reason.TARGET_NOT_ALLOWED: ("probe.completed",),
    Reason.PROBE_OVERLOADED: ("probe.completed",),
}
assert set(CARRIERS) == set(Reason), f"reasons without a carrying check: {set(Reason) - set(CARRIERS)}"
_STEP_PREFIX = {StepName.DISCOVER: ("card.",), StepName.VALIDATE: ("card.", "interface."),
                StepName.PING: ("invoke.",), StepName.INVOKE: ("invoke.",), StepName.STREAM: ("stream.",)}


def agree(result: ProbeResult) -> None:
    """A failed verdict has a failed check carrying its reason, so exit code, summary and JUnit agree."""
    reason = result.reason
    if reason is None:
        return
    failed = result.failed_checks()
    if any(c.reason is reason for c in failed):
        return
    step = next((s for s in result.steps if s.reason is reason), None)
    prefixes = _STEP_PREFIX.get(step.name, ()) if step is not None else ()
    carriers = CARRIERS.get(reason, ())
    fitting = [cid for cid in carriers if not prefixes or cid.startswith(prefixes)] or list(carriers)
    by_id = {c.id: c for c in failed}
    for cid in fitting:
        if cid in by_id:
            _carry(result, by_id[cid], reason)
            return
    if reason is Reason.CARD_INVALID:
        must = next((c for c in failed if c.category is Category.AGENT_CARD and c.severity is Severity.MUST), None)
        if must is not None:
            _carry(result, must, reason)
            return
    cid = fitting[0] if fitting else "probe.completed"
    detail = (step.detail if step is not None else "") or result.problem or reason.value
    carrier = make_check(cid, Status.FAIL, detail, step=step.name if step is not None else None)
    carrier.reason = reason
    # the carrier supersedes an earlier pass of the same check (HTTP 200 on send, then a failing poll)
    result.checks = [c for c in result.checks if c.id != cid] + [carrier]


def _carry(result: ProbeResult, c: CheckResult, reason: Reason) -> None:
    """`c` carries the reason: a copy in its place, since check results may be shared (probe.redact.share)."""
    index = next(i for i, seen in enumerate(result.checks) if seen is c)
    result.checks[index] = copy_check(c, reason=reason)


# a basic run that failed for one of these never spoke A2A with the interface: every later check would fail
# the same way, so it is skipped as depending on the check that carries the cause
ROOT_CAUSES = frozenset({
    Reason.INTERFACE_PATH_DOUBLED, Reason.INTERFACE_URL_UNROUTABLE, Reason.INVOKE_UNREACHABLE,
    Reason.INVOKE_PROTOCOL_ERROR, Reason.INVOKE_TIMEOUT, Reason.INVOKE_ROUTE_NOT_FOUND,
    Reason.INVOKE_UNEXPECTED_STATUS, Reason.INVOKE_AUTH, Reason.INVOKE_NOT_A2A, Reason.INVOKE_VERSION_UNSUPPORTED,
    Reason.INVOKE_GATEWAY_ERROR, Reason.RATE_LIMITED, Reason.TLS_CERTIFICATE_INVALID, Reason.TLS_CLIENT_CERT_REFUSED,
    Reason.AUTH_TOKEN_FAILED, Reason.TARGET_NOT_ALLOWED,
})


def root_cause(result: ProbeResult) -> str | None:
    """"depends on <check>, which failed: <what it saw>" when the run's failure stops everything after it."""
    # the run's reason is its first failure: a card fault named first must not hide an interface that cannot be
    # called (the suite would otherwise fail every check that sends a message for that one cause)
    cause = result.reason if result.reason in ROOT_CAUSES else next(
        (s.reason for s in result.steps if s.reason in ROOT_CAUSES and s.name is not StepName.STREAM), None)
    if cause is None:
        return None
    step = next((s for s in result.steps if s.reason is cause), None)
    if step is not None and step.name is StepName.STREAM:
        return None  # the send worked: the interface is reachable and speaks A2A, only streaming broke
    failed = result.failed_checks()
    carrier = next((c for c in failed if c.reason is cause), None) or next(
        (c for c in failed if step is not None and c.step is step.name), None)  # the step's own failed check
    if carrier is None:
        return None
    return f"depends on {carrier.id}, which failed: {carrier.message[:200]}"
