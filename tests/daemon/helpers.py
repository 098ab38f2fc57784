"""Helpers to run the daemon in-process on a free loopback port."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from probe.config import Settings, load
from probe.daemon import Daemon
from probe.metrics import PREFIX, Metrics
from probe.results import ProbeResult


@asynccontextmanager
async def running_daemon(config_path: Path, **settings: Any) -> AsyncIterator[tuple[Daemon, str]]:
    s = Settings(config_file=config_path, listen_address="127.0.0.1:0", **settings)
    config, sha = load(config_path)
    daemon = Daemon(s, config, sha, config_path)
    await daemon.start()
    try:
        yield daemon, f"http://{daemon.bound[0]}"
    finally:
        await daemon.stop()


def write_config(path: Path, agents: list[dict[str, Any]], **extra: Any) -> Path:
    import yaml

    path.write_text(yaml.safe_dump({"agents": agents, **extra}))
    return path


async def get(url: str, **kw: Any) -> tuple[int, str, dict[str, str]]:
    async with aiohttp.ClientSession() as s, s.get(url, **kw) as r:
        return r.status, await r.text(), dict(r.headers)


async def post(url: str) -> tuple[int, str]:
    async with aiohttp.ClientSession() as s, s.post(url) as r:
        return r.status, await r.text()


async def wait_for(predicate: Any, timeout: float = 5.0) -> None:
    import asyncio

    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not predicate():
        if loop.time() > end:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.02)


def metric_value(text: str, name: str, **labels: str) -> float | None:
    """The value of the first sample `name` with these labels in a text exposition, or None."""
    from prometheus_client.parser import text_string_to_metric_families

    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()):
                return float(s.value)
    return None


def binding_metrics(r: ProbeResult, module: str) -> tuple[dict[str, float], dict[str, str]]:
    """What the daemon exports for this result: success and the failure reason, per binding label."""
    m = Metrics([1], [])
    m.add_job(r.agent, module, 30, 5)
    m.observe(module, r)
    text = generate_latest(m.registry).decode()
    samples = [(s.name, s.labels, s.value) for fam in text_string_to_metric_families(text) for s in fam.samples]
    return ({lab["binding"]: v for n, lab, v in samples if n == PREFIX + "success"},
            {lab["binding"]: lab["reason"] for n, lab, v in samples if n == PREFIX + "failure_reason_info" and v})
