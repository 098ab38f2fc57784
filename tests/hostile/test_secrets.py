"""No configured secret leaves the probe, whatever an agent echoes back: every output is scanned.

Logs, /metrics, every report format, the fleet summary, /config, /probe (plain and debug), the status
page and the CLI in every format, while echo agents copy the credentials they receive into error
messages, answers, stream events, 500 pages and their public card.
"""

from __future__ import annotations

import asyncio
import base64
import html
import io
import json
import os
import re
import sys
from pathlib import Path
from urllib.parse import quote, quote_plus

from probe import logs
from tests.daemon.helpers import get, running_daemon, wait_for, write_config
from tests.hostile.echo import echo_agent

TOKEN = "tok-7Hq2Zp9XwLm4Rv8s"
API_KEY = "key-Qm3Vt6/Yb2Nc8Lp5w"  # a `/`: JSON may escape it
PAIR = "probe-bot:Pw-9xK2mZq7rT4vY"
BASIC = "Basic " + base64.b64encode(PAIR.encode()).decode()


def _forbidden() -> list[str]:
    """Every form of every secret, and the first 8 characters of each (what a truncation would leave)."""
    out: set[str] = set()
    for v in (TOKEN, API_KEY, PAIR, PAIR.partition(":")[2], BASIC.partition(" ")[2]):
        raw = v.encode()
        out |= {v, v[:8], quote(v, safe=""), quote_plus(v), html.escape(v), json.dumps(v)[1:-1],
                base64.b64encode(raw).decode().rstrip("="), base64.urlsafe_b64encode(raw).decode().rstrip("=")}
        # the tail of a split secret, hex, JSON \u escapes, base64 inside a longer blob at the other alignments
        out |= {v[-8:], raw.hex(), "".join(f"\\u{ord(c):04x}" for c in v)[:48]}
        out |= {base64.b64encode(pad + raw + b'"}').decode()[4:12] for pad in (b"x", b"xy")}
        # reversed, re-cased, JSON with `\/`, percent-encoding in lower-case hex
        out |= {v[::-1], v.upper(), v.lower(), json.dumps(v)[1:-1].replace("/", "\\/"),
                re.sub(r"%[0-9A-F]{2}", lambda m: m[0].lower(), quote(v, safe=""))}
    return sorted(out)


def _assert_clean(where: str, text: str) -> None:
    leaked = [s for s in _forbidden() if s in text]
    assert not leaked, f"{where} leaks {leaked}: ...{text[:3000]}"


async def test_no_output_carries_a_secret_while_agents_echo_them(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("ECHO_TOKEN", TOKEN)
    (tmp_path / "key").write_text(API_KEY + "\n")
    (tmp_path / "basic").write_text(BASIC)
    out = io.StringIO()
    logs.configure("debug", "json", stream=out)
    auth = {"bearer_token": {"env": "ECHO_TOKEN"},
            "headers": {"X-API-Key": {"file": str(tmp_path / "key")},
                        "Proxy-Authorization": {"file": str(tmp_path / "basic")}}}
    async with echo_agent() as origin:
        cfg = write_config(tmp_path / "p.yaml", [
            {"name": "echo", "url": origin, "modules": ["ping", "invoke", "stream", "full"], "auth": auth},
            {"name": "echo-expect", "url": origin, "modules": ["invoke"], "auth": auth, "expect_text": "absent"},
            {"name": "echo-500", "url": f"{origin}/b", "modules": ["ping", "invoke"], "auth": auth},
            {"name": "echo-t", "url": f"{origin}/t", "modules": ["ping", "invoke", "stream"], "auth": auth},
        ], modules={"full": {"prober": "full", "interval": "1h", "timeout": "20s", "safe_only": True}})
        async with running_daemon(cfg) as (d, base):
            await wait_for(lambda: len(d.history.keys()) == 10, timeout=30)
            texts: dict[str, str] = {}
            paths = ["/metrics", "/config", "/", "/report", "/report?format=markdown"]
            for agent in d.config.agents:
                paths += [f"/probe?agent={agent.name}", f"/probe?agent={agent.name}&debug=true"]
                for module in agent.modules:
                    paths += [f"/report?agent={agent.name}&module={module}&format={f}"
                              for f in ("json", "markdown", "junit")]
            for path in paths:
                status, body, _ = await get(base + path)
                assert status == 200, (path, body)
                texts[path] = body
            # a second discovery serves a card that carries what the agent saw on the first run
            status, body, _ = await get(f"{base}/report?agent=echo&module=invoke&refresh=true")
            texts["refresh"] = body
        assert json.loads(texts["/report?agent=echo-500&module=invoke&format=json"])["reason"]
        assert "<redacted>" in texts["/report?agent=echo&module=ping&format=json"]  # the echo was there
        for where, text in texts.items():
            _assert_clean(where, text)
        _assert_clean("daemon logs", out.getvalue())
        await _cli_outputs(origin, tmp_path)


async def _cli_outputs(origin: str, tmp_path: Path) -> None:
    env = {**os.environ, "ECHO_TOKEN": TOKEN}
    for fmt in ("text", "json", "markdown", "junit"):
        for target in (origin, f"{origin}/b"):
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "probe", "check", target, "--bearer-token-env", "ECHO_TOKEN",
                "--header", f"X-API-Key={API_KEY}", "--header", f"Proxy-Authorization={BASIC}", "--format", fmt,
                "--timeout", "10", "-v", env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
            stdout, stderr = await asyncio.wait_for(proc.communicate(), 60)
            assert proc.returncode in (0, 1), stderr.decode()
            _assert_clean(f"check --format {fmt} {target}", stdout.decode() + stderr.decode())
        assert stdout  # the CLI printed a report
    report = tmp_path / "r.json"
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "probe", "check", origin, "--suite", "full", "--safe-only", "--bearer-token-env",
        "ECHO_TOKEN", "--header", f"X-API-Key={API_KEY}", "--format", "json", "--output", str(report), env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    await asyncio.wait_for(proc.communicate(), 60)
    _assert_clean("check --suite full --output", report.read_text())
