"""Every metric the daemon exports, defined once, plus the blackbox-style /probe registry.

Label values come only from config (agent, module, allow-listed agent labels) and fixed enums
(step, phase, reason): never URLs, error text or status strings. The catalogue below is the
source of the docs (`docs/metrics.md`) and is tested against what is actually exported.
"""

from __future__ import annotations

import platform
import time
from dataclasses import dataclass

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
from prometheus_client.metrics import MetricWrapperBase

from probe import __version__
from probe.checks.push import DeliveryProblem
from probe.inbox import Refused
from probe.reasons import Reason
from probe.results import HttpPhases, ProbeResult, PushDelivery, Status, StepName, StepResult

# `*_created` series (one per counter and histogram child) would double /metrics for no use: Prometheus ignores them
# unless created-timestamp ingestion is enabled, and every counter here starts with the job anyway
disable_created_metrics()  # type: ignore[no-untyped-call]

PREFIX = "a2a_probe_"
STANDARD_PREFIXES = ("process_", "python_")  # prometheus_client's own collectors, documented as such
PHASES = tuple(HttpPhases.model_fields)
HTTP_STEPS = (StepName.DISCOVER, StepName.PING, StepName.INVOKE, StepName.STREAM, StepName.PUSH)
REMOTE_STEPS = (StepName.PING, StepName.INVOKE, StepName.STREAM, StepName.PUSH)
NO_REASON = "none"

AM = ("agent", "module")
AMS = ("agent", "module", "step")


@dataclass(frozen=True, slots=True)
class Spec:
    name: str  # without the prefix and without _total for counters
    kind: str  # gauge | counter | histogram
    labels: tuple[str, ...]
    help: str


CATALOGUE: tuple[Spec, ...] = (
    Spec("success", "gauge", AM, "1 if the last probe of this agent and module succeeded, else 0"),
    Spec("step_success", "gauge", AMS,
         "1 if the step passed in the last probe, 0 if it failed (absent if it did not run)"),
    Spec("last_duration_seconds", "gauge", AM, "Wall time of the last probe"),
    Spec("last_step_duration_seconds", "gauge", AMS, "Wall time of each step in the last probe"),
    Spec("duration_seconds", "histogram", AM, "Wall time of probes (buckets from metrics.duration_buckets)"),
    Spec("step_duration_seconds", "histogram", AMS, "Wall time of the remote steps (ping, invoke, stream)"),
    Spec("http_status_code", "gauge", AMS,
         "HTTP status of the step's last exchange in the last probe; 0 = no response"),
    Spec("http_phase_duration_seconds", "gauge", (*AMS, "phase"),
         "Seconds per HTTP phase (resolve, connect, processing, transfer) summed over the step's exchanges"),
    Spec("runs", "counter", AM, "Probes run"),
    Spec("failures", "counter", (*AM, "reason"), "Failed probes by primary reason (every reason starts at 0)"),
    Spec("failure_reason_info", "gauge", (*AM, "reason"),
         "1 for the primary reason of the last probe (reason=\"none\" when it passed); "
         "one series per agent and module"),
    Spec("checks_failed", "gauge", AM, "Checks that failed in the last probe"),
    Spec("last_run_timestamp_seconds", "gauge", AM, "Unix time the last probe finished"),
    Spec("last_success_timestamp_seconds", "gauge", AM, "Unix time of the last successful probe"),
    Spec("interval_seconds", "gauge", AM, "Configured probe interval"),
    Spec("timeout_seconds", "gauge", AM, "Configured probe timeout"),
    Spec("agent_card_info", "gauge", ("agent", "protocol_version", "binding", "card_version"),
         "Always 1: the protocol version and binding the probe selected and the card's own version"),
    Spec("agent_info", "gauge", ("agent",), "Always 1: the agent's allow-listed config labels (join in PromQL)"),
    Spec("build_info", "gauge", ("version", "python_version", "shard"),
         "Always 1: the probe's build, and the shard (i/n) of the agents this replica probes"),
    Spec("config_last_reload_successful", "gauge", (), "1 if the last config (re)load succeeded"),
    Spec("config_last_reload_success_timestamp_seconds", "gauge", (),
         "Unix time of the last successful config load"),
    Spec("agents_configured", "gauge", (), "Agents in the active config that this replica probes (its shard)"),
    Spec("probes_in_flight", "gauge", (), "Probes running now"),
    Spec("scheduler_missed_runs", "counter", (*AM, "cause"),
         "Scheduled runs not started: cause=overlap (previous run still going) or misfire (started too late)"),
    Spec("push_deliveries", "counter", AM, "Push notifications that reached the receiver for this job's tasks"),
    Spec("push_delivery_latency_seconds", "histogram", (*AM, "delivery"),
         "Seconds from the send to the first (delivery=\"first\") and to the terminal (delivery=\"terminal\") "
         "accepted push notification"),
    Spec("push_delivery_problems", "counter", (*AM, "problem"),
         "Push round trips with a missing, late or broken delivery, by problem (every problem starts at 0)"),
    Spec("push_receiver_refused", "counter", ("cause",),
         "Requests the push receiver refused: unknown_token, unauthenticated, too_large, malformed, overflow"),
    Spec("push_receiver_registrations", "gauge", (), "Webhook registrations the push receiver holds now"),
)
PUSH_DELIVERIES = ("first", "terminal")
MISSED_CAUSES = ("overlap", "misfire")


