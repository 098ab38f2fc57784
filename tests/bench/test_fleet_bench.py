"""The fleet benchmark in its small configuration (seconds): it runs end to end against the real daemon and the
loopback fleet, every probe passes, and it reports every figure it promises. No timing is asserted."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from bench.fleet import hist_delta, hist_quantile, slope_per_min

ROOT = Path(__file__).resolve().parents[2]


def test_histogram_quantiles_are_bucket_bounds_over_the_window() -> None:
    before = [(0.001, 10.0), (0.1, 10.0), (math.inf, 10.0)]
    after = [(0.001, 10.0), (0.1, 108.0), (math.inf, 110.0)]
    delta = hist_delta(after, before)
    assert delta == [(0.001, 0.0), (0.1, 98.0), (math.inf, 100.0)]
    assert hist_quantile(delta, 0.5) == 0.1
    assert hist_quantile(delta, 0.99) == math.inf
    assert hist_quantile([(0.1, 0.0), (math.inf, 0.0)], 0.99) is None  # no samples: absent, never 0


def test_rss_growth_is_a_least_squares_slope_per_minute() -> None:
    assert slope_per_min([(0.0, 100.0), (30.0, 101.0), (60.0, 102.0)]) == pytest.approx(2.0)
    assert slope_per_min([(0.0, 100.0), (1.0, 100.0)]) == 0.0  # too few samples to say


@pytest.mark.external  # the fleet and the daemon run as processes of their own
@pytest.mark.timeout(240)
def test_the_small_fleet_benchmark_runs_and_reports_every_figure() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "fleet.py"), "--small", "--json", "-"],
                          capture_output=True, text=True, timeout=220, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout)
    assert result["meta"]["commit"] and result["meta"]["cores"]
    (fleet,) = result["fleet"]
    assert fleet["agents"] == 50 and fleet["module"] == "ping"
    assert fleet["probes"] > 0 and fleet["failed"] == 0, fleet
    assert fleet["errors"] == []
    assert fleet["cpu_ms_per_probe"] > 0 and fleet["rss_mib"] > fleet["rss_base_mib"] > 0
    assert fleet["series"] > 0 and 1 <= fleet["series_per_agent"] < fleet["series"]
    assert fleet["scrape_s"] > 0 and fleet["overhead_p50_ms"] is not None
    # the daemon's own lateness histogram is read by name; absent is reported as None, never as 0
    assert fleet["lateness_p99_s"] is None or fleet["lateness_p99_s"] > 0
    modules = {r["module"]: r for r in result["modules"]}
    assert set(modules) == {"ping", "invoke", "stream"}
    assert all(r["probes"] > 0 and r["failed"] == 0 for r in modules.values()), modules
    loops = {(r["module"], r["loop"]) for r in result["loops"]}
    assert loops == {(m, loop) for m in modules for loop in ("bare", "sdk", "engine")}
    for r in result["ratios"]:
        assert r["daemon_vs_bare"] > 0 and r["daemon_vs_sdk"] > 0 and r["sdk_vs_bare"] > 0, r
    # the fleet served what the daemon and the loops asked of it: one RPC per probe
    served = result["served"]
    assert served["GetTask"] >= fleet["probes"] + modules["ping"]["probes"]
    assert served["SendStreamingMessage"] >= modules["stream"]["probes"]
    assert served.get("other", 0) == 0
