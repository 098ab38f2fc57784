"""Every dashboard query and every alert expression, sent to a real Prometheus that scrapes the daemon running
the demo config (`a2a-probe demo`): one healthy agent, one behind a gateway that doubles its path prefix."""

from __future__ import annotations

import asyncio
import json
import math
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from probe.config import Settings
from probe.daemon import Daemon
from probe.demo.agent import DemoAgent
from probe.demo.run import BROKEN_PREFIX, demo_config
from tests.deploy.test_alerts import ALERTS, alerts_by_name
from tests.deploy.test_dashboards import (
    AGENT,
    FLEET,
    SUBSTITUTIONS,
    load,
    panel_targets,
    substitute,
    variable_query,
    variables,
)
from tests.prom.server import Prometheus, run_prometheus

pytestmark = pytest.mark.external  # starts programs outside this Python (see pyproject)

HEALTHY, BROKEN = "demo-healthy", "demo-gateway-broken"
MODULES = {"ping", "invoke", "stream"}
# the demo runs no push module: those panels' data is checked live in tests/prom/test_push_prometheus.py
PUSH_ONLY = "a2a_probe_push_"
#: Alerts the demo must not trigger, even without their `for`.
QUIET_IN_THE_DEMO = {"A2AAgentCardUnavailable", "A2AProbeSlow", "A2AProbeStale", "A2AProbeConfigReloadFailed",
                     "A2AProbeDaemonDown"}


@dataclass
class Answer:
    expr: str
    error: str | None
    result: list[dict[str, Any]]

    @property
    def agents(self) -> set[str]:
        return {r["metric"].get("agent", "") for r in self.result}


def instant(prom: Prometheus, expr: str) -> Answer:
    """One /api/v1/query; a PromQL error is returned, not raised."""
    url = f"{prom.base_url}/api/v1/query?{urllib.parse.urlencode({'query': expr})}"
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            body = json.loads(r.read())
    except urllib.error.HTTPError as exc:
        body = json.loads(exc.read() or b"{}")
    if body.get("status") != "success":
        return Answer(expr, f"{body.get('errorType')}: {body.get('error')}", [])
    data = body["data"]
    result = data["result"] if data["resultType"] == "vector" else [{"metric": {}, "value": data["result"]}]
    return Answer(expr, None, result)


def wait_until(prom: Prometheus, expr: str, predicate: Any, timeout: float = 20.0) -> Answer:
    end = time.monotonic() + timeout
    answer = instant(prom, expr)
    while not (answer.error is None and predicate(answer)):
        if time.monotonic() > end:
            raise AssertionError(f"{expr} never matched; last answer: {answer}")
        time.sleep(0.2)
        answer = instant(prom, expr)
    return answer


def dashboard_queries(path: Path, agent: str) -> list[tuple[str, str]]:
    """(panel title/refId, query with the variables substituted) for every target of a dashboard."""
    values = {**SUBSTITUTIONS, "agent": agent}
    return [(f"{path.name}: {panel['title']} [{target['refId']}]", substitute(target["expr"], values))
            for panel, target in panel_targets(load(path))]


def value(answer: Answer) -> float:
    (sample,) = answer.result
    return float(sample["value"][1])


@asynccontextmanager
async def demo_daemon() -> AsyncIterator[str]:
    """The demo's two agents and the daemon with exactly the config `a2a-probe demo` runs; yields host:port."""
    healthy = DemoAgent(HEALTHY)
    broken = DemoAgent(BROKEN, card_prefix=BROKEN_PREFIX, advertised_path="/api/a2a" + BROKEN_PREFIX)
    h, b = await healthy.start(), await broken.start()
    daemon = Daemon(Settings(listen_address="127.0.0.1:0"), demo_config(h, b))
    try:
        await daemon.start()
        yield daemon.bound[0]
    finally:
        await daemon.stop()
        await broken.stop()
        await healthy.stop()