def exported_names(spec: Spec) -> list[str]:
    """The sample names a spec produces in the text exposition."""
    base = PREFIX + spec.name
    if spec.kind == "counter":
        return [base + "_total"]
    if spec.kind == "histogram":
        return [base + "_bucket", base + "_sum", base + "_count"]
    return [base]


class Metrics:
    """The daemon's registry. `observe()` is the only writer of per-probe series."""

    def __init__(self, buckets: list[float], info_labels: list[str], shard: str = "0/1") -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.info_labels = tuple(info_labels)
        self._m: dict[str, MetricWrapperBase] = {}
        for spec in CATALOGUE:
            labels = spec.labels + (self.info_labels if spec.name == "agent_info" else ())
            name = PREFIX + spec.name
            if spec.kind == "gauge":
                self._m[spec.name] = Gauge(name, spec.help, labels, registry=self.registry)
            elif spec.kind == "counter":
                self._m[spec.name] = Counter(name, spec.help, labels, registry=self.registry)
            else:
                self._m[spec.name] = Histogram(name, spec.help, labels, registry=self.registry, buckets=buckets)
        self.gauge("build_info").labels(__version__, platform.python_version(), shard).set(1)
        # the standard process_* and python_* metrics: start time, memory, CPU, open fds, GC
        for collector in (ProcessCollector, PlatformCollector, GCCollector):
            collector(registry=self.registry)
        for cause in Refused:
            self.counter("push_receiver_refused").labels(cause.value)
        self._card: dict[str, tuple[str, ...]] = {}
        self._info: dict[str, tuple[str, ...]] = {}
        self._reason: dict[tuple[str, str], str] = {}

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

    # ---- config lifecycle

    def add_job(self, agent: str, module: str, interval: float, timeout: float) -> None:
        """Create the series a job will have, at 0, so absence never means 'no failures yet'."""
        self.gauge("interval_seconds").labels(agent, module).set(interval)
        self.gauge("timeout_seconds").labels(agent, module).set(timeout)
        self.counter("runs").labels(agent, module)
        for reason in Reason:
            self.counter("failures").labels(agent, module, reason.value)
        for cause in MISSED_CAUSES:
            self.counter("scheduler_missed_runs").labels(agent, module, cause)

    def add_push_job(self, agent: str, module: str) -> None:
        """The push series of a `push` job, at 0 from the start."""
        self.counter("push_deliveries").labels(agent, module)
        for problem in DeliveryProblem:
            self.counter("push_delivery_problems").labels(agent, module, problem.value)

    def push_refused(self, cause: Refused) -> None:
        self.counter("push_receiver_refused").labels(cause.value).inc()

    def observe_push(self, agent: str, module: str, push: PushDelivery) -> None:
        self.counter("push_deliveries").labels(agent, module).inc(push.deliveries)
        latency = self.histogram("push_delivery_latency_seconds")
        for delivery, seconds in zip(PUSH_DELIVERIES, (push.first_s, push.terminal_s), strict=True):
            if seconds is not None:
                latency.labels(agent, module, delivery).observe(max(0.0, seconds))
        known = {p.value for p in DeliveryProblem}
        for problem in push.problems:
            if problem in known:  # label values from the fixed enum only
                self.counter("push_delivery_problems").labels(agent, module, problem).inc()

    def set_agent_info(self, agent: str, labels: dict[str, str]) -> None:
        self._replace_info("agent_info", self._info, agent, tuple(labels.get(k, "") for k in self.info_labels))

    def remove_job(self, agent: str, module: str) -> None:
        """Drop every series of an agent/module that left the config, so dashboards don't show ghosts."""
        for spec in CATALOGUE:
            if spec.labels[:2] != AM:
                continue
            metric = self._m[spec.name]
            for labelvalues in list(_children(metric)):
                if labelvalues[:2] == (agent, module):
                    metric.remove(*labelvalues)
        self._reason.pop((agent, module), None)

    def remove_agent(self, agent: str) -> None:
        for name in ("agent_info", "agent_card_info"):
            metric = self._m[name]
            for labelvalues in list(_children(metric)):
                if labelvalues[0] == agent:
                    metric.remove(*labelvalues)
        self._card.pop(agent, None)
        self._info.pop(agent, None)

    def config_loaded(self, ok: bool, agents: int | None = None) -> None:
        self.gauge("config_last_reload_successful").set(1 if ok else 0)
        if ok:
            self.gauge("config_last_reload_success_timestamp_seconds").set(time.time())
            if agents is not None:
                self.gauge("agents_configured").set(agents)

    def missed(self, agent: str, module: str, cause: str) -> None:
        self.counter("scheduler_missed_runs").labels(agent, module, cause).inc()

    # ---- per probe

    def observe(self, module: str, r: ProbeResult) -> None:
        a = r.agent
        self.gauge("success").labels(a, module).set(1 if r.success else 0)
        self.gauge("last_duration_seconds").labels(a, module).set(r.duration_s)
        self.histogram("duration_seconds").labels(a, module).observe(r.duration_s)
        self.counter("runs").labels(a, module).inc()
        now = time.time()
        self.gauge("last_run_timestamp_seconds").labels(a, module).set(now)
        if r.success:
            self.gauge("last_success_timestamp_seconds").labels(a, module).set(now)
        else:
            self.counter("failures").labels(a, module, (r.reason or Reason.PROBE_ERROR).value).inc()
        self._set_reason(a, module, r.reason.value if r.reason else NO_REASON)
        self.gauge("checks_failed").labels(a, module).set(sum(1 for c in r.checks if c.status is Status.FAIL))
        for step in r.steps:
            if step.status is Status.SKIP:
                continue
            s = step.name.value
            self.gauge("step_success").labels(a, module, s).set(1 if step.status is Status.PASS else 0)
            self.gauge("last_step_duration_seconds").labels(a, module, s).set(step.duration_s)
            if step.name in REMOTE_STEPS:
                self.histogram("step_duration_seconds").labels(a, module, s).observe(step.duration_s)
            if step.name in HTTP_STEPS:
                self.gauge("http_status_code").labels(a, module, s).set(step.http_status or 0)
                for phase, value in phase_totals(step).items():
                    self.gauge("http_phase_duration_seconds").labels(a, module, s, phase).set(value)
        if r.push is not None:
            self.observe_push(a, module, r.push)
        if r.protocol_version and r.binding:
            card = (r.protocol_version, r.binding, (r.card_version or "")[:64])
            self._replace_info("agent_card_info", self._card, a, card)

    def _set_reason(self, agent: str, module: str, reason: str) -> None:
        g = self.gauge("failure_reason_info")
        prev = self._reason.get((agent, module))
        if prev is not None and prev != reason:
            g.remove(agent, module, prev)
        g.labels(agent, module, reason).set(1)
        self._reason[(agent, module)] = reason

    def _replace_info(self, name: str, seen: dict[str, tuple[str, ...]], agent: str, values: tuple[str, ...]) -> None:
        """Info metrics keep one series per agent: drop the old label set when the values change."""
        g = self.gauge(name)
        prev = seen.get(agent)
        if prev is not None and prev != values:
            g.remove(agent, *prev)
        g.labels(agent, *values).set(1)
        seen[agent] = values


def _children(metric: MetricWrapperBase) -> list[tuple[str, ...]]:
    # prometheus_client has no public API to list label sets; _metrics is stable across 0.1x releases
    return list(getattr(metric, "_metrics", {}).keys())


def phase_totals(step: StepResult) -> dict[str, float]:
    """Seconds per HTTP phase, summed over the step's exchanges (redirect hops, polls)."""
    return {phase: sum(getattr(e.phases, phase) for e in step.exchanges) for phase in PHASES}


def probe_registry(r: ProbeResult, timeout: float) -> CollectorRegistry:
    """A fresh registry for one /probe request, with blackbox_exporter-compatible names."""
    reg = CollectorRegistry(auto_describe=True)
    Gauge("probe_success", "1 if the probe succeeded", registry=reg).set(1 if r.success else 0)
    Gauge("probe_duration_seconds", "Wall time of the probe", registry=reg).set(r.duration_s)
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
    failed = Gauge("probe_failed_due_to_reason", "1 for the reason the probe failed", ["reason"], registry=reg)
    for reason in Reason:
        failed.labels(reason.value).set(1 if r.reason is reason else 0)
    return reg
