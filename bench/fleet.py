#!/usr/bin/env python
"""The fleet benchmark: the real daemon against a loopback fleet of N agents, and the same probes driven by the
official a2a-sdk client and by a bare aiohttp loop, side by side in one run.

One command (docs/performance.md):

    python bench/fleet.py --agents 1000,5000,10000            # the full table (minutes per size)
    python bench/fleet.py --small                              # the CI configuration (seconds)
    python bench/fleet.py --agents 1000 --event-loop asyncio,uvloop --json out.json

What runs, all on 127.0.0.1:

1. the fleet (bench/fleet_agents.py, its own process): N correct A2A 1.0 agents hosted by path, each RPC held for
   `--delay` seconds server-side, everything it serves counted;
2. for each N: `a2a-probe run` (its own process) with N agents on the `ping` module at `--interval`. After a
   warm-up the benchmark measures, over a window: probes per second (from the daemon's probe_finished log
   events), the daemon's CPU (utime+stime from /proc), RSS and its growth, measurement overhead (each probe's
   reported duration minus the known delay), scheduler lateness (from the daemon's own
   `a2a_probe_scheduler_lateness_seconds` when it exports it), then series per agent and scrape time;
3. per module (ping, invoke, stream): the daemon with `--module-agents` agents on that module alone, for its CPU
   seconds per probe; then, in this process, a loop on the official a2a-sdk client and a bare aiohttp loop doing
   the same probes against the same fleet (CPU from process_time), and the ratios.

Every figure comes from this run; nothing is extrapolated. Results as Markdown tables and as JSON (`--json`).
Metrics are read by name and whatever the daemon does not export is reported as absent, not as zero.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import gzip
import json
import math
import os
import platform
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import yaml

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

MODULES = ("ping", "invoke", "stream")
RPC = {"ping": "GetTask", "invoke": "SendMessage", "stream": "SendStreamingMessage"}
MESSAGE = "a2a-probe health check"
HTTP_TIMEOUT = 30.0  # a safety net per request, never a measurement
SAMPLE_PERIOD = 1.0  # seconds between /proc samples of the daemon
LATENESS = "a2a_probe_scheduler_lateness_seconds"
# the daemon's self-measurements, read by name when present (reported as absent otherwise)
GC_PAUSE = "a2a_probe_gc_pause_seconds"
SLOT_WAIT = "a2a_probe_slot_wait_seconds"
BOOKKEEPING = "a2a_probe_bookkeeping_cpu_seconds_total"
SELF_HISTOGRAMS = (LATENESS, SLOT_WAIT, "a2a_probe_event_loop_lag_seconds", GC_PAUSE)
SELF_COUNTERS = (BOOKKEEPING,)
CLK_TCK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")


class BenchError(RuntimeError):
    pass


# ---- processes --------------------------------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def proc_cpu_s(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime + stime


def proc_rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/statm") as f:
        return int(f.read().split()[1]) * PAGE / 2**20


class FleetProc:
    """bench/fleet_agents.py in its own process, so its CPU is never charged to anyone measured here."""

    def __init__(self, delay: float) -> None:
        self.proc = subprocess.Popen([sys.executable, str(ROOT / "bench" / "fleet_agents.py"), "--delay", str(delay)],
                                     stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line.startswith("listening "):
            self.stop()
            raise BenchError(f"the fleet did not start: {line!r}")
        self.origin = line.split()[1]

    def url(self, name: str) -> str:
        return f"{self.origin}/a/{name}"

    def stats(self) -> dict[str, Any]:
        with urllib.request.urlopen(f"{self.origin}/_stats", timeout=10) as r:
            result: dict[str, Any] = json.loads(r.read())
        return result

    def handled(self) -> dict[str, list[tuple[float, float]]]:
        """Per agent, when the fleet handled its RPCs since the last reset: (start, end), the shared monotonic clock."""
        with urllib.request.urlopen(f"{self.origin}/_stats?handled=1", timeout=30) as r:
            found: dict[str, list[tuple[float, float]]] = json.loads(r.read()).get("handled", {})
        return found

    def reset_extra(self) -> None:
        """Start a new window of the fleet's own handling time beyond the delay (`server_extra_ms` in stats)."""
        req = urllib.request.Request(f"{self.origin}/_control?reset=1", method="POST")
        with urllib.request.urlopen(req, timeout=10) as r:
            r.read()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@dataclass
class Event:
    t: float  # monotonic time the log line arrived
    module: str
    duration: float
    ok: bool
    reason: str
    agent: str = ""


Call = tuple[str, float, float]  # a timed call: (the fleet's agent name, when it ended on the monotonic clock, seconds)


def net_of_fleet(calls: Sequence[Call], handled: Mapping[str, Sequence[Sequence[float]]], slack: float = 0.05,
                 ) -> list[float]:
    """Each call's latency less the fleet's own measured handling of it (ms): the span the fleet handled for that
    agent that ended within the call (`slack` s after its end, for a call stamped late, e.g. by its log line). The
    fleet's delay, its timer's overshoot, its parsing and encoding are the fleet's; what is left is the client's,
    the kernel's and the fleet's accept and read before its handler ran. Calls without a span are left out."""
    out: list[float] = []
    for agent, ended, seconds in calls:
        spans = [(a, b) for a, b in handled.get(agent, ()) if ended - seconds - slack <= b <= ended + 0.001]
        if spans:
            start, end = max(spans, key=lambda span: span[1])
            out.append(1e3 * (seconds - (end - start)))
    return out


class DaemonProc:
    """`a2a-probe run` in its own process; its probe_finished events are read from its JSON log (stderr)."""

    root = ROOT  # the checkout whose daemon is measured (--daemon-root: e.g. a branch before or after a change)

    def __init__(self, config: dict[str, Any], workdir: Path, event_loop: str, max_concurrency: int | None,
                 root: Path | None = None) -> None:
        if root is not None:
            self.root = root
        path = workdir / f"fleet-{uuid.uuid4().hex[:8]}.yaml"
        path.write_text(yaml.safe_dump(config, sort_keys=False))
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        boot = ("import asyncio, sys\n"
                + ("import uvloop; asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())\n"
                   if event_loop == "uvloop" else "")
                + "from probe.cli import main\nsys.exit(main(sys.argv[1:]))\n")
        args = ["run", "--config", str(path), "--listen-address", f"127.0.0.1:{self.port}", "--log-format", "json",
                "--log-level", "info"]
        if max_concurrency:
            args += ["--max-concurrency", str(max_concurrency)]
        env = {**os.environ, "PYTHONPATH": str(self.root)}
        self.proc = subprocess.Popen([sys.executable, "-c", boot, *args], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, text=True, env=env, cwd=self.root)
        self.pid = self.proc.pid
        self.events: list[Event] = []
        self.other_errors: list[str] = []
        self.samples: list[tuple[float, float, float]] = []  # (t, cpu_s, rss_mib)
        self._stop = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._sampler = threading.Thread(target=self._sample, daemon=True)
        self._reader.start()
        self._sampler.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            t = time.monotonic()
            try:
                ev = json.loads(line)
            except ValueError:
                self.other_errors.append(line.rstrip()[:300])
                continue
            if ev.get("event") == "probe_finished":
                self.events.append(Event(t, ev.get("module", ""), float(ev.get("duration_seconds", 0.0)),
                                         ev.get("verdict") == "pass", str(ev.get("reason") or ""),
                                         str(ev.get("agent") or "")))
            elif ev.get("level") in ("error", "critical"):
                self.other_errors.append(line.rstrip()[:300])

    def _sample(self) -> None:
        while not self._stop.is_set() and self.proc.poll() is None:
            with contextlib.suppress(OSError, ValueError, IndexError):
                self.samples.append((time.monotonic(), proc_cpu_s(self.pid), proc_rss_mib(self.pid)))
            self._stop.wait(SAMPLE_PERIOD)

    def cpu(self) -> float:
        return proc_cpu_s(self.pid)

    def rss(self) -> float:
        return proc_rss_mib(self.pid)

    def wait_ready(self, timeout: float = 120.0) -> float:
        """Seconds until /readyz answers 200 (config parsed, jobs scheduled, web server up)."""
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            if self.proc.poll() is not None:
                raise BenchError(f"the daemon exited with {self.proc.returncode}: {self.other_errors[-5:]}")
            with contextlib.suppress(OSError), urllib.request.urlopen(f"{self.base}/readyz", timeout=5) as r:
                if r.status == 200:
                    return time.monotonic() - t0
            time.sleep(0.1)
        raise BenchError(f"the daemon was not ready within {timeout} s")

    def stop(self) -> None:
        self._stop.set()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._reader.join(5)
        self._sampler.join(5)


