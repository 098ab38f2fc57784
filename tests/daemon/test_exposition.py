"""The fast /metrics exposition (probe/exposition.py) says exactly what prometheus_client says for the same state.

The per-agent families keep their series rendered as they are written; `registry.collect()` builds the same
families from the values instead. Both are rendered here, in the text format and in OpenMetrics, parsed with
prometheus_client's parsers and compared sample by sample (and line by line), and the text is linted by promtool.
"""

from __future__ import annotations

import asyncio
import gzip
import shutil
import subprocess
from typing import Any

import pytest
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.openmetrics import exposition as om_exposition
from prometheus_client.openmetrics.parser import text_string_to_metric_families as om_parse
from prometheus_client.parser import text_string_to_metric_families

from probe import exposition
from probe.checks.push import judge
from probe.metrics import PREFIX, Metrics
from probe.reasons import Reason
from probe.results import TlsInfo
from probe.wire.dialects import V1
from tests.daemon.test_metrics import _result, _verdict

OPENMETRICS = "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5"
PROMETHEUS_TEXT = "text/plain;version=0.0.4;q=0.5,*/*;q=0.1"
NASTY = 'sre "core"\\ops\nline two ü'  # a config label value with every character the format escapes


class Shadow:
    """A plain prometheus_client registry given every write the fast families get: the independent reference."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self._metrics: dict[str, Any] = {}
        shadow = self

        def wrap(cls: type, name: str, apply: Any) -> None:
            original = getattr(cls, name)

            def spy(family: Any, *args: Any) -> Any:
                result = original(family, *args)
                apply(shadow.metric(family), *args)
                return result

            monkeypatch.setattr(cls, name, spy)

        wrap(exposition.GaugeFamily, "set", lambda m, key, v: m.labels(*key).set(v))
        wrap(exposition.GaugeFamily, "inc", lambda m, key, a=1.0: m.labels(*key).inc(a))
        wrap(exposition.GaugeFamily, "flag", lambda m, key, on: m.labels(*key).set(1 if on else 0))
        wrap(exposition.GaugeFamily, "set_text", lambda m, key, text: m.labels(*key).set(exposition._parse(text)))
        wrap(exposition.CounterFamily, "inc", lambda m, key, a=1.0: m.labels(*key).inc(a))
        wrap(exposition.HistogramFamily, "observe", lambda m, key, v: m.labels(*key).observe(v))
        for cls in (exposition.GaugeFamily, exposition.CounterFamily, exposition.HistogramFamily):
            wrap(cls, "touch", lambda m, key: m.labels(*key))
            wrap(cls, "remove", lambda m, *key: m.remove(*key) if key in m._metrics else None)

    def metric(self, family: exposition.Family) -> Any:
        m = self._metrics.get(family.name)
        if m is None:
            kind = {"gauge": Gauge, "counter": Counter}.get(family.kind)
            if kind is not None:
                m = kind(family.name, family.documentation, family.labelnames, registry=self.registry)
            else:
                assert isinstance(family, exposition.HistogramFamily)
                m = Histogram(family.name, family.documentation, family.labelnames, registry=self.registry,
                              buckets=family.bounds)
            self._metrics[family.name] = m
        return m


def _fleet() -> Metrics:
    """A registry in every state a series can be in: lean and detailed jobs, failures, push, TLS, removals."""
    m = Metrics([0.25, 1, 5], ["team"])
    for i in range(5):
        agent = f"agent-{i}"
        m.add_job(agent, "ping", 30, 5, detailed=i == 1)
        m.set_agent_info(agent, {"team": NASTY if i == 2 else "sre"})
        r = _result(agent)
        r.duration_s = 0.1 * i + 0.0123456789
        m.observe("ping", r)
        if i % 2:
            m.observe("ping", _result(agent, success=False, reason=Reason.INVOKE_ROUTE_NOT_FOUND))
    r = _result("agent-3")
    r.tls = {"card": TlsInfo(version="TLSv1.2", cipher="ECDHE-RSA-AES128-GCM-SHA256", earliest_expiry=1.7654321e9)}
    m.observe("ping", r)
    m.add_push_job("agent-0", "push")
    m.observe_push("agent-0", "push", _verdict().delivery())
    m.observe_push("agent-0", "push", judge(V1, [], "t1", 0.0).delivery())
    m.missed("agent-4", "ping", "overloaded")
    m.add_job("agent-1", "ping", 30, 5, detailed=False)  # a downgrade drops the detail
    m.remove_job("agent-4", "ping")  # a job and an agent that left the config
    m.remove_agent("agent-4")
    m.histogram("gc_pause_seconds").labels("0").observe(0.002)
    m.histogram("scheduler_lateness_seconds").observe(0.3)
    m.config_loaded(True, 4)
    return m


def _fast(m: Metrics, accept: str, names: tuple[str, ...] = ()) -> tuple[str, str]:
    body, content_type, gz = asyncio.run(m.render(accept, "gzip", names))
    assert gz
    return gzip.decompress(body).decode(), content_type


def _stable(text: str) -> list[str]:
    # process_* values (CPU seconds, memory) move between two renders; everything else must not
    return [line for line in text.splitlines() if not line.startswith("process_")]


def _samples(families: object) -> set[tuple[str, tuple[tuple[str, str], ...], float]]:
    return {(s.name, tuple(sorted(s.labels.items())), s.value) for fam in families for s in fam.samples  # type: ignore[attr-defined]
            if not s.name.startswith("process_")}


def _agent_lines(text: str) -> list[str]:
    return sorted(line for line in text.splitlines() if 'agent="' in line)


def test_the_kept_text_is_what_prometheus_client_writes_for_the_same_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    shadow = Shadow(monkeypatch)
    fast, _ = _fast(_fleet(), PROMETHEUS_TEXT)
    reference = generate_latest(shadow.registry).decode()
    assert _agent_lines(fast) == _agent_lines(reference) and len(_agent_lines(fast)) > 100
    helps = {line for line in reference.splitlines() if line.startswith("# ")}
    assert helps <= set(fast.splitlines()), "HELP/TYPE lines differ"


def test_text_format_equals_prometheus_client_line_for_line() -> None:
    m = _fleet()
    fast, content_type = _fast(m, PROMETHEUS_TEXT)
    reference = generate_latest(m.registry).decode()
    assert content_type.startswith("text/plain; version=0.0.4")
    assert _stable(fast) == _stable(reference)
    assert _samples(text_string_to_metric_families(fast)) == _samples(text_string_to_metric_families(reference))
    # what the state says, read back from the fast text
    parsed = {(s.name, tuple(sorted(s.labels.items()))): s.value for fam in text_string_to_metric_families(fast)
              for s in fam.samples}
    assert parsed[(PREFIX + "runs_total", (("agent", "agent-3"), ("binding", "jsonrpc"), ("module", "ping")))] == 3.0
    assert parsed[(PREFIX + "agent_info", (("agent", "agent-2"), ("team", NASTY)))] == 1.0
    assert not [k for k in parsed if ("agent", "agent-4") in k[1]], "a removed agent's series stay"
    assert not [k for k in parsed if ("agent", "agent-1") in k[1] and "http_phase" in k[0]], "downgrade kept detail"
    # HELP and TYPE once per family, before its samples
    types = [line.split()[2] for line in fast.splitlines() if line.startswith("# TYPE ")]
    assert len(types) == len(set(types)) and PREFIX + "success" in types and "process_cpu_seconds_total" in types


def test_openmetrics_equals_prometheus_client() -> None:
    m = _fleet()
    fast, content_type = _fast(m, OPENMETRICS)
    reference = om_exposition.generate_latest(m.registry).decode()
    assert content_type.startswith("application/openmetrics-text")
    assert fast.endswith("# EOF\n") and fast.count("# EOF") == 1
    assert _stable(fast) == _stable(reference)
    assert _samples(om_parse(fast)) == _samples(om_parse(reference))  # the strict OpenMetrics parser accepts it


def test_name_filter_restricts_both_parts() -> None:
    m = _fleet()
    names = (PREFIX + "success", PREFIX + "duration_seconds_bucket", "python_info")
    fast, _ = _fast(m, PROMETHEUS_TEXT, names)
    reference = generate_latest(m.registry.restricted_registry(list(names))).decode()
    assert sorted(_stable(fast)) == sorted(_stable(reference))  # the restricted registry orders by name
    assert {f.name for f in text_string_to_metric_families(fast)} == {
        PREFIX + "success", PREFIX + "duration_seconds", "python_info"}


def test_promtool_accepts_the_exposition() -> None:
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.fail("promtool is required: apt-get install prometheus (as .ci/run does)")
    fast, _ = _fast(_fleet(), PROMETHEUS_TEXT)
    r = subprocess.run([promtool, "check", "metrics"], input=fast, capture_output=True, text=True, timeout=60,
                       check=False)
    assert r.returncode == 0, r.stdout + r.stderr  # 1 on a format error, 3 on lint findings


def _big(agents: int) -> Metrics:
    m = Metrics([0.25, 1, 5], [])
    for i in range(agents):
        agent = f"agent-{i}"
        m.add_job(agent, "ping", 30, 5)
        m.observe("ping", _result(agent, success=i % 7 != 0, reason=None if i % 7 else Reason.INVOKE_TIMEOUT))
    return m


def _still(body: bytes) -> list[bytes]:
    return [line for line in body.splitlines() if not line.startswith((b"process_", b"python_gc_"))]


def _whole(m: Metrics, openmetrics: bool) -> bytes:
    """The per-agent text as one join of every family's kept lines (the exposition before it was made in pieces)."""
    return "".join(f.header(openmetrics) + "".join(f.lines.values()) for f in m._f.values()).encode()


