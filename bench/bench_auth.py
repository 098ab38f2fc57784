#!/usr/bin/env python
"""CPU per probe of the engine's auth work for an agent with no credentials configured (issue #14): what
`ProbeRun.validate` does (`authflows.build`, `match`, the interface's origin check) plus one call's
`with_credentials`, over 200 agents' URLs as the daemon sees them probe after probe.

Each round runs one child process per source tree in `--roots` (each holds `probe/`), in rotating order, and
times `--probes` iterations under `time.process_time`; the table gives each tree's median round, the range and the
ratio to the first tree. Run: ``python bench/bench_auth.py --roots /tmp/before,.`` (a few seconds).
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def child(probes: int) -> float:
    from probe.target import AuthSpec
    from probe.trust import auth as authflows
    from probe.wire.http import ClientConfig, with_credentials

    spec, tls = AuthSpec(), ClientConfig()
    headers = {"A2A-Version": "1.0", "Content-Type": "application/json"}
    urls = [f"http://127.0.0.1:{9000 + i}/agents/a{i}" for i in range(200)]
    docs = {u: {"name": "a", "url": f"{u}/", "supportedInterfaces": [{"url": f"{u}/rpc"}]} for u in urls}

    def probe(url: str) -> None:
        doc = docs[url]
        flow = authflows.build(spec, doc, [url, url, f"{url}/.well-known/agent-card.json"], tls)
        authflows.match(doc, spec)
        if not flow.allows(f"{url}/rpc") and (authflows.configured_kinds(spec) or spec.headers):
            raise AssertionError("the agent's own origin")
        with_credentials(f"{url}/rpc", headers, flow)

    for u in urls:  # warm, as in the daemon
        probe(u)
    gc.collect()
    t0 = time.process_time()
    for i in range(probes):
        probe(urls[i % len(urls)])
    return (time.process_time() - t0) / probes


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--roots", default=".", help="comma-separated source trees to compare (each holds probe/)")
    ap.add_argument("--probes", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(child(args.probes))
        return
    roots = [str(Path(r).resolve()) for r in args.roots.split(",")]
    runs: dict[str, list[float]] = {r: [] for r in roots}
    for n in range(args.rounds):
        order = roots[n % len(roots):] + roots[:n % len(roots)]
        for root in order:
            env = {**os.environ, "PYTHONPATH": root}
            out = subprocess.run([sys.executable, __file__, "--child", "--probes", str(args.probes)], env=env,
                                 cwd=root, check=True, capture_output=True, text=True).stdout
            runs[root].append(float(out) * 1e6)
    first = statistics.median(runs[roots[0]])
    print(f"auth work of a no-auth probe, {args.probes} probes x {args.rounds} rounds; CPU us a probe "
          "(median round, min-max):")
    for root in roots:
        med = statistics.median(runs[root])
        print(f"  {root}: {med:.2f} ({min(runs[root]):.2f}-{max(runs[root]):.2f})  x{med / first:.3f}")


if __name__ == "__main__":
    main()
