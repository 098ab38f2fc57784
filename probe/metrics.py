"""Every metric the daemon exports, defined once, plus the blackbox-style /probe registry.

Label values come only from config (agent, module, allow-listed agent labels) and fixed enums
(step, phase, reason): never URLs, error text or status strings. The catalogue below is the
source of the docs (`docs/metrics.md`) and is tested against what is actually exported.
"""

from __future__ import annotations

import asyncio
import itertools
import platform
import re
import time
import zlib
from bisect import bisect_left
from collections import deque
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import NamedTuple

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    GCCollector,
    Histogram,
    PlatformCollector,
    ProcessCollector,
    disable_created_metrics,
)
from prometheus_client.exposition import choose_encoder, gzip_accepted
from prometheus_client.metrics import MetricWrapperBase
from prometheus_client.metrics_core import Metric

from probe import __version__, exposition
from probe.checks.push import DeliveryProblem
from probe.exposition import CounterFamily, Family, FamilyCollector, GaugeFamily, HistogramFamily
from probe.inbox import Refused
from probe.interning import Interned
from probe.reasons import Reason
from probe.results import BindingName, HttpPhases, ProbeResult, PushDelivery, Status, StepName, StepResult
from probe.wire.cardcache import RESULTS as CARD_CACHE_RESULTS

# `*_created` series (one per counter and histogram child) would double /metrics for no use: Prometheus ignores them
# unless created-timestamp ingestion is enabled, and every counter here starts with the job anyway
disable_created_metrics()  # type: ignore[no-untyped-call]

PREFIX = "a2a_probe_"
STANDARD_PREFIXES = ("process_", "python_")  # prometheus_client's own collectors, documented as such
PHASES = tuple(HttpPhases.model_fields)
HTTP_STEPS = (StepName.DISCOVER, StepName.AUTH, StepName.EXTENDED_CARD, StepName.PING, StepName.INVOKE,
              StepName.STREAM, StepName.PUSH)
REMOTE_STEPS = (StepName.PING, StepName.INVOKE, StepName.STREAM, StepName.PUSH)
LEAN_STEPS = frozenset((StepName.DISCOVER, *REMOTE_STEPS, StepName.SUITE))  # step_success by default
_LEAN_NAMES = frozenset(step.value for step in LEAN_STEPS)
NO_REASON = "none"

AM = ("agent", "module")
AMB = ("agent", "module", "binding")
AMBS = ("agent", "module", "binding", "step")
# the `binding` label: a BindingName value, or "card" for a run that reached no interface (see `outcomes`)
CARD = "card"


@dataclass(frozen=True, slots=True)
class Spec:
    name: str  # without the prefix and without _total for counters
    kind: str  # gauge | counter | histogram
    labels: tuple[str, ...]
    help: str
    detail: bool = False  # per-agent detail: exported only for agents/modules with detailed metrics on
    buckets: tuple[float, ...] | None = None  # histograms of the daemon itself; per-agent ones use the config's
    batched: bool = False  # label-less, observed on every run: folded in batches (BatchedHistogram)


# the daemon's own latency histograms: one series set per daemon, never per agent
_SELF_BUCKETS = (0.001, 0.005, 0.025, 0.1, 0.5, 2.5, 10.0)

