#!/usr/bin/env python
"""CPU cost per probe of three A2A client loops, side by side, against the same local SDK agent.

Loops (one "probe" = one card fetch + one task to completion):

* ``bare``: aiohttp, GET the card, POST SendMessage/SendStreamingMessage, read the body to EOF. No parsing.
* ``ours``: ``probe.engine.run_probe`` with every check on (discover + validate + invoke/stream).
* ``sdk``:  the official a2a-sdk client: fetch + parse the card, send the message, consume every event.

Only the client's CPU is measured (``time.process_time`` deltas); the agent is a separate subprocess.
Loops run interleaved in rounds with rotating order, and the median per-round cost is reported.
Nothing here asserts on timings: it is a measuring tool, not a test.

Run: ``python bench/bench_probe.py [--agent python|js] [--mode stream|invoke] [--iterations 200]
[--warmup 20] [--rounds 5] [--json] [--profile]``. See bench/README.md.
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
import resource
import statistics
import sys
import time
import tracemalloc
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

import aiohttp
import httpx
from a2a.client import A2ACardResolver, ClientConfig, create_client
from a2a.helpers import new_text_message
from a2a.types.a2a_pb2 import Role, SendMessageRequest, StreamResponse, TaskState

# Run as a plain script: the peers harness lives in tests/, which is not an installed package.
ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from probe.engine import run_probe  # noqa: E402
from probe.results import StepName  # noqa: E402
from probe.target import Target  # noqa: E402
from probe.wire.http import HttpClient  # noqa: E402
from tests.peers.harness import Peer, start_peer  # noqa: E402

Mode = Literal["stream", "invoke"]
AGENTS: tuple[str, ...] = ("python", "js")
MODES: tuple[Mode, ...] = ("stream", "invoke")
LOOP_ORDER = ("bare", "ours", "sdk")
MESSAGE = "a2a-probe health check"  # the peers' default branch: WORKING, artifact, COMPLETED
HTTP_TIMEOUT = 30.0  # a per-request safety net so a wedged peer cannot hang the run; never a measurement
TRACE_WINDOW = 100  # untimed tracemalloc pass for ours: probes per window
TRACE_WINDOWS = 3  # the first window absorbs cache fill; later ones show a leak if there is one
TRACE_SETTLE = 20


class BenchError(RuntimeError):
    """A loop did not complete a probe; its numbers would be meaningless."""


@dataclass
class Loop:
    name: str
    probe: Callable[[], Awaitable[None]]
    close: Callable[[], Awaitable[None]]
    note: str = ""


@dataclass
class Row:
    agent: str
    mode: str
    loop: str
    cpu_ms: float  # median over rounds of per-probe CPU
    cpu_ms_min: float
    cpu_ms_max: float
    wall_ms: float  # median over rounds of per-probe wall time
    ratio_vs_bare: float = 0.0
    ratio_vs_sdk: float = 0.0
    maxrss_growth_kib: int = 0  # ru_maxrss increase while this loop was the one running
    probes: int = 0
    note: str = ""


@dataclass
class Memory:
    agent: str
    mode: str
    maxrss_before_kib: int
    maxrss_after_kib: int
    rss_before_kib: int
    rss_after_kib: int
    ours_window: int = 0
    ours_growth_per_window: list[int] = field(default_factory=list)  # traced bytes gained per window
    ours_steady_bytes_per_probe: float = 0.0  # mean growth per probe after the first window
    ours_traced_peak_kib: float = 0.0


@dataclass
class CaseResult:
    rows: list[Row] = field(default_factory=list)
    memory: Memory | None = None


# ---- the three loops


def _steps(mode: Mode) -> tuple[StepName, ...]:
    return (StepName.STREAM,) if mode == "stream" else (StepName.INVOKE,)


async def make_ours(peer: Peer, mode: Mode) -> Loop:
    # One HttpClient for all iterations and one frozen Target, exactly as the daemon holds them.
    client = HttpClient()
    target = Target(name=f"bench-{peer.kind}", url=peer.base_url, message=MESSAGE)
    steps = _steps(mode)

    async def probe() -> None:
        result = await run_probe(target, client, steps=steps)
        if not result.success:
            raise BenchError(f"ours: probe failed: {result.reason} {[s.detail for s in result.steps]}")

    return Loop("ours", probe, client.close, "run_probe, all checks, shared HttpClient")


async def make_sdk(peer: Peer, mode: Mode) -> Loop:
    # trust_env=False: never route loopback traffic through a proxy from the environment.
    hx = httpx.AsyncClient(trust_env=False, timeout=HTTP_TIMEOUT)
    try:
        # The SDK client is reusable (BaseClient holds the transport; a shared httpx client is not closed
        # by it), so it is built once; each iteration still fetches and parses the card, as the unit requires.
        client = await create_client(peer.base_url, ClientConfig(httpx_client=hx, streaming=mode == "stream"))
    except BaseException:
        await hx.aclose()
        raise
    resolver = A2ACardResolver(hx, peer.base_url)

    async def probe() -> None:
        await resolver.get_agent_card()
        request = SendMessageRequest(message=new_text_message(MESSAGE, role=Role.ROLE_USER))
        last: StreamResponse | None = None
        async for event in client.send_message(request):
            last = event
        if last is None or _sdk_state(last) != TaskState.TASK_STATE_COMPLETED:
            raise BenchError(f"sdk: the task did not complete: {last}")

    async def close() -> None:
        await client.close()
        await hx.aclose()

    return Loop("sdk", probe, close, "a2a-sdk client built once, card fetched each iteration")


def _sdk_state(event: StreamResponse) -> int:
    if event.HasField("task"):
        return int(event.task.status.state)
    if event.HasField("status_update"):
        return int(event.status_update.status.state)
    return -1


async def make_bare(peer: Peer, mode: Mode) -> Loop:
    session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=HTTP_TIMEOUT))
    method = "SendStreamingMessage" if mode == "stream" else "SendMessage"
    accept = "text/event-stream" if mode == "stream" else "application/json"
    card_headers = {"A2A-Version": "1.0"}
    rpc_headers = {"Content-Type": "application/json", "Accept": accept, "A2A-Version": "1.0"}

    async def probe() -> None:
        async with session.get(peer.card_url, headers=card_headers) as resp:
            await resp.read()
            if resp.status != 200:
                raise BenchError(f"bare: card answered HTTP {resp.status}")
        # A fresh messageId per probe, like the other loops; the body is built, never the reply parsed.
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": {"message": {
            "role": "ROLE_USER", "messageId": str(uuid.uuid4()), "parts": [{"text": MESSAGE}]}}}).encode()
        size = 0
        async with session.post(peer.jsonrpc_url, data=body, headers=rpc_headers) as resp:
            async for chunk in resp.content.iter_any():  # to EOF, nothing parsed
                size += len(chunk)
            if resp.status != 200 or size == 0:
                raise BenchError(f"bare: {method} answered HTTP {resp.status} with {size} bytes")

    return Loop("bare", probe, session.close, "aiohttp, no checks")


MAKERS: dict[str, Callable[[Peer, Mode], Awaitable[Loop]]] = {"bare": make_bare, "ours": make_ours, "sdk": make_sdk}


async def make_loops(peer: Peer, mode: Mode, names: Sequence[str]) -> list[Loop]:
    loops: list[Loop] = []
    try:
        for name in names:
            loops.append(await MAKERS[name](peer, mode))
    except BaseException:
        await close_loops(loops)
        raise
    return loops


async def close_loops(loops: Sequence[Loop]) -> None:
    for loop in loops:
        await loop.close()


# ---- measuring


def maxrss_kib() -> int:
    # Linux reports ru_maxrss in KiB (macOS in bytes; this bench targets the Linux CI box).
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


def rss_kib() -> int:
    """Current RSS (peak RSS can only grow, so it cannot show that memory came back)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024
    except OSError:
        return 0


