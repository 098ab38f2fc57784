"""An agent whose text holds control characters and lone surrogates (a JSON "\\ud800" decodes to one): every output
shows them as escapes. Before, a surrogate could not be encoded as UTF-8, so `check` printed no report in any
format ("internal error"), and raw control characters broke JUnit XML and reached the operator's terminal
(ESC ] 0 ; ... BEL sets its title, ESC [ 2 J clears it)."""

from __future__ import annotations

import asyncio
import io
import json
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest

from probe import logs, redact
from tests.daemon.helpers import get, running_daemon, wait_for, write_config
from tests.hostile.servers import Hostile, Request, Writer, card_bytes, hostile_agent, response

HOSTILE = "evil\u0000\u0007\u001b]0;pwned\u0007\u001b[2J\u009b\ud800\udfff ]]> <x/>"
RAW = ("\x00", "\x07", "\x1b", "\x9b", "\ud800", "\udfff")


async def _card(w: Writer, req: Request) -> None:
    doc = json.loads(card_bytes(f"http://{req.headers['host']}"))
    doc["name"] = doc["description"] = HOSTILE
    w.write(response(body=json.dumps(doc).encode()))  # json.dumps writes each as a \\u escape: valid JSON


async def _rpc(w: Writer, req: Request) -> None:
    w.write(response(body=json.dumps({"jsonrpc": "2.0", "id": req.rpc.get("id"),
                                      "error": {"code": -32603, "message": HOSTILE}}).encode()))


def _assert_shown(where: str, text: str) -> None:
    assert not [c for c in RAW if c in text], (where, text[:2000])
    assert "\\x1b]0;pwned\\x07" in text, (where, text[:2000])  # shown, as an escape


def test_text_shows_control_characters_and_lone_surrogates_as_escapes() -> None:
    assert redact.text("a\x1b[2Jb\ud800c\x9bd\x7f") == "a\\x1b[2Jb\\ud800c\\x9bd\\x7f"
    assert redact.text("tab\tand\nnewline stay; ünïcödé and emoji 🙂 too") == \
        "tab\tand\nnewline stay; ünïcödé and emoji 🙂 too"
    once = redact.text(HOSTILE)
    assert redact.text(once) == once  # the last-line pass of every output changes nothing more


@pytest.mark.parametrize("fmt", ["text", "json", "markdown", "junit"])
async def test_check_prints_a_report_in_every_format(fmt: str, tmp_path: Path) -> None:
    async with hostile_agent(Hostile(card=_card, rpc=_rpc)) as agent:
        out = tmp_path / f"report.{fmt}"
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "probe", "check", agent.origin, "--no-stream", "--format", fmt, "--output",
            str(out), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        stdout, stderr = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 1, stderr.decode()  # the agent failed; before: 2, "internal error: UnicodeEncodeError"
    report = out.read_text(encoding="utf-8")
    shown = report.replace("\\\\", "\\") if fmt == "json" else report  # JSON escapes the escape's backslash
    _assert_shown(fmt, shown + stdout.decode() + stderr.decode())
    if fmt == "junit":
        ElementTree.fromstring(report)  # well-formed XML
    if fmt == "json":
        assert json.loads(report)["reason"] in ("card_invalid", "invoke_a2a_error")


async def test_the_daemon_serves_every_output(tmp_path: Path) -> None:
    stream = io.StringIO()
    logs.configure("info", "json", stream=stream)
    async with hostile_agent(Hostile(card=_card, rpc=_rpc)) as agent:
        cfg = write_config(tmp_path / "p.yaml", [{"name": "h", "url": agent.origin, "modules": ["invoke"]}])
        async with running_daemon(cfg) as (d, base):
            await wait_for(lambda: len(d.history.recent("h", "invoke")) >= 1, timeout=20)
            for path in ("/", "/report", "/report?agent=h&module=invoke&format=json",
                         "/report?agent=h&module=invoke&format=markdown", "/report?agent=h&module=invoke&format=junit",
                         "/probe?agent=h&module=invoke&debug=true"):
                status, body, _ = await get(base + path)
                assert status == 200, (path, body[:300])
                assert not [c for c in RAW if c in body], (path, body[:2000])
                if "junit" in path:
                    ElementTree.fromstring(body)
    lines = stream.getvalue()
    assert not [c for c in RAW if c in lines] and '"level": "error"' not in lines, lines[-2000:]