CATALOGUE: tuple[Spec, ...] = (
    # ---- the lean default set, per agent and module (see `series_per_job`)
    Spec("success", "gauge", AMB,
         "1 if the last probe of this agent and module succeeded on this binding, else 0 (binding=\"card\": the "
         "run reached no interface)"),
    Spec("step_success", "gauge", AMBS,
         "1 if the step passed in the last probe, 0 if it failed (absent if it did not run); "
         "discover and the remote step by default, every step with detailed metrics"),
    Spec("duration_seconds", "histogram", AMB, "The agent's latency per probe: its first request to the "
         "last byte of the terminal answer; not the card's fetch nor the probe's own work (buckets from "
         "metrics.duration_buckets)"),
    Spec("runs", "counter", AMB, "Probes run"),
    Spec("failures", "counter", (*AMB, "reason"),
         "Failed probes by primary reason (a reason's series appears with its first failure; with detailed "
         "metrics every reason starts at 0)"),
    Spec("failure_reason_info", "gauge", (*AMB, "reason"),
         "1 for the primary reason of the last probe (reason=\"none\" when it passed); "
         "one series per agent and module"),
    Spec("last_run_timestamp_seconds", "gauge", AM, "Unix time the last probe finished"),
    Spec("last_success_timestamp_seconds", "gauge", AMB, "Unix time of the last successful probe"),
    Spec("interval_seconds", "gauge", AM, "Configured probe interval"),
    Spec("timeout_seconds", "gauge", AM, "Configured probe timeout"),
    Spec("scheduler_missed_runs", "counter", (*AM, "cause"),
         "Scheduled runs not started: cause=overlap (previous run still going), misfire (started too late), "
         "overloaded (no free probe slot in time: the probe's overload, not the agent's failure) or rate_limited "
         "(the agent's last answer was a rate limit whose Retry-After has not passed, at most an hour); "
         "a cause's series appears with its first miss"),
    # ---- detailed, opt-in per agent or module (`detailed_metrics: true`) or for all (`metrics.detailed`)
    Spec("last_duration_seconds", "gauge", AMB, "The agent's latency in the last probe (as duration_seconds)",
         detail=True),
    Spec("last_step_duration_seconds", "gauge", AMBS, "Wall time of each step in the last probe", detail=True),
    Spec("step_duration_seconds", "histogram", AMBS, "Wall time of the remote steps (ping, invoke, stream)",
         detail=True),
    Spec("http_status_code", "gauge", AMBS,
         "HTTP status of the step's last exchange in the last probe; 0 = no response", detail=True),
    Spec("http_phase_duration_seconds", "gauge", (*AMBS, "phase"),
         "Seconds per HTTP phase (resolve, connect, processing, transfer) summed over the step's exchanges",
         detail=True),
    Spec("checks_failed", "gauge", AMB, "Checks that failed in the last probe", detail=True),
    # ---- per agent
    Spec("agent_card_info", "gauge", ("agent", "protocol_version", "binding", "card_version"),
         "Always 1: the protocol version and binding the probe selected and the card's own version"),
    Spec("agent_info", "gauge", ("agent",), "Always 1: the agent's allow-listed config labels (join in PromQL)"),
    Spec("tls_earliest_cert_expiry_timestamp_seconds", "gauge", ("agent", "binding"),
         "Unix time the earliest-expiring certificate the agent presented expires (blackbox's "
         "probe_ssl_earliest_cert_expiry); binding=\"card\" for discovery, else the invoked binding"),
    Spec("tls_info", "gauge", ("agent", "binding", "version", "cipher"),
         "Always 1: the TLS version and cipher last negotiated (the probe offers a fixed list, so both are bounded)"),
    Spec("tls_verification_disabled", "gauge", ("agent",),
         "1 if the agent is configured with tls.insecure_skip_verify (its certificate is not checked)"),
    # ---- the daemon itself
    Spec("build_info", "gauge", ("version", "python_version", "shard"),
         "Always 1: the probe's build, and the shard (i/n) of the agents this replica probes"),
    Spec("config_last_reload_successful", "gauge", (), "1 if the last config (re)load succeeded"),
    Spec("config_last_reload_success_timestamp_seconds", "gauge", (),
         "Unix time of the last successful config load"),
    Spec("agents_configured", "gauge", (), "Agents in the active config that this replica probes (its shard)"),
    Spec("probes_in_flight", "gauge", (), "Probes running now"),
    Spec("asyncio_tasks", "gauge", (), "asyncio tasks alive in the daemon (flat in steady state; growth is a leak)"),
    Spec("push_deliveries", "counter", AM, "Push notifications that reached the receiver for this job's tasks"),
    Spec("push_delivery_latency_seconds", "histogram", (*AM, "delivery"),
         "Seconds from the send to the first (delivery=\"first\") and to the terminal (delivery=\"terminal\") "
         "accepted push notification"),
    Spec("push_delivery_problems", "counter", (*AM, "problem"),
         "Push round trips with a missing, late or broken delivery, by problem (every problem starts at 0)"),
    Spec("push_receiver_refused", "counter", ("cause",),
         "Requests the push receiver refused: unknown_token, unauthenticated, too_large, malformed, overflow, "
         "too_slow (a body not complete within web_header_timeout of its headers)"),
    Spec("push_receiver_registrations", "gauge", (), "Webhook registrations the push receiver holds now"),
    Spec("web_connections", "gauge", (), "Connections open to the daemon's web server now (web_max_connections "
         "at most)"),
    Spec("web_connections_refused", "counter", ("cause",),
         "Connections the web server closed unserved: cause=limit (over web_max_connections, answered 503 on "
         "plain HTTP), header_timeout (no complete request headers within web_header_timeout), handshake (a TLS "
         "handshake failed or not done within web_header_timeout); every cause starts at 0"),
    Spec("probe_slots", "gauge", (), "Concurrency slots (max_concurrency, or sized from the fleet when unset)"),
    Spec("probe_slots_open", "gauge", (), "Slots runs may hold now: probe_slots, or fewer while the event loop is "
         "the bottleneck (the lag governor, docs/daemon.md)"),
    Spec("slot_wait_seconds", "histogram", (), "Time runs waited for a concurrency slot (not charged to agents)",
         buckets=_SELF_BUCKETS, batched=True),
    Spec("scheduler_lateness_seconds", "histogram", (),
         "Actual start minus planned start of scheduled runs (the phase slot plus its jitter)",
         buckets=_SELF_BUCKETS, batched=True),
    Spec("event_loop_lag_seconds", "histogram", (),
         "Event-loop lag samples: how late a 50 ms timer fires (the probe's own overload)", buckets=_SELF_BUCKETS),
    Spec("event_loop_lag_p99_seconds", "gauge", (),
         "p99 of the event-loop lag samples since the previous scrape (over the scrape interval)"),
    Spec("gc_pause_seconds", "histogram", ("generation",), "Garbage-collection pauses by generation",
         buckets=_SELF_BUCKETS),
    Spec("bookkeeping_cpu_seconds", "counter", (),
         "CPU seconds spent recording finished probes (metrics, history, log line), apart from probing"),
    Spec("card_cache", "counter", ("result",),
         "Agent Card discoveries of scheduled runs by result: hit (reused, no request), revalidated (a 304 kept "
         "it), refetched (stale, fetched anew), miss (none stored), uncacheable (no-store, no caching headers)"),
    Spec("card_cache_entries", "gauge", (), "Agent Cards the card cache holds now (one per agent at most)"),
)
MISSED_CAUSES = ("overlap", "misfire", "overloaded", "rate_limited")
WEB_REFUSED_CAUSES = ("limit", "header_timeout", "handshake")  # the web server's connection guard (webguard.py)
_LABEL_DOMAINS: dict[str, tuple[str, ...]] = {  # every value the labels after (agent, module, binding) can take
    "step": tuple(s.value for s in StepName), "phase": tuple(HttpPhases.model_fields),
    "reason": (*(r.value for r in Reason), NO_REASON)}
