"""No caller can steer the probe: /probe?target= off by default, an egress policy for every request of a
caller-chosen probe, /probe rate-limited per agent, optional web authentication and listener TLS."""

from __future__ import annotations

import asyncio
import base64
import json
import ssl
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from probe.config import ConfigError, Settings
from probe.daemon import Daemon
from probe.wire.egress import Egress
from tests.agents.scripted import card
from tests.agents.server import serve
from tests.daemon.helpers import get, running_daemon, write_config
from tests.daemon.helpers import metric_value as _value
from tests.hostile import certs


class CountingAgent:
    """A card whose interface URL is chosen by the test; counts every request it gets."""

    def __init__(self, advertise: str | None = None) -> None:
        self.advertise = advertise
        self.gets = 0
        self.posts = 0
        self.origin = ""

    async def __aenter__(self) -> CountingAgent:
        async def card_handler(_: web.Request) -> web.Response:
            self.gets += 1
            doc = card(self.origin)
            if self.advertise:
                doc["supportedInterfaces"][0]["url"] = self.advertise
            return web.json_response(doc)

        async def rpc(request: web.Request) -> web.Response:
            self.posts += 1
            body = await request.json()
            await asyncio.sleep(0.05)
            return web.json_response({"jsonrpc": "2.0", "id": body["id"],
                                      "error": {"code": -32001, "message": "not found"}})

        app = web.Application()
        app.router.add_get("/.well-known/agent-card.json", card_handler)
        app.router.add_post("/rpc", rpc)
        self._served = serve(app)
        self.origin = await self._served.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._served.__aexit__(None, None, None)


@pytest.fixture
def cfg(tmp_path: Path) -> Path:
    return write_config(tmp_path / "p.yaml", [{"name": "a", "url": "http://127.0.0.1:9", "modules": ["ping"]}])


async def test_target_is_off_by_default(cfg: Path) -> None:
    async with CountingAgent() as agent, running_daemon(cfg) as (_, base):
        status, body, _ = await get(f"{base}/probe?target={agent.origin}&module=full")
    assert status == 403 and "disabled" in json.loads(body)["error"]
    assert agent.gets == agent.posts == 0
    assert Settings().probe_target_enabled is False


@pytest.mark.parametrize(("address", "listed", "allowed"), [
    ("169.254.169.254", ["0.0.0.0/0"], False),  # cloud metadata, even inside 0.0.0.0/0
    ("169.254.169.254", ["0.0.0.0/0", "169.254.169.254/32"], True),  # listed explicitly
    ("fe80::1", ["::/0"], False),
    ("fd00:ec2::254", ["::/0"], False),
    ("127.0.0.1", ["0.0.0.0/0"], False),  # the daemon's own endpoints
    ("127.0.0.1", ["127.0.0.0/8"], True),
    ("::ffff:169.254.169.254", ["::/0", "0.0.0.0/0"], False),  # an IPv4-mapped metadata address
    ("10.1.2.3", ["192.168.0.0/16"], False),
    ("10.1.2.3", ["10.0.0.0/8"], True),
    ("93.184.216.34", ["0.0.0.0/0"], True),
])
def test_address_policy(address: str, listed: list[str], allowed: bool) -> None:
    assert (Egress.build(".*", listed).address_problem(address) is None) is allowed


async def test_metadata_and_loopback_targets_are_refused_without_a_connection(cfg: Path) -> None:
    async with CountingAgent() as agent, running_daemon(cfg, probe_target_enabled=True) as (_, base):
        for target in ("http://169.254.169.254/latest/meta-data/", agent.origin,
                       agent.origin.replace("127.0.0.1", "localhost")):
            status, text, _ = await get(f"{base}/probe?target={target}&module=ping")
            assert status == 200 and _value(text, "probe_success") == 0
            assert _value(text, "probe_failed_due_to_reason", reason="target_not_allowed") == 1, target
    assert agent.gets == agent.posts == 0


async def test_an_advertised_url_outside_the_policy_is_never_called(cfg: Path) -> None:
    async with CountingAgent(advertise="http://169.254.169.254/rpc") as agent, \
            running_daemon(cfg, probe_target_enabled=True, probe_target_networks=["127.0.0.0/8"]) as (_, base):
        status, text, _ = await get(f"{base}/probe?target={agent.origin}&module=full")
    assert status == 200 and _value(text, "probe_failed_due_to_reason", reason="target_not_allowed") == 1
    assert agent.gets >= 1 and agent.posts == 0


