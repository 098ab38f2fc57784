#!/usr/bin/env python
"""`/metrics` of a large fleet's state: what a scrape costs, and what it does to the event loop around it.

A child process per tree builds `Metrics` with N agents of the lean default set (each agent x `ping` recorded once
from a realistic result: the JSON-RPC interface, discover and ping steps, 2 % failing), then measures:

* the render alone, idle, on the CPU clock (`process_time`, every thread): the text (OpenMetrics, as Prometheus
  asks first) without and with gzip;
* a scrape on a saturated loop: the daemon's own `/metrics` handler (`probe.web.metrics`) on an aiohttp server,
  the loop kept busy by a coroutine that records results (`Metrics.observe` of random agents, as finished probes
  are, plus Python work standing for the probes themselves) and never lets the loop idle; `curl` in its own
  process asks as Prometheus does (the Accept header, `Accept-Encoding: gzip`; `--identity`: without) and reports
  its time to the last byte. Around each scrape: the loop's lag (a 5 ms timer's lateness, p99 and max) and the busy
  coroutine's records per second, during the scrape against as long a window just before it.

`--against REF` (and `--tree REF`): a git revision's `probe/` side by side, one child per tree, alternating order,
each round. Run: ``python bench/bench_scrape.py --agents 10000,50000 --rounds 3 --against main``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
ACCEPT = ("application/openmetrics-text;version=1.0.0;escaping=allow-utf-8,"
          "application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1")


def _results(n: int) -> list[Any]:
    from probe.reasons import Reason
    from probe.results import InterfaceResult, ProbeResult, Status, StepName, StepResult

    out = []
    for i in range(n):
        ok = i % 50 != 0
        steps = [StepResult(name=StepName.DISCOVER, status=Status.PASS, duration_s=0.0004, http_status=200),
                 StepResult(name=StepName.PING, status=Status.PASS if ok else Status.FAIL,
                            duration_s=0.006 + (i % 7) * 0.001, http_status=200 if ok else 500)]
        reason = None if ok else Reason.INVOKE_UNEXPECTED_STATUS
        iface = InterfaceResult(binding="jsonrpc", protocol_binding="JSONRPC", protocol_version="1.0",
                                success=ok, reason=reason, duration_s=steps[1].duration_s, steps=steps[1:])
        out.append(ProbeResult(agent=f"agent-{i:06d}", target_url=f"http://127.0.0.1:1234/a/agent-{i:06d}",
                               protocol_version="1.0", binding="JSONRPC", card_version="1.0.0", success=ok,
                               reason=reason, duration_s=steps[1].duration_s, steps=steps, interfaces=[iface]))
    return out


def _state(n: int) -> tuple[Any, list[Any]]:
    from probe.metrics import Metrics

    m = Metrics([0.25, 1, 5], [])
    results = _results(n)
    for r in results:
        m.add_job(r.agent, "ping", 60, 10)
        m.observe("ping", r)
    getattr(m, "flush", lambda: None)()  # what waits written (trees that batch the writes)
    return m, results


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else 0.0


async def _saturated(m: Any, results: list[Any], scrapes: int, identity: bool = False) -> dict[str, float]:
    from aiohttp import web

    from probe import web as probe_web

    app = web.Application()
    app[probe_web.DAEMON] = type("D", (), {"metrics": m})()  # type: ignore[assignment]
    app.router.add_get("/metrics", probe_web.metrics)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    loop = asyncio.get_running_loop()
    stop = False
    records: list[float] = []  # loop time of each burst of 4 records (kept cheap: an append)
    lags: list[tuple[float, float]] = []  # (when, lateness)
    rng = random.Random(1)

    async def busy() -> None:
        while not stop:
            for _ in range(4):
                m.observe("ping", results[rng.randrange(len(results))])
                sum(i * i for i in range(150))  # the probe's own Python work between records
            records.append(loop.time())
            await asyncio.sleep(0)

    async def sampler() -> None:
        while not stop:
            t = loop.time()
            await asyncio.sleep(0.005)
            lags.append((t, loop.time() - t - 0.005))

    tasks = [asyncio.ensure_future(busy()), asyncio.ensure_future(sampler())]
    windows: list[tuple[float, float, float, str]] = []
    try:
        await asyncio.sleep(1.0)
        for _ in range(scrapes):
            c0 = time.process_time()
            t0 = loop.time()
            proc = await asyncio.create_subprocess_exec(
                "curl", "-s", "-o", "/dev/null", "-H", f"Accept: {ACCEPT}",
                "-H", "Accept-Encoding: identity" if identity else "Accept-Encoding: gzip",
                "-w", "%{time_total} %{size_download}", f"http://127.0.0.1:{port}/metrics",
                stdout=subprocess.PIPE)
            stdout, _ = await proc.communicate()
            t1 = loop.time()
            windows.append((t0, t1, time.process_time() - c0, stdout.decode()))
            await asyncio.sleep(1.0 + t1 - t0)  # the next window "before" holds nothing of this scrape
    finally:
        stop = True
        await asyncio.gather(*tasks)
        await runner.cleanup()
    out: list[dict[str, float]] = []
    for t0, t1, cpu, curl in windows:  # counted after the loop stopped: no stall of the bench's own in a window
        total, size = curl.split()
        span = t1 - t0
        during = [lag for t, lag in lags if t0 <= t < t1]
        before = [lag for t, lag in lags if t0 - span <= t < t0]
        out.append({"scrape_s": float(total), "gz_mib": int(size) / 2**20, "cpu_s": cpu,
                    "lag_p99_ms": 1e3 * _pct(during, 0.99), "lag_max_ms": 1e3 * max(during, default=0.0),
                    "lag_p99_before_ms": 1e3 * _pct(before, 0.99),
                    "lag_max_before_ms": 1e3 * max(before, default=0.0),
                    "records_per_s": 4 * sum(1 for t in records if t0 <= t < t1) / span,
                    "records_per_s_before": 4 * sum(1 for t in records if t0 - span <= t < t0) / span})
    return {k: statistics.median(o[k] for o in out) for k in out[0]}


def child(agents: int, scrapes: int, identity: bool = False) -> dict[str, float]:
    import gc

    m, results = _state(agents)
    gc.collect()
    gc.freeze()  # as the daemon does with its lasting state
    import probe.selfmon

    gc.set_threshold(*probe.selfmon.GC_THRESHOLD)  # the tree's own, as its daemon's tune_gc sets it
    om = "application/openmetrics-text;version=1.0.0"
    render, gz = [], []
    size = 0
    for _ in range(3):
        t = time.process_time()
        body, _, _ = m._render(om, False, ())
        render.append(time.process_time() - t)
        size = len(body)
        del body
        t = time.process_time()
        m._render(om, True, ())
        gz.append(time.process_time() - t)
    out = {"render_ms": 1e3 * statistics.median(render), "render_gzip_ms": 1e3 * statistics.median(gz),
           "mib": size / 2**20}
    out.update(asyncio.run(_saturated(m, results, scrapes, identity)))
    m.close()
    return out


def _tree(ref: str, into: Path) -> Path:
    data = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "probe"], check=True, capture_output=True).stdout
    into.mkdir(parents=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=data, check=True)
    return into


def _run(tree: Path, agents: int, scrapes: int, identity: bool) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run([sys.executable, __file__, "--child", "--agents", str(agents), "--scrapes", str(scrapes),
                           *(["--identity"] if identity else [])], env=env, capture_output=True, text=True, cwd=tree)
    if done.returncode:
        raise SystemExit(f"the child of {tree} failed: {done.stderr[-2000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


COLUMNS = ("mib", "render_ms", "render_gzip_ms", "scrape_s", "gz_mib", "cpu_s", "lag_p99_before_ms", "lag_p99_ms",
           "lag_max_before_ms", "lag_max_ms", "records_per_s_before", "records_per_s")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--agents", default="10000,50000")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--scrapes", type=int, default=3, help="scrapes on the saturated loop per child (median)")
    p.add_argument("--against", metavar="REF")
    p.add_argument("--tree", metavar="REF")
    p.add_argument("--identity", action="store_true", help="scrape without gzip (Accept-Encoding: identity)")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        print(json.dumps(child(int(args.agents), args.scrapes, args.identity)))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        trees = {"this tree": ROOT} if not args.tree else {args.tree: _tree(args.tree, Path(tmp) / "tree")}
        if args.against:
            trees[args.against] = _tree(args.against, Path(tmp) / "against")
        for n in (int(a) for a in args.agents.split(",")):
            runs: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
            for i in range(args.rounds):
                for name in (list(trees) if i % 2 == 0 else list(reversed(trees))):
                    runs[name].append(_run(trees[name], n, args.scrapes, args.identity))
            print(f"\n{n:,} agents, {args.rounds} rounds (median of the rounds; a round: the median of "
                  f"{args.scrapes} scrapes)")
            print("| tree | " + " | ".join(COLUMNS) + " |")
            print("|---|" + "---|" * len(COLUMNS))
            for name, rs in runs.items():
                print(f"| {name} | " + " | ".join(f"{statistics.median(r[c] for r in rs):.2f}" for c in COLUMNS)
                      + " |")
            if len(runs) == 2:
                ours, base = runs.values()
                for c in ("render_ms", "render_gzip_ms", "scrape_s", "lag_p99_ms", "lag_max_ms"):
                    ratios = [a[c] / b[c] for a, b in zip(ours, base, strict=True) if b[c]]
                    print(f"{c}: median of the rounds' own ratios x {statistics.median(ratios):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
