"""Static checks of the Grafana dashboards in dashboards/*.json.

The helpers here (panel walking, variable substitution) are reused by test_live_queries.py, which sends every
panel query to a real Prometheus.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from probe.metrics import CATALOGUE, PREFIX, exported_names
from tests.deploy.test_alerts import metric_names

ROOT = Path(__file__).resolve().parents[2]
DASHBOARD_DIR = ROOT / "dashboards"
FLEET = DASHBOARD_DIR / "a2a-probe-fleet.json"
AGENT = DASHBOARD_DIR / "a2a-probe-agent.json"
DASHBOARDS = (FLEET, AGENT)
DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}

#: Sample names /metrics exposes (counters with _total, histograms as _bucket/_sum/_count).
EXPORTED = frozenset(name for spec in CATALOGUE for name in exported_names(spec))
#: Metrics from Prometheus itself that panels may use.
PROMETHEUS_METRICS = frozenset({"up", "ALERTS"})
#: In prose (descriptions) a histogram may also be named by its base name.
DOCUMENTED = EXPORTED | {PREFIX + spec.name for spec in CATALOGUE}

#: Grafana's global variables that dashboards may use without defining them.
BUILTIN_VARIABLES = frozenset({
    "__rate_interval", "__range", "__range_s", "__range_ms", "__interval", "__interval_ms", "__data", "__field",
    "__series", "__value", "__url_time_range", "__from", "__to", "__all_variables", "__dashboard", "__org",
    "__user", "__timezone", "__name",
})
# $var, ${var}, ${var:format}, ${__data.fields.x}, [[var]]
_VAR_RE = re.compile(r"\$\{([A-Za-z_]\w*)[^}]*\}|\$([A-Za-z_]\w*)|\[\[([A-Za-z_]\w*)(?::\w+)?\]\]")
_METRIC_RE = re.compile(r"\b" + PREFIX + r"[a-zA-Z0-9_]+")

#: Values for the live test: what Grafana would substitute.
SUBSTITUTIONS = {"job": "a2a-probe", "module": ".*", "binding": ".*", "__rate_interval": "1m", "__range": "5m",
                 "__interval": "15s"}


def load(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text())
    assert isinstance(data, dict)
    return data


def all_panels(panels: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Every panel, including the ones nested in (collapsed) rows."""
    for p in panels:
        yield p
        yield from all_panels(p.get("panels", []))


def panel_targets(dashboard: dict[str, Any]) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    for panel in all_panels(dashboard["panels"]):
        for target in panel.get("targets", []):
            yield panel, target


