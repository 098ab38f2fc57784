"""Hostile callers of the daemon's web server: malformed requests are one warning line each, and fuzzed
requests never get a 5xx nor kill the daemon."""

from __future__ import annotations

import asyncio
import concurrent.futures
import io
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import aiohttp
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from probe import logs
from tests.daemon.helpers import running_daemon, write_config

GARBAGE = [
    b"GARBAGE\r\n\r\n",  # not a method
    b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n",  # bad header value
    b"GET /\x00 HTTP/1.1\r\nHost: x\r\n\r\n",  # a NUL in the path
    b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03",  # a TLS ClientHello on the plain port
    b"GET / HTTP/1.1\r\n" + b"X: " + b"a" * 20000 + b"\r\n\r\n",  # an oversized header
]


async def _raw(base: str, data: bytes) -> bytes:
    host, port = base.removeprefix("http://").rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(data)
    await writer.drain()
    try:
        return await asyncio.wait_for(reader.read(200), 5)
    finally:
        writer.close()


async def test_malformed_requests_are_one_warning_line_each(tmp_path: Path) -> None:
    out = io.StringIO()
    logs.configure("info", "json", stream=out)
    cfg = write_config(tmp_path / "p.yaml", [{"name": "a", "url": "http://127.0.0.1:9", "modules": ["ping"]}])
    async with running_daemon(cfg) as (_, base):
        start = len(out.getvalue())
        for data in GARBAGE:
            answer = await _raw(base, data)
            assert answer.startswith(b"HTTP/1.") and b" 400 " in answer.split(b"\r\n")[0], answer
        await asyncio.sleep(0.1)
        lines = [json.loads(ln) for ln in out.getvalue()[start:].splitlines() if ln.strip()]
        async with aiohttp.ClientSession() as s, s.get(f"{base}/healthz") as r:
            assert r.status == 200  # still serving
    bad = [ln for ln in lines if ln.get("event") == "http_bad_request"]
    assert len(bad) == len(GARBAGE), lines
    assert all(ln["level"] == "warning" and ln["peer"] and ln["error"] for ln in bad)
    assert "Traceback" not in out.getvalue() and not [ln for ln in lines if ln.get("level") == "error"]
    assert any("Invalid method" in ln["error"] for ln in bad)


@pytest.fixture(scope="module")
def fuzz_daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[asyncio.AbstractEventLoop, str]]:
    """A daemon on its own loop in a thread, so hypothesis (synchronous) can drive it; alive at the end."""
    cfg = write_config(tmp_path_factory.mktemp("fuzz") / "p.yaml",
                       [{"name": "a", "url": "http://127.0.0.1:9", "modules": ["ping", "full"]}])
    loop = asyncio.new_event_loop()
    ready: concurrent.futures.Future[str] = concurrent.futures.Future()
    stop = asyncio.Event()

    async def main() -> None:
        async with running_daemon(cfg, probe_target_enabled=True, probe_target_networks=["127.0.0.0/8"]) as (_, b):
            ready.set_result(b)
            await stop.wait()

    thread = threading.Thread(target=loop.run_until_complete, args=(main(),), daemon=True)
    thread.start()
    base = ready.result(30)
    yield loop, base

    async def alive() -> int:
        async with aiohttp.ClientSession() as s, s.get(f"{base}/healthz") as r:
            return r.status

    assert asyncio.run_coroutine_threadsafe(alive(), loop).result(10) == 200  # never a dead daemon
    loop.call_soon_threadsafe(stop.set)
    thread.join(30)


_PATHS = st.sampled_from(["/", "/metrics", "/probe", "/report", "/healthz", "/readyz", "/config", "/-/reload",
                          "/nope", "//", "/probe/"])
_KEYS = st.sampled_from(["agent", "target", "module", "debug", "format", "refresh", "x"])
_VALUES = st.one_of(st.sampled_from(["a", "ping", "full", "true", "false", "junit", "http://127.0.0.1:9/",
                                     "http://169.254.169.254/", "file:///etc/passwd", "", "0", "../../"]),
                    st.text(max_size=40))


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(method=st.sampled_from(["GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS"]), path=_PATHS,
       query=st.lists(st.tuples(_KEYS, _VALUES), max_size=4),
       headers=st.dictionaries(st.sampled_from(["X-Prometheus-Scrape-Timeout-Seconds", "Authorization", "Accept",
                                                "Content-Type", "Accept-Encoding"]),
                               st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=30),
                               max_size=3),
       body=st.binary(max_size=200))
