"""The daemon's push receiver: its route on the web server, its public URL validated at start-up, its metrics."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import aiohttp
import pytest
from pydantic import ValidationError

from probe.config import ConfigError, Settings, load
from probe.daemon import Daemon
from tests.daemon.helpers import get, running_daemon, write_config

STATUS = {"statusUpdate": {"taskId": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_COMPLETED"}}}


def _push_config(tmp_path: Path) -> Path:
    return write_config(tmp_path / "p.yaml", [{"name": "a", "url": "http://127.0.0.1:9", "modules": ["push"]}])


def test_a_push_module_without_a_public_url_refuses_to_start(tmp_path: Path) -> None:
    cfg = _push_config(tmp_path)
    config, sha = load(cfg)
    with pytest.raises(ConfigError, match="A2A_PROBE_PUSH_PUBLIC_URL"):
        Daemon(Settings(config_file=cfg), config, sha, cfg)


def test_the_cli_says_so_clearly(tmp_path: Path) -> None:
    cfg = _push_config(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "probe", "run", "--config", str(cfg), "--listen-address",
                           "127.0.0.1:0"], capture_output=True, text=True, timeout=30, check=False,
                          env={"PATH": "/usr/bin:/bin"})
    assert proc.returncode == 2
    assert "push public URL" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize(("url", "why"), [
    ("ftp://probe.example.com", "http(s)"),
    ("probe.example.com", "http(s)"),
    ("https://user:pw@probe.example.com", "credentials"),
    ("https://probe.example.com/?x=1", "query"),
    ("https://probe.example.com/#f", "fragment"),
    ("https://probe.example.com:0", "port"),
])
def test_public_url_is_validated(url: str, why: str) -> None:
    with pytest.raises(ValidationError, match=why):
        Settings(push_public_url=url)


def test_public_url_is_normalised() -> None:
    assert Settings(push_public_url="https://probe.example.com/base/").push_public_url == \
        "https://probe.example.com/base"
    assert Settings(push_public_url="  ").push_public_url is None


async def test_reload_adding_push_without_a_url_keeps_the_old_config(tmp_path: Path) -> None:
    cfg = write_config(tmp_path / "p.yaml", [{"name": "a", "url": "http://127.0.0.1:9", "modules": ["ping"]}])
    async with running_daemon(cfg) as (d, _base):
        _push_config(tmp_path)
        ok, message = await d.reload()
        assert not ok and "push public URL" in message
        assert d.config.agents[0].modules == ["ping"]


async def test_route_receives_for_a_registration_and_refuses_unknown_tokens(tmp_path: Path) -> None:
    cfg = write_config(tmp_path / "p.yaml", [{"name": "a", "url": "http://127.0.0.1:9", "modules": ["ping"]}])
    async with running_daemon(cfg, push_public_url="https://probe.example.com") as (d, base):
        reg = d.inbox.register(30)
        assert reg.url.startswith("https://probe.example.com/-/push/")
        local = base + reg.url.removeprefix("https://probe.example.com")
        headers = {"Authorization": f"Bearer {reg.credentials.get_secret_value()}",
                   "Content-Type": "application/a2a+json"}
        body = json.dumps(STATUS).encode()
        # bigger than the daemon's 64 KiB client_max_size: the receiver has its own (larger) bound
        big = json.dumps({**STATUS, "pad": "x" * 100_000}).encode()
        async with aiohttp.ClientSession() as s:
            for payload in (body, big):
                async with s.post(local, data=payload, headers=headers) as r:
                    assert r.status == 204
            async with s.post(base + "/-/push/" + "B" * 43, data=body, headers=headers) as r:
                assert r.status == 404
        assert len(reg.deliveries) == 2 and reg.deliveries[0].body == STATUS
        _, text, _ = await get(f"{base}/metrics")
        assert 'a2a_probe_push_receiver_refused_total{cause="unknown_token"} 1.0' in text
        assert "a2a_probe_push_receiver_registrations 1.0" in text
        # secrets never reach /config or the status page
        for path in ("/config", "/"):
            _, page, _ = await get(base + path)
            assert all(v not in page for v in reg.secrets())


async def test_route_stays_reachable_when_web_auth_is_on(tmp_path: Path) -> None:
    cfg = write_config(tmp_path / "p.yaml", [{"name": "a", "url": "http://127.0.0.1:9", "modules": ["ping"]}])
    (tmp_path / "tok").write_text("web-token-0123456789\n")
    async with running_daemon(cfg, push_public_url="https://probe.example.com",
                              web_auth_bearer_file=tmp_path / "tok") as (d, base):
        reg = d.inbox.register(30)
        local = base + reg.url.removeprefix("https://probe.example.com")
        headers = {"Authorization": f"Bearer {reg.credentials.get_secret_value()}",
                   "Content-Type": "application/a2a+json"}
        async with aiohttp.ClientSession() as s:
            async with s.post(local, data=json.dumps(STATUS), headers=headers) as r:
                assert r.status == 204  # the webhook's own credential, not the web's
            async with s.post(base + "/-/push/" + "C" * 43, data=b"{}", headers=headers) as r:
                assert r.status == 404  # still refused: an unknown token
        assert (await get(f"{base}/metrics"))[0] == 401  # everything else stays behind the web auth