async def run_n(loop: Loop, n: int) -> None:
    for _ in range(n):
        await loop.probe()


async def bench_case(peer: Peer, mode: Mode, iterations: int, warmup: int, rounds: int) -> CaseResult:
    loops = await make_loops(peer, mode, LOOP_ORDER)
    try:
        # Warm-up: first connections, imports, caches and the peer's own JIT/caches settle before timing.
        for loop in loops:
            await run_n(loop, warmup)
        per_round = max(1, iterations // rounds)
        cpu: dict[str, list[float]] = {lp.name: [] for lp in loops}
        wall: dict[str, list[float]] = {lp.name: [] for lp in loops}
        grew: dict[str, int] = {lp.name: 0 for lp in loops}
        gc.collect()
        mem = Memory(peer.kind, mode, maxrss_kib(), 0, rss_kib(), 0)
        for r in range(rounds):
            # Rotate and alternate direction so drift (thermal, other tenants, the peer's GC) hits every loop.
            order = loops[r % len(loops):] + loops[:r % len(loops)]
            if r % 2:
                order.reverse()
            for loop in order:
                gc.collect()  # don't bill one loop for the garbage the previous one left behind
                m0, c0, w0 = maxrss_kib(), time.process_time(), time.perf_counter()
                await run_n(loop, per_round)
                c1, w1 = time.process_time(), time.perf_counter()
                cpu[loop.name].append((c1 - c0) / per_round * 1e3)
                wall[loop.name].append((w1 - w0) / per_round * 1e3)
                grew[loop.name] += maxrss_kib() - m0
        gc.collect()
        mem.maxrss_after_kib, mem.rss_after_kib = maxrss_kib(), rss_kib()
        mem.ours_window = min(TRACE_WINDOW, iterations)
        mem.ours_growth_per_window, mem.ours_steady_bytes_per_probe, mem.ours_traced_peak_kib = await trace_ours(
            next(lp for lp in loops if lp.name == "ours"), mem.ours_window)
    finally:
        await close_loops(loops)
    rows = [Row(peer.kind, mode, lp.name, statistics.median(cpu[lp.name]), min(cpu[lp.name]), max(cpu[lp.name]),
                statistics.median(wall[lp.name]), maxrss_growth_kib=grew[lp.name], probes=per_round * rounds,
                note=lp.note) for lp in loops]
    by = {row.loop: row.cpu_ms for row in rows}
    for row in rows:
        row.ratio_vs_bare = row.cpu_ms / by["bare"] if by["bare"] else 0.0
        row.ratio_vs_sdk = row.cpu_ms / by["sdk"] if by["sdk"] else 0.0
    return CaseResult(rows, mem)


async def trace_ours(loop: Loop, window: int, windows: int = TRACE_WINDOWS) -> tuple[list[int], float, float]:
    """Untimed (tracemalloc is slow): traced-memory growth per window of probes, and the peak.

    Caches (connection pool, regex/json scanners, interned strings) fill in the first window, so
    flatness is judged on the later windows: a leak grows by the same amount in every window.
    """
    if window <= 0:
        return [], 0.0, 0.0
    tracemalloc.start()
    try:
        await run_n(loop, TRACE_SETTLE)  # tracemalloc's own bookkeeping settles before the baseline
        gc.collect()
        prev, _ = tracemalloc.get_traced_memory()
        base = prev
        tracemalloc.reset_peak()
        growth: list[int] = []
        for _ in range(windows):
            await run_n(loop, window)
            gc.collect()
            now, peak = tracemalloc.get_traced_memory()
            growth.append(now - prev)
            prev = now
    finally:
        tracemalloc.stop()
    steady = growth[1:] or growth
    return growth, sum(steady) / (len(steady) * window), (peak - base) / 1024


# ---- profiling (separate from the measurement: cProfile inflates CPU several times)


async def profile_ours(peer: Peer, mode: Mode, iterations: int, warmup: int, top: int) -> str:
    (loop,) = await make_loops(peer, mode, ("ours",))
    # CPU clock, not wall: otherwise time spent waiting for the agent in epoll dominates every listing.
    prof = cProfile.Profile(time.process_time)
    try:
        await run_n(loop, warmup)
        prof.enable()
        await run_n(loop, iterations)
        prof.disable()
    finally:
        await close_loops([loop])
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out)  # full paths kept (no strip_dirs): the filter below matches on them
    out.write(f"== cProfile (CPU clock) of ours, {peer.kind} {mode}, {iterations} probes: top {top} cumulative "
              "in probe/ and aiohttp/ (coroutine ncalls count resumptions) ==\n")
    stats.sort_stats("cumulative").print_stats(r"/probe/|/aiohttp/", top)
    out.write(f"== same run: top {top} by own time (tottime), any module ==\n")
    stats.sort_stats("tottime").print_stats(top)
    return out.getvalue()


