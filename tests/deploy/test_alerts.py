"""dashboards/alerts.yaml: promtool accepts and unit-tests it, every alert is tested both ways, uses only
exported metrics, and has a runbook section in docs/runbook.md."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
import yaml

from probe.metrics import CATALOGUE, PREFIX, exported_names

ROOT = Path(__file__).resolve().parents[2]
ALERTS = ROOT / "dashboards" / "alerts.yaml"
ALERT_TESTS = ROOT / "dashboards" / "alerts.test.yaml"
RUNBOOK = ROOT / "docs" / "runbook.md"

EXPORTED = frozenset(name for spec in CATALOGUE for name in exported_names(spec))
REQUIRED_ALERTS = {
    "A2AInvocationPathBroken", "A2AAgentCardUnavailable", "A2AAdvertisedURLSuspicious", "A2AProbeFailureRatioHigh",
    "A2AProbeSlow", "A2AProbeStale", "A2AProbeConfigReloadFailed", "A2AProbeDaemonDown", "A2AProbeOverloaded",
    "A2AAgentCertificateExpiringSoon",
}
#: Alerts about the daemon itself: they have no agent label.
DAEMON_ALERTS = {"A2AProbeConfigReloadFailed", "A2AProbeDaemonDown", "A2AProbeOverloaded"}
SEVERITIES = {"critical", "warning", "info"}

_KEYWORDS = {"and", "or", "unless", "bool", "offset", "group_left", "group_right", "by", "without", "on",
             "ignoring", "Inf", "NaN", "inf", "nan"}
_STRING = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|`[^`]*`')
_MODIFIER = re.compile(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)")
_IDENT = re.compile(r"(?<![\w.])[A-Za-z_:][A-Za-z0-9_:]*")


def metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression selects (a small lexer: enough for our rules and panels)."""
    s = _STRING.sub('""', expr)
    s = re.sub(r"\{[^}]*\}", " ", s)  # label matchers
    s = re.sub(r"\[[^\]]*\]", " ", s)  # range and subquery selectors
    s = _MODIFIER.sub(" ", s)  # by (…), on (…), group_left (…)
    names = set()
    for m in _IDENT.finditer(s):
        if m.group() in _KEYWORDS or s[m.end():].lstrip().startswith("("):
            continue  # keyword, function or aggregation
        names.add(m.group())
    return names


def test_metric_names_lexer() -> None:
    assert metric_names('sum without (reason) (increase(a2a_probe_failures_total{reason=~"a|b"}[15m])) > 0') == {
        "a2a_probe_failures_total"}
    assert metric_names("up{job=\"x\"} == 0 or on (job) absent(a2a_probe_build_info{job='x'})") == {
        "up", "a2a_probe_build_info"}
    assert metric_names("histogram_quantile(0.95, sum by (le) (rate(x_bucket[1m]))) > on (a) group_left () "
                        "(0.8 * y) and 1e3 < bool z offset 5m") == {"x_bucket", "y", "z"}


def load_rules() -> list[dict[str, Any]]:
    doc = yaml.safe_load(ALERTS.read_text())
    (group,) = doc["groups"]
    assert group["name"] == "a2a-probe"
    rules: list[dict[str, Any]] = group["rules"]
    return rules


def alerts_by_name() -> dict[str, dict[str, Any]]:
    rules = load_rules()
    names = [r["alert"] for r in rules if "alert" in r]
    assert len(names) == len(set(names)), "duplicate alert names"
    return {r["alert"]: r for r in rules if "alert" in r}


def promtool() -> str:
    found = shutil.which("promtool")
    assert found, "promtool is required: apt-get install prometheus (as .ci/run does)"
    return found


