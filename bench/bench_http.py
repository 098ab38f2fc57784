#!/usr/bin/env python
"""The probe's own HTTP client per request: ours beside a bare aiohttp loop doing the same exchanges.

One iteration is what the daemon's `ping` probe sends: the card GET over the kept-alive pool, then the
JSON-RPC POST (GetTask) on a fresh connection (ping measures connect and TLS every probe). Loops, all in this
process against the loopback fleet (bench/fleet_agents.py, its own process, so its CPU is not counted):

* `bare`: aiohttp, GET + POST both on keep-alive, bodies read, nothing parsed (bench/fleet.py's floor);
* `bare_fresh`: the same work as ours: GET on keep-alive, POST on a `force_close` session (a new connection);
* `client`: `HttpClient.request` GET (pool) + POST (`ClientConfig(fresh=True)`), with every phase timed;
* `wire`: what the engine calls: `card.discover` + `JsonRpcBinding.call(GetTask)` (card and envelope parsed).

CPU is `time.process_time()` of this process around each batch, interleaved rounds (order rotating and
alternating), `gc.collect()` untimed before each batch; the table shows the median round, min-max and the
ratio to each bare loop. Nothing asserts on timings.

Run: ``python bench/bench_http.py [--probes 4000] [--rounds 8] [--concurrency 4] [--json]``
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import statistics
import sys
import uuid
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import aiohttp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.fleet import FleetProc, agent_names, interleaved_cpu  # noqa: E402
from probe.wire import card as cardwire  # noqa: E402
from probe.wire.bindings.base import Op  # noqa: E402
from probe.wire.bindings.jsonrpc import JsonRpcBinding  # noqa: E402
from probe.wire.dialects import V1  # noqa: E402
from probe.wire.http import ClientConfig, Deadline, HttpClient  # noqa: E402

Probe = Callable[[int], Awaitable[None]]
Loop = tuple[Probe, Callable[[], Awaitable[None]]]
CARD_HEADERS = {"A2A-Version": "1.0"}
RPC_HEADERS = {"Content-Type": "application/json", "Accept": "application/json", "A2A-Version": "1.0"}
FRESH = ClientConfig(fresh=True)


def _body() -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": str(uuid.uuid4()), "method": "GetTask",
                       "params": {"id": f"ping-{uuid.uuid4()}"}}).encode()


async def make_bare(urls: Sequence[str], fresh: bool) -> Loop:
    pool = aiohttp.ClientSession()
    post = aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True, use_dns_cache=False)) \
        if fresh else pool

    async def probe(i: int) -> None:
        base = urls[i % len(urls)]
        async with pool.get(f"{base}/.well-known/agent-card.json", headers=CARD_HEADERS) as r:
            body = await r.read()
            if r.status != 200 or not body:
                raise RuntimeError(f"bare: card HTTP {r.status}")
        async with post.post(f"{base}/rpc", data=_body(), headers=RPC_HEADERS) as r:
            body = await r.read()
            if r.status != 200 or not body:
                raise RuntimeError(f"bare: GetTask HTTP {r.status}")

    async def close() -> None:
        await pool.close()
        if post is not pool:
            await post.close()

    return probe, close


async def make_client(urls: Sequence[str], module: Any = None) -> Loop:
    """`module`: another version of probe/wire/http.py, loaded by --baseline (the same loop, before a change)."""
    client = (module or sys.modules[HttpClient.__module__]).HttpClient()
    fresh = FRESH if module is None else module.ClientConfig(fresh=True)

    async def probe(i: int) -> None:
        base = urls[i % len(urls)]
        deadline = Deadline.after(10)
        r = await client.request("GET", f"{base}/.well-known/agent-card.json", deadline=deadline,
                                 headers=CARD_HEADERS, max_bytes=1 << 20)
        if r.status != 200 or not r.body:
            raise RuntimeError(f"client: card HTTP {r.status}")
        r = await client.request("POST", f"{base}/rpc", deadline=deadline, headers=RPC_HEADERS, body=_body(),
                                 max_bytes=1 << 20, follow_redirects=False, config=fresh)
        if r.status != 200 or not r.body or not r.exchange.phases.connect:
            raise RuntimeError(f"client: GetTask HTTP {r.status}")

    return probe, client.close


async def make_wire(urls: Sequence[str]) -> Loop:
    client = HttpClient()
    dialect = V1

    async def probe(i: int) -> None:
        base = urls[i % len(urls)]
        deadline = Deadline.after(10)
        card = await cardwire.discover(client, base, None, deadline=deadline, headers=dict(CARD_HEADERS),
                                       allow_cross_origin_redirect=False, record=cardwire.Discovery())
        binding = JsonRpcBinding(client, card.interfaces[0].url, dialect, {}, FRESH)
        answer = await binding.call(Op.GET, {"id": f"ping-{uuid.uuid4()}"}, deadline=deadline)
        if answer.error is None or answer.problem is not None:
            raise RuntimeError(f"wire: GetTask did not answer TaskNotFound: {answer.problem}")

    return probe, client.close


async def run(urls: Sequence[str], probes: int, rounds: int, concurrency: int, loops: Sequence[str],
              baseline: Any = None) -> dict[str, list[float]]:
    makers: dict[str, Callable[[], Awaitable[Loop]]] = {
        "bare": lambda: make_bare(urls, False), "bare_fresh": lambda: make_bare(urls, True),
        "client": lambda: make_client(urls), "wire": lambda: make_wire(urls),
        "baseline": lambda: make_client(urls, baseline)}
    made = {name: await makers[name]() for name in loops}
    return await interleaved_cpu(made, probes, rounds, concurrency, warmup=concurrency * 20, collect=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--probes", type=int, default=4000, help="timed iterations per loop, over all rounds")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--agents", type=int, default=8)
    ap.add_argument("--loops", default="bare,bare_fresh,client,wire")
    ap.add_argument("--baseline", type=Path, help="another probe/wire/http.py (e.g. `git show main:probe/wire/http.py "
                    "> /tmp/http_main.py`): adds the loop `baseline`, the `client` loop on that version")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    loops = args.loops.split(",")
    baseline = None
    if args.baseline is not None:
        spec = importlib.util.spec_from_file_location("bench_http_baseline", args.baseline)
        assert spec is not None and spec.loader is not None
        baseline = sys.modules[spec.name] = importlib.util.module_from_spec(spec)  # dataclasses look it up
        spec.loader.exec_module(baseline)
        loops.append("baseline")
    fleet = FleetProc(0.0)
    try:
        urls = [fleet.url(n) for n in agent_names(args.agents)]
        cpu = asyncio.run(run(urls, args.probes, args.rounds, args.concurrency, loops, baseline))
    finally:
        fleet.stop()
    med = {k: statistics.median(v) for k, v in cpu.items()}
    rows: list[dict[str, Any]] = [
        {"loop": k, "cpu_ms": round(m, 4), "min": round(min(cpu[k]), 4), "max": round(max(cpu[k]), 4),
         "vs_bare": round(m / med["bare"], 2) if "bare" in med else None,
         "vs_bare_fresh": round(m / med["bare_fresh"], 2) if "bare_fresh" in med else None}
        for k, m in med.items()]
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print("| loop | CPU ms / iteration (median) | min-max | ÷ bare | ÷ bare_fresh |")
    print("|---|---|---|---|---|")
    for row in rows:
        print(f"| {row['loop']} | {row['cpu_ms']:.3f} | {row['min']:.3f}-{row['max']:.3f} | {row['vs_bare']} | "
              f"{row['vs_bare_fresh']} |")


if __name__ == "__main__":
    main()
