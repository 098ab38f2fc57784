from __future__ import annotations

import re
from pathlib import Path

import pytest
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from probe.checks.push import DeliveryProblem, DeliveryVerdict, judge
from probe.docs import GENERATED
from probe.inbox import Delivery, Refused
from probe.metrics import (
    CATALOGUE,
    MISSED_CAUSES,
    PHASES,
    PREFIX,
    STANDARD_PREFIXES,
    WEB_REFUSED_CAUSES,
    Metrics,
    exported_names,
    probe_registry,
    series_per_job,
)
from probe.reasons import Reason
from probe.results import (
    BindingName,
    HttpExchange,
    HttpPhases,
    InterfaceResult,
    ProbeResult,
    Status,
    StepName,
    StepResult,
    TlsInfo,
)
from probe.wire.cardcache import RESULTS as CARD_CACHE_RESULTS
from probe.wire.dialects import V1

ROOT = Path(__file__).resolve().parents[2]


def _result(agent: str = "a", success: bool = True, reason: Reason | None = None) -> ProbeResult:
    ex = HttpExchange(method="POST", url="http://secret-host.example/a2a?token=x", status=404 if reason else 200,
                      phases=HttpPhases(resolve=0.001, connect=0.002, processing=0.003, transfer=0.004))
    steps = [StepResult(name=StepName.DISCOVER, status=Status.PASS, duration_s=0.01, http_status=200, exchanges=[ex]),
             StepResult(name=StepName.VALIDATE, status=Status.PASS),
             StepResult(name=StepName.INVOKE, status=Status.PASS if success else Status.FAIL, duration_s=0.02,
                        http_status=ex.status, exchanges=[ex, ex])]
    tls = {"JSONRPC": TlsInfo(version="TLSv1.3", cipher=CIPHER, earliest_expiry=1.9e9, leaf_expiry=1.9e9)}
    return ProbeResult(agent=agent, target_url="http://secret-host.example", success=success, reason=reason,
                       steps=steps, protocol_version="1.0", binding="JSONRPC", card_version="2.3.4",
                       interface_url="http://secret-host.example/a2a", duration_s=0.03, tls=tls)


CIPHER = "TLS_AES_128_GCM_SHA256"


def _samples(m: Metrics) -> list[tuple[str, dict[str, str], float]]:
    text = generate_latest(m.registry).decode()
    return [(s.name, s.labels, s.value) for fam in text_string_to_metric_families(text) for s in fam.samples]


def test_every_exported_metric_is_catalogued_and_every_catalogued_metric_is_exported() -> None:
    m = Metrics([0.1, 1], ["team"])
    m.add_job("a", "stream", 60, 10, detailed=True)
    m.histogram("gc_pause_seconds").labels("0").observe(0.001)  # what probe.selfmon records
    m.set_agent_info("a", {"team": "sre"})
    m.config_loaded(True, 1)
    m.missed("a", "stream", "overlap")
    m.observe("stream", _result())
    m.observe("stream", _result(success=False, reason=Reason.INVOKE_ROUTE_NOT_FOUND))
    m.add_push_job("a", "push")
    m.observe_push("a", "push", judge(V1, [], "t1", 0.0).delivery())
    m.observe_push("a", "push", _verdict().delivery())
    samples = _samples(m)
    assert not [name for name, _, _ in samples if name.endswith("_created")], "no _created series"
    exported = {name for name, _, _ in samples if not name.startswith(STANDARD_PREFIXES)}
    catalogued = {n for spec in CATALOGUE for n in exported_names(spec)}
    assert exported - catalogued == set(), "undocumented metric exported"
    assert catalogued - exported == set(), "catalogued metric never exported"


