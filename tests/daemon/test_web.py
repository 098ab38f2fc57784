"""The daemon's HTTP endpoints against real agents (demo/fault agents and the SDK peers)."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from tests.agents.catalogue import GATEWAY_PREFIX, run_agent
from tests.daemon.helpers import get, post, running_daemon, wait_for, write_config
from tests.daemon.helpers import metric_value as _value
from tests.peers.harness import Peer


@pytest.fixture
async def two_agents():  # type: ignore[no-untyped-def]
    async with run_agent("healthy") as good, run_agent("doubled_prefix") as bad:
        yield good.origin, f"{bad.origin}{GATEWAY_PREFIX}"


@pytest.mark.external
async def test_scheduled_probes_reach_metrics_history_and_reports(tmp_path: Path, two_agents: tuple[str, str],
                                                                  py_peer: Peer) -> None:
    good, bad = two_agents
    cfg = write_config(tmp_path / "p.yaml", [
        {"name": "good", "url": good, "modules": ["ping", "stream"]},
        {"name": "broken", "url": bad, "modules": ["ping"]},
        {"name": "py-sdk", "url": py_peer.base_url, "modules": ["stream"], "expect_text": "echo"},
    ])
    async with running_daemon(cfg) as (d, base):
        await wait_for(lambda: len(d.history.keys()) == 4)
        status, text, headers = await get(f"{base}/metrics")
        assert status == 200 and headers["Content-Type"].startswith("text/plain")
        assert _value(text, "a2a_probe_success", agent="good", module="stream") == 1
        assert _value(text, "a2a_probe_success", agent="py-sdk", module="stream") == 1
        assert _value(text, "a2a_probe_success", agent="broken", module="ping") == 0
        assert _value(text, "a2a_probe_failure_reason_info", agent="broken", module="ping",
                      reason="interface_path_doubled") == 1
        assert _value(text, "a2a_probe_agents_configured") == 3
        assert _value(text, "a2a_probe_config_last_reload_successful") == 1

        status, body, _ = await get(f"{base}/report?agent=broken")
        rep = json.loads(body)
        assert status == 200 and rep["reason"] == "interface_path_doubled"
        assert "base-URL setting should hold only scheme and host" in rep["reasonRecommendation"]
        assert {"agentUrl", "agentName", "testDate", "summary", "results", "conformanceLevel"} <= set(rep)

        status, md, headers = await get(f"{base}/report?agent=broken&format=markdown")
        assert status == 200 and headers["Content-Type"].startswith("text/markdown")
        assert "## Failed tests" in md and "interface.no_path_repeat" in md

        status, xml, _ = await get(f"{base}/report?agent=good&format=junit&refresh=true")
        root = ET.fromstring(xml)
        assert root.tag == "testsuites" and root.get("failures") == "0"
        assert {s.get("name") for s in root.iter("testsuite")} >= {"agent-card", "streaming"}

        status, body, _ = await get(f"{base}/report")
        fleet = json.loads(body)
        assert fleet["agents"] == 3 and fleet["failingAgents"] == 1 and fleet["failingProbes"] == 1

        status, page, _ = await get(f"{base}/")
        assert status == 200 and 'data-agent="broken"' in page and "FAIL" in page and "PASS" in page


async def test_probe_endpoint(tmp_path: Path, two_agents: tuple[str, str]) -> None:
    good, bad = two_agents
    cfg = write_config(tmp_path / "p.yaml", [{"name": "good", "url": good, "modules": ["ping"]}],
                       modules={"slowish": {"prober": "stream", "interval": "1h", "timeout": "30s"}})
    async with running_daemon(cfg, timeout_offset=0.5, probe_target_enabled=True,
                              probe_target_networks=["127.0.0.0/8"]) as (_, base):
        status, text, _ = await get(f"{base}/probe?agent=good")
        assert status == 200
        assert _value(text, "probe_success") == 1
        assert _value(text, "probe_a2a_step_success", step="ping") == 1
        assert "a2a_probe_" not in text  # self metrics stay on /metrics

        status, text, _ = await get(f"{base}/probe?target={bad}&module=ping")
        assert _value(text, "probe_success") == 0
        assert _value(text, "probe_failed_due_to_reason", reason="interface_path_doubled") == 1

        status, text, _ = await get(f"{base}/probe?target={good}&module=slowish",
                                    headers={"X-Prometheus-Scrape-Timeout-Seconds": "3"})
        assert _value(text, "probe_timeout_seconds") == 2.5  # min(30, 3 - 0.5)

        status, text, _ = await get(f"{base}/probe?agent=good&debug=true")
        assert status == 200 and "Probe report:" in text and "probe_success" in text


@pytest.mark.parametrize(("query", "status", "fragment"), [
    ("/probe", 400, "exactly one of agent=NAME or target=URL"),
    ("/probe?agent=nope", 404, "unknown agent 'nope'"),
    ("/probe?agent=good&module=nope", 400, "unknown module 'nope'"),
    ("/probe?target=file:///etc/passwd", 400, "target: URL must start with http:// or https://"),
    ("/probe?target=http://127.0.0.1:99999", 400, "target: URL port must be a number from 1 to 65535"),
    ("/probe?target=http://127.0.0.1:9/a%20b", 400, "target: URL must not contain spaces"),
    ("/probe?target=127.0.0.1:9471", 400, "did you mean http://127.0.0.1:9471?"),
    ("/probe?agent=good&debug=maybe", 400, "debug must be true or false"),
    ("/report?agent=nope", 404, "unknown agent"),
    ("/report?agent=good&format=pdf", 400, "format must be one of"),
    ("/report?agent=good&module=stream", 400, "does not run module"),
    ("/report?format=junit", 400, "junit needs agent=NAME"),
    ("/-/reload", 405, ""),
])
async def test_bad_requests_get_clear_errors(tmp_path: Path, query: str, status: int, fragment: str) -> None:
    cfg = write_config(tmp_path / "p.yaml", [{"name": "good", "url": "http://127.0.0.1:9", "modules": ["ping"]}])
    async with running_daemon(cfg, probe_target_enabled=True) as (_, base):
        got, body, _ = await get(base + query, headers={"X-Prometheus-Scrape-Timeout-Seconds": "2"})
        assert got == status, body
        assert fragment in body


async def test_scrape_timeout_header_must_be_a_number(tmp_path: Path) -> None:
    cfg = write_config(tmp_path / "p.yaml", [{"name": "good", "url": "http://127.0.0.1:9"}])
    async with running_daemon(cfg) as (_, base):
        status, body, _ = await get(f"{base}/probe?agent=good", headers={"X-Prometheus-Scrape-Timeout-Seconds": "x"})
        assert status == 400 and "not a number" in body


async def test_health_and_readiness_do_not_depend_on_agents(tmp_path: Path) -> None:
    cfg = write_config(tmp_path / "p.yaml", [{"name": "down", "url": "http://127.0.0.1:9"}])
    async with running_daemon(cfg) as (d, base):
        await wait_for(lambda: bool(d.history.keys()))
        assert (await get(f"{base}/healthz"))[0] == 200
        assert (await get(f"{base}/readyz"))[0] == 200
        d.scheduler.shutdown()
        assert (await get(f"{base}/readyz"))[0] == 503


async def test_reload_good_bad_http_and_sighup(tmp_path: Path, two_agents: tuple[str, str]) -> None:
    good, bad = two_agents
    cfg = write_config(tmp_path / "p.yaml", [{"name": "a", "url": good}, {"name": "b", "url": bad}])
    async with running_daemon(cfg) as (d, base):
        await wait_for(lambda: len(d.history.keys()) == 2)
        # bad file: old config keeps running, reload gauge 0, error names the field
        cfg.write_text("agents:\n  - {name: a, url: 'http://x', colour: red}\n")
        status, body = await post(f"{base}/-/reload")
        assert status == 500 and "agents.0.colour: unknown key" in body
        _, text, _ = await get(f"{base}/metrics")
        assert _value(text, "a2a_probe_config_last_reload_successful") == 0
        assert [a.name for a in d.config.agents] == ["a", "b"]
        # good file: agent b removed, its series disappear; a gets a new module
        write_config(cfg, [{"name": "a", "url": good, "modules": ["ping", "invoke"]}])
        status, body = await post(f"{base}/-/reload")
        assert status == 200 and "1 agent(s), 2 job(s)" in body
        _, text, _ = await get(f"{base}/metrics")
        assert _value(text, "a2a_probe_config_last_reload_successful") == 1
        assert _value(text, "a2a_probe_runs_total", agent="b", module="ping") is None
        assert _value(text, "a2a_probe_agent_info", agent="b") is None
        assert _value(text, "a2a_probe_timeout_seconds", agent="a", module="invoke") == 60
        # SIGHUP goes through the same path (the daemon installs the handler in serve(); emulate it here)
        write_config(cfg, [{"name": "a", "url": good}, {"name": "c", "url": good}])
        import asyncio

        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGHUP, lambda: asyncio.ensure_future(d.reload()))
        try:
            os.kill(os.getpid(), signal.SIGHUP)
            await wait_for(lambda: d.config.agent("c") is not None)
        finally:
            loop.remove_signal_handler(signal.SIGHUP)


async def test_config_endpoint_and_logs_never_show_secrets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    from probe import logs

    monkeypatch.setenv("A2A_TEST_TOKEN", "tok-3f9a8b7c6d5e")
    logs.configure("info", "json")
    async with run_agent("doubled_prefix") as agent:
        cfg = write_config(tmp_path / "p.yaml", [{
            "name": "secret-agent", "url": f"{agent.origin}{GATEWAY_PREFIX}", "modules": ["ping"],
            "auth": {"bearer_token": {"env": "A2A_TEST_TOKEN"}}}])
        async with running_daemon(cfg) as (d, base):
            await wait_for(lambda: bool(d.history.keys()))
            _, conf, _ = await get(f"{base}/config")
            _, metrics, _ = await get(f"{base}/metrics")
            _, rep, _ = await get(f"{base}/report?agent=secret-agent&format=markdown")
            _, dbg, _ = await get(f"{base}/probe?agent=secret-agent&debug=true")
        sent = [rq.header("Authorization") for rq in agent.requests if rq.method == "POST"]
    out = capsys.readouterr()
    assert sent and all(s == "Bearer tok-3f9a8b7c6d5e" for s in sent)  # the agent did get it
    assert "A2A_TEST_TOKEN" in conf
    for text in (conf, metrics, rep, dbg, out.out, out.err):
        assert "tok-3f9a8b7c6d5e" not in text
    events = [json.loads(line) for line in out.err.splitlines() if '"probe_finished"' in line]
    assert events and events[0]["agent"] == "secret-agent" and events[0]["level"] == "warning"
    assert {"verdict", "reason", "step_durations", "card_url", "interface_url", "binding", "protocol_version",
            "a2a.method", "http_status", "probe_id"} <= set(events[0])


def test_log_redaction_processor_masks_bearer_tokens_anywhere() -> None:
    from probe.logs import redact_processor, register_secret

    register_secret("hunter2-secret")
    ev = redact_processor(None, "info", {"event": "x", "detail": "sent Authorization: Bearer abc.def-ghi",
                                         "headers": {"Authorization": "Bearer zzz", "X-Ok": "fine"},
                                         "note": "the value hunter2-secret leaked", "api_key": "k"})
    assert "abc.def-ghi" not in ev["detail"] and ev["headers"]["Authorization"] == "<redacted>"
    assert ev["headers"]["X-Ok"] == "fine" and "hunter2-secret" not in ev["note"] and ev["api_key"] == "<redacted>"


@pytest.mark.external
async def test_full_module_serves_the_conformance_report(tmp_path: Path, py_peer: Peer) -> None:
    cfg = write_config(tmp_path / "p.yaml", [{"name": "py", "url": py_peer.base_url, "modules": ["full"],
                                              "slow_prompt": "slow", "input_prompt": "input"}],
                       modules={"full": {"prober": "full", "interval": "1h", "timeout": "60s"}})
    async with running_daemon(cfg) as (d, base):
        await wait_for(lambda: bool(d.history.keys()), timeout=60)
        _, body, _ = await get(f"{base}/report?agent=py")
        rep = json.loads(body)
        assert rep["conformanceLevel"] == "partial"  # the Python SDK's card lacks Cache-Control (a SHOULD)
        ran = {r["test"] for r in rep["results"] if r["status"] == "pass"}
        assert {"lifecycle.cancel", "streaming.subscribe", "errors.task_not_found"} <= ran
        _, text, _ = await get(f"{base}/metrics")
        # the suite step fails on any failed suite check, here the SDK's real SHOULD deviation (a part media type not
        # refused: validate_input_modes is off by default); the probe's verdict stays a pass
        media = next(r for r in rep["results"] if r["test"] == "errors.content_type_not_supported")
        assert media["status"] == "fail" and media["severity"] == "SHOULD"
        assert _value(text, "a2a_probe_step_success", agent="py", module="full", step="suite") == 0
        assert _value(text, "a2a_probe_success", agent="py", module="full") == 1


async def test_report_refresh_is_throttled(tmp_path: Path) -> None:
    async with run_agent("healthy") as agent:
        cfg = write_config(tmp_path / "p.yaml", [{"name": "a", "url": agent.origin, "modules": ["ping"]}])
        async with running_daemon(cfg) as (d, base):
            await wait_for(lambda: bool(d.history.keys()))
            _, _, headers = await get(f"{base}/report?agent=a&refresh=true")
            assert headers["X-A2A-Probe-Refreshed"] == "false"  # the scheduled run is seconds old
            d.history.forget("a")
            _, _, headers = await get(f"{base}/report?agent=a&refresh=true")
            assert headers["X-A2A-Probe-Refreshed"] == "true"
            runs = len([r for r in agent.requests if r.method == "POST"])
            for _ in range(5):
                await get(f"{base}/report?agent=a&refresh=true")
            assert len([r for r in agent.requests if r.method == "POST"]) == runs


async def test_global_concurrency_limit_and_hard_deadline() -> None:
    import asyncio

    from probe.config import Agent, Module, Prober
    from probe.history import History
    from probe.metrics import Metrics
    from probe.runner import Runner
    from probe.wire.http import HttpClient

    async with run_agent("slow_task") as agent, HttpClient() as client:
        metrics = Metrics([1], [])
        runner = Runner(client, metrics, History(5), max_concurrency=1)
        module = Module(prober=Prober.INVOKE, interval=60, timeout=1.5)
        peak = 0

        async def watch() -> None:
            nonlocal peak
            while True:
                peak = max(peak, int(metrics.registry.get_sample_value("a2a_probe_probes_in_flight") or 0))
                await asyncio.sleep(0.01)

        watcher = asyncio.create_task(watch())
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        results = await asyncio.gather(*(runner.run(Agent(name=f"a{i}", url=agent.origin or ""), module,
                                                    timeout=module.timeout) for i in range(3)))
        elapsed = loop.time() - t0
        watcher.cancel()
    assert peak == 1  # one slot: never two probes on the wire at once
    reasons = sorted(str(r.reason) for r in results)
    # the one that got the slot hit its 1.5 s deadline (the agent works for 3 s); the two others waited half of
    # their on-demand budget for a slot and were not started: the probe's overload, not the agent's failure
    assert reasons[-2:] == ["probe_overloaded", "probe_overloaded"] and reasons[0] != "probe_overloaded", reasons
    assert elapsed < 1.5 + 1.0 + 0.5  # an on-demand caller's budget covers the wait and the probe (plus grace)
