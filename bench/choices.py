#!/usr/bin/env python
"""Measured choices (issue 14, item 4): orjson and a lighter metrics exposition, side by side with what the daemon
uses today, in one process. uvloop is measured on the whole daemon by `bench/fleet.py --event-loop asyncio,uvloop`.

    python bench/choices.py [--agents 1000] [--json FILE]

* JSON parsing: the probe's strict parser (`probe.wire.strictjson`: duplicate keys and NaN are errors) against
  plain `json.loads` and `orjson.loads`, on the card and the SSE events the fleet agents send.
* Log rendering: one `probe_finished` event as JSON with the standard library and with orjson.
* Exposition: `prometheus_client.generate_latest` on the daemon's registry with N agents observed, against a
  writer that caches each series' label text and formats only the values.

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
from prometheus_client.utils import floatToGoString  # noqa: E402

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


def cached_exposition(registry: Any, cache: dict[tuple[str, tuple[str, ...]], bytes]) -> bytes:
    """A lighter text exposition: each series' `name{labels} ` prefix is built once and kept; only values are
    formatted on a scrape. (prometheus_client re-escapes and re-joins every label set on every scrape.)"""
    out: list[bytes] = []
    for metric in registry.collect():
        out.append(f"# HELP {metric.name} {metric.documentation}\n# TYPE {metric.name} {metric.type}\n".encode())
        for s in metric.samples:
            key = (s.name, tuple(s.labels.values()))  # a metric's label names are fixed, so values identify it
            prefix = cache.get(key)
            if prefix is None:
                labels = ",".join(f'{k}="{v}"' for k, v in s.labels.items())
                prefix = cache[key] = (f"{s.name}{{{labels}}} " if labels else f"{s.name} ").encode()
            out.append(prefix + floatToGoString(s.value).encode() + b"\n")
    return b"".join(out)


def exposition_row(agents: int) -> dict[str, Any]:
    m = Metrics([0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120], [])
    for i in range(agents):
        name = f"agent-{i:05d}"
        m.add_job(name, "ping", 60, 10)
        m.observe("ping", _result(name))
    full = generate_latest(m.registry)
    cache: dict[tuple[str, tuple[str, ...]], bytes] = {}
    light = cached_exposition(m.registry, cache)
    series = sum(1 for line in full.splitlines() if line and not line.startswith(b"#"))
    light_series = sum(1 for line in light.splitlines() if line and not line.startswith(b"#"))
    today = timeit(lambda: generate_latest(m.registry), 1, repeat=5) / 1e3
    lighter = timeit(lambda: cached_exposition(m.registry, cache), 1, repeat=5) / 1e3
    return {"choice": f"/metrics render, {agents} agents on ping ({series:,} series, {len(full) / 2**20:.1f} MiB)",
            "today_ms": round(today, 1), "lighter_ms": round(lighter, 1), "same_series": series == light_series,
            "ratio": round(lighter / today, 2)}


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
    print(f"{e['choice']}: generate_latest {e['today_ms']} ms, cached-prefix writer {e['lighter_ms']} ms "
          f"(x {e['ratio']}, same series: {e['same_series']})")
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
