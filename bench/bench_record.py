#!/usr/bin/env python
"""CPU per probe of recording a finished probe: `Runner.record` (metrics, history record, log line).

The results are real: the engine probes a loopback fleet (bench/fleet_agents.py) once per agent on `ping`,
`invoke` or `stream`, and a share of the agents answers 404 on the card (a failing probe). Then every result is
recorded again and again, as the daemon does after each run, under the thread CPU clock; the log goes to
/dev/null through the daemon's own JSON logging set-up.

`--against REF` measures a git revision's tree side by side (its `probe/` extracted to a temporary directory):
each round runs one child process per tree, in alternating order, and the table shows the median round and
the range. Run: ``python bench/bench_record.py [--against main] [--module ping] [--rounds 5]``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


async def _results(agents: int, failing: int, module: str) -> list[tuple[str, Any]]:
    sys.path.insert(0, str(ROOT / "bench"))
    from fleet_agents import Fleet

    from probe.config import Agent, Module, Prober
    from probe.history import History
    from probe.metrics import Metrics
    from probe.runner import Runner
    from probe.wire.http import HttpClient

    fleet = Fleet(delay=0.0)
    origin = await fleet.start()
    out = []
    try:
        async with HttpClient() as client:
            runner = Runner(client, Metrics([1], []), History(1), max_concurrency=16)
            spec = Module(prober=Prober(module), interval=60, timeout=5)
            for i in range(agents + failing):
                url = fleet.agent_url(f"agent-{i}") if i < agents else f"{origin}/missing/agent-{i}/"
                result = await runner.run(Agent(name=f"agent-{i}", url=url), spec, timeout=spec.timeout)
                out.append((module, result))
    finally:
        await fleet.stop()
    return out


def child(args: argparse.Namespace) -> dict[str, float]:
    """In one process: build the results, then time `Runner.record` over them, `args.repeat` times each."""
    from probe import logs
    from probe.history import History
    from probe.metrics import Metrics
    from probe.runner import Runner

    results = asyncio.run(_results(args.agents, args.failing, args.module))
    assert all(r.success for _, r in results[: args.agents]), "a loopback agent failed its probe"
    assert not any(r.success for _, r in results[args.agents:])
    sink = open(os.devnull, "w")  # noqa: SIM115 - a write per line, as to the daemon's stderr
    logs.configure("info", "json", sink)
    metrics = Metrics([0.05, 0.1, 0.25, 0.5, 1, 2.5, 5], [])
    for _, r in results:
        metrics.add_job(r.agent, args.module, 60, 5)
    runner = Runner.__new__(Runner)  # only `record`'s collaborators: no HTTP client, no slots
    runner.metrics, runner.history = metrics, History(20)
    runner._bookkeeping = metrics.counter("bookkeeping_cpu_seconds")
    for module, r in results:  # the first record of a job creates its series: not the steady state
        runner.record(module, r)
    gc.collect()
    t0 = time.thread_time()
    for _ in range(args.repeat):
        for module, r in results:
            runner.record(module, r)
    spent = time.thread_time() - t0
    n = args.repeat * len(results)
    counted = metrics.registry.get_sample_value("a2a_probe_bookkeeping_cpu_seconds_total") or 0.0
    return {"us_per_probe": 1e6 * spent / n, "counter_us_per_probe": 1e6 * counted / (n + len(results))}


def _tree(ref: str, into: Path) -> Path:
    """`ref`'s probe/ package in a temporary directory (its own source, not this worktree's)."""
    data = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "probe"], check=True,
                          capture_output=True).stdout
    with tempfile.NamedTemporaryFile(suffix=".tar") as f:
        f.write(data)
        f.flush()
        with tarfile.open(f.name) as tar:
            tar.extractall(into, filter="data")
    return into


def _run_child(tree: Path, args: argparse.Namespace) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    cmd = [sys.executable, __file__, "--child", "--module", args.module, "--agents", str(args.agents),
           "--failing", str(args.failing), "--repeat", str(args.repeat)]
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True, cwd=tree).stdout
    return dict(json.loads(out.strip().splitlines()[-1]))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--module", default="ping", choices=("ping", "invoke", "stream"))
    p.add_argument("--agents", type=int, default=200, help="passing agents (distinct results)")
    p.add_argument("--failing", type=int, default=20, help="agents whose card is not found (failing results)")
    p.add_argument("--repeat", type=int, default=10, help="records of each result per round")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--against", metavar="REF", help="a git revision measured side by side (e.g. main)")
    p.add_argument("--json", action="store_true")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        print(json.dumps(child(args)))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        trees = {"this tree": ROOT}
        if args.against:
            trees[args.against] = _tree(args.against, Path(tmp))
        runs: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
        for i in range(args.rounds):
            order = list(trees) if i % 2 == 0 else list(reversed(trees))  # interleaved, alternating
            for name in order:
                runs[name].append(_run_child(trees[name], args))
    rows = {name: {"us_per_probe": round(statistics.median(r["us_per_probe"] for r in rs), 1),
                   "min": round(min(r["us_per_probe"] for r in rs), 1),
                   "max": round(max(r["us_per_probe"] for r in rs), 1),
                   "counter_us_per_probe": round(statistics.median(r["counter_us_per_probe"] for r in rs), 1)}
            for name, rs in runs.items()}
    if args.json:
        print(json.dumps({"module": args.module, "agents": args.agents, "failing": args.failing, "rows": rows}))
        return 0
    print(f"Runner.record, {args.module}: {args.agents} passing + {args.failing} failing results, "
          f"{args.repeat} records each per round, {args.rounds} rounds (median, min-max), thread CPU")
    print("| tree | µs/probe | min-max | bookkeeping counter µs/probe |\n|---|---|---|---|")
    for name, row in rows.items():
        print(f"| {name} | {row['us_per_probe']} | {row['min']}-{row['max']} | {row['counter_us_per_probe']} |")
    if args.against:
        base, ours = rows[args.against]["us_per_probe"], rows["this tree"]["us_per_probe"]
        print(f"\nthis tree ÷ {args.against}: {ours / base:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
