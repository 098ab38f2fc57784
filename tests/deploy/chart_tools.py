"""Helpers for the chart tests: the Helm 3.12 runner (helm/render.py), manifest parsing and validation.

Helm itself runs in a separate Python >= 3.12 (PyPI `helm-sdkpy` embeds the Helm library and needs it): the
interpreter comes from A2A_PROBE_HELM_PYTHON (default /tmp/helm312/bin/python), a venv that .ci/run creates with
`helm-sdkpy` and `PyYAML`. Tests never install anything: a missing tool is a failure that says how to get it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import yaml

try:
    import kubernetes_validate
except ImportError:  # .ci/run installs it; a test never installs anything
    raise ImportError("kubernetes-validate is missing: pip install kubernetes-validate (as .ci/run does)") from None

KubeValidationError = kubernetes_validate.ValidationError

REPO = Path(__file__).resolve().parents[2]
HELM_DIR = REPO / "helm"
CHART = HELM_DIR / "a2a-probe"
RENDER = HELM_DIR / "render.py"
DEFAULT_HELM_PYTHON = "/tmp/helm312/bin/python"
HELM_PIP_PACKAGES = ["helm-sdkpy", "PyYAML"]
# the oldest Kubernetes the chart declares (Chart.yaml kubeVersion) and the newest kubernetes-validate knows
KUBE_VERSIONS = ["1.25.0", kubernetes_validate.utils.latest_version()]


def helm_python() -> str:
    """The interpreter that runs helm/render.py (a Python >= 3.12 venv with helm-sdkpy, made by .ci/run)."""
    python = os.environ.get("A2A_PROBE_HELM_PYTHON", DEFAULT_HELM_PYTHON)
    probe = [python, "-c", "import helm_sdkpy, yaml"]
    if os.path.exists(python) and subprocess.run(probe, capture_output=True).returncode == 0:
        return python
    raise RuntimeError(f"{python} with helm-sdkpy is missing; create it as .ci/run does: python3.12 -m venv "
                       f"{Path(python).parent.parent} && {python} -m pip install {' '.join(HELM_PIP_PACKAGES)}")


def render_batch(jobs: list[dict[str, Any]], timeout: float = 900) -> list[dict[str, Any]]:
    """Run lint/template jobs through the real Helm engine; one result dict per job."""
    proc = subprocess.run([helm_python(), str(RENDER), "batch"], input=json.dumps(jobs), capture_output=True,
                          text=True, timeout=timeout, cwd=REPO)
    if proc.returncode != 0:
        raise RuntimeError(f"helm/render.py failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    results: list[dict[str, Any]] = json.loads(proc.stdout)
    return results


def parse_manifests(manifest: str) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(manifest) if doc]


def leaf_paths(values: dict[str, Any], prefix: str = "") -> Iterator[str]:
    """Dotted paths of every leaf: scalars, lists and empty maps (non-empty maps are descended into)."""
    for key, value in values.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, dict) and value:
            yield from leaf_paths(value, path)
        else:
            yield path


# ---- JSON schemas for the prometheus-operator CRDs (a subset of monitoring.coreos.com/v1, additionalProperties
# off wherever the chart writes, so a misspelt field fails) -------------------------------------------------------

_LABEL_NAME = {"type": "string", "pattern": "^[a-zA-Z_][a-zA-Z0-9_]*$"}
_DURATION = {"type": "string",
             "pattern": "^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$"}
_STRING_MAP = {"type": "object", "additionalProperties": {"type": "string"}}
_RELABEL = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "sourceLabels": {"type": "array", "items": _LABEL_NAME},
        "separator": {"type": "string"},
        "targetLabel": {"type": "string"},
        "regex": {"type": "string"},
        "modulus": {"type": "integer", "minimum": 1},
        "replacement": {"type": "string"},
        "action": {"enum": ["replace", "keep", "drop", "hashmod", "labelmap", "labeldrop", "labelkeep",
                            "lowercase", "uppercase", "keepequal", "dropequal",
                            "Replace", "Keep", "Drop", "HashMod", "LabelMap", "LabelDrop", "LabelKeep",
                            "Lowercase", "Uppercase", "KeepEqual", "DropEqual"]},
    },
}
_METADATA = {
    "type": "object",
    "required": ["name", "namespace"],
    "properties": {
        "name": {"type": "string", "pattern": "^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$", "maxLength": 253},
        "namespace": {"type": "string", "pattern": "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"},
        "labels": _STRING_MAP,
        "annotations": _STRING_MAP,
    },
}
_LABEL_SELECTOR = {
    "type": "object",
    "additionalProperties": False,
    "properties": {"matchLabels": _STRING_MAP, "matchExpressions": {"type": "array"}},
}


def _crd(kind: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["apiVersion", "kind", "metadata", "spec"],
        "additionalProperties": False,
        "properties": {
            "apiVersion": {"const": "monitoring.coreos.com/v1"},
            "kind": {"const": kind},
            "metadata": _METADATA,
            "spec": spec,
        },
    }


CRD_SCHEMAS: dict[str, dict[str, Any]] = {
    "ServiceMonitor": _crd("ServiceMonitor", {
        "type": "object",
        "required": ["selector", "endpoints"],
        "additionalProperties": False,
        "properties": {
            "jobLabel": {"type": "string"},
            "targetLabels": {"type": "array", "items": {"type": "string"}},
            "podTargetLabels": {"type": "array", "items": {"type": "string"}},
            "selector": _LABEL_SELECTOR,
            "namespaceSelector": {
                "type": "object", "additionalProperties": False,
                "properties": {"any": {"type": "boolean"},
                               "matchNames": {"type": "array", "items": {"type": "string"}}},
            },
            "sampleLimit": {"type": "integer"},
            "endpoints": {
                "type": "array", "minItems": 1,
                "items": {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {
                        "port": {"type": "string"},
                        "targetPort": {"type": ["string", "integer"]},
                        "path": {"type": "string", "pattern": "^/"},
                        "scheme": {"enum": ["http", "https", "HTTP", "HTTPS"]},
                        "params": {"type": "object"},
                        "interval": _DURATION,
                        "scrapeTimeout": _DURATION,
                        "honorLabels": {"type": "boolean"},
                        "honorTimestamps": {"type": "boolean"},
                        "relabelings": {"type": "array", "items": _RELABEL},
                        "metricRelabelings": {"type": "array", "items": _RELABEL},
                        "tlsConfig": {"type": "object"},
                        "authorization": {"type": "object"},
                        "bearerTokenSecret": {"type": "object"},
                        "followRedirects": {"type": "boolean"},
                        "enableHttp2": {"type": "boolean"},
                    },
                },
            },
        },
    }),
    "Probe": _crd("Probe", {
        "type": "object",
        "required": ["prober", "targets"],
        "additionalProperties": False,
        "properties": {
            "jobName": {"type": "string"},
            "module": {"type": "string"},
            "interval": _DURATION,
            "scrapeTimeout": _DURATION,
            "prober": {
                "type": "object", "required": ["url"], "additionalProperties": False,
                "properties": {
                    "url": {"type": "string", "pattern": "^[^/:]+(:[0-9]+)?$"},
                    "scheme": {"enum": ["http", "https"]},
                    "path": {"type": "string", "pattern": "^/"},
                    "proxyUrl": {"type": "string"},
                },
            },
            "targets": {
                "type": "object", "additionalProperties": False,
                "properties": {
                    "staticConfig": {
                        "type": "object", "required": ["static"], "additionalProperties": False,
                        "properties": {
                            "static": {"type": "array", "minItems": 1, "items": {"type": "string"}},
                            "labels": _STRING_MAP,
                            "relabelingConfigs": {"type": "array", "items": _RELABEL},
                        },
                    },
                    "ingress": {"type": "object"},
                },
            },
            "metricRelabelings": {"type": "array", "items": _RELABEL},
            "tlsConfig": {"type": "object"},
            "authorization": {"type": "object"},
            "sampleLimit": {"type": "integer"},
        },
    }),
    "PrometheusRule": _crd("PrometheusRule", {
        "type": "object",
        "required": ["groups"],
        "additionalProperties": False,
        "properties": {
            "groups": {
                "type": "array",
                "items": {
                    "type": "object", "required": ["name"], "additionalProperties": False,
                    "properties": {
                        "name": {"type": "string", "minLength": 1},
                        "interval": _DURATION,
                        "query_offset": _DURATION,
                        "limit": {"type": "integer"},
                        "labels": _STRING_MAP,
                        "partial_response_strategy": {"type": "string"},
                        "rules": {
                            "type": "array",
                            "items": {
                                "type": "object", "required": ["expr"], "additionalProperties": False,
                                "oneOf": [{"required": ["alert"]}, {"required": ["record"]}],
                                "properties": {
                                    "alert": {"type": "string", "minLength": 1},
                                    "record": {"type": "string", "minLength": 1},
                                    "expr": {"type": ["string", "integer"]},
                                    "for": _DURATION,
                                    "keep_firing_for": _DURATION,
                                    "labels": _STRING_MAP,
                                    "annotations": _STRING_MAP,
                                },
                            },
                        },
                    },
                },
            },
        },
    }),
}


def validate_manifest(doc: dict[str, Any]) -> None:
    """Validate one object: Kubernetes kinds against the bundled OpenAPI-derived schemas (strict: unknown fields
    fail) for every supported version in KUBE_VERSIONS; prometheus-operator kinds against CRD_SCHEMAS."""
    if doc.get("apiVersion", "").startswith("monitoring.coreos.com/"):
        jsonschema.Draft202012Validator(CRD_SCHEMAS[doc["kind"]]).validate(doc)
        return
    for version in KUBE_VERSIONS:
        kubernetes_validate.validate(doc, version, strict=True)


def run_daemon_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """`a2a-probe ARGS` from the project's own interpreter."""
    return subprocess.run([sys.executable, "-m", "probe", *args], capture_output=True, text=True, cwd=REPO,
                          timeout=120)