async def test_dashboard_queries_and_alert_expressions_on_a_live_prometheus(tmp_path: Path) -> None:
    async with demo_daemon() as target:
        with run_prometheus(tmp_path, [target], rule_files=[ALERTS], job="a2a-probe") as prom:
            t = asyncio.to_thread
            await t(wait_until, prom, 'a2a_probe_success{job="a2a-probe"}', lambda a: len(a.result) == 6)
            await t(wait_until, prom, "a2a_probe_runs_total", lambda a: len(a.result) == 6)
            # Counters were already 1 at the first scrape; probe every job once more through the daemon's own
            # /report?refresh=true so increase(), rate() and the histogram quantiles have something to show.
            async with aiohttp.ClientSession() as http:
                for agent in (HEALTHY, BROKEN):
                    for module in sorted(MODULES):
                        url = f"http://{target}/report?agent={agent}&module={module}&format=json&refresh=true"
                        async with http.get(url) as r:
                            assert r.status == 200, await r.text()
            await t(wait_until, prom, "increase(a2a_probe_runs_total[1m]) > 0", lambda a: len(a.result) == 6)
            await t(wait_until, prom, 'ALERTS{alertname="A2AInvocationPathBroken"}', lambda a: len(a.result) == 3)
            await asyncio.wait_for(t(_check_everything, prom), timeout=60)


def _check_everything(prom: Prometheus) -> None:
    _check_variables(prom)
    _check_panels(prom)
    _check_alerts(prom)


def _check_variables(prom: Prometheus) -> None:
    """The variable queries (label_values(metric, label)) return what the dashboards need."""
    for path in (FLEET, AGENT):
        vs = variables(load(path))
        for name, var in vs.items():
            if var["type"] != "query":
                continue
            query = substitute(variable_query(var), {**SUBSTITUTIONS, "agent": BROKEN})
            assert query.startswith("label_values(") and query.endswith(")"), query
            selector, label = query[len("label_values("):-1].rsplit(",", 1)
            found = prom.api(f"label/{label.strip()}/values", **{"match[]": selector.strip()})
            expected = {"job": {"a2a-probe"}, "agent": {HEALTHY, BROKEN}, "module": MODULES,
                        "binding": {"jsonrpc"}}[name]  # the demo agents advertise JSON-RPC only
            assert set(found) == expected, (path.name, name, found)


