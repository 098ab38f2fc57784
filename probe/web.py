"""The daemon's HTTP surface (aiohttp): /metrics /probe /report /healthz /readyz /-/reload /config /."""

from __future__ import annotations

import html
import json
import re
import time
from typing import TYPE_CHECKING, Any

from aiohttp import web
from prometheus_client import generate_latest
from prometheus_client.aiohttp import make_aiohttp_handler

from probe import report
from probe.config import Agent, Module, Prober
from probe.metrics import probe_registry
from probe.reasons import describe
from probe.results import ProbeResult

if TYPE_CHECKING:
    from probe.daemon import Daemon

DAEMON: web.AppKey[Daemon] = web.AppKey("daemon")
_FORMATS = ("json", "markdown", "junit")
_BOOL = {"true": True, "1": True, "false": False, "0": False, "": False}


def make_app(daemon: Daemon) -> web.Application:
    app = web.Application(client_max_size=64 * 1024)  # the daemon accepts no large bodies from anyone
    app[DAEMON] = daemon
    app.router.add_get("/", status_page)
    app.router.add_get("/metrics", make_aiohttp_handler(daemon.metrics.registry))
    app.router.add_get("/probe", probe)
    app.router.add_get("/report", report_handler)
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
    app.router.add_post("/-/reload", reload)
    app.router.add_get("/config", config)
    return app


def _bad(status: int, message: str) -> web.Response:
    return web.json_response({"error": message}, status=status)


def _flag(request: web.Request, name: str) -> bool:
    raw = request.query.get(name, "false").lower()
    if raw not in _BOOL:
        raise web.HTTPBadRequest(text=json.dumps({"error": f"{name} must be true or false, got {raw[:20]!r}"}),
                                 content_type="application/json")
    return _BOOL[raw]


def _module(d: Daemon, name: str | None, default: str | None = None) -> tuple[str, Module]:
    modules = d.config.all_modules()
    key = name or default or "ping"
    if key not in modules:
        raise web.HTTPBadRequest(text=json.dumps({"error": f"unknown module {key[:60]!r}; known: {sorted(modules)}"}),
                                 content_type="application/json")
    return key, modules[key]


def _agent(d: Daemon, name: str) -> Agent:
    agent = d.config.agent(name)
    if agent is None:
        raise web.HTTPNotFound(text=json.dumps({"error": f"unknown agent {name[:80]!r}; see /config for the list"}),
                               content_type="application/json")
    return agent


def _scrape_timeout(request: web.Request, module: Module, offset: float) -> float:
    """min(module timeout, Prometheus scrape timeout - offset), as blackbox_exporter does."""
    raw = request.headers.get("X-Prometheus-Scrape-Timeout-Seconds")
    if raw is None:
        return module.timeout
    try:
        scrape = float(raw)
    except ValueError:
        raise web.HTTPBadRequest(text=json.dumps({"error": "X-Prometheus-Scrape-Timeout-Seconds is not a number"}),
                                 content_type="application/json") from None
    if not 0 < scrape < 86400:
        raise web.HTTPBadRequest(text=json.dumps({"error": "X-Prometheus-Scrape-Timeout-Seconds out of range"}),
                                 content_type="application/json")
    return max(0.1, min(module.timeout, scrape - offset))


