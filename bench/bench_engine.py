#!/usr/bin/env python
"""The engine's CPU per probe: `probe.engine.run_interfaces` as the daemon calls it, against the loopback fleet.

One fleet process (bench/fleet_agents.py, no server-side delay) and, per round, one child process per source
tree (`--roots`, e.g. a `git archive` of main and this checkout) that probes every agent once to warm its caches
(card validation, redaction), then times `--probes` probes on the CPU clock (`time.process_time`). The roots run
interleaved, in rotating order, so drift on a shared machine hits each alike; the table gives each root's median
round and the range. `--profile N` runs one more child per root under cProfile on the CPU clock and prints its
top N functions by own time (and by total time), to see where it goes.

`--runner` probes as the daemon does, without its scheduler: config `Agent`s through `Runner.run` (the agent's
Target resolved per run, slots) and `Runner.record` (metrics, history, the log line to /dev/null), and reports
the record's share apart. With `--agents 10000` or more, every agent is distinct (the fleet hosts them by path)
and each is probed once between two probes of the same agent, as at fleet scale: caches smaller than the fleet
miss as they do in the daemon.

    python bench/bench_engine.py --module ping --roots /tmp/main-src,.
    python bench/bench_engine.py --module invoke --profile 25
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import io
import json
import os
import pstats
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def _start_fleet(delay: float = 0.0) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, str(HERE / "fleet_agents.py"), "--port", "0", "--delay", str(delay)],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    if not line.startswith("listening "):
        proc.kill()
        raise SystemExit(f"the fleet did not start: {line!r}")
    return proc, line.split(" ", 1)[1]


async def _child(origin: str, agents: int, module: str, probes: int, concurrency: int,
                 profile: bool, runner_mode: bool = False) -> dict[str, object]:
    from probe.engine import run_interfaces
    from probe.results import ProbeResult, StepName
    from probe.target import Target
    from probe.wire.http import HttpClient

    step = {"ping": StepName.PING, "invoke": StepName.INVOKE, "stream": StepName.STREAM}[module]
    fresh = module == "ping"  # what the daemon does: ping opens a fresh connection per probe to measure connect
    targets = [Target(name=f"agent-{i}", url=f"{origin}/a/agent-{i}", message="hello", fresh_connection=fresh)
               for i in range(agents)]
    client = HttpClient()
    counter = 0
    record_cpu = [0.0]
    durations: list[float] = []
    walls: list[float] = []  # the whole probe call's wall time: what a duration from the probe's start holds
    probe_one = None
    if runner_mode:
        probe_one = _runner_probe(origin, agents, module, client, record_cpu)

    async def one(i: int) -> ProbeResult:
        if probe_one is not None:
            return await probe_one(i)
        return await run_interfaces(targets[i], client, steps=(step,), agree=False)

    async def batch(n: int) -> None:
        nonlocal counter
        queue = iter(range(counter, counter + n))
        counter += n

        async def worker() -> None:
            for i in queue:
                w0 = time.monotonic()
                result = await one(i % agents)
                walls.append(time.monotonic() - w0)
                durations.append(result.duration_s)
                if not result.success:
                    raise SystemExit(f"probe failed: {result.reason} {result.steps}")

        await asyncio.gather(*(worker() for _ in range(concurrency)))

    try:
        await batch(agents)  # warm-up: every agent once (caches, imports, connections)
        gc.collect()
        record_cpu[0] = 0.0
        durations.clear()
        walls.clear()
        prof = cProfile.Profile(time.process_time) if profile else None
        c0 = time.process_time()
        if prof is not None:
            prof.enable()
        await batch(probes)
        if prof is not None:
            prof.disable()
        cpu = time.process_time() - c0
    finally:
        await client.close()
    import probe

    out: dict[str, object] = {"cpu_ms": 1e3 * cpu / probes, "probe": str(Path(probe.__file__).parent),
                              "record_ms": 1e3 * record_cpu[0] / probes,
                              "durations_ms": sorted(1e3 * d for d in durations),
                              "walls_ms": sorted(1e3 * w for w in walls)}
    if prof is not None:
        for key in ("tottime", "cumulative"):
            s = io.StringIO()
            pstats.Stats(prof, stream=s).sort_stats(key).print_stats(int(os.environ.get("BENCH_TOP", "25")))
            sys.stderr.write(s.getvalue())
        for pattern in filter(None, os.environ.get("BENCH_CALLERS", "").split(",")):  # who calls what, to dig in
            s = io.StringIO()
            pstats.Stats(prof, stream=s).sort_stats("tottime").print_callers(pattern)
            sys.stderr.write(s.getvalue())
        for pattern in filter(None, os.environ.get("BENCH_CALLEES", "").split(",")):  # and what it calls
            s = io.StringIO()
            pstats.Stats(prof, stream=s).sort_stats("cumulative").print_callees(pattern)
            sys.stderr.write(s.getvalue())
    return out


def _runner_probe(origin: str, agents: int, module: str, client: Any, record_cpu: list[float]) -> Any:
    """The daemon's path for one probe of agent i, without the scheduler: Runner.run, then Runner.record."""
    from probe import logs
    from probe.config import DEFAULT_CARD_CACHE_MAX_AGE, Agent, Module, Prober
    from probe.history import History
    from probe.metrics import Metrics
    from probe.runner import Runner

    logs.configure("info", "json", open(os.devnull, "w"))  # noqa: SIM115 - the daemon's log line, to nowhere
    metrics = Metrics([0.25, 1, 5], [])
    spec = Module(prober=Prober(module), interval=60, timeout=5)
    fleet = [Agent(name=f"agent-{i}", url=f"{origin}/a/agent-{i}", message="hello") for i in range(agents)]
    for a in fleet:
        metrics.add_job(a.name, module, spec.interval, spec.timeout)
    runner = Runner(client, metrics, History(20), max_concurrency=64)
    runner.cards.default_max_age = DEFAULT_CARD_CACHE_MAX_AGE  # as the daemon sets it: the fleet's cards are cached

    async def probe_one(i: int) -> Any:
        start_by = asyncio.get_running_loop().time() + 60  # a scheduled run: the whole timeout once started
        result = await runner.run(fleet[i], spec, timeout=spec.timeout, start_by=start_by)
        t0 = time.process_time()
        runner.record(module, result)
        record_cpu[0] += time.process_time() - t0
        return result

    return probe_one


