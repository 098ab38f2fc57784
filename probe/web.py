"""The daemon's HTTP surface (aiohttp): /metrics /probe /report /healthz /readyz /-/reload /config /."""

from __future__ import annotations

import html
import json
import re
import time
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from aiohttp import web
from prometheus_client import generate_latest
from prometheus_client.aiohttp import make_aiohttp_handler

from probe import redact, report
from probe.config import Agent, Module
from probe.metrics import probe_registry
from probe.reasons import Reason, describe
from probe.results import ProbeResult
from probe.target import InvalidUrl, check_url

if TYPE_CHECKING:
    from probe.daemon import Daemon

DAEMON: web.AppKey[Daemon] = web.AppKey("daemon")
_FORMATS = ("json", "markdown", "junit")
REFRESH_MIN_SECONDS = 10.0
_BOOL = {"true": True, "1": True, "false": False, "0": False, "": False}


@web.middleware
async def _redacted(request: web.Request, handler: Any) -> web.StreamResponse:
    """The last line of defence: no response body carries a registered secret (results are scrubbed already)."""
    resp: web.StreamResponse = await handler(request)
    if request.path != "/metrics" and isinstance(resp, web.Response) and isinstance(resp.body, bytes) \
            and redact.registered():
        charset = resp.charset or "utf-8"
        body = resp.body.decode(charset, "replace")
        clean = redact.text(body)
        if clean != body:
            resp.body = clean.encode(charset)
    return resp


def make_app(daemon: Daemon) -> web.Application:
    # the daemon accepts no large bodies from anyone
    app = web.Application(client_max_size=64 * 1024, middlewares=[_redacted])
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


def _error(status: int, message: str) -> web.HTTPException:
    """The same JSON error body as `_bad`, as an exception for helpers deep in a handler."""
    cls = {400: web.HTTPBadRequest, 404: web.HTTPNotFound}[status]
    return cls(text=json.dumps({"error": message}), content_type="application/json")


def _flag(request: web.Request, name: str) -> bool:
    raw = request.query.get(name, "false").lower()
    if raw not in _BOOL:
        raise _error(400, f"{name} must be true or false, got {raw[:20]!r}")
    return _BOOL[raw]


def _module(d: Daemon, name: str | None, default: str | None = None) -> tuple[str, Module]:
    modules = d.config.all_modules()
    key = name or default or "ping"
    if key not in modules:
        raise _error(400, f"unknown module {key[:60]!r}; known: {sorted(modules)}")
    return key, modules[key]


def _agent(d: Daemon, name: str) -> Agent:
    agent = d.config.agent(name)
    if agent is None:
        raise _error(404, f"unknown agent {name[:80]!r}; see /config for the list")
    return agent


def _scrape_timeout(request: web.Request, module: Module, offset: float) -> float:
    """min(module timeout, Prometheus scrape timeout - offset), as blackbox_exporter does."""
    raw = request.headers.get("X-Prometheus-Scrape-Timeout-Seconds")
    if raw is None:
        return module.timeout
    try:
        scrape = float(raw)
    except ValueError:
        raise _error(400, "X-Prometheus-Scrape-Timeout-Seconds is not a number") from None
    if not 0 < scrape < 86400:
        raise _error(400, "X-Prometheus-Scrape-Timeout-Seconds out of range")
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
        try:
            check_url(url)
        except InvalidUrl as exc:
            return _bad(400, f"target: {exc}")
        if not re.fullmatch(d.settings.probe_target_pattern, url):
            return _bad(400, "target is not allowed by A2A_PROBE_PROBE_TARGET_PATTERN")
        agent = Agent(name="target", url=url, modules=[])
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
    result: ProbeResult | None = None
    refreshed = False
    if refresh:
        module_name, module = _module(d, module_q, _deepest(agent))
        recent = d.history.recent(agent.name, module_name)
        # a refresh within REFRESH_MIN_SECONDS of the last run serves that run: HTTP callers can't hammer agents
        if recent and time.time() - recent[-1].started_at.timestamp() < REFRESH_MIN_SECONDS:
            result = recent[-1]
        else:
            result = await d.runner.run(agent, module, timeout=module.timeout)
            d.runner.record(module_name, result)
            refreshed = True
    else:
        found = d.history.latest(agent.name, module_q)
        result = found[1] if found else None
    if result is None:
        return _bad(404, f"no result yet for {agent.name!r}; retry shortly or add refresh=true")
    return web.Response(text=report.render(result, fmt), content_type=report.CONTENT_TYPES[fmt].split(";")[0],
                        charset="utf-8", headers={"X-A2A-Probe-Refreshed": "true" if refreshed else "false"})