async def probe(request: web.Request) -> web.Response:
    """Blackbox-style: probe now and return only this probe's metrics (self metrics stay on /metrics)."""
    d = request.app[DAEMON]
    q = request.query
    if ("agent" in q) == ("target" in q):
        return _bad(400, "give exactly one of agent=NAME or target=URL")
    if "agent" in q:
        agent = _agent(d, q["agent"])
        module_name, module = _module(d, q.get("module"), agent.modules[0] if agent.modules else None)
    else:
        module_name, module = _module(d, q.get("module"))
        url = q["target"]
        if not re.match(r"^https?://[^/\s]+", url) or not re.fullmatch(d.settings.probe_target_pattern, url):
            return _bad(400, "target must be an absolute http(s) URL allowed by A2A_PROBE_PROBE_TARGET_PATTERN")
        agent = Agent(name="target", url=url, modules=[])
    if module.prober not in (Prober.PING, Prober.INVOKE, Prober.STREAM):
        return _bad(400, f"module {module_name!r} cannot run on /probe")
    timeout = _scrape_timeout(request, module, d.settings.timeout_offset)
    debug = _flag(request, "debug")
    result = await d.runner.run(agent, module, timeout=timeout)
    body = generate_latest(probe_registry(result, timeout)).decode()
    if debug:
        cfg = json.dumps(agent.model_dump(mode="json"), indent=2)
        text = (f"Probe report:\n{report.to_text(result, verbose=True)}\n\nMetrics that would have been returned:\n"
                f"{body}\nModule {module_name}:\n{module.model_dump_json(indent=2)}\n\nAgent config (secrets are "
                f"references only):\n{cfg}\n")
        return web.Response(text=text, content_type="text/plain")
    return web.Response(body=body.encode(), content_type="text/plain", charset="utf-8",
                        headers={"Cache-Control": "no-store"})


async def report_handler(request: web.Request) -> web.Response:
    d = request.app[DAEMON]
    fmt = request.query.get("format", "json")
    if fmt not in _FORMATS:
        return _bad(400, f"format must be one of {list(_FORMATS)}")
    refresh = _flag(request, "refresh")
    name = request.query.get("agent")
    if name is None:
        return _fleet(d, fmt)
    agent = _agent(d, name)
    module_q = request.query.get("module")
    if module_q is not None and module_q not in agent.modules:
        return _bad(400, f"agent {agent.name!r} does not run module {module_q[:40]!r}; it runs {agent.modules}")
    result: ProbeResult | None
    if refresh:
        module_name, module = _module(d, module_q, _deepest(agent))
        result = await d.runner.run(agent, module, timeout=module.timeout)
        d.runner.record(module_name, result)
    else:
        found = d.history.latest(agent.name, module_q)
        result = found[1] if found else None
    if result is None:
        return _bad(404, f"no result yet for {agent.name!r}; retry shortly or add refresh=true")
    return web.Response(text=report.render(result, fmt), content_type=report.CONTENT_TYPES[fmt].split(";")[0],
                        charset="utf-8")


def _deepest(agent: Agent) -> str:
    """For a fresh report, run the agent's most thorough module."""
    order = {"stream": 0, "invoke": 1, "ping": 2}
    return sorted(agent.modules, key=lambda m: order.get(m, 3))[0] if agent.modules else "ping"


def fleet_rows(d: Daemon) -> list[dict[str, Any]]:
    rows = []
    for agent in d.config.agents:
        for module in agent.modules:
            recent = d.history.recent(agent.name, module)
            last = recent[-1] if recent else None
            last_ok = next((r for r in reversed(recent) if r.success), None)
            rows.append({
                "agent": agent.name, "module": module,
                "verdict": None if last is None else ("pass" if last.success else "fail"),
                "reason": last.reason.value if last and last.reason else None,
                "lastRun": last.started_at.isoformat() if last else None,
                "lastSuccess": last_ok.started_at.isoformat() if last_ok else None,
                "duration_ms": round(last.duration_s * 1000, 1) if last else None,
                "interfaceUrl": last.interface_url if last else None,
                "report": f"/report?agent={agent.name}&module={module}",
            })
    return rows


def _fleet(d: Daemon, fmt: str) -> web.Response:
    rows = fleet_rows(d)
    if fmt == "json":
        failing = sum(1 for r in rows if r["verdict"] == "fail")
        return web.json_response({"agents": len(d.config.agents), "probes": len(rows), "failing": failing,
                                  "results": rows})
    if fmt == "markdown":
        lines = ["# A2A probe fleet summary", "", "| agent | module | verdict | reason | last success | ms |",
                 "|---|---|---|---|---|---|"]
        lines += [f"| {r['agent']} | {r['module']} | {r['verdict'] or 'pending'} | {r['reason'] or ''} | "
                  f"{r['lastSuccess'] or 'never'} | {r['duration_ms'] or ''} |" for r in rows]
        return web.Response(text="\n".join(lines) + "\n", content_type="text/markdown", charset="utf-8")
    return _bad(400, "the fleet summary is json or markdown; junit needs agent=NAME")


