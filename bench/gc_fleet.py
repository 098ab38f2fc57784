#!/usr/bin/env python
"""The garbage collector's share of an overloaded daemon, before -> after, interleaved.

A small loopback fleet (bench/fleet_agents.py, its own process) probed on ping at an interval short enough that the
schedule needs more CPU than the daemon gets, so runs queue for slots as at 50,000 agents on 60 s (docs/performance.md,
"The fourth targets run"; the hour-long run's starved first attempt). Each round runs the daemon of every tree once,
in its own process, in the same order, so drift on a shared machine hits all of them alike.

Per daemon it reports, over the window after the warm-up: CPU seconds (process clock) per finished probe, the
collector's own CPU (thread clock between each collection's gc.callbacks "start" and "stop") as a share of the
daemon's CPU, per generation (collections, CPU, pause wall time); and at the window's end what the collector still
walks: the objects tracked per generation, the frozen count, and the types most numerous in the oldest generation.
At the window's end too: how many frozen objects had become garbage that only a collection can free (a leak a
freeze would cause): gc.collect(), gc.unfreeze(), then what gc.collect() finds.

    python bench/gc_fleet.py --agents 2000 --interval 5 --max-concurrency 48 --warmup 20 --window 45 --before main
    python bench/gc_fleet.py --backlog --agents 2000 --interval 2 --max-concurrency 48 --hold 0.3 --before main

`--backlog` measures the waiting runs alone (in-process, no HTTP): a probe that holds its slot, fewer slots than the
schedule needs, CPU and GC per due run (started, or skipped as overloaded).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _unpack(rev: str, into: Path) -> Path:
    """A git revision of this repository as a directory (git archive), or a directory as it is."""
    if Path(rev).is_dir():
        return Path(rev).resolve()
    out = into / f"tree-{rev.replace('/', '_')}"
    out.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(out)], input=archive, check=True)
    return out


def _metric_sum(text: str, name: str) -> float:
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith(name + "{"))


async def _child(args: argparse.Namespace) -> dict[str, Any]:
    import aiohttp
    import yaml

    from probe.config import Settings, load
    from probe.daemon import Daemon

    timeout = min(10.0, args.interval)
    doc = {"modules": {"bench-ping": {"prober": "ping", "interval": f"{args.interval:g}s", "timeout": f"{timeout:g}s"}},
           "agents": [{"name": f"agent-{i:05d}", "url": f"{args.origin}/a/agent-{i:05d}", "modules": ["bench-ping"]}
                      for i in range(args.agents)]}
    path = Path(args.workdir) / "fleet.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    config, sha = load(path)
    if args.gc_threshold:  # a variant of the collector's thresholds: tune_gc reads the module's constant when it runs
        import probe.selfmon

        g0, g1, g2 = (int(x) for x in args.gc_threshold[0].split(","))
        probe.selfmon.GC_THRESHOLD = (g0, g1, g2)
    d = Daemon(Settings(config_file=path, listen_address="127.0.0.1:0", log_level="warning",
                          max_concurrency=args.max_concurrency), config, sha, path)
    gens: dict[int, dict[str, float]] = {g: {"n": 0, "cpu": 0.0, "wall": 0.0, "collected": 0} for g in range(3)}
    on = [False]
    t0 = [0.0, 0.0]

    def gc_cb(phase: str, info: dict[str, Any]) -> None:
        if not on[0]:
            return
        if phase == "start":
            t0[0], t0[1] = time.thread_time(), time.perf_counter()
            return
        g = gens[int(info["generation"])]
        g["n"] += 1
        g["cpu"] += time.thread_time() - t0[0]
        g["wall"] += time.perf_counter() - t0[1]
        g["collected"] += int(info.get("collected", 0))

    gc.callbacks.append(gc_cb)
    await d.start()
    url = f"http://{d.bound[0]}/metrics"
    trajectory: list[dict[str, float]] = []  # every 5 s: the open slots (the lag governor's), the loop's lag, CPU

    async def watch() -> None:
        slots = d.runner.slots
        cpu, t = time.process_time(), time.monotonic()
        while True:
            await asyncio.sleep(5.0)
            lags = sorted(list(d.selfmon._lag)[-100:]) or [0.0]
            now_cpu, now = time.process_time(), time.monotonic()
            trajectory.append({"t": round(now - started, 1), "open": getattr(slots, "open", slots.limit),
                               "used": slots.used, "waiting": slots.waiting,
                               "lag_p50_ms": round(1e3 * lags[len(lags) // 2], 2),
                               "cpu_pct": round(100 * (now_cpu - cpu) / (now - t), 1)})
            cpu, t = now_cpu, now

    started = time.monotonic()
    watcher = asyncio.create_task(watch())
    try:
        async with aiohttp.ClientSession() as s:
            await asyncio.sleep(args.warmup)
            async with s.get(url) as r:
                before = await r.text()
            on[0] = True
            cpu0, wall0 = time.process_time(), time.monotonic()
            stats0 = gc.get_stats()
            await asyncio.sleep(args.window)
            cpu, wall = time.process_time() - cpu0, time.monotonic() - wall0
            on[0] = False
            stats1 = gc.get_stats()
            census = {f"gen{g}": len(gc.get_objects(g)) for g in range(3)}
            census["frozen"] = gc.get_freeze_count()
            t_full = time.thread_time()
            gc.collect()  # what one full collection costs now: the objects not frozen are what it walks
            full_ms = 1000 * (time.thread_time() - t_full)
            old = Counter(type(o).__name__ for o in gc.get_objects(2))
            waiting = d.runner.slots.waiting
            tasks = len(asyncio.all_tasks())
            async with s.get(url) as r:
                after = await r.text()
            gc.collect()
            gc.unfreeze()  # what was frozen and has become cyclic garbage: only a collection frees it (a leak)
            gc.set_debug(gc.DEBUG_SAVEALL)
            leaked = gc.collect()
            gc.set_debug(0)
            leaked_types = Counter(type(o).__name__ for o in gc.garbage).most_common(args.types)
            gc.garbage.clear()
    finally:
        watcher.cancel()
        await d.stop()
        gc.callbacks.remove(gc_cb)
    runs = _metric_sum(after, "a2a_probe_runs_total") - _metric_sum(before, "a2a_probe_runs_total")
    missed = (_metric_sum(after, "a2a_probe_scheduler_missed_runs_total")
              - _metric_sum(before, "a2a_probe_scheduler_missed_runs_total"))
    causes = {}
    for line in after.splitlines():
        if line.startswith("a2a_probe_scheduler_missed_runs_total{"):
            cause = re.search(r'cause="([a-z]+)"', line)
            if cause:
                causes[cause.group(1)] = causes.get(cause.group(1), 0.0) + float(line.rsplit(" ", 1)[1])
    gc_cpu = sum(g["cpu"] for g in gens.values())
    return {
        "probe": sys.modules["probe"].__file__, "agents": args.agents, "interval": args.interval,
        "window_s": round(wall, 1), "cpu_s": round(cpu, 2), "cpu_pct_core": round(100 * cpu / wall, 1),
        "probes": runs, "probes_per_s": round(runs / wall, 1), "missed": missed, "missed_by_cause_total": causes,
        "cpu_ms_per_probe": round(1000 * cpu / max(runs, 1), 3),
        "gc_pct_cpu": round(100 * gc_cpu / cpu, 1) if cpu else None,
        "gc": {g: {k: round(v, 3) for k, v in s.items()} for g, s in gens.items()},
        "gc_stats_delta": [{k: s1[k] - s0[k] for k in s1} for s0, s1 in zip(stats0, stats1, strict=True)],
        "tracked_at_end": census, "full_collection_ms_at_end": round(full_ms, 1),
        "waiting_at_end": waiting, "tasks_at_end": tasks,
        "gen2_types": old.most_common(args.types),
        "frozen_garbage_at_end": leaked, "frozen_garbage_types": leaked_types, "trajectory": trajectory,
    }


async def _backlog_child(args: argparse.Namespace) -> dict[str, Any]:
    """The waiting runs alone, in-process: the daemon's scheduler, runner and self-monitor wired as probe/daemon.py
    wires them, a probe that holds its slot `--hold` seconds (no HTTP), `--max-concurrency` slots and a schedule
    that needs more: the backlog's own CPU and GC per due run (started or skipped as overloaded)."""
    import inspect

    import probe.runner as runner_mod
    from probe.config import Agent, Module, ProbeConfig, Prober
    from probe.history import History
    from probe.metrics import Metrics
    from probe.results import ProbeResult
    from probe.runner import Runner
    from probe.scheduler import ProbeScheduler
    from probe.selfmon import SelfMonitor, tune_gc
    from probe.wire.http import HttpClient

    counts = {"started": 0, "recorded": 0}
    passed = ProbeResult(agent="agent", target_url="http://127.0.0.1:9/", success=True)

    async def holding_probe(target: Any, client: Any, **_: Any) -> ProbeResult:
        counts["started"] += 1
        await asyncio.sleep(args.hold)
        return passed

    def count_record(self: Any, module_name: str, result: ProbeResult) -> None:
        counts["recorded"] += 1  # an overloaded run is counted by metrics.missed either way (record's first branch)
        if result.reason is not None and result.reason.value == "probe_overloaded":
            self.metrics.missed(result.agent, module_name, "overloaded")

    runner_mod.run_interfaces = holding_probe  # type: ignore[assignment]
    Runner.record = count_record  # type: ignore[method-assign]
    module = Module(prober=Prober.PING, interval=args.interval, timeout=min(10.0, args.interval))
    agents = [Agent(name=f"agent-{i:05d}", url=f"http://127.0.0.1:9/a/{i}", modules=["m"]) for i in range(args.agents)]
    config = ProbeConfig(modules={"m": module}, agents=agents)
    metrics = Metrics([0.1, 1.0, 10.0], [])
    for a in agents:
        metrics.add_job(a.name, "m", module.interval, module.timeout)
    client = HttpClient()
    runner = Runner(client, metrics, History(10), args.max_concurrency or 48)
    gated = {"gate": runner} if "gate" in inspect.signature(ProbeScheduler).parameters else {}
    scheduler = ProbeScheduler(runner.scheduled, metrics.missed, first_pass_rate=0, **gated)
    selfmon = SelfMonitor(metrics)
    selfmon.start()
    gc_cpu = [0.0, 0.0]

    def gc_cb(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            gc_cpu[1] = time.thread_time()
        else:
            gc_cpu[0] += time.thread_time() - gc_cpu[1]

    scheduler.sync(config)
    scheduler.start()
    tune_gc()
    await asyncio.sleep(args.warmup)

    def missed() -> float:
        return sum(s.value for fam in metrics.registry.collect() if fam.name == "a2a_probe_scheduler_missed_runs"
                   for s in fam.samples if s.name.endswith("_total"))

    gc.callbacks.append(gc_cb)
    s0, m0, c0, t0 = counts["started"], missed(), time.process_time(), time.monotonic()
    await asyncio.sleep(args.window)
    s1, m1, c1, t1 = counts["started"], missed(), time.process_time(), time.monotonic()
    gc.callbacks.remove(gc_cb)
    tasks, waiting = len(asyncio.all_tasks()), runner.slots.waiting
    tracked = len(gc.get_objects())
    scheduler.pause()
    scheduler.shutdown()
    await selfmon.stop()
    await client.close()
    due = (s1 - s0) + (m1 - m0)
    cpu = c1 - c0
    return {"probe": sys.modules["probe"].__file__, "started_per_s": round((s1 - s0) / (t1 - t0), 1),
            "skipped_per_s": round((m1 - m0) / (t1 - t0), 1), "cpu_pct_core": round(100 * cpu / (t1 - t0), 1),
            "cpu_us_per_due_run": round(1e6 * cpu / due, 1) if due else None,
            "gc_pct_cpu": round(100 * gc_cpu[0] / cpu, 1) if cpu else None,
            "gc_us_per_due_run": round(1e6 * gc_cpu[0] / due, 1) if due else None,
            "waiting_at_end": waiting, "tasks_at_end": tasks, "tracked_at_end": tracked}


def _run_child(root: Path, origin: str, args: argparse.Namespace, workdir: Path, gc_threshold: str | None = None,
               ) -> dict[str, Any]:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", "--origin", origin, "--workdir", str(workdir),
           "--agents", str(args.agents), "--interval", str(args.interval), "--warmup", str(args.warmup),
           "--window", str(args.window), "--types", str(args.types)]
    if args.max_concurrency:
        cmd += ["--max-concurrency", str(args.max_concurrency)]
    if args.backlog:
        cmd += ["--backlog", "--hold", str(args.hold)]
    if gc_threshold:
        cmd += ["--gc-threshold", gc_threshold]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=root,
                         env={**_env(), "PYTHONPATH": str(root)}).stdout
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return result


