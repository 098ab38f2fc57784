#!/usr/bin/env python
"""The soak: the real daemon (its own process) against a mixed loopback fleet - healthy, failing and hostile
agents - on an accelerated schedule, sampled from the outside for memory, file descriptors, sockets and asyncio
tasks, with the metrics checked to add up against the daemon's own probe_finished log events.

    python bench/soak.py --duration 1800 --markdown          # the long run, by hand (docs/reliability.md)
    python bench/soak.py --duration 25 --json out.json       # what tests/hostile/test_soak.py runs in CI

Everything is measured in this run: RSS and open fds from /proc/<pid>, sockets from /proc/<pid>/fd, asyncio tasks
from the daemon's a2a_probe_asyncio_tasks gauge, runs and failures from /metrics, verdicts from the JSON log.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import statistics
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiohttp
import yaml
from prometheus_client.parser import text_string_to_metric_families

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.agents.catalogue import GATEWAY_PREFIX, run_agent
from tests.hostile import servers
from tests.hostile.echo import echo_agent
from tests.peers.harness import free_port


@dataclass
class Sample:
    t: float
    rss_mib: float
    fds: int
    sockets: int
    tasks: float | None
    runs: float
    loop_lag_p99_s: float | None = None  # the daemon's own event-loop lag (a2a_probe_event_loop_lag_p99_seconds)


@dataclass
class SoakReport:
    date: str
    duration_s: float
    agents: int
    cycles: int
    cycles_per_second: float
    samples: list[Sample] = field(default_factory=list)
    rss_growth_mib: float = 0.0  # last quarter's median minus the second quarter's (after warm-up)
    fds_growth: int = 0
    sockets_growth: int = 0
    tasks_growth: float = 0.0
    mismatches: list[str] = field(default_factory=list)  # metrics that do not add up
    verdicts: dict[str, dict[str, int]] = field(default_factory=dict)
    healthy_failures: int = 0

    def markdown(self) -> str:
        warm = self.samples[len(self.samples) // 4:]
        lines = [f"Soak of {self.duration_s:.0f} s on {self.date}: {self.agents} agents, {self.cycles} probe cycles "
                 f"({self.cycles_per_second:.1f}/s).", "",
                 "| measure | after warm-up | at the end | growth |", "|---|---|---|---|"]
        for name, unit in (("rss_mib", "MiB"), ("fds", ""), ("sockets", ""), ("tasks", "")):
            first, last = getattr(warm[0], name), getattr(self.samples[-1], name)
            grow = {"rss_mib": self.rss_growth_mib, "fds": self.fds_growth, "sockets": self.sockets_growth,
                    "tasks": self.tasks_growth}[name]
            lines.append(f"| {name} | {first} {unit} | {last} {unit} | {grow:+.1f} (median, last vs second "
                         "quarter) |")
        lags = [x.loop_lag_p99_s for x in warm if x.loop_lag_p99_s is not None]
        if lags:
            lines += ["", f"Event-loop lag p99 per second: median {statistics.median(lags) * 1000:.1f} ms, "
                          f"max {max(lags) * 1000:.1f} ms."]
        lines += ["", f"Metrics that do not add up: {len(self.mismatches)}; failures of healthy agents: "
                  f"{self.healthy_failures}."]
        return "\n".join(lines)


def _proc(pid: int) -> tuple[float, int, int]:
    rss = 0.0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1]) / 1024
    fds = sockets = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        fds += 1
        with contextlib.suppress(OSError):
            sockets += os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:")
    return round(rss, 1), fds, sockets


def _families(text: str) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            out.setdefault(s.name, []).append(s)
    return out


HOSTILE = ("flood", "bad-status", "reset", "trickle", "echo")


async def _serve_hostile() -> None:
    """The hostile agents, in their own process (a flood generator must not starve the healthy agents it is
    compared with): prints their origins as one JSON line, then serves until killed."""
    async with contextlib.AsyncExitStack() as stack:
        origins: dict[str, str] = {"echo": await stack.enter_async_context(echo_agent())}
        for name, behaviour in (
                ("flood", servers.Hostile(rpc=servers.flood)),
                ("bad-status", servers.Hostile(rpc=servers.raw(b"HTTP/1.1 abc OK\r\nContent-Length: 2\r\n\r\n{}"))),
                ("reset", servers.Hostile(rpc=servers.stream_then_reset)),
                ("trickle", servers.Hostile(card=servers.trickle))):
            h = await stack.enter_async_context(servers.hostile_agent(behaviour))
            origins[name] = h.origin
        print(json.dumps(origins), flush=True)
        await asyncio.Event().wait()


@contextlib.asynccontextmanager
async def fleet() -> AsyncIterator[tuple[list[dict[str, Any]], set[str]]]:
    """The mixed fleet and its config entries; yields (agents, names of the healthy ones)."""
    proc = await asyncio.create_subprocess_exec(sys.executable, __file__, "--serve-hostile",
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
    try:
        assert proc.stdout is not None
        hostile = json.loads(await asyncio.wait_for(proc.stdout.readline(), 60))
        async with contextlib.AsyncExitStack() as stack:
            agents: list[dict[str, Any]] = []
            healthy: set[str] = set()
            for i in range(3):
                a = await stack.enter_async_context(run_agent("healthy"))
                agents.append({"name": f"healthy-{i}", "url": a.origin, "modules": ["fast-ping", "fast-stream"]})
                healthy.add(f"healthy-{i}")
            bad = await stack.enter_async_context(run_agent("doubled_prefix"))
            agents.append({"name": "doubled-prefix", "url": f"{bad.origin}{GATEWAY_PREFIX}",
                           "modules": ["fast-ping"]})
            agents.append({"name": "refused", "url": f"http://127.0.0.1:{free_port()}", "modules": ["fast-ping"]})
            for name in HOSTILE:
                modules = ["fast-ping", "fast-stream"] if name == "echo" else ["fast-stream"]
                agents.append({"name": name, "url": hostile[name], "modules": modules})
            yield agents, healthy
    finally:
        proc.kill()
        await proc.wait()


async def soak(duration: float, interval: float = 0.5, sample_every: float = 1.0,
               workdir: Path | None = None) -> SoakReport:
    workdir = workdir or Path(os.environ.get("TMPDIR", "/tmp")) / f"a2a-soak-{os.getpid()}"
    workdir.mkdir(parents=True, exist_ok=True)
    async with fleet() as (agents, healthy):
        cfg = workdir / "soak.yaml"
        cfg.write_text(yaml.safe_dump({"agents": agents, "modules": {
            "fast-ping": {"prober": "ping", "interval": f"{interval}s", "timeout": f"{interval}s", "jitter": 0},
            "fast-stream": {"prober": "stream", "interval": f"{interval * 2}s", "timeout": f"{interval * 2}s",
                            "jitter": 0, "max_stream_events": 2000}}}))
        port = free_port()
        log_path = workdir / "daemon.log"
        with log_path.open("wb") as log:
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "probe", "run", "--config", str(cfg), "--listen-address", f"127.0.0.1:{port}",
                "--log-format", "json", "--log-level", "info", stdout=log, stderr=log)
            try:
                report = await _observe(proc.pid, f"http://127.0.0.1:{port}", duration, sample_every, len(agents))
            finally:
                proc.send_signal(signal.SIGTERM)
                await asyncio.wait_for(proc.wait(), 30)
        _check_sums(report, log_path, healthy)
    return report


async def _observe(pid: int, base: str, duration: float, every: float, n_agents: int) -> SoakReport:
    report = SoakReport(date=datetime.now(UTC).isoformat(timespec="seconds"), duration_s=duration,
                        agents=n_agents, cycles=0, cycles_per_second=0.0)
    async with aiohttp.ClientSession() as s:
        end = time.monotonic() + duration
        for _ in range(100):  # the daemon starts
            with contextlib.suppress(aiohttp.ClientError):
                async with s.get(f"{base}/healthz") as r:
                    if r.status == 200:
                        break
            await asyncio.sleep(0.1)
        t0 = time.monotonic()
        while time.monotonic() < end:
            await asyncio.sleep(every)
            async with s.get(f"{base}/metrics") as r:
                fam = _families(await r.text())
            rss, fds, sockets = _proc(pid)
            tasks = fam.get("a2a_probe_asyncio_tasks", [None])[0]
            runs = sum(x.value for x in fam.get("a2a_probe_runs_total", []))
            lag = fam.get("a2a_probe_event_loop_lag_p99_seconds", [None])[0]
            report.samples.append(Sample(round(time.monotonic() - t0, 1), rss, fds, sockets,
                                         tasks.value if tasks is not None else None, runs,
                                         round(lag.value, 4) if lag is not None else None))
        t_req = time.time()
        async with s.get(f"{base}/metrics") as r:
            report_final = _families(await r.text())
        t_resp = time.time()
    report._final = (report_final, t_req, t_resp)  # type: ignore[attr-defined]
    report.cycles = int(sum(x.value for x in report_final.get("a2a_probe_runs_total", [])))
    report.cycles_per_second = report.cycles / max(duration, 1e-9)
    _growth(report)
    return report


def _growth(report: SoakReport) -> None:
    n = len(report.samples)
    if n < 8:
        return
    second, last = report.samples[n // 4: n // 2], report.samples[3 * n // 4:]

    def med(xs: list[Sample], name: str) -> float:
        values = [getattr(x, name) for x in xs if getattr(x, name) is not None]
        return statistics.median(values) if values else 0.0

    report.rss_growth_mib = round(med(last, "rss_mib") - med(second, "rss_mib"), 1)
    report.fds_growth = int(med(last, "fds") - med(second, "fds"))
    report.sockets_growth = int(med(last, "sockets") - med(second, "sockets"))
    report.tasks_growth = med(last, "tasks") - med(second, "tasks")


def _check_sums(report: SoakReport, log_path: Path, healthy: set[str]) -> None:
    """runs = successes + failures per agent and module: /metrics against the daemon's own log events."""
    final, t_req, t_resp = report._final  # type: ignore[attr-defined]
    before: Counter[tuple[str, str, str]] = Counter()  # (agent, module, verdict) logged before the last scrape
    maybe: Counter[tuple[str, str, str]] = Counter()  # logged while it was being answered
    for line in log_path.read_text(errors="replace").splitlines():
        try:
            ev = json.loads(line)
        except ValueError:
            continue
        if ev.get("event") != "probe_finished":
            continue
        ts = datetime.fromisoformat(ev["timestamp"].replace("Z", "+00:00")).timestamp()
        key = (ev["agent"], ev["module"], ev["verdict"])
        if ts < t_req:
            before[key] += 1
        elif ts <= t_resp:
            maybe[key] += 1
        if ev["agent"] in healthy and ev["verdict"] == "fail":
            report.healthy_failures += 1
    runs = {(x.labels["agent"], x.labels["module"]): x.value for x in final.get("a2a_probe_runs_total", [])}
    fails: Counter[tuple[str, str]] = Counter()
    for x in final.get("a2a_probe_failures_total", []):
        fails[(x.labels["agent"], x.labels["module"])] += int(x.value)
    for (agent, module), n in sorted(runs.items()):
        ok, bad = before[(agent, module, "pass")], before[(agent, module, "fail")]
        slack_ok, slack_bad = maybe[(agent, module, "pass")], maybe[(agent, module, "fail")]
        report.verdicts[f"{agent}/{module}"] = {"runs": int(n), "pass": ok, "fail": bad,
                                                "failures_total": fails[(agent, module)]}
        if not ok + bad <= n <= ok + bad + slack_ok + slack_bad:
            report.mismatches.append(f"{agent}/{module}: runs_total {n:g}, logged {ok} pass + {bad} fail")
        if not bad <= fails[(agent, module)] <= bad + slack_bad:
            report.mismatches.append(f"{agent}/{module}: failures_total {fails[(agent, module)]}, logged {bad} fail")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--duration", type=float, default=60.0, help="seconds of probing")
    p.add_argument("--interval", type=float, default=0.5, help="fast-ping interval (fast-stream: twice that)")
    p.add_argument("--json", metavar="FILE", help="write the full report (with every sample) here")
    p.add_argument("--markdown", action="store_true", help="print the summary table for docs/reliability.md")
    p.add_argument("--serve-hostile", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.serve_hostile:
        asyncio.run(_serve_hostile())
        return
    report = asyncio.run(soak(args.duration, args.interval))
    if args.json:
        Path(args.json).write_text(json.dumps(asdict(report), indent=2))
    print(report.markdown() if args.markdown else json.dumps({k: v for k, v in asdict(report).items()
                                                              if k != "samples"}, indent=2))


if __name__ == "__main__":
    main()