async def healthz(_request: web.Request) -> web.Response:
    return web.Response(text="ok\n")


async def readyz(request: web.Request) -> web.Response:
    """Ready when a config is loaded and the scheduler runs; never tied to agent results."""
    d = request.app[DAEMON]
    if d.scheduler.running and d.config is not None:
        return web.Response(text="ready\n")
    return web.Response(text="not ready\n", status=503)


async def reload(request: web.Request) -> web.Response:
    ok, message = await request.app[DAEMON].reload()
    return web.Response(text=message + "\n", status=200 if ok else 500)


async def config(request: web.Request) -> web.Response:
    """The active config: credentials are references (env names, file paths), never values."""
    d = request.app[DAEMON]
    body = {"config": d.config.model_dump(mode="json"), "sha256": d.config_sha,
            "settings": d.settings.model_dump(mode="json")}
    return web.json_response(body, dumps=lambda o: json.dumps(o, indent=2))


_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>a2a-probe</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{{font-family:system-ui,sans-serif;margin:2rem;color:#1b1f23}} h1{{font-size:1.4rem}}
table{{border-collapse:collapse;width:100%}} th,td{{text-align:left;padding:.4rem .6rem;border-bottom:1px solid #ddd}}
.pass{{color:#116329;font-weight:600}} .fail{{color:#b3261e;font-weight:600}} .pending{{color:#6a737d}}
code{{font-size:.9em}} footer{{margin-top:1.5rem;color:#6a737d;font-size:.9em}}
</style></head><body>
<h1>a2a-probe — {agents} agent(s), {failing} failing</h1>
<table><thead><tr><th>Agent</th><th>Module</th><th>Verdict</th><th>Reason</th><th>Last success</th>
<th>Latency</th><th>Report</th></tr></thead><tbody>
{rows}
</tbody></table>
<footer>Generated {now}. <a href="/metrics">/metrics</a> · <a href="/report">/report</a> (fleet JSON) ·
<a href="/config">/config</a> · <a href="/healthz">/healthz</a></footer>
</body></html>
"""


async def status_page(request: web.Request) -> web.Response:
    d = request.app[DAEMON]
    rows = fleet_rows(d)
    out = []
    for r in rows:
        verdict = r["verdict"] or "pending"
        reason = r["reason"] or ""
        title = html.escape(describe_reason(reason))
        link = html.escape(r["report"])
        latency = "" if r["duration_ms"] is None else f"{r['duration_ms']:.0f} ms"
        out.append(
            f"<tr data-agent=\"{html.escape(r['agent'])}\"><td>{html.escape(r['agent'])}</td>"
            f"<td>{html.escape(r['module'])}</td><td class=\"{verdict}\">{verdict.upper()}</td>"
            f"<td title=\"{title}\"><code>{html.escape(reason)}</code></td>"
            f"<td>{html.escape(r['lastSuccess'] or 'never')}</td>"
            f"<td>{latency}</td>"
            f"<td><a href=\"{link}&amp;format=markdown\">markdown</a> · <a href=\"{link}\">json</a></td></tr>")
    page = _PAGE.format(agents=len(d.config.agents), failing=sum(r["verdict"] == "fail" for r in rows),
                        rows="\n".join(out) or "<tr><td colspan=7>no agents configured</td></tr>",
                        now=time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()))
    return web.Response(text=page, content_type="text/html", charset="utf-8")


def describe_reason(reason: str) -> str:
    from probe.reasons import Reason

    try:
        return describe(Reason(reason))
    except ValueError:
        return ""