def fleet_config(fleet: FleetProc, names: Sequence[str], module: str, interval: float,
                 fresh_connection: bool | None = None) -> dict[str, Any]:
    # the module keeps the daemon's default jitter: the benchmark measures the daemon as users run it
    timeout = min(10.0, interval)
    spec: dict[str, Any] = {"prober": module, "interval": f"{interval:g}s", "timeout": f"{timeout:g}s"}
    if fresh_connection is not None:  # --fresh-connection: the module's choice; unset, the daemon's default
        spec["fresh_connection"] = fresh_connection
    return {"modules": {f"bench-{module}": spec},
            "agents": [{"name": n, "url": fleet.url(n), "modules": [f"bench-{module}"]} for n in names]}


def agent_names(n: int) -> list[str]:
    return [f"agent-{i:05d}" for i in range(n)]


# ---- reading /metrics --------------------------------------------------------------------------------------------

PROMETHEUS_ACCEPT = ("application/openmetrics-text;version=1.0.0;escaping=allow-utf-8,"
                     "application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1")
_SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)")
_LE = re.compile(r'le="([^"]+)"')


@dataclass
class Scrape:
    seconds: float
    bytes: int
    series: int
    agent_series: int
    histograms: dict[str, list[tuple[float, float]]]  # name -> [(le, cumulative count)], summed over label sets
    sums: dict[str, float] = field(default_factory=dict)  # histogram _sum and self counters, summed over label sets


def scrape(base: str, only_self: bool = False) -> Scrape:
    """/metrics, whole (series, size, time) or only the daemon's self-measurements (`name[]`: a cheap scrape that
    can open and close the window without costing the daemon a full render)."""
    query = ""
    if only_self:
        names = [f"{h}{suffix}" for h in SELF_HISTOGRAMS for suffix in ("_bucket", "_sum")] + list(SELF_COUNTERS)
        query = "?" + "&".join(f"name[]={n}" for n in names)
    # asked for as Prometheus asks: OpenMetrics preferred, gzip (so the time is what a real scrape waits)
    req = urllib.request.Request(f"{base}/metrics{query}", headers={"Accept": PROMETHEUS_ACCEPT,
                                                                     "Accept-Encoding": "gzip"})
    t0 = time.perf_counter()
    with urllib.request.urlopen(req, timeout=120) as r:
        body = r.read()
        if r.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
    seconds = time.perf_counter() - t0
    series = agent_series = 0
    buckets: dict[str, dict[float, float]] = {}
    sums: dict[str, float] = {}
    for line in body.decode().splitlines():
        if not line or line[0] == "#":
            continue
        series += 1
        if 'agent="' in line:
            agent_series += 1
        m = _SAMPLE.match(line)
        if not m:
            continue
        name = m.group(1)
        if name.endswith("_bucket") and name[:-7] in SELF_HISTOGRAMS:
            le = _LE.search(m.group(2) or "")
            if le:
                per = buckets.setdefault(name[:-7], {})
                bound = math.inf if le.group(1) == "+Inf" else float(le.group(1))
                per[bound] = per.get(bound, 0.0) + float(m.group(3))
        elif (name.endswith("_sum") and name[:-4] in SELF_HISTOGRAMS) or name in SELF_COUNTERS:
            sums[name] = sums.get(name, 0.0) + float(m.group(3))
    hist = {name: sorted(per.items()) for name, per in buckets.items()}
    return Scrape(seconds, len(body), series, agent_series, hist, sums)


def hist_delta(after: list[tuple[float, float]], before: list[tuple[float, float]] | None) -> list[tuple[float, float]]:
    prev = dict(before or [])
    return [(le, count - prev.get(le, 0.0)) for le, count in after]


def hist_quantile(cumulative: list[tuple[float, float]], q: float) -> float | None:
    """The upper bound of the bucket holding the q-quantile (Prometheus buckets give no finer answer)."""
    if not cumulative or cumulative[-1][1] <= 0:
        return None
    rank = q * cumulative[-1][1]
    return next(le for le, count in cumulative if count >= rank)


# ---- measuring the daemon ----------------------------------------------------------------------------------------

@dataclass
class DaemonRow:
    agents: int
    module: str
    event_loop: str
    interval_s: float
    window_s: float
    ready_s: float
    probes: int
    failed: int
    probes_per_s: float
    expected_per_s: float
    cpu_core_pct: float
    cpu_ms_per_probe: float
    rss_mib: float
    rss_base_mib: float
    rss_per_1000_mib: float
    rss_growth_mib_per_min: float
    overhead_p50_ms: float | None
    overhead_p99_ms: float | None
    lateness_p99_s: float | None  # bucket upper bound; None when the daemon does not export it
    lateness_mean_s: float | None
    lateness_p50_s: float | None = None  # bucket upper bound, like p99
    slot_wait_p50_s: float | None = None  # bucket upper bounds of the window's waits for a concurrency slot
    slot_wait_p99_s: float | None = None
    slot_waited_pct: float | None = None  # % of the window's runs that waited longer than the first bucket (1 ms)
    slot_waited_over_s: float | None = None  # that first bucket's bound
    gc_pause_p99_s: float | None = None  # bucket upper bound of the window's GC pauses
    gc_cpu_pct: float | None = None  # the window's GC pause time as % of the daemon's CPU
    bookkeeping_pct: float | None = None  # recording results (metrics, history, log) as % of the daemon's CPU
    bookkeeping_us_per_probe: float | None = None
    series: int | None = None
    series_per_agent: float | None = None
    scrape_s: float | None = None
    scrape_mib: float | None = None
    self_metrics: dict[str, Any] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    profile: dict[str, Any] | None = None
    fail_reasons: dict[str, int] = field(default_factory=dict)
    # the scrapes after the window and the probe timeout after them: what a scrape does to the probes around it
    during_scrapes: dict[str, Any] = field(default_factory=dict)
    # the fleet's own handling of the window's RPCs beyond the delay (bench/fleet_agents.py), p50 / p99 ms
    server_extra_p50_ms: float | None = None
    server_extra_p99_ms: float | None = None
    # the overhead with the fleet's own measured handling of each call subtracted (net_of_fleet), p50 / p99 ms
    overhead_net_p50_ms: float | None = None
    overhead_net_p99_ms: float | None = None


def slope_per_min(samples: Sequence[tuple[float, float]]) -> float:
    if len(samples) < 3:
        return 0.0
    xs = [t for t, _ in samples]
    ys = [v for _, v in samples]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    var = sum((x - mx) ** 2 for x in xs)
    return 60 * sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / var if var else 0.0


