"""n daemons started against one config each probe only their share, and together every agent exactly once."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from pathlib import Path

import pytest

from bench.fleet_agents import Fleet
from probe.shard import Shard
from tests.daemon.helpers import get, running_daemon, wait_for, write_config

AGENTS = [f"fleet-{i:02d}" for i in range(30)]


@pytest.fixture
async def fleet() -> AsyncIterator[Fleet]:
    f = Fleet()
    await f.start()
    yield f
    await f.stop()


def _runs(metrics: str) -> dict[str, float]:
    return {agent: float(value) for agent, value in
            re.findall(r'a2a_probe_runs_total\{agent="([^"]+)",binding="jsonrpc",module="ping"\} (\S+)', metrics)}


@pytest.mark.parametrize("n", [2, 3])
async def test_n_daemons_on_one_config_probe_disjoint_shares_that_cover_the_fleet(
        fleet: Fleet, tmp_path: Path, n: int) -> None:
    cfg = write_config(tmp_path / "fleet.yaml", [{"name": a, "url": fleet.agent_url(a)} for a in AGENTS],
                       modules={"ping": {"prober": "ping", "interval": "60s", "timeout": "5s", "jitter": 0}})
    async with AsyncExitStack() as stack:
        daemons = [await stack.enter_async_context(running_daemon(cfg, shard=f"{i}/{n}")) for i in range(n)]
        await wait_for(lambda: len(fleet.per_agent) == len(AGENTS), timeout=20)
        await wait_for(lambda: all(d.runner.in_flight == set() for d, _ in daemons), timeout=10)
        shares = []
        for i, (daemon, base) in enumerate(daemons):
            want = Shard(i, n).select(AGENTS)
            assert sorted(daemon.mine) == sorted(want)
            assert {job.split("\x1f")[0] for job in daemon.scheduler.jobs} == set(want)
            _, text, _ = await get(f"{base}/metrics")
            runs = _runs(text)
            assert set(runs) == set(want), f"shard {i}/{n} exported other agents' series"
            assert all(v >= 1 for v in runs.values())
            assert f'shard="{i}/{n}"' in re.search(r"a2a_probe_build_info\{[^}]*\}", text)[0]  # type: ignore[index]
            assert re.search(rf"^a2a_probe_agents_configured {len(want)}\.0$", text, re.M)
            _, report, _ = await get(f"{base}/report")
            summary = json.loads(report)
            assert summary["agents"] == len(want)
            assert {row["agent"] for row in summary["results"]} == set(want)
            shares.append(set(want))
    assert set().union(*shares) == set(AGENTS)
    assert sum(len(s) for s in shares) == len(AGENTS)  # disjoint
    # the fleet saw one probe per agent, not one per daemon
    assert all(count == 1 for count in fleet.per_agent.values()), fleet.per_agent
