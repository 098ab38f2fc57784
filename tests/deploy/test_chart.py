"""The Helm chart (helm/a2a-probe), linted and rendered by the real Helm engine (helm/render.py, helm-sdkpy under
Python 3.12), every rendered object validated against the Kubernetes schemas (kubernetes-validate, strict) or, for
the prometheus-operator kinds, against CRD schemas in chart_tools.py."""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import subprocess
import sys
import time
import typing
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from tests.deploy.chart_tools import (
    CHART,
    HELM_DIR,
    REPO,
    KubeValidationError,
    leaf_paths,
    parse_manifests,
    probe_scrape_config,
    prometheus_query,
    render_batch,
    run_daemon_cli,
    validate_manifest,
    wait_http,
)
from tests.peers.harness import free_port
from tests.prom.server import prometheus_binary

pytestmark = [pytest.mark.timeout(1200), pytest.mark.external]  # the real Helm engine

CI_FILES = sorted(p.name for p in (CHART / "ci").glob("*-values.yaml"))
DEFAULT_VALUES: dict[str, Any] = yaml.safe_load((CHART / "values.yaml").read_text())
CHANGED_CONFIG = {"config": {"agents": [{"name": "other-agent", "url": "https://agents.example.com/other"}]}}
MONITORING_ALL = {"serviceMonitor": {"enabled": True}, "probe": {"enabled": True},
                  "prometheusRule": {"enabled": True}, "grafanaDashboards": {"enabled": True}}

# name -> (action, values); values are a ci file name or a dict of --set-json style overrides
JOBS: dict[str, tuple[str, str | dict[str, Any]]] = {
    **{f"lint:{f}": ("lint", f) for f in CI_FILES},
    **{f"template:{f}": ("template", f) for f in CI_FILES},
    "lint:defaults": ("lint", {}),
    "template:defaults": ("template", {}),
    "template:changed-config": ("template", CHANGED_CONFIG),
    "template:changed-settings": ("template", {"settings": {"logLevel": "debug"}}),
    "template:unknown-top-level-key": ("template", {"bogus": True}),
    "template:unknown-nested-key": ("template", {"serviceMonitor": {"enabeld": True}}),
    "template:inline-credential": ("template", {"config": {"agents": [
        {"name": "a", "url": "https://a.example.com", "auth": {"bearer_token": "s3cr3t-value"}}]}}),
    "template:unquoted-a2a-version": ("template", {"config": {"agents": [
        {"name": "a", "url": "https://a.example.com", "a2a_version": 1.0}]}}),
    "template:bad-mode": ("template", {"mode": "daemonset"}),
    "template:statefulset-with-shard": ("template", {"mode": "statefulset", "replicas": 2,
                                                     "settings": {"shard": "0/2"}}),
    "template:statefulset-no-replicas": ("template", {"mode": "statefulset", "replicas": 0}),
    "template:statefulset-nodeport": ("template", {"mode": "statefulset", "service": {"type": "NodePort"}}),
    "template:bad-shard": ("template", {"settings": {"shard": "first"}}),
    "template:deployment-shard": ("template", {"settings": {"shard": "1/4"}}),
    "template:sidecar-without-selector": ("template", {"mode": "sidecar"}),
    "template:networkpolicy-without-gateways": ("template", {"networkPolicy": {"enabled": True}}),
    "template:probe-without-agents": ("template", {"probe": {"enabled": True}}),
    "template:monitoring-no-agents": ("template", {**MONITORING_ALL, "probe": {"enabled": True,
                                                                              "targets": ["x-agent"]}}),
    "template:sidecar-reloader": ("template", {"mode": "sidecar", "sidecar": {"podSelector": {"app": "gw"}},
                                               "configReloader": {"enabled": True}}),
    "template:rules-tuned": ("template", {"prometheusRule": {
        "enabled": True,
        "defaultRules": {"disabled": ["A2AProbeSlow"], "severityOverrides": {"A2AProbeStale": "info"},
                         "additionalLabels": {"team": "sre"}},
        "additionalRuleGroups": [{"name": "extra", "rules": [{"alert": "Extra", "expr": "vector(1)"}]}]}}),
    # an agent on a closed loopback port: its probes fail at once, without leaving the machine
    "template:probe-e2e": ("template", {"config": {"agents": [{"name": "local-agent", "url": "http://127.0.0.1:9/a2a"}]},
                                        "probe": {"enabled": True}}),
    "template:push-exposed": ("template", {
        "config": {"agents": [{"name": "p", "url": "https://agents.example.com/p", "modules": ["push"]}]},
        "push": {"enabled": True, "from": [{"namespaceSelector": {"matchLabels": {"team": "agents"}}}],
                 "ingress": {"enabled": True, "host": "probe-push.example.com", "className": "nginx",
                             "tls": [{"secretName": "push-tls", "hosts": ["probe-push.example.com"]}]}},
        "networkPolicy": {"enabled": True, "ingress": {"from": [{"namespaceSelector": {}}]},
                          "egress": {"gatewayNamespaces": ["agents"]}}}),
    "template:push-url-set": ("template", {
        "config": {"modules": {"hook": {"prober": "push", "interval": "5m", "late_after": "20s"}},
                   "agents": [{"name": "p", "url": "https://agents.example.com/p", "modules": ["hook"]}]},
        "settings": {"pushPublicUrl": "https://probe.example.com/a2a-probe"}}),
    "template:push-without-url": ("template", {"config": {
        "modules": {"hook": {"prober": "push"}},
        "agents": [{"name": "p", "url": "https://agents.example.com/p", "modules": ["hook"]}]}}),
    "template:push-ingress-without-host": ("template", {"push": {"enabled": True, "ingress": {"enabled": True}}}),
    "template:push-statefulset": ("template", {"mode": "statefulset", "push": {"enabled": True}}),
    "template:existing-configmap": ("template", {"existingConfigMap": "my-config",
                                                "probe": {"enabled": True, "targets": ["a"]}}),
}