def _deepest(agent: Agent) -> str:
    """For a fresh report, run the agent's most thorough module."""
    order = {"full": 0, "stream": 1, "invoke": 2, "ping": 3}
    return sorted(agent.modules, key=lambda m: order.get(m, 3))[0] if agent.modules else "ping"


def fleet_rows(d: Daemon) -> list[dict[str, Any]]:
    rows = []
    for agent in d.config.agents:
        if not d.shard.owns(agent.name):  # another replica probes it
            continue
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
                "report": "/report?" + urlencode({"agent": agent.name, "module": module}),
            })
    return rows


def _agents(d: Daemon) -> int:
    return sum(1 for a in d.config.agents if d.shard.owns(a.name))


def _fleet(d: Daemon, fmt: str) -> web.Response:
    rows = fleet_rows(d)
    if fmt == "json":
        failing = sum(1 for r in rows if r["verdict"] == "fail")
        return web.json_response({"agents": _agents(d), "probes": len(rows), "failing": failing,
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
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="refresh" content="15">
<style>
:root{{color-scheme:light}}
body{{font-family:system-ui,"Segoe UI",Roboto,"Liberation Sans","DejaVu Sans",sans-serif;margin:0;padding:1.5rem 2rem;
color:#1b1f23;background:#fff;line-height:1.4}}
h1{{font-size:1.5rem;margin:0 0 .75rem}}
.summary{{margin:0 0 1.25rem;padding:.7rem 1rem;border:1px solid #8c959f;border-left-width:6px;border-radius:4px;
background:#f6f8fa;font-size:1.05rem}}
.summary.bad{{border-color:#b3261e;background:#fff1f0}} .summary.good{{border-color:#116329;background:#effaf1}}
.summary .sep{{color:#57606a;padding:0 .4rem}}
table{{border-collapse:collapse;width:100%}}
caption{{text-align:left;font-weight:600;padding:0 0 .4rem}}
th,td{{text-align:left;vertical-align:top;padding:.55rem .7rem;border-bottom:1px solid #d0d7de}}
thead th{{background:#f6f8fa;border-bottom:2px solid #8c959f;white-space:nowrap}}
tbody th{{font-weight:600}}
tr.fail>*{{background:#fff5f4}} tr.fail>:first-child{{box-shadow:inset 5px 0 #b3261e}}
.badge{{display:inline-block;min-width:4.6em;text-align:center;padding:.15rem .5rem;border-radius:4px;font-weight:700;
letter-spacing:.04em}}
.badge.pass{{background:#116329;color:#fff}} .badge.fail{{background:#b3261e;color:#fff}}
.badge.pending{{background:#eaeef2;color:#32383f;border:1px solid #8c959f}}
code{{font-family:ui-monospace,"DejaVu Sans Mono",monospace;font-size:.9em;background:#eff1f3;padding:.05rem .3rem;
border-radius:3px}}
.reason p{{margin:.25rem 0 0;max-width:48rem}} .fix strong{{color:#8a1c14}}
.muted{{color:#57606a;font-size:.88em}} .url{{overflow-wrap:break-word;font-weight:400}} .links{{white-space:nowrap}}
.num{{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}} .when{{white-space:nowrap}}
a{{color:#0550ae}} a:focus-visible{{outline:2px solid #0550ae;outline-offset:2px}}
footer{{margin-top:1.5rem;color:#57606a;font-size:.9em}}
</style></head><body>
<main>
<h1>a2a-probe status</h1>
<p class="summary {summary_class}">{summary}</p>
<table>
<caption>Latest result per agent and module, failing first</caption>
<thead><tr><th scope="col">Agent</th><th scope="col">Module</th><th scope="col">Verdict</th>
<th scope="col">Reason</th><th scope="col">Last success</th><th scope="col" class="num">Latency</th>
<th scope="col">Report</th></tr></thead>
<tbody>
{rows}
</tbody></table>
</main>
<footer>Generated {now}; this page reloads every 15 s. <a href="/metrics">/metrics</a> ·
<a href="/report">/report</a> (fleet JSON) · <a href="/config">/config</a> · <a href="/healthz">/healthz</a></footer>
</body></html>
"""


async def status_page(request: web.Request) -> web.Response:
    from datetime import UTC, datetime

    from probe.reasons import Reason, recommend

    d = request.app[DAEMON]
    now = datetime.now(UTC)
    esc = html.escape

    def ago(t: datetime) -> str:
        secs = max(0, int((now - t).total_seconds()))
        if secs < 120:
            return f"{secs} s ago"
        if secs < 7200:
            return f"{secs // 60} min ago"
        if secs < 172800:
            return f"{secs // 3600} h ago"
        return f"{secs // 86400} d ago"

    def when(iso: str, absolute: bool = True) -> str:
        """'12 s ago' in a <time> element, plus (if absolute) the UTC time underneath."""
        t = datetime.fromisoformat(iso)
        t = (t if t.tzinfo else t.replace(tzinfo=UTC)).astimezone(UTC)
        rel = f'<time datetime="{esc(t.isoformat())}">{ago(t)}</time>'
        return f'{rel}<br><span class="muted">{t:%Y-%m-%d %H:%M:%S} UTC</span>' if absolute else rel

    order = {"fail": 0, "pending": 1, "pass": 2}
    rows = fleet_rows(d)
    rows.sort(key=lambda r: order[r["verdict"] or "pending"])  # stable: config order within each verdict
    out = []
    for r in rows:
        verdict = r["verdict"] or "pending"
        agent, module = esc(r["agent"]), esc(r["module"])
        reason = r["reason"] or ""
        if reason:
            cell = f"<code>{esc(reason)}</code>"
            if text := describe_reason(reason):
                cell += f"<p>{esc(text)}</p>"
            if verdict == "fail" and text:  # text is only non-empty for a known Reason
                cell += f'<p class="fix"><strong>Fix:</strong> {esc(recommend(Reason(reason)))}</p>'
        else:
            cell = '<span class="muted">waiting for the first result</span>' if verdict == "pending" else "—"
        checked = f'<br><span class="muted">checked {when(r["lastRun"], absolute=False)}</span>' if r["lastRun"] else ""
        last_ok = when(r["lastSuccess"]) if r["lastSuccess"] else "never"
        ms = r["duration_ms"]
        latency = "—" if ms is None else (f"{ms:.0f} ms" if ms >= 10 else f"{ms:.1f} ms")
        url = re.sub(r"(?<!/)/(?!/)", "/<wbr>", esc(r["interfaceUrl"] or ""))  # break at path slashes only
        iface = f'<br><span class="muted url">calls {url}</span>' if url else ""
        links = []
        for fmt, label in (("markdown", "markdown"), ("json", "json")):
            href = esc("/report?" + urlencode({"agent": r["agent"], "module": r["module"], "format": fmt}))
            links.append(f'<a href="{href}" aria-label="{label} report for {agent} {module}">{label}</a>')
        out.append(
            f'<tr class="{verdict}" data-agent="{agent}" data-module="{module}">'
            f'<th scope="row">{agent}{iface}</th><td>{module}</td>'
            f'<td class="when"><span class="badge {verdict}">{verdict.upper()}</span>{checked}</td>'
            f'<td class="reason">{cell}</td><td class="when">{last_ok}</td>'
            f'<td class="num">{latency}</td><td class="links">{" · ".join(links)}</td></tr>')
    failing = sum(r["verdict"] == "fail" for r in rows)
    pending = sum(r["verdict"] is None for r in rows)
    agents = _agents(d)
    passing = len(rows) - failing - pending
    bad_agents = sorted({r["agent"] for r in rows if r["verdict"] == "fail"})
    sep = '<span class="sep" aria-hidden="true">·</span>'
    summary = sep.join([f"<strong>{agents} agent(s), {len(bad_agents)} failing</strong>",
                        f"probes: {failing} failing, {passing} passing, {pending} pending"]
                       + ([f"failing: {esc(', '.join(bad_agents))}"] if bad_agents else []))
    summary_class = "bad" if failing else ("good" if rows and not pending else "")
    title = f"a2a-probe — {failing} failing" if failing else "a2a-probe — all passing" if rows and not pending \
        else "a2a-probe"
    page = _PAGE.format(title=esc(title), summary=summary, summary_class=summary_class,
                        rows="\n".join(out) or '<tr><td colspan="7">no agents configured</td></tr>',
                        now=time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()))
    return web.Response(text=page, content_type="text/html", charset="utf-8",
                        headers={"Cache-Control": "no-store"})


def describe_reason(reason: str) -> str:
    try:
        return describe(Reason(reason))
    except ValueError:
        return ""
