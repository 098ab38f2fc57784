"""Credentials in URLs: refused when configured or given, a finding (never sent, never printed) when advertised."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from aiohttp import web

from probe.config import ConfigError, load
from probe.engine import run_probe
from probe.report import render
from probe.results import Status, StepName
from probe.target import Target
from probe.wire.http import HttpClient
from tests.agents.scripted import card
from tests.agents.server import serve
from tests.daemon.helpers import write_config


def test_config_refuses_userinfo_with_a_clear_error_and_no_password(tmp_path: Path) -> None:
    cfg = write_config(tmp_path / "p.yaml", [{"name": "a", "url": "http://bob:s3cr3t-pw@127.0.0.1:9/"}])
    with pytest.raises(ConfigError) as err:
        load(cfg)
    assert "agents.0.url" in str(err.value) and "credentials in the URL" in str(err.value)
    assert "s3cr3t-pw" not in str(err.value)


@pytest.mark.parametrize("flag", [[], ["--card-url", "http://u:s3cr3t-pw@127.0.0.1:9/card.json"]])
def test_cli_refuses_userinfo(flag: list[str]) -> None:
    url = "http://127.0.0.1:9/" if flag else "http://u:s3cr3t-pw@127.0.0.1:9/"
    proc = subprocess.run([sys.executable, "-m", "probe", "check", url, *flag, "--format", "json"],
                          capture_output=True, text=True, timeout=30, env={"TOKEN": "x" * 10, "PATH": "/usr/bin"})
    assert proc.returncode == 2, proc.stderr
    assert "credentials in the URL" in proc.stderr and "Traceback" not in proc.stderr
    assert "s3cr3t-pw" not in proc.stderr + proc.stdout and proc.stdout == ""


def _userinfo_agent(seen: list[str | None]) -> web.Application:
    async def card_handler(request: web.Request) -> web.Response:
        origin = f"http://{request.host}"
        return web.json_response(card(origin.replace("http://", "http://agent:adv3rtised-pw@")))

    async def rpc(request: web.Request) -> web.Response:
        seen.append(request.headers.get("Authorization"))
        body = await request.json()
        return web.json_response({"jsonrpc": "2.0", "id": body["id"], "error": {"code": -32001, "message": "nf"}})

    app = web.Application()
    app.router.add_get("/.well-known/agent-card.json", card_handler)
    app.router.add_post("/rpc", rpc)
    return app


@pytest.mark.parametrize("token", [None, "Bearer tok-abcdefgh1234"])
async def test_advertised_userinfo_is_a_finding_never_sent_never_printed(client: HttpClient,
                                                                         token: str | None) -> None:
    seen: list[str | None] = []
    async with serve(_userinfo_agent(seen)) as origin:
        headers = {"Authorization": token} if token else {}
        r = await run_probe(Target(name="t", url=origin, timeout=5, headers=headers), client,
                            steps=(StepName.PING,))
    assert r.success, r.model_dump_json(indent=1)  # no probe_error, no crash when a token is configured
    finding = r.check("interface.no_credentials")
    assert finding is not None and finding.status is Status.FAIL
    assert seen == [token]  # the probe's own credential (if any), never the card's Basic user:pass
    for fmt in ("json", "markdown", "junit", "text"):
        assert "adv3rtised-pw" not in render(r, fmt)
    assert r.interface_url is not None and "@" not in r.interface_url