def _values(spec: str | dict[str, Any]) -> dict[str, Any]:
    if isinstance(spec, str):
        loaded: dict[str, Any] = yaml.safe_load((CHART / "ci" / spec).read_text()) or {}
        return loaded
    return spec


@pytest.fixture(scope="session")
def helm() -> dict[str, dict[str, Any]]:
    """Every lint and render of this module, in one run of the Helm engine."""
    names = list(JOBS)
    jobs = [{"action": JOBS[n][0], "chart": str(CHART), "values": _values(JOBS[n][1])} for n in names]
    return dict(zip(names, render_batch(jobs), strict=True))


def _ok(helm: dict[str, dict[str, Any]], name: str) -> dict[str, Any]:
    result = helm[name]
    assert result["ok"], f"{name}: {result.get('error')}"
    return result


def _docs(helm: dict[str, dict[str, Any]], name: str) -> list[dict[str, Any]]:
    return parse_manifests(_ok(helm, name)["manifest"])


def _kinds(docs: list[dict[str, Any]]) -> list[str]:
    return sorted(d["kind"] for d in docs)


def _one(docs: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    found = [d for d in docs if d["kind"] == kind]
    assert len(found) == 1, f"expected one {kind}, found {len(found)}"
    return found[0]


def _sidecar_snippet(notes: str) -> dict[str, Any]:
    match = re.search(r"# ---- BEGIN a2a-probe sidecar ----\n(.*?)# ---- END a2a-probe sidecar ----", notes, re.S)
    assert match, f"no sidecar snippet in NOTES.txt:\n{notes}"
    snippet: dict[str, Any] = yaml.safe_load(match.group(1))
    return snippet


def _pod_specs(helm: dict[str, dict[str, Any]], name: str) -> list[dict[str, Any]]:
    """Pod specs the release runs: the Deployment's, or (sidecar mode) a gateway pod with the NOTES snippet."""
    result = _ok(helm, name)
    specs = [d["spec"]["template"]["spec"] for d in parse_manifests(result["manifest"])
             if d["kind"] in ("Deployment", "StatefulSet")]
    if "BEGIN a2a-probe sidecar" in result["notes"]:
        snippet = _sidecar_snippet(result["notes"])
        specs.append({"containers": [{"name": "gateway", "image": "gateway:1"}, *snippet["containers"]],
                      "volumes": snippet["volumes"]})
    return specs


# ---- lint and render --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("ci", [*CI_FILES, "defaults"])
def test_lint_passes(helm: dict[str, dict[str, Any]], ci: str) -> None:
    result = helm[f"lint:{ci}"]
    assert result["ok"], f"helm lint {ci}: {result['messages']} {result.get('error')}"
    assert all(m["severity"] == "INFO" for m in result["messages"])


@pytest.mark.parametrize("ci", [*CI_FILES, "defaults"])
def test_every_rendered_object_validates(helm: dict[str, dict[str, Any]], ci: str) -> None:
    docs = _docs(helm, f"template:{ci}")
    assert docs
    seen = set()
    for doc in docs:
        validate_manifest(doc)
        key = (doc["kind"], doc["metadata"].get("namespace"), doc["metadata"]["name"])
        assert key not in seen, f"duplicate object {key}"
        seen.add(key)
        assert doc["metadata"]["namespace"] == "monitoring"
        labels = doc["metadata"]["labels"]
        assert labels["app.kubernetes.io/name"] == "a2a-probe"
        assert labels["app.kubernetes.io/managed-by"] == "Helm"
        for key_, value in (_values(ci if ci != "defaults" else {}).get("commonLabels") or {}).items():
            assert labels[key_] == value
        assert doc["kind"] != "Secret", "the chart never renders credentials"


def test_validation_is_not_a_no_op() -> None:
    """The validators reject what they should, so a green run above means something."""
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x", "namespace": "n"},
                  "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {
                      "metadata": {"labels": {"a": "b"}},
                      "spec": {"containers": [{"name": "c", "image": "i", "securityContxt": {}}]}}}}
    with pytest.raises(KubeValidationError):
        validate_manifest(deployment)
    monitor = {"apiVersion": "monitoring.coreos.com/v1", "kind": "ServiceMonitor",
               "metadata": {"name": "x", "namespace": "n"},
               "spec": {"selector": {}, "endpoints": [{"port": "http", "intervall": "30s"}]}}
    with pytest.raises(jsonschema.ValidationError):
        validate_manifest(monitor)