def variables(dashboard: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {v["name"]: v for v in dashboard["templating"]["list"]}


def variable_query(var: dict[str, Any]) -> str:
    q = var.get("query", "")
    return str(q["query"] if isinstance(q, dict) else q)


def variable_names_used(text: str) -> set[str]:
    return {next(g for g in m.groups() if g) for m in _VAR_RE.finditer(text)}


def substitute(expr: str, values: dict[str, str]) -> str:
    """Replace $var / ${var} / ${var:fmt} / [[var]] like Grafana does for a single-value variable."""
    def repl(m: re.Match[str]) -> str:
        name = next(g for g in m.groups() if g)
        if name not in values:
            raise KeyError(f"no value for variable {name!r} in {expr!r}")
        return values[name]

    return _VAR_RE.sub(repl, expr)


def strings(node: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """Every string in a JSON document with its path."""
    if isinstance(node, str):
        yield path, node
    elif isinstance(node, dict):
        for k, v in node.items():
            yield from strings(v, f"{path}.{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from strings(v, f"{path}[{i}]")


@pytest.fixture(params=DASHBOARDS, ids=lambda p: p.name)
def dashboard(request: pytest.FixtureRequest) -> dict[str, Any]:
    return load(request.param)


def test_dashboards_are_valid_json_with_the_expected_header() -> None:
    fleet, agent = load(FLEET), load(AGENT)
    assert fleet["title"] == "A2A probe — fleet"
    assert agent["title"] == "A2A probe — agent"
    assert fleet["uid"] != agent["uid"]
    for d in (fleet, agent):
        assert d["schemaVersion"] == 39
        assert re.fullmatch(r"[a-z0-9-]{1,40}", d["uid"])
        assert "a2a-probe" in d["tags"]
        assert d["panels"]
        # provisioning and the Grafana sidecar import the file as is: no unresolved ${DS_…} inputs
        assert "${DS_" not in json.dumps(d)


def test_panel_ids_are_unique_including_nested_rows(dashboard: dict[str, Any]) -> None:
    ids = [p["id"] for p in all_panels(dashboard["panels"])]
    assert all(isinstance(i, int) for i in ids)
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)
    # nested panels really are walked: each dashboard has a collapsed row with panels inside
    nested = [p for p in dashboard["panels"] if p["type"] == "row" and p.get("panels")]
    assert nested and all(r["collapsed"] for r in nested)


def test_panels_fit_the_grid(dashboard: dict[str, Any]) -> None:
    for p in all_panels(dashboard["panels"]):
        g = p["gridPos"]
        assert g["x"] >= 0 and g["w"] > 0 and g["x"] + g["w"] <= 24, (p["title"], g)
        assert g["h"] > 0 and g["y"] >= 0, (p["title"], g)


def test_every_panel_and_query_uses_the_datasource_variable(dashboard: dict[str, Any]) -> None:
    for p in all_panels(dashboard["panels"]):
        assert p.get("datasource") == DATASOURCE, p["title"]
        if p["type"] != "row":
            assert p["targets"], f"panel {p['title']!r} has no query"
        for t in p.get("targets", []):
            assert t.get("datasource") == DATASOURCE, (p["title"], t["refId"])
            assert t["expr"].strip(), (p["title"], t["refId"])
    for v in dashboard["templating"]["list"]:
        if v["type"] == "query":
            assert v["datasource"] == DATASOURCE, v["name"]


def test_template_variables(dashboard: dict[str, Any]) -> None:
    vs = variables(dashboard)
    ds = vs["datasource"]
    assert ds["type"] == "datasource" and ds["query"] == "prometheus"
    assert vs["job"]["type"] == "query"
    assert variable_query(vs["job"]) == "label_values(a2a_probe_build_info, job)"
    assert vs["agent"]["type"] == "query"
    assert variable_query(vs["agent"]) == 'label_values(a2a_probe_success{job=~"$job"}, agent)'
    assert vs["probe_url"]["type"] == "textbox"
    assert vs["probe_url"]["query"].startswith("http")


def test_the_binding_variable_filters_every_per_binding_series(dashboard: dict[str, Any]) -> None:
    """The daemon probes every advertised interface: each per-binding selector narrows to $binding, and a panel
    that shows those series one by one names the binding in its legend."""
    from probe.metrics import AMB

    binding = variables(dashboard)["binding"]
    assert variable_query(binding) == 'label_values(a2a_probe_success{job=~"$job", agent=~"$agent"}, binding)'
    assert binding["multi"] is True and binding["includeAll"] is True
    per_binding = {n for spec in CATALOGUE if spec.labels[:3] == AMB for n in exported_names(spec)}
    for panel, target in panel_targets(dashboard):
        for name, matchers in re.findall(r"(a2a_probe_\w+)\{([^}]*)\}", target["expr"]):
            assert (name in per_binding) == ('binding=~"$binding"' in matchers), (panel["title"], name)
        legend = target.get("legendFormat", "")
        if "{{module}}" in legend and set(_METRIC_RE.findall(target["expr"])) <= per_binding:
            assert "{{binding}}" in legend, (panel["title"], legend)


def test_fleet_agent_variable_is_multi_select_with_all() -> None:
    agent = variables(load(FLEET))["agent"]
    assert agent["multi"] is True and agent["includeAll"] is True


def test_every_variable_used_is_defined(dashboard: dict[str, Any]) -> None:
    defined = set(variables(dashboard)) | BUILTIN_VARIABLES
    used: dict[str, set[str]] = {}
    for path, text in strings({k: v for k, v in dashboard.items() if k != "templating"}):
        for name in variable_names_used(text):
            used.setdefault(name, set()).add(path)
    for v in dashboard["templating"]["list"]:  # a variable's query may only use variables defined before it
        for name in variable_names_used(variable_query(v)):
            used.setdefault(name, set()).add(f"templating.{v['name']}")
    undefined = {name: sorted(paths)[:3] for name, paths in used.items() if name not in defined}
    assert not undefined, undefined
    # and the substitution the live test uses really covers every query
    for panel, target in panel_targets(dashboard):
        names = variable_names_used(target["expr"])
        assert names <= set(SUBSTITUTIONS) | {"agent"}, (panel["title"], names)


def test_every_metric_exists_in_the_catalogue(dashboard: dict[str, Any]) -> None:
    seen: set[str] = set()
    for panel, target in panel_targets(dashboard):
        names = metric_names(target["expr"])
        assert names, (panel["title"], target["refId"])
        unknown = names - EXPORTED - PROMETHEUS_METRICS
        assert not unknown, (panel["title"], unknown)
        assert set(_METRIC_RE.findall(target["expr"])) <= EXPORTED, panel["title"]
        seen |= names
    for v in dashboard["templating"]["list"]:
        assert set(_METRIC_RE.findall(variable_query(v))) <= EXPORTED, v["name"]
    for path, text in strings(dashboard):  # descriptions may name metrics too; keep them true
        assert set(_METRIC_RE.findall(text)) <= DOCUMENTED, path
    assert {"a2a_probe_success", "a2a_probe_failures_total", "a2a_probe_runs_total"} <= seen


def test_histogram_quantiles_use_rate_over_the_rate_interval(dashboard: dict[str, Any]) -> None:
    for panel, target in panel_targets(dashboard):
        expr = target["expr"]
        if "histogram_quantile" in expr:
            assert re.search(r"rate\(a2a_probe_\w+_bucket\{[^}]*\}\[\$__rate_interval\]\)", expr), panel["title"]
            assert re.search(r"by \([^)]*\ble\b", expr), panel["title"]


def test_fleet_panels() -> None:
    d = load(FLEET)
    by_title = {p["title"]: p for p in all_panels(d["panels"])}
    exprs = {title: " ".join(t["expr"] for t in p.get("targets", [])) for title, p in by_title.items()}
    assert "count(count by (agent) (a2a_probe_success" in exprs["Agents probed"]
    assert "== 0" in exprs["Agents failing"]
    ratio = exprs["Success ratio (range)"]
    assert "increase(a2a_probe_failures_total" in ratio and "increase(a2a_probe_runs_total" in ratio
    assert "[$__range]" in ratio
    assert by_title["Verdict by agent and module"]["type"] == "state-timeline"
    assert exprs["Verdict by agent and module"].startswith("a2a_probe_success{")
    assert "sum by (reason)" in exprs["Failures by reason"]
    daemon = next(p for p in d["panels"] if p["type"] == "row" and p["title"] == "Daemon")
    daemon_exprs = " ".join(t["expr"] for p in daemon["panels"] for t in p["targets"])
    for metric in ("a2a_probe_build_info", "a2a_probe_config_last_reload_successful", "a2a_probe_probes_in_flight",
                   "a2a_probe_scheduler_missed_runs_total", "a2a_probe_last_run_timestamp_seconds"):
        assert metric in daemon_exprs, metric


def test_fleet_failing_table_links_to_the_report() -> None:
    table = next(p for p in all_panels(load(FLEET)["panels"]) if p["title"] == "Failing now")
    assert table["type"] == "table"
    (target,) = table["targets"]
    assert 'a2a_probe_failure_reason_info{' in target["expr"] and 'reason!="none"' in target["expr"]
    assert "== 1" in target["expr"]
    assert target["format"] == "table" and target["instant"] is True
    links = [link for o in table["fieldConfig"]["overrides"] if o["matcher"]["options"] == "agent"
             for prop in o["properties"] if prop["id"] == "links" for link in prop["value"]]
    urls = [link["url"] for link in links]
    assert "${probe_url}/report?agent=${__data.fields.agent}&format=markdown" in urls


def test_agent_panels() -> None:
    d = load(AGENT)
    exprs = " ".join(t["expr"] for _, t in panel_targets(d))
    for needle in ("a2a_probe_step_success", "a2a_probe_http_status_code", "a2a_probe_http_phase_duration_seconds",
                   "a2a_probe_agent_card_info", "a2a_probe_last_success_timestamp_seconds",
                   "histogram_quantile(0.5,", "histogram_quantile(0.95,", "histogram_quantile(0.99,",
                   "a2a_probe_step_duration_seconds_bucket", "a2a_probe_failures_total",
                   "a2a_probe_push_delivery_latency_seconds_bucket", "a2a_probe_push_delivery_problems_total"):
        assert needle in exprs, needle
    uptime = next(p for p in all_panels(d["panels"]) if p["title"] == "Uptime")
    for t in uptime["targets"]:
        assert t["expr"].startswith("1 - (sum(increase(a2a_probe_failures_total"), t["expr"]
        assert "increase(a2a_probe_runs_total" in t["expr"]
    assert variables(d)["agent"]["multi"] is False
