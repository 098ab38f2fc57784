"""Agents that flood their prober, in their own process (their generators must not slow the daemon or the healthy
agents they are compared with): `python -m tests.daemon.flooders` prints their origins as one JSON line, then serves
until killed. Used by tests/daemon/test_neighbours.py."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random

from tests.hostile import servers
from tests.hostile.servers import Request, Writer


async def huge_slow_body(w: Writer, _req: Request) -> None:
    """An endless body with no declared size, 16 KiB every 20 ms (the probe's body bound is reached only after its
    deadline, and no Content-Length lets it refuse the body up front)."""
    w.write(servers.chunked_head("application/json") + servers.chunk(b'{"a": "'))
    while True:
        await w.drain()
        w.write(servers.chunk(b"x" * 16384))
        await asyncio.sleep(0.02)


async def hold(_w: Writer, _req: Request) -> None:
    """Takes the request and never answers: the connection is held open until the prober gives up."""
    await asyncio.Event().wait()


async def stream_forever(w: Writer, req: Request) -> None:
    """Working updates without end (never a terminal state), a batch every few milliseconds."""
    rid = str(req.rpc.get("id"))
    w.write(servers.chunked_head() + servers.chunk(servers.sse_event(rid, servers.task_result("SUBMITTED"))))
    working = servers.sse_event(rid, {"statusUpdate": {"taskId": "t1", "contextId": "c1",
                                                       "status": {"state": "TASK_STATE_WORKING"}}})
    batch = servers.chunk(working * 50)
    while True:
        await w.drain()
        w.write(batch)
        await asyncio.sleep(random.uniform(0.001, 0.005))


FLOODERS = {"huge-slow-body": servers.Hostile(rpc=huge_slow_body), "hold": servers.Hostile(rpc=hold),
            "stream-forever": servers.Hostile(rpc=stream_forever),
            "card-trickle": servers.Hostile(card=servers.trickle)}


async def main() -> None:
    async with contextlib.AsyncExitStack() as stack:
        origins = {name: (await stack.enter_async_context(servers.hostile_agent(b))).origin
                   for name, b in FLOODERS.items()}
        print(json.dumps(origins), flush=True)
        await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main())
