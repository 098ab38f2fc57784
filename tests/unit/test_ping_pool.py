"""Where a module sets `fresh_connection: false`, ping and invoke send their calls on the kept-alive pool: the
daemon's path (config Module -> Runner -> Target -> ClientConfig) reuses one connection across runs, and a module
left at its default opens a connection for every ping call (measured: connect is in its phases)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from aiohttp import web

from probe.config import Agent, Module, Prober
from probe.history import History
from probe.metrics import Metrics
from probe.results import ProbeResult, StepName
from probe.runner import Runner
from probe.wire.http import HttpClient
from tests.agents.catalogue import faults_for
from tests.agents.fault_agent import DemoAgent
from tests.agents.server import serve

CALLS = {Prober.PING: StepName.PING, Prober.INVOKE: StepName.INVOKE}


@asynccontextmanager
async def _counting_agent() -> AsyncIterator[tuple[str, list[tuple[str, int]]]]:
    """The healthy demo agent; every request's (path, client port): one port is one connection."""
    seen: list[tuple[str, int]] = []
    agent = DemoAgent("healthy", faults_for("healthy"))
    app = agent.app()

    async def note(request: web.Request, _response: web.StreamResponse) -> None:
        peer = request.transport.get_extra_info("peername") if request.transport is not None else None
        seen.append((request.path, int(peer[1]) if peer else -1))

    app.on_response_prepare.append(note)
    async with serve(app) as origin:
        agent.origin = origin
        yield origin, seen


async def _runs(origin: str, module: Module, n: int) -> list[ProbeResult]:
    async with HttpClient() as client:
        metrics, history = Metrics([1], []), History(5)
        runner = Runner(client, metrics, history, max_concurrency=1)
        metrics.add_job("a", "m", module.interval, module.timeout)
        out = []
        for _ in range(n):
            result = await runner.run(Agent(name="a", url=origin), module, timeout=module.timeout)
            runner.record("m", result)
            out.append(result)
    return out


def _calls(result: ProbeResult, prober: Prober) -> list[float]:
    """The connect phase of each exchange of the prober's own step (0 on a reused connection)."""
    steps = [s for i in result.interfaces for s in i.steps if s.name is CALLS[prober]] or [
        s for s in result.steps if s.name is CALLS[prober]]
    return [e.phases.connect for s in steps for e in s.exchanges]


@pytest.mark.parametrize("prober", [Prober.PING, Prober.INVOKE])
async def test_fresh_connection_false_reuses_the_pool_across_runs(prober: Prober) -> None:
    module = Module(prober=prober, interval=5, timeout=3, fresh_connection=False)
    async with _counting_agent() as (origin, seen):
        results = await _runs(origin, module, 3)
    assert all(r.success for r in results), [(r.reason, r.problem) for r in results]
    rpc_ports = {port for path, port in seen if not path.startswith("/.well-known")}
    assert len(rpc_ports) == 1, seen  # every call of the three runs on one kept-alive connection
    later = [c for r in results[1:] for c in _calls(r, prober)]
    assert later and all(c == 0 for c in later), later  # no connect measured: the connection was reused


async def test_ping_by_default_opens_a_connection_for_every_call() -> None:
    module = Module(prober=Prober.PING, interval=5, timeout=3)
    assert module.fresh
    async with _counting_agent() as (origin, seen):
        results = await _runs(origin, module, 3)
    assert all(r.success for r in results), [(r.reason, r.problem) for r in results]
    rpc = [port for path, port in seen if not path.startswith("/.well-known")]
    assert len(rpc) == len(set(rpc)) >= 3, seen
    assert all(c > 0 for r in results for c in _calls(r, Prober.PING))