def test_failure_reasons_start_at_zero_and_count_the_primary_reason() -> None:
    m = Metrics([1], [])
    m.add_job("a", "ping", 30, 5, detailed=True)
    m.observe("ping", _result())  # the binding's first run: with detailed metrics every reason starts at 0
    fails = {s[1]["reason"]: s[2] for s in _samples(m) if s[0] == PREFIX + "failures_total"}
    assert set(fails) == {r.value for r in Reason} and set(fails.values()) == {0.0}
    m.observe("ping", _result(success=False, reason=Reason.INVOKE_ROUTE_NOT_FOUND))
    job = {"agent": "a", "module": "ping", "binding": "jsonrpc"}
    val = m.registry.get_sample_value(PREFIX + "failures_total", {**job, "reason": "invoke_route_not_found"})
    assert val == 1.0
    assert m.registry.get_sample_value(PREFIX + "success", job) == 0.0
    assert m.registry.get_sample_value(PREFIX + "http_status_code", {**job, "step": "invoke"}) == 404
    # phases are summed over the step's exchanges
    assert m.registry.get_sample_value(PREFIX + "http_phase_duration_seconds",
                                       {**job, "step": "invoke", "phase": "transfer"}) == 0.008


def _verdict() -> DeliveryVerdict:
    bodies = [{"statusUpdate": {"taskId": "t1", "contextId": "c", "status": {"state": f"TASK_STATE_{s}"}}}
              for s in ("WORKING", "COMPLETED")]
    return judge(V1, [Delivery(10.0 + i, True, None, "application/a2a+json", body=b) for i, b in enumerate(bodies)],
                 "t1", 9.5)


def test_push_series_start_at_zero_and_record_latency_and_problems() -> None:
    m = Metrics([0.5, 1, 2], [])
    m.add_push_job("a", "push")
    problems = {s[1]["problem"]: s[2] for s in _samples(m) if s[0] == PREFIX + "push_delivery_problems_total"}
    assert problems == {p.value: 0.0 for p in DeliveryProblem}
    refused = {s[1]["cause"]: s[2] for s in _samples(m) if s[0] == PREFIX + "push_receiver_refused_total"}
    assert refused == {c.value: 0.0 for c in Refused}
    m.observe("push", _result().model_copy(update={"push": _verdict().delivery()}))
    m.observe_push("a", "push", judge(V1, [], "t1", 0.0).delivery())
    m.push_refused(Refused.UNKNOWN_TOKEN)
    get = m.registry.get_sample_value
    assert get(PREFIX + "push_deliveries_total", {"agent": "a", "module": "push"}) == 2
    assert get(PREFIX + "push_delivery_latency_seconds_sum",
               {"agent": "a", "module": "push", "delivery": "first"}) == 0.5
    assert get(PREFIX + "push_delivery_latency_seconds_sum",
               {"agent": "a", "module": "push", "delivery": "terminal"}) == 1.5
    assert get(PREFIX + "push_delivery_latency_seconds_count",
               {"agent": "a", "module": "push", "delivery": "terminal"}) == 1  # the missing one is not a sample
    assert get(PREFIX + "push_delivery_problems_total",
               {"agent": "a", "module": "push", "problem": "not_delivered"}) == 1
    assert get(PREFIX + "push_receiver_refused_total", {"cause": "unknown_token"}) == 1
    m.remove_job("a", "push")
    m.remove_agent("a")
    assert not [s for s in _samples(m) if s[1].get("agent") == "a"]


def test_one_reason_series_per_agent_and_module() -> None:
    m = Metrics([1], [])
    m.observe("ping", _result(success=False, reason=Reason.INVOKE_ROUTE_NOT_FOUND))
    m.observe("ping", _result())
    reasons = [s for s in _samples(m) if s[0] == PREFIX + "failure_reason_info"]
    assert reasons == [(PREFIX + "failure_reason_info",
                        {"agent": "a", "module": "ping", "binding": "jsonrpc", "reason": "none"}, 1.0)]