DETAIL = frozenset(spec.name for spec in CATALOGUE if spec.detail)
PUSH_DELIVERIES = ("first", "terminal")


def exported_names(spec: Spec) -> list[str]:
    """The sample names a spec produces in the text exposition."""
    base = PREFIX + spec.name
    if spec.kind == "counter":
        return [base + "_total"]
    if spec.kind == "histogram":
        return [base + "_bucket", base + "_sum", base + "_count"]
    return [base]


class BatchedHistogram(Histogram):
    """A label-less histogram of the daemon's own, observed on every run (scheduler lateness, slot wait): an
    observation is one append to a deque; the pending ones are folded into the buckets when collected (a scrape,
    `get_sample_value`) or when `FOLD_AT` are pending, one increment per bucket and one for the sum. A collection
    shows what `Histogram.observe` would have counted (the same bucket for every value: the first bound at or
    above it; the sum up to the rounding of adding a batch's total at once). Thread-safe as the plain one: a
    deque's appends and pops are atomic, so a scrape's fold on the render thread never loses or doubles a value."""

    FOLD_AT = 1024  # a bound on what waits for a scrape (a daemon nobody scrapes stays flat)

    def _metric_init(self) -> None:
        super()._metric_init()
        self._pending: deque[float] = deque()

    def observe(self, amount: float, exemplar: dict[str, str] | None = None) -> None:
        if exemplar:
            super().observe(amount, exemplar)
            return
        pending = self._pending
        pending.append(amount)
        if len(pending) >= self.FOLD_AT:
            self.fold()

    def fold(self) -> None:
        """Count the pending observations into the buckets and the sum."""
        pending, bounds = self._pending, self._upper_bounds
        counts = [0] * len(bounds)
        total = 0.0
        for _ in range(len(pending)):
            try:
                value = pending.popleft()
            except IndexError:  # another thread's fold took the rest
                break
            total += value
            if value == value:  # NaN falls in no bucket, as in Histogram.observe
                counts[bisect_left(bounds, value)] += 1
        if total:
            self._sum.inc(total)
        for i, n in enumerate(counts):
            if n:
                self._buckets[i].inc(n)

    def collect(self) -> Iterable[Metric]:
        self.fold()
        return super().collect()


