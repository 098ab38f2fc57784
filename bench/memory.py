#!/usr/bin/env python
"""Where the daemon's bytes per agent go: the real daemon in this process, N agents of the loopback fleet on ping.

    python bench/memory.py --agents 5000                  # RSS per stage, sizes of the kept structures
    python bench/memory.py --agents 2000 --trace          # and tracemalloc: what holds the bytes, by file and line

The daemon is built as `a2a-probe run` builds it (config file, Daemon, start: web server, scheduler, GC tuning),
then the scheduler is paused and the benchmark drives every job through the runner's own scheduled-run path
(`Runner.scheduled`: slots, card cache, recording in metrics, history and the log), `--passes` times over the
fleet, so every agent's lasting state exists as in a daemon that has run for hours: the card cached (pass 1 a
miss, pass 2 a hit within max-age), the history ring and its two kept parts, every series. RSS (VmRSS) is read
after each stage; per agent is the growth from the daemon with no jobs run, divided by N. The structures' sizes
are walked over their referents (`gc.get_referents`), each object counted once, in the order listed (a value
shared by two structures is the first one's). Log lines go to /dev/null (the daemon's batched writer, as in
production); the fleet is bench/fleet_agents.py in its own process.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import gc
import json
import os
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from types import FunctionType, ModuleType
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.fleet import PROMETHEUS_ACCEPT as OPENMETRICS  # noqa: E402
from bench.fleet import FleetProc, agent_names, fleet_config  # noqa: E402


def rss_mib() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def malloc_trim() -> None:
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


_SKIP = (type, ModuleType, FunctionType)


def deep_size(roots: Iterable[Any], seen: set[int]) -> tuple[int, int]:
    """Bytes and objects reachable from `roots` not in `seen` (classes, modules and functions not followed)."""
    total = count = 0
    stack = list(roots)
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, _SKIP):
            continue
        seen.add(id(obj))
        total += sys.getsizeof(obj)
        count += 1
        stack.extend(gc.get_referents(obj))
    return total, count


def structures(d: Any) -> list[tuple[str, Callable[[], list[Any]]]]:
    """The daemon's per-agent state, by owner (see the module's doc for how shared values are counted)."""
    from probe import config as cfg
    from probe import history, logs, redact
    from probe.checks import card, catalogue, grading, urls
    from probe.wire import http, schema

    return [
        ("config: Agent models", lambda: [d.config]),
        ("scheduler: jobs, heap", lambda: [d.scheduler.jobs, d.scheduler._entries, d.scheduler._heap]),
        ("history: rings + kept parts", lambda: [d.history._jobs]),
        ("history: shared check JSON", lambda: [history._fragments]),
        ("card cache entries", lambda: [d.runner.cards.entries]),
        ("card validation cache", lambda: [card._CACHE, card._INTERNED]),
        ("shared checks (redact, catalogue, grading)", lambda: [redact._shared, catalogue._SHARED,
                                                                 grading._GRADED]),
        ("Target memo", lambda: [cfg._TARGETS]),
        ("URL caches", lambda: [http._CHECKED, redact.url, urls.diagnose, http.origin]),
        ("schema skeletons", lambda: [schema._PASSED]),
        ("log verdicts", lambda: [logs._verdicts]),
        ("metrics (series text, tables)", lambda: [d.metrics]),
    ]


async def _worker(d: Any, queue: Iterator[tuple[Any, str, Any]]) -> None:
    for agent, module_name, module in queue:
        await d.runner.scheduled(agent, module_name, module)


async def drive(d: Any, passes: int, concurrency: int, progress: Callable[[str], None]) -> list[float]:
    """Every job `passes` times through Runner.scheduled; the CPU seconds of each pass."""
    jobs = list(d.scheduler.jobs.values())
    cpu = []
    for k in range(passes):
        t0 = time.process_time()
        queue = iter(jobs)
        await asyncio.gather(*(_worker(d, queue) for _ in range(concurrency)))
        cpu.append(time.process_time() - t0)
        progress(f"pass {k + 1}: {len(jobs)} runs, {cpu[-1]:.1f} s CPU, RSS {rss_mib():.1f} MiB")
    return cpu


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    from probe import config as cfg
    from probe import logs
    from probe.daemon import Daemon

    def progress(text: str) -> None:
        print(f"[memory] {text}", file=sys.stderr, flush=True)

    stages: dict[str, float] = {"imports": rss_mib()}
    fleet = FleetProc(args.delay)
    null = open(os.devnull, "w")  # noqa: SIM115, ASYNC230  (closed below; opening /dev/null does not block)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            spec = fleet_config(fleet, agent_names(args.agents), "ping", args.interval)
            path = Path(tmp) / "fleet.yaml"
            path.write_text(yaml.safe_dump(spec, sort_keys=False))
            logs.configure("info", "json", stream=null)  # the daemon's lines, discarded
            config, sha = cfg.load(path)
            stages["config loaded"] = rss_mib()
            d = Daemon(cfg.Settings(listen_address="127.0.0.1:0"), config, sha, path)
            await d.start()
            d.scheduler.pause()  # the benchmark drives the runs (below); the scheduler's own state stays
            gc.collect()
            stages["daemon started (no run)"] = base = rss_mib()
            if args.trace:
                tracemalloc.start(args.trace_frames)
                before = tracemalloc.take_snapshot()
            cpu = await drive(d, args.passes, args.concurrency, progress)
            gc.collect()
            stages[f"after {args.passes} passes"] = rss_mib()
            after = rss_mib()
            for _ in range(args.scrapes):  # as Prometheus asks: OpenMetrics, gzip (the render's own thread)
                await d.metrics.render(OPENMETRICS, "gzip")
            gc.collect()
            if args.scrapes:
                stages[f"after {args.scrapes} scrapes"] = rss_mib()
            malloc_trim()
            stages["after malloc_trim"] = rss_mib()
            result: dict[str, Any] = {
                "agents": args.agents, "passes": args.passes, "cpu_s_per_pass": [round(c, 2) for c in cpu],
                "cpu_ms_per_probe_last_pass": round(1000 * cpu[-1] / args.agents, 3),
                "rss_mib": {k: round(v, 1) for k, v in stages.items()},
                "rss_kb_per_agent": round((after - base) * 1024 / args.agents, 2),
                "rss_kb_per_agent_with_config": round((after - stages["imports"]) * 1024 / args.agents, 2),
            }
            if args.trace:
                snap = tracemalloc.take_snapshot()
                tracemalloc.stop()
                keep = [tracemalloc.Filter(False, p) for p in ("*/tracemalloc.py", "*/linecache.py")]
                stats = snap.filter_traces(keep).compare_to(before.filter_traces(keep), "filename")
                result["trace_by_file"] = [(str(s.traceback[0].filename).replace(str(ROOT) + "/", ""),
                                            round(s.size_diff / args.agents), round(s.count_diff / args.agents, 1))
                                           for s in stats[:args.top]]
                stats = snap.filter_traces(keep).compare_to(before.filter_traces(keep), "lineno")
                result["trace_by_line"] = [(str(s.traceback[0]).replace(str(ROOT) + "/", ""),
                                            round(s.size_diff / args.agents), round(s.count_diff / args.agents, 1))
                                           for s in stats[:args.top]]
            seen: set[int] = set()
            sizes = {}
            for name, roots in structures(d):
                size, objs = deep_size(roots(), seen)
                sizes[name] = {"bytes_per_agent": round(size / args.agents), "objects_per_agent":
                               round(objs / args.agents, 1)}
            result["structures"] = sizes
            await d.stop()
    finally:
        fleet.stop()
        null.close()
    return result


def report(result: dict[str, Any]) -> str:
    out = [f"agents {result['agents']}, passes {result['passes']}, CPU s a pass {result['cpu_s_per_pass']} "
           f"({result['cpu_ms_per_probe_last_pass']} ms a probe in the last)", "",
           "| stage | RSS MiB |", "| --- | --- |"]
    out += [f"| {k} | {v} |" for k, v in result["rss_mib"].items()]
    out += ["", f"RSS growth per agent: {result['rss_kb_per_agent']} KiB from the started daemon, "
            f"{result['rss_kb_per_agent_with_config']} KiB with the config's", "",
            "| structure | bytes per agent | objects per agent |", "| --- | --- | --- |"]
    out += [f"| {k} | {v['bytes_per_agent']} | {v['objects_per_agent']} |" for k, v in result["structures"].items()]
    for key, title in (("trace_by_file", "file"), ("trace_by_line", "line")):
        if key in result:
            out += ["", f"| allocated by {title} | bytes per agent | blocks per agent |", "| --- | --- | --- |"]
            out += [f"| {where} | {size} | {count} |" for where, size, count in result[key]]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--agents", type=int, default=5000)
    ap.add_argument("--passes", type=int, default=2, help="runs of every job (2: the card cached and reused)")
    ap.add_argument("--interval", type=float, default=300.0, help="the module's interval (its timeout: 10 s)")
    ap.add_argument("--delay", type=float, default=0.0, help="the fleet's server-side delay per RPC, s")
    ap.add_argument("--concurrency", type=int, default=32, help="runs under way at once")
    ap.add_argument("--scrapes", type=int, default=3, help="/metrics renders after the passes (RSS after them)")
    ap.add_argument("--trace", action="store_true", help="tracemalloc over the passes (slower)")
    ap.add_argument("--trace-frames", type=int, default=1)
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    result = asyncio.run(measure(args))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    print(report(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
