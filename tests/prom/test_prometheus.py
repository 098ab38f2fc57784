"""A real Prometheus scrapes the daemon, which probes the official SDK peers and a broken agent."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from probe.metrics import series_per_job
from tests.agents.catalogue import GATEWAY_PREFIX, run_agent
from tests.daemon.helpers import running_daemon, write_config
from tests.peers.harness import Peer
from tests.prom.server import run_prometheus

pytestmark = pytest.mark.external  # starts programs outside this Python (see pyproject)


async def test_prometheus_sees_healthy_peers_and_the_broken_agent(tmp_path: Path, py_peer: Peer,
                                                                 js_peer: Peer) -> None:
    import asyncio

    async with run_agent("doubled_prefix") as broken:
        cfg = write_config(tmp_path / "p.yaml", [
            {"name": "py-sdk", "url": py_peer.base_url, "modules": ["ping", "stream"]},
            {"name": "js-sdk", "url": js_peer.base_url, "modules": ["ping", "stream"]},
            {"name": "broken-gw", "url": f"{broken.origin}{GATEWAY_PREFIX}", "modules": ["ping", "stream"]},
        ], metrics={"agent_info_labels": ["team"]})
        async with running_daemon(cfg) as (_, base):
            target = base.removeprefix("http://")
            with run_prometheus(tmp_path, [target]) as prom:
                wait = asyncio.to_thread
                def settled(rows: list[dict[str, Any]]) -> bool:
                    agents = Counter(r["metric"]["agent"] for r in rows)
                    return agents["py-sdk"] == 6 and agents["js-sdk"] >= 4 and agents["broken-gw"] == 2

                rows = await wait(prom.wait_for, 'a2a_probe_success{job="a2a-probe"}', settled)
                got = {(r["metric"]["agent"], r["metric"]["module"], r["metric"]["binding"]): r["value"][1]
                       for r in rows}
                # one series set per binding the card advertises: the Python SDK serves all three
                every = {"jsonrpc", "http_json", "grpc"}
                assert {k: v for k, v in got.items() if k[0] == "py-sdk"} == {
                    ("py-sdk", m, b): "1" for m in ("ping", "stream") for b in every}
                assert {b for a, _, b in got if a == "js-sdk"} >= {"jsonrpc", "http_json"}
                assert {v for (a, _, _), v in got.items() if a == "js-sdk"} == {"1"}
                assert {k: v for k, v in got.items() if k[0] == "broken-gw"} == {
                    ("broken-gw", "ping", "jsonrpc"): "0", ("broken-gw", "stream", "jsonrpc"): "0"}
                per_binding = series_per_job(3, 3, bindings=2) - series_per_job(3, 3)
                counts = await wait(prom.query, 'count by (binding) ({__name__=~"a2a_probe_.+", agent="py-sdk", '
                                                'module="ping", binding!=""})')
                assert {r["metric"]["binding"]: r["value"][1] for r in counts} == {
                    b: str(per_binding) for b in every}
                cards = await wait(prom.query, 'a2a_probe_agent_card_info{agent="py-sdk"}')
                assert [r["metric"]["binding"] for r in cards] == ["jsonrpc"]  # bounded spelling, preferred one
                reason = await wait(prom.query, 'a2a_probe_failure_reason_info{agent="broken-gw"} == 1')
                assert {r["metric"]["reason"] for r in reason} == {"interface_path_doubled"}
                failures = await wait(prom.query, 'sum by (reason) (a2a_probe_failures_total{agent="broken-gw"}) > 0')
                assert {r["metric"]["reason"] for r in failures} == {"interface_path_doubled"}
                # the headline alert's shape: card fine, invocation broken — exactly the broken agent
                headline = await wait(prom.query, 'a2a_probe_step_success{step="discover"} == 1 and on(agent, module, '
                                                  'binding) a2a_probe_step_success{step=~"ping|invoke|stream"} == 0')
                assert {r["metric"]["agent"] for r in headline} == {"broken-gw"}
                hist = await wait(prom.query, 'histogram_quantile(0.95, sum by (agent, le) '
                                              '(a2a_probe_duration_seconds_bucket))')
                assert {r["metric"]["agent"] for r in hist} >= {"py-sdk", "js-sdk"}
                up = await wait(prom.query, 'up{job="a2a-probe"}')
                assert up[0]["value"][1] == "1"