def run_promtool(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([promtool(), *args], capture_output=True, text=True, timeout=120, cwd=ROOT, check=False)


@pytest.mark.external
def test_promtool_check_rules() -> None:
    r = run_promtool("check", "rules", str(ALERTS.relative_to(ROOT)))
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"SUCCESS: {len(load_rules())} rules found" in r.stdout


@pytest.mark.external
def test_promtool_test_rules() -> None:
    r = run_promtool("test", "rules", str(ALERT_TESTS.relative_to(ROOT)))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "SUCCESS" in r.stdout


def test_the_required_alerts_exist() -> None:
    assert set(alerts_by_name()) >= REQUIRED_ALERTS


def test_every_alert_has_a_firing_and_a_quiet_test_case() -> None:
    suite = yaml.safe_load(ALERT_TESTS.read_text())
    assert suite["rule_files"] == [ALERTS.name]
    fires: dict[str, int] = defaultdict(int)
    quiet: dict[str, int] = defaultdict(int)
    for test in suite["tests"]:
        for case in test.get("alert_rule_test", []):
            name = case["alertname"]
            expected = case.get("exp_alerts") or []
            if expected:
                fires[name] += 1
                for alert in expected:  # exact expectations, not just "something fired"
                    assert alert["exp_labels"]["severity"] in SEVERITIES, (test["name"], name)
                    assert {"summary", "description", "runbook_url"} <= set(alert["exp_annotations"]), (
                        test["name"], name)
            else:
                quiet[name] += 1
    alerts = set(alerts_by_name())
    assert set(fires) | set(quiet) <= alerts, "tests for alerts that do not exist"
    assert {a for a in alerts if not fires[a]} == set(), "alerts without a firing case"
    assert {a for a in alerts if not quiet[a]} == set(), "alerts without a non-firing case"


def test_alert_expressions_use_only_exported_metrics() -> None:
    for name, rule in alerts_by_name().items():
        names = metric_names(rule["expr"])
        assert names, name
        assert names <= EXPORTED | {"up"}, (name, names - EXPORTED)
        # metric names inside query templates of the annotations, too
        for text in rule["annotations"].values():
            assert set(re.findall(r"\b" + PREFIX + r"\w+", text)) <= EXPORTED, (name, text)


@pytest.mark.parametrize("name", sorted(REQUIRED_ALERTS))
def test_alert_labels_and_annotations(name: str) -> None:
    rule = alerts_by_name()[name]
    assert rule["labels"]["severity"] in SEVERITIES
    ann = rule["annotations"]
    assert ann["summary"].strip() and ann["description"].strip()
    assert ann["runbook_url"] == f"docs/runbook.md#{name.lower()}"
    if name not in DAEMON_ALERTS:
        assert "{{ $labels.agent }}" in ann["summary"] and "{{ $labels.agent }}" in ann["description"]
    if "for" in rule:
        assert re.fullmatch(r"\d+[smh]", rule["for"]), rule["for"]


def test_severities() -> None:
    alerts = alerts_by_name()
    critical = {n for n, r in alerts.items() if r["labels"]["severity"] == "critical"}
    assert critical == {"A2AInvocationPathBroken", "A2AAgentCardUnavailable", "A2AProbeDaemonDown"}


def test_headline_alert_joins_card_success_with_invocation_failure_and_names_the_reason() -> None:
    rule = alerts_by_name()["A2AInvocationPathBroken"]
    expr = " ".join(rule["expr"].split())
    assert 'a2a_probe_step_success{step=~"ping|invoke|stream"} == 0' in expr
    assert 'a2a_probe_step_success{step="discover"} == 1' in expr
    assert "and ignoring (step)" in expr  # joined on everything but the step: agent, module (and job, instance)
    assert re.fullmatch(r"[1-9]\d*m", rule["for"])
    assert "a2a_probe_failure_reason_info" in rule["annotations"]["summary"]
    assert "a2a_probe_failure_reason_info" in rule["annotations"]["description"]


def _runbook_sections() -> dict[str, str]:
    sections: dict[str, str] = {}
    current = None
    for line in RUNBOOK.read_text().splitlines():
        m = re.match(r"^## (\S+)\s*$", line)
        if m:
            current = m.group(1)
            sections[current] = ""
        elif current:
            sections[current] += line + "\n"
    return sections


def test_every_alert_has_a_runbook_section() -> None:
    sections = _runbook_sections()
    for name, rule in alerts_by_name().items():
        assert name in sections, f"docs/runbook.md has no '## {name}' section"
        # the GitHub anchor of '## A2AFoo' is #a2afoo: the runbook_url annotation must match it
        assert rule["annotations"]["runbook_url"].endswith("#" + name.lower())
        body = sections[name]
        for part in ("What it means", "Likely causes", "How to confirm", "How to fix"):
            assert f"**{part}" in body, (name, part)
    assert set(sections) == set(alerts_by_name()), "runbook sections for alerts that do not exist"


def test_runbook_covers_the_gateway_misconfigurations() -> None:
    text = RUNBOOK.read_text()
    for needle in ("controller.a2aBaseUrl", "interface_path_doubled", "interface_url_unroutable",
                   "/report?agent=", "a2a-probe check"):
        assert needle in text, needle


#: Per-agent alerts that aggregate the binding away, and why: the card (one per agent and module), staleness (a
#: job-level clock without binding).
NO_BINDING = {"A2AAgentCardUnavailable", "A2AProbeStale"}


def test_per_agent_alerts_keep_the_binding_dimension() -> None:
    """An aggregation that drops `binding` would merge a broken gRPC interface into a working JSON-RPC one."""
    for name, rule in alerts_by_name().items():
        if name in DAEMON_ALERTS or name in NO_BINDING:
            continue
        for grouping in re.findall(r"\bby\s*\(([^)]*)\)", rule["expr"]):
            assert "binding" in grouping, (name, grouping)
        assert "binding" not in " ".join(re.findall(r"\bwithout\s*\(([^)]*)\)", rule["expr"])), name
    assert "binding" in re.findall(r"without\s*\(([^)]*)\)", alerts_by_name()["A2AAgentCardUnavailable"]["expr"])[0]


def test_a_broken_binding_next_to_working_ones_fires_with_its_binding() -> None:
    """The promtool case (run by test_promtool_test_rules) where gRPC fails while JSON-RPC and HTTP+JSON pass."""
    suite = yaml.safe_load(ALERT_TESTS.read_text())
    fired = [(t["alertname"], a["exp_labels"]) for case in suite["tests"] for t in case.get("alert_rule_test", [])
             for a in t.get("exp_alerts") or []]
    headline = [labels for alert, labels in fired if alert == "A2AInvocationPathBroken" and labels["agent"] == "multi"]
    assert headline == [{"severity": "critical", "job": "a2a-probe", "instance": "probe:9470", "agent": "multi",
                         "binding": "grpc", "module": "ping", "step": "ping"}]
