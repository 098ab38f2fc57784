"""The probe engine: discover -> validate -> invoke -> stream, exactly as a real client walks it.

The engine drives the wire, records what it saw as check results and step results, and picks one
primary failure reason. It never raises for anything an agent does; a bug in the probe becomes
`probe_error` so the daemon keeps running.
"""

from __future__ import annotations

import asyncio
import copy
import functools
import math
import re
import time
import typing
import uuid
from collections.abc import Awaitable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import structlog

from probe import redact
from probe.checks import auth as authchecks
from probe.checks import card as card_checks
from probe.checks import catalogue, grading, required, timestamps, urls
from probe.checks.catalogue import ACROSS_INTERFACES, Severity, make_check, shared_check
from probe.checks.shape import shape_problems
from probe.checks.stream import StreamJudge
from probe.reasons import Reason
from probe.results import (
    BindingName,
    CheckResult,
    InterfaceResult,
    ProbeResult,
    Status,
    StepName,
    StepResult,
    copy_check,
)
from probe.target import Target
from probe.trust import auth as authflows
from probe.trust import signatures
from probe.trust import tls as tlsmaterial
from probe.wire import a2a_errors, cardcache, schema
from probe.wire import card as cardwire
from probe.wire.bindings import (
    BY_CARD_NAME,
    A2AError,
    Answer,
    Binding,
    BindingUnavailable,
    Context,
    Factory,
    Op,
    Problem,
    ProblemKind,
    retry_after_seconds,
)
from probe.wire.card import Card, CardError, Interface, dialect_of
from probe.wire.client import A2AClient, Hook, PollTimeout, Reply
from probe.wire.dialects import INTERRUPTED, TERMINAL, Dialect, Item, TaskState, for_version, state_name
from probe.wire.http import (
    AuthTokenFailed,
    BodyTooLarge,
    ClientCertRefused,
    ClientConfig,
    ConnectFailed,
    ConnectionReset,
    Deadline,
    DeadlineExceeded,
    HttpClient,
    ProbeOutOfFiles,
    ProbePoolFull,
    ProtocolError,
    RedirectRefused,
    TargetRefused,
    TlsFailed,
    origin_url,
    without_credentials,
)

log = structlog.get_logger("a2a_probe.engine")

FULL_STEPS = (StepName.INVOKE, StepName.STREAM)
Bindings = Mapping[str, Factory]  # the card's protocolBinding (upper case) -> how to build it