class Metrics:
    """The daemon's registry. `observe()` is the only writer of per-probe series."""

    def __init__(self, buckets: list[float], info_labels: list[str], shard: str = "0/1") -> None:
        # `registry` holds everything (collect(), get_sample_value and generate_latest work on it); a scrape
        # renders the daemon's own metrics from `_own` with prometheus_client and appends the per-agent
        # families' kept text (probe/exposition.py)
        self.registry = CollectorRegistry(auto_describe=True)
        self._own = CollectorRegistry(auto_describe=True)
        self.info_labels = tuple(info_labels)
        self._m: dict[str, MetricWrapperBase] = {}
        self._f: dict[str, Family] = {}
        self._pending: list[tuple[str, ProbeResult, float]] = []  # results not written yet, and when (`observe`)
        for spec in CATALOGUE:
            labels = spec.labels + (self.info_labels if spec.name == "agent_info" else ())
            name = PREFIX + spec.name
            if per_agent(spec):
                self._f[spec.name] = (GaugeFamily(name, spec.help, labels) if spec.kind == "gauge" else
                                      CounterFamily(name, spec.help, labels) if spec.kind == "counter" else
                                      HistogramFamily(name, spec.help, labels, spec.buckets or buckets))
            elif spec.kind == "gauge":
                self._m[spec.name] = Gauge(name, spec.help, labels, registry=self._own)
            elif spec.kind == "counter":
                self._m[spec.name] = Counter(name, spec.help, labels, registry=self._own)
            else:
                kind = BatchedHistogram if spec.batched and not labels else Histogram
                self._m[spec.name] = kind(name, spec.help, labels, registry=self._own, buckets=spec.buckets or buckets)
        self.gauge("build_info").labels(__version__, platform.python_version(), shard).set(1)
        # the standard process_* and python_* metrics: start time, memory, CPU, open fds, GC
        standard = [collector(registry=self._own) for collector in (ProcessCollector, PlatformCollector, GCCollector)]
        for own in (*self._m.values(), *standard):
            self.registry.register(own)
        self.registry.register(FamilyCollector(list(self._f.values()), before=self.flush))
        for cause in Refused:
            self.counter("push_receiver_refused").labels(cause.value)
        for outcome in CARD_CACHE_RESULTS:  # every result starts at 0
            self.counter("card_cache").labels(outcome)
        for web_cause in WEB_REFUSED_CAUSES:
            self.counter("web_connections_refused").labels(web_cause)
        # the families every probe writes, looked up once
        self._last_run = self.agent_gauge("last_run_timestamp_seconds")
        self._success = self.agent_gauge("success")
        self._duration = self.agent_histogram("duration_seconds")
        self._runs = self.agent_counter("runs")
        self._last_success = self.agent_gauge("last_success_timestamp_seconds")
        self._step_success = self.agent_gauge("step_success")
        self._reason_info = self.agent_gauge("failure_reason_info")
        self._tls_disabled = self.agent_gauge("tls_verification_disabled")
        self._card: dict[str, tuple[str, ...]] = {}
        self._tls: dict[str, tuple[str, ...]] = {}  # "agent\0binding" -> (binding, version, cipher)
        self._info: dict[str, tuple[str, ...]] = {}
        self._reason: dict[tuple[str, str, str], str] = {}
        self._bindings: dict[tuple[str, str], tuple[str, ...]] = {}  # the binding label values a job exports
        self._detailed: set[tuple[str, str]] = set()
        self._render_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="metrics-render")
        self._renders: dict[tuple[str, bool, tuple[str, ...]], asyncio.Future[tuple[bytes, str, bool]]] = {}

    def gauge(self, name: str) -> Gauge:
        m = self._m[name]
        assert isinstance(m, Gauge)
        return m

    def counter(self, name: str) -> Counter:
        m = self._m[name]
        assert isinstance(m, Counter)
        return m

    def histogram(self, name: str) -> Histogram:
        m = self._m[name]
        assert isinstance(m, Histogram)
        return m

    # the per-agent families (labels begin with `agent`): kept rendered, see probe/exposition.py

    # Every reader and writer of the per-agent families comes through these accessors (or flushes itself, where it
    # reads `_f` directly: `_drop`'s callers, the render), so the results `observe` keeps waiting are written first.
    def agent_gauge(self, name: str) -> GaugeFamily:
        if self._pending:
            self.flush()
        f = self._f[name]
        assert isinstance(f, GaugeFamily)
        return f

    def agent_counter(self, name: str) -> CounterFamily:
        if self._pending:
            self.flush()
        f = self._f[name]
        assert isinstance(f, CounterFamily)
        return f

    def agent_histogram(self, name: str) -> HistogramFamily:
        if self._pending:
            self.flush()
        f = self._f[name]
        assert isinstance(f, HistogramFamily)
        return f

    # ---- config lifecycle

    def add_job(self, agent: str, module: str, interval: float, timeout: float, detailed: bool = False) -> None:
        """Create the series a job will have. Detailed jobs get every reason and cause at 0 as well;
        lean ones only what fits the per-agent series budget (docs/metrics.md)."""
        key = (agent, module)  # one tuple for the job's series keys (50,000 jobs)
        self.agent_gauge("interval_seconds").set(key, interval)
        self.agent_gauge("timeout_seconds").set(key, timeout)
        if not detailed:
            if key in self._detailed:
                self._drop(agent, module, DETAIL | {"failures", "scheduler_missed_runs", "step_success"},
                           downgrade=True)
            self._detailed.discard(key)
            return
        self._detailed.add(key)
        for binding in self._bindings.get(key, ()):
            self._zero_reasons(agent, module, binding)
        for cause in MISSED_CAUSES:
            self.agent_counter("scheduler_missed_runs").labels(agent, module, cause)

    def add_push_job(self, agent: str, module: str) -> None:
        """The push series of a `push` job, at 0 from the start."""
        self.agent_counter("push_deliveries").labels(agent, module)
        for problem in DeliveryProblem:
            self.agent_counter("push_delivery_problems").labels(agent, module, problem.value)

    def web_refused(self, cause: str) -> None:
        self.counter("web_connections_refused").labels(cause).inc()

    def push_refused(self, cause: Refused) -> None:
        self.counter("push_receiver_refused").labels(cause.value).inc()

    def observe_push(self, agent: str, module: str, push: PushDelivery) -> None:
        self.agent_counter("push_deliveries").inc((agent, module), push.deliveries)
        latency = self.agent_histogram("push_delivery_latency_seconds")
        for delivery, seconds in zip(PUSH_DELIVERIES, (push.first_s, push.terminal_s), strict=True):
            if seconds is not None:
                latency.observe((agent, module, delivery), max(0.0, seconds))
        known = {p.value for p in DeliveryProblem}
        for problem in push.problems:
            if problem in known:  # label values from the fixed enum only
                self.agent_counter("push_delivery_problems").inc((agent, module, problem))

    def detailed(self, agent: str, module: str) -> bool:
        return (agent, module) in self._detailed

    def set_agent_info(self, agent: str, labels: dict[str, str]) -> None:
        self._replace_info("agent_info", self._info, agent, tuple(labels.get(k, "") for k in self.info_labels))

    def remove_job(self, agent: str, module: str) -> None:
        """Drop every series of an agent/module that left the config, so dashboards don't show ghosts."""
        if self._pending:
            self.flush()
        self._drop(agent, module, {spec.name for spec in CATALOGUE if spec.labels[:2] == AM})
        for binding in self._bindings.pop((agent, module), ()):
            self._reason.pop((agent, module, binding), None)
        self._detailed.discard((agent, module))

    def _drop(self, agent: str, module: str, names: set[str] | frozenset[str], downgrade: bool = False) -> None:
        """Remove a job's series; on a downgrade to lean, keep what the lean set has and counters that counted
        (so rate() never sees a reset)."""
        for name in names:
            family = self._f[name]
            for labelvalues in family.series():
                if labelvalues[:2] != (agent, module):
                    continue
                if downgrade and ((name in ("failures", "scheduler_missed_runs") and family.value(labelvalues))
                                  or (name == "step_success" and labelvalues[3] in LEAN_STEPS)):
                    continue
                family.remove(*labelvalues)

    def remove_agent(self, agent: str) -> None:
        if self._pending:
            self.flush()
        for name in ("agent_info", "agent_card_info", *TLS_METRICS):
            family = self._f[name]
            for labelvalues in family.series():
                if labelvalues[0] == agent:
                    family.remove(*labelvalues)
        self._card.pop(agent, None)
        self._info.pop(agent, None)
        for key in [k for k in self._tls if k.startswith(agent + "\0")]:
            del self._tls[key]

    def config_loaded(self, ok: bool, agents: int | None = None) -> None:
        self.gauge("config_last_reload_successful").set(1 if ok else 0)
        if ok:
            self.gauge("config_last_reload_success_timestamp_seconds").set(time.time())
            if agents is not None:
                self.gauge("agents_configured").set(agents)

    def missed(self, agent: str, module: str, cause: str) -> None:
        self.agent_counter("scheduler_missed_runs").inc((agent, module, cause))

    # ---- per probe

    def observe(self, module: str, r: ProbeResult) -> None:
        """Record a finished probe's series. The result waits until `BATCH` are waiting, then all are written in
        order: a write costs about half as much right after another as between two probes, when its code and the
        interpreter's state have left the CPU's caches (docs/performance.md). Every reader of the per-agent series
        (a scrape, `registry` collections, the family accessors) and every other writer writes what waits first
        (`flush`), so none can tell; at most `BATCH` results are held (the history holds the same ones)."""
        pending = self._pending
        pending.append((module, r, time.time()))  # the time it finished: its last-run and last-success value
        if len(pending) >= BATCH:
            self.flush()

    def flush(self) -> None:
        """Write the series of every result waiting (see `observe`), in order. The loop's thread only: the
        scrape's render flushes on the loop before its thread joins the text."""
        pending, self._pending = self._pending, []
        for module, r, finished in pending:
            self._observe(module, r, finished)

    def _observe(self, module: str, r: ProbeResult, finished: float) -> None:
        a = r.agent
        job = (a, module)
        now = exposition.value_text(finished)  # formatted once: last run and last success share it
        self._last_run.set_text(job, now)
        before = self._bindings.get(job, ())
        outs = outcomes(r, before)
        names = (outs[0].binding,) if len(outs) == 1 else tuple(o.binding for o in outs)
        if names != before:
            for gone in set(before) - set(names):  # an interface left the card: no stale series
                self._drop_binding(a, module, gone)
            self._bindings[job] = _shared(names)
        detailed = job in self._detailed
        for o in outs:
            if detailed and o.binding not in before:
                self._zero_reasons(a, module, o.binding)
            self._observe_binding(a, module, o, now, detailed)
        binding = BindingName.of(r.binding)
        if r.protocol_version and binding is not None:
            card = (r.protocol_version, binding._value_, (r.card_version or "")[:64])
            self._replace_info("agent_card_info", self._card, a, card)
        if r.push is not None:
            self.observe_push(a, module, r.push)
        self._observe_tls(r)

    def _observe_binding(self, a: str, module: str, o: Outcome, now: str, detailed: bool) -> None:
        b = o.binding
        key = (a, module, b)
        self._success.flag(key, o.success)
        self._duration.observe(key, o.duration_s)
        self._runs.inc(key)
        if o.success:
            self._last_success.set_text(key, now)
        else:
            self.agent_counter("failures").inc((a, module, b, (o.reason or Reason.PROBE_ERROR)._value_))
        self._set_reason(key, o.reason._value_ if o.reason else NO_REASON)
        if not detailed:
            step_ok = self._step_success
            skip, passed = Status.SKIP, Status.PASS
            for step in o.steps:  # `_value_`: the member's own attribute, without the `value` property's call
                name = step.name._value_
                if step.status is not skip and name in _LEAN_NAMES:  # a str's hash, not the Enum's __hash__
                    step_ok.flag((a, module, b, name), step.status is passed)
            return
        self._observe_detail(a, module, o)

    def _observe_detail(self, a: str, module: str, o: Outcome) -> None:
        b = o.binding
        self.agent_gauge("last_duration_seconds").set((a, module, b), o.duration_s)
        self.agent_gauge("checks_failed").set((a, module, b), o.checks_failed)
        for step in o.steps:
            if step.status is Status.SKIP:
                continue
            s = step.name.value
            self.agent_gauge("step_success").set((a, module, b, s), 1 if step.status is Status.PASS else 0)
            self.agent_gauge("last_step_duration_seconds").set((a, module, b, s), step.duration_s)
            if step.name in REMOTE_STEPS:
                self.agent_histogram("step_duration_seconds").observe((a, module, b, s), step.duration_s)
            if step.name in HTTP_STEPS:
                self.agent_gauge("http_status_code").set((a, module, b, s), step.http_status or 0)
                for phase, value in phase_totals(step).items():
                    self.agent_gauge("http_phase_duration_seconds").set((a, module, b, s, phase), value)

    def _zero_reasons(self, agent: str, module: str, binding: str) -> None:
        for reason in Reason:  # detailed: every reason starts at 0
            self.agent_counter("failures").labels(agent, module, binding, reason.value)

    def _drop_binding(self, agent: str, module: str, binding: str) -> None:
        """Remove one binding's series of a job, by their known label values (no scan over the fleet)."""
        prefix = (agent, module, binding)
        for spec in CATALOGUE:
            if spec.labels[:3] != AMB:
                continue
            family = self._f[spec.name]
            domains = [_LABEL_DOMAINS[label] for label in spec.labels[3:]]
            for rest in itertools.product(*domains):
                family.remove(*prefix, *rest)
        self._reason.pop(prefix, None)

    # ---- exposition

    async def render(self, accept: str, accept_encoding: str, names: tuple[str, ...] = ()) -> tuple[bytes, str, bool]:
        """The text exposition, rendered on a worker thread so a scrape never stalls the probes.

        Concurrent scrapes asking for the same thing share one render. Returns (body, content type, gzipped).
        """
        if self._pending:  # on the loop, before the render's thread reads the series; its CPU is recording's
            t0 = time.thread_time()
            self.flush()
            self.counter("bookkeeping_cpu_seconds").inc(time.thread_time() - t0)
        key = (accept, gzip_accepted(accept_encoding), names)
        pending = self._renders.get(key)
        if pending is None:
            loop = asyncio.get_running_loop()
            pending = asyncio.ensure_future(loop.run_in_executor(self._render_pool, self._render, *key))
            self._renders[key] = pending
            pending.add_done_callback(lambda _f: self._renders.pop(key, None))
        return await asyncio.shield(pending)

    def _render(self, accept: str, gz: bool, names: tuple[str, ...]) -> tuple[bytes, str, bool]:
        encoder, content_type = choose_encoder(accept)
        openmetrics = content_type.startswith("application/openmetrics-text")
        own = encoder(self._own.restricted_registry(list(names)) if names else self._own)
        parts = itertools.chain((own.removesuffix(b"# EOF\n") if openmetrics else own,),
                                exposition.pieces(self._f.values(), openmetrics, frozenset(names)),
                                (b"# EOF\n",) if openmetrics else ())
        if not gz:
            return b"".join(parts), content_type, False
        # compressed piece by piece as the text is made (zlib releases the GIL while it compresses, so the loop
        # runs meanwhile), at zlib's fastest level: one gzip member, the same bytes once decompressed
        z = zlib.compressobj(1, zlib.DEFLATED, 31)
        out = [z.compress(part) for part in parts]
        out.append(z.flush())
        return b"".join(out), content_type, True

    def close(self) -> None:
        self._render_pool.shutdown(wait=False, cancel_futures=True)

    def _observe_tls(self, r: ProbeResult) -> None:
        """Per agent and binding; a run that made no TLS connection leaves the last values standing."""
        a = r.agent
        self._tls_disabled.flag((a,), r.tls_insecure)
        for channel, info in r.tls.items():
            name = BindingName.of(channel)
            binding = name.value if name is not None else CARD if channel == CARD else "other"
            if info.earliest_expiry is not None:
                expiry = self.agent_gauge("tls_earliest_cert_expiry_timestamp_seconds")
                expiry.labels(a, binding).set(info.earliest_expiry)
            values = (binding, tls_version_label(info.version), tls_cipher_label(info.cipher))
            self._replace_info("tls_info", self._tls, f"{a}\0{binding}", values, agent=a)

    def _set_reason(self, key: tuple[str, str, str], reason: str) -> None:
        """`key` is (agent, module, binding): the job's series key, kept as this table's key too."""
        g = self._reason_info
        prev = self._reason.get(key)
        if prev != reason:
            if prev is not None:
                g.remove(*key, prev)
            self._reason[key] = reason
        g.flag((*key, reason), True)  # also when unchanged: a series removed elsewhere comes back

    def _replace_info(self, name: str, seen: dict[str, tuple[str, ...]], key: str, values: tuple[str, ...],
                      agent: str | None = None) -> None:
        """Info metrics keep one series per key (the agent, or agent and binding): drop the old label set when
        the values change."""
        g = self.agent_gauge(name)
        agent = key if agent is None else agent
        prev = seen.get(key)
        if prev != values:
            if prev is not None:
                g.remove(agent, *prev)
            seen[key] = _shared(values)
        g.flag((agent, *values), True)  # also when unchanged: a series removed elsewhere comes back