# ---- output


def table(rows: Sequence[Row]) -> str:
    head = ("agent", "mode", "loop", "cpu_ms/probe", "cpu_min-max", "wall_ms/probe", "ratio_vs_bare",
            "ratio_vs_sdk", "maxrss_growth_KiB")
    lines = [head]
    for r in rows:
        lines.append((r.agent, r.mode, r.loop, f"{r.cpu_ms:.3f}", f"{r.cpu_ms_min:.2f}-{r.cpu_ms_max:.2f}",
                      f"{r.wall_ms:.3f}", f"{r.ratio_vs_bare:.2f}", f"{r.ratio_vs_sdk:.2f}", str(r.maxrss_growth_kib)))
    widths = [max(len(line[i]) for line in lines) for i in range(len(head))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip()
                     for line in lines)


def memory_lines(mems: Sequence[Memory]) -> str:
    out = []
    for m in mems:
        out.append(f"{m.agent:<6}  {m.mode:<6}  maxrss {m.maxrss_before_kib} -> {m.maxrss_after_kib} KiB "
                   f"(+{m.maxrss_after_kib - m.maxrss_before_kib}), rss {m.rss_before_kib} -> {m.rss_after_kib} "
                   f"KiB; ours traced growth per {m.ours_window} probes: "
                   f"{', '.join(f'{g:+d}' for g in m.ours_growth_per_window)} B "
                   f"(steady {m.ours_steady_bytes_per_probe:+.1f} B/probe), peak {m.ours_traced_peak_kib:.0f} KiB "
                   "above baseline")
    return "\n".join(out)


