"""The card cache (probe.wire.cardcache) against fetching the card every probe: the engine's ping over N distinct
fleet agents (bench/fleet_agents.py in its own process), CPU ms a probe on the process clock, interleaved rounds
(bench.fleet.interleaved_cpu), and the probe's measured duration and discover step (wall, medians).

    python bench/bench_cardcache.py --agents 2000 --rounds 6
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.fleet import FleetProc, Probe, interleaved_cpu
from probe.engine import run_interfaces
from probe.results import StepName
from probe.target import Target
from probe.wire.cardcache import CardCache
from probe.wire.http import HttpClient


async def main(agents: int, rounds: int, concurrency: int) -> dict[str, Any]:
    fleet = FleetProc(0.0)
    try:
        targets = [Target(name=f"a{i}", url=fleet.url(f"a{i}"), timeout=10, fresh_connection=True)
                   for i in range(agents)]
        seen: dict[str, tuple[list[float], list[float]]] = {}

        async def make(name: str, cards: CardCache | None) -> tuple[Probe, Any]:
            client = HttpClient(limit=4 * concurrency)
            durations: tuple[list[float], list[float]] = ([], [])
            seen[name] = durations

            async def probe(i: int) -> None:
                r = await run_interfaces(targets[i % agents], client, steps=(StepName.PING,), agree=False,
                                         cards=cards)
                assert r.success, r.reason
                step = r.step(StepName.DISCOVER)
                durations[0].append(r.duration_s * 1e3)
                durations[1].append((step.duration_s if step else 0.0) * 1e3)

            return probe, client.close

        made = {"card fetched every probe": await make("card fetched every probe", None),
                "card cached (max-age=300)": await make("card cached (max-age=300)", CardCache(default_max_age=300))}
        cpu = await interleaved_cpu(made, agents * rounds, rounds, concurrency, warmup=agents)
    finally:
        fleet.stop()
    out: dict[str, Any] = {}
    for name, values in cpu.items():
        duration, discover = seen[name]
        out[name] = {"cpu_ms": round(statistics.median(values), 4), "rounds": [round(v, 4) for v in values],
                     "duration_ms_p50": round(statistics.median(duration[agents:]), 3),
                     "discover_ms_p50": round(statistics.median(discover[agents:]), 3)}
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--agents", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--concurrency", type=int, default=8)
    a = ap.parse_args()
    result = asyncio.run(main(a.agents, a.rounds, a.concurrency))
    print("| loop | CPU ms a ping (median of rounds) | rounds | duration p50 ms | discover step p50 ms |")
    print("|---|---|---|---|---|")
    for name, row in result.items():
        print(f"| {name} | {row['cpu_ms']} | {row['rounds']} | {row['duration_ms_p50']} | {row['discover_ms_p50']} |")
