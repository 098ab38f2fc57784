"""The daemon as a process: demo end to end, SIGTERM drain, SIGHUP reload, bad config at start."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from tests.agents.catalogue import run_agent
from tests.daemon.helpers import write_config
from tests.peers.harness import free_port

EXE = [sys.executable, "-m", "probe"]


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as r:
        return str(r.read().decode())


def _wait_metrics(base: str, predicate, timeout: float = 20.0) -> str:  # type: ignore[no-untyped-def]
    end = time.monotonic() + timeout
    last = ""
    while time.monotonic() < end:
        try:
            last = _get(f"{base}/metrics")
            if predicate(last):
                return last
        except OSError:
            pass
        time.sleep(0.1)
    raise AssertionError(f"metrics never matched:\n{last[-2000:]}")


def _stop(proc: subprocess.Popen[str], sig: int = signal.SIGTERM) -> tuple[int, str, str]:
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=20)
    return proc.returncode, out, err


def test_demo_shows_one_passing_and_one_failing_agent_within_seconds() -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen([*EXE, "demo", "--listen-address", f"127.0.0.1:{port}"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        t0 = time.monotonic()
        text = _wait_metrics(base, lambda t: t.count("a2a_probe_success{") >= 6)
        assert time.monotonic() - t0 < 10
        assert 'a2a_probe_success{agent="demo-healthy",binding="jsonrpc",module="stream"} 1.0' in text
        assert 'a2a_probe_success{agent="demo-gateway-broken",binding="jsonrpc",module="invoke"} 0.0' in text
        assert ('a2a_probe_failure_reason_info{agent="demo-gateway-broken",binding="jsonrpc",module="invoke",'
                'reason="interface_path_doubled"} 1.0') in text
        md = _get(f"{base}/report?agent=demo-gateway-broken&format=markdown")
        assert "interface_path_doubled" in md and "base-URL setting should hold only scheme and host" in md
        assert "demo-healthy" in _get(f"{base}/")
    finally:
        code, out, err = _stop(proc, signal.SIGINT)
    assert code == 0, err
    assert f"status:  {base}/" in out and "/report?agent=demo-gateway-broken" in out
    assert "Traceback" not in err


def test_sigterm_drains_in_flight_probes_and_exits_cleanly(tmp_path: Path) -> None:
    import asyncio

    async def scenario() -> tuple[int, str]:
        async with run_agent("slow_task") as agent:
            port = free_port()
            cfg = write_config(tmp_path / "p.yaml", [{"name": "slow", "url": agent.origin, "modules": ["invoke"]}])
            proc = await asyncio.create_subprocess_exec(
                *EXE, "run", "--config", str(cfg), "--listen-address", f"127.0.0.1:{port}", "--log-format", "json",
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
            # wait until the probe's SendMessage is in flight (the agent holds it for 3 s)
            for _ in range(200):
                if any(r.method == "POST" for r in agent.requests):
                    break
                await asyncio.sleep(0.02)
            proc.send_signal(signal.SIGTERM)
            _, err = await asyncio.wait_for(proc.communicate(), 20)
            return proc.returncode or 0, err.decode()

    code, err = asyncio.run(scenario())
    assert code == 0, err
    assert "Traceback" not in err
    events = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
    names = [e["event"] for e in events]
    assert "draining" in names and names[-1] == "daemon_stopped"
    finished = [e for e in events if e["event"] == "probe_finished"]
    assert finished and finished[0]["verdict"] == "pass"  # the in-flight probe completed during the drain


def test_sighup_reloads_and_bad_config_keeps_running(tmp_path: Path) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    cfg = write_config(tmp_path / "p.yaml", [{"name": "a", "url": "http://127.0.0.1:9"}])
    proc = subprocess.Popen([*EXE, "run", "--config", str(cfg), "--listen-address", f"127.0.0.1:{port}"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_metrics(base, lambda t: 'agent="a"' in t)
        write_config(cfg, [{"name": "a", "url": "http://127.0.0.1:9"}, {"name": "b", "url": "http://127.0.0.1:9"}])
        proc.send_signal(signal.SIGHUP)
        _wait_metrics(base, lambda t: "a2a_probe_agents_configured 2.0" in t)
        cfg.write_text("agents: [\n")
        proc.send_signal(signal.SIGHUP)
        text = _wait_metrics(base, lambda t: "a2a_probe_config_last_reload_successful 0.0" in t)
        assert "a2a_probe_agents_configured 2.0" in text
    finally:
        code, _, err = _stop(proc)
    assert code == 0 and "Traceback" not in err


def test_bad_config_at_start_exits_2_with_a_clear_message(tmp_path: Path) -> None:
    cfg = tmp_path / "p.yaml"
    cfg.write_text("agents:\n  - {name: a, url: 'http://x', modules: [pnig]}\n")
    r = subprocess.run([*EXE, "run", "--config", str(cfg)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 2
    assert "unknown module(s) ['pnig']" in r.stderr and "Traceback" not in r.stderr
    r = subprocess.run([*EXE, "run"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "no config file" in r.stderr