# ---- driver


async def run(agents: Sequence[str], modes: Sequence[Mode], args: argparse.Namespace) -> dict[str, Any]:
    rows: list[Row] = []
    mems: list[Memory] = []
    profiles: list[str] = []
    for agent in agents:
        peer = await asyncio.to_thread(start_peer, agent)
        try:
            for mode in modes:
                if args.profile:
                    profiles.append(await profile_ours(peer, mode, args.iterations, args.warmup, args.top))
                    continue
                case = await bench_case(peer, mode, args.iterations, args.warmup, args.rounds)
                rows += case.rows
                if case.memory is not None:
                    mems.append(case.memory)
                if not args.json:  # progress on stderr keeps stdout a clean table
                    print(f"done: {agent} {mode}", file=sys.stderr)
        finally:
            await peer.astop()  # always: a leftover peer would keep a port and ~70 MiB
    return {"rows": rows, "memory": mems, "profiles": profiles}


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--agent", choices=AGENTS, help="peer to probe (default: both)")
    ap.add_argument("--mode", choices=MODES, help="stream or invoke (default: both)")
    ap.add_argument("--iterations", type=int, default=200, help="timed probes per loop (split across rounds)")
    ap.add_argument("--warmup", type=int, default=20, help="untimed probes per loop before measuring")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds; the median round is reported")
    ap.add_argument("--json", action="store_true", help="machine-readable output")
    ap.add_argument("--profile", action="store_true", help="instead of measuring, cProfile the ours loop")
    ap.add_argument("--top", type=int, default=15, help="entries per profile listing")
    args = ap.parse_args(argv)
    if args.iterations < 1 or args.warmup < 0 or args.rounds < 1:
        ap.error("--iterations and --rounds must be >= 1, --warmup >= 0")
    agents = (args.agent,) if args.agent else AGENTS
    modes: tuple[Mode, ...] = (args.mode,) if args.mode else MODES

    t0 = time.perf_counter()
    out = asyncio.run(run(agents, modes, args))
    elapsed = time.perf_counter() - t0

    if args.profile:
        print("\n".join(out["profiles"]))
        return 0
    rows: list[Row] = out["rows"]
    mems: list[Memory] = out["memory"]
    if args.json:
        meta = {"iterations": args.iterations, "warmup": args.warmup, "rounds": args.rounds,
                "python": sys.version.split()[0], "aiohttp": aiohttp.__version__, "httpx": httpx.__version__,
                "cpus": os.cpu_count(), "elapsed_s": round(elapsed, 1)}
        print(json.dumps({"meta": meta, "rows": [asdict(r) for r in rows], "memory": [asdict(m) for m in mems]},
                         indent=2))
        return 0
    per_round = max(1, args.iterations // args.rounds)
    print(f"# {args.rounds} rounds x {per_round} probes per loop after {args.warmup} warm-up probes; "
          f"cpu = client process_time, median round (min-max across rounds)")
    print(table(rows))
    print("\n# memory (client process)")
    print(memory_lines(mems))
    notes = {r.loop: r.note for r in rows}
    print("\n# loops: " + "; ".join(f"{k}: {v}" for k, v in notes.items()))
    print(f"# total {elapsed:.1f}s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
