#!/usr/bin/env python
"""The probe's own HTTP client per request: ours beside a bare aiohttp loop doing the same exchanges.

One iteration is what the daemon's `ping` probe sends: the card GET over the kept-alive pool, then the
JSON-RPC POST (GetTask) on a fresh connection (ping measures connect and TLS every probe). Loops, all in this
process against the loopback fleet (bench/fleet_agents.py, its own process, so its CPU is not counted):

* `bare`: aiohttp, GET + POST both on keep-alive, bodies read, nothing parsed (bench/fleet.py's floor);
* `bare_fresh`: the same work as ours: GET on keep-alive, POST on a `force_close` session (a new connection);
* `client`: `HttpClient.request` GET (pool) + POST (`ClientConfig(fresh=True)`), with every phase timed;
* `wire`: what the engine calls: `card.discover` + `JsonRpcBinding.call(GetTask)` (card and envelope parsed).

The call's POST alone (the probe's main HTTP cost once the card is cached, RFC 9111):

* `bare_post`: aiohttp with its defaults on a `force_close` session: POST, body read;
* `client_post`: `HttpClient.request` POST with `ClientConfig(fresh=True)`, every phase timed;
* `wire_post`: `JsonRpcBinding.call(GetTask)` on a fresh connection (envelope built and parsed);
* `client_pool_post`, `wire_pool_post`: `client_post`, `wire_post` on the kept-alive pool (`ClientConfig()`, a
  module's `fresh_connection: false`), beside `bare_pool_post`: aiohttp's session POST on its pool;
* `asyncio_post`: no HTTP library: `loop.create_connection`, the request bytes written, the response read up to
  its Content-Length, the transport closed: the event loop's and the kernel's floor for a fresh connection.

`--baseline FILE` adds `baseline`, `baseline_post` and `baseline_pool_post`: the `client` loops on another
probe/wire/http.py.

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
from urllib.parse import urlsplit

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


async def make_bare_post(urls: Sequence[str], pool: bool = False) -> Loop:
    post = aiohttp.ClientSession() if pool else aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(force_close=True, use_dns_cache=False))

    async def probe(i: int) -> None:
        async with post.post(f"{urls[i % len(urls)]}/rpc", data=_body(), headers=RPC_HEADERS) as r:
            body = await r.read()
            if r.status != 200 or not body:
                raise RuntimeError(f"bare_post: GetTask HTTP {r.status}")

    return probe, post.close


async def make_client_post(urls: Sequence[str], module: Any = None, pool: bool = False) -> Loop:
    client = (module or sys.modules[HttpClient.__module__]).HttpClient()
    fresh = (module or sys.modules[HttpClient.__module__]).ClientConfig(fresh=not pool)

    async def probe(i: int) -> None:
        r = await client.request("POST", f"{urls[i % len(urls)]}/rpc", deadline=Deadline.after(10),
                                 headers=RPC_HEADERS, body=_body(), max_bytes=1 << 20, follow_redirects=False,
                                 config=fresh)
        if r.status != 200 or not r.body or (not pool and not r.exchange.phases.connect):
            raise RuntimeError(f"client_post: GetTask HTTP {r.status}")

    return probe, client.close


async def make_wire_post(urls: Sequence[str], pool: bool = False) -> Loop:
    client = HttpClient()
    bindings = [JsonRpcBinding(client, f"{u}/rpc", V1, {}, ClientConfig() if pool else FRESH) for u in urls]

    async def probe(i: int) -> None:
        answer = await bindings[i % len(bindings)].call(Op.GET, {"id": f"ping-{uuid.uuid4()}"},
                                                        deadline=Deadline.after(10))
        if answer.error is None or answer.problem is not None:
            raise RuntimeError(f"wire_post: GetTask did not answer TaskNotFound: {answer.problem}")

    return probe, client.close


class _Answer(asyncio.Protocol):
    """The asyncio floor's protocol: collects bytes until the headers and Content-Length bytes of body are in."""

    def __init__(self, done: asyncio.Future[bytes]) -> None:
        self.done, self.buf = done, b""

    def data_received(self, data: bytes) -> None:
        self.buf += data
        head, sep, rest = self.buf.partition(b"\r\n\r\n")
        if sep and not self.done.done():
            length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                           if line.lower().startswith(b"content-length:")), None)
            if length is not None and len(rest) >= length:
                self.done.set_result(self.buf)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.done.done():
            self.done.set_result(self.buf)