def _env() -> dict[str, str]:
    import os

    return dict(os.environ)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--agents", type=int, default=2000)
    ap.add_argument("--interval", type=float, default=4.0)
    ap.add_argument("--warmup", type=float, default=20.0)
    ap.add_argument("--window", type=float, default=40.0)
    ap.add_argument("--max-concurrency", type=int, help="the daemon's slots (default: its own, from the fleet)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--before", action="append", default=[], metavar="REV_OR_DIR",
                    help="another tree to run in every round before this checkout (repeatable)")
    ap.add_argument("--no-this", action="store_true", help="run only the --before trees")
    ap.add_argument("--types", type=int, default=12, help="most numerous types of the oldest generation shown")
    ap.add_argument("--delay", type=float, default=0.005, help="the fleet's server-side delay per RPC, s")
    ap.add_argument("--backlog", action="store_true",
                    help="the waiting runs alone, in-process: a probe holding its slot --hold s, no HTTP, no fleet")
    ap.add_argument("--hold", type=float, default=0.3, help="--backlog: seconds a probe holds its slot")
    ap.add_argument("--gc-threshold", action="append", default=[], metavar="G0,G1,G2",
                    help="run this checkout once more per round with these collector thresholds (repeatable)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--origin", help=argparse.SUPPRESS)
    ap.add_argument("--workdir", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(asyncio.run(_backlog_child(args) if args.backlog else _child(args))))
        return
    with tempfile.TemporaryDirectory(prefix="gc-fleet-") as tmp:
        trees = [(rev, _unpack(rev, Path(tmp))) for rev in args.before] + ([] if args.no_this else [("this", ROOT)])
        trees += [(f"gc={g}", ROOT) for g in args.gc_threshold]
        gc_of = {f"gc={g}": g for g in args.gc_threshold}
        fleet = subprocess.Popen([sys.executable, str(ROOT / "bench" / "fleet_agents.py"), "--delay", str(args.delay)],
                                 stdout=subprocess.PIPE, text=True)
        try:
            assert fleet.stdout is not None
            origin = fleet.stdout.readline().split()[1]
            rows: dict[str, list[dict[str, Any]]] = {name: [] for name, _ in trees}
            for rnd in range(args.rounds):
                for name, root in trees:
                    row = _run_child(root, origin, args, Path(tmp), gc_of.get(name))
                    rows[name].append(row)
                    print(json.dumps({"round": rnd + 1, "tree": name, **row}), flush=True)
            for name, got in rows.items():
                if args.backlog:
                    print(f"{name}: CPU us per due run " + " / ".join(f"{r['cpu_us_per_due_run']}" for r in got)
                          + "; GC % of CPU " + " / ".join(f"{r['gc_pct_cpu']}" for r in got)
                          + "; waiting / tasks at end " + " / ".join(f"{r['waiting_at_end']}:{r['tasks_at_end']}"
                                                                     for r in got), flush=True)
                    continue
                print(f"{name}: full collection ms " + " / ".join(f"{r['full_collection_ms_at_end']}" for r in got)
                      + "; CPU ms/probe " + " / ".join(f"{r['cpu_ms_per_probe']:.3f}" for r in got)
                      + "; GC % of CPU " + " / ".join(f"{r['gc_pct_cpu']}" for r in got)
                      + "; probes/s " + " / ".join(f"{r['probes_per_s']}" for r in got), flush=True)
        finally:
            fleet.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                fleet.wait(10)


if __name__ == "__main__":
    main()
