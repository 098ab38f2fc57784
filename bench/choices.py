#!/usr/bin/env python
"""Measured choices (issue 14, item 4): orjson and a lighter metrics exposition, side by side with what the daemon
uses today, in one process. uvloop is measured on the whole daemon by `bench/fleet.py --event-loop asyncio,uvloop`.

    python bench/choices.py [--agents 1000] [--json FILE]

* JSON parsing: the probe's strict parser (`probe.wire.strictjson`: duplicate keys and NaN are errors) against
  plain `json.loads` and `orjson.loads`, on the card and the SSE events the fleet agents send.
* Log rendering: one `probe_finished` event as JSON with the standard library and with orjson.
* Exposition: `prometheus_client.generate_latest` on the daemon's registry with N agents observed, against the
  adopted exposition (each series keeps its rendered lines; a scrape joins them), with and without gzip.

Each figure is the median of several repeats of a timed batch (`time.perf_counter`, one process, nothing else
running in it). The per-probe share puts the saving next to the daemon's CPU per probe measured by fleet.py.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from prometheus_client import generate_latest  # noqa: E402

from probe.metrics import Metrics  # noqa: E402
from probe.results import ProbeResult, Status, StepName, StepResult  # noqa: E402
from probe.wire import strictjson  # noqa: E402

CARD = json.dumps({
    "name": "agent-00001", "description": "a2a-probe loopback fleet agent",
    "supportedInterfaces": [{"url": "http://127.0.0.1:1234/a/agent-00001/rpc", "protocolBinding": "JSONRPC",
                             "protocolVersion": "1.0"}],
    "version": "1.0.0", "capabilities": {"streaming": True, "pushNotifications": False},
    "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
    "skills": [{"id": "echo", "name": "Echo", "description": "Echoes the text it receives.", "tags": ["bench"],
                "examples": ["hello"]}]}).encode()
EVENT = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"artifactUpdate": {
    "taskId": "46085915-1cfc-4e2e-826f-e2fb4fea03a7", "contextId": "1a3d8d7b-c210-4ea7-a1ea-cea13fc807ac",
    "artifact": {"artifactId": "4a6e4dc0-7784-4f1b-96f5-bd52507693c5", "name": "result",
                 "parts": [{"text": "echo: a2a-probe health check"}]}, "append": False, "lastChunk": True}}}).encode()


TEXT = "text/plain;version=0.0.4"


def timeit(fn: Callable[[], Any], number: int, repeat: int = 7) -> float:
    """Median microseconds per call."""
    runs = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        runs.append((time.perf_counter() - t0) / number * 1e6)
    return statistics.median(runs)


def json_rows() -> list[dict[str, Any]]:
    import orjson

    rows = []
    for name, doc in (("card", CARD), ("sse event", EVENT)):
        strict = timeit(lambda d=doc: strictjson.loads(d), 20000)
        plain = timeit(lambda d=doc: json.loads(d), 20000)
        fast = timeit(lambda d=doc: orjson.loads(d), 20000)
        rows.append({"choice": f"parse {name} ({len(doc)} B)", "today_us": round(strict, 2),
                     "json_plain_us": round(plain, 2), "orjson_us": round(fast, 2),
                     "saving_us_per_doc": round(strict - fast, 2)})
    return rows


def log_row() -> dict[str, Any]:
    import orjson

    from probe.logs import probe_fields

    fields = {"event": "probe_finished", "level": "info", "timestamp": "2026-12-01T10:00:00.000000Z",
              **probe_fields("ping", _result("agent-00001"), "3f6e0c1e-8f56-4c4b-9d55-5d3f3c1b2a10")}
    std = timeit(lambda: json.dumps(fields, default=str), 20000)
    fast = timeit(lambda: orjson.dumps(fields, default=str), 20000)
    return {"choice": "render one probe_finished log line", "today_us": round(std, 2), "orjson_us": round(fast, 2),
            "saving_us_per_doc": round(std - fast, 2)}


def _result(agent: str) -> ProbeResult:
    r = ProbeResult(agent=agent, target_url="http://127.0.0.1:1234/a/x", protocol_version="1.0", binding="JSONRPC")
    r.steps.append(StepResult(name=StepName.DISCOVER, status=Status.PASS, duration_s=0.002, http_status=200))
    r.steps.append(StepResult(name=StepName.PING, status=Status.PASS, duration_s=0.006, http_status=200))
    return r


def exposition_row(agents: int) -> dict[str, Any]:
    """The adopted exposition (each per-agent series keeps its rendered lines, probe/exposition.py) against
    prometheus_client's `generate_latest` over the same registry and state, plus the write side: what keeping
    the lines costs per recorded probe (`Metrics.observe`), and gzip (what Prometheus asks for)."""
    import gzip

    m = Metrics([0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120], [])
    results = []
    for i in range(agents):
        name = f"agent-{i:05d}"
        m.add_job(name, "ping", 60, 10)
        results.append(_result(name))
    t0 = time.perf_counter()
    for r in results:
        m.observe("ping", r)
    m.flush()  # the last batch written (counted: recording's cost)
    observe_us = (time.perf_counter() - t0) / agents * 1e6
    full = generate_latest(m.registry)
    fast, _, _ = m._render(TEXT, False, ())
    series = sum(1 for line in full.splitlines() if line and not line.startswith(b"#"))
    same = sorted(line for line in full.splitlines() if not line.startswith(b"process_")) == sorted(
        line for line in fast.splitlines() if not line.startswith(b"process_"))
    today = timeit(lambda: generate_latest(m.registry), 1, repeat=3) / 1e3
    kept = timeit(lambda: m._render(TEXT, False, ()), 1, repeat=5) / 1e3
    zipped = timeit(lambda: m._render(TEXT, True, ()), 1, repeat=3) / 1e3
    return {"choice": f"/metrics render, {agents} agents on ping ({series:,} series, {len(full) / 2**20:.1f} MiB)",
            "today_ms": round(today, 1), "lighter_ms": round(kept, 1), "gzip_ms": round(zipped, 1),
            "gzip_mib": round(len(gzip.compress(fast, 1)) / 2**20, 2), "same_lines": same,
            "ratio": round(kept / today, 3), "observe_us_per_probe": round(observe_us, 2)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--agents", type=int, default=1000, help="agents in the exposition measurement")
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args(argv)
    result = {"json": [*json_rows(), log_row()], "exposition": exposition_row(args.agents)}
    for row in result["json"]:
        extra = f", json.loads without the strict hooks {row['json_plain_us']} µs" if "json_plain_us" in row else ""
        print(f"{row['choice']}: today {row['today_us']} µs, orjson {row['orjson_us']} µs "
              f"(saves {row['saving_us_per_doc']} µs{extra})")
    e = result["exposition"]
    print(f"{e['choice']}: generate_latest {e['today_ms']} ms, kept lines {e['lighter_ms']} ms (x {e['ratio']}), "
          f"with gzip {e['gzip_ms']} ms ({e['gzip_mib']} MiB); same lines: {e['same_lines']}; "
          f"Metrics.observe {e['observe_us_per_probe']} µs per probe")
    card, event = (row["saving_us_per_doc"] for row in result["json"][:2])
    # documents per probe: the card, then the GetTask error (event-sized), the SendMessage task (card-sized) or four
    # SSE events
    saving = {"ping": round(card + event, 1), "invoke": round(2 * card, 1), "stream": round(card + 4 * event, 1)}
    result["orjson_parse_saving_us_per_probe"] = saving
    print(f"orjson parse saving per probe (µs): {saving}")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