# Results waiting before their series are written in one go (`Metrics.observe`): as the history's kept parts
# (probe/history.py `BATCH`).
BATCH = 32

# Label-value tuples most of a fleet's agents have alike (their bindings, their card's versions), kept as one
# tuple each; bounded, past the bound a tuple is its agent's own.
_shared: Interned[tuple[str, ...]] = Interned(4096)


TLS_METRICS = ("tls_earliest_cert_expiry_timestamp_seconds", "tls_info", "tls_verification_disabled")
_TLS_VERSIONS = frozenset({"SSLv3", "TLSv1", "TLSv1.1", "TLSv1.2", "TLSv1.3"})
_CIPHER = re.compile(r"^[A-Za-z0-9_-]{1,80}$")


def tls_version_label(version: str) -> str:
    return version if version in _TLS_VERSIONS else "other"


def tls_cipher_label(cipher: str) -> str:
    # the server picks one of the ciphers the probe's own OpenSSL offered: a bounded, known set of names
    return cipher if _CIPHER.match(cipher) else "other"


class Outcome(NamedTuple):
    """One binding's share of a run: what its series record (a tuple: built once or twice every probe)."""

    binding: str  # a BindingName value, or CARD
    success: bool
    reason: Reason | None
    duration_s: float
    steps: Sequence[StepResult]
    checks_failed: int