async def make_asyncio_post(urls: Sequence[str]) -> Loop:
    loop = asyncio.get_running_loop()
    targets = [urlsplit(f"{u}/rpc") for u in urls]

    async def probe(i: int) -> None:
        t = targets[i % len(targets)]
        done: asyncio.Future[bytes] = loop.create_future()
        transport, _ = await loop.create_connection(lambda: _Answer(done), t.hostname, t.port)
        body = _body()
        head = "".join(f"{k}: {v}\r\n" for k, v in RPC_HEADERS.items())
        transport.write(f"POST {t.path} HTTP/1.1\r\nHost: {t.netloc}\r\n{head}Connection: close\r\n"
                        f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
        answer = await done
        transport.close()
        if not answer.startswith(b"HTTP/1.1 200"):
            raise RuntimeError("asyncio_post: GetTask not answered 200")

    async def close() -> None:
        return None

    return probe, close


async def run(urls: Sequence[str], probes: int, rounds: int, concurrency: int, loops: Sequence[str],
              baseline: Any = None) -> dict[str, list[float]]:
    makers: dict[str, Callable[[], Awaitable[Loop]]] = {
        "bare": lambda: make_bare(urls, False), "bare_fresh": lambda: make_bare(urls, True),
        "client": lambda: make_client(urls), "wire": lambda: make_wire(urls),
        "baseline": lambda: make_client(urls, baseline),
        "bare_post": lambda: make_bare_post(urls), "client_post": lambda: make_client_post(urls),
        "wire_post": lambda: make_wire_post(urls), "asyncio_post": lambda: make_asyncio_post(urls),
        "baseline_post": lambda: make_client_post(urls, baseline),
        "baseline_pool_post": lambda: make_client_post(urls, baseline, pool=True),
        "bare_pool_post": lambda: make_bare_post(urls, pool=True),
        "client_pool_post": lambda: make_client_post(urls, pool=True),
        "wire_pool_post": lambda: make_wire_post(urls, pool=True)}
    made = {name: await makers[name]() for name in loops}
    return await interleaved_cpu(made, probes, rounds, concurrency, warmup=concurrency * 20, collect=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--probes", type=int, default=4000, help="timed iterations per loop, over all rounds")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--agents", type=int, default=8)
    ap.add_argument("--loops", default="bare,bare_fresh,client,wire,bare_post,client_post,wire_post,asyncio_post")
    ap.add_argument("--baseline", type=Path, help="another probe/wire/http.py (e.g. `git show main:probe/wire/http.py "
                    "> /tmp/http_main.py`): adds loops baseline, baseline_post, baseline_pool_post (client, "
                    "client_post, client_pool_post on it)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    loops = args.loops.split(",")
    baseline = None
    if args.baseline is not None:
        spec = importlib.util.spec_from_file_location("bench_http_baseline", args.baseline)
        assert spec is not None and spec.loader is not None
        baseline = sys.modules[spec.name] = importlib.util.module_from_spec(spec)  # dataclasses look it up
        spec.loader.exec_module(baseline)
        loops += [name for name in ("baseline", "baseline_post", "baseline_pool_post")
                  if name.replace("baseline", "client") in loops]
    fleet = FleetProc(0.0)
    try:
        urls = [fleet.url(n) for n in agent_names(args.agents)]
        cpu = asyncio.run(run(urls, args.probes, args.rounds, args.concurrency, loops, baseline))
    finally:
        fleet.stop()
    med = {k: statistics.median(v) for k, v in cpu.items()}

    def ratio(loop: str, reference: str) -> float | None:
        # a POST-only loop is compared with the POST-only floor, a GET + POST loop with the GET + POST ones
        if reference not in med or loop.endswith("_post") != reference.endswith("_post"):
            return None
        return round(med[loop] / med[reference], 2)

    rows: list[dict[str, Any]] = [
        {"loop": k, "cpu_ms": round(m, 4), "min": round(min(cpu[k]), 4), "max": round(max(cpu[k]), 4),
         **{f"vs_{ref}": ratio(k, ref) for ref in ("bare", "bare_fresh", "bare_post")}}
        for k, m in med.items()]
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print("| loop | CPU ms / iteration (median) | min-max | ÷ bare | ÷ bare_fresh | ÷ bare_post |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        cells = " | ".join("—" if row[f"vs_{ref}"] is None else str(row[f"vs_{ref}"])
                           for ref in ("bare", "bare_fresh", "bare_post"))
        print(f"| {row['loop']} | {row['cpu_ms']:.3f} | {row['min']:.3f}-{row['max']:.3f} | {cells} |")


if __name__ == "__main__":
    main()
