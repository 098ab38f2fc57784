#!/usr/bin/env python3
"""Lint and render the a2a-probe chart with the real Helm engine (PyPI `helm-sdkpy`, which embeds Helm v4).

Run it with a Python >= 3.12 that has `helm-sdkpy` and `PyYAML` (tests/deploy/test_chart.py builds that venv):

    python helm/render.py lint helm/a2a-probe -f helm/a2a-probe/ci/deployment-values.yaml
    python helm/render.py template helm/a2a-probe -f helm/a2a-probe/ci/monitoring-values.yaml [--json]
    python helm/render.py batch < jobs.json      # [{"action": "lint"|"template", "chart": ..., "values": {...}}]

`helm-sdkpy` exposes Helm's lint and install actions but no `helm template`. So `template` runs a real
`helm install` against a throwaway Kubernetes API stub on 127.0.0.1 (discovery for the kinds the chart renders,
creates echoed back, release storage in memory): Helm merges the values, validates them against
values.schema.json, renders the templates and NOTES.txt, builds every object through the API's REST mapping, and
returns the release, whose manifest is what `helm template` prints. `lint` runs Helm's linter; it takes no values,
so the chart is linted from a temporary copy whose values.yaml holds the chart defaults coalesced with the given
values (Helm's rules: maps merge, anything else is replaced, null deletes). Lint messages at warning or above fail
(like `helm lint --strict`); the bindings drop their text, so the failing render's own error is printed too.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

RELEASE = "a2a-probe"
NAMESPACE = "monitoring"
KUBE_VERSION = ("1", "31", "v1.31.0")
SEVERITY = {0: "UNKNOWN", 1: "INFO", 2: "WARNING", 3: "ERROR"}

# Resources the API stub advertises: every kind the chart can render, plus the usual extras users add.
RESOURCES: dict[str, list[tuple[str, str, bool]]] = {
    "v1": [
        ("configmaps", "ConfigMap", True), ("secrets", "Secret", True), ("services", "Service", True),
        ("serviceaccounts", "ServiceAccount", True), ("pods", "Pod", True), ("namespaces", "Namespace", False),
    ],
    "apps/v1": [("deployments", "Deployment", True), ("statefulsets", "StatefulSet", True)],
    "networking.k8s.io/v1": [("networkpolicies", "NetworkPolicy", True), ("ingresses", "Ingress", True)],
    "policy/v1": [("poddisruptionbudgets", "PodDisruptionBudget", True)],
    "rbac.authorization.k8s.io/v1": [("roles", "Role", True), ("rolebindings", "RoleBinding", True)],
    "monitoring.coreos.com/v1": [
        ("servicemonitors", "ServiceMonitor", True), ("podmonitors", "PodMonitor", True),
        ("probes", "Probe", True), ("prometheusrules", "PrometheusRule", True),
    ],
}


def _ensure_env() -> None:
    """Helm reads its settings when the Go library loads, so they must be in the environment at exec time."""
    wanted = {"HELM_DRIVER": "memory"}
    if all(os.environ.get(k) == v for k, v in wanted.items()) and os.environ.get("HELM_CACHE_HOME"):
        return
    env = dict(os.environ, **wanted)
    home = os.path.join(tempfile.gettempdir(), "a2a-probe-helm-home")
    for var, sub in (("HELM_CACHE_HOME", "cache"), ("HELM_CONFIG_HOME", "config"), ("HELM_DATA_HOME", "data")):
        env.setdefault(var, os.path.join(home, sub))
    os.execve(sys.executable, [sys.executable, *sys.argv], env)


class _Api(BaseHTTPRequestHandler):
    """Just enough of the Kubernetes API for `helm install`: discovery, 404 on reads, creates echoed back."""

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        if os.environ.get("A2A_PROBE_RENDER_DEBUG"):
            sys.stderr.write("api-stub: " + (format % args) + "\n")

    def _send(self, code: int, body: bytes, ctype: str = "application/json") -> None:
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _json(self, code: int, obj: Any) -> None:
        self._send(code, json.dumps(obj).encode())

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0].rstrip("/")
        major, minor, git = KUBE_VERSION
        if path == "/version":
            return self._json(200, {"major": major, "minor": minor, "gitVersion": git, "platform": "linux/amd64"})
        if path == "/api":
            return self._json(200, {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": []})
        if path == "/apis":
            groups = []
            for gv in RESOURCES:
                if "/" in gv:
                    group, version = gv.split("/")
                    ver = {"groupVersion": gv, "version": version}
                    groups.append({"name": group, "versions": [ver], "preferredVersion": ver})
            return self._json(200, {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
        gv = "v1" if path == "/api/v1" else path.removeprefix("/apis/")
        if gv in RESOURCES and (path == "/api/v1" or path.startswith("/apis/")):
            resources = [
                {"name": name, "singularName": kind.lower(), "namespaced": namespaced, "kind": kind,
                 "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"]}
                for name, kind, namespaced in RESOURCES[gv]
            ]
            return self._json(200, {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv,
                                    "resources": resources})
        self._json(404, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound",
                         "code": 404, "message": f"{path} not found"})

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            obj = json.loads(raw)
        except ValueError:  # a typed client speaking protobuf: echo it
            return self._send(201, raw, self.headers.get("Content-Type") or "application/octet-stream")
        obj.setdefault("metadata", {}).update(uid="00000000-0000-0000-0000-000000000000", resourceVersion="1")
        self._json(201, obj)

    do_PUT = do_POST
    do_PATCH = do_POST


@contextmanager
def api_stub() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Api)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        yield f"http://{host}:{port}"
    finally:
        server.shutdown()
        server.server_close()


def _kubeconfig(server: str) -> str:
    return (
        "apiVersion: v1\nkind: Config\n"
        f"clusters:\n- name: stub\n  cluster:\n    server: {server}\n"
        f"contexts:\n- name: stub\n  context:\n    cluster: stub\n    user: stub\n    namespace: {NAMESPACE}\n"
        "current-context: stub\nusers:\n- name: stub\n  user: {}\n"
    )


def merge_values(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """Merge two user values files as `helm -f a -f b` does: maps merge, anything else is replaced."""
    out = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge_values(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def coalesce(defaults: dict[str, Any], user: dict[str, Any]) -> dict[str, Any]:
    """User values over chart defaults, as Helm coalesces them: maps merge, null deletes, others replace."""
    out = copy.deepcopy(defaults)
    for key, value in user.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = coalesce(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def template(chart: str, values: dict[str, Any]) -> dict[str, Any]:
    import helm_sdkpy

    with api_stub() as server:
        config = helm_sdkpy.Configuration(namespace=NAMESPACE, kubeconfig=_kubeconfig(server))
        try:
            release = asyncio.run(helm_sdkpy.Install(config).run(RELEASE, chart, values=values or None, wait=False))
        except helm_sdkpy.HelmError as exc:
            return {"ok": False, "error": str(exc)}
        finally:
            del config
    return {"ok": True, "manifest": release.get("manifest", ""), "notes": (release.get("info") or {}).get("notes", "")}


def lint(chart: str, values: dict[str, Any]) -> dict[str, Any]:
    import helm_sdkpy
    import yaml

    src = Path(chart)
    with tempfile.TemporaryDirectory(prefix="a2a-probe-lint-") as tmp:
        copy_dir = Path(tmp) / src.resolve().name
        shutil.copytree(src, copy_dir)
        if values:
            defaults = yaml.safe_load((src / "values.yaml").read_text()) or {}
            (copy_dir / "values.yaml").write_text(json.dumps(coalesce(defaults, values), indent=2))
        config = helm_sdkpy.Configuration(namespace=NAMESPACE)
        try:
            result = asyncio.run(helm_sdkpy.Lint(config).run(str(copy_dir)))
        except helm_sdkpy.HelmError as exc:
            return {"ok": False, "messages": [], "error": str(exc)}
        finally:
            del config
    messages = [{"severity": SEVERITY.get(m.get("Severity"), str(m.get("Severity"))), "path": m.get("Path", "")}
                for m in (result.get("Messages") or [])]
    failed = [m for m in messages if m["severity"] in ("WARNING", "ERROR", "UNKNOWN")]
    out: dict[str, Any] = {"ok": not failed and not result.get("Errors"), "messages": messages}
    if not out["ok"]:
        rendered = template(chart, values)
        out["error"] = rendered.get("error") or f"lint reported {failed} (Helm's bindings drop the message text)"
    return out


def run_job(job: dict[str, Any]) -> dict[str, Any]:
    action = job["action"]
    if action == "template":
        return template(job["chart"], job.get("values") or {})
    if action == "lint":
        return lint(job["chart"], job.get("values") or {})
    return {"ok": False, "error": f"unknown action {action!r}"}


def _load_values(files: list[str], set_json: list[str]) -> dict[str, Any]:
    import yaml

    values: dict[str, Any] = {}
    for name in files:
        values = merge_values(values, yaml.safe_load(Path(name).read_text()) or {})
    for text in set_json:
        values = merge_values(values, json.loads(text))
    return values


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("lint", "template"):
        p = sub.add_parser(name)
        p.add_argument("chart")
        p.add_argument("-f", "--values", action="append", default=[], help="values file (repeatable)")
        p.add_argument("--set-json", action="append", default=[], help="JSON object merged over the values")
        p.add_argument("--json", action="store_true", help="print the result as JSON")
    sub.add_parser("batch", help="read a JSON list of jobs on stdin, print a JSON list of results")
    args = parser.parse_args(argv)

    _ensure_env()
    if args.command == "batch":
        jobs = json.load(sys.stdin)
        json.dump([run_job(job) for job in jobs], sys.stdout)
        return 0

    result = run_job({"action": args.command, "chart": args.chart,
                      "values": _load_values(args.values, args.set_json)})
    if args.json:
        json.dump(result, sys.stdout, indent=2)
        print()
    elif args.command == "template" and result["ok"]:
        sys.stdout.write(result["manifest"])
    elif args.command == "lint":
        for m in result["messages"]:
            print(f"[{m['severity']}] {m['path']}")
        print("1 chart(s) linted, " + ("0 chart(s) failed" if result["ok"] else "1 chart(s) failed"))
    if not result["ok"]:
        print(f"Error: {result.get('error', 'failed')}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