def outcomes(r: ProbeResult, previous: tuple[str, ...] = ()) -> list[Outcome]:
    """A run split by binding, the label's bounded values.

    One outcome per binding of the interfaces probed; several interfaces of one binding (JSON-RPC 1.0 and 0.3)
    are one outcome that passes only when all pass. A run that reached no interface is counted against the
    bindings the job exported before when the card could not be read (a client must discover the card first, so
    every binding is down), and against binding="card" when the card offers nothing to call or no binding is
    known yet; "card" gives way to the real bindings once an interface is reached."""
    per: dict[str, Outcome] = {}
    for i in r.interfaces:
        name = BindingName.of(i.binding)
        if name is None:
            continue
        o = Outcome(name._value_, i.success, i.reason, i.duration_s, i.steps, i.checks_failed)
        prev = per.get(o.binding)
        if prev is None or (prev.success and not o.success):
            per[o.binding] = o
    if per:
        return list(per.values())
    name = BindingName.of(r.binding)
    failed = sum(1 for c in r.checks if c.status is Status.FAIL)
    if name is not None:
        labels: tuple[str, ...] = (name._value_,)
    elif r.card_url is None and previous and previous != (CARD,):
        labels = previous
    else:
        labels = (CARD,)
    return [Outcome(b, r.success, r.reason, r.duration_s, r.steps, failed) for b in labels]


