"""The status page at ``/`` as a person sees it: Debian's Chromium, headless, against the daemon run in-process.

The daemon probes a healthy demo agent and a broken one (a gateway that doubles its route prefix). Chromium
renders the page twice, once to dump the DOM (what the page says) and once to take a 1280x800 screenshot
(that it renders, with the coloured verdicts). .ci/run installs the browser (Debian `chromium`); without it the
test fails and says so. It never skips.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import signal
import struct
import sys
import zlib
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import aiohttp
import pytest

from probe import report
from probe.reasons import Reason, describe, recommend
from tests.agents.catalogue import GATEWAY_PREFIX, run_agent
from tests.daemon.helpers import get, running_daemon, wait_for, write_config
from tests.peers.harness import free_port

CHROMIUM = Path("/usr/bin/chromium")
WIDTH, HEIGHT = 1280, 800
SCREENSHOT_COPY = Path("/tmp/status-page.png")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync")
# the page's verdict badge colours (probe/web.py _PAGE): a person sees red FAIL and green PASS
FAIL_RED, PASS_GREEN = (0xB3, 0x26, 0x1E), (0x11, 0x63, 0x29)


@pytest.fixture(scope="session")
def chromium() -> Path:
    """Debian's Chromium (.ci/run installs it; a test never installs anything)."""
    assert CHROMIUM.exists() and os.access(CHROMIUM, os.X_OK), \
        f"{CHROMIUM} is missing: apt-get install chromium (as .ci/run does)"
    return CHROMIUM


async def _run_chromium(exe: Path, profile: Path, *args: str, timeout: float = 90.0) -> bytes:
    """Run headless Chromium without blocking the event loop the daemon serves on; return its stdout."""
    proc = await asyncio.create_subprocess_exec(
        str(exe), *FLAGS, f"--user-data-dir={profile}", *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, start_new_session=True)
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError:
        os.killpg(proc.pid, signal.SIGKILL)  # the browser and its helpers: the group this call started
        await proc.wait()
        raise AssertionError(f"chromium {' '.join(args)} did not finish in {timeout:.0f} s") from None
    assert proc.returncode == 0, f"chromium exited {proc.returncode}:\n{err.decode(errors='replace')[-3000:]}"
    return out


# --- the rendered DOM, read as text nodes (what is on screen, not what hides in attributes) -----------------

@dataclass
class Block:
    """One agent's <section>: its visible text, the text of each module row, its links and its marked text."""

    agent: str
    cls: str
    text: str = ""
    modules: dict[str, str] = field(default_factory=dict)  # data-module -> the row's text
    links: list[tuple[str | None, str, str]] = field(default_factory=list)  # (module row or None, text, href)
    marks: list[str] = field(default_factory=list)
    interfaces: dict[str, str] = field(default_factory=dict)  # data-interface -> the row's text, in page order


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[Block] = []
        self.text: list[str] = []
        self.title = ""
        self.lang = ""
        self.refresh = ""
        self.scripts = 0
        self.col_headers: list[str] = []
        self._block: Block | None = None
        self._module: str | None = None
        self._iface: str | None = None
        self._href: str | None = None
        self._link_text = ""
        self._mark: str | None = None
        self._in: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        self._in.append(tag)
        if tag == "html":
            self.lang = a.get("lang", "")
        elif tag == "meta" and a.get("http-equiv", "").lower() == "refresh":
            self.refresh = a.get("content", "")
        elif tag == "script":
            self.scripts += 1
        elif tag == "section" and "data-agent" in a:
            self._block = Block(agent=a["data-agent"], cls=a.get("class", ""))
            self.blocks.append(self._block)
        elif tag == "th" and a.get("scope") == "col" and len(self.blocks) == 1:
            self.col_headers.append("")
        elif tag == "tr" and "data-module" in a and self._block is not None:
            self._module = a["data-module"]
            self._block.modules[self._module] = ""
        elif tag == "tr" and "data-interface" in a and self._block is not None:
            self._iface = a["data-interface"]
            self._block.interfaces[self._iface] = ""
        elif tag == "a" and self._block is not None:
            self._href, self._link_text = a.get("href", ""), ""
        elif tag == "mark":
            self._mark = ""

    def handle_endtag(self, tag: str) -> None:
        if tag in self._in:
            while self._in and self._in.pop() != tag:
                pass
        if tag == "tr":
            self._module = self._iface = None
        elif tag == "section":
            self._block = None
        elif tag == "mark" and self._block is not None and self._mark is not None:
            self._block.marks.append(self._mark)
            self._mark = None
        elif tag == "a" and self._block is not None and self._href is not None:
            self._block.links.append((self._module, self._link_text.strip(), self._href))
            self._href = None

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        self.handle_endtag(tag)

    def handle_data(self, data: str) -> None:
        if "title" in self._in:
            self.title += data
            return
        if any(t in self._in for t in ("style", "script", "head")):
            return
        self.text.append(data)
        if self._in and self._in[-1] == "th" and self._module is None and self.col_headers \
                and len(self.blocks) == 1 and "thead" in self._in:
            self.col_headers[-1] += data.strip()
        if self._block is not None:
            self._block.text += data
            if self._module is not None:
                self._block.modules[self._module] += data
            if self._iface is not None:
                self._block.interfaces[self._iface] += data + " "  # cells apart, as a person reads them
        if self._href is not None:
            self._link_text += data
        if self._mark is not None:
            self._mark += data


