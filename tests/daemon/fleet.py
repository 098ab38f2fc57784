"""A small loopback fleet for the scheduler's own measurements and tests.

One demo agent in a child process (so its CPU is not the daemon's) and N configured agents that all
point at it, like agents behind one gateway. `python -m tests.daemon.fleet N SECONDS INTERVAL` runs the
daemon in this process against it and prints one JSON line: series per agent, scrape time, event-loop
lag p99, scheduler lateness p99, slot waits, skipped runs, RSS and its growth, GC pauses. The full
fleet benchmark with SDK and bare-loop comparisons is bench/ (engineer "fleet"); this is the quick one.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import yaml

_AGENT = """
import asyncio, sys
from probe.demo.agent import DemoAgent
async def main():
    a = DemoAgent("fleet")
    origin = await a.start()
    print(origin, flush=True)
    await asyncio.Event().wait()
asyncio.run(main())
"""


@contextlib.contextmanager
def agent_process() -> Any:
    """A demo agent in a child process; yields its origin."""
    proc = subprocess.Popen([sys.executable, "-c", _AGENT], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        origin = proc.stdout.readline().strip()
        if not origin.startswith("http://127.0.0.1:"):
            raise RuntimeError(f"agent did not start: {origin!r}")
        yield origin
    finally:
        proc.terminate()
        proc.wait(5)


def fleet_config(path: Path, origin: str, n: int, interval: float, timeout: float, **extra: Any) -> Path:
    doc = {"modules": {"ping": {"prober": "ping", "interval": f"{interval}s", "timeout": f"{timeout}s"}},
           "agents": [{"name": f"agent-{i:05d}", "url": origin} for i in range(n)], **extra}
    path.write_text(yaml.safe_dump(doc))
    return path


def rss_mib() -> float:
    with open(f"/proc/{os.getpid()}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def series(text: str) -> int:
    return sum(1 for line in text.splitlines() if line and not line.startswith("#"))


async def scrape(url: str) -> tuple[float, str]:
    t0 = time.perf_counter()
    async with aiohttp.ClientSession() as s, s.get(url + "/metrics") as r:
        body = await r.text()
    return time.perf_counter() - t0, body


@contextlib.asynccontextmanager
async def lag_sampler(period: float = 0.05) -> AsyncIterator[list[float]]:
    """Independent of the daemon's own lag metric, so 'before' and 'after' are measured the same way."""
    samples: list[float] = []
    loop = asyncio.get_running_loop()

    async def run() -> None:
        while True:
            t0 = loop.time()
            await asyncio.sleep(period)
            samples.append(loop.time() - t0 - period)

    task = asyncio.create_task(run())
    try:
        yield samples
    finally:
        task.cancel()


def pct(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


async def measure(n: int, seconds: float, interval: float, workdir: Path) -> dict[str, Any]:
    from probe.config import Settings, load
    from probe.daemon import Daemon

    with agent_process() as origin:
        path = fleet_config(workdir / "fleet.yaml", origin, n, interval, min(5.0, interval))
        config, sha = load(path)
        d = Daemon(Settings(config_file=path, listen_address="127.0.0.1:0", log_level="warning"), config, sha, path)
        pauses: list[float] = []
        t_gc = [0.0]

        def gc_cb(phase: str, _info: dict[str, Any]) -> None:
            if phase == "start":
                t_gc[0] = time.perf_counter()
            else:
                pauses.append(time.perf_counter() - t_gc[0])

        gc.callbacks.append(gc_cb)
        cpu0 = time.process_time()
        async with lag_sampler() as lag:
            await d.start()
            url = f"http://{d.bound[0]}"
            try:
                await asyncio.sleep(min(seconds / 3, 2 * interval))
                rss_warm = rss_mib()
                t_warm = time.monotonic()
                scrape_times = []
                while time.monotonic() - t_warm < seconds:
                    took, body = await scrape(url)
                    scrape_times.append(took)
                    await asyncio.sleep(max(0.0, 5.0 - took))
                rss_end = rss_mib()
                minutes = (time.monotonic() - t_warm) / 60
            finally:
                await d.stop()
                gc.callbacks.remove(gc_cb)
        cpu = time.process_time() - cpu0
    runs = failures = 0.0
    skipped = 0.0
    for line in body.splitlines():
        if line.startswith("a2a_probe_runs_total{"):
            runs += float(line.rsplit(" ", 1)[1])
        elif line.startswith("a2a_probe_failures_total{"):
            failures += float(line.rsplit(" ", 1)[1])
        elif line.startswith("a2a_probe_scheduler_missed_runs_total{"):
            skipped += float(line.rsplit(" ", 1)[1])
    total = series(body)
    own = sum(1 for line in body.splitlines() if line.startswith("a2a_probe_") and 'agent="agent-00000"' in line
              and "_created" not in line.split("{")[0])
    return {
        "agents": n, "interval_s": interval, "seconds": seconds, "series_total": total,
        "series_per_agent": own, "scrape_s_p50": round(pct(scrape_times, 0.5), 3),
        "scrape_s_max": round(max(scrape_times), 3), "loop_lag_p99_s": round(pct(lag, 0.99), 4),
        "loop_lag_max_s": round(max(lag, default=0), 4), "runs": runs, "failures": failures,
        "missed_or_skipped": skipped, "cpu_s": round(cpu, 1), "cpu_ms_per_run": round(1000 * cpu / max(runs, 1), 2),
        "rss_warm_mib": round(rss_warm, 1), "rss_growth_mib_per_min": round((rss_end - rss_warm) / minutes, 1),
        "gc_pause_p99_s": round(pct(pauses, 0.99), 4), "gc_pause_max_s": round(max(pauses, default=0), 4),
    }


if __name__ == "__main__":
    import tempfile

    n, secs, ivl = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
    if "--no-gc-tuning" in sys.argv:  # the A/B of probe.selfmon.tune_gc
        import probe.selfmon

        probe.selfmon.tune_gc = lambda collect=True: None  # type: ignore[assignment]
    for arg in sys.argv:
        if arg.startswith("--gc="):  # e.g. --gc=20000,20,50: another young-generation threshold
            import probe.selfmon

            probe.selfmon.GC_THRESHOLD = tuple(int(x) for x in arg[5:].split(","))  # type: ignore[assignment]
    with tempfile.TemporaryDirectory() as tmp:
        print(json.dumps(asyncio.run(measure(n, secs, ivl, Path(tmp)))))