def pct(values: Sequence[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def measure_daemon(fleet: FleetProc, workdir: Path, *, agents: int, module: str, interval: float, warmup: float,
                   window: float, delay: float, event_loop: str, rss_base: float, max_concurrency: int | None,
                   scrapes: int, profile: float = 0.0, root: Path | None = None,
                   fresh_connection: bool | None = None) -> DaemonRow:
    names = agent_names(agents)
    daemon = DaemonProc(fleet_config(fleet, names, module, interval, fresh_connection), workdir, event_loop,
                        max_concurrency, root)
    try:
        ready = daemon.wait_ready(timeout=120.0 + agents / 200)  # parsing and scheduling a fleet takes a while
        time.sleep(warmup)
        # the window opens and closes on cheap scrapes of the daemon's self-measurements only
        before = scrape(daemon.base, only_self=True)
        fleet.reset_extra()
        t0, c0 = time.monotonic(), daemon.cpu()
        time.sleep(window)
        t1, c1 = time.monotonic(), daemon.cpu()
        server_extra = fleet.stats()["server_extra_ms"]
        handled = fleet.handled()
        closing = scrape(daemon.base, only_self=True)
        rss = daemon.rss()
        after = [scrape(daemon.base) for _ in range(scrapes)]
        if after:
            time.sleep(min(10.0, interval) + 2.0)  # what the scrapes held up has finished or timed out
        t2 = time.monotonic()
        profiled = py_spy(daemon, profile) if profile else None
    finally:
        daemon.stop()
    in_window = [e for e in daemon.events if t0 <= e.t <= t1]
    scraped = [e for e in daemon.events if t1 < e.t <= t2]
    done = len(in_window)
    over = [1e3 * (e.duration - delay) for e in in_window if e.ok]
    net = net_of_fleet([(e.agent, e.t, e.duration) for e in in_window if e.ok], handled, slack=2.0)
    row = DaemonRow(
        agents=agents, module=module, event_loop=event_loop, interval_s=interval, window_s=round(t1 - t0, 2),
        ready_s=round(ready, 2), probes=done, failed=sum(not e.ok for e in in_window),
        probes_per_s=round(done / (t1 - t0), 2), expected_per_s=round(agents / interval, 2),
        cpu_core_pct=round(100 * (c1 - c0) / (t1 - t0), 2),
        cpu_ms_per_probe=round(1e3 * (c1 - c0) / done, 4) if done else math.nan,
        rss_mib=round(rss, 1), rss_base_mib=round(rss_base, 1),
        rss_per_1000_mib=round((rss - rss_base) / agents * 1000, 2),
        rss_growth_mib_per_min=round(slope_per_min([(t, r) for t, _, r in daemon.samples if t0 <= t <= t1]), 2),
        overhead_p50_ms=_r(pct(over, 0.50)), overhead_p99_ms=_r(pct(over, 0.99)),
        server_extra_p50_ms=server_extra.get("p50"), server_extra_p99_ms=server_extra.get("p99"),
        overhead_net_p50_ms=_r(pct(net, 0.50)), overhead_net_p99_ms=_r(pct(net, 0.99)),
        lateness_p99_s=None, lateness_mean_s=None, errors=daemon.other_errors[:5], profile=profiled,
        fail_reasons=dict(Counter(e.reason for e in in_window if not e.ok)),
        during_scrapes={"probes": len(scraped), "failed": sum(not e.ok for e in scraped),
                        "fail_reasons": dict(Counter(e.reason for e in scraped if not e.ok)),
                        "overhead_p99_ms": _r(pct([1e3 * (e.duration - delay) for e in scraped if e.ok], 0.99))})
    if after:
        last = after[-1]
        row.series, row.series_per_agent = last.series, round(last.agent_series / agents, 2)
        row.scrape_s = round(statistics.median(s.seconds for s in after), 3)
        row.scrape_mib = round(last.bytes / 2**20, 2)
    self_figures(row, before, closing, cpu=c1 - c0, probes=done)
    return row


def self_figures(row: DaemonRow, before: Scrape, closing: Scrape, *, cpu: float, probes: int) -> None:
    """The window's figures from the daemon's own histograms and counters (closing minus opening scrape); what the
    daemon does not export stays None (printed "—"), never 0."""
    for name, cumulative in closing.histograms.items():
        delta = hist_delta(cumulative, before.histograms.get(name))
        row.self_metrics[name] = {"p50_le": hist_quantile(delta, 0.5), "p99_le": hist_quantile(delta, 0.99),
                                  "count": delta[-1][1] if delta else 0,
                                  "first_le": list(delta[0]) if delta else None,
                                  "sum": round(closing.sums.get(name + "_sum", 0.0)
                                               - before.sums.get(name + "_sum", 0.0), 4)}
    late = row.self_metrics.get(LATENESS)
    if late:
        row.lateness_p50_s, row.lateness_p99_s = late["p50_le"], late["p99_le"]
    wait = row.self_metrics.get(SLOT_WAIT)
    if wait:
        row.slot_wait_p50_s, row.slot_wait_p99_s = wait["p50_le"], wait["p99_le"]
        if wait["count"] > 0 and wait["first_le"]:
            bound, within = wait["first_le"]
            row.slot_waited_over_s = bound
            row.slot_waited_pct = round(100 * (wait["count"] - within) / wait["count"], 2)
    gc = row.self_metrics.get(GC_PAUSE)
    if gc:
        row.gc_pause_p99_s = gc["p99_le"]
        row.gc_cpu_pct = round(100 * gc["sum"] / cpu, 1) if cpu > 0 else None
    if BOOKKEEPING in closing.sums:
        spent = closing.sums[BOOKKEEPING] - before.sums.get(BOOKKEEPING, 0.0)
        row.bookkeeping_pct = round(100 * spent / cpu, 1) if cpu > 0 else None
        row.bookkeeping_us_per_probe = round(1e6 * spent / probes, 1) if probes else None


def py_spy(daemon: DaemonProc, seconds: float, top: int = 30) -> dict[str, Any]:
    """Sample the running daemon with py-spy (another process; it does not stop the daemon) for `seconds`, with one
    /metrics scrape in the middle, as Prometheus would scrape every 30 s. Top frames by own and by total samples."""
    import shutil

    exe = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    if not Path(exe).exists():
        return {"error": "py-spy is not installed (pip install py-spy)"}
    out = Path(tempfile.mkdtemp(prefix="a2a-spy-")) / "stacks.txt"
    cmd = [exe, "record", "--pid", str(daemon.pid), "--duration", str(int(seconds)), "--rate", "50", "--format",
           "raw", "--function", "--nonblocking", "--output", str(out)]
    spy = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    time.sleep(seconds / 2)
    with contextlib.suppress(OSError):
        scrape(daemon.base)
    _, err = spy.communicate(timeout=seconds + 60)
    if spy.returncode != 0 or not out.exists():
        return {"error": f"py-spy failed: {err.strip()[-300:]}"}
    own: dict[str, int] = {}
    total: dict[str, int] = {}
    samples = 0
    for line in out.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        frames = [_frame(f) for f in stack.split(";")]
        samples += n
        own[frames[-1]] = own.get(frames[-1], 0) + n
        for f in set(frames):
            total[f] = total.get(f, 0) + n

    def ranked(d: dict[str, int], keep: Callable[[str], bool]) -> list[str]:
        items = sorted(((v, k) for k, v in d.items() if keep(k)), reverse=True)[:top]
        return [f"{100 * v / samples:5.1f} %  {k}" for v, k in items]

    ours = ("probe/", "apscheduler/", "prometheus_client/", "aiohttp/", "structlog/", "asyncio/")
    # frames under (nearly) every sample are the event loop's and the CLI's: they say nothing
    outer = {k for k, v in total.items() if v >= 0.7 * samples}
    return {"seconds": seconds, "samples": samples, "own": ranked(own, lambda k: True),
            "total": ranked(total, lambda k: any(p in k for p in ours) and "<module>" not in k and k not in outer)}


def _frame(frame: str) -> str:
    # "function (path/to/site-packages/pkg/mod.py)" -> "function (pkg/mod.py)"
    name, _, where = frame.partition(" (")
    where = where.rstrip(")")
    for marker in ("site-packages/", "/lib/python3", str(ROOT) + "/"):
        if marker in where:
            where = where.split(marker, 1)[1]
    return f"{name} ({where})" if where else name


def _r(v: float | None, nd: int = 3) -> float | None:
    return None if v is None else round(v, nd)


@dataclass
class Idle:
    rss_mib: float
    cpu_core_pct: float


def idle_daemon(workdir: Path, event_loop: str, seconds: float, root: Path | None = None) -> Idle:
    """A daemon with no agents: its RSS (interpreter, libraries, web server) is charged to no agent, and its CPU is
    the floor the per-probe figures stand on."""
    daemon = DaemonProc({"agents": []}, workdir, event_loop, None, root)
    try:
        daemon.wait_ready()
        time.sleep(0.5)
        t0, c0 = time.monotonic(), daemon.cpu()
        time.sleep(seconds)
        return Idle(daemon.rss(), round(100 * (daemon.cpu() - c0) / (time.monotonic() - t0), 2))
    finally:
        daemon.stop()


# ---- the client loops (in this process) ----------------------------------------------------------------------------

@dataclass
class LoopRow:
    module: str
    loop: str
    cpu_ms_per_probe: float
    cpu_ms_min: float
    cpu_ms_max: float
    probes: int
    note: str


Probe = Callable[[int], Awaitable[None]]


def _name(url: str) -> str:
    """The fleet's agent name in its URL (FleetProc.url)."""
    return url.rstrip("/").rsplit("/", 1)[-1]


async def make_bare(urls: Sequence[str], module: str, timed: list[Call] | None = None, fresh: bool = False,
                    ) -> tuple[Probe, Callable[[], Awaitable[None]]]:
    """`timed`: each RPC's latency (seconds from the POST to its last byte) is appended there; `fresh`: the POST on a
    new connection every probe (a `force_close` session), as the daemon's ping does by default."""
    session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=HTTP_TIMEOUT))
    post = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=HTTP_TIMEOUT),
                                 connector=aiohttp.TCPConnector(force_close=True)) if fresh else session
    accept = "text/event-stream" if module == "stream" else "application/json"
    headers = {"Content-Type": "application/json", "Accept": accept, "A2A-Version": "1.0"}

    async def probe(i: int) -> None:
        base = urls[i % len(urls)]
        async with session.get(f"{base}/.well-known/agent-card.json", headers={"A2A-Version": "1.0"}) as r:
            await r.read()
            if r.status != 200:
                raise BenchError(f"bare: card HTTP {r.status}")
        params: dict[str, Any] = ({"id": f"ping-{uuid.uuid4()}"} if module == "ping" else {"message": {
            "role": "ROLE_USER", "messageId": str(uuid.uuid4()), "parts": [{"text": MESSAGE}]}})
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": RPC[module], "params": params}).encode()
        size = 0
        t0 = time.monotonic()
        async with post.post(f"{base}/rpc", data=body, headers=headers) as r:
            async for chunk in r.content.iter_any():  # to EOF, nothing parsed: the floor
                size += len(chunk)
            if timed is not None:
                timed.append((_name(base), end := time.monotonic(), end - t0))
            if r.status != 200 or not size:
                raise BenchError(f"bare: {RPC[module]} HTTP {r.status}, {size} bytes")

    async def close() -> None:
        await session.close()
        if post is not session:
            await post.close()

    return probe, close