@pytest.mark.parametrize("accept", [PROMETHEUS_TEXT, OPENMETRICS])
def test_a_scrape_made_in_pieces_is_the_same_text(accept: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Pieces of `SLICE` series, gzipped piece by piece: the same bytes once decompressed as the text made at once
    (several pieces a family, and one series a piece), accepted by both prometheus_client
    parsers and by promtool."""
    m = _big(600)
    openmetrics = accept == OPENMETRICS
    whole = _whole(m, openmetrics)
    assert exposition.render(m._f.values(), openmetrics) == whole
    assert max(len(f.lines) for f in m._f.values()) > 2 * 256
    for size in (256, 1, 7):
        monkeypatch.setattr(exposition, "SLICE", size)
        assert b"".join(exposition.pieces(m._f.values(), openmetrics)) == whole
        zipped, _, gz = m._render(accept, True, ())
        plain, _, _ = m._render(accept, False, ())
        tail = whole + (b"# EOF\n" if openmetrics else b"")
        assert gz and gzip.decompress(zipped).endswith(tail) and plain.endswith(tail)
        # the daemon's own part before it (process and GC figures move between two renders)
        assert _still(gzip.decompress(zipped)) == _still(plain)
    text = gzip.decompress(m._render(accept, True, ())[0]).decode()
    if openmetrics:
        assert text.endswith("# EOF\n") and text.count("# EOF") == 1
        assert len(_samples(om_parse(text))) > 600 * 10
        return
    assert len(_samples(text_string_to_metric_families(text))) > 600 * 10
    promtool = shutil.which("promtool")
    assert promtool is not None, "promtool is required: apt-get install prometheus (as .ci/run does)"
    r = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True, timeout=120,
                       check=False)
    assert r.returncode == 0, r.stdout[:2000] + r.stderr[:2000]


def test_writes_during_a_scrape_leave_every_series_whole_and_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The loop records probes, adds and drops jobs (agents 200 and up) while a scrape is made on another thread,
    one series a piece (the GIL changing hands every 0.1 ms): every scrape parses, holds each series once and each
    histogram whole (its buckets cumulative, `_count` its `+Inf` bucket), and a counter never goes back."""
    import sys
    import threading

    monkeypatch.setattr(exposition, "SLICE", 1)
    monkeypatch.setattr(sys, "getswitchinterval", sys.getswitchinterval)
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-4)
    m = _big(400)
    stop = threading.Event()
    texts: list[str] = []

    def scrape() -> None:
        while not stop.is_set() or not texts:
            texts.append(gzip.decompress(m._render(PROMETHEUS_TEXT, True, ())[0]).decode())

    t = threading.Thread(target=scrape)
    t.start()
    try:
        i = 0
        while len(texts) < 8:
            agent = f"agent-{i % 400}"
            m.observe("ping", _result(agent, success=i % 3 != 0, reason=None if i % 3 else Reason.INVOKE_TIMEOUT))
            if i % 50 == 0:  # a job leaves and comes back: its series go and return
                gone = f"agent-{200 + (i // 50) % 200}"
                m.remove_job(gone, "ping")
                m.add_job(gone, "ping", 30, 5)
            i += 1
    finally:
        stop.set()
        t.join()
        sys.setswitchinterval(interval)
    assert i > 100, "no write ran during the scrapes"
    runs: dict[tuple[tuple[str, str], ...], float] = {}
    for text in texts:
        seen: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
        for fam in text_string_to_metric_families(text):
            buckets: dict[tuple[tuple[str, str], ...], list[float]] = {}
            counts: dict[tuple[tuple[str, str], ...], float] = {}
            for s in fam.samples:
                key = (s.name, tuple(sorted(s.labels.items())))
                assert key not in seen, f"{key} twice in one scrape"
                seen.add(key)
                series = tuple(sorted((k, v) for k, v in s.labels.items() if k != "le"))
                if s.name.endswith("_bucket"):
                    buckets.setdefault(series, []).append(s.value)
                elif s.name.endswith("_count"):
                    counts[series] = s.value
                elif s.name == PREFIX + "runs_total" and int(dict(series)["agent"][6:]) < 200:  # never dropped
                    assert s.value >= runs.get(series, 0.0), "a counter went back"
                    runs[series] = s.value
            for series, values in buckets.items():
                assert values == sorted(values) and counts[series] == values[-1], f"{series}: a torn histogram"