@pytest.mark.parametrize("ci", CI_FILES)
def test_rendered_config_is_accepted_by_the_daemon(helm: dict[str, dict[str, Any]], ci: str,
                                                   tmp_path: Path) -> None:
    """`a2a-probe config check` on the ConfigMap the chart renders; credential references point at what the pod
    provides (a mounted Secret for `file:`, an env var for `env:`), and the ConfigMap holds no credential."""
    docs = _docs(helm, f"template:{ci}")
    config_map = next(d for d in docs if d["kind"] == "ConfigMap" and "config.yaml" in d.get("data", {}))
    path = tmp_path / "config.yaml"
    path.write_text(config_map["data"]["config.yaml"])
    checked = run_daemon_cli("config", "check", str(path))
    assert checked.returncode == 0, checked.stderr + checked.stdout
    config = yaml.safe_load(config_map["data"]["config.yaml"])
    assert config == {**DEFAULT_VALUES["config"], **_values(ci)["config"]}

    container = next(c for spec in _pod_specs(helm, f"template:{ci}") for c in spec["containers"]
                     if c["name"] == "a2a-probe")
    mounts = [m["mountPath"] for m in container["volumeMounts"] if m["name"].startswith("a2a-probe-secret-")]
    env = {e["name"] for e in container.get("env", [])}
    for agent in config["agents"]:
        auth = agent.get("auth", {})
        refs = [auth["bearer_token"]] if "bearer_token" in auth else []
        refs += list(auth.get("headers", {}).values())
        for ref in refs:
            assert set(ref) <= {"file", "env"}
            if "file" in ref:
                assert any(ref["file"].startswith(m.rstrip("/") + "/") for m in mounts), (ref, mounts)
            else:
                assert ref["env"] in env or container.get("envFrom"), (ref, env)


# ---- security ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("ci", [*CI_FILES, "defaults"])
def test_security_contexts_are_strict(helm: dict[str, dict[str, Any]], ci: str) -> None:
    name = f"template:{ci}"
    specs = _pod_specs(helm, name)
    assert specs
    for spec in specs:
        pod_sc = spec.get("securityContext", {})
        is_ours = "serviceAccountName" in spec
        if is_ours:
            assert spec["automountServiceAccountToken"] is False
            assert pod_sc["runAsNonRoot"] is True
            assert pod_sc["seccompProfile"] == {"type": "RuntimeDefault"}
            assert pod_sc["runAsUser"] > 0 and pod_sc["runAsGroup"] > 0
        for container in spec["containers"]:
            if container["name"] == "gateway":
                continue
            sc = container["securityContext"]
            assert sc["runAsNonRoot"] is True, container["name"]
            assert isinstance(sc["runAsUser"], int) and sc["runAsUser"] > 0
            assert isinstance(sc["runAsGroup"], int) and sc["runAsGroup"] > 0
            assert sc["readOnlyRootFilesystem"] is True
            assert sc["allowPrivilegeEscalation"] is False
            assert sc.get("privileged", False) is False
            assert sc["capabilities"] == {"drop": ["ALL"]}
            assert sc["seccompProfile"] == {"type": "RuntimeDefault"}
            assert container["resources"]["requests"] and container["resources"]["limits"]["memory"]
            for mount in container.get("volumeMounts", []):
                if mount["name"].startswith("a2a-probe-"):
                    assert mount["readOnly"] is True
        probe = next(c for c in spec["containers"] if c["name"] == "a2a-probe")
        assert probe["livenessProbe"]["httpGet"]["path"] == "/healthz"
        assert probe["readinessProbe"]["httpGet"]["path"] == "/readyz"
        assert probe["args"][:2] == ["run", "--config=/etc/a2a-probe/config.yaml"]
        assert any(m["mountPath"] == "/etc/a2a-probe" for m in probe["volumeMounts"])
    for doc in _docs(helm, name):
        if doc["kind"] == "ServiceAccount":
            assert doc["automountServiceAccountToken"] is False


# ---- modes ------------------------------------------------------------------------------------------------------

