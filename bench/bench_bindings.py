"""Client CPU per probe on each binding (JSON-RPC, HTTP+JSON, gRPC), ours beside the official SDK client.

One process, one reference agent (the Python SDK peer, which serves all three bindings), loops interleaved
round by round; the unit is one card fetch plus one SendMessage to a COMPLETED task. CPU is the process's
(client and loop; the peer is another process). Reported as ratios to ours on JSON-RPC, never asserted.

    python bench/bench_bindings.py --iterations 100
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from probe.engine import run_probe
from probe.results import StepName
from probe.target import Target
from probe.wire.http import HttpClient
from tests.peers.harness import Peer, start_peer

BINDINGS = {"jsonrpc": "JSONRPC", "http_json": "HTTP+JSON", "grpc": "GRPC"}
Probe = Callable[[], Awaitable[None]]


async def ours(peer: Peer, client: HttpClient, binding: str) -> Probe:
    target = Target(name="bench", url=peer.base_url, binding=BINDINGS[binding], message="bench")  # type: ignore[arg-type]

    async def probe() -> None:
        r = await run_probe(target, client, steps=(StepName.INVOKE,))
        if not r.success:
            raise RuntimeError(f"ours/{binding}: {r.reason}")

    return probe


async def sdk(peer: Peer, binding: str) -> Probe | None:
    """The official client, restricted to one binding (None where it cannot be built here)."""
    try:
        import httpx
        from a2a.client import A2ACardResolver, ClientConfig, create_client
        from a2a.helpers import new_text_message
        from a2a.types.a2a_pb2 import Role, SendMessageRequest
    except ImportError:
        return None
    hx = httpx.AsyncClient(trust_env=False)
    try:
        import grpc.aio

        client = await create_client(peer.base_url, ClientConfig(
            httpx_client=hx, streaming=False, supported_protocol_bindings=[BINDINGS[binding]],
            grpc_channel_factory=grpc.aio.insecure_channel))
    except Exception as exc:  # e.g. no gRPC channel factory configured
        print(f"  sdk/{binding}: not measured ({type(exc).__name__}: {str(exc)[:80]})", file=sys.stderr)
        return None

    resolver = A2ACardResolver(hx, peer.base_url)

    async def probe() -> None:  # the same unit as ours: the card, then one send to the end
        await resolver.get_agent_card()
        request = SendMessageRequest(message=new_text_message("bench", role=Role.ROLE_USER))
        async for _ in client.send_message(request):
            pass

    return probe


async def cpu_per_probe(probe: Probe, n: int) -> float:
    t0 = time.process_time()
    for _ in range(n):
        await probe()
    return (time.process_time() - t0) / n * 1000


async def run(iterations: int, rounds: int) -> dict[str, float]:
    peer = start_peer("python")
    try:
        async with HttpClient() as client:
            loops: dict[str, Probe] = {}
            for b in BINDINGS:
                loops[f"ours/{b}"] = await ours(peer, client, b)
                s = await sdk(peer, b)
                if s is not None:
                    loops[f"sdk/{b}"] = s
            for probe in loops.values():  # warm up every loop once
                await cpu_per_probe(probe, 5)
            samples: dict[str, list[float]] = {k: [] for k in loops}
            for _ in range(rounds):
                for name, probe in loops.items():
                    samples[name].append(await cpu_per_probe(probe, max(1, iterations // rounds)))
            return {k: statistics.median(v) for k, v in samples.items()}
    finally:
        peer.stop()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--iterations", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    ms = asyncio.run(run(args.iterations, args.rounds))
    base = ms["ours/jsonrpc"]
    print("| loop | CPU ms per probe | ratio to ours/jsonrpc |\n|---|---|---|")
    for name, value in ms.items():
        print(f"| {name} | {value:.2f} | {value / base:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