async def make_sdk(urls: Sequence[str], module: str, timed: list[Call] | None = None,
                   ) -> tuple[Probe, Callable[[], Awaitable[None]]]:
    import httpx
    from a2a.client import A2ACardResolver, ClientConfig, create_client
    from a2a.client.errors import A2AError
    from a2a.helpers import new_text_message
    from a2a.types.a2a_pb2 import GetTaskRequest, Role, SendMessageRequest, TaskState

    hx = httpx.AsyncClient(trust_env=False, timeout=HTTP_TIMEOUT, limits=httpx.Limits(max_connections=100))
    # one client per agent, built once and reused (the SDK allows it); the card is still fetched on every probe
    clients = [await create_client(u, ClientConfig(httpx_client=hx, streaming=module == "stream")) for u in urls]
    resolvers = [A2ACardResolver(hx, u) for u in urls]

    async def probe(i: int) -> None:
        k = i % len(urls)
        await resolvers[k].get_agent_card()
        t0 = time.monotonic()  # the call as the SDK's user sees it: from the call to its answer (or error)
        if module == "ping":
            try:
                await clients[k].get_task(GetTaskRequest(id=f"ping-{uuid.uuid4()}"))
            except A2AError:
                if timed is not None:
                    timed.append((_name(urls[k]), end := time.monotonic(), end - t0))
                return  # TaskNotFound: the answer ping expects
            raise BenchError("sdk: GetTask of an unknown task did not fail")
        last = None
        async for event in clients[k].send_message(SendMessageRequest(
                message=new_text_message(MESSAGE, role=Role.ROLE_USER))):
            last = event
        if timed is not None:
            timed.append((_name(urls[k]), end := time.monotonic(), end - t0))
        state = (last.task.status.state if last is not None and last.HasField("task") else
                 last.status_update.status.state if last is not None and last.HasField("status_update") else -1)
        if state != TaskState.TASK_STATE_COMPLETED:
            raise BenchError(f"sdk: the task did not complete: {last}")

    async def close() -> None:
        for c in clients:
            await c.close()
        await hx.aclose()

    return probe, close


async def make_ours(urls: Sequence[str], module: str, timed: list[Call] | None = None, fresh: bool = False,
                    ) -> tuple[Probe, Callable[[], Awaitable[None]]]:
    """`timed`: each result's duration (the agent's latency, as the daemon reports it) is appended there; `fresh`:
    a new connection for every call, the daemon's default for ping (`fresh_connection`)."""
    from probe.engine import run_probe
    from probe.results import StepName
    from probe.target import Target
    from probe.wire.http import HttpClient

    client = HttpClient()
    targets = [Target(name=f"bench-{i}", url=u, message=MESSAGE, fresh_connection=fresh) for i, u in enumerate(urls)]
    steps = ({"ping": StepName.PING, "invoke": StepName.INVOKE, "stream": StepName.STREAM}[module],)

    async def probe(i: int) -> None:
        result = await run_probe(targets[i % len(targets)], client, steps=steps)
        if not result.success:
            raise BenchError(f"ours: {result.reason}")
        if timed is not None:
            timed.append((_name(targets[i % len(targets)].url), time.monotonic(), result.duration_s))

    return probe, client.close


LOOPS: dict[str, tuple[Callable[[Sequence[str], str], Awaitable[tuple[Probe, Callable[[], Awaitable[None]]]]], str]]
LOOPS = {
    "bare": (make_bare, "aiohttp GET card + POST, body read to EOF, nothing parsed (the floor)"),
    "sdk": (make_sdk, "official a2a-sdk client per agent built once; card fetched and parsed each probe"),
    "engine": (make_ours, "probe.engine.run_probe with every check, no scheduler/metrics/logs"),
}


