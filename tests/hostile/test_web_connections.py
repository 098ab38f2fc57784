"""Hostile callers that hold connections to the daemon's web server: over the cap they are refused at once, a
caller that never finishes its headers is cut at the header deadline, an idle keep-alive connection at the
keep-alive timeout; and a probe that cannot open a socket (EMFILE) is the probe's overload, not the agent's."""

from __future__ import annotations

import asyncio
import errno
import socket
import ssl
import time
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from probe.config import Agent, Module, Prober
from probe.history import History
from probe.metrics import PREFIX, Metrics
from probe.reasons import Reason
from probe.runner import Runner
from probe.wire import http
from probe.wire.http import HttpClient
from tests.agents.catalogue import run_agent
from tests.daemon.helpers import get, metric_value, running_daemon, wait_for, write_config
from tests.hostile import certs


async def _open(base: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    host, port = base.removeprefix("http://").rsplit(":", 1)
    return await asyncio.open_connection(host, int(port))


async def _closed_within(reader: asyncio.StreamReader, seconds: float) -> bytes:
    """Everything the server sent until it closed the connection; fails if it is still open after `seconds`."""
    got = b""
    async with asyncio.timeout(seconds):
        while chunk := await reader.read(4096):
            got += chunk
    return got


async def test_idle_connections_over_the_cap_are_refused_and_probing_goes_on(tmp_path: Path) -> None:
    async with run_agent("healthy") as agent:
        cfg = write_config(tmp_path / "p.yaml", [{"name": "good", "url": agent.origin, "modules": ["fast"]}],
                           modules={"fast": {"prober": "ping", "interval": "1s", "timeout": "1s"}})
        async with running_daemon(cfg, web_max_connections=8, web_header_timeout=1.5) as (d, base):
            assert d._web is not None
            held = [await _open(base) for _ in range(8)]  # idle: they send nothing
            await wait_for(lambda: d._web is not None and d._web.open_connections == 8)
            t0 = time.monotonic()
            over = [await _open(base) for _ in range(20)]
            answers = await asyncio.gather(*(_closed_within(r, 1.0) for r, _ in over))
            assert time.monotonic() - t0 < 1.4  # at once, not queued behind the held ones' deadline
            assert all(a.startswith(b"HTTP/1.1 503 ") for a in answers), answers[:2]
            assert d._web.open_connections == 8
            # the held ones never sent their headers: cut at the header deadline, then the web server answers
            cut = await asyncio.gather(*(_closed_within(r, 3.0) for r, _ in held))
            assert cut == [b""] * 8
            await wait_for(lambda: d._web is not None and d._web.open_connections == 0)
            status, text, _ = await get(f"{base}/metrics")
            assert status == 200
            assert metric_value(text, PREFIX + "web_connections_refused_total", cause="limit") == 20
            assert metric_value(text, PREFIX + "web_connections_refused_total", cause="header_timeout") == 8
            runs = metric_value(text, PREFIX + "runs_total", agent="good", module="fast", binding="jsonrpc") or 0
            # probing went on through the flood and after it, and the agent was never blamed
            await wait_for(lambda: len(d.history.recent("good", "fast")) >= runs + 1, timeout=5)
            status, text, _ = await get(f"{base}/metrics")
            assert metric_value(text, PREFIX + "success", agent="good", module="fast", binding="jsonrpc") == 1
            assert not [ln for ln in text.splitlines() if ln.startswith(PREFIX + "failures_total{")
                        and 'agent="good"' in ln and not ln.endswith(" 0.0")]
            for _, w in held + over:
                w.close()


async def test_a_slowloris_caller_is_cut_at_the_header_deadline(tmp_path: Path) -> None:
    cfg = write_config(tmp_path / "p.yaml", [{"name": "a", "url": "http://127.0.0.1:9", "modules": ["ping"]}])
    async with running_daemon(cfg, web_header_timeout=0.5, web_keepalive_timeout=5) as (_, base):
        reader, writer = await _open(base)
        t0 = time.monotonic()
        writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        cut_after = None
        with pytest.raises((ConnectionError, OSError)):  # noqa: PT012  (the write fails once the server closed)
            for i in range(60):  # one header line each 0.1 s: never complete
                writer.write(f"X-Slow-{i}: y\r\n".encode())
                await writer.drain()
                try:
                    if await asyncio.wait_for(reader.read(100), 0.1) == b"":
                        cut_after = time.monotonic() - t0
                        raise ConnectionResetError("closed by the server")
                except TimeoutError:
                    pass
        assert cut_after is not None and 0.4 < cut_after < 2.0, cut_after
        writer.close()
        # a caller whose headers came in time is not cut by the header deadline: keep-alive governs its idling
        reader, writer = await _open(base)
        for _ in range(2):
            writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            head = await asyncio.wait_for(reader.readuntil(b"ok\n"), 2)
            assert head.startswith(b"HTTP/1.1 200 ")
            await asyncio.sleep(1.0)  # twice the header deadline, idle between requests
        writer.close()
        status, text, _ = await get(f"{base}/metrics")
        assert status == 200
        assert metric_value(text, PREFIX + "web_connections_refused_total", cause="header_timeout") == 1
        assert metric_value(text, PREFIX + "web_connections_refused_total", cause="limit") == 0


async def test_an_idle_keepalive_connection_is_closed_after_the_keepalive_timeout(tmp_path: Path) -> None:
    cfg = write_config(tmp_path / "p.yaml", [{"name": "a", "url": "http://127.0.0.1:9", "modules": ["ping"]}])
    async with running_daemon(cfg, web_keepalive_timeout=0.5) as (_, base):
        reader, writer = await _open(base)
        writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        t0 = time.monotonic()
        rest = await _closed_within(reader, 3.0)
        assert rest.startswith(b"HTTP/1.1 200 ") and time.monotonic() - t0 >= 0.4
        writer.close()


def _no_sockets(monkeypatch: pytest.MonkeyPatch, after: int) -> None:
    """socket.socket in the probe's HTTP client raises EMFILE from the (after+1)-th socket on."""
    real = socket.socket
    made = [0]

    def fake(*args: Any, **kwargs: Any) -> socket.socket:
        made[0] += 1
        if made[0] > after:
            raise OSError(errno.EMFILE, "Too many open files")
        return real(*args, **kwargs)

    class _Module:  # the socket module as probe/wire/http.py sees it, but for socket.socket
        def __getattr__(self, name: str) -> Any:
            return fake if name == "socket" else getattr(socket, name)

    monkeypatch.setattr(http, "socket", _Module())  # only the probe's sockets: the agent's accept() still works


@pytest.mark.parametrize(("prober", "after"), [(Prober.PING, 0), (Prober.PING, 1), (Prober.INVOKE, 1)])
async def test_out_of_file_descriptors_is_the_probes_overload(monkeypatch: pytest.MonkeyPatch, prober: Prober,
                                                              after: int) -> None:
    # after=0: the card's fetch cannot connect; after=1: the card came, the call to the interface (on a fresh
    # connection) cannot: neither is card_unreachable / invoke_unreachable
    async with run_agent("healthy") as agent, HttpClient() as client:
        metrics, history = Metrics([1], []), History(5)
        runner = Runner(client, metrics, history, max_concurrency=1)
        module = Module(prober=prober, interval=5, timeout=3, fresh_connection=True)
        metrics.add_job("a", "m", module.interval, module.timeout)
        _no_sockets(monkeypatch, after)
        result = await runner.run(Agent(name="a", url=agent.origin or ""), module, timeout=module.timeout)
        assert result.reason is Reason.PROBE_OVERLOADED, (result.reason, result.problem)
        assert "out of file descriptors" in (result.problem or "") + str(result.model_dump())
        runner.record("m", result)
    assert metrics.registry.get_sample_value(PREFIX + "scheduler_missed_runs_total",
                                             {"agent": "a", "module": "m", "cause": "overloaded"}) == 1
    assert not [s for fam in metrics.registry.collect() for s in fam.samples if s.labels.get("agent") == "a"
                and s.name in (PREFIX + "failures_total", PREFIX + "runs_total")]


async def test_tls_handshakes_count_against_the_cap_and_have_the_header_deadline(tmp_path: Path) -> None:
    # callers that connect to a TLS listener and never start (or finish) a handshake: before, aiohttp's server saw
    # a connection only once its handshake was done, so none of them counted and each held a descriptor for the
    # event loop's 60 s handshake timeout
    pem, _, _ = certs.make(tmp_path, "listener")
    cfg = write_config(tmp_path / "p.yaml", [{"name": "a", "url": "http://127.0.0.1:9", "modules": ["ping"]}])
    async with running_daemon(cfg, web_max_connections=4, web_header_timeout=1.0,
                              web_tls_cert_file=pem.cert, web_tls_key_file=pem.key) as (d, base):
        assert d._web is not None
        held = [await _open(base) for _ in range(4)]  # TCP only: no ClientHello
        await wait_for(lambda: d._web is not None and d._web.open_connections == 4)
        t0 = time.monotonic()
        over = [await _open(base) for _ in range(10)]
        answers = await asyncio.gather(*(_closed_within(r, 0.8) for r, _ in over), return_exceptions=True)
        assert time.monotonic() - t0 < 0.9  # closed at once, not after a handshake timeout
        assert all(a == b"" or isinstance(a, ConnectionError) for a in answers), answers
        cut = await asyncio.gather(*(_closed_within(r, 3.0) for r, _ in held), return_exceptions=True)
        assert all(a == b"" or isinstance(a, ConnectionError) for a in cut), cut  # at the header deadline
        await wait_for(lambda: d._web is not None and d._web.open_connections == 0)
        # a real TLS caller is served, twice on one keep-alive connection
        ctx = ssl.create_default_context(cafile=str(pem.cert))
        url = base.replace("http://", "https://")
        async with aiohttp.ClientSession() as s:
            for _ in range(2):
                async with s.get(f"{url}/metrics", ssl=ctx) as r:
                    assert r.status == 200
                    text = await r.text()
        assert metric_value(text, PREFIX + "web_connections_refused_total", cause="limit") == 10
        assert metric_value(text, PREFIX + "web_connections_refused_total", cause="handshake") == 4
        assert metric_value(text, PREFIX + "web_connections") == 1
        for _, w in held + over:
            w.close()


async def test_a_trickled_push_body_is_cut_at_the_deadline(tmp_path: Path) -> None:
    # complete headers, then one byte of the body each 0.1 s: bounded by size only before, it held a web
    # connection as long as the caller liked (and many of them held all of them)
    cfg = write_config(tmp_path / "p.yaml", [{"name": "a", "url": "http://127.0.0.1:9", "modules": ["ping"]}])
    async with running_daemon(cfg, web_header_timeout=0.5, push_public_url="http://127.0.0.1:1") as (d, base):
        reg = d.inbox.register(30)
        reader, writer = await _open(base)
        writer.write(f"POST /-/push/{reg.route} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     f"Content-Length: 200\r\n\r\n{{".encode())
        t0 = time.monotonic()
        got = b""
        with pytest.raises((ConnectionError, OSError)):  # noqa: PT012  (the write fails once the server closed)
            for _ in range(60):
                writer.write(b" ")
                await writer.drain()
                try:
                    chunk = await asyncio.wait_for(reader.read(4096), 0.1)
                except TimeoutError:
                    continue
                got += chunk
                if chunk == b"":
                    raise ConnectionResetError("closed by the server")
        cut_after = time.monotonic() - t0
        assert got.startswith(b"HTTP/1.1 408 ") and b"too_slow" in got, got
        assert 0.4 < cut_after < 2.5, cut_after
        assert [dl.problem for dl in reg.deliveries] == ["the body did not arrive within 0.5 s of its headers"]
        writer.close()
        _, text, _ = await get(f"{base}/metrics")
        assert metric_value(text, PREFIX + "push_receiver_refused_total", cause="too_slow") == 1
        # a delivery whose body comes in time is taken
        async with aiohttp.ClientSession() as s, s.post(f"{base}/-/push/{reg.route}", json={"a": 1}) as r:
            assert r.status in (204, 401)
        assert reg.deliveries[-1].body == {"a": 1}
