"""A real Prometheus server on loopback for integration tests (Debian package `prometheus`)."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

from tests.peers.harness import free_port


def prometheus_binary() -> str:
    """Debian's prometheus binary (.ci/run installs the package; a test never does)."""
    found = shutil.which("prometheus")
    if not found:
        raise RuntimeError("Prometheus is required for these tests: apt-get install prometheus (as .ci/run does)")
    return found


class Prometheus:
    def __init__(self, base_url: str, proc: subprocess.Popen[bytes]) -> None:
        self.base_url = base_url
        self.proc = proc

    def api(self, path: str, **params: str) -> Any:
        url = f"{self.base_url}/api/v1/{path}?{urllib.parse.urlencode(params)}"
        with urllib.request.urlopen(url, timeout=10) as r:
            body = json.loads(r.read())
        if body.get("status") != "success":
            raise AssertionError(f"{path} {params}: {body}")
        return body["data"]

    def query(self, expr: str) -> list[dict[str, Any]]:
        data = self.api("query", query=expr)
        return list(data["result"])

    def wait_for(self, expr: str, predicate: Any, timeout: float = 30.0) -> list[dict[str, Any]]:
        end = time.monotonic() + timeout
        result: list[dict[str, Any]] = []
        while time.monotonic() < end:
            result = self.query(expr)
            if predicate(result):
                return result
            time.sleep(0.25)
        raise AssertionError(f"{expr} never matched; last result: {result}")


@contextmanager
def run_prometheus(tmp: Path, scrape_targets: list[str], *, rule_files: list[Path] | None = None,
                   job: str = "a2a-probe") -> Iterator[Prometheus]:
    port = free_port()
    config = {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s", "scrape_timeout": "1s"},
        "scrape_configs": [{"job_name": job, "static_configs": [{"targets": scrape_targets}]}],
    }
    if rule_files:
        config["rule_files"] = [str(p) for p in rule_files]
    cfg = tmp / "prometheus.yml"
    cfg.write_text(yaml.safe_dump(config))
    log = (tmp / "prometheus.log").open("wb")
    proc = subprocess.Popen([prometheus_binary(), f"--config.file={cfg}", f"--storage.tsdb.path={tmp / 'data'}",
                             f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
                            stdout=log, stderr=subprocess.STDOUT)
    prom = Prometheus(f"http://127.0.0.1:{port}", proc)
    try:
        end = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"{prom.base_url}/-/ready", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > end:
                raise RuntimeError(f"prometheus did not start: {(tmp / 'prometheus.log').read_text()[-2000:]}")
            time.sleep(0.1)
        yield prom
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