async def test_the_url_pattern_applies_to_the_target(cfg: Path) -> None:
    async with CountingAgent() as agent, running_daemon(
            cfg, probe_target_enabled=True, probe_target_networks=["127.0.0.0/8"],
            probe_target_pattern=r"https://gw\.example\.com/.*") as (_, base):
        status, body, _ = await get(f"{base}/probe?target={agent.origin}")
    assert status == 400 and "PROBE_TARGET_PATTERN" in body and agent.gets == 0


async def test_probe_is_rate_limited_per_agent(tmp_path: Path) -> None:
    async with CountingAgent() as agent:
        cfg = write_config(tmp_path / "p.yaml", [{"name": "x", "url": agent.origin, "modules": ["ping"]}],
                           modules={"ping": {"prober": "ping", "interval": "1h", "timeout": "5s"}})
        async with running_daemon(cfg, probe_min_interval=30) as (_d, base):
            await asyncio.sleep(0.3)  # the scheduled first run
            before = agent.posts
            got = await asyncio.gather(*(get(f"{base}/probe?agent=x") for _ in range(5)))
            got.append(await get(f"{base}/probe?agent=x"))
            assert all(s == 200 and _value(t, "probe_success") == 1 for s, t, _ in got)
            assert agent.posts - before == 1  # six scrapes, one ping
            assert sorted(h["X-A2A-Probe-Shared"] for *_, h in got) == ["false"] + ["true"] * 5


async def test_web_auth_bearer_and_basic(tmp_path: Path, cfg: Path) -> None:
    (tmp_path / "tok").write_text("web-token-0123456789\n")
    (tmp_path / "basic").write_text("ops:web-pass-0123456789")
    basic = "Basic " + base64.b64encode(b"ops:web-pass-0123456789").decode()
    for setting, good in (("web_auth_bearer_file", "Bearer web-token-0123456789"), ("web_auth_basic_file", basic)):
        kw: dict[str, Any] = {setting: tmp_path / ("tok" if "bearer" in setting else "basic")}
        async with running_daemon(cfg, **kw) as (_, base):
            for path in ("/metrics", "/config", "/", "/report", "/probe?agent=a"):
                status, _, headers = await get(base + path)
                assert status == 401 and headers["WWW-Authenticate"].endswith('realm="a2a-probe"'), path
                status, _, _ = await get(base + path, headers={"Authorization": "Bearer wrong-token-xyz"})
                assert status == 401
            for path in ("/healthz", "/readyz"):
                assert (await get(base + path))[0] == 200
            async with aiohttp.ClientSession(headers={"Authorization": good}) as s, s.get(f"{base}/config") as r:
                assert r.status == 200
                assert "web-token-0123456789" not in await r.text() and "web-pass" not in await r.text()


def test_web_auth_file_problems_are_config_errors(tmp_path: Path, cfg: Path) -> None:
    from probe.config import load

    config, _ = load(cfg)
    with pytest.raises(ConfigError, match="cannot read web auth file"):
        Daemon(Settings(web_auth_bearer_file=tmp_path / "missing"), config)
    (tmp_path / "short").write_text("x")
    with pytest.raises(ConfigError, match="8\\+ characters"):
        Daemon(Settings(web_auth_bearer_file=tmp_path / "short"), config)
    with pytest.raises(ConfigError, match="both web_tls_cert_file and web_tls_key_file"):
        Daemon(Settings(web_tls_cert_file=tmp_path / "short"), config)


async def test_listener_tls(tmp_path: Path, cfg: Path) -> None:
    pem, _cert, _ = certs.make(tmp_path, "listener")
    async with running_daemon(cfg, web_tls_cert_file=pem.cert, web_tls_key_file=pem.key) as (_, base):
        ctx = ssl.create_default_context(cafile=str(pem.cert))
        url = base.replace("http://", "https://")
        async with aiohttp.ClientSession() as s, s.get(f"{url}/healthz", ssl=ctx) as r:
            assert r.status == 200
        with pytest.raises(aiohttp.ClientError):
            async with aiohttp.ClientSession() as s, s.get(f"{base}/healthz") as r:
                await r.text()


async def test_probe_target_with_userinfo_is_refused(cfg: Path) -> None:
    async with running_daemon(cfg, probe_target_enabled=True) as (_, base):
        status, body, _ = await get(f"{base}/probe?target=http://u:s3cr3t-pw@127.0.0.1:9/")
    assert status == 400 and "credentials in the URL" in json.loads(body)["error"]
    assert "s3cr3t-pw" not in body