def test_deployment_mode(helm: dict[str, dict[str, Any]]) -> None:
    docs = _docs(helm, "template:deployment-values.yaml")
    assert _kinds(docs) == ["ConfigMap", "Deployment", "NetworkPolicy", "PodDisruptionBudget", "Service",
                            "ServiceAccount"]
    deployment = _one(docs, "Deployment")
    spec = deployment["spec"]["template"]["spec"]
    main = spec["containers"][0]
    assert main["image"] == ("registry.example.com/platform/a2a-probe:0.1.0@sha256:"
                             "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")
    assert main["args"] == ["run", "--config=/etc/a2a-probe/config.yaml", "--max-concurrency=8"]
    env = {e["name"]: e for e in main["env"]}
    assert env["A2A_PROBE_LISTEN_ADDRESS"]["value"] == "0.0.0.0:9470"
    assert env["A2A_PROBE_PROBE_TARGET_PATTERN"]["value"] == r"https://gw\.example\.com/.*"
    assert env["HELM_AGENT_API_KEY"]["valueFrom"]["secretKeyRef"]["name"] == "helm-agent-api-key"
    assert spec["imagePullSecrets"] == [{"name": "regcred"}]
    assert spec["tolerations"][0]["key"] == "dedicated"
    assert deployment["spec"]["template"]["metadata"]["annotations"]["example.com/owner"] == "sre"
    secret_volume = next(v for v in spec["volumes"] if v["name"] == "a2a-probe-secret-0")
    assert secret_volume["secret"] == {"secretName": "k8s-agent-token", "defaultMode": 0o444,
                                       "items": [{"key": "token", "path": "token"}]}
    assert {"name": "a2a-probe-secret-0", "mountPath": "/var/run/secrets/a2a/k8s-agent-token",
            "readOnly": True} in main["volumeMounts"]

    service = _one(docs, "Service")
    assert service["spec"]["selector"] == deployment["spec"]["selector"]["matchLabels"]
    assert service["spec"]["ports"] == [{"name": "http", "port": 9470, "targetPort": "a2a-probe", "protocol": "TCP"}]

    policy = _one(docs, "NetworkPolicy")["spec"]
    assert policy["policyTypes"] == ["Ingress", "Egress"]
    assert policy["ingress"] == [{"ports": [{"port": 9470, "protocol": "TCP"}], "from": [
        {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}}]}]
    gateways, dns = policy["egress"]
    assert gateways["to"] == [
        {"ipBlock": {"cidr": "10.20.0.0/16"}},
        {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kagent"}}},
        {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "agentgateway-system"}}},
    ]
    assert gateways["ports"] == [{"port": 443, "protocol": "TCP"}, {"port": 80, "protocol": "TCP"}]
    assert {p["port"] for p in dns["ports"]} == {53}
    assert dns["to"][0]["podSelector"] == {"matchLabels": {"k8s-app": "kube-dns"}}

    pdb = _one(docs, "PodDisruptionBudget")["spec"]
    assert pdb == {"selector": deployment["spec"]["selector"], "maxUnavailable": 1}