# ---- the Probe object, as prometheus-operator turns it into a scrape config -------------------------------------

def probe_scrape_config(probe: dict[str, Any], prober_address: str, interval: str = "1s") -> dict[str, Any]:
    """The Prometheus scrape config prometheus-operator generates for a Probe with static targets
    (pkg/prometheus/promcfg.go: target -> __param_target -> instance, prober URL -> __address__, then the Probe's
    relabelingConfigs, then the job label), with the prober pointed at `prober_address`."""
    spec = probe["spec"]
    static = spec["targets"]["staticConfig"]
    snake = {"sourceLabels": "source_labels", "targetLabel": "target_label"}
    relabel: list[dict[str, Any]] = [
        {"source_labels": ["__address__"], "target_label": "__param_target"},
        {"source_labels": ["__param_target"], "target_label": "instance"},
        {"target_label": "__address__", "replacement": prober_address},
    ]
    relabel += [{snake.get(k, k): (v.lower() if k == "action" else v) for k, v in r.items()}
                for r in static.get("relabelingConfigs", [])]
    relabel.append({"target_label": "job", "replacement": spec["jobName"]})
    return {
        "job_name": f"probe/{probe['metadata']['namespace']}/{probe['metadata']['name']}",
        "metrics_path": spec["prober"].get("path", "/probe"),
        "scheme": spec["prober"].get("scheme", "http"),
        "params": {"module": [spec["module"]]},
        "scrape_interval": interval,
        "scrape_timeout": interval,
        "static_configs": [{"targets": static["static"],
                            "labels": {"namespace": probe["metadata"]["namespace"], **static.get("labels", {})}}],
        "relabel_configs": relabel,
    }


def wait_http(url: str, timeout: float = 30.0) -> None:
    import time
    import urllib.request

    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2) as reply:
                if reply.status == 200:
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise AssertionError(f"{url} did not answer 200 within {timeout} s")
        time.sleep(0.1)


def prometheus_query(base_url: str, expr: str) -> list[dict[str, Any]]:
    import urllib.parse
    import urllib.request

    with urllib.request.urlopen(f"{base_url}/api/v1/query?{urllib.parse.urlencode({'query': expr})}",
                                timeout=10) as reply:
        body = json.loads(reply.read())
    assert body["status"] == "success", body
    result: list[dict[str, Any]] = body["data"]["result"]
    return result
