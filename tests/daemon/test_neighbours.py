"""A flooding neighbour changes nothing for the other agents: the real daemon probes healthy agents beside agents
that answer a huge body slowly, hold the connection without answering, stream forever, or trickle their card; the
healthy agents' verdicts and reasons are what they are alone (no shared timeout, no pool starvation, no
head-of-line blocking), and each flooder fails on its own account."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from probe.metrics import PREFIX
from tests.agents.catalogue import run_agent
from tests.daemon.flooders import FLOODERS
from tests.daemon.helpers import running_daemon, write_config

HEALTHY = 4
MODULES = {"n-ping": {"prober": "ping", "interval": "1s", "timeout": "1s", "jitter": 0},
           "n-invoke": {"prober": "invoke", "interval": "1s", "timeout": "1s", "jitter": 0},
           "n-stream": {"prober": "stream", "interval": "1s", "timeout": "1s", "jitter": 0,
                        "max_stream_events": 100_000}}


@contextlib.asynccontextmanager
async def flooders() -> AsyncIterator[dict[str, str]]:
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "tests.daemon.flooders",
                                                cwd=Path(__file__).parents[2], stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.DEVNULL)
    try:
        assert proc.stdout is not None
        yield json.loads(await asyncio.wait_for(proc.stdout.readline(), 60))
    finally:
        proc.kill()
        await proc.wait()


Samples = list[tuple[dict[str, str], float]]


def _samples(registry: Any, name: str, agent: str, module: str) -> Samples:
    return [(dict(s.labels), s.value) for fam in registry.collect() for s in fam.samples
            if s.name == PREFIX + name and s.labels.get("agent") == agent and s.labels.get("module") == module]


async def _verdicts(tmp_path: Path, floods: dict[str, str] | None, seconds: float, **settings: Any) -> dict[str, Any]:
    """Per healthy job: (runs, failures by reason, success gauge, runs skipped as the probe's overload)."""
    async with contextlib.AsyncExitStack() as stack:
        agents = []
        for i in range(HEALTHY):
            a = await stack.enter_async_context(run_agent("healthy"))
            agents.append({"name": f"healthy-{i}", "url": a.origin, "modules": list(MODULES)})
        agents += [{"name": name, "url": origin, "modules": list(MODULES)} for name, origin in (floods or {}).items()]
        cfg = write_config(tmp_path / f"n{len(agents)}.yaml", agents, modules=MODULES)
        async with running_daemon(cfg, **settings) as (daemon, _url):
            await asyncio.sleep(seconds)
            registry = daemon.metrics.registry
            out: dict[str, Any] = {}
            for a in agents:
                for module in MODULES:
                    def of(name: str, agent: str = a["name"], module: str = module) -> Samples:
                        return _samples(registry, name, agent, module)

                    out[f"{a['name']}/{module}"] = {
                        "runs": sum(v for _, v in of("runs_total")),
                        "failures": {lab["reason"]: v for lab, v in of("failures_total") if v},
                        "success": [v for _, v in of("success")],
                        "overloaded": sum(v for lab, v in of("scheduler_missed_runs_total")
                                          if lab.get("cause") == "overloaded"),
                    }
            return out


async def test_flooding_neighbours_change_no_healthy_agents_verdict_or_reason(tmp_path: Path) -> None:
    alone = await _verdicts(tmp_path, None, 4.0)
    async with flooders() as floods:
        beside = await _verdicts(tmp_path, floods, 4.0)
    for key, v in alone.items():
        assert v["runs"] >= 3 and not v["failures"] and v["success"] and all(v["success"]), (key, v)
        w = beside[key]
        # the same verdict, on schedule, never a reason, never skipped as the probe's overload
        assert w["runs"] >= 3 and not w["failures"] and w["success"] and all(w["success"]), (key, w)
        assert w["overloaded"] == 0, (key, w)
    _floods_were_real(beside)


async def test_neighbours_holding_every_pooled_connection_make_skips_not_failures(tmp_path: Path) -> None:
    # the probe's pool cut to 2 connections (max_connections), the flooders holding them: a healthy agent's request
    # that waits for one past its deadline never left the probe, so the run is skipped as the probe's overload
    # (scheduler_missed_runs_total{cause="overloaded"}), never failed; so is a run whose card fetch queued for most
    # of its budget, leaving its call no time. Before: card_unreachable / invoke_timeout
    async with flooders() as floods:
        beside = await _verdicts(tmp_path, floods, 4.0, max_connections=2)
    for key, w in beside.items():
        if key.startswith("healthy-"):
            assert not w["failures"] and all(w["success"]), (key, w)
    assert sum(w["runs"] for k, w in beside.items() if k.startswith("healthy-")) >= 12, beside
    # the floods were real (a flooder's own runs may all be skipped too when the two connections are taken)
    assert sum(sum(w["failures"].values()) for k, w in beside.items() if not k.startswith("healthy-")) >= 4, beside


def _floods_were_real(beside: dict[str, Any]) -> None:
    """Each flooder failed the modules it floods, on its own account."""
    for name in FLOODERS:
        failed = {k: v["failures"] for k, v in beside.items() if k.startswith(name + "/") and v["failures"]}
        assert failed, (name, {k: v for k, v in beside.items() if k.startswith(name + "/")})