def test_statefulset_mode_shards_the_agents_across_pods_scraped_one_by_one(helm: dict[str, dict[str, Any]],
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from probe.config import Settings
    from probe.shard import Shard

    docs = _docs(helm, "template:statefulset-values.yaml")
    assert _kinds(docs) == ["ConfigMap", "PodDisruptionBudget", "Service", "ServiceAccount", "ServiceMonitor",
                            "StatefulSet"]
    sts, service, monitor = _one(docs, "StatefulSet"), _one(docs, "Service"), _one(docs, "ServiceMonitor")
    spec = sts["spec"]
    assert spec["replicas"] == 3 and spec["podManagementPolicy"] == "Parallel"
    # the governing Service is headless: its endpoints are the pods, so the ServiceMonitor scrapes each pod
    assert spec["serviceName"] == service["metadata"]["name"]
    assert service["spec"]["clusterIP"] == "None"
    assert service["spec"]["selector"] == spec["selector"]["matchLabels"] == monitor["spec"]["selector"]["matchLabels"]
    assert spec["template"]["metadata"]["labels"].items() >= spec["selector"]["matchLabels"].items()
    assert [e["port"] for e in monitor["spec"]["endpoints"]] == ["http"]
    assert _one(docs, "PodDisruptionBudget")["spec"]["selector"] == spec["selector"]
    container = spec["template"]["spec"]["containers"][0]
    env = {e["name"]: e for e in container["env"]}
    assert env["A2A_PROBE_SHARD"]["value"] == "ordinal/3"
    assert env["A2A_PROBE_POD_NAME"]["valueFrom"] == {"fieldRef": {"fieldPath": "metadata.name"}}
    # what each pod of the StatefulSet (<name>-<ordinal>) then probes: disjoint shares covering the config
    config = yaml.safe_load(_one(docs, "ConfigMap")["data"]["config.yaml"])
    names = [a["name"] for a in config["agents"]]
    shares = []
    for ordinal in range(3):
        monkeypatch.setenv("A2A_PROBE_SHARD", env["A2A_PROBE_SHARD"]["value"])
        monkeypatch.setenv("A2A_PROBE_POD_NAME", f"{sts['metadata']['name']}-{ordinal}")
        shard = Settings().shard_spec()
        assert shard == Shard(ordinal, 3)
        shares.append(shard.select(names))
    assert sorted(n for share in shares for n in share) == sorted(names)
    # the deployment mode is untouched by sharding unless settings.shard asks for it
    plain = _one(_docs(helm, "template:deployment-values.yaml"), "Deployment")["spec"]["template"]["spec"]
    assert "A2A_PROBE_SHARD" not in {e["name"] for e in plain["containers"][0]["env"]}
    one = _one(_docs(helm, "template:deployment-shard"), "Deployment")["spec"]["template"]["spec"]
    assert {e["name"]: e.get("value") for e in one["containers"][0]["env"]}["A2A_PROBE_SHARD"] == "1/4"
    assert "clusterIP" not in _one(_docs(helm, "template:deployment-shard"), "Service")["spec"]
    assert "Sharded: 3 pods" in _ok(helm, "template:statefulset-values.yaml")["notes"]


def test_sidecar_mode_renders_no_workload(helm: dict[str, dict[str, Any]]) -> None:
    result = _ok(helm, "template:sidecar-values.yaml")
    docs = parse_manifests(result["manifest"])
    assert _kinds(docs) == ["ConfigMap", "Service", "ServiceMonitor"]
    service = _one(docs, "Service")
    values = _values("sidecar-values.yaml")
    assert service["spec"]["selector"] == values["sidecar"]["podSelector"]
    assert service["spec"]["ports"][0]["targetPort"] == "a2a-probe"

    snippet = _sidecar_snippet(result["notes"])
    [probe] = snippet["containers"]
    assert probe["name"] == "a2a-probe"
    assert probe["ports"] == [{"name": "a2a-probe", "containerPort": 9471, "protocol": "TCP"}]
    assert {"name": "A2A_PROBE_LISTEN_ADDRESS", "value": "0.0.0.0:9471"} in probe["env"]
    volumes = {v["name"]: v for v in snippet["volumes"]}
    assert volumes["a2a-probe-config"]["configMap"]["name"] == _one(docs, "ConfigMap")["metadata"]["name"]
    assert volumes["a2a-probe-secret-0"]["secret"]["secretName"] == "k8s-agent-token"
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "gateway", "namespace": "monitoring"},
           "spec": _pod_specs(helm, "template:sidecar-values.yaml")[0]}
    validate_manifest(pod)
    assert "checksum/a2a-probe-config:" in result["notes"]


def test_sidecar_snippet_carries_the_reloader(helm: dict[str, dict[str, Any]]) -> None:
    snippet = _sidecar_snippet(_ok(helm, "template:sidecar-reloader")["notes"])
    assert [c["name"] for c in snippet["containers"]] == ["a2a-probe", "a2a-probe-config-reloader"]
    validate_manifest({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "gw", "namespace": "monitoring"},
                       "spec": {"containers": snippet["containers"], "volumes": snippet["volumes"]}})


# ---- monitoring objects -----------------------------------------------------------------------------------------

def _canonical_groups() -> list[dict[str, Any]]:
    canonical = REPO / "dashboards" / "alerts.yaml"
    source = canonical if canonical.is_file() else CHART / "files" / "alerts.yaml"
    groups: list[dict[str, Any]] = (yaml.safe_load(source.read_text()) or {}).get("groups") or []
    return groups


