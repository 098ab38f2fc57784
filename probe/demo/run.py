"""`a2a-probe demo`: the daemon plus two bundled agents in one process, on loopback, no config needed.

One agent is healthy (A2A 1.0, streaming). The other sits behind a simulated gateway with the
card-OK-but-404 bug: its card is served under /api/a2a/demo/broken but advertises
/api/a2a/api/a2a/demo/broken, so every real client gets 404 while a naive card check stays green.
"""

from __future__ import annotations

import sys

from probe.config import Agent, MetricsConfig, Module, ProbeConfig, Prober, Settings
from probe.daemon import Daemon
from probe.demo.agent import DemoAgent

BROKEN_PREFIX = "/api/a2a/demo/broken"
HEALTHY_PORT, BROKEN_PORT = 9471, 9472  # as in config/demo.yaml; any free port if these are taken


def demo_config(healthy_origin: str, broken_origin: str) -> ProbeConfig:
    fast = {"ping": Module(prober=Prober.PING, interval=10, timeout=5),
            "invoke": Module(prober=Prober.INVOKE, interval=15, timeout=10),
            "stream": Module(prober=Prober.STREAM, interval=15, timeout=10)}
    return ProbeConfig(
        modules=fast,
        agents=[
            Agent(name="demo-healthy", url=healthy_origin, modules=["ping", "invoke", "stream"],
                  expect_text="echo", labels={"team": "demo", "gateway": "none"}),
            Agent(name="demo-gateway-broken", url=broken_origin + BROKEN_PREFIX, modules=["ping", "invoke", "stream"],
                  labels={"team": "demo", "gateway": "simulated"}),
        ],
        # two agents: the demo shows the detailed set, so every dashboard panel has data (docs/metrics.md)
        metrics=MetricsConfig(agent_info_labels=["team", "gateway"], detailed=True),
    )


async def run_demo(settings: Settings) -> None:
    healthy = DemoAgent("demo-healthy")
    broken = DemoAgent("demo-gateway-broken", card_prefix=BROKEN_PREFIX, advertised_path="/api/a2a" + BROKEN_PREFIX)
    h, b = await _start(healthy, HEALTHY_PORT), await _start(broken, BROKEN_PORT)
    try:
        daemon = Daemon(settings, demo_config(h, b))
        await daemon.start()
        base = f"http://{_display(daemon.bound[0])}" if daemon.bound else "(not bound)"
        print(
            "a2a-probe demo is running (Ctrl-C to stop)\n"
            f"  agents:  demo-healthy at {h} · demo-gateway-broken at {b}{BROKEN_PREFIX}\n"
            f"  status:  {base}/\n"
            f"  metrics: {base}/metrics\n"
            f"  report:  {base}/report?agent=demo-gateway-broken&format=markdown\n"
            f"  fleet:   {base}/report",
            file=sys.stdout, flush=True)
        await daemon.serve_started()
    finally:
        await broken.stop()
        await healthy.stop()


async def _start(agent: DemoAgent, port: int) -> str:
    try:
        return await agent.start(port=port)
    except OSError:
        return await agent.start(port=0)


def _display(addr: str) -> str:
    host, _, port = addr.rpartition(":")
    return f"{'127.0.0.1' if host in ('0.0.0.0', '') else host}:{port}"
