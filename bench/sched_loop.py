#!/usr/bin/env python
"""The scheduler's and runner's own CPU per run: apscheduler, ProbeScheduler, Runner.scheduled/run/_probe, the slots,
the self-monitor, with a no-op probe, on the CPU clock.

    python bench/sched_loop.py                              # 10,000 jobs at 12 s (833 runs/s), this checkout
    python bench/sched_loop.py --before a27c67b             # the same, interleaved with an older checkout
    python bench/sched_loop.py --jobs 0                     # the idle daemon's loop: the self-monitor alone

Each measurement is its own process (PYTHONPATH = the checkout measured): N agents on one ping module, the daemon's
ProbeScheduler, Runner and SelfMonitor wired as probe/daemon.py wires them, `run_interfaces` replaced by a probe
that yields once and returns a passing result, and `Runner.record` (metrics, history, log: measured by the fleet
benchmark's bookkeeping share) replaced by a counter. After a warm-up, `time.process_time` over the window divided
by the runs started in it is the CPU per run of everything but the probe and its recording. Rounds alternate the
checkouts (and their order), the table gives the median round and the range.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path and "--child" not in sys.argv:  # a child imports the checkout on its PYTHONPATH
    sys.path.insert(0, str(ROOT))


def child(jobs: int, interval: float, warmup: float, window: float, profile: int = 0,
          direct: int = 0) -> dict[str, Any]:
    """One measurement in this process (imports come from PYTHONPATH: the checkout under test)."""
    import asyncio
    import cProfile
    import inspect
    import pstats
    import time

    import probe.runner as runner_mod
    from probe.config import Agent, Module, ProbeConfig, Prober
    from probe.history import History
    from probe.metrics import Metrics
    from probe.results import ProbeResult
    from probe.runner import Runner
    from probe.scheduler import ProbeScheduler
    from probe.selfmon import SelfMonitor, tune_gc
    from probe.wire.http import HttpClient

    started = 0
    finished = 0

    passed = ProbeResult(agent="agent", target_url="http://127.0.0.1:9/", success=True)  # the engine's, not ours

    async def no_probe(target: Any, client: Any, **_: Any) -> ProbeResult:
        nonlocal started
        started += 1
        await asyncio.sleep(0)  # a real probe waits on its sockets at least once
        return passed

    def no_record(self: Any, module_name: str, result: ProbeResult) -> None:
        nonlocal finished
        finished += 1

    runner_mod.run_interfaces = no_probe  # type: ignore[assignment]
    Runner.record = no_record  # type: ignore[method-assign]

    async def main() -> dict[str, Any]:
        module = Module(prober=Prober.PING, interval=interval, timeout=min(10.0, interval))
        agents = [Agent(name=f"agent-{i:05d}", url=f"http://127.0.0.1:9/a/{i}", modules=["m"]) for i in range(jobs)]
        config = ProbeConfig(modules={"m": module}, agents=agents)
        metrics = Metrics([0.1, 1.0, 10.0], [])
        client = HttpClient()
        runner = Runner(client, metrics, History(10), 64)
        # runs wait for slots in the runner's queue, as the daemon wires it (older checkouts: no gate)
        gated = {"gate": runner} if "gate" in inspect.signature(ProbeScheduler).parameters else {}
        scheduler = ProbeScheduler(runner.scheduled, metrics.missed, first_pass_rate=0,  # every job at its phase
                                   **gated)
        selfmon = SelfMonitor(metrics)
        runner.stall_clock = selfmon.stalled_seconds
        selfmon.start()
        if direct:  # the runner alone, no scheduler or timers: `direct` runs, 64 at a time, of the first 64 jobs
            batch = [(a, "m", module) for a in agents[:64]]
            for _ in range(2):  # warm-up
                await asyncio.gather(*(runner.scheduled(*job, planned=time.time()) for job in batch))
            c0 = time.process_time()
            for _ in range(direct // len(batch)):
                await asyncio.gather(*(runner.scheduled(*job, planned=time.time()) for job in batch))
            cpu = time.process_time() - c0
            await selfmon.stop()
            await client.close()
            runs = direct // len(batch) * len(batch)
            return {"jobs": len(batch), "runs": runs, "runs_per_s": 0.0, "cpu_pct": 0.0,
                    "us_per_run": round(1e6 * cpu / runs, 2), "finished": finished,
                    "probe_package": str(Path(runner_mod.__file__).parent)}
        scheduler.sync(config)
        scheduler.start()
        tune_gc()
        await asyncio.sleep(warmup)
        prof = cProfile.Profile(time.process_time) if profile else None
        s0, c0, t0 = started, time.process_time(), time.monotonic()
        if prof:
            prof.enable()
        await asyncio.sleep(window)
        if prof:
            prof.disable()
        s1, c1, t1 = started, time.process_time(), time.monotonic()
        if prof:  # cProfile inflates CPU about 3x: read its figures as shares
            pstats.Stats(prof, stream=sys.stderr).sort_stats("tottime").print_stats(profile)
        scheduler.pause()
        await asyncio.sleep(0.2)  # the runs under way finish (no-op probes): nothing is cancelled mid-run
        scheduler.shutdown()
        await selfmon.stop()
        await client.close()
        runs = s1 - s0
        return {"jobs": jobs, "runs": runs, "runs_per_s": round(runs / (t1 - t0), 1),
                "cpu_pct": round(100 * (c1 - c0) / (t1 - t0), 2),
                "us_per_run": round(1e6 * (c1 - c0) / runs, 1) if runs else None, "finished": finished,
                "probe_package": str(Path(runner_mod.__file__).parent)}

    return asyncio.run(main())


def measure(root: Path, args: argparse.Namespace) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(root)}
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", "--jobs", str(args.jobs), "--interval",
           str(args.interval), "--warmup", str(args.warmup), "--window", str(args.window), "--direct", str(args.direct)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=root, timeout=600)
    if proc.returncode != 0:
        raise SystemExit(f"measurement in {root} failed:\n{proc.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--jobs", type=int, default=10_000)
    ap.add_argument("--interval", type=float, default=12.0, help="s; 10,000 jobs at 12 s run 833 a second")
    ap.add_argument("--warmup", type=float,
                    help="s after start-up before the window (default: one interval + 2 s, so every job has run once: "
                         "first runs build what later runs reuse, e.g. the remembered Target)")
    ap.add_argument("--window", type=float, help="measured s (default: one interval, so every job runs once in it)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--before", metavar="REV_OR_DIR", help="also measure an older checkout, interleaved")
    ap.add_argument("--direct", type=int, default=0, metavar="RUNS",
                    help="the runner alone: RUNS calls of Runner.scheduled (64 at a time), no scheduler or timers")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--profile", type=int, default=0, metavar="TOP",
                    help="measure nothing: cProfile (CPU clock) over one window of this checkout, top TOP by own time")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    args.window = args.interval if args.window is None else args.window
    args.warmup = args.interval + 2.0 if args.warmup is None else args.warmup
    if args.child:
        print(json.dumps(child(args.jobs, args.interval, args.warmup, args.window, args.profile, args.direct)))
        return 0
    if args.profile:
        print(json.dumps(child(args.jobs, args.interval, args.warmup, args.window, args.profile)))
        return 0
    with tempfile.TemporaryDirectory(prefix="a2a-sched-") as tmp:
        roots = {"after": ROOT}
        if args.before:
            from bench.fleet import before_checkout

            before, commit = before_checkout(args.before, Path(tmp))
            roots = {f"before ({commit or before})": before, "after": ROOT}
        runs: dict[str, list[dict[str, Any]]] = {k: [] for k in roots}
        for r in range(args.rounds):  # alternating order: drift on the machine hits both alike
            for name in (list(roots) if r % 2 == 0 else list(reversed(roots))):
                runs[name].append(measure(roots[name], args))
                print(f"round {r + 1} {name}: {runs[name][-1]}", file=sys.stderr, flush=True)
    if args.json:
        print(json.dumps(runs, indent=2))
        return 0
    what = (f"the runner alone, {args.direct:,} runs" if args.direct else
            f"{args.jobs:,} jobs at {args.interval:g} s, {args.window:g} s windows")
    print(f"{what}, no-op probe, {args.rounds} rounds (median, min-max):\n")
    print("| checkout | runs/s | CPU % of a core | CPU µs per run |\n|---|---|---|---|")
    for name, rows in runs.items():
        cpu = [row["cpu_pct"] for row in rows]
        per = [row["us_per_run"] for row in rows if row["us_per_run"] is not None]
        per_cell = f"{statistics.median(per):g} ({min(per):g}-{max(per):g})" if per else "—"
        print(f"| {name} | {statistics.median(row['runs_per_s'] for row in rows):g} | "
              f"{statistics.median(cpu):g} ({min(cpu):g}-{max(cpu):g}) | {per_cell} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