def test_fuzzed_requests_never_get_a_5xx(fuzz_daemon: tuple[asyncio.AbstractEventLoop, str], method: str,
                                         path: str, query: list[tuple[str, str]], headers: dict[str, str],
                                         body: bytes) -> None:
    loop, base = fuzz_daemon
    qs = "&".join(f"{quote(k)}={quote(v)}" for k, v in query)

    async def one() -> int:
        async with aiohttp.ClientSession() as s, s.request(method, f"{base}{path}?{qs}", headers=headers,
                                                           data=body, timeout=aiohttp.ClientTimeout(15)) as r:
            await r.read()
            return r.status

    status = asyncio.run_coroutine_threadsafe(one(), loop).result(30)
    assert status < 500 or (path == "/-/reload" and method == "POST"), (method, path, qs, status)


async def test_oversized_and_odd_requests_get_a_clear_4xx_and_the_daemon_stays_clean(tmp_path: Path) -> None:
    """Huge query strings, thousands of parameters, odd encodings, path tricks, a hostile scrape-timeout header and
    a caller-chosen target with credentials: each a specific 4xx (or a plain probe), none a 5xx, a traceback, an
    error line or a credential in the log; 200 half-open connections do not stop the daemon answering."""
    out = io.StringIO()
    logs.configure("info", "json", stream=out)
    cfg = write_config(tmp_path / "p.yaml", [{"name": "a", "url": "http://127.0.0.1:9", "modules": ["ping"]}])
    timeout = "X-Prometheus-Scrape-Timeout-Seconds"
    cases: list[tuple[str, dict[str, str], int, str]] = [
        ("/probe?agent=a&x=" + "y" * 100_000, {}, 400, "Got more than 8190 bytes"),
        ("/probe?" + "&".join(f"agent=a{i}" for i in range(2000)), {}, 400, "Got more than 8190 bytes"),
        ("/probe?agent=%ff%fe%00", {}, 404, "unknown agent"),
        ("/report?agent=a&format=%00%ff", {}, 400, "format must be one of"),
        ("/%2e%2e/%2e%2e/etc/passwd", {}, 404, "Not Found"),
        ("/probe?target=http://u:Pw-SECRET-77x@127.0.0.1:9/&module=ping", {}, 400, "credentials in the URL"),
        ("/probe?target=http://127.0.0.1:9/" + "a" * 5000, {}, 400, "longer than 2048 characters"),
        ("/probe?target=file:///etc/passwd", {}, 400, "must start with http:// or https://"),
        *[("/probe?agent=a", {timeout: v}, 400, "out of range") for v in ("nan", "inf", "-5", "1e308")],
    ]
    async with running_daemon(cfg, probe_target_enabled=True, probe_target_networks=["127.0.0.0/8"]) as (_, base):
        host, port = base.removeprefix("http://").rsplit(":", 1)
        half_open = [(await asyncio.open_connection(host, int(port)))[1] for _ in range(200)]
        for w in half_open:
            w.write(b"GET / HTTP/1.1\r\nHost: x\r\n")  # and never the blank line
        async with aiohttp.ClientSession() as s:
            for path, headers, status, fragment in cases:
                async with s.get(base + path, headers=headers, timeout=aiohttp.ClientTimeout(10)) as r:
                    body = await r.text()
                assert (r.status, fragment in body) == (status, True), (path[:80], r.status, body[:200])
            async with s.get(f"{base}/healthz", timeout=aiohttp.ClientTimeout(5)) as r:
                assert r.status == 200
        for w in half_open:
            w.close()
    text = out.getvalue()
    assert "Traceback" not in text and "Pw-SECRET-77x" not in text
    assert not [ln for ln in text.splitlines() if '"level": "error"' in ln]