class StepFailed(Exception):
    def __init__(self, reason: Reason, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


async def run_probe(target: Target, client: HttpClient, *, steps: Sequence[StepName] = FULL_STEPS,
                    bindings: Bindings | None = None) -> ProbeResult:
    """Probe one agent within `target.timeout`; always returns a result."""
    return (await execute(target, client, steps=steps, bindings=bindings)).r


async def execute(target: Target, client: HttpClient, *, steps: Sequence[StepName] = FULL_STEPS,
                  bindings: Bindings | None = None, card: Card | None = None) -> ProbeRun:
    """Run the steps and return the run itself (card, selected binding), for the conformance suite to go on.

    `bindings` replaces the registry and `card` skips discovery (a fake binding in unit tests)."""
    run = _start(target, client, bindings)
    run.card = card
    await _guarded(run, run.walk(steps))
    return _finish(run)


def _start(target: Target, client: HttpClient, bindings: Bindings | None,
           cards: cardcache.CardCache | None = None) -> ProbeRun:
    result = ProbeResult(agent=target.name, target_url=target.card_url or target.url)
    run = ProbeRun(target, client, result, Deadline.after(target.timeout), bindings)
    run.cards = cards
    return run


def _card_key(t: Target) -> cardcache.Key:
    """What decides the card discovery gets (probe.wire.cardcache): its URLs, version header, TLS and redirects."""
    tls = t.tls
    return cardcache.Key(t.url, t.card_url, t.a2a_version,
                         (tls.ca_bundle, tls.client_cert, tls.client_key, tls.insecure_skip_verify),
                         t.allow_cross_origin_redirect)


async def _guarded(run: ProbeRun, work: Awaitable[Any]) -> None:
    try:
        await work
    except Exception as exc:  # a probe bug must never take the daemon down
        log.exception("probe_internal_error", agent=run.t.name)
        result = run.r
        result.reason = result.reason or Reason.PROBE_ERROR
        result.steps.append(StepResult(name=StepName.VALIDATE, status=Status.FAIL, reason=Reason.PROBE_ERROR,
                                       detail=f"internal error: {type(exc).__name__}: {exc}"[:300]))


def _finish(run: ProbeRun) -> ProbeRun:
    result = run.r
    if result.reason not in (Reason.PROBE_ERROR, Reason.PROBE_CONFIG_ERROR):
        result.checks.append(shared_check("probe.completed", Status.PASS, "the probe ran to its end"))
    grading.finish(result)
    result.duration_s = run.latency()
    result.success = result.reason is None
    redact.result(result)  # what an agent sent is scrubbed before any consumer (report, log, page) sees it
    return run


def _kept(checks: Sequence[CheckResult]) -> tuple[cardcache.Kept, ...]:
    """Checks to record again in a later run: a shared one itself (immutable, scrubbed), an unshared one (a fleet's
    per-agent message, past the shared table's bound) as what `make_check` makes it from again."""
    return tuple(c if redact.is_shared(c) else (c.id, c.status, c.message, c.recommendation) for c in checks)


def _replayed(kept: Sequence[cardcache.Kept], step: StepName) -> Iterator[CheckResult]:
    """The checks `_kept` kept, for one more result: the shared ones themselves, the others made anew (each
    result's own, scrubbed by its walk), as `shared_check` makes them when its table is full."""
    return (c if isinstance(c, CheckResult) else make_check(c[0], c[1], c[2], step=step, recommendation=c[3] or None)
            for c in kept)


@dataclass(slots=True)
class _Plan:
    """What validate derives from a card and the run's Target alone (ProbeRun._plan)."""

    target: Target  # the very (frozen) Target it was made with
    epoch: int  # redact's epoch then (-1: one passed meanwhile): its shared checks are shared only in it
    iface: Interface
    dialect: Dialect
    url_findings: tuple[urls.Finding, ...]
    call_url: str
    label: str
    checks: tuple[cardcache.Kept, ...]  # interface.selected and the interface URL checks, in order
    public: tuple[tuple[str, str], ...]  # the calls' public headers (each run its own dict; none: the empty tuple,
    secret: tuple[tuple[str, Any], ...]  # one object for every agent) and the secret ones, which go with the flow
    invalid: str  # the card's MUSTs that failed ("" when none; a plan is kept only then)


class ProbeRun:
    def __init__(self, target: Target, client: HttpClient, result: ProbeResult, deadline: Deadline,
                 bindings: Bindings | None = None) -> None:
        self.t = target
        self.client = client
        self.r = result
        self.deadline = deadline
        self.t0 = time.monotonic()
        self.bindings: Bindings = bindings if bindings is not None else {k: r.factory for k, r in BY_CARD_NAME.items()}
        self.default_bindings = bindings is None
        self.card: Card | None = None
        self.binding: Binding | None = None
        # how the binding was built: `rebind` builds the same interface's binding with another identity's flow
        self.made: tuple[Factory, Context] | None = None
        self.a2a: A2AClient | None = None  # the one A2A client, on the selected binding
        self.final_state: str | None = None  # the invoke step's terminal state (for the equivalence check)
        self.final_item: Item | None = None  # the invoke step's final answer (its artifacts, the task to cancel)
        self.outcomes: dict[str, str] = {}  # the equivalence check's calls: operation -> what it gave
        self.flow: authflows.AuthFlow | None = None
        self.withheld = False  # the interface is on an origin the credentials are not for: it was sent none
        self.call_config = ClientConfig()  # the selected interface's: TLS, fresh connections and the auth flow
        self.transport = ClientConfig(fresh=target.fresh_connection)  # TLS and fresh connections, no credentials
        self.url_findings: tuple[urls.Finding, ...] = ()
        # a MUST broken while the call still works (e.g. SendMessage did not block): the step fails with its
        # reason, but the run goes on so the rest of the agent is judged too
        self.soft_failures: dict[StepName, tuple[Reason, str]] = {}
        self.cards: cardcache.CardCache | None = None  # the daemon's card cache (scheduled runs only)
        self.entry: cardcache.Entry | None = None  # the cached card's entry this run took its card from
        # the agent's latency (`latency`): when the first call to the interface was sent, when the last answer
        # arrived, and how many answers were stamped (a step that stamped none ended at its failure)
        self.calls_from: float | None = None
        self.answered: float | None = None
        self.answers = 0
        self.stamps = timestamps.TimestampLog()  # the answers' status timestamps (invoke.timestamps_utc)
        self.required = required.RequiredLog()  # the answers' missing REQUIRED fields (invoke.required_fields)

    def rebind(self, auth: authflows.AuthFlow) -> Binding:
        """The selected interface's binding again (URL, dialect, public headers, TLS, tenant), with `auth`'s
        credentials in place of the run's: another identity's calls (security.scoped_access). Closed by the caller."""
        assert self.made is not None, "rebind needs the interface validate selected"
        factory, context = self.made
        return factory(replace(context, config=replace(context.config, auth=auth)))

    def answer_arrived(self, answer: Answer | None = None, at: float = 0.0) -> None:
        """Stamp the end of an answer from the agent (its last byte is in): the probe's own work starts here. An
        answer its binding stamped (the exchange's own start and last byte, on the same clock) gives both ends of
        the call exactly: the request's building before it and the answer's reading after it are the probe's."""
        if answer is not None and answer.received_at:
            if not self.answers and self.calls_from is not None and answer.sent_at > self.calls_from:
                self.calls_from = answer.sent_at  # the run's first call: the agent's part starts with its request
            self.answered = answer.received_at
        else:
            self.answered = at or time.monotonic()
        self.answers += 1

    def latency(self) -> float:
        """The run's duration: the agent's latency, not the probe's own work. From the first request of the first
        call to the agent's interface to the last byte of the last answer (a failed call: to its failure). The
        card's fetch is a request of its own (its step has its duration; a cached card makes none), and so are
        the probe's own validation, interface selection, auth set-up, judging, grading and redaction: none is in
        it. A run that called nothing lasted its discovery (the card's fetch, to its failure). Each step's own
        `duration_s` stays its whole wall time (docs/metrics.md)."""
        if self.calls_from is not None and self.answered is not None:
            return max(0.0, self.answered - self.calls_from)
        found = next((s for s in self.r.steps if s.name is StepName.DISCOVER), None)
        return found.duration_s if found is not None else 0.0

    # ---- orchestration

    async def walk(self, steps: Sequence[StepName]) -> None:
        try:
            if self.card is None and not await self._step(StepName.DISCOVER, self.discover):
                return
            validated = await self._step(StepName.VALIDATE, self.validate)
            if self.binding is None:
                return
            if self.flow is not None and self.flow.needs_token and not await self._step(StepName.AUTH,
                                                                                         self.authenticate):
                return
            await self._remote(steps, card_invalid=not validated)
        finally:
            self._tls_findings()

    async def discover_card(self) -> bool:
        """The discover step alone: run_interfaces forks one run per interface from here. A failed
        discovery ends the run (as `walk` would end it)."""
        if await self._step(StepName.DISCOVER, self.discover):
            return True
        self._tls_findings()
        return False

    def fork(self, target: Target) -> ProbeRun:
        """A run of another interface of the card this run discovered: the same card, transport, deadline and
        discovery record (copied, so each interface is graded and redacted on its own; the shared checks, which
        nobody mutates, are the same objects)."""
        keep: dict[int, Any] = {id(c): c for c in self.r.checks if redact.is_shared(c)}  # deepcopy's memo
        run = ProbeRun(target, self.client, copy.deepcopy(self.r, keep), self.deadline, self.bindings)
        run.card, run.transport, run.t0 = self.card, self.transport, self.t0
        return run

    async def _remote(self, steps: Sequence[StepName], *, card_invalid: bool) -> None:
        if steps:
            # The scheduler starts a tick's runs together. Each run's set-up (card, checks, the interface, the
            # request) is its own work; yielding once here lets the runs started with this one do theirs before
            # its calls start, so its measured latency never holds their set-up (10,000 agents at 60 s, with the
            # answers' arrival stamps: overhead p50 6.47 -> 3.63 ms; docs/performance.md, "Measured choices")
            await asyncio.sleep(0)
        if self.card is not None and _declares_extended(self.card) and steps:
            await self._step(StepName.EXTENDED_CARD, self.extended_card)
        else:
            self.check("card.extended", Status.SKIP, "the card declares no extended card" if steps else
                       "no remote step ran", step=StepName.VALIDATE)
        for name in steps:
            fn = {StepName.PING: self.ping, StepName.INVOKE: self.invoke, StepName.STREAM: self.stream}[name]
            ok = await self._step(name, fn)
            if not ok and name is not StepName.STREAM:
                break  # stream after a failed invoke would only repeat the same failure
        if steps:
            self.stamps.record(self.r)
            self.required.record(self.r)
        if card_invalid and self.r.reason is None:
            self.r.reason = Reason.CARD_INVALID

    async def _step(self, name: StepName, fn: Any) -> bool:
        """Run one step; `fn` returns True when it skipped itself (e.g. streaming not declared)."""
        step = StepResult(name=name)
        self.r.steps.append(step)
        t0 = time.monotonic()
        remote, calls_from, answers = name in _REMOTE_STEPS, self.calls_from, self.answers
        if remote and calls_from is None:
            self.calls_from = t0
        try:
            skipped = await fn(step)
            step.status = Status.SKIP if skipped else Status.PASS
            soft = self.soft_failures.get(name)
            if soft is not None:
                step.status, step.reason, step.detail = Status.FAIL, soft[0], soft[1][:500]
                self.r.reason = self.r.reason or soft[0]
                return True
        except StepFailed as exc:
            step.status, step.reason, step.detail = Status.FAIL, exc.reason, exc.detail[:500]
            if self.r.reason is None:
                self.r.reason = self._explain(name, exc.reason)
        finally:
            end = time.monotonic()
            step.duration_s = end - t0
            if remote and self.answers == answers:  # the step stamped no answer
                if step.status is Status.SKIP:
                    self.calls_from = calls_from  # it skipped itself: nothing was called
                else:
                    self.answered = end  # it ended without one (a failure the call path did not stamp)
                    self.answers += 1
        return step.status is not Status.FAIL

    def _explain(self, step: StepName, reason: Reason) -> Reason:
        """When calling the advertised URL fails, a suspicious URL is the explanation, not the symptom."""
        if step not in (StepName.PING, StepName.INVOKE, StepName.STREAM):
            return reason
        ids = {f.check_id for f in self.url_findings}
        if "interface.no_path_repeat" in ids and reason in _ROUTE_REASONS:
            return Reason.INTERFACE_PATH_DOUBLED
        if "interface.routable_host" in ids and reason in _ROUTE_REASONS:
            return Reason.INTERFACE_URL_UNROUTABLE
        return reason

    def check(self, check_id: str, status: Status, message: str = "", *, step: StepName,
              recommendation: str | None = None) -> CheckResult:
        c = shared_check(check_id, status, message, step=step, recommendation=recommendation)  # never mutated
        self.r.checks.append(c)
        return c

    # ---- discover

    async def discover(self, step: StepResult) -> None:
        record = cardwire.Discovery()
        # public discovery carries no credentials: only the version header, which selects the card shape
        # on servers that serve 0.3 and 1.0 cards from one path (a2a-js legacyCompat)
        headers = {"A2A-Version": "1.0"} if self.t.a2a_version != "0.3" else {}
        try:
            tls = self.t.tls
            ctx = tlsmaterial.context(tlsmaterial.TlsSettings(
                ca_bundle=Path(tls.ca_bundle) if tls.ca_bundle else None,
                client_cert=Path(tls.client_cert) if tls.client_cert else None,
                client_key=Path(tls.client_key) if tls.client_key else None,
                insecure_skip_verify=tls.insecure_skip_verify))
        except tlsmaterial.TlsConfigError as exc:
            raise StepFailed(Reason.PROBE_CONFIG_ERROR, f"tls: {exc}") from None
        pem = (tls.ca_bundle, tls.client_cert, tls.client_key)
        self.transport = ClientConfig(ssl=ctx, fresh=self.t.fresh_connection, client_cert=self.t.auth.client_cert,
                                      pem_files=pem)
        pooled = ClientConfig(ssl=ctx, client_cert=self.t.auth.client_cert, pem_files=pem)  # the card's (`replace`: 2x)
        self.r.tls_insecure = self.t.tls.insecure_skip_verify
        # the daemon's scheduled runs reuse a card still fresh under RFC 9111 and the configured cap (cardcache)
        cards, cap = self.cards, self.cards.cap(self.t.card_cache_max_age) if self.cards is not None else 0.0
        key = _card_key(self.t)
        entry = cards.get(self.t.name, key) if cards is not None and cap > 0 else None
        if cards is not None and cap <= 0:
            cards.drop(self.t.name)  # caching turned off for this agent (a reload): nothing kept
        if entry is not None and entry.is_fresh(cap):
            return self._cached_card(step, entry, cap, "hit")
        sent_at = time.time()
        try:
            card = await self._fetch_or_revalidate(step, record, headers, pooled, entry, cap, sent_at)
        except StepFailed:
            if cards is not None:
                cards.drop(self.t.name)  # a card that fails is never served from the cache
            raise
        if card is None:  # revalidated: the stored card serves this run
            return
        self._judge_card(card, step)
        if cards is not None and cap > 0:
            self._store_card(cards, key, card, step, sent_at, "refetched" if entry is not None else "miss")

    async def _fetch_or_revalidate(self, step: StepResult, record: cardwire.Discovery, headers: dict[str, str],
                                   pooled: ClientConfig, entry: cardcache.Entry | None, cap: float,
                                   sent_at: float) -> Card | None:
        """The card fetched now, or None when a 304 revalidated the stored `entry` (then this run uses it)."""
        try:
            return await self._fetch_card(step, record, headers, pooled, entry)
        except cardwire.NotModified as answer:
            assert entry is not None
            resp = answer.response
            why = entry.identifies(resp.headers, answer.sent) if resp.url == entry.url else (
                f"the 304 came from {resp.exchange.url}, not from {redact.url(entry.url)}")
            d = StepName.DISCOVER
            if why is None:
                self._attempts(step, record, None)
                entry.refresh(resp.headers, step.exchanges, step.http_status, sent_at, time.time())
                if not entry.fresh.store and self.cards is not None:
                    self.cards.drop(self.t.name)  # validated for this run; the 304 says not to keep it (no-store)
                self._cached_card(step, entry, cap, "revalidated")
                self.check("card.not_modified", Status.PASS, "the 304 to the conditional request names the stored "
                           "card", step=d)
                return None
            # RFC 9111 §4.3.4: a 304 that does not identify the stored card must not refresh it; fetch it anew
            self.check("card.not_modified", Status.FAIL, f"{why}: a 304 must name the card it says is unchanged "
                       "(RFC 9111 §4.3.4); the probe fetched the card again", step=d)
            earlier = [e for a in record.attempts for e in a.exchanges]
            record = cardwire.Discovery()
            card = await self._fetch_card(step, record, headers, pooled, None)
            step.exchanges = earlier + step.exchanges
            step.detail = f"a 304 that does not identify the stored card was not used ({why}); fetched again"[:500]
            return card

    async def _fetch_card(self, step: StepResult, record: cardwire.Discovery, headers: dict[str, str],
                          pooled: ClientConfig, entry: cardcache.Entry | None) -> Card:
        """One discovery on the wire (conditional when a stored entry has validators); failures as StepFailed."""
        d = StepName.DISCOVER
        validators = entry.conditional() if entry is not None else None
        try:
            # the card comes over the kept-alive pool even with fresh connections: those are for the calls to
            # the agent, whose connect and TLS they measure (one new connection a probe, not two: docs/performance.md)
            card = await cardwire.discover(self.client, self.t.url, self.t.card_url, deadline=self.deadline,
                                           headers=headers, record=record, config=pooled,
                                           allow_cross_origin_redirect=self.t.allow_cross_origin_redirect,
                                           conditional=(entry.requested, validators)
                                           if entry is not None and validators else None)
        except RedirectRefused as exc:
            self._attempts(step, record, exc.exchange)
            self.check("card.no_cross_origin_redirect", Status.FAIL, str(exc), step=d)
            raise StepFailed(Reason.CARD_UNREACHABLE, f"{exc} (credentials are never sent to another origin)") from None
        except BodyTooLarge as exc:
            self._attempts(step, record, exc.exchange)
            self.check("card.size", Status.FAIL, str(exc), step=d)
            raise StepFailed(Reason.CARD_INVALID, f"the card is too large: {exc}") from None
        except (ConnectFailed, DeadlineExceeded) as exc:
            self._attempts(step, record, exc.exchange)
            reason = (Reason.TARGET_NOT_ALLOWED if isinstance(exc, TargetRefused)
                      else _TLS_REASONS.get(type(exc), Reason.CARD_UNREACHABLE))
            raise StepFailed(reason, str(exc)) from None
        except CardError as exc:
            self._attempts(step, record, None)
            if exc.kind == "http_status":
                self.check("card.discovered", Status.FAIL, str(exc), step=d)
                status = exc.response.status if exc.response else None
                if status == 304:  # RFC 9110 §15.4.5: a 304 answers only a conditional request
                    self.check("card.not_modified", Status.FAIL, "HTTP 304 to a request without validators", step=d)
                if status in (401, 403):
                    self.check("card.public", Status.FAIL, f"the card needs credentials (HTTP {status})", step=d)
                if status == 429 and exc.response is not None:  # RFC 6585 §4: refused by rate, not judged
                    wait = retry_after_seconds(exc.response.headers.get("Retry-After"))
                    self.r.retry_after_s = wait
                    raise StepFailed(Reason.RATE_LIMITED, f"{exc}" + (f"; Retry-After {wait:.0f} s" if wait is not None
                                     else "; no Retry-After") + ": refused by a rate limit, the agent not judged") \
                        from None
                raise StepFailed(Reason.CARD_HTTP_STATUS, str(exc)) from None
            self.check("card.strict_json", Status.FAIL, str(exc), step=d)
            raise StepFailed(Reason.CARD_INVALID, str(exc)) from None
        self._attempts(step, record, None)
        return card

    def _take_card(self, card: Card) -> None:
        self.card = card
        self.r.card_url = card.url
        self.r.card_name, self.r.card_version = card.name, card.version

    def _judge_card(self, card: Card, step: StepResult) -> None:
        """The discover step's checks of a card, fetched now or rebuilt from the card cache (the same checks)."""
        d = StepName.DISCOVER
        self._take_card(card)
        resp = card.response
        assert resp is not None
        self.check("card.discovered", Status.PASS, f"HTTP 200 from {resp.exchange.url}", step=d)
        self.check("card.public", Status.PASS, "read without credentials", step=d)
        self.check("card.well_known_path", Status.FAIL if card.legacy_path else Status.PASS,
                   "served only at the legacy /.well-known/agent.json" if card.legacy_path else "", step=d)
        self.check("card.no_cross_origin_redirect", Status.FAIL if resp.cross_origin_redirect else Status.PASS,
                   f"followed a cross-origin redirect ({', '.join(resp.redirects)})" if resp.cross_origin_redirect
                   else "", step=d)
        self.check("card.size", Status.PASS, f"{len(resp.body)} bytes", step=d)
        self.check("card.strict_json", Status.PASS, step=d)
        ctype = resp.content_type.split(";", 1)[0].strip().lower()
        ok_ct = ctype == "application/json" or ctype.endswith("+json")
        self.check("card.content_type", Status.PASS if ok_ct else Status.FAIL,
                   "" if ok_ct else f"served as {resp.content_type or 'no content type'!r}", step=d)
        missing = [h for h, ok in (("Cache-Control max-age", "max-age" in resp.headers.get("Cache-Control", "")),
                                   ("ETag", "ETag" in resp.headers)) if not ok]
        self.check("card.cache_headers", Status.FAIL if missing else Status.PASS,
                   f"missing {' and '.join(missing)}" if missing else "", step=d)
        self._last_modified(resp.headers.get("Last-Modified"))

    def _store_card(self, cards: cardcache.CardCache, key: cardcache.Key, card: Card, step: StepResult,
                    sent_at: float, outcome: str) -> None:
        resp = card.response
        assert resp is not None
        received = time.time()
        fresh = cardcache.freshness(resp.headers, sent_at, received)
        entry = cardcache.Entry.of(key, card, step.exchanges, step.http_status, fresh, received)
        if not fresh.store or (fresh.lifetime <= 0 and not entry.conditional()):
            cards.drop(self.t.name)  # never reused: every probe fetches it, as without a cache
            cards.count("uncacheable")
            return
        cards.put(self.t.name, entry)
        cards.count(outcome)

    def _cached_card(self, step: StepResult, entry: cardcache.Entry, cap: float, outcome: str) -> None:
        """The stored card for one more run, judged as when it was fetched (the same body and header fields: the
        same checks, shared where shared); the detail says it came from the cache, how old and for how long."""
        card = entry.card()
        self.entry = entry
        judged = entry.judged
        if judged is not None and judged[0] == redact.epoch():  # judged before, under today's secrets
            self._take_card(card)
            self.r.checks.extend(_replayed(judged[1], StepName.DISCOVER))
        else:
            first, epoch = len(self.r.checks), redact.epoch()
            self._judge_card(card, step)
            entry.judged = (epoch if redact.epoch() == epoch else -1,  # -1: an epoch passed meanwhile
                            _kept(self.r.checks[first:]))
        if outcome == "hit":
            step.exchanges = entry.exchanges_for_result()
            step.http_status = entry.http_status
        how = "revalidated now: HTTP 304" if outcome == "revalidated" else "no request sent"
        last = "" if outcome == "revalidated" else (
            f"; TLS and phases are those of the last request, at {_clock(math.floor(entry.received_wall))}")
        step.detail = (f"{cardcache.CACHED_CARD} ({how}): age {entry.age():.0f}s of a "
                       f"{entry.lifetime(cap):.0f}s freshness lifetime ({entry.fresh.basis}; card_cache_max_age "
                       f"{cap:g}s); its checks are those of the card fetched at "
                       f"{_clock(math.floor(entry.fetched_wall))}{last}")
        if self.cards is not None:
            self.cards.count(outcome)

    def _last_modified(self, value: str | None) -> None:
        """A MAY: not offering it is no failure; offering a malformed one is (an HTTP-date, RFC 9110 §8.8.2)."""
        if value is None:
            self.check("card.last_modified", Status.SKIP, "not offered (optional: no Last-Modified header)",
                       step=StepName.DISCOVER)
            return
        valid = cardcache.http_date(value) is not None  # RFC 9110 §5.6.7's forms, not any e-mail date
        self.check("card.last_modified", Status.PASS if valid else Status.FAIL,
                   f"Last-Modified: {value[:60]}" if valid else f"Last-Modified {value[:60]!r} is not an HTTP-date",
                   step=StepName.DISCOVER)

    def _attempts(self, step: StepResult, record: cardwire.Discovery, failed: Any) -> None:
        step.exchanges = [e for a in record.attempts for e in a.exchanges] + ([failed] if failed is not None else [])
        statuses = [e.status for e in step.exchanges if e.status is not None]
        step.http_status = statuses[-1] if statuses else None

    # ---- validate and select

    async def validate(self, step: StepResult) -> None:
        card = self.card
        assert card is not None
        results, refused = card_checks.judge_cached(card)
        self.r.checks += results
        self._signatures(card)
        v = StepName.VALIDATE
        plan = self._planned()
        if plan is None:
            plan = self._plan(card, results, refused)  # the interface and URL checks recorded; none: StepFailed
        else:  # a cached card, judged with this Target before: the same interface, URLs, checks and headers
            self.r.checks.extend(_replayed(plan.checks, v))
        iface, dialect, call_url = plan.iface, plan.dialect, plan.call_url
        self.url_findings = plan.url_findings
        self.r.interface_url, self.r.binding, self.r.protocol_version = call_url, iface.binding, plan.label
        self.flow = authflows.build(self.t.auth, card.doc, [self.t.url, self.t.card_url or self.t.url, card.url],
                                    self.transport)
        self._credentials_match(card, call_url)
        config = replace(self.transport, auth=self.flow)
        public, secret = dict(plan.public), dict(plan.secret)
        if secret:  # nothing to add: the spec as it is (nobody mutates it)
            self.flow.spec = self.flow.spec.model_copy(update={"headers": {**self.flow.spec.headers, **secret}})
        factory = self.bindings[iface.binding.upper()]
        self.call_config = config
        try:
            # 1.0.1 §8.3.2: every request carries the selected interface's tenant (0.3 interfaces have none)
            tenant = iface.tenant if dialect.version == "1.0" else None
            context = Context(self.client, call_url, dialect, public, config, tenant)
            self.binding, self.made = factory(context), (factory, context)
        except BindingUnavailable as exc:
            raise StepFailed(Reason.PROBE_CONFIG_ERROR if exc.probe_side else Reason.NO_USABLE_INTERFACE,
                             str(exc)) from None
        self.a2a = A2AClient(self.binding, self.deadline)
        self.a2a.hooks.append(error_status_hook(self.r))
        if self.binding.name == "grpc":
            schemeless = "://" not in call_url
            self.check("interface.grpc_url", Status.FAIL if schemeless else Status.PASS,
                       f"{call_url} has no scheme: the probe used plaintext" if schemeless else "", step=v)
        else:
            self.check("interface.grpc_url", Status.SKIP, f"a gRPC rule; this interface is {self.binding.name}",
                       step=v)
        if plan.invalid:
            raise StepFailed(Reason.CARD_INVALID, plan.invalid)

    def _plan(self, card: Card, results: list[CheckResult], refused: bool | None) -> _Plan:
        """What validate derives from the card and the Target alone: the interface (its checks recorded), the call's
        URL and label, the public and secret headers. Kept on the card-cache entry of a cached run (`_planned`).
        The card is invalid (card_invalid) where it fails a MUST and the official clients refuse it (or no official
        definitions judge it): a MUST they read past is a finding, and the agent is called as they would call it."""
        iface, dialect, why = select_interface(card, self.t, self.bindings)
        v = StepName.VALIDATE
        bad = "; ".join(f"{c.id}: {c.message}" for c in results if c.status is Status.FAIL and c.severity == "MUST")
        invalid = bad if refused is not False else ""
        if iface is None or dialect is None:
            self.check("interface.selected", Status.FAIL, why, step=v)
            if card.family == "0.1":
                raise StepFailed(Reason.INVOKE_LEGACY_PROTOCOL, why)
            raise StepFailed(Reason.CARD_INVALID, bad) if bad else StepFailed(Reason.NO_USABLE_INTERFACE, why)
        first, epoch = len(self.r.checks), redact.epoch()
        self.check("interface.selected", Status.PASS, why, step=v)
        url_findings = urls.diagnose(card.url, iface.url)
        call_url = redact.strip_userinfo(iface.url)  # credentials in a card are a finding, never sent
        # label by what the card says (0.2 agents are spoken to in the 0.3 dialect, but graded by 0.2's rules)
        label = "0.2" if dialect.version == "0.3" and grading.family(iface.version) == "0.2" else dialect.version
        flagged = {f.check_id: f for f in url_findings}
        for cid in ("interface.no_path_repeat", "interface.routable_host", "interface.scheme",
                    "interface.no_credentials"):
            f = flagged.get(cid)
            self.check(cid, Status.FAIL if f else Status.PASS, f.message if f else "", step=v,
                       recommendation=f.recommendation if f else None)
        headers = self.t.invoke_headers()
        # secret headers (auth.headers, --header Authorization=...) travel with the flow, origin-bound
        public = {k: v for k, v in headers.items() if not redact.is_secret_header(k) and k not in self.t.auth.headers}
        required = cardwire.required_extensions(card.doc)  # activated on every call, or a conforming agent refuses
        if required and not any(k.lower() in ("a2a-extensions", "x-a2a-extensions") for k in public):
            public[cardwire.extensions_header(dialect.version)] = ", ".join(required)
        secret = {k: self.t.headers[k] for k in headers if k not in public}
        plan = _Plan(self.t, epoch if redact.epoch() == epoch else -1, iface, dialect, url_findings, call_url, label,
                     _kept(self.r.checks[first:]), tuple(public.items()), tuple(secret.items()), invalid)
        if self.entry is not None and self.default_bindings and not invalid:
            self.entry.planned = plan  # a valid cached card: its next run with this Target takes it as it is
        return plan

    def _planned(self) -> _Plan | None:
        """The plan an earlier run of this cached card (the same entry: the same body) made with this very Target
        (frozen) and the registry's bindings, under today's secrets; None when there is none to take."""
        plan = self.entry.planned if self.entry is not None else None
        if (isinstance(plan, _Plan) and plan.target is self.t and plan.epoch == redact.epoch()
                and self.default_bindings):
            return plan
        return None

    def _credentials_match(self, card: Card, call_url: str) -> None:
        assert self.flow is not None
        ok, message = authflows.match(card.doc, self.t.auth)
        problems = list(self.flow.problems)
        configured = (authflows.configured_kinds(self.t.auth) or self.t.auth.headers
                      or any(redact.is_secret_header(k) for k in self.t.headers))
        if configured and not self.flow.allows(origin_url(call_url)):
            self.withheld = True
            problems.append(f"the advertised interface {call_url} is on another origin than the one the credentials "
                            "are configured for, so it gets none: add its origin to auth.allowed_origins (check: "
                            "--allowed-origin) if it is yours")
        if problems:
            ok, message = False, "; ".join([*problems, message])
        status = Status.SKIP if ok is None else Status.PASS if ok else Status.FAIL
        self.check("security.credentials_match", status, message, step=StepName.VALIDATE)

    # ---- auth: the probe's own token exchange, timed and blamed on nobody but the identity provider

    async def authenticate(self, step: StepResult) -> None:
        assert self.flow is not None
        try:
            await self.flow.prepare(self.client, self.deadline)
            step.detail = "token obtained"
        except AuthTokenFailed as exc:
            raise StepFailed(Reason.AUTH_TOKEN_FAILED, str(exc)) from None
        finally:
            step.exchanges = self.flow.exchanges  # later refreshes (after a 401) land here too
            statuses = [e.status for e in step.exchanges if e.status is not None]
            step.http_status = statuses[-1] if statuses else None

    # ---- the extended card: what an authenticated client sees beyond the public card

    async def extended_card(self, step: StepResult) -> bool:
        a2a, card = self._client(), self.card
        assert card is not None
        x = StepName.EXTENDED_CARD
        if self.flow is None or not (authflows.configured_kinds(self.t.auth) or self.t.auth.headers):
            self.check("card.extended", Status.SKIP, "the card declares an extended card; no credentials configured "
                       "to fetch it", step=x)
            return True
        if card.family == "0.2":
            return await self._extended_card_02(step, card)
        step.a2a_method = a2a.method(Op.EXTENDED_CARD)
        try:
            answer = await a2a.extended_card()
        except (ConnectFailed, DeadlineExceeded, RedirectRefused, BodyTooLarge, AuthTokenFailed) as exc:
            self.check("card.extended", Status.FAIL, f"no extended card: {exc}", step=x)
            return False
        step.exchanges.append(answer.exchange)
        step.http_status = answer.status
        if answer.problem is not None or answer.error is not None or not isinstance(answer.result, dict):
            why = answer.describe() if answer.error is not None or answer.problem is not None else (
                f"{answer.exchange.outcome}: {answer.snippet[:120]}")
            self.check("card.extended", Status.FAIL, f"{step.a2a_method} failed: {why}", step=x)
            return False
        self.r.extended_card = card_diff(card.doc, answer.result)
        self.check("card.extended", Status.PASS, f"the extended card adds {_summary(self.r.extended_card)}", step=x)
        return False

    async def _extended_card_02(self, step: StepResult, card: Card) -> bool:
        """0.2.5+: a plain HTTP GET of {url}/../agent/authenticatedExtendedCard, with credentials."""
        x = StepName.EXTENDED_CARD
        url = urljoin((self.r.interface_url or card.url).rstrip("/") + "/", "../agent/authenticatedExtendedCard")
        step.a2a_method = "GET agent/authenticatedExtendedCard"
        try:
            resp = await self.client.request("GET", url, deadline=self.deadline, headers={"Accept": "application/json"},
                                             max_bytes=cardwire.MAX_CARD_BYTES, config=self.call_config)
            doc = cardwire.parse(resp.body, resp) if resp.status == 200 else None
        except (ConnectFailed, DeadlineExceeded, RedirectRefused, BodyTooLarge, AuthTokenFailed, CardError) as exc:
            self.check("card.extended", Status.FAIL, f"no extended card at {redact.url(url)}: {exc}", step=x)
            return False
        step.exchanges.append(resp.exchange)
        step.http_status = resp.status
        if doc is None:
            self.check("card.extended", Status.FAIL, f"GET {resp.exchange.url} answered HTTP {resp.status}", step=x)
            return False
        self.r.extended_card = card_diff(card.doc, doc)
        self.check("card.extended", Status.PASS, f"the extended card adds {_summary(self.r.extended_card)}", step=x)
        return False

    def _tls_findings(self) -> None:
        """Certificate expiry and verification, from every TLS exchange of the run (card and interface)."""
        for step in self.r.steps:
            channel = "card" if step.name is StepName.DISCOVER else (self.r.binding or "card")
            if step.name is StepName.AUTH:
                continue  # the identity provider's certificate is not the agent's
            for e in step.exchanges:
                if e.tls is None:
                    continue
                seen = self.r.tls.get(channel)
                if seen is None or (e.tls.earliest_expiry or float("inf")) < (seen.earliest_expiry or float("inf")):
                    self.r.tls[channel] = e.tls
        v = StepName.VALIDATE
        if self.t.tls.insecure_skip_verify:
            self.check("tls.verified", Status.FAIL, "certificate verification is off for this agent "
                       "(tls.insecure_skip_verify): the probe cannot tell the agent from an impostor", step=v)
        elif self.r.tls:
            self.check("tls.verified", Status.PASS, "verified against the trust store", step=v)
        expiries = [(ch, i.earliest_expiry) for ch, i in self.r.tls.items() if i.earliest_expiry is not None]
        if not expiries:
            if not (self.t.tls.insecure_skip_verify or self.r.tls):  # else tls.verified was recorded above
                self.check("tls.verified", Status.SKIP, "no TLS connection was made", step=v)
            self.check("tls.cert_expiry", Status.SKIP, "no TLS connection was made (or it was reused)", step=v)
            return
        channel, earliest = min(expiries, key=lambda pair: pair[1])
        left = earliest - time.time()
        when = datetime.fromtimestamp(earliest, UTC).strftime("%Y-%m-%d %H:%M UTC")
        if left <= self.t.tls.expiry_window:
            state = "expired" if left <= 0 else f"expires in {left / 86400:.1f} days"
            self.check("tls.cert_expiry", Status.FAIL, f"a certificate of the {channel} connection {state} ({when}); "
                       f"the window is {self.t.tls.expiry_window / 86400:g} days", step=v)
        else:
            self.check("tls.cert_expiry", Status.PASS, f"earliest expiry {when} ({left / 86400:.0f} days)", step=v)

    def _signatures(self, card: Card) -> None:
        """Verify the card's signatures under the agent's policy; `require` stops before any call to it."""
        if self.t.signature_policy == "off" or self.t.trusted_jwks is None:
            for check_id in ("card.signature", "card.signature_trusted"):
                self.check(check_id, Status.SKIP, "not verified: no trusted JWKS configured for this agent",
                           step=StepName.VALIDATE)
            return
        found = signatures.verify(card.doc, card.family, signatures.load_keyset(self.t.trusted_jwks))
        outcome = found.outcome
        self.r.card_signature = outcome.value
        more = f" [{'; '.join(found.details)}]" if len(found.details) > 1 else ""
        said, v = f"{outcome.value}: {found.message}{more}", StepName.VALIDATE
        # a signature is judged (card.signature) only under a key the operator trusts; whether the card is signed
        # under one at all is the operator's rule (card.signature_trusted): one root cause, one failed check
        if outcome in (signatures.Outcome.VALID, signatures.Outcome.INVALID):
            self.check("card.signature", Status.PASS if outcome is signatures.Outcome.VALID else Status.FAIL, said,
                       step=v)
            self.check("card.signature_trusted", Status.PASS if outcome is signatures.Outcome.VALID else Status.SKIP,
                       said if outcome is signatures.Outcome.VALID else "see card.signature", step=v)
        else:
            self.check("card.signature", Status.SKIP, f"not judged: {said}", step=v)
            self.check("card.signature_trusted", Status.FAIL, said, step=v)
        if outcome is signatures.Outcome.VALID or self.t.signature_policy != "require":
            return
        reason = {signatures.Outcome.UNSIGNED: Reason.CARD_UNSIGNED,
                  signatures.Outcome.INVALID: Reason.CARD_SIGNATURE_INVALID}.get(outcome,
                                                                                 Reason.CARD_SIGNATURE_UNTRUSTED)
        raise StepFailed(reason, f"signature policy require: {said}")

    # ---- ping: a cheap call that proves the route reaches an A2A server without running the agent

    async def ping(self, step: StepResult) -> None:
        c = self._client()
        step.a2a_method = c.method(Op.GET)
        answer = await self._call(step, StepName.PING, c.get(f"a2a-probe-ping-{uuid.uuid4()}"), Op.GET)
        err = answer.error
        if err is not None and not err.is_(a2a_errors.TASK_NOT_FOUND):
            failure = _a2a_error_reason(err, c, Op.GET)
            if failure[0] in (Reason.INVOKE_VERSION_UNSUPPORTED, Reason.INVOKE_GATEWAY_ERROR):
                raise StepFailed(*failure)
        # any well-formed answer proves the route reaches an A2A server of this binding
        step.detail = err.describe() if err else "answered with a result"

    # ---- invoke: SendMessage to a terminal state

    async def invoke(self, step: StepResult) -> None:
        c = self._client()
        step.a2a_method = c.method(Op.SEND)
        inv = StepName.INVOKE
        answer = await self._call(step, inv, c.send(self.t.message), Op.SEND)
        if answer.error is not None:
            reason, detail = _a2a_error_reason(answer.error, c, Op.SEND)
            if reason is Reason.INVOKE_VERSION_UNSUPPORTED:
                self.check("invoke.version_accepted", Status.FAIL, detail, step=inv)
            elif reason is Reason.INVOKE_GATEWAY_ERROR:  # the header never reached the agent: nothing to judge
                self.check("invoke.version_accepted", Status.SKIP, f"not judged: {detail}", step=inv)
            else:
                self.check("invoke.version_accepted", Status.PASS, "no version error", step=inv)
                self.check("invoke.no_error", Status.FAIL, detail, step=inv)
            raise StepFailed(reason, detail)
        self.check("invoke.version_accepted", Status.PASS, step=inv)
        self.check("invoke.no_error", Status.PASS, "a result", step=inv)
        item = c.dialect.result_item(answer.result)
        invalid = self._schema_check(answer.result, schema.Shape.SEND_RESULT, inv)
        self._shape_checks(item, inv)
        if item.kind == "task" and item.state is not None:
            self._blocking_check(item)  # a fault of its own, even when the answer is also malformed
        if invalid:
            raise StepFailed(Reason.INVOKE_BAD_RESULT, invalid)
        if item.kind == "task" and item.task_id and item.state not in TERMINAL | INTERRUPTED:
            item = await self._poll(step, item)
        else:  # nothing to poll: recorded so the report lists every check it could not judge
            self.check("invoke.polled_task", Status.SKIP, f"no GetTask poll: SendMessage answered {_answered(item)}",
                       step=inv)
        if item.kind == "task" and item.state is TaskState.COMPLETED:
            self.check("lifecycle.completed_artifact", Status.PASS if item.artifacts else Status.FAIL,
                       f"{item.artifacts} artifact(s)" if item.artifacts else "COMPLETED without an artifact", step=inv)
        self._outcome(item, inv, "invoke")

    def _schema_check(self, payload: Any, shape: schema.Shape, step: StepName, what: str = "") -> str | None:
        """The official definitions of the probed version: what the official client cannot parse fails here.

        Returns the failure, for the caller to raise once its own checks are recorded."""
        c = self._client()
        self.stamps.see(payload, "SendMessage" if shape is schema.Shape.SEND_RESULT else "GetTask")
        verdict = schema.validate(self.r.protocol_version or c.dialect.version, self.r.binding or "JSONRPC", shape,
                                  payload)
        if verdict.limit is not None:  # not judged: the probe's own bound, not a fault found in the answer
            if (prior := self.r.check("invoke.schema")) is not None:
                self.r.checks.remove(prior)
            self.check("invoke.schema", Status.SKIP, f"{what}not judged: {verdict.limit}", step=step)
            raise StepFailed(Reason.WORK_LIMIT_EXCEEDED, f"the probe stopped judging the answer: {what}{verdict.limit}")
        self.required.see(verdict.required, "SendMessage" if shape is schema.Shape.SEND_RESULT else "GetTask")
        if verdict.snake_case and self.r.check("invoke.camel_case") is None:
            self.check("invoke.camel_case", Status.FAIL, f"{what}proto field names instead of ProtoJSON "
                       f"camelCase: {', '.join(verdict.snake_case[:5])}", step=step)
        elif not what and self.r.check("invoke.camel_case") is None:
            self.check("invoke.camel_case", Status.PASS, "camelCase field names", step=step)
        if verdict.ok:
            notes = f"; unknown fields ignored: {', '.join(verdict.ignored[:5])}" if verdict.ignored else ""
            if not what:  # the first answer records the check; later ones (polls) only when they break it
                self.check("invoke.schema", Status.PASS, f"valid against the {verdict.definitions}{notes}",
                           step=step)
            return None
        msg = f"{what}not valid against the {verdict.definitions}: {verdict.summary()}"
        prior = self.r.check("invoke.schema")
        if prior is not None:
            self.r.checks.remove(prior)
        self.check("invoke.schema", Status.FAIL, msg, step=step)
        return msg

    def _blocking_check(self, item: Item) -> None:
        """1.0 §3.2.2: without returnImmediately, SendMessage MUST return a terminal or interrupted task."""
        c = self._client()
        asked = ("returnImmediately unset (blocking, the 1.0 default)" if c.dialect.version == "1.0"
                 else "configuration.blocking: true")
        state = item.state.value if item.state else "no state"
        if item.state in TERMINAL | INTERRUPTED:
            self.check("invoke.blocking", Status.PASS, f"SendMessage with {asked} returned the task {state}",
                       step=StepName.INVOKE)
            return
        msg = (f"SendMessage with {asked} returned task {item.task_id} in {state}, not a terminal or interrupted "
               "state; the probe polled GetTask to go on")
        self.check("invoke.blocking", Status.FAIL, msg, step=StepName.INVOKE)
        if grading.level_of("invoke.blocking", self.r.protocol_version, self.r.binding) is Severity.MUST:
            self.soft_failures[StepName.INVOKE] = (Reason.INVOKE_NOT_BLOCKING, msg)

    def _shape_checks(self, item: Item, step: StepName) -> None:
        shape, dialect_problems = shape_problems(item)
        self.check("invoke.result_shape", Status.FAIL if shape else Status.PASS,
                   "; ".join(shape) or f"a {item.kind}", step=step)
        if item.kind not in ("task", "message"):
            raise StepFailed(Reason.INVOKE_BAD_RESULT, "; ".join(shape))
        self.check("invoke.dialect", Status.FAIL if dialect_problems else Status.PASS, "; ".join(dialect_problems),
                   step=step)
        if shape:
            raise StepFailed(Reason.INVOKE_BAD_RESULT, "; ".join(shape))

    async def _poll(self, step: StepResult, item: Item) -> Item:
        """GetTask with backoff until the task leaves SUBMITTED/WORKING or the deadline passes."""
        c = self._client()
        assert item.task_id is not None
        task_id = item.task_id

        def observe(answer: Answer) -> None:
            self._judge(step, StepName.INVOKE, answer, Op.GET)
            if answer.error is not None:
                reason, detail = _a2a_error_reason(answer.error, c, Op.GET)
                self.r.checks = [ch for ch in self.r.checks if ch.id != "invoke.no_error"]
                self.check("invoke.no_error", Status.FAIL, f"GetTask {task_id}: {detail}", step=StepName.INVOKE)
                raise StepFailed(reason, f"GetTask {task_id}: {detail}")
            invalid = self._schema_check(answer.result, schema.Shape.TASK, StepName.INVOKE, "GetTask's answer is ")
            if invalid:
                raise StepFailed(Reason.INVOKE_BAD_RESULT, invalid)
            got = c.item(answer, bare_task=True)
            other = _other_task(item, got) if got is not None else None
            if got is not None and other is None and (not got.task_id or got.state is None):
                # json_format reads such an answer (a Message's fields are unknown to Task) as an empty Task: a
                # caller learns no state from it (its missing REQUIRED fields are invoke.required_fields')
                other = (f"GetTask({str(task_id)[:80]}) answered no task: "
                         + ("; ".join(got.problems[:2]) or "no id or status"))
            if other is not None:
                self.check("invoke.polled_task", Status.FAIL, other, step=StepName.INVOKE)
                raise StepFailed(Reason.INVOKE_BAD_RESULT, other)

        try:
            _, polled = await c.poll(item.task_id, observe=observe)
        except PollTimeout as exc:
            self.answer_arrived()  # waited for the task until the deadline: that wait is the agent's
            last = exc.last or item  # the state GetTask last said, not the one SendMessage answered with
            msg = f"task {item.task_id} still {state_name(last.state)} at the deadline ({self.t.timeout:g}s)"
            self.check("invoke.task_completed", Status.FAIL, msg, step=StepName.INVOKE)
            raise StepFailed(Reason.TASK_TIMEOUT, msg) from None
        except (ConnectFailed, DeadlineExceeded, RedirectRefused, BodyTooLarge) as exc:
            self._wire_failed(step, exc)
        if polled is None:
            raise StepFailed(Reason.INVOKE_BAD_RESULT, f"GetTask({item.task_id}) did not return the task")
        self.check("invoke.polled_task", Status.PASS, "GetTask answered the task SendMessage created",
                   step=StepName.INVOKE)
        return polled

    def _outcome(self, item: Item, step: StepName, prefix: str) -> None:
        """Judge the final task state and the expected text; shared by invoke and stream."""
        if prefix == "invoke":
            self.final_state = state_name(item.state) if item.kind == "task" else "message"
            self.final_item = item
        if item.kind == "task":
            if item.state is TaskState.COMPLETED:
                # the task id differs every run: the result's own check, kept out of the shared table (it would
                # fill it with one entry a probe and leave the fleet's other checks unshared)
                self.r.checks.append(make_check(f"{prefix}.task_completed", Status.PASS,
                                                f"task {item.task_id} COMPLETED", step=step))
            else:
                why = f"task {item.task_id} ended {state_name(item.state)}" + (f": {item.status_text[:200]}"
                                                                   if item.status_text else "")
                self.check(f"{prefix}.task_completed", Status.FAIL, why, step=step)
                raise StepFailed(Reason.TASK_FAILED, why)
        else:
            self.check(f"{prefix}.task_completed", Status.PASS, "the agent answered with a Message", step=step)
        if self.t.expect_text is None:
            self.check(f"{prefix}.expected_text", Status.SKIP, "no expected text configured", step=step)
        elif any(self.t.expect_text in t for t in item.texts):
            self.check(f"{prefix}.expected_text", Status.PASS, f"found {self.t.expect_text!r}", step=step)
        else:
            seen = " | ".join(item.texts)[:200] or "no text at all"
            msg = f"expected {self.t.expect_text!r}, got: {seen}"
            self.check(f"{prefix}.expected_text", Status.FAIL, msg, step=step)
            raise StepFailed(Reason.EXPECTED_TEXT_MISSING, msg)

    # ---- stream: SendStreamingMessage through to the terminal event

    async def stream(self, step: StepResult) -> bool:
        card, c = self.card, self._client()
        assert card is not None
        step.a2a_method = c.method(Op.STREAM)
        if not card.streaming:
            step.detail = "the card does not declare capabilities.streaming"
            return True
        judge = StreamJudge(c.dialect, close_grace=self.t.stream_close_grace,
                            version=self.r.protocol_version or c.dialect.version,
                            binding=self.r.binding or c.binding.card_name,
                            max_events=self.t.max_stream_events, max_artifacts=self.t.max_stream_artifacts,
                            stamps=self.stamps, required=self.required)
        try:
            async with c.stream(self.t.message) as es:
                step.exchanges.append(es.exchange)
                step.http_status = es.status
                es.max_bytes = self.t.max_stream_bytes
                if es.plain is not None:
                    self._not_a_stream(es.plain, c)
                judge.opened(es.content_type)
                await judge.consume(es, self.deadline)
                self.answer_arrived(at=es.ended_at())  # the stream's end as it came, when the transport knows it
        except (ConnectFailed, DeadlineExceeded, AuthTokenFailed, BodyTooLarge) as exc:  # the last: gRPC's first
            if isinstance(exc, DeadlineExceeded) and judge.started:
                judge.timed_out(str(exc))
            elif isinstance(exc, DeadlineExceeded) and c.binding.name != "grpc":
                raise StepFailed(Reason.INVOKE_TIMEOUT, f"{exc}: the stream never started; an agent sends a stream's "
                                 "headers and its first event (the Task) at once, so a gateway holding "
                                 "text/event-stream back until the end is the usual cause (nginx gzip on it with "
                                 "proxy_buffering on)") from None
            elif isinstance(exc, ConnectionReset) and judge.started and judge.terminal_at is None:
                cut = f"{exc}, after {judge.events} event(s) (last state {judge.state or 'none'}){_silence(judge)}"
                raise StepFailed(Reason.STREAM_RESET, cut) from None
            else:
                raise StepFailed(*_transport_reason(exc)) from None
        self.r.checks += judge.checks()
        self.check("stream.no_error", Status.FAIL if judge.rpc_error else Status.PASS,
                   f"the stream carried an error: {judge.rpc_error}" if judge.rpc_error else "", step=StepName.STREAM)
        failure = judge.failure()
        if failure is not None:
            raise StepFailed(*failure)
        final = judge.final_item()
        assert final is not None
        self._outcome(final, StepName.STREAM, "stream")
        return False

    def _refused(self, p: Problem) -> None:
        """A rate limit's Retry-After, kept on the result for the daemon's next run of this job (probe.runner)."""
        if p.kind is ProblemKind.RATE_LIMITED and p.retry_after is not None:
            self.r.retry_after_s = p.retry_after

    def _not_a_stream(self, answer: Answer, c: A2AClient) -> None:
        """The answer to a stream request was not a stream: an error before the stream, or a broken server."""
        p = answer.problem
        if p is not None and p.kind is not ProblemKind.FRAMING:
            self._refused(p)
            raise StepFailed(_PROBLEM_REASON[p.kind], p.detail)
        if answer.error is not None:
            raise StepFailed(*_a2a_error_reason(answer.error, c, Op.STREAM))
        msg = f"{answer.exchange.outcome} {answer.content_type or 'no content type'}, not a stream (text/event-stream)"
        self.check("stream.content_type", Status.FAIL, msg, step=StepName.STREAM)
        raise StepFailed(Reason.STREAM_NOT_A_STREAM, msg)

    # ---- shared call path

    def _client(self) -> A2AClient:
        assert self.a2a is not None
        return self.a2a

    async def _call(self, step: StepResult, name: StepName, pending: Awaitable[Answer | Reply], op: Op) -> Answer:
        """Await one client call (an Answer or an (Answer, Item) reply); raises StepFailed for anything but a
        well-framed A2A answer."""
        try:
            got = await pending
        except (ConnectFailed, DeadlineExceeded, RedirectRefused, BodyTooLarge, AuthTokenFailed) as exc:
            self._wire_failed(step, exc)
        answer: Answer = got[0] if isinstance(got, tuple) else got
        self._judge(step, name, answer, op)
        return answer

    def _wire_failed(self, step: StepResult, exc: ConnectFailed | DeadlineExceeded | RedirectRefused | BodyTooLarge
                     | AuthTokenFailed) -> typing.NoReturn:
        self.answer_arrived()  # the call ended here (refused, reset, timed out): the agent's part ends with it
        if exc.exchange is not None:
            step.exchanges.append(exc.exchange)
        raise StepFailed(*_transport_reason(exc)) from None

    def _judge(self, step: StepResult, name: StepName, answer: Answer, op: Op) -> None:
        """Record the exchange and the transport/framing checks; raise for a problem."""
        self.answer_arrived(answer)
        step.exchanges.append(answer.exchange)
        step.http_status = answer.status
        p = answer.problem
        if p is not None and p.kind is not ProblemKind.FRAMING:
            self.check("invoke.transport", Status.FAIL, p.detail, step=name)
            self._refused(p)
            raise StepFailed(_PROBLEM_REASON[p.kind], p.detail)
        if op is Op.SEND:
            self.check("invoke.transport", Status.PASS, f"{answer.exchange.outcome} {answer.content_type}".strip(),
                       step=name)
        # the request's headers never reached the agent (it names another A2A-Version; without Content-Type it could
        # not even read the body, so its answer echoes no id): the framing is not the agent's to judge
        lost = _header_lost(answer.error, self._client().dialect.header_version) if p is not None else None
        if lost is not None:
            self.check("invoke.framing", Status.SKIP, f"not judged: {lost}", step=name)
            raise StepFailed(Reason.INVOKE_GATEWAY_ERROR, lost)
        if op is Op.SEND or p is not None:
            self.check("invoke.framing", Status.FAIL if p else Status.PASS, p.detail if p else "", step=name)
        if p is not None:
            raise StepFailed(Reason.INVOKE_NOT_A2A, p.detail)
        if op is Op.SEND:  # a finding of its own: the official clients read the body whatever its Content-Type
            self.check("invoke.content_type", Status.FAIL if answer.media_type else Status.PASS,
                       answer.media_type or answer.content_type, step=name)


# the steps that call the agent's interface: their calls are the agent's latency (ProbeRun.latency)
_REMOTE_STEPS = frozenset({StepName.EXTENDED_CARD, StepName.PING, StepName.INVOKE, StepName.STREAM, StepName.PUSH})
_ROUTE_REASONS = frozenset({Reason.INVOKE_UNREACHABLE, Reason.INVOKE_TIMEOUT, Reason.INVOKE_ROUTE_NOT_FOUND,
                            Reason.INVOKE_UNEXPECTED_STATUS, Reason.INVOKE_NOT_A2A, Reason.INVOKE_GATEWAY_ERROR})
_PROBLEM_REASON = {ProblemKind.ROUTE: Reason.INVOKE_ROUTE_NOT_FOUND, ProblemKind.AUTH: Reason.INVOKE_AUTH,
                   ProblemKind.VERSION: Reason.INVOKE_VERSION_UNSUPPORTED,
                   ProblemKind.STATUS: Reason.INVOKE_UNEXPECTED_STATUS, ProblemKind.FRAMING: Reason.INVOKE_NOT_A2A,
                   ProblemKind.GATEWAY: Reason.INVOKE_GATEWAY_ERROR, ProblemKind.RATE_LIMITED: Reason.RATE_LIMITED}


def _answered(item: Item) -> str:
    """What SendMessage answered, for a skipped poll's detail."""
    if item.kind != "task":
        return f"a {item.kind}"
    if not item.task_id:
        return "a task without an id"
    return f"the task {item.state.value}" if item.state is not None else "a task without a state"


def _other_task(sent: Item, got: Item) -> str | None:
    """What a GetTask answer names that is not the task SendMessage created (§3.1.3: the requested task)."""
    if got.task_id and got.task_id != sent.task_id:
        return f"GetTask({str(sent.task_id)[:80]}) answered task {got.task_id[:80]}"
    if got.context_id and sent.context_id and got.context_id != sent.context_id:
        return (f"GetTask({str(sent.task_id)[:80]}) answered the task in contextId {got.context_id[:80]}, "
                f"SendMessage said {sent.context_id[:80]}")
    return None


@functools.lru_cache(maxsize=1024)  # whole seconds: within max-age (5 min by default) a fleet needs ~300 of them
def _clock(second: int) -> str:
    """A cached card's times in its step detail (the second it is in, as strftime truncates): 4.4 us each, twice a
    cached run, formatted once per second instead."""
    return datetime.fromtimestamp(second, UTC).strftime("%H:%M:%S UTC")


def select_interface(card: Card, target: Target,
                     bindings: Bindings | None = None) -> tuple[Interface | None, Dialect | None, str]:
    """Prefer a 1.0 JSONRPC interface, then 0.3; honour per-agent binding/version overrides."""
    known = bindings if bindings is not None else BY_CARD_NAME
    want_binding = target.binding or "JSONRPC"
    candidates = [(i, dialect_of(i)) for i in card.interfaces if i.binding.upper() == want_binding]
    usable = [(i, d) for i, d in candidates if d is not None and i.binding.upper() in known]
    if target.a2a_version:
        usable = [(i, d) for i, d in usable if d.version == target.a2a_version]
    order = {"1.0": 0, "0.3": 1, "0.1": 2}
    # stable: the card's order breaks ties; an entry without a version last, as a2a-sdk's client takes it
    usable.sort(key=lambda pair: (order[pair[1].version], not pair[0].version))
    if usable:
        iface, dialect = usable[0]
        if dialect.version == "0.1":
            return None, None, (f"the card is A2A 0.1 ({iface.url}): a pre-0.3 dialect (tasks/send) that the "
                                "probe detects but does not invoke")
        return iface, dialect, f"{iface.binding} {dialect.version} at {iface.url}"
    offered = ", ".join(f"{i.binding or '?'} {i.version or '?'}" for i in card.interfaces) or "no interfaces"
    wanted = f"{want_binding} {target.a2a_version or '1.0/0.3'}"
    return None, None, f"no {wanted} interface; the card offers: {offered}"


_TLS_REASONS: dict[type[Exception], Reason] = {TlsFailed: Reason.TLS_CERTIFICATE_INVALID,
                                               ClientCertRefused: Reason.TLS_CLIENT_CERT_REFUSED,
                                               AuthTokenFailed: Reason.AUTH_TOKEN_FAILED,
                                               # out of descriptors: the probe's overload, never the agent's
                                               ProbeOutOfFiles: Reason.PROBE_OVERLOADED,
                                               # no free connection in its own pool before the deadline: the same
                                               ProbePoolFull: Reason.PROBE_OVERLOADED}


def _declares_extended(card: Card) -> bool:
    caps = card.doc.get("capabilities")
    return (isinstance(caps, dict) and caps.get("extendedAgentCard") is True) or (
        card.family != "1.0" and card.doc.get("supportsAuthenticatedExtendedCard") is True)


def _summary(added: dict[str, list[str]]) -> str:
    return "; ".join(f"{k}: {', '.join(v[:10])}" for k, v in added.items() if v) or "nothing beyond the public card"


def card_diff(public: dict[str, Any], extended: dict[str, Any]) -> dict[str, list[str]]:
    """What the extended card adds to the public one: top-level fields, skills (by id), changed fields."""
    def skill_ids(doc: dict[str, Any]) -> set[str]:
        return {str(s.get("id")) for s in doc.get("skills") or [] if isinstance(s, dict)}

    return {"fields": sorted(k for k in extended if k not in public),
            "skills": sorted(skill_ids(extended) - skill_ids(public)),
            "changed": sorted(k for k in extended if k in public and k not in ("skills", "signatures")
                              and extended[k] != public[k])}


def _silence(judge: StreamJudge) -> str:
    """How long the stream had been silent when it was cut: a cut that long after the last event, at the same
    figure every time, is an idle or read timeout on the way (nginx proxy_read_timeout, 60 s by default)."""
    if judge.last_at is None:
        return ""
    quiet = time.monotonic() - judge.last_at
    return (f", {quiet:.1f} s after the last event: if that matches a proxy's idle or read timeout (nginx "
            "proxy_read_timeout), raise it for A2A streams or send SSE keep-alive comments more often than it")


def _transport_reason(exc: Exception) -> tuple[Reason, str]:
    if type(exc) in _TLS_REASONS:
        return _TLS_REASONS[type(exc)], str(exc)
    if isinstance(exc, DeadlineExceeded):
        return Reason.INVOKE_TIMEOUT, str(exc)
    if isinstance(exc, RedirectRefused):
        return Reason.INVOKE_UNEXPECTED_STATUS, f"the interface redirected: {exc}"
    if isinstance(exc, BodyTooLarge):
        return Reason.WORK_LIMIT_EXCEEDED, f"the probe stopped reading the answer: {exc}"
    if isinstance(exc, TargetRefused):
        return Reason.TARGET_NOT_ALLOWED, str(exc)
    if isinstance(exc, ProtocolError | ConnectionReset):
        return Reason.INVOKE_PROTOCOL_ERROR, str(exc)
    return Reason.INVOKE_UNREACHABLE, str(exc)


def note_error_status(result: ProbeResult, answer: Answer | None) -> None:
    """Remember the status an HTTP+JSON or gRPC A2A error came with (the report's errorMapping reads them)."""
    err = answer.error if answer is not None else None
    if err is None or err.name is None or err.binding == "jsonrpc" or err.code is None:
        return
    result.note_error_status(err.name, err.binding, str(err.code), err.mappings)


def error_status_hook(result: ProbeResult) -> Hook:
    return lambda _label, answer, _exc: note_error_status(result, answer)


# the version a VersionNotSupportedError says it was asked for, as both official SDKs word it: a2a-sdk "A2A version
# '0.3' is not supported by this handler. …", @a2a-js/sdk "The requested A2A protocol version '0.3' is not …"
_VERSION_SEEN = re.compile(r"version '([^']{0,16})' is not supported", re.IGNORECASE)


def _version_seen(message: str) -> str | None:
    found = _VERSION_SEEN.search(message)
    return found.group(1).strip() if found else None


def _header_lost(err: A2AError | None, version: str | None) -> str | None:
    """Why a VersionNotSupportedError naming another version than the one sent is the header lost on the way."""
    seen = _version_seen(err.message) if err is not None and err.is_(a2a_errors.VERSION_NOT_SUPPORTED) else None
    if err is None or not version or seen is None or seen.split(".")[:2] == version.split(".")[:2]:
        return None
    return (f"{err.describe()}: the agent says it received A2A-Version {seen or '(none)'}, the probe sent {version}: "
            "a gateway or proxy on the way dropped or rewrote the header (an absent one reads as 0.3)")


def _a2a_error_reason(err: A2AError, c: A2AClient, op: Op) -> tuple[Reason, str]:
    """The reason an A2A error answer to `op` stands for; the message names the method that was really called."""
    version = c.dialect.header_version
    if err.is_(a2a_errors.VERSION_NOT_SUPPORTED):
        lost = _header_lost(err, version)
        if lost is not None:
            return Reason.INVOKE_GATEWAY_ERROR, lost
        return Reason.INVOKE_VERSION_UNSUPPORTED, f"{err.describe()} (sent A2A-Version {version})"
    if err.is_(a2a_errors.METHOD_NOT_FOUND) and c.v1:
        return (Reason.INVOKE_VERSION_UNSUPPORTED,
                f"{err.describe()}: the server does not know the 1.0 method {c.method(op)} at the URL the card "
                "advertises as 1.0 (it may speak only 0.3, or ignore the A2A-Version header)")
    return Reason.INVOKE_A2A_ERROR, err.describe()


async def run_interfaces(target: Target, client: HttpClient, *, steps: Sequence[StepName] = FULL_STEPS,
                         bindings: Bindings | None = None, only: Collection[BindingName] | None = None,
                         agree: bool = True, cards: cardcache.CardCache | None = None) -> ProbeResult:
    """Probe every interface the card advertises that the probe can call (`--binding all`, and the daemon).

    The card is discovered once; then each interface (`plan_interfaces`, narrowed to `only`) runs on its own,
    all at once under the one deadline, so a hanging interface costs the others no time. The first interface (the
    card's preference, as a plain probe picks it) gives the top-level fields; each interface gets its own entry in
    `interfaces` and its checks are tagged with it, and `interop.bindings_agree` reports when they disagree. With
    `agree` (the CLI) every interface also gets the equivalence check's own calls; the daemon passes
    `agree=False`, so a card that offers one interface costs what a plain probe costs, and its card cache `cards`."""
    runs = await probe_interfaces(target, client, steps=steps, bindings=bindings, only=only, cards=cards)
    if agree and runs[0].card is not None:
        await asyncio.gather(*(_agreement_calls(run, anonymous=len(runs) > 1) for run in runs))
    result = await combine(runs, client if agree else None)
    result.duration_s = max(run.r.duration_s for run in runs)  # they ran at once
    return result


async def probe_interfaces(target: Target, client: HttpClient, *, steps: Sequence[StepName] = FULL_STEPS,
                           bindings: Bindings | None = None,
                           only: Collection[BindingName] | None = None,
                           cards: cardcache.CardCache | None = None) -> list[ProbeRun]:
    """One finished run per interface of `plan_interfaces`, the preferred first, from one discovery; a single
    run when the card could not be read or offers nothing to call (it says why)."""
    base = _start(target, client, bindings, cards)
    await _guarded(base, base.discover_card())
    card = base.card if base.r.reason is None else None
    if card is None:
        return [_finish(base)]
    plan = plan_interfaces(card, target, base.bindings, only)
    if not plan:  # nothing to call: the plain walk says why (no usable interface, 0.1, card invalid)
        if only and target.binding is None:
            base.t = target.model_copy(update={"binding": min(only, key=_PREFERENCE.index).card_name})
        await _guarded(base, base.walk(steps))
        return [_finish(base)]
    runs = [base.fork(_interface_target(target, pair)) for pair in plan[1:]]
    if not _plain_choice(target, plan[0]):
        base.t = _interface_target(target, plan[0])
    runs.insert(0, base)
    if len(runs) == 1:
        await _guarded(base, base.walk(steps))
    else:
        await asyncio.gather(*(_guarded(run, run.walk(steps)) for run in runs))
    return [_finish(run) for run in runs]


RunOne = typing.Callable[[Target], Awaitable["ProbeRun"]]
AGREE_TIMEOUT = 10.0  # the equivalence check's own calls (GetTask of an unknown id, cancel of a finished task)
OP_GET_UNKNOWN = "GetTask of an unknown task id"
OP_CANCEL_TERMINAL = "CancelTask of a finished task"
OP_ANONYMOUS = "GetTask without credentials"  # interop.bindings_same_auth's call, where the card declares security


async def each_interface(target: Target, run_one: RunOne, bindings: Bindings | None = None) -> list[ProbeRun]:
    """`run_one` on the card's preferred interface, then once per other (binding, version) the probe can call,
    each followed by the equivalence check's own calls. The engine's probe and the conformance suite share it."""
    first = await run_one(target)
    runs = [first]
    if first.card is None:
        return runs
    known = bindings if bindings is not None else BY_CARD_NAME
    plan = plan_interfaces(first.card, target, known)
    if first.binding is None and plan and not _plain_choice(target, plan[0]):
        # the plain choice (JSON-RPC) is not on the card (an HTTP+JSON- or gRPC-only agent): start, as
        # probe_interfaces does, from the card's preferred interface, not from a failed selection
        first = await run_one(_interface_target(target, plan[0]))
        runs = [first]
    first_dialect = for_version(first.r.protocol_version or "")  # a 0.2 card is labelled 0.2, planned as 0.3
    first_key = (str(first.r.binding or "").upper(),
                 first_dialect.version if first_dialect is not None else first.r.protocol_version or "")
    others = [key for key in plan if key != first_key]  # the first is done
    await _agreement_calls(first, anonymous=bool(others))
    for key in others:
        run = await run_one(_interface_target(target, key))
        await _agreement_calls(run, anonymous=True)
        runs.append(run)
    return runs


async def combine(runs: list[ProbeRun], client: HttpClient | None = None) -> ProbeResult:
    """One result for an agent probed on each interface: the first run's fields, every run's checks (tagged with
    its interface; the card's own checks, identical on every run, once and untagged), one entry per interface,
    the equivalence check, and a failed verdict when any interface fails."""
    result = runs[0].r
    if len(runs) == 1 and runs[0].card is None:
        return result
    entries = [_interface_result(run) for run in runs]
    result.interfaces = entries
    if len(runs) > 1:
        shared = _card_level(runs)
        key0 = entries[0].key
        merged = [c if _observed(c) in shared else copy_check(c, interface=key0)
                  for c in runs[0].r.checks if c.id not in ACROSS_INTERFACES]
        for run, e in zip(runs[1:], entries[1:], strict=True):
            for seen in run.r.error_statuses:  # errorMapping: the statuses of every binding
                result.note_error_status(seen.error, seen.binding, seen.status, tuple(seen.mappings))
            result.tls.update({channel: info for channel, info in run.r.tls.items() if channel != "card"})
            merged += [copy_check(c, interface=e.key) for c in run.r.checks
                       if c.id not in ACROSS_INTERFACES and _observed(c) not in shared]
        result.checks = merged
    else:
        result.checks = [c for c in result.checks if c.id not in ACROSS_INTERFACES]
    _equivalence(result, *await _nondeterminism(runs, ask=client is not None))
    _same_auth(result, runs[0].card.doc if runs[0].card is not None else None,
               frozenset(e.key for run, e in zip(runs, entries, strict=True) if run.withheld))
    # one broken binding is a failed agent: every real client of that binding breaks
    broken = next((i for i in entries if not i.success), None)
    if broken is not None and result.reason is None:
        result.reason = broken.reason
    result.success = result.reason is None
    if len(runs) > 1:
        return redact.result(result)  # the equivalence check quotes what the agent answered
    # one interface (most agents, every daemon run of them): the run was scrubbed as it finished; only its entry's
    # own fields (the answer's texts) are new. Walking the whole result again cost ~4 % of a ping's CPU.
    for entry in entries:
        steps, entry.steps = entry.steps, []
        redact.result(entry)
        entry.steps = steps
    return result


_CARD_STEPS = (StepName.DISCOVER, StepName.VALIDATE)


def _card_level(runs: list[ProbeRun]) -> set[tuple[str, str]]:
    """Checks of the card itself: the same observation on every run (each run fetched the card). Graded once, by
    the first interface's version, as the top-level fields are: a 0.3 run's "not graded" skip of a 1.0-only rule
    is the same observation, not another finding."""
    def keys(run: ProbeRun) -> set[tuple[str, str]]:
        return {_observed(c) for c in run.r.checks if c.step in _CARD_STEPS}

    shared = keys(runs[0])
    for run in runs[1:]:
        shared &= keys(run)
    return shared


def _observed(c: CheckResult) -> tuple[str, str]:
    """(check id, what was seen), whatever the version graded it as."""
    if c.status is Status.SKIP and c.message.startswith("not graded: "):
        return c.id, c.message.partition("; observed: ")[2] or catalogue.get(c.id).title
    return c.id, c.message


async def _agreement_calls(run: ProbeRun, anonymous: bool = False) -> None:
    """The same operations on every interface, for the equivalence checks: GetTask of an unknown id (every
    binding must answer TaskNotFoundError), CancelTask of the task the invoke step finished (a terminal task
    cannot be canceled) and, with `anonymous` (more than one interface) on a card that declares security, GetTask
    without credentials (every interface must enforce the same schemes). They leave the agent as it was; nothing is
    called after a route, transport or version failure (the verdict already says why)."""
    if run.binding is None or run.r.reason in _NO_AGREEMENT_CALLS:
        return
    c = A2AClient(run.binding, Deadline.after(min(run.t.timeout, AGREE_TIMEOUT)))
    c.hooks.append(error_status_hook(run.r))  # their statuses are errorMapping evidence too
    run.outcomes[OP_GET_UNKNOWN] = await _outcome_of(c, c.get(f"a2a-probe-agree-{uuid.uuid4()}"))
    item = run.final_item
    if item is not None and item.kind == "task" and item.task_id and item.state in TERMINAL:
        run.outcomes[OP_CANCEL_TERMINAL] = await _outcome_of(c, c.cancel(item.task_id))
    if anonymous and run.card is not None and authchecks.declares_security(run.card.doc):
        run.outcomes[OP_ANONYMOUS] = await _anonymous_outcome(c, run.t)


async def _anonymous_outcome(c: A2AClient, target: Target) -> str:
    """How one interface takes a call without credentials, as "<Anonymous value>: <the answer>"."""
    try:
        with without_credentials():  # none of the auth flow's credentials either (headers, query, cookie)
            answer, _ = await c.get(f"a2a-probe-auth-{uuid.uuid4()}",
                                    headers=authchecks.anonymous_headers(target.headers))
    except Exception as exc:  # a transport failure says nothing of authentication; never a crash of the probe
        return f"{authchecks.Anonymous.OTHER.value}: no answer ({type(exc).__name__})"
    seen = authchecks.anonymous_outcome(answer)
    if seen is authchecks.Anonymous.REFUSED:
        return f"{seen.value}: {answer.exchange.outcome}"  # HTTP 401, gRPC UNAUTHENTICATED
    if seen is authchecks.Anonymous.PROCESSED:
        return f"{seen.value}: {answer.error.name if answer.error else 'a result'} ({answer.exchange.outcome})"
    return f"{seen.value}: {answer.describe()[:120]}"


# the interface cannot be reached or spoken to as A2A: more calls would only repeat the verdict's cause
_NO_AGREEMENT_CALLS = _ROUTE_REASONS | {
    Reason.INVOKE_AUTH, Reason.INVOKE_VERSION_UNSUPPORTED, Reason.INVOKE_LEGACY_PROTOCOL, Reason.NO_USABLE_INTERFACE,
    Reason.CARD_UNREACHABLE, Reason.CARD_HTTP_STATUS, Reason.INVOKE_PROTOCOL_ERROR, Reason.AUTH_TOKEN_FAILED,
    Reason.TLS_CERTIFICATE_INVALID, Reason.TLS_CLIENT_CERT_REFUSED, Reason.PROBE_CONFIG_ERROR, Reason.PROBE_ERROR,
    Reason.TARGET_NOT_ALLOWED, Reason.PROBE_OVERLOADED, Reason.INTERFACE_PATH_DOUBLED,
    Reason.INTERFACE_URL_UNROUTABLE, Reason.CARD_UNSIGNED, Reason.CARD_SIGNATURE_INVALID,
    Reason.CARD_SIGNATURE_UNTRUSTED, Reason.TASK_TIMEOUT,
    Reason.WORK_LIMIT_EXCEEDED}


async def _outcome_of(c: A2AClient, pending: Awaitable[Reply]) -> str:
    """What one call gave, in binding-neutral words: an A2A error by name, a result, or no answer."""
    try:
        answer, item = await pending
    except Exception as exc:  # a transport failure is an outcome too; never a crash of the probe
        return f"no answer ({type(exc).__name__})"
    if answer.error is not None:
        return answer.error.name or f"an error the spec does not name ({answer.exchange.outcome})"
    if answer.problem is not None:
        return f"no A2A answer ({answer.problem.kind.value}, {answer.exchange.outcome})"
    if item is not None and item.kind == "task":
        return f"a Task {state_name(item.state)}"
    return "a result"


_PREFERENCE = tuple(BindingName)  # the enum lists the bindings in the order a plain probe prefers them
_VERSION_ORDER = {"1.0": 0, "0.3": 1}


def plan_interfaces(card: Card, target: Target, known: Collection[str],
                    only: Collection[BindingName] | None = None) -> list[tuple[str, str]]:
    """The interfaces `run_interfaces` probes, as (protocolBinding, version), one per binding and version the
    probe can call, within `only` and the target's version. The first is the one a plain probe selects (the
    target's binding, else JSON-RPC, 1.0 before 0.3); the others follow in the card's order."""
    pairs: list[tuple[str, str]] = []
    for iface in card.interfaces:
        d = dialect_of(iface)
        key = iface.binding.upper()
        name = BindingName.of(key)
        if d is None or d.version not in _VERSION_ORDER or key not in known or (key, d.version) in pairs:
            continue
        if (target.a2a_version and d.version != target.a2a_version) or (only is not None and name not in only):
            continue
        pairs.append((key, d.version))
    want: str = target.binding or "JSONRPC"
    if not any(b == want for b, _ in pairs) and pairs:
        want = pairs[0][0]  # the card has no interface of the preferred binding: its first one leads
    pairs.sort(key=lambda p: (p[0] != want, _VERSION_ORDER[p[1]] if p[0] == want else 0))
    return pairs


def _plain_choice(target: Target, pair: tuple[str, str]) -> bool:
    """The target as it is already selects this interface (no copy needed: the common one-interface case)."""
    return pair[0] == (target.binding or "JSONRPC") and target.a2a_version in (None, pair[1])


def _interface_target(target: Target, pair: tuple[str, str]) -> Target:
    return target.model_copy(update={"binding": pair[0], "a2a_version": pair[1]})


def _interface_result(run: ProbeRun) -> InterfaceResult:
    r, item = run.r, run.final_item
    arts = item is not None and item.kind == "task"
    failed = next((s for s in r.steps if s.reason is not None and s.reason is r.reason), None)
    return InterfaceResult(binding=run.binding.name if run.binding else str(r.binding or "").lower(),
                           protocol_binding=str(r.binding or run.t.binding or ""), protocol_version=r.protocol_version,
                           interface_url=r.interface_url, success=r.success, reason=r.reason,
                           duration_s=r.duration_s, final_state=run.final_state, outcomes=dict(run.outcomes),
                           artifacts=[list(p) for p in item.artifact_parts] if item is not None and arts else None,
                           artifact_texts=[t[:200] for t in item.artifact_texts] if item is not None and arts
                           else None, steps=r.steps, detail=(failed.detail if failed else r.problem or "")[:500],
                           checks_failed=sum(1 for c in r.checks if c.status is Status.FAIL))


async def _nondeterminism(runs: list[ProbeRun], ask: bool = True) -> tuple[frozenset[str], str]:
    """Which artifact aspects ("parts", "text") are not compared, and why: those that vary between two answers of
    the SAME binding to the same message.

    An LLM answers differently each time, so different artifacts across bindings prove nothing by themselves:
    only when they differ is the first interface asked once more (`ask`; the daemon makes no extra calls), and an
    aspect that changes there too is not compared. A deterministic agent (an echo, a fixed reply) costs no extra
    call and is compared in full. Without a second answer nothing tells variance from a broken binding, so the
    differing aspects are not compared either: a false alarm on every LLM agent is worse than a missed one."""
    first = runs[0]
    seen = [(run.final_item.artifact_parts, run.final_item.artifact_texts) for run in runs
            if run.final_item is not None and run.final_item.kind == "task"]
    differs = frozenset(a for a, i in (("parts", 0), ("text", 1)) if len({repr(s[i]) for s in seen}) > 1)
    if not differs or first.binding is None or first.final_item is None:
        return frozenset(), ""
    if not ask:
        return differs, "they differ, and no second answer was asked for to tell the agent's own variance apart"
    c = A2AClient(first.binding, Deadline.after(first.t.timeout))
    try:
        _, item = await c.send(first.t.message)
        if item is not None and item.kind == "task" and item.task_id and item.state not in TERMINAL | INTERRUPTED:
            _, item = await c.poll(item.task_id)
    except Exception:  # no second answer: an aspect that differs cannot be told from the agent's own variance
        item = None
    varies = f"they vary between two answers on {_key(first)} alone (a nondeterministic agent)"
    if item is None or item.kind != "task":
        return differs, (varies if item is not None else
                         f"they differ, and a second answer on {_key(first)} to tell variance apart failed")
    again = (item.artifact_parts, item.artifact_texts)
    base = (first.final_item.artifact_parts, first.final_item.artifact_texts)
    return frozenset(a for a, i in (("parts", 0), ("text", 1)) if a in differs and again[i] != base[i]), varies


def _key(run: ProbeRun) -> str:
    name = run.binding.name if run.binding else str(run.r.binding or "").lower()
    return f"{name} {run.r.protocol_version or '?'}"


def _equivalence(result: ProbeResult, noisy: frozenset[str] = frozenset(), why: str = "") -> None:
    """interop.bindings_agree: the same agent on every interface — the verdict, the invoke's terminal state, the
    error each gives to the same impossible request, and the artifacts of the same message (an aspect found to
    vary on one binding alone, `noisy`, is not compared: see _nondeterminism)."""
    entries = result.interfaces
    if len(entries) < 2:
        result.checks.append(shared_check("interop.bindings_agree", Status.SKIP, "the card advertises one interface"))
        return
    problems = []
    if len({e.success for e in entries}) > 1:
        passing = [e.key for e in entries if e.success]
        failing = [f"{e.key} ({e.reason.value if e.reason else '?'})" for e in entries if not e.success]
        problems.append(f"{', '.join(passing)} pass(es) but {', '.join(failing)} fail(s)")
    states = {e.key: e.final_state for e in entries if e.final_state is not None}
    if len(set(states.values())) > 1:
        problems.append("SendMessage ended differently: " + ", ".join(f"{k} {s}" for k, s in states.items()))
    for op in (OP_GET_UNKNOWN, OP_CANCEL_TERMINAL):
        got = {e.key: e.outcomes[op] for e in entries if op in e.outcomes}
        if len(set(got.values())) > 1:
            problems.append(f"{op}: " + ", ".join(f"{k} gave {v}" for k, v in got.items()))
    arts = [e for e in entries if e.artifacts is not None]
    if "parts" not in noisy and len({repr(e.artifacts) for e in arts}) > 1:
        problems.append("SendMessage's artifacts differ: " + ", ".join(
            f"{e.key} {len(e.artifacts or [])} artifact(s) {_kinds(e.artifacts)}" for e in arts))
    if "text" not in noisy and len({repr(e.artifact_texts) for e in arts}) > 1:
        problems.append("SendMessage's artifact text differs: " + ", ".join(
            f"{e.key} {' | '.join(e.artifact_texts or [])[:80]!r}" for e in arts))
    compared = "verdicts, terminal states, error names and artifacts" if arts else "verdicts and error names"
    why = why or f"they vary between two answers on {entries[0].key} alone (a nondeterministic agent)"
    varies = f"; {' and '.join(sorted(noisy))} of the artifacts not compared: {why}" if noisy else ""
    result.checks.append(make_check("interop.bindings_agree", Status.FAIL if problems else Status.PASS,
                                    ("; ".join(problems) or f"{len(entries)} interfaces agree on {compared}")
                                    + varies))


def _same_auth(result: ProbeResult, doc: Mapping[str, object] | None, withheld: frozenset[str] = frozenset()) -> None:
    """interop.bindings_same_auth (1.0 §5.1, 0.3 §3.4.1 "Equivalent Authentication"): every interface enforces the
    card's security alike. A call without credentials refused on one interface and processed on another, or the
    configured credentials accepted on one and refused on another, means one route skips (or breaks) the schemes
    the card declares: a gateway route without the auth filter, a binding handler without the middleware. An
    interface the probe sent no credentials (`withheld`: another origin, security.credentials_match says so) is not
    compared on them."""
    check = "interop.bindings_same_auth"
    entries = result.interfaces
    if len(entries) < 2:
        result.checks.append(shared_check(check, Status.SKIP, "the card advertises one interface"))
        return
    if doc is None or not authchecks.declares_security(doc):
        result.checks.append(shared_check(check, Status.SKIP, "the card declares no security requirements"))
        return
    seen = {e.key: e.outcomes[OP_ANONYMOUS].partition(": ") for e in entries if OP_ANONYMOUS in e.outcomes}
    refused = [key for key, (kind, _, _) in seen.items() if kind == authchecks.Anonymous.REFUSED.value]
    processed = [f"{key} ({got})" for key, (kind, _, got) in seen.items()
                 if kind == authchecks.Anonymous.PROCESSED.value]
    denied = [e.key for e in entries if e.reason is Reason.INVOKE_AUTH and e.key not in withheld]
    accepted = [e.key for e in entries if e.final_state is not None]  # the invoke got a task with the credentials
    problems = []
    if refused and processed:
        problems.append(f"a call without credentials is refused on {', '.join(refused)} but processed on "
                        f"{', '.join(processed)}")
    if denied and accepted:
        problems.append(f"the configured credentials are accepted on {', '.join(accepted)} but refused on "
                        f"{', '.join(denied)}")
    if problems:
        result.checks.append(make_check(check, Status.FAIL, "; ".join(problems)))
    elif not seen and not denied:  # the daemon's runs make no call without credentials (agree=False)
        result.checks.append(shared_check(check, Status.SKIP, "no call without credentials was made"))
    else:
        what = (f"a call without credentials: {', '.join(f'{key} {kind}' for key, (kind, _, _) in seen.items())}"
                if seen else f"the configured credentials refused on {', '.join(denied)}")
        result.checks.append(make_check(check, Status.PASS,
                                        f"the interfaces enforce the card's security alike ({what})"))


def _kinds(artifacts: list[list[str]] | None) -> str:
    return "[" + "; ".join(",".join(parts) or "no parts" for parts in artifacts or []) + "]"