overhead: dict[str, list[tuple[float, float]]] = {}  # root -> (p50, p99) ms per round


def _run_child(root: str, origin: str, args: argparse.Namespace, profile: bool = False) -> float:
    env = {**os.environ, "PYTHONPATH": str(Path(root).resolve()), "BENCH_TOP": str(args.profile or 25)}
    cmd = [sys.executable, str(HERE / "bench_engine.py"), "--child", origin, "--agents", str(args.agents),
           "--module", args.module, "--probes", str(args.probes), "--concurrency", str(args.concurrency)]
    if args.runner:
        cmd.append("--runner")
    if profile:
        cmd.append("--child-profile")
    out = subprocess.run(cmd, env=env, cwd=Path(root).resolve(), capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"child for {root} failed:\n{out.stderr[-3000:]}")
    if profile:
        sys.stdout.write(f"\n=== cProfile (CPU clock), {root}\n" + out.stderr)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    if Path(got["probe"]) != (Path(root) / "probe").resolve():
        raise SystemExit(f"the child for {root} imported {got['probe']}")
    if args.runner:
        sys.stdout.write(f"  {root}: {got['cpu_ms']:.3f} ms a probe, of which Runner.record {got['record_ms']:.3f}\n")
    if args.delay:  # measurement overhead: the reported duration minus the agent's known delay per call
        for key, label in (("durations_ms", root), ("walls_ms", f"{root} (the probe call's wall time)")):
            over = [d - 1e3 * args.delay for d in got[key]]
            overhead.setdefault(label, []).append((over[len(over) // 2], over[int(len(over) * 0.99)]))
    return float(got["cpu_ms"])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--roots", default=".", help="comma-separated source trees to compare (each holds probe/)")
    ap.add_argument("--module", choices=("ping", "invoke", "stream"), default="ping")
    ap.add_argument("--agents", type=int, default=200)
    ap.add_argument("--probes", type=int, default=2000, help="timed probes per round and root")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--profile", type=int, default=0, help="also print cProfile's top N per root")
    ap.add_argument("--runner", action="store_true", help="the daemon's path: Runner.run + Runner.record")
    ap.add_argument("--delay", type=float, default=0.0, help="the fleet's server-side delay per RPC (seconds); "
                    "non-zero: also the measurement overhead (duration minus the delay) p50 / p99 per root")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--child-profile", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        got = asyncio.run(_child(args.child, args.agents, args.module, args.probes, args.concurrency,
                                 args.child_profile, args.runner))
        print(json.dumps(got))
        return 0
    roots = [r.strip() for r in args.roots.split(",") if r.strip()]
    fleet, origin = _start_fleet(args.delay)
    cpu: dict[str, list[float]] = {r: [] for r in roots}
    try:
        for n in range(args.rounds):
            order = roots[n % len(roots):] + roots[:n % len(roots)]
            for root in order:
                cpu[root].append(_run_child(root, origin, args))
        if args.profile:
            for root in roots:
                _run_child(root, origin, args, profile=True)
    finally:
        fleet.terminate()
        fleet.wait(10)
    print(f"\n{args.module}, {args.agents} agents, {args.probes} probes x {args.rounds} rounds, concurrency "
          f"{args.concurrency}; CPU ms per probe (median round, min-max):")
    for root in roots:
        vals = cpu[root]
        if not vals:  # --rounds 0: the profile alone
            continue
        print(f"  {root}: {statistics.median(vals):.3f} ({min(vals):.3f}-{max(vals):.3f})")
    if len(roots) > 1 and args.rounds:
        base = statistics.median(cpu[roots[0]])
        for root in roots[1:]:
            own = sorted(a / b for a, b in zip(cpu[root], cpu[roots[0]], strict=True))  # each round's own ratio
            print(f"  {root} / {roots[0]}: {statistics.median(cpu[root]) / base:.3f} (rounds' own ratios: median "
                  f"{statistics.median(own):.3f}, {own[0]:.3f}-{own[-1]:.3f})")
    for root, seen in overhead.items():
        print(f"  {root}: overhead p50 / p99 ms (median round) {statistics.median(p for p, _ in seen):.2f} / "
              f"{statistics.median(q for _, q in seen):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
