#!/usr/bin/env python
"""fleet.py's client loops (bare aiohttp, the a2a-sdk client, the engine) with the engine of several source trees,
in one run: the ratios before -> after, each loop in its own process.

`bench/fleet.py` runs its three loops in one process, so it can only measure this checkout's engine. Here every
round starts one child process per loop and per `--roots` tree (the engine loop imports `probe` from that tree;
the bare and SDK loops do not depend on it) against one fleet (bench/fleet_agents.py, `--delay` per RPC as in
fleet.py); each child warms up, then times `--probes` probes on the CPU clock with fleet.py's own
`interleaved_cpu` (the same probes, concurrency and agents as fleet.py's loops). Rounds rotate the order, so drift
on a shared machine hits every loop alike; the table gives each loop's median round and range, and the ratios
engine / bare and sdk / engine per tree.

    python bench/bench_loops.py --module stream --roots /tmp/main-src,.
    python bench/bench_loops.py --module ping --pythons python3.11,/tmp/venv312/bin/python   # interpreters

`--pythons`: every loop runs once per interpreter (each with the probe's dependencies installed), interleaved the
same way, for the interpreter choice of the image.
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
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _child(origin: str, loop: str, module: str, agents: int, probes: int, concurrency: int,
           gc_threshold: str | None = None) -> float:
    import probe  # from the tree under test (PYTHONPATH), before fleet.py puts this checkout on the path

    sys.path.insert(0, str(HERE.parent))
    from bench import fleet

    if Path(probe.__file__).resolve().parent.parent != Path(os.environ["PYTHONPATH"]).resolve():
        raise SystemExit(f"imported {probe.__file__}, not the tree under test")
    urls = [f"{origin}/a/{name}" for name in fleet.agent_names(agents)]

    async def run() -> float:
        made = {loop: await fleet.LOOPS[loop][0](urls, module)}
        if gc_threshold:  # every loop alike: the set-up frozen and the collector's thresholds as the daemon's tune_gc
            g0, g1, g2 = (int(x) for x in gc_threshold.split(","))
            gc.collect()
            gc.freeze()
            gc.set_threshold(g0, g1, g2)
        cpu = await fleet.interleaved_cpu(made, probes, 1, concurrency, warmup=concurrency * 2)
        return cpu[loop][0]

    return asyncio.run(run())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--roots", default=".", help="comma-separated source trees for the engine loop")
    ap.add_argument("--module", choices=("ping", "invoke", "stream"), default="stream")
    ap.add_argument("--agents", type=int, default=8, help="agents the loops cycle through (fleet.py: 8)")
    ap.add_argument("--probes", type=int, default=600, help="timed probes per child")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--delay", type=float, default=0.005, help="server-side delay per RPC, s (fleet.py's)")
    ap.add_argument("--pythons", default=sys.executable,
                    help="comma-separated interpreters to run every loop with (default: this one)")
    ap.add_argument("--gc-threshold", metavar="G0,G1,G2",
                    help="every loop with the collector as the daemon tunes it (gc.freeze() after set-up, these "
                         "thresholds; the daemon's: probe.selfmon.GC_THRESHOLD); default: Python's own")
    ap.add_argument("--child", nargs=2, metavar=("ORIGIN", "LOOP"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(_child(args.child[0], args.child[1], args.module, args.agents, args.probes,
                                args.concurrency, args.gc_threshold)))
        return 0
    sys.path.insert(0, str(HERE.parent))
    from bench import fleet

    roots = [str(Path(r.strip()).resolve()) for r in args.roots.split(",") if r.strip()]
    pythons = [p.strip() for p in args.pythons.split(",") if p.strip()]
    trees = [("bare", str(HERE.parent)), ("sdk", str(HERE.parent)), *(("engine", r) for r in roots)]
    entries = [(loop, root, py) for py in pythons for loop, root in trees]
    cpu: dict[tuple[str, str, str], list[float]] = {e: [] for e in entries}
    fp = fleet.FleetProc(args.delay)
    try:
        for n in range(args.rounds):
            order = entries[n % len(entries):] + entries[:n % len(entries)]
            for loop, root, py in (list(reversed(order)) if n % 2 else order):
                cmd = [py, str(Path(__file__).resolve()), "--child", fp.origin, loop,
                       "--module", args.module, "--agents", str(args.agents), "--probes", str(args.probes),
                       "--concurrency", str(args.concurrency)]
                if args.gc_threshold:
                    cmd += ["--gc-threshold", args.gc_threshold]
                out = subprocess.run(cmd, env={**os.environ, "PYTHONPATH": root}, cwd=root, capture_output=True,
                                     text=True, check=False)
                if out.returncode != 0:
                    raise SystemExit(f"{loop} ({root}, {py}) failed:\n{out.stderr[-3000:]}")
                cpu[(loop, root, py)].append(float(out.stdout.strip().splitlines()[-1]))
    finally:
        fp.stop()
    med = {e: statistics.median(v) for e, v in cpu.items()}
    print(f"\n{args.module}, {args.agents} agents, {args.probes} probes x {args.rounds} rounds, concurrency "
          f"{args.concurrency}, delay {args.delay * 1e3:g} ms, GC thresholds {args.gc_threshold or 'default'}; "
          "CPU ms per probe (median round, min-max):")
    def label(py: str) -> str:
        return f", {py}" if len(pythons) > 1 else ""

    for (loop, root, py), v in cpu.items():
        where = f" ({root}{label(py)})" if loop == "engine" else f" ({py})" if len(pythons) > 1 else ""
        print(f"  {loop}{where}: {med[(loop, root, py)]:.3f} ({min(v):.3f}-{max(v):.3f})")
    for py in pythons:
        bare, sdk = med[("bare", str(HERE.parent), py)], med[("sdk", str(HERE.parent), py)]
        for root in roots:
            engine = med[("engine", root, py)]
            print(f"  engine ({root}{label(py)}): {engine / bare:.2f}x bare, {sdk / engine:.2f}x cheaper than sdk")
            # each round's own ratios (the loops of one round ran one after another, in a rotating order): median, range
            e, b, k = cpu[("engine", root, py)], cpu[("bare", str(HERE.parent), py)], cpu[("sdk", str(HERE.parent), py)]
            over_bare = sorted(x / y for x, y in zip(e, b, strict=True))
            cheaper = sorted(y / x for x, y in zip(e, k, strict=True))
            print(f"    rounds' own: {statistics.median(over_bare):.2f}x bare "
                  f"({over_bare[0]:.2f}-{over_bare[-1]:.2f}), "
                  f"{statistics.median(cheaper):.2f}x cheaper than sdk ({cheaper[0]:.2f}-{cheaper[-1]:.2f})")
        if len(roots) > 1:
            first = cpu[("engine", roots[0], py)]
            for root in roots[1:]:
                own = sorted(x / y for x, y in zip(cpu[("engine", root, py)], first, strict=True))
                print(f"  engine ({root}) / ({roots[0]}){label(py)}: rounds' own ratios median "
                      f"{statistics.median(own):.3f} ({own[0]:.3f}-{own[-1]:.3f})")
    if len(pythons) > 1:
        for loop, root, py in entries:
            if py != pythons[0]:
                first = med[(loop, root, pythons[0])]
                print(f"  {loop} ({root}): {py} / {pythons[0]} = {med[(loop, root, py)] / first:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