def test_labels_never_carry_urls_or_free_text() -> None:
    m = Metrics([1], ["team"])
    m.add_job("a", "ping", 30, 5, detailed=True)
    m.observe("ping", _result(success=False, reason=Reason.INVOKE_ROUTE_NOT_FOUND))
    m.histogram("gc_pause_seconds").labels("2").observe(0.001)
    allowed_label_values = {"a", "ping", "sre", "1.0", "2.3.4", "none", *MISSED_CAUSES, "0", "1", "2"}
    allowed_label_values |= {b.value for b in BindingName}  # the bounded spelling, never the card's
    allowed_label_values |= {"0/1"}  # build_info's shard, from --shard
    allowed_label_values |= {r.value for r in Reason} | {s.value for s in StepName}
    allowed_label_values |= set(PHASES) | {CIPHER}
    allowed_label_values |= {c.value for c in Refused}  # the push receiver's fixed refusal causes
    allowed_label_values |= set(CARD_CACHE_RESULTS)  # the card cache's fixed results
    allowed_label_values |= set(WEB_REFUSED_CAUSES)  # the web server's connection guard
    for name, labels, _ in _samples(m):
        if name.startswith(STANDARD_PREFIXES):
            continue  # prometheus_client's own fixed labels (python_info{implementation, version})
        for key, value in labels.items():
            if key in ("le", "version", "python_version"):
                continue
            assert value in allowed_label_values, (name, key, value)
            assert "://" not in value


def test_removed_job_series_disappear() -> None:
    m = Metrics([1], ["team"])
    for module in ("ping", "stream"):
        m.add_job("a", module, 30, 5, detailed=module == "stream")
        m.observe(module, _result())
    m.set_agent_info("a", {"team": "x"})
    m.remove_job("a", "ping")
    left = {(s[1].get("agent"), s[1].get("module")) for s in _samples(m) if s[1].get("agent")}
    assert ("a", "ping") not in left and ("a", "stream") in left
    m.remove_job("a", "stream")
    m.remove_agent("a")
    assert not [s for s in _samples(m) if s[1].get("agent") == "a"]


def test_card_info_keeps_one_series_when_the_card_changes() -> None:
    m = Metrics([1], [])
    r = _result()
    m.observe("ping", r)
    r2 = r.model_copy(update={"card_version": "9.9.9"})
    m.observe("ping", r2)
    cards = [s[1]["card_version"] for s in _samples(m) if s[0] == PREFIX + "agent_card_info"]
    assert cards == ["9.9.9"]


def test_an_unchanged_info_series_is_not_rewritten_and_comes_back_after_its_job_or_agent_left() -> None:
    """The reason and card info series are rewritten only when their value changes; one dropped with its job or
    agent is written again by the next probe even though the value is the same."""
    m = Metrics([1], [])
    failed = _result(success=False, reason=Reason.INVOKE_TIMEOUT)

    def info() -> list[tuple[str, dict[str, str], float]]:
        return [s for s in _samples(m) if s[0] in (PREFIX + "failure_reason_info", PREFIX + "agent_card_info")]

    m.add_job("a", "ping", 30, 5)
    m.observe("ping", failed)
    first = info()
    assert {s[1].get("reason") for s in first} == {"invoke_timeout", None} and len(first) == 2
    reason = m.agent_gauge("failure_reason_info")
    line = next(iter(reason.lines.values()))
    m.observe("ping", failed)
    assert next(iter(reason.lines.values())) is line  # the same string: not written again
    m.remove_job("a", "ping")
    m.remove_agent("a")
    assert info() == []
    m.add_job("a", "ping", 30, 5)
    m.observe("ping", failed)
    assert info() == first