async def interleaved_cpu(made: Mapping[str, tuple[Probe, Callable[[], Awaitable[None]]]], probes: int, rounds: int,
                          concurrency: int, *, warmup: int, collect: bool = False) -> dict[str, list[float]]:
    """CPU ms a probe of each loop, per round: every loop warmed up by `warmup` probes, then timed in `rounds`
    interleaved, rotating and alternating rounds (drift hits every loop alike), `concurrency` probes in flight;
    probe indexes keep counting across batches. `collect`: a full GC before each timed batch. Closes the loops."""
    cpu: dict[str, list[float]] = {name: [] for name in made}
    per_round = max(concurrency, probes // rounds)
    counter = 0

    async def batch(probe: Probe, n: int) -> None:
        nonlocal counter
        start = counter
        counter += n
        queue = iter(range(start, start + n))

        async def worker() -> None:
            for i in queue:
                await probe(i)

        await asyncio.gather(*(worker() for _ in range(concurrency)))

    try:
        for probe, _ in made.values():
            await batch(probe, warmup)  # connections, imports, caches
        order = list(made)
        for r in range(rounds):
            seq = order[r % len(order):] + order[:r % len(order)]
            for name in (list(reversed(seq)) if r % 2 else seq):
                if collect:
                    gc.collect()
                c0 = time.process_time()
                await batch(made[name][0], per_round)
                cpu[name].append(1e3 * (time.process_time() - c0) / per_round)
    finally:
        for _, close in made.values():
            await close()
    return cpu


async def run_loops(urls: Sequence[str], module: str, probes: int, rounds: int, concurrency: int) -> list[LoopRow]:
    made = {name: await maker(urls, module) for name, (maker, _) in LOOPS.items()}
    cpu = await interleaved_cpu(made, probes, rounds, concurrency, warmup=concurrency * 2)
    per_round = max(concurrency, probes // rounds)
    return [LoopRow(module, name, round(statistics.median(v), 4), round(min(v), 4), round(max(v), 4),
                    per_round * rounds, LOOPS[name][1]) for name, v in cpu.items()]


# ---- the loops' own overhead against the same fleet: the floor under the daemon's figure ---------------------------

TimedMaker = Callable[[Sequence[str], list[Call]], Awaitable[tuple[Probe, Callable[[], Awaitable[None]]]]]
OVERHEAD_LOOPS: dict[str, tuple[TimedMaker, str]] = {
    "engine": (lambda urls, timed: make_ours(urls, "ping", timed, fresh=True),
               "probe.engine.run_probe, ping on a new connection (the daemon's default); the result's duration"),
    "engine_pool": (lambda urls, timed: make_ours(urls, "ping", timed),
                    "probe.engine.run_probe, ping on the kept-alive pool (a module's fresh_connection: false)"),
    "bare_fresh": (lambda urls, timed: make_bare(urls, "ping", timed, fresh=True),
                   "aiohttp POST on a new connection (as ping), from the call to the last byte"),
    "bare": (lambda urls, timed: make_bare(urls, "ping", timed),
             "aiohttp POST on the kept-alive pool, from the call to the last byte"),
    "sdk": (lambda urls, timed: make_sdk(urls, "ping", timed),
            "official a2a-sdk get_task (httpx's pool), from the call to its answer"),
}
OVERHEAD_AGENTS = 200  # distinct agents the paced loops call (the fleet's cost of a request does not depend on which)


@dataclass
class OverheadRow:
    agents: int  # the fleet size whose probe rate the loop ran at
    loop: str
    rate_per_s: float  # the rate asked: the fleet run's N / interval
    achieved_per_s: float
    probes: int
    overhead_p50_ms: float | None  # the call's latency minus the fleet's delay, as each loop measures it
    overhead_p99_ms: float | None
    server_extra_p50_ms: float | None  # the fleet's own handling beyond the delay over the same window
    server_extra_p99_ms: float | None
    note: str
    overhead_net_p50_ms: float | None = None  # each call's latency less the fleet's own handling of it (net_of_fleet)
    overhead_net_p99_ms: float | None = None


async def paced(probe: Probe, rate: float, seconds: float, first: int) -> tuple[int, float]:
    """An open loop: a probe started every 1/rate s for `seconds` (a slow answer never delays the next start), every
    one awaited; returns (probes, achieved rate of starts)."""
    loop = asyncio.get_running_loop()
    running: set[asyncio.Future[None]] = set()
    start = loop.time()
    n = 0
    while (due := start + n / rate) < start + seconds:
        if (wait := due - loop.time()) > 0:
            await asyncio.sleep(wait)
        task = asyncio.ensure_future(probe(first + n))
        running.add(task)
        task.add_done_callback(running.discard)
        n += 1
    elapsed = loop.time() - start
    await asyncio.gather(*running)
    return n, n / elapsed if elapsed > 0 else 0.0


async def measure_overhead(fleet: FleetProc, agents: int, rate: float, seconds: float, delay: float,
                           loops: Sequence[str], rounds: int = 2) -> list[OverheadRow]:
    """Each loop at the fleet run's probe rate against the same fleet and delay, `seconds` in all, in `rounds`
    interleaved rounds (the order alternating); the overhead is each call's latency minus the delay."""
    urls = [fleet.url(n) for n in agent_names(min(agents, OVERHEAD_AGENTS))]
    timed: dict[str, list[Call]] = {name: [] for name in loops}
    net: dict[str, list[float]] = {name: [] for name in loops}
    made = {name: await OVERHEAD_LOOPS[name][0](urls, timed[name]) for name in loops}
    counts = dict.fromkeys(loops, 0)
    rates: dict[str, list[float]] = {name: [] for name in loops}
    extra: dict[str, list[tuple[float | None, float | None]]] = {name: [] for name in loops}
    index = 0
    try:
        for name in loops:  # connections, imports, caches: untimed
            for _ in range(min(len(urls), 16)):
                await made[name][0](index)
                index += 1
            timed[name].clear()
        for r in range(rounds):
            for name in (list(reversed(loops)) if r % 2 else list(loops)):
                fleet.reset_extra()
                first = len(timed[name])
                n, achieved = await paced(made[name][0], rate, seconds / rounds, index)
                net[name] += net_of_fleet(timed[name][first:], fleet.handled())
                index += n
                counts[name] += n
                rates[name].append(achieved)
                server = fleet.stats()["server_extra_ms"]
                extra[name].append((server.get("p50"), server.get("p99")))
    finally:
        for _, close in made.values():
            await close()
    rows = []
    for name in loops:
        over = [1e3 * (t - delay) for _, _, t in timed[name]]
        p50s = [a for a, _ in extra[name] if a is not None]
        p99s = [b for _, b in extra[name] if b is not None]
        rows.append(OverheadRow(
            agents=agents, loop=name, rate_per_s=round(rate, 2), achieved_per_s=round(statistics.fmean(rates[name]), 2),
            probes=counts[name], overhead_p50_ms=_r(pct(over, 0.50)), overhead_p99_ms=_r(pct(over, 0.99)),
            server_extra_p50_ms=_r(statistics.median(p50s)) if p50s else None,
            server_extra_p99_ms=_r(max(p99s)) if p99s else None, note=OVERHEAD_LOOPS[name][1],
            overhead_net_p50_ms=_r(pct(net[name], 0.50)), overhead_net_p99_ms=_r(pct(net[name], 0.99))))
    return rows


# ---- the run -------------------------------------------------------------------------------------------------------

def machine() -> dict[str, Any]:
    model = ""
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT).stdout
    load = os.getloadavg()
    return {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "commit": commit.strip(),
            "cpu": model, "cores": os.cpu_count(), "loadavg_at_start": [round(x, 2) for x in load],
            "python": platform.python_version(), "aiohttp": aiohttp.__version__, "host": platform.node()}


def before_checkout(spec: str, workdir: Path) -> tuple[Path, str]:
    """--before: a directory holding an older checkout, or a git revision of this repository unpacked into workdir.
    Returns the root and its short commit ("" when the directory is not a git checkout)."""
    path = Path(spec)
    if path.is_dir():
        rev = subprocess.run(["git", "-C", str(path), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
        return path.resolve(), rev.stdout.strip() if rev.returncode == 0 else ""
    rev = subprocess.run(["git", "rev-parse", "--short", "--verify", f"{spec}^{{commit}}"], capture_output=True,
                         text=True, cwd=ROOT)
    if rev.returncode != 0:
        raise BenchError(f"--before {spec!r} is neither a directory nor a git revision of {ROOT}")
    dest = workdir / f"before-{rev.stdout.strip()}"
    dest.mkdir()
    archive = subprocess.Popen(["git", "archive", spec], stdout=subprocess.PIPE, cwd=ROOT)
    subprocess.run(["tar", "-x", "-C", str(dest)], stdin=archive.stdout, check=True)
    if archive.wait() != 0:
        raise BenchError(f"git archive {spec} failed")
    return dest, rev.stdout.strip()


def run(args: argparse.Namespace) -> dict[str, Any]:
    DaemonProc.root = args.daemon_root.resolve()
    meta = machine()
    meta["daemon_root"] = str(DaemonProc.root)
    meta.update({k: getattr(args, k) for k in ("interval", "warmup", "window", "delay", "module_agents",
                                               "module_interval", "module_warmup", "module_window", "loop_probes",
                                               "max_concurrency", "overhead_window", "fresh_connection")})
    fleet_rows: list[DaemonRow] = []
    before_rows: list[DaemonRow] = []
    module_rows: list[DaemonRow] = []
    loop_rows: list[LoopRow] = []
    overhead_rows: list[OverheadRow] = []
    idles: dict[str, Any] = {}
    fleet = FleetProc(args.delay)
    try:
        with tempfile.TemporaryDirectory(prefix="a2a-fleet-") as tmp:
            workdir = Path(tmp)
            before_root: Path | None = None
            if args.before:
                before_root, meta["before_commit"] = before_checkout(args.before, workdir)
                meta["before_root"] = str(before_root)
            for event_loop in args.event_loop:
                idle = idle_daemon(workdir, event_loop, 1.0 if args.small else 5.0)
                idles[event_loop] = asdict(idle)
                base = idle.rss_mib
                before_base = 0.0
                if before_root is not None:
                    before_idle = idle_daemon(workdir, event_loop, 1.0 if args.small else 5.0, before_root)
                    idles[f"{event_loop} (before)"] = asdict(before_idle)
                    before_base = before_idle.rss_mib
                for n in args.agents:
                    fleet_run = {"agents": n, "module": "ping", "interval": args.interval, "warmup": args.warmup,
                                 "window": args.window, "delay": args.delay, "event_loop": event_loop,
                                 "max_concurrency": args.max_concurrency, "scrapes": args.scrapes,
                                 "fresh_connection": args.fresh_connection}
                    if before_root is not None:  # interleaved, size by size: drift on the machine hits both alike
                        _progress(args, f"fleet: {n} agents, ping, {event_loop}, before ({before_root})")
                        before_rows.append(measure_daemon(fleet, workdir, rss_base=before_base, root=before_root,
                                                          **fleet_run))
                    _progress(args, f"fleet: {n} agents, ping, {event_loop}")
                    fleet_rows.append(measure_daemon(fleet, workdir, rss_base=base,
                                                     profile=args.profile if n == max(args.agents) else 0.0,
                                                     **fleet_run))
                    if (args.overhead_window > 0 and event_loop == args.event_loop[0]
                            and n / args.interval <= args.overhead_max_rate):
                        _progress(args, f"overhead: the client loops at {n} agents' rate")
                        overhead_rows += asyncio.run(measure_overhead(
                            fleet, n, n / args.interval, args.overhead_window, args.delay, args.overhead_loops))
                for module in args.modules:
                    _progress(args, f"module: {module}, {args.module_agents} agents, {event_loop}")
                    module_rows.append(measure_daemon(
                        fleet, workdir, agents=args.module_agents, module=module, interval=args.module_interval,
                        warmup=args.module_warmup, window=args.module_window, delay=args.delay,
                        event_loop=event_loop, rss_base=base, max_concurrency=args.max_concurrency, scrapes=0))
            urls = [fleet.url(n) for n in agent_names(min(8, args.module_agents))]
            for module in args.modules:
                _progress(args, f"loops: {module}")
                loop_rows += asyncio.run(run_loops(urls, module, args.loop_probes, args.loop_rounds,
                                                   args.loop_concurrency))
            served = fleet.stats()["served"]
    finally:
        fleet.stop()
    meta["idle_daemon"] = idles
    out = {"meta": meta, "fleet": [asdict(r) for r in fleet_rows], "modules": [asdict(r) for r in module_rows],
           "loops": [asdict(r) for r in loop_rows], "ratios": ratios(module_rows, loop_rows),
           "overhead": [asdict(r) for r in overhead_rows], "served": served}
    if before_root is not None:
        out["before"] = [asdict(r) for r in before_rows]
    return out


def ratios(module_rows: Sequence[DaemonRow], loop_rows: Sequence[LoopRow]) -> list[dict[str, Any]]:
    loops = {(r.module, r.loop): r.cpu_ms_per_probe for r in loop_rows}
    out = []
    for row in module_rows:
        bare, sdk, engine = (loops.get((row.module, k)) for k in ("bare", "sdk", "engine"))
        out.append({"module": row.module, "event_loop": row.event_loop, "daemon_cpu_ms": row.cpu_ms_per_probe,
                    "engine_cpu_ms": engine, "sdk_cpu_ms": sdk, "bare_cpu_ms": bare,
                    "daemon_vs_bare": _ratio(row.cpu_ms_per_probe, bare),
                    "daemon_vs_sdk": _ratio(row.cpu_ms_per_probe, sdk),
                    "engine_vs_bare": _ratio(engine, bare), "sdk_vs_bare": _ratio(sdk, bare)})
    return out


def _ratio(a: float | None, b: float | None) -> float | None:
    return round(a / b, 2) if a and b and not math.isnan(a) else None


def _progress(args: argparse.Namespace, text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


# ---- output ------------------------------------------------------------------------------------------------------

def _cell(v: Any, fmt: str = "{}") -> str:
    return "—" if v is None or (isinstance(v, float) and math.isnan(v)) else fmt.format(v)


def _pair(a: Any, b: Any, fmt: str) -> str:
    return f"{_cell(a, fmt)} / {_cell(b, fmt)}"


# The fleet table's columns after "agents" and "loop": (header, cell of one row). One list for the fleet table and the
# before -> after table, so the two always carry the same figures. Rows are JSON dicts: .get() keeps the JSON of an
# older benchmark run readable (--compare).
FLEET_COLUMNS: list[tuple[str, Callable[[dict[str, Any]], str]]] = [
    ("probes/s (expected)", lambda r: f"{r['probes_per_s']:g} ({r['expected_per_s']:g})"),
    ("daemon CPU (% of a core)", lambda r: f"{r['cpu_core_pct']:.1f} %"),
    ("CPU ms/probe", lambda r: _cell(r["cpu_ms_per_probe"], "{:.3f}")),
    ("RSS MiB (per 1,000 agents)", lambda r: f"{r['rss_mib']:.0f} ({r['rss_per_1000_mib']:.1f})"),
    ("RSS growth MiB/min", lambda r: f"{r['rss_growth_mib_per_min']:+.1f}"),
    ("series per agent (total)", lambda r: f"{_cell(r['series_per_agent'], '{:g}')} ({_cell(r['series'], '{:,}')})"),
    ("scrape s (MiB)", lambda r: f"{_cell(r['scrape_s'], '{:.2f}')} ({_cell(r['scrape_mib'], '{:.1f}')})"),
    ("overhead p50 / p99 ms", lambda r: _pair(r["overhead_p50_ms"], r["overhead_p99_ms"], "{:.2f}")),
    ("overhead net of the fleet's handling p50 / p99 ms",
     lambda r: _pair(r.get("overhead_net_p50_ms"), r.get("overhead_net_p99_ms"), "{:.2f}")),
    ("lateness p50 / p99 s", lambda r: _pair(r.get("lateness_p50_s"), r.get("lateness_p99_s"), "≤ {:g}")),
    ("slot wait p50 / p99 s (runs waiting > 1 ms)",
     lambda r: f"{_pair(r.get('slot_wait_p50_s'), r.get('slot_wait_p99_s'), '≤ {:g}')} "
               f"({_cell(r.get('slot_waited_pct'), '{:g} %')})"),
    ("GC pause p99 s (GC % of CPU)",
     lambda r: f"{_cell(r.get('gc_pause_p99_s'), '≤ {:g}')} ({_cell(r.get('gc_cpu_pct'), '{:g} %')})"),
    ("bookkeeping % of CPU (µs/probe)",
     lambda r: f"{_cell(r.get('bookkeeping_pct'), '{:g} %')} ({_cell(r.get('bookkeeping_us_per_probe'), '{:g}')})"),
    ("failed", lambda r: f"{r['failed']}"),
    ("failed around scrapes",
     lambda r: f"{r['during_scrapes'].get('failed', '—')} of {r['during_scrapes'].get('probes', '—')}"),
]


def fleet_table(rows: Sequence[dict[str, Any]]) -> list[str]:
    out = ["| agents (ping, interval) | loop | " + " | ".join(h for h, _ in FLEET_COLUMNS) + " |",
           "|---|---|" + "---|" * len(FLEET_COLUMNS)]
    for r in rows:
        out.append(f"| {r['agents']:,} ({r['interval_s']:g} s) | {r['event_loop']} | "
                   + " | ".join(cell(r) for _, cell in FLEET_COLUMNS) + " |")
    return out


def compare_table(before: Sequence[dict[str, Any]], after: Sequence[dict[str, Any]]) -> list[str]:
    """Before -> after, every fleet column, for the (size, interval, loop) both runs have."""
    old = {(r["agents"], r["interval_s"], r["event_loop"]): r for r in before}
    out = ["| agents (ping, interval) | loop | " + " | ".join(h for h, _ in FLEET_COLUMNS) + " |",
           "|---|---|" + "---|" * len(FLEET_COLUMNS)]
    for r in after:
        b = old.get((r["agents"], r["interval_s"], r["event_loop"]))
        if b is not None:
            out.append(f"| {r['agents']:,} ({r['interval_s']:g} s) | {r['event_loop']} | "
                       + " | ".join(f"{cell(b)} → {cell(r)}" for _, cell in FLEET_COLUMNS) + " |")
    return out


def compare_header(before: dict[str, Any], after: dict[str, Any]) -> str:
    return (f"**Before → after** (commit {before.get('commit') or '?'} → {after.get('commit') or '?'}, "
            f"{after.get('date', '')}, load {after.get('loadavg_at_start')} at start):")


def tables(result: dict[str, Any]) -> str:
    m = result["meta"]
    out = [f"Run {m['date']}, commit {m['commit']}, {m['cores']} x {m['cpu']} (load {m['loadavg_at_start']} at "
           f"start), Python {m['python']}; server-side delay {m['delay'] * 1e3:g} ms per RPC, loopback only. "
           "Idle daemon (no agents): " + ", ".join(f"{k} {v['cpu_core_pct']:g} % of a core, {v['rss_mib']:.0f} MiB"
                                                    for k, v in m.get("idle_daemon", {}).items()) + "."
           + ("" if m.get("fresh_connection") is None
              else f" The fleet runs' ping module sets fresh_connection: {str(m['fresh_connection']).lower()}."), ""]
    out += fleet_table(result["fleet"])
    if "before" in result:
        out += ["", f"**Before** (the same fleet runs against the daemon of commit {m.get('before_commit') or '?'}, "
                    f"{m.get('before_root')}, interleaved size by size):", ""]
        out += fleet_table(result["before"])
        out += ["", compare_header({"commit": m.get("before_commit")}, m), ""]
        out += compare_table(result["before"], result["fleet"])
    if result["ratios"]:
        out += ["", "| module | loop | daemon CPU ms/probe | engine loop | a2a-sdk loop | bare aiohttp loop | "
                    "daemon ÷ bare | daemon ÷ sdk | engine ÷ bare | sdk ÷ bare |",
                "|---|---|---|---|---|---|---|---|---|---|"]
    for r in result["ratios"]:
        out.append(f"| {r['module']} | {r['event_loop']} | {_cell(r['daemon_cpu_ms'], '{:.3f}')} | "
                   f"{_cell(r['engine_cpu_ms'], '{:.3f}')} | {_cell(r['sdk_cpu_ms'], '{:.3f}')} | "
                   f"{_cell(r['bare_cpu_ms'], '{:.3f}')} | {_cell(r['daemon_vs_bare'])} | "
                   f"{_cell(r['daemon_vs_sdk'])} | {_cell(r['engine_vs_bare'])} | {_cell(r['sdk_vs_bare'])} |")
    out += overhead_table(result)
    mods = result["modules"]
    if mods:
        out += ["", f"Module runs: {mods[0]['agents']} agents at {mods[0]['interval_s']:g} s, "
                    f"{mods[0]['window_s']:g} s window; overhead p50 / p99 ms: "
                + "; ".join(f"{r['module']} ({r['event_loop']}) {_cell(r['overhead_p50_ms'], '{:.2f}')} / "
                            f"{_cell(r['overhead_p99_ms'], '{:.2f}')}" for r in mods)]
    for label, rows in (("", result["fleet"]), (" (before)", result.get("before", []))):
        for r in rows:
            if r["fail_reasons"] or r["during_scrapes"].get("fail_reasons"):
                out.append(f"{r['agents']:,} agents{label}, failure reasons: in the window "
                           f"{r['fail_reasons'] or 'none'}; around the scrapes "
                           f"{r['during_scrapes'].get('fail_reasons') or 'none'}")
    for r in result["fleet"]:
        prof = r.get("profile")
        if prof and "own" in prof:
            out += ["", f"py-spy, {r['agents']:,} agents, {prof['seconds']:g} s with one scrape, "
                        f"{prof['samples']} samples. Top by own time:", "```", *prof["own"], "```",
                    "Top by total time (probe, scheduler, metrics, HTTP, logs, asyncio):", "```", *prof["total"], "```"]
        elif prof:
            out.append(f"profile: {prof.get('error')}")
    missing = [r["agents"] for r in result["fleet"] if r.get("lateness_p99_s") is None]
    if missing:
        out.append(f"Scheduler lateness: the daemon under test does not export `{LATENESS}` (runs {missing}).")
    return "\n".join(out)


def overhead_table(result: dict[str, Any]) -> list[str]:
    """The daemon's measurement overhead beside each client loop's own, at each fleet size's probe rate, against the
    same fleet and delay: as reported (latency - delay, with the fleet's own handling beyond the delay over each
    window in brackets) and net of the fleet (each call less the fleet's measured handling of it), p50 / p99 ms."""
    rows = result.get("overhead") or []
    if not rows:
        return []
    loops = list(dict.fromkeys(r["loop"] for r in rows))
    first = result["fleet"][0]["event_loop"] if result["fleet"] else None
    daemons = {r["agents"]: r for r in result["fleet"] if r["event_loop"] == first}
    out = ["", "Measurement overhead (the call's reported latency - the fleet's delay), p50 / p99 ms; in brackets the "
               "fleet's own handling beyond the delay over the same window; *net*: each call's latency less the "
               "fleet's own measured handling of that call (bench/fleet.py `net_of_fleet`):", "",
           "| agents (rate) | daemon | daemon net | " + " | ".join(f"{name} loop | {name} net" for name in loops)
           + " | daemon - bare_fresh | net: daemon - bare_fresh |",
           "|---|---|---|" + "---|" * (2 * len(loops) + 2)]

    def cell(r: dict[str, Any] | None) -> str:
        if r is None:
            return "—"
        return (f"{_pair(r['overhead_p50_ms'], r['overhead_p99_ms'], '{:.2f}')} "
                f"({_pair(r.get('server_extra_p50_ms'), r.get('server_extra_p99_ms'), '{:.2f}')})")

    def net(r: dict[str, Any] | None) -> str:
        return "—" if r is None else _pair(r.get("overhead_net_p50_ms"), r.get("overhead_net_p99_ms"), "{:.2f}")

    def diff(a: dict[str, Any], b: dict[str, Any] | None, key: str) -> str:
        if b is None:
            return "—"
        p50, p99 = (None if None in (a.get(f"{key}_p{q}_ms"), b.get(f"{key}_p{q}_ms"))
                    else _r(a[f"{key}_p{q}_ms"] - b[f"{key}_p{q}_ms"], 2) for q in (50, 99))
        return _pair(p50, p99, "{:+.2f}")

    for agents, d in daemons.items():
        mine = {r["loop"]: r for r in rows if r["agents"] == agents}
        if not mine:
            continue
        rate = next(iter(mine.values()))["rate_per_s"]
        floor = mine.get("bare_fresh")
        out.append(f"| {agents:,} ({rate:g}/s) | {cell(d)} | {net(d)} | "
                   + " | ".join(f"{cell(mine.get(n))} | {net(mine.get(n))}" for n in loops)
                   + f" | {diff(d, floor, 'overhead')} | {diff(d, floor, 'overhead_net')} |")
    out += ["", "Loops: " + "; ".join(f"`{n}` {OVERHEAD_LOOPS[n][1]}" for n in loops if n in OVERHEAD_LOOPS)
            + f". Each loop is paced at the fleet run's rate (an open loop, {OVERHEAD_AGENTS} agents at most), "
              "in two interleaved rounds."]
    return out


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--agents", default="1000", help="comma-separated fleet sizes on ping (default 1000)")
    ap.add_argument("--interval", type=float, default=60.0, help="ping interval of the fleet runs, s")
    ap.add_argument("--warmup", type=float, help="seconds before the window (default: one interval)")
    ap.add_argument("--window", type=float, help="measured seconds (default: two intervals)")
    ap.add_argument("--delay", type=float, default=0.005, help="server-side delay per RPC, s")
    ap.add_argument("--modules", default=",".join(MODULES), help="modules for the per-module runs and loops")
    ap.add_argument("--module-agents", type=int, default=200)
    ap.add_argument("--module-interval", type=float, default=5.0)
    ap.add_argument("--module-warmup", type=float, help="default: one module interval")
    ap.add_argument("--module-window", type=float, default=30.0)
    ap.add_argument("--loop-probes", type=int, default=600, help="timed probes per client loop and module")
    ap.add_argument("--loop-rounds", type=int, default=3)
    ap.add_argument("--loop-concurrency", type=int, default=8)
    ap.add_argument("--event-loop", default="asyncio", help="asyncio, uvloop or both (comma-separated)")
    ap.add_argument("--max-concurrency", type=int, help="the daemon's --max-concurrency (default: its own)")
    ap.add_argument("--overhead-window", type=float, default=30.0, metavar="SECONDS",
                    help="per fleet size, each client loop paced at that size's probe rate this long, for its own "
                         "measurement overhead beside the daemon's (0: skip)")
    ap.add_argument("--overhead-max-rate", type=float, default=200.0, metavar="PER_S",
                    help="fleet sizes whose probe rate is above this get no overhead run (the loops, one process, "
                         "the SDK's at ~4 ms CPU a probe, would not keep the rate)")
    ap.add_argument("--overhead-loops", default="engine,bare_fresh,bare,sdk",
                    help=f"the loops of the overhead run (of {', '.join(OVERHEAD_LOOPS)})")
    ap.add_argument("--fresh-connection", type=lambda v: {"true": True, "false": False}[v.lower()],
                    metavar="true|false", help="the fleet runs' ping module's fresh_connection (unset: the daemon's "
                    "default, a new connection for every ping call); false with --overhead-loops engine_pool,... "
                    "measures ping on the pool")
    ap.add_argument("--scrapes", type=int, default=3, help="/metrics scrapes after each fleet window")
    ap.add_argument("--profile", type=float, default=0.0, metavar="SECONDS",
                    help="after the largest fleet's window, sample the daemon with py-spy this long")
    ap.add_argument("--daemon-root", type=Path, default=ROOT,
                    help="measure the daemon of this checkout (default: this one), e.g. `git archive BRANCH` unpacked")
    ap.add_argument("--before", metavar="REV_OR_DIR",
                    help="also run every fleet size against an older daemon (a git revision of this repository, or "
                         "a directory holding its checkout), interleaved, and print the before -> after table")
    ap.add_argument("--compare", nargs=2, metavar=("BEFORE_JSON", "AFTER_JSON"),
                    help="run nothing: the before -> after table of two earlier --json results")
    ap.add_argument("--small", action="store_true", help="the CI configuration: a few seconds in all")
    ap.add_argument("--json", metavar="FILE", help="also write the results as JSON here ('-' for stdout only)")
    args = ap.parse_args(argv)
    if args.small:
        args.agents, args.interval, args.warmup, args.window = "50", 2.0, 1.5, 3.0
        args.module_agents, args.module_interval, args.module_warmup, args.module_window = 10, 1.0, 1.0, 2.0
        args.loop_probes, args.loop_rounds, args.scrapes = 24, 2, 1
        args.overhead_window = 2.0
    args.agents = [int(a) for a in str(args.agents).split(",") if a]
    args.modules = [m for m in args.modules.split(",") if m]
    args.event_loop = [e for e in args.event_loop.split(",") if e]
    args.overhead_loops = [name for name in args.overhead_loops.split(",") if name]
    args.warmup = args.interval if args.warmup is None else args.warmup
    args.window = 2 * args.interval if args.window is None else args.window
    args.module_warmup = args.module_interval if args.module_warmup is None else args.module_warmup
    bad = [m for m in args.modules if m not in MODULES] + [e for e in args.event_loop if e not in ("asyncio", "uvloop")]
    bad += [name for name in args.overhead_loops if name not in OVERHEAD_LOOPS]
    if bad or not args.agents or min(args.agents) < 1 or args.module_agents < 1:
        ap.error(f"bad --modules/--event-loop/--agents: {bad or args.agents}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.compare:
        before, after = (json.loads(Path(p).read_text()) for p in args.compare)
        print("\n".join([compare_header(before["meta"], after["meta"]), "",
                         *compare_table(before["fleet"], after["fleet"])]))
        return 0
    result = run(args)
    if args.json == "-":
        print(json.dumps(result, indent=2))
        return 0
    print(tables(result))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
