"""TLS against loopback https agents with certificates the tests issue: valid, expired, soon to expire, wrong
host, unknown CA, mTLS; the tls phase; insecure_skip_verify; fresh connections."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from probe import report
from probe.docs import SCHEMA_PATH
from probe.engine import run_probe
from probe.reasons import Reason
from probe.results import ProbeResult, Status, StepName
from probe.target import AuthSpec, Target, TlsSpec
from probe.wire.http import HttpClient
from tests.trust.agent import base_card, trust_agent
from tests.trust.material import CA, server_context


@pytest.fixture(scope="module")
def ca(tmp_path_factory: pytest.TempPathFactory) -> CA:
    return CA.create(tmp_path_factory.mktemp("ca"))


def _target(origin: str, ca: CA | None, **kw: Any) -> Target:
    tls = {"ca_bundle": str(ca.path) if ca else None, **kw.pop("tls", {})}
    return Target(name="tls-agent", url=origin, timeout=10, tls=TlsSpec(**tls), **kw)


async def _probe(client: HttpClient, target: Target) -> ProbeResult:
    return await run_probe(target, client, steps=(StepName.INVOKE,))


async def test_valid_certificate_tls_phase_and_info(client: HttpClient, ca: CA) -> None:
    async with trust_agent(tls=server_context(ca.issue("valid"))) as agent:
        result = await _probe(client, _target(agent.origin, ca, fresh_connection=True))
    assert result.success, result.steps
    discover = result.step(StepName.DISCOVER)
    assert discover is not None
    phases = discover.exchanges[0].phases
    assert phases.tls > 0 and phases.connect > 0  # the handshake is its own phase, not folded into connect
    assert set(result.tls) == {"card", "JSONRPC"}
    info = result.tls["JSONRPC"]
    assert info.version in ("TLSv1.2", "TLSv1.3") and info.cipher and info.verified
    assert result.check("tls.cert_expiry").status is Status.PASS  # type: ignore[union-attr]
    assert result.check("tls.verified").status is Status.PASS  # type: ignore[union-attr]
    doc = json.loads(report.render(result, "json"))
    jsonschema.validate(doc, json.loads(SCHEMA_PATH.read_text()))
    assert doc["tls"]["JSONRPC"]["version"] == info.version and doc["tlsInsecure"] is False
    assert doc["steps"][0]["http"][0]["tls"]["verified"] is True
    assert "tls        card: TLSv1" in report.to_text(result)


@pytest.mark.parametrize(("name", "issue", "use_ca"), [
    ("expired", {"days": -1, "not_before_days": 30}, True),
    ("wrong-host", {"hosts": ("other.example",)}, True),
    ("unknown-ca", {}, False),
])
async def test_certificate_that_does_not_verify(client: HttpClient, ca: CA, name: str, issue: dict[str, Any],
                                                use_ca: bool) -> None:
    async with trust_agent(tls=server_context(ca.issue(name, **issue))) as agent:
        result = await _probe(client, _target(agent.origin, ca if use_ca else None))
    assert result.reason is Reason.TLS_CERTIFICATE_INVALID
    assert "did not verify" in result.steps[0].detail
    assert agent.seen == []  # nothing was sent over a connection that did not verify


async def test_soon_to_expire_is_a_finding_not_a_failure(client: HttpClient, ca: CA) -> None:
    async with trust_agent(tls=server_context(ca.issue("soon", days=5))) as agent:
        result = await _probe(client, _target(agent.origin, ca))
        wide = await _probe(client, _target(agent.origin, ca, tls={"expiry_window": 86400.0}))
    assert result.success
    check = result.check("tls.cert_expiry")
    assert check is not None and check.status is Status.FAIL
    assert re.search(r"expires in (4\.9|5\.0) days .* the window is 14 days", check.message), check.message
    assert wide.check("tls.cert_expiry").status is Status.PASS  # type: ignore[union-attr]


async def test_insecure_skip_verify_is_never_silent(client: HttpClient, ca: CA) -> None:
    async with trust_agent(tls=server_context(ca.issue("expired2", days=-1, not_before_days=30))) as agent:
        result = await _probe(client, _target(agent.origin, None, tls={"insecure_skip_verify": True}))
    assert result.success and result.tls_insecure
    assert result.tls["card"].verified is False
    assert result.check("tls.verified").status is Status.FAIL  # type: ignore[union-attr]
    assert result.check("tls.cert_expiry").status is Status.FAIL  # type: ignore[union-attr]


async def test_mtls(client: HttpClient, ca: CA, tmp_path: Path) -> None:
    card = lambda o: base_card(o, securitySchemes={"mtls": {"mtlsSecurityScheme": {}}},  # noqa: E731
                               securityRequirements=[{"schemes": {"mtls": {"list": []}}}])
    cert = ca.issue("client", client=True)
    async with trust_agent(card, tls=server_context(ca.issue("mtls-server"), client_ca=ca.path)) as agent:
        without = await _probe(client, _target(agent.origin, ca))
        with_cert = await _probe(client, _target(agent.origin, ca, auth=AuthSpec(client_cert=True),
                                                 tls={"client_cert": str(cert.cert), "client_key": str(cert.key)}))
    assert without.reason is Reason.TLS_CLIENT_CERT_REFUSED
    assert "asked for a TLS client certificate" in without.steps[0].detail
    assert with_cert.success, with_cert.steps
    assert with_cert.check("security.credentials_match").status is Status.PASS  # type: ignore[union-attr]


async def test_unreadable_tls_material_is_the_probes_config(client: HttpClient, tmp_path: Path) -> None:
    result = await _probe(client, _target("https://127.0.0.1:9", None, tls={"ca_bundle": str(tmp_path / "none")}))
    assert result.reason is Reason.PROBE_CONFIG_ERROR


async def test_fresh_connections_measure_connect_every_time(client: HttpClient, ca: CA) -> None:
    async with trust_agent(tls=server_context(ca.issue("fresh"))) as agent:
        pooled = [await run_probe(_target(agent.origin, ca), client, steps=(StepName.PING,)) for _ in range(2)]
        fresh = [await run_probe(_target(agent.origin, ca, fresh_connection=True), client, steps=(StepName.PING,))
                 for _ in range(2)]

    def ping_phases(r: ProbeResult) -> tuple[float, float]:
        step = r.step(StepName.PING)
        assert step is not None and step.status is Status.PASS
        return step.exchanges[0].phases.connect, step.exchanges[0].phases.tls

    assert ping_phases(pooled[1]) == (0.0, 0.0)  # reused: the pool hides connect and TLS
    for r in fresh:
        connect, tls = ping_phases(r)
        assert connect > 0 and tls > 0


def test_status_page_shows_insecure_and_expiry() -> None:
    import time as _time

    from probe import statuspage
    from probe.results import TlsInfo

    soon = ProbeResult(agent="a", target_url="https://a", success=True,
                       tls={"card": TlsInfo(version="TLSv1.3", cipher="X", earliest_expiry=_time.time() + 3 * 86400)})

    class History:
        def latest(self, agent: str, module: str | None = None) -> tuple[str, ProbeResult] | None:
            return ("ping", soon) if agent == "a" else None

    rows = [{"agent": "a", "module": "ping", "verdict": "pass", "reason": None, "lastRun": None, "lastSuccess": None,
             "duration_ms": 1.0, "tlsInsecure": False},
            {"agent": "b", "module": "ping", "verdict": None, "reason": None, "lastRun": None, "lastSuccess": None,
             "duration_ms": None, "tlsInsecure": True}]
    page = statuspage.render(rows, History(), 2)
    assert 'data-tls="insecure"' in page and "TLS NOT VERIFIED" in page  # before any result: from the config
    assert "TLS certificate expires in 3 days" in page


def test_insecure_skip_verify_is_logged_at_start(capsys: pytest.CaptureFixture[str]) -> None:
    from probe import logs
    from probe.config import parse
    from probe.daemon import Daemon

    logs.configure("info", "json")
    config = parse(b"agents:\n  - name: lax\n    url: https://127.0.0.1:9\n    tls: {insecure_skip_verify: true}\n"
                   b"  - name: strict\n    url: https://127.0.0.1:9\n", "c.yaml")
    Daemon._warn_insecure(config)
    out = capsys.readouterr()
    text = out.out + out.err
    assert '"tls_verification_disabled"' in text and '"lax"' in text and '"strict"' not in text


async def test_cli_tls_flags(ca: CA, capsys: pytest.CaptureFixture[str]) -> None:
    import asyncio

    from probe import cli

    async with trust_agent(tls=server_context(ca.issue("cli"))) as agent:
        trusted = await asyncio.to_thread(cli.main, ["check", agent.origin, "--ca-bundle", str(ca.path),
                                                      "--no-stream", "--format", "json"])
        doc = json.loads(capsys.readouterr().out)
        untrusted = await asyncio.to_thread(cli.main, ["check", agent.origin, "--no-stream", "--format", "json"])
        bad = json.loads(capsys.readouterr().out)
        lax = await asyncio.to_thread(cli.main, ["check", agent.origin, "--insecure-skip-verify", "--no-stream",
                                                  "--format", "json", "--fail-on", "any"])
        lax_doc = json.loads(capsys.readouterr().out)
    assert trusted == cli.EXIT_PASS and doc["tls"]["card"]["verified"] is True
    assert untrusted == cli.EXIT_FAIL and bad["reason"] == "tls_certificate_invalid"
    assert lax == cli.EXIT_FAIL and lax_doc["tlsInsecure"] is True  # tls.verified fails: never silent
    assert await asyncio.to_thread(cli.main, ["check", agent.origin, "--client-key", str(ca.path)]) == cli.EXIT_USAGE


def test_fresh_connection_default_is_on_for_ping_only() -> None:
    from probe.config import DEFAULT_MODULES, Module, Prober

    assert DEFAULT_MODULES["ping"].fresh and not DEFAULT_MODULES["invoke"].fresh
    assert not DEFAULT_MODULES["stream"].fresh and not DEFAULT_MODULES["full"].fresh
    assert Module(prober=Prober.INVOKE, fresh_connection=True).fresh
    assert not Module(prober=Prober.PING, fresh_connection=False).fresh


async def test_daemon_ping_measures_connect_every_run(client: HttpClient) -> None:
    """The daemon's runner: ping (fresh by default) has real connect timings on every run; invoke reuses the pool."""
    from probe.config import DEFAULT_MODULES, Agent
    from probe.history import History
    from probe.metrics import Metrics
    from probe.runner import Runner

    runner = Runner(client, Metrics([1], []), History(5), 4)
    async with trust_agent() as agent:
        cfg = Agent(name="a", url=agent.origin)
        pings = [await runner.run(cfg, DEFAULT_MODULES["ping"], timeout=5) for _ in range(2)]
        invokes = [await runner.run(cfg, DEFAULT_MODULES["invoke"], timeout=5) for _ in range(2)]
    for r in pings:
        step = r.step(StepName.PING)
        assert step is not None and step.exchanges[0].phases.connect > 0, r.steps
    second = invokes[1].step(StepName.INVOKE)
    assert second is not None and second.exchanges[0].phases.connect == 0.0  # keep-alive reuse stays the default
