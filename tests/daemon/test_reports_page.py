"""/report names its module and defaults to the most complete one; the fleet counts agents and probes; the status
page and the HTML report carry the concrete fix and the evidence; config problems and unreachable cards say what."""

from __future__ import annotations

import html
import json
import socket
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from probe import report
from probe.reasons import Reason
from tests.agents.catalogue import GATEWAY_PREFIX, run_agent
from tests.daemon.helpers import get, running_daemon, wait_for, write_config

MODULES = {"ping": {"prober": "ping", "interval": "1h", "timeout": "5s"},
           "stream": {"prober": "stream", "interval": "1h", "timeout": "5s"}}


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_reports_name_the_module_and_the_page_shows_fix_and_evidence(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("A2A_TEST_UNSET_TOKEN", raising=False)
    dead = f"http://127.0.0.1:{_closed_port()}/agents/x"
    async with run_agent("doubled_prefix") as bad, run_agent("healthy") as good:
        cfg = write_config(tmp_path / "p.yaml", [
            {"name": "broken", "url": f"{bad.origin}{GATEWAY_PREFIX}", "modules": ["ping", "stream"]},
            {"name": "good", "url": good.origin, "modules": ["ping"]},
            {"name": "no-token", "url": good.origin, "modules": ["ping"],
             "auth": {"bearer_token": {"env": "A2A_TEST_UNSET_TOKEN"}}},
            {"name": "gone", "url": dead, "modules": ["ping"]},
        ], modules=MODULES)
        async with running_daemon(cfg) as (d, base):
            await wait_for(lambda: len(d.history.keys()) == 5, timeout=20)

            # without module=: the most complete report there is (stream, not ping), named in every format
            status, body, headers = await get(f"{base}/report?agent=broken")
            assert status == 200 and headers["X-A2A-Probe-Module"] == "stream"
            rep = json.loads(body)
            assert rep["module"] == "stream" and rep["reason"] == Reason.INTERFACE_PATH_DOUBLED
            hops = {h["what"]: h for h in rep["evidence"]}
            assert hops["card"]["httpStatus"] == 200 and hops["advertised URL"]["httpStatus"] == 404
            assert hops["advertised URL"]["repeatedSegment"] == "/api/a2a"
            _, md, _ = await get(f"{base}/report?agent=broken&format=markdown")
            assert "- **Module:** `stream`" in md and "→ HTTP 404 (the path repeats `/api/a2a`)" in md
            _, xml, _ = await get(f"{base}/report?agent=broken&format=junit")
            props = {p.get("name"): p.get("value") for p in ET.fromstring(xml).iter("property")}
            assert props["module"] == "stream"
            _, ping_json, headers = await get(f"{base}/report?agent=broken&module=ping")
            assert json.loads(ping_json)["module"] == "ping" and headers["X-A2A-Probe-Module"] == "ping"

            status, page_html, headers = await get(f"{base}/report?agent=broken&format=html")
            assert status == 200 and headers["Content-Type"].startswith("text/html")
            assert "<strong>Module:</strong> <code>stream</code>" in page_html
            assert f"/api/a2a<mark>/api/a2a</mark>{GATEWAY_PREFIX.removeprefix('/api/a2a')}" in page_html
            concrete = report.advice(d.history.latest("broken", "stream")[1]) or ""  # type: ignore[index]
            assert concrete.startswith("The advertised URL should be ") and html.escape(concrete) in page_html

            # the fleet: agents and probes are different counts, each named
            _, fleet_body, _ = await get(f"{base}/report")
            fleet = json.loads(fleet_body)
            assert fleet["agents"] == 4 and fleet["failingAgents"] == 3
            assert fleet["probes"] == 5 and fleet["failingProbes"] == 4

            # a config problem: no step ran, the variable is named, no empty card fields
            _, no_token_md, _ = await get(f"{base}/report?agent=no-token&format=markdown")
            assert "`probe_config_error`" in no_token_md
            assert "auth.bearer_token: environment variable A2A_TEST_UNSET_TOKEN is not set" in no_token_md
            assert "**Card:**" not in no_token_md and "## Steps" not in no_token_md and "( )" not in no_token_md
            assert d.history.latest("no-token", "ping")[1].steps == []  # type: ignore[index]

            _, page, _ = await get(f"{base}/")

    # the status page: one block per agent, failing first, one diagnosis per distinct reason
    assert page.count('<section class="agent') == 4 and page.count('data-agent="broken"') == 1
    failing_at = max(page.index(f'data-agent="{a}"') for a in ("broken", "no-token", "gone"))
    assert page.index('data-agent="good"') > failing_at
    broken = page[page.index('data-agent="broken"'):page.index("</section>", page.index('data-agent="broken"'))]
    assert broken.count('class="diagnosis"') == 1 and "(modules ping, stream)" in broken
    assert f"<strong>Fix:</strong> {html.escape(concrete)}" in broken
    assert '<span class="http ok">HTTP 200</span>' in broken and '<span class="http bad">HTTP 404</span>' in broken
    assert "<mark>/api/a2a</mark>" in broken
    assert broken.count('data-module="') == 2
    assert '/report?agent=broken&amp;format=html">full report</a>' in broken
    assert '/report?agent=broken&amp;module=stream&amp;format=html"' in broken

    no_token = page[page.index('data-agent="no-token"'):]
    assert "environment variable A2A_TEST_UNSET_TOKEN is not set" in no_token.split("</section>")[0]
    gone = page[page.index('data-agent="gone"'):].split("</section>")[0]
    assert "<code>card_unreachable</code>" in gone and "/agents/x/.well-known/agent-card.json" in gone
    assert "cannot connect to 127.0.0.1" in gone and "no answer" in gone
    assert "<style>" in page and "section.agent" in page  # the stylesheet (a file) is inlined into the page


@pytest.mark.parametrize("advertised", ["http://127.0.0.1:99999/", "http://127.0.0.1:abc/", "http://[::1/"])
async def test_a_malformed_advertised_url_is_the_agents_failure_not_a_probe_bug(advertised: str) -> None:
    from probe.engine import run_probe
    from probe.target import Target
    from probe.wire.http import HttpClient
    from tests.agents.cards import valid_card
    from tests.agents.catalogue import Faults

    card = valid_card(advertised, name="bad-url")
    async with run_agent(Faults(card_raw=json.dumps(card).encode())) as agent, HttpClient() as client:
        result = await run_probe(Target(name="bad-url", url=agent.origin), client)
    assert result.reason is not None and result.reason is not Reason.PROBE_ERROR, result.reason
    assert not any("internal error" in s.detail for s in result.steps)
