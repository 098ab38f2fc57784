"""The full conformance suite: the basic probe (discover, validate, invoke, stream), then every category.

Each category module lists its check functions (`CHECKS`) and the catalogue ids each one records
(`IDS`), so --safe-only, skips and time budgets are handled here once, not in every check.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

import structlog

from probe import redact
from probe.checks import grading
from probe.checks.catalogue import ACROSS_INTERFACES, BY_ID, shared_check
from probe.engine import FULL_STEPS, ProbeRun, combine, each_interface, execute
from probe.results import ProbeResult, Status, StepName, StepResult, copy_check
from probe.suite import errors, interop, lifecycle, multiturn, negotiation, push, security, streaming, tasks
from probe.suite.context import Skip, Suite, SuiteOptions
from probe.target import Target
from probe.wire.http import ConnectionReset, Deadline, HttpClient, ProtocolError, WireError

__all__ = ["SuiteOptions", "run_suite", "run_suite_interfaces"]

CheckFn = Callable[[Suite], Awaitable[None]]
# cheap, central checks first: under a tight --suite-timeout the many-task multi-turn, listing and history checks go
# last
MODULES = (lifecycle, streaming, errors, negotiation, push, security, multiturn, tasks, interop)

log = structlog.get_logger("a2a_probe.suite")


NOT_REVALIDATED = ("the suite reads the card afresh; the daemon's scheduled runs grade the 304s of their "
                   "revalidations (docs/daemon.md, the card cache)")


async def run_suite(target: Target, client: HttpClient, opts: SuiteOptions) -> ProbeResult:
    """Every check of the catalogue that applies; a failed basic probe still yields the side-effect-free ones."""
    return (await _suite_run(target, client, opts)).r


async def run_suite_interfaces(target: Target, client: HttpClient, opts: SuiteOptions) -> ProbeResult:
    """The suite on every interface the card advertises (`--suite full --binding all`), each with its own time
    budget; one result whose checks name their interface, plus interop.bindings_agree across them."""
    async def suite_one(t: Target) -> ProbeRun:
        return await _suite_run(t, client, opts)

    return await combine(await each_interface(target, suite_one), client)


async def _suite_run(target: Target, client: HttpClient, opts: SuiteOptions) -> ProbeRun:
    t0 = time.monotonic()
    steps = (StepName.PING,) if opts.safe_only else FULL_STEPS
    run = await execute(target, client, steps=steps)
    result = run.r
    if result.check("card.not_modified") is None:  # every catalogued check is in the suite's report
        result.checks.append(shared_check("card.not_modified", Status.SKIP, NOT_REVALIDATED, step=StepName.DISCOVER))
    if run.card is None or run.binding is None:
        return run  # no card or no interface: nothing more can run
    step = StepResult(name=StepName.SUITE)
    result.steps.append(step)
    began = time.monotonic()  # the suite step's own wall time (the basic run's duration is the agent's latency)
    suite = Suite(run, opts, Deadline(t0 + opts.timeout))  # one budget for the basic probe and the suite
    cause = grading.root_cause(result)
    suite.stall.start()
    try:
        for module in MODULES:
            for fn in module.CHECKS:
                if cause is not None:  # the same fault, not ten more failures
                    _skip(suite, module.IDS[fn], cause)
                else:
                    await _run_check(suite, fn, module.IDS[fn])
    finally:
        suite.stall.stop()
    for across in ACROSS_INTERFACES:
        if result.check(across) is None and cause is not None:
            _skip(suite, (across,), cause)
        elif result.check(across) is None:
            suite.record(across, Status.SKIP, f"one interface probed ({suite.binding_name}); check --binding all "
                         "compares every advertised one")
    if cause is not None:
        _skip(suite, ("errors.no_server_errors", "lifecycle.schema", *errors.FINAL_IDS, *lifecycle.FINAL_IDS), cause)
    else:
        valid = Status.PASS if suite.validated else Status.SKIP
        suite.record("lifecycle.schema", Status.FAIL if suite.invalid else valid,
                     "; ".join(suite.invalid) or (f"{suite.validated} result(s) of the suite valid" if suite.validated
                                                  else "no Task or result of the suite's own calls to validate"))
        aside = (f" ({len(suite.gateway_answers)} answer(s) the agent never gave (a gateway's own, a rate limit's) "
                 "set aside: "
                 f"{suite.gateway_answers[0]})"[:300] if suite.gateway_answers else "")
        suite.record("errors.no_server_errors", Status.FAIL if suite.server_errors else Status.PASS,
                     "; ".join(suite.server_errors[:5]) or "no 5xx and no dropped connection" + aside)
        for final in (*errors.FINAL, *lifecycle.FINAL):
            final(suite)
        run.stamps.record(result)  # the suite's own answers' timestamps join the basic run's
        run.required.record(result)  # and their missing REQUIRED fields
    step.duration_s = time.monotonic() - began
    failed = [c for c in result.checks if c.status is Status.FAIL and c.step is None]
    step.status = Status.FAIL if failed else Status.PASS
    step.detail = f"{len(failed)} suite check(s) failed" if failed else ""
    result.duration_s = time.monotonic() - t0
    grading.finish(result)  # the suite's checks are graded by the probed version too
    redact.result(result)  # the suite's own checks quote agent answers too
    return run


async def _run_check(s: Suite, fn: CheckFn, ids: tuple[str, ...]) -> None:
    """Run one check function under the suite's rules; record a skip for every id it could not decide."""
    if s.opts.safe_only and any(BY_ID[i].side_effects for i in ids):
        _skip(s, ids, "starts real agent work; skipped by --safe-only")
        return
    if s.deadline.expired():
        _skip(s, ids, "the suite's time budget was used up")
        return
    only = {b for i in ids for b in BY_ID[i].bindings}
    if only and s.binding_name not in only:
        _skip(s, ids, f"a {'/'.join(sorted(only))}-only check; this interface is {s.binding_name}")
        return
    before, gateway = len(s.result.checks), len(s.gateway_answers)
    t0 = time.monotonic()
    try:
        await fn(s)
    except Skip as exc:
        _skip(s, ids, str(exc))
    except WireError as exc:  # no answer at all: errors.no_server_errors counts it, the one root cause
        if isinstance(exc, ConnectionReset | ProtocolError) and exc not in s.told:
            # a stream the agent broke after its headers (a unary call's error the client's hooks counted): e.g.
            # Mastra's tasks/resubscribe of an unknown task, HTTP 200 text/event-stream, then the connection closed
            # mid-chunk (its handler's error aborts the body): a dropped connection as a2a-sdk's clients meet it
            s.server_errors.append(f"{ids[0]}: {exc}")
        _skip(s, ids, f"no answer: {exc}"[:200])
    except Exception as exc:  # a check bug must not lose the other results
        log.exception("suite_check_error", check=fn.__name__)
        _skip(s, ids, f"probe error in this check: {type(exc).__name__}: {exc}"[:200])
    elapsed = (time.monotonic() - t0) * 1000
    recorded = {c.id for c in s.result.checks[before:]}
    checks = s.result.checks
    kept = s.gateway_answers[gateway:]  # a gateway answered a call of this check: the agent never saw it
    for i in range(before, len(checks)):  # a copy: a check result may be shared (probe.redact.share)
        if kept and checks[i].status is Status.FAIL:
            checks[i] = copy_check(checks[i], status=Status.SKIP, message=f"not judged: {kept[0]}"[:300])
        checks[i] = copy_check(checks[i], duration_ms=round(elapsed, 3))
    _skip(s, tuple(i for i in ids if i not in recorded), "not reached")


def _skip(s: Suite, ids: tuple[str, ...], why: str) -> None:
    present = {c.id for c in s.result.checks}
    for check_id in ids:
        if check_id not in present:
            s.record(check_id, Status.SKIP, why)