def per_agent(spec: Spec) -> bool:
    """Families with an `agent` label grow with the fleet: they keep their own rendered text."""
    return spec.labels[:1] == ("agent",)


def series_per_job(steps: int, buckets: int, detailed: bool = False, remote_steps: int = 1, bindings: int = 1) -> int:
    """Series one agent x module exports after a passing probe of `bindings` bindings (no `_created`, no
    per-agent info).

    Per job: last run, interval, timeout. Per binding, the lean set: success, failure_reason_info, last success,
    runs, step_success for discover and the remote step, and the duration histogram (buckets + +Inf + sum +
    count). The docs print it and a test compares it with a real scrape.
    """
    job = 3
    histogram = buckets + 3
    if not detailed:
        return job + bindings * (4 + 2 + histogram)
    http_steps = 1 + remote_steps
    return job + len(MISSED_CAUSES) + bindings * (  # every missed-run cause at 0, per job
        4 + histogram + steps  # step_success for every step that ran
        + 2 + steps  # last duration, checks failed, last step durations
        + remote_steps * histogram  # step histograms
        + http_steps * (1 + len(PHASES))  # status code and phases
        + len(Reason))  # every reason at 0


def phase_totals(step: StepResult) -> dict[str, float]:
    """Seconds per HTTP phase, summed over the step's exchanges (redirect hops, polls)."""
    return {phase: sum(getattr(e.phases, phase) for e in step.exchanges) for phase in PHASES}


