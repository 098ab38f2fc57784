"""The fleet benchmark in its small configuration (seconds): it runs end to end against the real daemon and the
loopback fleet, every probe passes, and it reports every figure it promises. No timing is asserted."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

import pytest

from bench.fleet import (
    FLEET_COLUMNS,
    LATENESS,
    SLOT_WAIT,
    DaemonRow,
    Scrape,
    compare_table,
    fleet_table,
    hist_delta,
    hist_quantile,
    self_figures,
    slope_per_min,
)

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


def _row(**over: object) -> DaemonRow:
    base: dict[str, object] = dict(
        agents=10_000, module="ping", event_loop="asyncio", interval_s=60.0, window_s=90.0, ready_s=1.0, probes=100,
        failed=0, probes_per_s=166.0, expected_per_s=166.67, cpu_core_pct=50.0, cpu_ms_per_probe=3.0, rss_mib=200.0,
        rss_base_mib=69.0, rss_per_1000_mib=13.1, rss_growth_mib_per_min=0.5, overhead_p50_ms=1.0,
        overhead_p99_ms=5.0, lateness_p99_s=None, lateness_mean_s=None)
    base.update(over)
    return DaemonRow(**base)  # type: ignore[arg-type]


def _scrape(hist: dict[str, list[tuple[float, float]]]) -> Scrape:
    return Scrape(0.0, 0, 0, 0, hist, {})


def test_lateness_and_slot_waits_come_from_the_window_of_the_daemons_own_histograms() -> None:
    bounds = (0.001, 0.005, 0.025, 0.1, math.inf)
    before = _scrape({LATENESS: [(b, 5.0) for b in bounds], SLOT_WAIT: [(b, 5.0) for b in bounds]})
    # the window: 100 runs; lateness half within 5 ms, the rest within 25 ms; 90 got a slot within 1 ms, 10 in 0.1 s
    closing = _scrape({LATENESS: list(zip(bounds, (5.0, 55.0, 105.0, 105.0, 105.0), strict=True)),
                       SLOT_WAIT: list(zip(bounds, (95.0, 95.0, 95.0, 105.0, 105.0), strict=True))})
    row = _row()
    self_figures(row, before, closing, cpu=1.0, probes=100)
    assert (row.lateness_p50_s, row.lateness_p99_s) == (0.005, 0.025)
    assert (row.slot_wait_p50_s, row.slot_wait_p99_s) == (0.001, 0.1)
    assert (row.slot_waited_pct, row.slot_waited_over_s) == (10.0, 0.001)
    # a daemon that exports neither (the old one under --before / --daemon-root): absent, never 0
    old = _row()
    self_figures(old, _scrape({}), _scrape({}), cpu=1.0, probes=100)
    assert old.lateness_p50_s is old.slot_wait_p50_s is old.slot_wait_p99_s is old.slot_waited_pct is None


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def test_the_fleet_and_before_after_tables_carry_lateness_p50_p99_and_slot_waits() -> None:
    new = _row(lateness_p50_s=0.005, lateness_p99_s=0.025, slot_wait_p50_s=0.001, slot_wait_p99_s=0.1,
               slot_waited_pct=2.5, gc_pause_p99_s=0.025, gc_cpu_pct=0.8, bookkeeping_pct=19.5,
               bookkeeping_us_per_probe=677.2, during_scrapes={"probes": 10, "failed": 0})
    old = _row(cpu_ms_per_probe=4.0, during_scrapes={"probes": 10, "failed": 0})  # exports none of them
    head, _, line = fleet_table([asdict(new)])
    cols = dict(zip(_cells(head), _cells(line), strict=True))
    assert cols["lateness p50 / p99 s"] == "≤ 0.005 / ≤ 0.025"
    assert cols["slot wait p50 / p99 s (runs waiting > 1 ms)"] == "≤ 0.001 / ≤ 0.1 (2.5 %)"
    head, _, line = fleet_table([asdict(old)])
    cols = dict(zip(_cells(head), _cells(line), strict=True))
    assert cols["lateness p50 / p99 s"] == "— / —"
    assert cols["slot wait p50 / p99 s (runs waiting > 1 ms)"] == "— / — (—)"
    # before -> after: every fleet column, matched by size
    head, _, line = compare_table([asdict(old)], [asdict(new)])
    cols = dict(zip(_cells(head), _cells(line), strict=True))
    assert set(cols) == {"agents (ping, interval)", "loop", *(h for h, _ in FLEET_COLUMNS)}
    assert cols["CPU ms/probe"] == "4.000 → 3.000"
    assert cols["lateness p50 / p99 s"] == "— / — → ≤ 0.005 / ≤ 0.025"
    assert cols["slot wait p50 / p99 s (runs waiting > 1 ms)"] == "— / — (—) → ≤ 0.001 / ≤ 0.1 (2.5 %)"
    # the JSON of a benchmark run from before these columns existed still renders (--compare)
    legacy = {k: v for k, v in asdict(old).items() if not k.startswith(("slot_", "lateness_p50"))}
    assert len(compare_table([legacy], [asdict(new)])) == 3


def _table(text: str, first_header: str) -> list[dict[str, str]]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {first_header} |"))
    head = _cells(lines[start])
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append(dict(zip(head, _cells(line), strict=True)))
    return rows


@pytest.mark.external  # the fleet and the daemon run as processes of their own
@pytest.mark.timeout(240)
def test_the_small_fleet_benchmark_runs_and_reports_every_figure(tmp_path: Path) -> None:
    out = tmp_path / "fleet.json"
    # --before: the same fleet run against a second daemon (here this checkout again), the before -> after table
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "fleet.py"), "--small", "--before", str(ROOT),
                           "--json", str(out)], capture_output=True, text=True, timeout=220, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result["meta"]["commit"] and result["meta"]["cores"]
    (fleet,) = result["fleet"]
    assert fleet["agents"] == 50 and fleet["module"] == "ping"
    assert fleet["probes"] > 0 and fleet["failed"] == 0, fleet
    assert fleet["errors"] == []
    assert fleet["cpu_ms_per_probe"] > 0 and fleet["rss_mib"] > fleet["rss_base_mib"] > 0
    assert fleet["series"] > 0 and 1 <= fleet["series_per_agent"] < fleet["series"]
    assert fleet["scrape_s"] > 0 and fleet["overhead_p50_ms"] is not None
    # the daemon's own lateness and slot-wait histograms, read by name: bucket bounds over the window
    assert 0 < fleet["lateness_p50_s"] <= fleet["lateness_p99_s"]
    assert 0 < fleet["slot_wait_p50_s"] <= fleet["slot_wait_p99_s"]
    assert 0 <= fleet["slot_waited_pct"] <= 100 and fleet["slot_waited_over_s"] > 0
    bound = re.compile(r"^≤ [0-9.]+ / ≤ [0-9.]+$")
    (printed,) = _table(proc.stdout, "agents (ping, interval)")[:1]
    assert printed["agents (ping, interval)"] == "50 (2 s)"
    assert bound.match(printed["lateness p50 / p99 s"]), printed
    assert re.match(r"^≤ [0-9.]+ / ≤ [0-9.]+ \([0-9.]+ %\)$", printed["slot wait p50 / p99 s (runs waiting > 1 ms)"])
    # the before run and the before -> after table, every column, from the one command
    (before,) = result["before"]
    assert before["agents"] == 50 and before["probes"] > 0 and before["failed"] == 0, before
    assert result["meta"]["before_root"] == str(ROOT)
    text = proc.stdout[proc.stdout.index("**Before → after**"):]
    (pair,) = _table(text, "agents (ping, interval)")
    assert set(pair) == {"agents (ping, interval)", "loop", *(h for h, _ in FLEET_COLUMNS)}
    assert all(" → " in v for k, v in pair.items() if k not in ("agents (ping, interval)", "loop")), pair
    assert all(bound.match(side) for side in pair["lateness p50 / p99 s"].split(" → ")), pair
    modules = {r["module"]: r for r in result["modules"]}
    assert set(modules) == {"ping", "invoke", "stream"}
    assert all(r["probes"] > 0 and r["failed"] == 0 for r in modules.values()), modules
    loops = {(r["module"], r["loop"]) for r in result["loops"]}
    assert loops == {(m, loop) for m in modules for loop in ("bare", "sdk", "engine")}
    for r in result["ratios"]:
        assert r["daemon_vs_bare"] > 0 and r["daemon_vs_sdk"] > 0 and r["sdk_vs_bare"] > 0, r
    # the measurement overhead of each client loop, paced at the fleet run's rate against the same fleet and delay,
    # beside the daemon's; the fleet's own handling beyond the delay over each window
    overhead = {r["loop"]: r for r in result["overhead"]}
    assert set(overhead) == {"engine", "bare_fresh", "bare", "sdk"}
    for r in overhead.values():
        assert r["agents"] == 50 and r["rate_per_s"] == 25 and r["probes"] > 0, r
        assert r["overhead_p50_ms"] is not None and r["overhead_p50_ms"] <= r["overhead_p99_ms"], r
        assert r["server_extra_p50_ms"] is not None, r
        # each call net of the fleet's own measured handling of it: the fleet's delay is in that handling
        assert r["overhead_net_p50_ms"] is not None and r["overhead_net_p50_ms"] <= r["overhead_net_p99_ms"], r
        assert r["overhead_net_p50_ms"] <= r["overhead_p50_ms"] + 0.1, r  # the handling holds the whole delay
    assert fleet["server_extra_p50_ms"] is not None
    assert fleet["overhead_net_p50_ms"] is not None and fleet["overhead_net_p50_ms"] <= fleet["overhead_net_p99_ms"]
    (over,) = _table(proc.stdout, "agents (rate)")
    assert over["agents (rate)"] == "50 (25/s)"
    cell_form = re.compile(r"^-?[0-9.]+ / -?[0-9.]+ \(-?[0-9.]+ / -?[0-9.]+\)$")
    loops = ("daemon", "engine loop", "bare_fresh loop", "bare loop", "sdk loop")
    assert all(cell_form.match(over[k]) for k in loops), over
    assert re.match(r"^[+-][0-9.]+ / [+-][0-9.]+$", over["daemon - bare_fresh"]), over
    nets = ("daemon net", "engine net", "bare_fresh net", "bare net", "sdk net")
    assert all(re.match(r"^-?[0-9.]+ / -?[0-9.]+$", over[k]) for k in nets), over
    assert re.match(r"^[+-][0-9.]+ / [+-][0-9.]+$", over["net: daemon - bare_fresh"]), over
    # the fleet served what the daemon and the loops asked of it: one RPC per probe
    served = result["served"]
    paced = sum(r["probes"] for r in overhead.values())
    assert served["GetTask"] >= fleet["probes"] + modules["ping"]["probes"] + paced
    assert served["SendStreamingMessage"] >= modules["stream"]["probes"]
    assert served.get("other", 0) == 0