def test_recorded_probes_wait_in_a_batch_that_every_reader_and_writer_writes_first(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`observe` keeps a result until `BATCH` wait, then writes them all in order; a scrape, a registry
    collection, a family accessor and every other writer write what waits first, so each sees every probe
    recorded before it; last-run times are the probes' own, not the write's."""
    import asyncio

    from probe import metrics as metrics_mod

    runs = PREFIX + "runs_total"
    labels = {"agent": "a", "module": "ping", "binding": "jsonrpc"}
    clock = iter(1_764_604_800.0 + i for i in range(1000))
    monkeypatch.setattr(metrics_mod.time, "time", lambda: next(clock))

    def fresh() -> Metrics:
        m = Metrics([1], [])
        m.add_job("a", "ping", 30, 5)
        m.observe("ping", _result())
        assert not m._f["runs"].lines and len(m._pending) == 1  # waiting, not written
        return m

    m = fresh()
    body, _, _ = asyncio.run(m.render("text/plain", ""))
    assert f'{runs}{{agent="a",binding="jsonrpc",module="ping"}} 1.0' in body.decode()
    counted = m.registry.get_sample_value(PREFIX + "bookkeeping_cpu_seconds_total")
    assert counted is not None and counted > 0  # the scrape's flush is recording's CPU
    assert fresh().registry.get_sample_value(runs, labels) == 1.0
    assert fresh().agent_counter("runs").value(("a", "ping", "jsonrpc")) == 1.0
    m = fresh()  # the last run's time is when the probe was recorded, not when it was written
    recorded = m._pending[0][2]
    next(clock)
    assert m.registry.get_sample_value(PREFIX + "last_run_timestamp_seconds", {"agent": "a", "module": "ping"}) \
        == recorded
    m = fresh()  # the job leaves after its probe: nothing of it stays
    m.remove_job("a", "ping")
    m.remove_agent("a")
    assert not [s for s in _samples(m) if s[1].get("agent") == "a"]
    m = fresh()  # a downgrade to lean after a detailed probe: the probe written as it was recorded, then dropped
    m.add_job("a", "ping", 30, 5, detailed=True)
    assert m.registry.get_sample_value(runs, labels) == 1.0
    m = Metrics([1], [])
    m.add_job("a", "ping", 30, 5)
    for i in range(3 * metrics_mod.BATCH):
        m.observe("ping", _result())
        assert len(m._pending) == (i + 1) % metrics_mod.BATCH  # a full batch is written at once
        assert m._f["runs"].value(("a", "ping", "jsonrpc")) == i + 1 - len(m._pending)
    m.observe("ping", _result(success=False, reason=Reason.INVOKE_TIMEOUT))
    m.missed("a", "ping", "overloaded")  # another writer: what waits is written first
    assert not m._pending
    assert m.registry.get_sample_value(PREFIX + "failures_total", {**labels, "reason": "invoke_timeout"}) == 1.0


def test_probe_registry_is_blackbox_compatible() -> None:
    reg = probe_registry(_result(success=False, reason=Reason.INVOKE_ROUTE_NOT_FOUND), 9.5)
    assert reg.get_sample_value("probe_success") == 0
    assert reg.get_sample_value("probe_timeout_seconds") == 9.5
    assert reg.get_sample_value("probe_failed_due_to_reason", {"reason": "invoke_route_not_found"}) == 1
    assert reg.get_sample_value("probe_failed_due_to_reason", {"reason": "card_invalid"}) == 0
    assert reg.get_sample_value("probe_a2a_http_status_code", {"step": "invoke"}) == 404
    text = generate_latest(reg).decode()
    assert not re.search(r"^a2a_probe_", text, re.M), "self metrics must stay on /metrics"


def test_generated_docs_are_current() -> None:
    for name, fn in GENERATED.items():
        assert (ROOT / "docs" / name).read_text() == fn(), f"docs/{name} is stale: run python -m probe.docs"


def _job_series(m: Metrics, agent: str = "a", module: str = "ping") -> list[str]:
    return [f"{n}{sorted(lab.items())}" for n, lab, _ in _samples(m)
            if lab.get("agent") == agent and lab.get("module") == module and not n.endswith("_created")]


def test_lean_default_set_is_small_and_detail_is_opt_in_and_reversible() -> None:
    m = Metrics([0.25, 1, 5], [])
    m.add_job("a", "ping", 30, 5)
    for _ in range(3):
        m.observe("ping", _result())
    lean = _job_series(m)
    assert len(lean) == series_per_job(steps=3, buckets=3) <= 15, lean
    assert not [s for s in lean if "http_phase" in s or "step_duration" in s or "validate" in s]
    # a failure adds exactly one series: the counter for its reason (no pre-created zeros per reason)
    m.observe("ping", _result(success=False, reason=Reason.INVOKE_ROUTE_NOT_FOUND))
    assert len(_job_series(m)) == len(lean) + 1
    # detailed for this job: per-step and per-phase series, every reason at 0
    m.add_job("a", "ping", 30, 5, detailed=True)
    m.observe("ping", _result())
    detailed = _job_series(m)
    assert len(detailed) == series_per_job(steps=3, buckets=3, detailed=True)
    # back to lean: the detail goes, counters that counted stay (rate() never sees a reset)
    m.add_job("a", "ping", 30, 5, detailed=False)
    back = _job_series(m)
    assert len(back) == len(lean) + 1 and any("invoke_route_not_found" in s for s in back)


def test_tls_series_per_agent_and_binding_bounded_and_replaced() -> None:
    m = Metrics([1], [])
    m.add_job("a", "ping", 30, 5)
    m.observe("ping", _result())
    r = _result()
    r.tls = {"card": TlsInfo(version="TLSv9 <script>", cipher="weird cipher!", earliest_expiry=1.8e9)}
    r.tls_insecure = True
    m.observe("ping", r)
    infos = sorted((s[1]["binding"], s[1]["version"], s[1]["cipher"]) for s in _samples(m)
                   if s[0] == PREFIX + "tls_info")
    assert infos == [("card", "other", "other"), ("jsonrpc", "TLSv1.3", CIPHER)]
    name = PREFIX + "tls_earliest_cert_expiry_timestamp_seconds"
    expiry = {s[1]["binding"]: s[2] for s in _samples(m) if s[0] == name}
    assert expiry == {"jsonrpc": 1.9e9, "card": 1.8e9}
    assert [s[2] for s in _samples(m) if s[0] == PREFIX + "tls_verification_disabled"] == [1.0]
    m.observe("ping", _result())  # a new cipher on the same binding replaces the series, never adds one
    assert len([s for s in _samples(m) if s[0] == PREFIX + "tls_info"]) == 2
    m.remove_agent("a")
    assert not [s for s in _samples(m) if s[0].startswith(PREFIX + "tls_")]


# ---- the binding label: one series set per binding the card advertises


def _multi(failing: dict[str, Reason] | None = None, bindings: tuple[str, ...] = ("jsonrpc", "http_json", "grpc"),
           agent: str = "a") -> ProbeResult:
    """A run over several interfaces (as engine.run_interfaces returns it): the first describes the top level."""
    failing = failing or {}
    top = _result(agent)
    entries = []
    for b in bindings:
        one = _result(agent, success=b not in failing, reason=failing.get(b))
        entries.append(InterfaceResult(binding=b, protocol_binding=BindingName(b).card_name, protocol_version="1.0",
                                       success=one.success, reason=one.reason, duration_s=0.02, steps=one.steps))
    top.interfaces = entries
    top.success = not failing
    top.reason = next(iter(failing.values()), None)
    return top


def _by_binding(m: Metrics, name: str, module: str = "ping", **labels: str) -> dict[str, float]:
    return {lab["binding"]: v for n, lab, v in _samples(m) if n == PREFIX + name and lab.get("module") == module
            and all(lab.get(k) == want for k, want in labels.items())}


def test_each_binding_has_its_own_series_and_the_failing_one_is_named() -> None:
    m = Metrics([1], [])
    m.add_job("a", "ping", 30, 5)
    m.observe("ping", _multi({"grpc": Reason.INVOKE_UNREACHABLE}))
    assert _by_binding(m, "success") == {"jsonrpc": 1, "http_json": 1, "grpc": 0}
    assert _by_binding(m, "failure_reason_info", reason="invoke_unreachable") == {"grpc": 1}
    assert _by_binding(m, "failures_total") == {"grpc": 1}
    assert _by_binding(m, "runs_total") == {"jsonrpc": 1, "http_json": 1, "grpc": 1}
    assert set(_by_binding(m, "last_success_timestamp_seconds")) == {"jsonrpc", "http_json"}
    assert _by_binding(m, "step_success", step="invoke") == {"jsonrpc": 1, "http_json": 1, "grpc": 0}
    # the job-level series carry no binding: one staleness clock per job
    assert [lab for n, lab, _ in _samples(m) if n == PREFIX + "last_run_timestamp_seconds"] == [
        {"agent": "a", "module": "ping"}]
    lean = _job_series(m)
    # grpc has a failures_total series and (never having passed) no last_success: the lean count holds
    assert len(lean) == series_per_job(steps=3, buckets=1, bindings=3)
    cards = [lab for n, lab, _ in _samples(m) if n == PREFIX + "agent_card_info"]
    assert [c["binding"] for c in cards] == ["jsonrpc"]  # the bounded spelling, never the card's


def test_series_follow_the_cards_interfaces_and_a_failed_card_fails_every_known_binding() -> None:
    m = Metrics([1], [])
    m.add_job("a", "ping", 30, 5)
    card_down = ProbeResult(agent="a", target_url="http://x", reason=Reason.CARD_UNREACHABLE, steps=[
        StepResult(name=StepName.DISCOVER, status=Status.FAIL, reason=Reason.CARD_UNREACHABLE)])
    m.observe("ping", card_down)  # no card read yet: one bounded set, binding="card"
    assert _by_binding(m, "success") == {"card": 0}
    assert _by_binding(m, "failure_reason_info", reason="card_unreachable") == {"card": 1}
    m.observe("ping", _multi())  # the card is back: "card" gives way to the advertised bindings
    assert _by_binding(m, "success") == {"jsonrpc": 1, "http_json": 1, "grpc": 1}
    assert not [lab for _, lab, _ in _samples(m) if lab.get("binding") == "card"]
    m.observe("ping", card_down)  # a client must read the card first: every binding is down
    assert _by_binding(m, "success") == {"jsonrpc": 0, "http_json": 0, "grpc": 0}
    assert _by_binding(m, "step_success", step="discover") == {"jsonrpc": 0, "http_json": 0, "grpc": 0}
    m.observe("ping", _multi(bindings=("jsonrpc",)))  # the card no longer advertises REST and gRPC
    assert {lab.get("binding") for _, lab, _ in _samples(m) if lab.get("agent") == "a" and "binding" in lab
            and lab.get("module") == "ping"} == {"jsonrpc"}
    assert len(_job_series(m)) == series_per_job(steps=3, buckets=1) + 1  # + the card failure's counter
    no_iface = ProbeResult(agent="a", target_url="http://x", card_url="http://x/card",
                           reason=Reason.NO_USABLE_INTERFACE)
    m.observe("ping", no_iface)  # a card read that offers nothing to call
    assert _by_binding(m, "success") == {"card": 0}
    m.remove_job("a", "ping")
    assert not _job_series(m)


def test_two_interfaces_of_one_binding_share_one_set_that_fails_when_either_fails() -> None:
    m = Metrics([1], [])
    r = _multi({"jsonrpc": Reason.INVOKE_VERSION_UNSUPPORTED}, bindings=("jsonrpc",))
    ok = r.interfaces[0].model_copy(update={"success": True, "reason": None, "protocol_version": "1.0"})
    r.interfaces = [ok, r.interfaces[0].model_copy(update={"protocol_version": "0.3"})]
    m.observe("ping", r)
    assert _by_binding(m, "success") == {"jsonrpc": 0}
    assert _by_binding(m, "failure_reason_info", reason="invoke_version_unsupported") == {"jsonrpc": 1}


def test_detailed_series_are_per_binding() -> None:
    m = Metrics([1], [])
    m.add_job("a", "ping", 30, 5, detailed=True)
    m.observe("ping", _multi({"http_json": Reason.INVOKE_ROUTE_NOT_FOUND}, bindings=("jsonrpc", "http_json")))
    assert _by_binding(m, "http_status_code", step="invoke") == {"jsonrpc": 200, "http_json": 404}
    # every reason is at 0 on both; http_json never passed, so it has no last_success yet
    assert len(_job_series(m)) == series_per_job(steps=3, buckets=1, detailed=True, bindings=2) - 1