def probe_registry(r: ProbeResult, timeout: float, wall: float | None = None) -> CollectorRegistry:
    """A fresh registry for one /probe request, with blackbox_exporter-compatible names. `wall`: how long the
    probe took, start to finish (blackbox_exporter's probe_duration_seconds, compared to probe_timeout_seconds);
    the agent's latency alone is probe_a2a_latency_seconds."""
    reg = CollectorRegistry(auto_describe=True)
    Gauge("probe_success", "1 if the probe succeeded", registry=reg).set(1 if r.success else 0)
    Gauge("probe_duration_seconds", "How long the probe took, start to finish (the card's fetch included)",
          registry=reg).set(r.duration_s if wall is None else wall)
    Gauge("probe_a2a_latency_seconds", "The agent's latency: its calls, to the last byte of the terminal answer",
          registry=reg).set(r.duration_s)
    Gauge("probe_timeout_seconds", "The deadline the probe ran under", registry=reg).set(timeout)
    step_ok = Gauge("probe_a2a_step_success", "1 if the step passed", ["step"], registry=reg)
    step_d = Gauge("probe_a2a_step_duration_seconds", "Wall time of the step", ["step"], registry=reg)
    status = Gauge("probe_a2a_http_status_code", "HTTP status of the step's last exchange", ["step"], registry=reg)
    phases = Gauge("probe_http_duration_seconds", "Seconds per HTTP phase", ["step", "phase"], registry=reg)
    for step in r.steps:
        if step.status is Status.SKIP:
            continue
        s = step.name.value
        step_ok.labels(s).set(1 if step.status is Status.PASS else 0)
        step_d.labels(s).set(step.duration_s)
        if step.name in HTTP_STEPS:
            status.labels(s).set(step.http_status or 0)
            for phase, value in phase_totals(step).items():
                phases.labels(s, phase).set(value)
    expiries = [i.earliest_expiry for i in r.tls.values() if i.earliest_expiry is not None]
    if expiries:
        Gauge("probe_ssl_earliest_cert_expiry", "Unix time the earliest-expiring certificate presented expires",
              registry=reg).set(min(expiries))
        version = Gauge("probe_tls_version_info", "The TLS version negotiated", ["version"], registry=reg)
        cipher = Gauge("probe_tls_cipher_info", "The TLS cipher negotiated", ["cipher"], registry=reg)
        for info in r.tls.values():
            version.labels(tls_version_label(info.version)).set(1)
            cipher.labels(tls_cipher_label(info.cipher)).set(1)
    failed = Gauge("probe_failed_due_to_reason", "1 for the reason the probe failed", ["reason"], registry=reg)
    for reason in Reason:
        failed.labels(reason.value).set(1 if r.reason is reason else 0)
    return reg
