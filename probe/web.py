"""The daemon's HTTP surface (aiohttp): /metrics /probe /report /healthz /readyz /-/reload /config /."""

from __future__ import annotations

import json
import logging
import re
import time
from typing import Any, Protocol
from urllib.parse import urlencode

import structlog
from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError
from prometheus_client import generate_latest

from probe import inbox, redact, report, statuspage
from probe.config import Agent, Module, ProbeConfig, Prober, Settings
from probe.history import History
from probe.metrics import Metrics, probe_registry
from probe.results import ProbeResult
from probe.runner import Runner
from probe.scheduler import ProbeScheduler
from probe.shard import Shard
from probe.target import InvalidUrl, check_url
from probe.webguard import OPEN_PATHS, ProbeThrottle, WebAuth
from probe.wire.http import HttpClient


class Backend(Protocol):
    """What the web server reads from the daemon: a narrow view, so web never imports the daemon."""

    settings: Settings
    config: ProbeConfig
    config_sha: str
    history: History
    runner: Runner
    scheduler: ProbeScheduler
    metrics: Metrics
    shard: Shard
    inbox: inbox.PushInbox
    web_auth: WebAuth
    target_client: HttpClient

    async def reload(self) -> tuple[bool, str]: ...


DAEMON: web.AppKey[Backend] = web.AppKey("daemon")
THROTTLE: web.AppKey[ProbeThrottle[tuple[ProbeResult, float]]] = web.AppKey("probe_throttle")
_FORMATS = ("json", "markdown", "junit", "html")
REFRESH_MIN_SECONDS = 10.0
_BOOL = {"true": True, "1": True, "false": False, "0": False, "": False}


@web.middleware
async def _authenticated(request: web.Request, handler: Any) -> web.StreamResponse:
    """Optional bearer/basic auth (settings web_auth_*) on every endpoint but the kubelet's /healthz and /readyz."""
    auth = request.app[DAEMON].web_auth
    # the push receiver is open too: agents cannot hold the web credentials, and each webhook's token is its auth
    open_path = request.path in OPEN_PATHS or request.path.startswith(inbox.ROUTE_PREFIX)
    if auth.enabled and not open_path and not auth.allows(request.headers.get("Authorization", "")):
        return web.json_response({"error": "authentication required"}, status=401,
                                 headers={"WWW-Authenticate": auth.challenge()})
    result: web.StreamResponse = await handler(request)
    return result


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