def _squash(s: str) -> str:
    return " ".join(s.split())


# --- PNG, read with the standard library ------------------------------------------------------------------

def _png_pixels(data: bytes) -> tuple[int, int, list[bytes], int]:
    """(width, height, unfiltered scanlines, bytes per pixel) of an 8-bit RGB/RGBA PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, ihdr = 8, bytearray(), b""
    while pos < len(data):
        (length,), ctype = struct.unpack(">I", data[pos:pos + 4]), data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        assert zlib.crc32(ctype + body) == crc, f"bad CRC in {ctype!r}"
        if ctype == b"IHDR":
            ihdr = body
        elif ctype == b"IDAT":
            idat += body
        elif ctype == b"IEND":
            break
        pos += 12 + length
    assert len(ihdr) == 13, "no IHDR"
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", ihdr)
    assert depth == 8 and colour in (2, 6) and interlace == 0, f"unexpected PNG format {depth=} {colour=}"
    bpp = 3 if colour == 2 else 4
    raw, stride = zlib.decompress(bytes(idat)), width * bpp
    assert len(raw) == height * (stride + 1), "truncated image data"
    lines: list[bytes] = []
    prev = bytearray(stride)
    for y in range(height):
        ftype, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if ftype == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 0xFF
        elif ftype == 2:
            line = bytearray((x + p) & 0xFF for x, p in zip(line, prev, strict=True))
        elif ftype == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 0xFF
        elif ftype == 4:
            for i in range(stride):
                a, b = (line[i - bpp] if i >= bpp else 0), prev[i]
                c = prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        else:
            assert ftype == 0, f"bad filter type {ftype}"
        lines.append(bytes(line))
        prev = line
    return width, height, lines, bpp


def _near(px: tuple[int, ...], colour: tuple[int, int, int], tol: int = 8) -> bool:
    return all(abs(p - c) <= tol for p, c in zip(px, colour, strict=False))


# --- the test -----------------------------------------------------------------------------------------------

@pytest.mark.external
async def test_status_page_renders_in_chromium(tmp_path: Path, chromium: Path) -> None:
    async with run_agent("healthy") as good, run_agent("doubled_prefix") as bad:
        cfg = write_config(tmp_path / "probe.yaml", [
            {"name": "healthy-agent", "url": good.origin, "modules": ["ping", "stream"]},
            {"name": "broken-gateway", "url": f"{bad.origin}{GATEWAY_PREFIX}", "modules": ["ping", "stream"]},
        ])
        async with running_daemon(cfg) as (d, base):
            await wait_for(lambda: all(d.history.recent(a, m) for a in ("healthy-agent", "broken-gateway")
                                       for m in ("ping", "stream")), timeout=30)
            concrete = report.advice(d.history.latest("broken-gateway", "ping")[1]) or ""  # type: ignore[index]
            status, _, headers = await get(f"{base}/")
            assert status == 200 and headers["Content-Type"].startswith("text/html")
            shot = tmp_path / "status.png"
            dom, _ = await asyncio.gather(
                _run_chromium(chromium, tmp_path / "profile-dom", "--dump-dom", f"{base}/"),
                _run_chromium(chromium, tmp_path / "profile-shot", f"--screenshot={shot}",
                              f"--window-size={WIDTH},{HEIGHT}", f"{base}/"))
            page = _Page()
            page.feed(dom.decode())
            for block in page.blocks:  # every report link a person would click leads to that agent's report
                for _, _, href in block.links:
                    status, body, _ = await get(base + href)
                    assert status == 200 and block.agent in body, (href, body[:300])

    # --- what the page says, from the DOM Chromium rendered ---
    assert page.lang == "en" and page.scripts == 0 and page.refresh == "15"
    assert page.col_headers == ["Module", "Verdict", "Reason", "Last success", "Latency", "Report"]
    assert "1 failing" in page.title
    visible = _squash(" ".join(page.text))
    assert "2 agent(s), 1 failing" in visible and "failing: broken-gateway" in visible
    assert "probes: 2 failing, 2 passing, 0 pending" in visible

    blocks = {b.agent: b for b in page.blocks}
    assert [b.agent for b in page.blocks] == ["broken-gateway", "healthy-agent"], "one block per agent, failing first"
    broken, healthy = blocks["broken-gateway"], blocks["healthy-agent"]

    text = _squash(broken.text)
    assert broken.cls == "agent fail" and "FAIL" in text and "PASS" not in text
    assert text.count("interface_path_doubled — ") == 1, "one diagnosis for the reason both modules share"
    assert describe(Reason.INTERFACE_PATH_DOUBLED) in text  # the description is on screen, not only a tooltip
    # the concrete fix, not the generic advice
    assert concrete.startswith("The advertised URL should be ") and f"Fix: {concrete}" in text
    # the evidence: the card answered 200, the advertised URL 404, the doubled segment marked
    assert re.search(r"card http://127\.0\.0\.1:\d+/api/a2a/ns/name/\.well-known/agent-card\.json → HTTP 200", text)
    assert re.search(r"advertised URL http://127\.0\.0\.1:\d+/api/a2a/api/a2a/ns/name → HTTP 404", text)
    assert broken.marks == ["/api/a2a"]
    assert set(broken.modules) == {"ping", "stream"}
    assert all("never" in row and "checked" in row and " s ago" in row for row in broken.modules.values())

    text = _squash(healthy.text)
    assert healthy.cls == "agent pass" and "PASS" in text and "FAIL" not in text
    assert "Fix:" not in text and "interface_path_doubled" not in text and not healthy.marks
    for row in healthy.modules.values():  # last success: relative and absolute; latency
        assert " s ago" in row and " UTC" in row and " ms" in row

    for block in (broken, healthy):
        assert (None, "full report", f"/report?agent={block.agent}&format=html") in block.links
        for module in ("ping", "stream"):
            for fmt in ("html", "markdown", "json"):
                assert (module, fmt, f"/report?agent={block.agent}&module={module}&format={fmt}") in block.links

    # --- what the page looks like, from the screenshot ---
    data = shot.read_bytes()
    shutil.copyfile(shot, SCREENSHOT_COPY)
    assert len(data) > 20_000, f"screenshot is only {len(data)} bytes; blank?"
    width, height, lines, bpp = _png_pixels(data)
    assert (width, height) == (WIDTH, HEIGHT)
    pixels = [tuple(line[x:x + 3]) for line in lines[::2] for x in range(0, len(line), bpp * 2)]
    colours = set(pixels)
    non_white = sum(1 for p in pixels if p != (255, 255, 255))
    assert len(colours) > 50, "the screenshot has almost no distinct colours: blank page?"
    assert 0.02 < non_white / len(pixels) < 0.9, f"{non_white / len(pixels):.1%} of the screenshot is not white"
    assert sum(_near(p, FAIL_RED) for p in pixels) > 100, "no red FAIL badge visible"
    assert sum(_near(p, PASS_GREEN) for p in pixels) > 100, "no green PASS badge visible"


@pytest.mark.external
async def test_the_page_and_the_html_report_list_each_interface_failing_first(tmp_path: Path,
                                                                              chromium: Path) -> None:
    """An agent on three bindings whose REST route 404s and whose gRPC port is closed while JSON-RPC works: the
    daemon probes all three, and the page and the report say which interface fails and why, failing first."""
    from tests.agents.bindings import closed_port, multi_binding_app
    from tests.agents.server import serve

    grpc_url = f"http://127.0.0.1:{closed_port()}"
    async with serve(multi_binding_app({}, extra=[(grpc_url, "GRPC", "1.0")])) as origin:
        cfg = write_config(tmp_path / "probe.yaml", [{"name": "three-bindings", "url": origin,
                                                      "modules": ["ping", "invoke"]}])
        async with running_daemon(cfg) as (d, base):
            await wait_for(lambda: all(d.history.recent("three-bindings", m) for m in ("ping", "invoke")),
                           timeout=30)
            dom, html_report = await asyncio.gather(
                _run_chromium(chromium, tmp_path / "profile-page", "--dump-dom", f"{base}/"),
                _run_chromium(chromium, tmp_path / "profile-report", "--dump-dom",
                              f"{base}/report?agent=three-bindings&module=ping&format=html"))
    page = _Page()
    page.feed(dom.decode())
    (block,) = page.blocks
    assert block.cls == "agent fail"
    # (a URL wraps at its slashes: <wbr> splits its text nodes)
    rows = {key: _squash(text).replace("/ ", "/") for key, text in block.interfaces.items()}
    assert list(rows) == ["grpc 1.0", "http_json 1.0", "jsonrpc 1.0"], "the failing interfaces first"
    assert rows["grpc 1.0"].startswith(f"grpc 1.0 {grpc_url} FAIL invoke_unreachable (ping, invoke)"), rows
    assert re.match(r"http_json 1\.0 http://127\.0\.0\.1:\d+/rest FAIL invoke_route_not_found \(ping, invoke\)",
                    rows["http_json 1.0"]), rows
    assert re.fullmatch(r"jsonrpc 1\.0 http://127\.0\.0\.1:\d+/rpc PASS —", rows["jsonrpc 1.0"]), rows
    # the per-agent HTML report: its Interfaces table, failing first, each with its reason
    report_page = _Page()
    report_page.feed(html_report.decode())
    text = _squash(" ".join(report_page.text))
    table = text.split("Interfaces interface url verdict reason level checks failed", 1)[1].strip()
    assert re.match(rf"grpc 1\.0 {re.escape(grpc_url)} FAIL invoke_unreachable .*? http_json 1\.0 "
                    r"http://127\.0\.0\.1:\d+/rest FAIL invoke_route_not_found .*? jsonrpc 1\.0 "
                    r"http://127\.0\.0\.1:\d+/rpc PASS", table), table[:600]


@pytest.mark.external
async def test_the_demos_status_page_gives_the_concrete_fix_and_the_404(tmp_path: Path, chromium: Path) -> None:
    """`a2a-probe demo` as a newcomer runs it: the broken agent's block says what to set and shows the 404."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "probe", "demo", "--listen-address", f"127.0.0.1:{port}", "--log-format", "json",
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL, start_new_session=True)
    try:
        loop = asyncio.get_running_loop()
        end = loop.time() + 30
        while True:  # until the broken agent's first ping result is in
            with contextlib.suppress(aiohttp.ClientError):
                if (await get(f"{base}/report?agent=demo-gateway-broken&module=ping"))[0] == 200:
                    break
            assert loop.time() < end and proc.returncode is None, "the demo did not produce a result in 30 s"
            await asyncio.sleep(0.2)
        dom = await _run_chromium(chromium, tmp_path / "profile", "--dump-dom", f"{base}/")
    finally:
        proc.terminate()
        await asyncio.wait_for(proc.wait(), 30)
    page = _Page()
    page.feed(dom.decode())
    blocks = {b.agent: b for b in page.blocks}
    assert page.blocks[0].agent == "demo-gateway-broken", "the failing agent comes first"
    text = _squash(blocks["demo-gateway-broken"].text)
    assert re.search(r"Fix: The advertised URL should be http://127\.0\.0\.1:\d+/api/a2a/demo/broken\. ", text), text
    assert re.search(r"card http://127\.0\.0\.1:\d+/api/a2a/demo/broken/\.well-known/agent-card\.json → HTTP 200",
                     text), text
    assert re.search(r"advertised URL http://127\.0\.0\.1:\d+/api/a2a/api/a2a/demo/broken → HTTP 404", text), text
    assert blocks["demo-gateway-broken"].marks == ["/api/a2a"]


