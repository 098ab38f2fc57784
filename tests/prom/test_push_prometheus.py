"""The daemon's push module end to end: official SDK servers and an agent that never delivers, scraped by a real
Prometheus; the dashboard's push panels and the push alert's expression evaluated on what it scraped."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from probe.config import Settings, load
from probe.daemon import Daemon
from tests.agents.push_faults import PushFault, push_fault_agent
from tests.daemon.helpers import write_config
from tests.deploy.test_alerts import ALERTS, alerts_by_name
from tests.deploy.test_live_queries import AGENT, dashboard_queries, instant
from tests.peers.harness import Peer, free_port
from tests.prom.server import run_prometheus

pytestmark = pytest.mark.external  # the SDK peers and Prometheus

MODULES = {"push-fast": {"prober": "push", "interval": "3s", "timeout": "2.5s", "jitter": 0, "late_after": "2s"}}


async def test_push_module_metrics_reach_prometheus(tmp_path: Path, py_peer_push: Peer, js_peer_push: Peer) -> None:
    port = free_port()
    public = f"http://127.0.0.1:{port}"
    async with push_fault_agent(PushFault("never")) as never:
        cfg = write_config(tmp_path / "p.yaml", [
            {"name": "py-sdk", "url": py_peer_push.base_url, "modules": ["push-fast"]},
            {"name": "js-sdk", "url": js_peer_push.base_url, "modules": ["push-fast"]},
            {"name": "never", "url": never, "modules": ["push-fast"]},
        ], modules=MODULES)
        # the public URL must be known before the daemon starts: a fixed free port rather than port 0
        settings = Settings(config_file=cfg, listen_address=f"127.0.0.1:{port}", push_public_url=public)
        config, sha = load(cfg)
        d = Daemon(settings, config, sha, cfg)
        await d.start()
        try:
                with run_prometheus(tmp_path, [f"127.0.0.1:{port}"], rule_files=[ALERTS], job="a2a-probe") as prom:
                    wait = asyncio.to_thread
                    rows = await wait(prom.wait_for, 'a2a_probe_success{module="push-fast"}', lambda r: len(r) == 3)
                    assert {r["metric"]["agent"]: r["value"][1] for r in rows} == {"py-sdk": "1", "js-sdk": "1",
                                                                                  "never": "0"}
                    reason = await wait(prom.query, 'a2a_probe_failure_reason_info{agent="never"} == 1')
                    assert {r["metric"]["reason"] for r in reason} == {"push_not_delivered"}
                    delivered = await wait(prom.wait_for, "a2a_probe_push_deliveries_total > 0",
                                           lambda r: len(r) == 2)
                    assert {r["metric"]["agent"] for r in delivered} == {"py-sdk", "js-sdk"}
                    missing = await wait(prom.query,
                                         'a2a_probe_push_delivery_problems_total{problem="not_delivered"} > 0')
                    assert {r["metric"]["agent"] for r in missing} == {"never"}
                    # a second round of probes, so rate() and the latency quantiles have two samples to work with
                    await wait(prom.wait_for, 'increase(a2a_probe_runs_total{module="push-fast"}[1m]) > 0',
                               lambda r: len(r) == 3, timeout=45)
                    p95 = await wait(prom.wait_for, 'histogram_quantile(0.95, sum by (agent, delivery, le) '
                                                    '(rate(a2a_probe_push_delivery_latency_seconds_bucket[1m])))',
                                     lambda r: len(r) == 4, timeout=45)
                    assert {(r["metric"]["agent"], r["metric"]["delivery"]) for r in p95} == {
                        (a, k) for a in ("py-sdk", "js-sdk") for k in ("first", "terminal")}
                    assert all(0 < float(r["value"][1]) < 2.5 for r in p95), p95
                    # the agent dashboard's push panels return data for an agent that runs the push module
                    panels = [(w, e) for w, e in dashboard_queries(AGENT, "py-sdk") if "a2a_probe_push_" in e]
                    assert len(panels) == 4  # latency p50 and p95, deliveries, problems
                    for where, expr in panels:
                        if "problems" in expr:
                            continue  # py-sdk has no delivery problem: that query is empty by design
                        answer = await wait(instant, prom, expr)
                        assert answer.error is None and answer.result, where
                    never_panel = [e for w, e in dashboard_queries(AGENT, "never") if "problems" in e]
                    assert (await wait(instant, prom, never_panel[0])).result
                    # the alert's expression selects exactly the agent whose deliveries never arrive
                    expr = alerts_by_name()["A2APushDeliveryBroken"]["expr"]
                    firing = await wait(prom.query, expr)
                    assert {r["metric"]["agent"] for r in firing} == {"never"}
                    refused = await wait(prom.query, "a2a_probe_push_receiver_refused_total")
                    assert {r["metric"]["cause"] for r in refused} >= {"unknown_token"}
        finally:
            await d.stop()
