"""Recording a probe skips the writes that change nothing (a verdict, reason or info series already at 1) and
renders a histogram in one pass: the /metrics text after every probe is what writing every series every time,
with the earlier histogram rendering, gives."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from probe import exposition
from probe.exposition import HistogramFamily, floatToGoString
from probe.metrics import Metrics
from probe.reasons import Reason
from probe.results import InterfaceResult, ProbeResult, Status, StepName, StepResult, TlsInfo


def _reference_render(self: HistogramFamily, key: Any, counts: tuple[int, ...], total: float, before: str,
                      after: str) -> None:
    """HistogramFamily._render as it was: one f-string a bucket, counts through `_count`, the sum through
    prometheus_client's floatToGoString."""
    self.state[key] = (counts, total, before, after)
    name = self.name
    after = "," + after if after else ""
    lines = []
    cumulative = 0
    for le, n in zip(self.le, counts, strict=True):
        cumulative += n
        lines.append(f'{name}_bucket{{{before}le="{le}"{after}}} {exposition._count(cumulative)}\n')
    labels = f"{{{before[:-1]}{after}}}" if before else (f"{{{after[1:]}}}" if after else "")
    lines.append(f"{name}_count{labels} {exposition._count(cumulative)}\n{name}_sum{labels} "
                 f"{floatToGoString(total)}\n")
    self.lines[key] = "".join(lines)


def _iface(binding: str, ok: bool, reason: Reason | None = None) -> InterfaceResult:
    step = StepResult(name=StepName.PING, status=Status.PASS if ok else Status.FAIL, duration_s=0.01)
    card = StepResult(name=StepName.DISCOVER, status=Status.PASS, duration_s=0.002)
    return InterfaceResult(binding=binding, protocol_binding=binding.upper(), protocol_version="1.0", success=ok,
                           reason=reason, duration_s=0.012, steps=[card, step])


def _runs() -> Iterator[ProbeResult]:
    ok = _iface("jsonrpc", True)
    base = {"agent": "a", "target_url": "http://x/", "card_url": "http://x/card", "binding": "JSONRPC",
            "protocol_version": "1.0", "card_version": "1.0.0"}
    yield ProbeResult(**base, success=True, duration_s=0.012, interfaces=[ok], steps=ok.steps)
    yield ProbeResult(**base, success=True, duration_s=0.3, interfaces=[ok], steps=ok.steps)
    bad = _iface("jsonrpc", False, Reason.INVOKE_ROUTE_NOT_FOUND)
    yield ProbeResult(**base, reason=Reason.INVOKE_ROUTE_NOT_FOUND, duration_s=2.0, interfaces=[bad], steps=bad.steps)
    worse = _iface("jsonrpc", False, Reason.INVOKE_TIMEOUT)
    yield ProbeResult(**base, reason=Reason.INVOKE_TIMEOUT, duration_s=9.0, interfaces=[worse], steps=worse.steps)
    yield ProbeResult(**{**base, "card_version": "2.0.0"}, success=True, duration_s=0.05, interfaces=[ok],
                      steps=ok.steps, tls={"jsonrpc": TlsInfo(version="TLSv1.3", cipher="TLS_AES_128_GCM_SHA256",
                                                             earliest_expiry=1.9e9)}, tls_insecure=True)
    two = [ok, _iface("grpc", False, Reason.INVOKE_UNREACHABLE)]
    yield ProbeResult(**base, reason=Reason.INVOKE_UNREACHABLE, duration_s=0.5, interfaces=two, steps=ok.steps)
    yield ProbeResult(**base, success=True, duration_s=1e-4, interfaces=[ok], steps=ok.steps, tls_insecure=False)
    yield ProbeResult(agent="a", target_url="http://x/", reason=Reason.CARD_UNREACHABLE, duration_s=0.001)
    yield ProbeResult(**base, success=True, duration_s=0.012, interfaces=[ok], steps=ok.steps)


def _texts(detailed: bool) -> list[tuple[bytes, bytes]]:
    m = Metrics([0.05, 0.1, 0.25, 0.5, 1, 2.5, 5], [])
    m.add_job("a", "ping", 60, 10, detailed=detailed)
    out = []
    for r in _runs():
        m.observe("ping", r)
        m.flush()  # the families read directly: what waits written first (as every reader of Metrics does)
        families = m._f.values()
        out.append((exposition.render(families, False), exposition.render(families, True)))
    return out


@pytest.mark.parametrize("detailed", [False, True])
def test_metrics_text_is_what_writing_every_series_every_time_gives(detailed: bool,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    clock = iter(1_764_604_800.0 + 60 * i + 0.123456 for i in range(100))
    monkeypatch.setattr(time, "time", lambda: next(clock))  # both runs see the same timestamps
    ours = _texts(detailed)
    clock = iter(1_764_604_800.0 + 60 * i + 0.123456 for i in range(100))
    with monkeypatch.context() as m:
        m.setattr(exposition.GaugeFamily, "flag", lambda self, key, on: self.set(key, 1 if on else 0))
        m.setattr(HistogramFamily, "_render", _reference_render)
        every = _texts(detailed)
    assert ours == every
    last = ours[-1][0].decode()
    assert 'a2a_probe_failure_reason_info{agent="a",binding="jsonrpc",module="ping",reason="none"} 1.0' in last
    # the card went 1.0.0 -> 2.0.0 -> 1.0.0: one info series, the current one
    assert 'a2a_probe_agent_card_info{agent="a",binding="jsonrpc",card_version="1.0.0",protocol_version="1.0"} 1.0' \
        in last and 'card_version="2.0.0"' not in last
    assert 'a2a_probe_tls_verification_disabled{agent="a"} 0.0' in last
    # every run counts on jsonrpc (the unreachable card against the bindings it had)
    assert 'a2a_probe_duration_seconds_count{agent="a",binding="jsonrpc",module="ping"} 9.0' in last


def test_a_flag_series_removed_elsewhere_comes_back() -> None:
    m = Metrics([1], [])
    r = next(_runs())
    m.observe("ping", r)
    g = m.agent_gauge("failure_reason_info")
    key = ("a", "ping", "jsonrpc", "none")
    g.remove(*key)
    m.observe("ping", r)
    m.flush()  # the family read directly: what waits written first (as every reader of Metrics does)
    assert g.value(key) == 1.0


def test_counts_past_a_million_keep_prometheus_clients_text() -> None:
    h = HistogramFamily("h", "doc", ("agent",), [1.0])
    h.state[("a",)] = ((999_999, 0), 0.5, *h._labels(("a",), "le"))
    h.observe(("a",), 0.5)
    h.observe(("a",), 2.0)
    assert h.lines[("a",)] == ('h_bucket{agent="a",le="1.0"} 1e+06\nh_bucket{agent="a",le="+Inf"} 1.000001e+06\n'
                               'h_count{agent="a"} 1.000001e+06\nh_sum{agent="a"} 3.0\n')