async def test_status_page_escapes_what_it_shows() -> None:
    """Names come from config; whatever they hold, the page prints them as text."""
    from datetime import UTC, datetime, timedelta

    from probe.config import Agent
    from probe.results import ProbeResult
    from probe.web import DAEMON, status_page

    evil = '<script>alert("x")</script>&amp;'
    agent = Agent.model_construct(name=evil, url="http://127.0.0.1:9", modules=["ping"])
    failed = ProbeResult(agent=evil, target_url="http://127.0.0.1:9", interface_url='http://h/"><b>x</b>',
                         success=False, reason=Reason.CARD_UNREACHABLE, duration_s=0.0123,
                         started_at=datetime.now(UTC) - timedelta(minutes=5))
    from probe.history import History

    history = History(5)
    history.add("ping", failed)
    fake: Any = SimpleNamespace(config=SimpleNamespace(agents=[agent]), shard=SimpleNamespace(owns=lambda _n: True),
                                history=history)
    resp = await status_page(SimpleNamespace(app={DAEMON: fake}))  # type: ignore[arg-type]
    body = resp.text or ""
    assert "<script>" not in body and "<b>x</b>" not in body
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;amp;" in body
    assert "agent=%3Cscript%3Ealert%28%22x%22%29%3C%2Fscript%3E%26amp%3B&amp;module=ping" in body
    assert "5 min ago" in body and "12 ms" in body and "never" in body
    assert f"Fix:</strong> {recommend(Reason.CARD_UNREACHABLE)}" in body