def test_values_are_written_as_prometheus_client_writes_them() -> None:
    """`_go` (timestamps, sums) against prometheus_client's floatToGoString, and a count by one read and written
    as an int against its counter, up to and past the million where the text changes form."""
    import random

    from prometheus_client.utils import floatToGoString

    rng = random.Random(7)
    values = [0.0, -0.0, 1.0, -1.0, 0.5, 1e-7, 5e-324, 123456.0, 1234567.0, 999999.5, 1e6, 1e15, 1e16, 1e22, 1e300,
              1764849600.0, 1764849600.123456, 1.5e9 + 1e-6, float("inf"), float("-inf"), float("nan"),
              *(rng.uniform(-1e3, 1e3) for _ in range(300)), *(10 ** rng.uniform(-12, 25) for _ in range(500)),
              *(1.7e9 + rng.random() * 1e8 for _ in range(300)), *(float(rng.randrange(10**12)) for _ in range(100))]
    for v in values:
        assert exposition._go(v) == floatToGoString(v), v
        assert exposition.value_text(v) == floatToGoString(v), v
    fast = exposition.CounterFamily("c", "help", ("agent",))
    registry = CollectorRegistry()
    reference = Counter("c", "help", ["agent"], registry=registry)
    key = ("a",)
    reference.labels("a").inc(999_990)
    fast.inc(key, 999_990)
    for _ in range(20):  # across 1e6: "999999.0" then "1e+06", "1.000001e+06"
        fast.inc(key)
        reference.labels("a").inc()
        assert fast.lines[key] == next(line for line in generate_latest(registry).decode().splitlines()
                                       if line.startswith("c_total{")) + "\n"
    assert fast.value(key) == 1_000_010.0
    fast.inc(key, 0.5)
    fast.inc(key)
    assert fast.value(key) == 1_000_011.5


def test_histogram_lines_past_a_million_observations_are_prometheus_clients() -> None:
    """The counts' text changes form at a million ("1e+06"): the same lines as prometheus_client's on both sides."""
    fast = exposition.HistogramFamily("h", "help", ("agent", "module"), [0.25, 1, 5])
    registry = CollectorRegistry()
    child = Histogram("h", "help", ["agent", "module"], registry=registry, buckets=(0.25, 1, 5)).labels("a", "m")
    key = ("a", "m")
    fast.observe(key, 0.1)
    _, _, before, after = fast.state[key]
    fast.state[key] = ((999_998, 1, 0, 0), 12.5, before, after)  # as if a million had been observed
    child._buckets[0].set(999_998)
    child._buckets[1].set(1)
    child._sum.set(12.5)
    for value in (0.1, 0.1, 3.0, 100.0):
        fast.observe(key, value)
        child.observe(value)
        reference = [line + "\n" for line in generate_latest(registry).decode().splitlines() if line[0] != "#"]
        assert fast.lines[key] == "".join(reference)
    assert "1e+06" in fast.lines[key]