def test_monitoring_objects(helm: dict[str, dict[str, Any]], tmp_path: Path) -> None:
    docs = _docs(helm, "template:monitoring-values.yaml")
    values = _values("monitoring-values.yaml")
    service = _one(docs, "Service")

    monitor = _one(docs, "ServiceMonitor")
    assert monitor["metadata"]["labels"]["release"] == "kube-prometheus-stack"
    assert monitor["spec"]["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    assert monitor["spec"]["namespaceSelector"] == {"matchNames": ["monitoring"]}
    [endpoint] = monitor["spec"]["endpoints"]
    assert (endpoint["port"], endpoint["path"]) == ("http", "/metrics")
    assert endpoint["metricRelabelings"] == values["serviceMonitor"]["metricRelabelings"]
    # job="a2a-probe", which dashboards/alerts.yaml's A2AProbeDaemonDown expects
    assert service["metadata"]["labels"][monitor["spec"]["jobLabel"]] == "a2a-probe"

    probe = _one(docs, "Probe")["spec"]
    assert probe["prober"] == {"url": "a2a-probe.monitoring.svc:9470", "scheme": "http", "path": "/probe"}
    assert probe["module"] == "ping"
    static = probe["targets"]["staticConfig"]
    assert static["static"] == [a["name"] for a in values["config"]["agents"]]
    assert static["labels"] == {"environment": "ci"}
    # the target arrives as ?target=NAME; the daemon wants ?agent=NAME and exactly one of the two
    relabel = static["relabelingConfigs"]
    assert {"sourceLabels": ["__param_target"], "targetLabel": "__param_agent"} in relabel
    assert {"action": "labeldrop", "regex": "__param_target"} in relabel

    rule = _one(docs, "PrometheusRule")
    assert rule["spec"]["groups"] == _canonical_groups()
    promtool = shutil.which("promtool")
    if promtool and rule["spec"]["groups"]:
        rules_file = tmp_path / "rules.yaml"
        rules_file.write_text(yaml.safe_dump({"groups": rule["spec"]["groups"]}))
        checked = subprocess.run([promtool, "check", "rules", str(rules_file)], capture_output=True, text=True)
        assert checked.returncode == 0, checked.stdout + checked.stderr

    dashboards = [d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"] != "a2a-probe"]
    files = sorted((CHART / "files" / "dashboards").glob("*.json"))
    assert len(dashboards) == len(files)
    by_key = {key: (doc, text) for doc in dashboards for key, text in doc["data"].items()}
    for path in files:
        doc, text = by_key[path.name]
        assert doc["metadata"]["labels"]["grafana_dashboard"] == "1"
        assert doc["metadata"]["annotations"] == {"grafana_folder": "A2A"}
        assert json.loads(text) == json.loads(path.read_text())


def test_probe_object_reaches_the_daemon_through_a_real_prometheus(helm: dict[str, dict[str, Any]],
                                                                   tmp_path: Path) -> None:
    """The rendered Probe, turned into the scrape config prometheus-operator generates, makes a real Prometheus
    call /probe?module=ping&agent=NAME (not target=, which the daemon would refuse with 400 and up=0)."""
    docs = _docs(helm, "template:probe-e2e")
    config = tmp_path / "config.yaml"
    config.write_text(_one(docs, "ConfigMap")["data"]["config.yaml"])
    daemon_port, prom_port = free_port(), free_port()
    scrape = probe_scrape_config(_one(docs, "Probe"), f"127.0.0.1:{daemon_port}")
    (tmp_path / "prometheus.yml").write_text(yaml.safe_dump({"global": {"evaluation_interval": "1s"},
                                                             "scrape_configs": [scrape]}))
    env = {k: v for k, v in os.environ.items() if not k.startswith("A2A_PROBE_")}
    daemon = subprocess.Popen([sys.executable, "-m", "probe", "run", f"--config={config}",
                               f"--listen-address=127.0.0.1:{daemon_port}", "--log-format=json"],
                              cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    prometheus = None
    try:
        wait_http(f"http://127.0.0.1:{daemon_port}/readyz")
        prometheus = subprocess.Popen(
            [prometheus_binary(), f"--config.file={tmp_path / 'prometheus.yml'}",
             f"--storage.tsdb.path={tmp_path / 'data'}", f"--web.listen-address=127.0.0.1:{prom_port}",
             "--log.level=warn"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        base = f"http://127.0.0.1:{prom_port}"
        wait_http(f"{base}/-/ready")
        deadline = time.monotonic() + 30
        while not (rows := prometheus_query(base, 'probe_success{job="a2a-probe-blackbox"}')):
            assert time.monotonic() < deadline, prometheus_query(base, "up")
            time.sleep(0.25)
        [row] = rows
        assert row["metric"]["instance"] == row["metric"]["agent"] == "local-agent"
        assert row["metric"]["namespace"] == "monitoring"
        assert row["value"][1] == "0"  # the agent is down; the scrape itself worked:
        [up] = prometheus_query(base, 'up{job="a2a-probe-blackbox"}')
        assert up["value"][1] == "1"
        reason = prometheus_query(base, 'probe_failed_due_to_reason{job="a2a-probe-blackbox"} == 1')
        assert reason and reason[0]["metric"]["reason"].startswith("card_")
    finally:
        for proc in (prometheus, daemon):
            if proc is not None:
                proc.terminate()
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    proc.kill()


def test_probe_targets_without_config_agents(helm: dict[str, dict[str, Any]]) -> None:
    docs = _docs(helm, "template:monitoring-no-agents")
    assert {"ServiceMonitor", "Probe", "PrometheusRule"} <= set(_kinds(docs))
    assert _one(docs, "Probe")["spec"]["targets"]["staticConfig"]["static"] == ["x-agent"]


def test_rule_tuning(helm: dict[str, dict[str, Any]]) -> None:
    groups = _one(_docs(helm, "template:rules-tuned"), "PrometheusRule")["spec"]["groups"]
    assert groups[-1] == {"name": "extra", "rules": [{"alert": "Extra", "expr": "vector(1)"}]}
    expected = copy.deepcopy(_canonical_groups())
    for group in expected:
        group["rules"] = [r for r in group.get("rules", []) if r.get("alert") != "A2AProbeSlow"]
        for r in group["rules"]:
            if "alert" in r:
                r["labels"] = {"team": "sre", **r.get("labels", {})}
                if r["alert"] == "A2AProbeStale":
                    r["labels"]["severity"] = "info"
    assert groups[:-1] == expected


def test_existing_configmap(helm: dict[str, dict[str, Any]]) -> None:
    docs = _docs(helm, "template:existing-configmap")
    assert not [d for d in docs if d["kind"] == "ConfigMap"]
    pod = _one(docs, "Deployment")["spec"]["template"]
    assert pod["spec"]["volumes"][0] == {"name": "a2a-probe-config", "configMap": {"name": "my-config"}}
    assert "checksum/config" not in (pod["metadata"].get("annotations") or {})


# ---- config reload ----------------------------------------------------------------------------------------------

def _pod_annotations(helm: dict[str, dict[str, Any]], name: str) -> dict[str, str]:
    template = _one(_docs(helm, name), "Deployment")["spec"]["template"]
    annotations: dict[str, str] = template["metadata"].get("annotations") or {}
    return annotations


def test_checksum_annotation_follows_the_config(helm: dict[str, dict[str, Any]]) -> None:
    default = _pod_annotations(helm, "template:defaults")["checksum/config"]
    assert re.fullmatch(r"[0-9a-f]{64}", default)
    assert _pod_annotations(helm, "template:changed-config")["checksum/config"] != default
    assert _pod_annotations(helm, "template:changed-settings")["checksum/config"] == default
    assert [c["name"] for c in _pod_specs(helm, "template:defaults")[0]["containers"]] == ["a2a-probe"]


def test_config_reloader(helm: dict[str, dict[str, Any]]) -> None:
    """The reloader replaces the checksum/config roll; only config.metrics (restart-only) rolls the pod."""
    annotations = _pod_annotations(helm, "template:reloader-values.yaml")
    assert "checksum/config" not in annotations
    assert re.fullmatch(r"[0-9a-f]{64}", annotations["checksum/config-metrics"])
    spec = _pod_specs(helm, "template:reloader-values.yaml")[0]
    main, reloader = spec["containers"]
    assert reloader["name"] == "a2a-probe-config-reloader"
    assert reloader["image"] == "ghcr.io/jimmidyson/configmap-reload:v0.15.0"
    assert "--volume-dir=/etc/a2a-probe" in reloader["args"]
    assert "--webhook-url=http://127.0.0.1:9470/-/reload" in reloader["args"]
    assert "--webhook-method=POST" in reloader["args"]
    assert reloader["volumeMounts"] == [{"name": "a2a-probe-config", "mountPath": "/etc/a2a-probe",
                                         "readOnly": True}]
    assert reloader["securityContext"]["runAsUser"] == 65534
    # the config is mounted as a directory (a subPath mount would never see updates)
    assert all("subPath" not in m for m in main["volumeMounts"] + reloader["volumeMounts"])


# ---- values validation ------------------------------------------------------------------------------------------

def test_push_receiver_exposure(helm: dict[str, dict[str, Any]]) -> None:
    docs = _docs(helm, "template:push-exposed")
    for doc in docs:
        validate_manifest(doc)
    service = _one(docs, "Service")
    assert {"name": "push", "port": 9471, "targetPort": "a2a-probe", "protocol": "TCP"} in service["spec"]["ports"]
    ingress = _one(docs, "Ingress")
    [rule] = ingress["spec"]["rules"]
    assert rule["host"] == "probe-push.example.com" and ingress["spec"]["ingressClassName"] == "nginx"
    assert rule["http"]["paths"] == [{"path": "/-/push/", "pathType": "Prefix", "backend": {"service": {
        "name": service["metadata"]["name"], "port": {"name": "push"}}}}]  # nothing but the receiver is routed
    policy = _one(docs, "NetworkPolicy")
    froms = [r.get("from") for r in policy["spec"]["ingress"]]
    assert [{"namespaceSelector": {"matchLabels": {"team": "agents"}}}] in froms
    env = {e["name"]: e.get("value") for e in _one(docs, "Deployment")["spec"]["template"]["spec"]["containers"][0]
           ["env"]}
    assert env["A2A_PROBE_PUSH_PUBLIC_URL"] == "https://probe-push.example.com"  # derived from the Ingress host
    # an explicit URL wins, and the daemon accepts the rendered config and settings
    docs = _docs(helm, "template:push-url-set")
    env = {e["name"]: e.get("value") for e in _one(docs, "Deployment")["spec"]["template"]["spec"]["containers"][0]
           ["env"]}
    assert env["A2A_PROBE_PUSH_PUBLIC_URL"] == "https://probe.example.com/a2a-probe"
    assert not [d for d in docs if d["kind"] == "Ingress"]
    from probe.config import Settings, parse, require_push_url

    config = parse(_one(docs, "ConfigMap")["data"]["config.yaml"].encode(), "rendered")
    require_push_url(config, Settings(push_public_url=env["A2A_PROBE_PUSH_PUBLIC_URL"]))
    defaults = _docs(helm, "template:defaults")
    assert [p["name"] for p in _one(defaults, "Service")["spec"]["ports"]] == ["http"]


@pytest.mark.parametrize(("name", "message"), [
    ("template:unknown-top-level-key", "additional properties 'bogus' not allowed"),
    ("template:unknown-nested-key", "additional properties 'enabeld' not allowed"),
    ("template:inline-credential", "bearer_token"),
    ("template:unquoted-a2a-version", "a2a_version"),
    ("template:bad-mode", "mode"),
    ("template:sidecar-without-selector", "sidecar.podSelector"),
    ("template:networkpolicy-without-gateways", "gatewayCIDRs"),
    ("template:probe-without-agents", "probe.enabled needs agents"),
    ("template:statefulset-with-shard", "leave settings.shard empty"),
    ("template:statefulset-no-replicas", "needs replicas >= 1"),
    ("template:statefulset-nodeport", "service.type must be ClusterIP"),
    ("template:bad-shard", "shard"),
    ("template:push-without-url", "set settings.pushPublicUrl"),
    ("template:push-ingress-without-host", "push.ingress.enabled needs push.enabled"),
    ("template:push-statefulset", "push.enabled needs mode: deployment"),
])
def test_bad_values_fail_the_render(helm: dict[str, dict[str, Any]], name: str, message: str) -> None:
    result = helm[name]
    assert not result["ok"]
    assert message in result["error"]


def test_values_schema_is_draft07_and_closed() -> None:
    schema = json.loads((CHART / "values.schema.json").read_text())
    assert schema["$schema"] == "http://json-schema.org/draft-07/schema#"
    jsonschema.Draft7Validator.check_schema(schema)
    assert schema["additionalProperties"] is False
    assert set(DEFAULT_VALUES) <= set(schema["properties"])
    jsonschema.Draft7Validator(schema).validate(DEFAULT_VALUES)


def test_values_schema_mirrors_the_daemon_config() -> None:
    """config: in values.schema.json lists exactly the daemon's config fields (probe/config.py), so a new daemon
    option fails here rather than at `helm install`."""
    from probe import config as daemon_config

    schema = json.loads((CHART / "values.schema.json").read_text())
    defs = schema["definitions"]
    config = schema["properties"]["config"]["properties"]
    assert set(config) == set(daemon_config.ProbeConfig.model_fields)
    assert set(config["metrics"]["properties"]) == set(daemon_config.MetricsConfig.model_fields)
    assert set(defs["agent"]["properties"]) == set(daemon_config.Agent.model_fields)
    assert set(defs["module"]["properties"]) == set(daemon_config.Module.model_fields)
    assert defs["module"]["properties"]["prober"]["enum"] == [p.value for p in daemon_config.Prober]
    for field in ("a2a_version", "binding"):
        annotation = daemon_config.Agent.model_fields[field].annotation
        allowed = {a for arg in typing.get_args(annotation) for a in typing.get_args(arg)}
        assert set(defs["agent"]["properties"][field]["enum"]) == allowed, field
    bounded = [b.value for b in daemon_config.BindingName]
    for where in ("agent", "module"):
        assert defs[where]["properties"]["bindings"]["items"]["enum"] == bounded, where
    assert set(defs["agent"]["properties"]["auth"]["properties"]) == set(daemon_config.Auth.model_fields)
    assert set(defs["secretRef"]["properties"]) == set(daemon_config.SecretRef.model_fields)
    settings = schema["properties"]["settings"]["properties"]
    snake = {re.sub(r"([A-Z])", r"_\1", k).lower() for k in settings}
    assert snake == set(daemon_config.Settings.model_fields) - {"config_file", "listen_address"}


# ---- docs and files ---------------------------------------------------------------------------------------------

def test_readme_lists_every_value() -> None:
    readme = (CHART / "README.md").read_text()
    documented = set(re.findall(r"^\| `([^`]+)` \|", readme, re.M))
    leaves = set(leaf_paths(DEFAULT_VALUES))
    assert not leaves - documented, f"values missing from helm/a2a-probe/README.md: {sorted(leaves - documented)}"
    assert not documented - leaves, f"README documents values that do not exist: {sorted(documented - leaves)}"


def test_chart_files_match_the_canonical_dashboards() -> None:
    """files/ holds copies of dashboards/alerts.yaml and dashboards/*.json; `python helm/sync-files.py` fixes it."""
    checked = subprocess.run([sys.executable, str(HELM_DIR / "sync-files.py"), "--check"], capture_output=True,
                             text=True, cwd=REPO)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_chart_metadata() -> None:
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    pyproject = (REPO / "pyproject.toml").read_text()
    version = re.search(r'^version = "([^"]+)"', pyproject, re.M)
    assert version
    assert chart["apiVersion"] == "v2"
    assert chart["appVersion"] == version.group(1)
    assert {p.name for p in (CHART / "ci").glob("*.yaml")} == {
        "deployment-values.yaml", "sidecar-values.yaml", "monitoring-values.yaml", "reloader-values.yaml",
        "statefulset-values.yaml"}