def _check_panels(prom: Prometheus) -> None:
    # every query of every panel evaluates; with the broken agent selected (and for the fleet, all agents)
    # every one also returns data, so no label or metric name is silently wrong
    runs = [(FLEET, ".*", True), (AGENT, BROKEN, True), (AGENT, HEALTHY, False)]
    errors, empty = [], []
    for path, agent, must_have_data in runs:
        for where, expr in dashboard_queries(path, agent):
            answer = instant(prom, expr)
            if answer.error:
                errors.append((where, agent, expr, answer.error))
            elif must_have_data and not answer.result and PUSH_ONLY not in expr:
                empty.append((where, agent, expr))
    assert not errors, errors
    assert not empty, empty

    # the fleet's headline numbers for the demo: 2 agents, 1 failing, and it is the card-OK-calls-fail kind
    fleet = {where.split(": ", 1)[1]: expr for where, expr in dashboard_queries(FLEET, ".*")}
    assert value(instant(prom, fleet["Agents probed [A]"])) == 2
    assert value(instant(prom, fleet["Agents failing [A]"])) == 1
    assert value(instant(prom, fleet["Card OK, calls fail [A]"])) == 1
    assert value(instant(prom, fleet["Stale probes [A]"])) == 0
    ratio = value(instant(prom, fleet["Success ratio (range) [A]"]))
    assert 0.2 < ratio < 0.8, ratio  # the healthy half passes, the broken half fails
    failing = instant(prom, fleet["Failing now [A]"])
    rows = {(r["metric"]["agent"], r["metric"]["module"], r["metric"]["reason"]) for r in failing.result}
    assert rows == {(BROKEN, m, "interface_path_doubled") for m in MODULES}
    assert {float(r["value"][1]) for r in failing.result} == {-1.0}  # never succeeded → "never"
    timeline = instant(prom, fleet["Verdict by agent and module [A]"])
    assert {(r["metric"]["agent"], r["value"][1]) for r in timeline.result} == {(HEALTHY, "1"), (BROKEN, "0")}

    healthy = {where.split(": ", 1)[1]: expr for where, expr in dashboard_queries(AGENT, HEALTHY)}
    p95 = instant(prom, healthy["Remote step latency p50 / p95 / p99 [B]"])
    assert {r["metric"]["step"] for r in p95.result} == MODULES
    assert all(0 < float(r["value"][1]) < 10 for r in p95.result), p95.result
    uptime = instant(prom, healthy["Uptime [A]"])
    assert value(uptime) == 1
    card = instant(prom, healthy["Agent card [A]"])
    assert {(r["metric"]["protocol_version"], r["metric"]["binding"]) for r in card.result} == {("1.0", "jsonrpc")}
    status = instant(prom, healthy["HTTP status by step [A]"])
    assert {r["value"][1] for r in status.result} == {"200"}
    broken = {where.split(": ", 1)[1]: expr for where, expr in dashboard_queries(AGENT, BROKEN)}
    broken_status = instant(prom, broken["HTTP status by step [A]"])
    assert {(r["metric"]["step"], r["value"][1]) for r in broken_status.result} == {
        ("discover", "200"), ("ping", "404"), ("invoke", "404"), ("stream", "404")}


def _check_alerts(prom: Prometheus) -> None:
    alerts = alerts_by_name()
    answers = {name: instant(prom, rule["expr"]) for name, rule in alerts.items()}
    assert {n: a.error for n, a in answers.items() if a.error} == {}

    # the headline, without its `for`: exactly the broken demo agent, in every module, not the healthy one
    headline = answers["A2AInvocationPathBroken"]
    assert headline.agents == {BROKEN}
    assert {(r["metric"]["module"], r["metric"]["step"]) for r in headline.result} == {(m, m) for m in MODULES}
    assert HEALTHY not in headline.agents

    suspicious = answers["A2AAdvertisedURLSuspicious"]
    assert {(r["metric"]["agent"], r["metric"]["reason"]) for r in suspicious.result} == {
        (BROKEN, "interface_path_doubled")}
    ratio = answers["A2AProbeFailureRatioHigh"]
    assert ratio.agents == {BROKEN} and all(math.isclose(float(r["value"][1]), 1) for r in ratio.result)
    for name in QUIET_IN_THE_DEMO:
        assert answers[name].result == [], (name, answers[name].result)

    # Prometheus evaluated the loaded rule file without errors ...
    groups = prom.api("rules", type="alert")["groups"]
    rules = {r["name"]: r for g in groups for r in g["rules"]}
    assert set(rules) == set(alerts)
    assert {n: r.get("lastError") for n, r in rules.items() if r["health"] != "ok"} == {}
    # ... and the headline is pending for the broken agent, its annotation naming the reason (query template)
    active = [a for a in prom.api("alerts")["alerts"] if a["labels"]["alertname"] == "A2AInvocationPathBroken"]
    assert {a["labels"]["agent"] for a in active} == {BROKEN}
    assert {a["state"] for a in active} == {"pending"}
    for a in active:
        assert "(reason: interface_path_doubled)" in a["annotations"]["summary"], a["annotations"]
        assert a["annotations"]["runbook_url"] == "docs/runbook.md#a2ainvocationpathbroken"
    assert {r["metric"]["agent"] for r in prom.query('ALERTS{alertname="A2AInvocationPathBroken"}')} == {BROKEN}