class _BadRequestLine(logging.Filter):
    """aiohttp logs a malformed request (garbage, TLS on the plain port, a bad header) as an ERROR traceback;
    it is the caller's mistake, not the daemon's: one warning line, with what was seen."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, HttpProcessingError):
            lines = [ln.strip() for ln in str(exc.message).splitlines() if ln.strip() and set(ln.strip()) != {"^"}]
            structlog.get_logger("a2a_probe.web").warning(
                "http_bad_request", peer=str(record.args[0]) if isinstance(record.args, tuple) and record.args
                else None, status=exc.code, error=" ".join(lines)[:200])
            return False
        return record.levelno >= logging.WARNING


def quiet_bad_requests() -> None:
    server = logging.getLogger("aiohttp.server")
    if not any(isinstance(f, _BadRequestLine) for f in server.filters):
        server.addFilter(_BadRequestLine())
        server.setLevel(logging.DEBUG)  # aiohttp logs some bad requests at DEBUG: see them all, once each


def make_app(daemon: Backend) -> web.Application:
    # the daemon accepts no large bodies from anyone
    app = web.Application(client_max_size=64 * 1024, middlewares=[_authenticated, _redacted])
    app[THROTTLE] = ProbeThrottle(daemon.settings.probe_min_interval)
    quiet_bad_requests()
    app[DAEMON] = daemon
    app.router.add_get("/", status_page)
    app.router.add_get("/metrics", metrics)
    app.router.add_get("/probe", probe)
    app.router.add_get("/report", report_handler)
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
    app.router.add_post("/-/reload", reload)
    app.router.add_get("/config", config)
    # the push receiver: reachable by agents without any web auth of the daemon (the route token is the auth)
    inbox.add_route(app, daemon.inbox)
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


def _module(d: Backend, name: str | None, default: str | None = None) -> tuple[str, Module]:
    modules = d.config.all_modules()
    key = name or default or "ping"
    if key not in modules:
        raise _error(400, f"unknown module {key[:60]!r}; known: {sorted(modules)}")
    return key, modules[key]


def _agent(d: Backend, name: str) -> Agent:
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
        if not d.settings.probe_target_enabled:
            return _bad(403, "/probe?target=URL is disabled: probe a configured agent with agent=NAME, or enable "
                             "caller-chosen URLs with A2A_PROBE_PROBE_TARGET_ENABLED=true (see docs/security.md)")
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
    client = d.target_client if "target" in q else None
    key = f"{'target' if client else 'agent'}\0{agent.url if client else agent.name}\0{module_name}"
    # rate limit per agent and module: a run within probe_min_interval is shared, so no caller can flood an agent
    async def timed() -> tuple[ProbeResult, float]:  # blackbox's probe_duration_seconds: the whole probe
        started = time.monotonic()
        r = await d.runner.run(agent, module, timeout=timeout, client=client)
        return r, time.monotonic() - started

    (result, wall), shared = await request.app[THROTTLE].run(key, timed)
    body = generate_latest(probe_registry(result, timeout, wall)).decode()
    if debug:
        cfg = json.dumps(agent.model_dump(mode="json"), indent=2)
        text = (f"Probe report:\n{report.to_text(result, verbose=True)}\n\nMetrics that would have been returned:\n"
                f"{body}\nModule {module_name}:\n{module.model_dump_json(indent=2)}\n\nAgent config (secrets are "
                f"references only):\n{cfg}\n")
        return web.Response(text=text, content_type="text/plain")
    return web.Response(body=body.encode(), content_type="text/plain", charset="utf-8",
                        headers={"Cache-Control": "no-store", "X-A2A-Probe-Shared": "true" if shared else "false"})


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
    module_name = module_q or _most_complete(d, agent)
    if refresh:
        module_name, module = _module(d, module_name)
        recent = d.history.recent(agent.name, module_name)
        # a refresh within REFRESH_MIN_SECONDS of the last run serves that run: HTTP callers can't hammer agents
        if recent and time.time() - recent[-1].started_at.timestamp() < REFRESH_MIN_SECONDS:
            found = d.history.latest(agent.name, module_name)
            result = found[1] if found else None
        else:
            result = await d.runner.run(agent, module, timeout=module.timeout)
            d.runner.record(module_name, result)
            refreshed = True
    else:
        found = d.history.latest(agent.name, module_name)
        result = found[1] if found else None
    if result is None:
        return _bad(404, f"no result yet for {agent.name!r} module {module_name!r}; retry shortly or add refresh=true")
    return web.Response(text=report.render(result, fmt, module_name),
                        content_type=report.CONTENT_TYPES[fmt].split(";")[0], charset="utf-8",
                        headers={"X-A2A-Probe-Refreshed": "true" if refreshed else "false",
                                 "X-A2A-Probe-Module": module_name})


_DEPTH = {Prober.FULL: 0, Prober.STREAM: 1, Prober.PUSH: 2, Prober.INVOKE: 2, Prober.PING: 3}


def _most_complete(d: Backend, agent: Agent) -> str:
    """The default module of /report: the most thorough one that has a result (full, stream, invoke, then ping);
    when none has run yet, the most thorough one configured (what refresh=true runs)."""
    modules = d.config.all_modules()
    ranked = sorted(agent.modules, key=lambda m: _DEPTH[modules[m].prober] if m in modules else len(_DEPTH))
    with_result = [m for m in ranked if d.history.recent(agent.name, m)]
    return (with_result or ranked or ["ping"])[0]


def fleet_rows(d: Backend) -> list[dict[str, Any]]:
    rows = []
    for agent in d.config.agents:
        if not d.shard.owns(agent.name):  # another replica probes it
            continue
        for module in agent.modules:
            recent = d.history.recent(agent.name, module)
            last = recent[-1] if recent else None
            last_ok = d.history.last_success(agent.name, module)
            rows.append({
                "agent": agent.name, "module": module,
                "verdict": None if last is None else ("pass" if last.success else "fail"),
                "reason": last.reason.value if last and last.reason else None,
                "lastRun": last.started_at.isoformat() if last else None,
                "lastSuccess": last_ok.isoformat() if last_ok else None,
                "duration_ms": round(last.duration_s * 1000, 1) if last else None,
                "interfaceUrl": d.history.interface_url(agent.name, module) if last else None,
                "report": "/report?" + urlencode({"agent": agent.name, "module": module}),
                "tlsInsecure": agent.tls.insecure_skip_verify,  # never silent: shown on the status page
            })
    return rows


def _agents(d: Backend) -> int:
    return sum(1 for a in d.config.agents if d.shard.owns(a.name))


def _fleet(d: Backend, fmt: str) -> web.Response:
    rows = fleet_rows(d)
    if fmt == "json":
        failing_agents = len({r["agent"] for r in rows if r["verdict"] == "fail"})
        failing_probes = sum(1 for r in rows if r["verdict"] == "fail")
        return web.json_response({"agents": _agents(d), "failingAgents": failing_agents, "probes": len(rows),
                                  "failingProbes": failing_probes, "results": rows})
    if fmt == "markdown":
        lines = ["# A2A probe fleet summary", "", "| agent | module | verdict | reason | last success | ms |",
                 "|---|---|---|---|---|---|"]
        lines += [f"| {r['agent']} | {r['module']} | {r['verdict'] or 'pending'} | {r['reason'] or ''} | "
                  f"{r['lastSuccess'] or 'never'} | {r['duration_ms'] or ''} |" for r in rows]
        return web.Response(text="\n".join(lines) + "\n", content_type="text/markdown", charset="utf-8")
    return _bad(400, f"the fleet summary is json or markdown; {fmt} needs agent=NAME")


async def metrics(request: web.Request) -> web.Response:
    """The registry, rendered off the event loop (probes keep their timing during a scrape)."""
    names = tuple(request.query.getall("name[]", []))
    body, content_type, gz = await request.app[DAEMON].metrics.render(
        ",".join(request.headers.getall("Accept", [])), request.headers.get("Accept-Encoding", ""), names)
    headers = {"Content-Type": content_type, **({"Content-Encoding": "gzip"} if gz else {})}
    return web.Response(body=body, headers=headers)


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


async def status_page(request: web.Request) -> web.Response:
    d = request.app[DAEMON]
    page = statuspage.render(fleet_rows(d), d.history, _agents(d))
    return web.Response(text=page, content_type="text/html", charset="utf-8", headers={"Cache-Control": "no-store"})
