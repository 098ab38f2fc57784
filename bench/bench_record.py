#!/usr/bin/env python
"""CPU per probe of recording a finished probe: `Runner.record` (metrics, history record, log line).

The results are real: the engine probes a loopback fleet (bench/fleet_agents.py) once per agent on `ping`,
`invoke` or `stream`, and a share of the agents answers 404 on the card (a failing probe). Then every result is
recorded again and again, as the daemon does after each run, under the thread CPU clock; the log goes to
/dev/null through the daemon's own JSON logging set-up.

That loop records the same few hundred result objects again and again, so whatever is kept by object or by
string (check JSON, scrubbed texts) always hits. `--distinct` measures what the daemon does instead: it probes
`--agents` distinct agents twice (the loopback fleet in its own process, `--concurrency` at once), records every
result once right after its probe, as `Runner.scheduled` does, and reports the second pass (fresh result objects
of agents whose series exist) from the daemon's own `bookkeeping_cpu_seconds` counter; the log goes to a pipe
read by another process, as the daemon's stderr is, in batches when the tree batches it. `--breakdown` also
times metrics, history and the log line apart (a few µs of timer calls added); `--cached-card` runs them as the
scheduler does, with the RFC 9111 card cache (the second pass's cards come from it, as in the daemon).

`--against REF` measures a git revision's tree side by side (its `probe/` extracted to a temporary directory):
each round runs one child process per tree, in alternating order (`--parallel`: both at once, so a machine
loaded by others slows both alike), and the table shows the median round, the range and the median of each
round's own ratio. Run: ``python bench/bench_record.py [--against main] [--module ping] [--rounds 5]
[--distinct --agents 10000 --parallel]``.
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
from concurrent.futures import ThreadPoolExecutor
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


async def _fleet_records(args: argparse.Namespace) -> dict[str, float]:
    """`--distinct`: two passes of probe-then-record over distinct agents; the second pass is measured."""
    from probe import history as history_mod
    from probe import logs
    from probe import runner as runner_mod
    from probe.config import Agent, Module, Prober
    from probe.history import History
    from probe.metrics import Metrics
    from probe.runner import Runner
    from probe.wire.http import HttpClient

    spent: dict[str, float] = {"metrics": 0.0, "history": 0.0, "log": 0.0}

    def timed(part: str, fn: Any) -> Any:
        def wrapper(*a: Any, **kw: Any) -> Any:
            t0 = time.thread_time()
            try:
                return fn(*a, **kw)
            finally:
                spent[part] += time.thread_time() - t0
        return wrapper

    metrics = Metrics([0.05, 0.1, 0.25, 0.5, 1, 2.5, 5], [])
    history = History(20)
    n = args.agents + args.failing
    names = [f"agent-{i:06d}" for i in range(n)]
    agents = [Agent(name=name, url=f"{args.origin}/a/{name}" if i < args.agents else f"{args.origin}/missing/{name}/")
              for i, name in enumerate(names)]
    spec = Module(prober=Prober(args.module), interval=60, timeout=10)
    for a in agents:
        metrics.add_job(a.name, args.module, 60, 10)
    counter = "a2a_probe_bookkeeping_cpu_seconds_total"
    if hasattr(logs, "batch"):
        logs.batch()  # as the daemon writes its log while it runs
    async with HttpClient(limit=2 * args.concurrency, limit_per_host=2 * args.concurrency) as client:
        runner = Runner(client, metrics, history, max_concurrency=args.concurrency)
        cached = args.cached_card and hasattr(runner, "cards")
        if cached:  # as the daemon's scheduled runs: the card from the RFC 9111 cache after an agent's first run
            runner.cards.default_max_age = 300.0

        gate = asyncio.Semaphore(args.concurrency)  # never more than the runner's slots: no run waits for one

        async def one(agent: Agent) -> bool:
            async with gate:
                start_by = asyncio.get_running_loop().time() + spec.interval if cached else None
                result = await runner.run(agent, spec, timeout=spec.timeout, start_by=start_by)
            runner.record(args.module, result)
            return result.success

        for pass_no in (1, 2):
            if pass_no == 2:
                gc.collect()
                tune = getattr(__import__("probe.selfmon", fromlist=["tune_gc"]), "tune_gc", None)
                if tune is not None:
                    tune()  # as the daemon does once every job has run
                before = metrics.registry.get_sample_value(counter) or 0.0
                if args.breakdown:
                    metrics.observe = timed("metrics", metrics.observe)  # type: ignore[method-assign]
                    history.add = timed("history", history.add)  # type: ignore[method-assign]
                    runner_mod.logs.log_probe = timed("log", logs.log_probe)  # type: ignore[attr-defined]
            ok = await asyncio.gather(*(one(a) for a in agents))
            # a loaded machine may time a few out (each still recorded, as the daemon would): at most 2 % of them
            assert sum(ok) >= 0.98 * args.agents, f"pass {pass_no}: {sum(ok)} of {args.agents} loopback agents passed"
            if sum(ok) != args.agents:
                failed = args.agents - sum(ok)
                print(f"pass {pass_no}: {failed} of {args.agents} loopback agents failed", file=sys.stderr)
        counted = (metrics.registry.get_sample_value(counter) or 0.0) - before
    if hasattr(logs, "unbatch"):
        logs.unbatch()
    out = {"us_per_probe": 1e6 * counted / n, "counter_us_per_probe": 1e6 * counted / n}
    if args.breakdown:
        out.update({f"{part}_us": 1e6 * s / n for part, s in spent.items()})
    out["kept_check_json"] = float(len(getattr(history_mod, "_fragments", ())))
    return out


def distinct_child(args: argparse.Namespace) -> dict[str, float]:
    from probe import logs

    reader = subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)  # the daemon's stderr reader
    assert reader.stdin is not None
    sink = open(reader.stdin.fileno(), "w", closefd=False)  # noqa: SIM115 - text, line by line, like sys.stderr
    logs.configure("info", "json", sink)
    try:
        return asyncio.run(_fleet_records(args))
    finally:
        sink.close()
        reader.stdin.close()
        reader.wait()


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
    if args.distinct:
        cmd += ["--distinct", "--origin", args.origin, "--concurrency", str(args.concurrency)]
        cmd += ["--breakdown"] if args.breakdown else []
        cmd += ["--cached-card"] if args.cached_card else []
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=tree)
    if done.returncode:
        raise SystemExit(f"the child of {tree} failed ({done.returncode}): {done.stderr[-2000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--module", default="ping", choices=("ping", "invoke", "stream"))
    p.add_argument("--agents", type=int, default=200, help="passing agents (distinct results)")
    p.add_argument("--failing", type=int, default=20, help="agents whose card is not found (failing results)")
    p.add_argument("--repeat", type=int, default=10, help="records of each result per round")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--against", metavar="REF", help="a git revision measured side by side (e.g. main)")
    p.add_argument("--tree", metavar="REF", help="measure this git revision instead of the worktree (with --against: "
                                                 "two revisions side by side)")
    p.add_argument("--distinct", action="store_true",
                   help="fresh results of distinct agents, each recorded once after its probe (as the daemon does)")
    p.add_argument("--concurrency", type=int, default=64, help="--distinct: probes at once")
    p.add_argument("--breakdown", action="store_true", help="--distinct: time metrics, history and log apart")
    p.add_argument("--cached-card", action="store_true",
                   help="--distinct: scheduled runs with the card cache (the daemon's path: a ping's second pass is "
                        "the call alone, its discovery step from the cache)")
    p.add_argument("--parallel", action="store_true",
                   help="run both trees' children at the same time each round (a shared, loaded machine)")
    p.add_argument("--json", action="store_true")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--origin", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        print(json.dumps(distinct_child(args) if args.distinct else child(args)))
        return 0
    fleet = None
    if args.distinct:
        sys.path.insert(0, str(ROOT / "bench"))
        from fleet import FleetProc

        fleet = FleetProc(delay=0.0)
        args.origin = fleet.origin
    try:
        rows = _rounds(args)
    finally:
        if fleet is not None:
            fleet.stop()
    if args.json:
        print(json.dumps({"module": args.module, "agents": args.agents, "failing": args.failing,
                          "distinct": args.distinct, "rows": rows}))
        return 0
    how = (f"{args.repeat} records each per round" if not args.distinct
           else "each recorded once after its probe, second pass")
    print(f"Runner.record, {args.module}: {args.agents} passing + {args.failing} failing results, "
          f"{how}, {args.rounds} rounds (median, min-max), thread CPU")
    parts = [k for k in ("metrics_us", "history_us", "log_us") if any(k in r for r in rows.values())]
    print("| tree | µs/probe | min-max | bookkeeping counter µs/probe |" + "".join(f" {k} |" for k in parts))
    print("|---|---|---|---|" + "---|" * len(parts))
    for name, row in rows.items():
        print(f"| {name} | {row['us_per_probe']} | {row['min']}-{row['max']} | {row['counter_us_per_probe']} |"
              + "".join(f" {row.get(k, '—')} |" for k in parts))
    if len(rows) == 2:
        (base_name, base), (_, ours) = list(rows.items())[::-1]
        print(f"\nthis tree ÷ {base_name}: {ours['us_per_probe'] / base['us_per_probe']:.2f} (median of the rounds' "
              f"own ratios: {ours['paired_ratio']})")
    return 0


def _rounds(args: argparse.Namespace) -> dict[str, dict[str, float]]:
    with tempfile.TemporaryDirectory() as tmp:
        trees = {"this tree": ROOT} if not args.tree else {args.tree: _tree(args.tree, Path(tmp) / "tree")}
        if args.against:
            trees[args.against] = _tree(args.against, Path(tmp) / "against")
        runs: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
        for i in range(args.rounds):
            order = list(trees) if i % 2 == 0 else list(reversed(trees))  # interleaved, alternating
            if args.parallel:  # both trees at once: whatever else loads the machine loads both alike
                with ThreadPoolExecutor(len(order)) as pool:
                    done = dict(zip(order, pool.map(lambda n: _run_child(trees[n], args), order), strict=True))
                for name in order:
                    runs[name].append(done[name])
                continue
            for name in order:
                runs[name].append(_run_child(trees[name], args))
    rows: dict[str, dict[str, float]] = {}
    for name, rs in runs.items():
        row = {"us_per_probe": round(statistics.median(r["us_per_probe"] for r in rs), 1),
               "min": round(min(r["us_per_probe"] for r in rs), 1),
               "max": round(max(r["us_per_probe"] for r in rs), 1),
               "counter_us_per_probe": round(statistics.median(r["counter_us_per_probe"] for r in rs), 1)}
        for k in ("metrics_us", "history_us", "log_us", "kept_check_json"):
            if all(k in r for r in rs):
                row[k] = round(statistics.median(r[k] for r in rs), 1)
        rows[name] = row
    if len(runs) == 2:  # the same round's two trees side by side: the ratio that noise between rounds leaves alone
        ours, base = runs.values()
        rows[next(iter(rows))]["paired_ratio"] = round(statistics.median(
            a["us_per_probe"] / b["us_per_probe"] for a, b in zip(ours, base, strict=True)), 3)
    return rows


if __name__ == "__main__":
    sys.exit(main())
