"""The status page at `/`: one block per agent, failing first, each with its diagnosis and its modules.

A failing agent's block says what is wrong once per distinct reason (not once per module), the concrete fix (the
failing check's own advice, e.g. "The advertised URL should be …"), and the evidence from the wire: the card URL and
what it answered, the advertised URL (its repeated segment marked) and what that answered. Markup lives in
probe/templates; every value that reaches it is escaped here.
"""

from __future__ import annotations

import html
import re
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol
from urllib.parse import urlencode

from probe import report, templates
from probe.reasons import Reason, describe
from probe.results import InterfaceResult, ProbeResult, StepName
from probe.wire.cardcache import CACHED_CARD

esc = html.escape
_ORDER = {"fail": 0, "pending": 1, "pass": 2}
SEP = '<span class="sep" aria-hidden="true">·</span>'


class _History(Protocol):
    def latest(self, agent: str, module: str | None = None) -> tuple[str, ProbeResult] | None: ...


@dataclass(frozen=True, slots=True)
class AgentView:
    name: str
    rows: list[dict[str, Any]]  # web.fleet_rows entries of this agent, config order
    latest: dict[str, ProbeResult]  # module -> its last result

    @property
    def verdict(self) -> str:
        verdicts = {r["verdict"] for r in self.rows}
        return "fail" if "fail" in verdicts else "pass" if "pass" in verdicts else "pending"


def report_href(agent: str, fmt: str, module: str | None = None) -> str:
    query = {"agent": agent, **({"module": module} if module else {}), "format": fmt}
    return "/report?" + urlencode(query)


def render(rows: list[dict[str, Any]], history: _History, agent_count: int, now: datetime | None = None) -> str:
    now = now or datetime.now(UTC)
    views: dict[str, AgentView] = {}
    for r in rows:
        view = views.setdefault(r["agent"], AgentView(r["agent"], [], {}))
        view.rows.append(r)
        found = history.latest(r["agent"], r["module"]) if r["verdict"] else None
        if found:
            view.latest[r["module"]] = found[1]
    ordered = sorted(views.values(), key=lambda v: _ORDER[v.verdict])  # stable: config order within a verdict
    blocks = "\n".join(_agent_block(v, now) for v in ordered) or '<p class="muted">no agents configured</p>'
    failing = sum(r["verdict"] == "fail" for r in rows)
    pending = sum(r["verdict"] is None for r in rows)
    passing = len(rows) - failing - pending
    bad_agents = [v.name for v in ordered if v.verdict == "fail"]
    summary = SEP.join([f"<strong>{agent_count} agent(s), {len(bad_agents)} failing</strong>",
                        f"probes: {failing} failing, {passing} passing, {pending} pending"]
                       + ([f"failing: {esc(', '.join(bad_agents))}"] if bad_agents else []))
    title = (f"a2a-probe — {len(bad_agents)} failing" if bad_agents
             else "a2a-probe — all passing" if rows and not pending else "a2a-probe")
    return templates.status(title=esc(title), summary=summary,
                            summary_class="bad" if failing else ("good" if rows and not pending else ""),
                            agents=blocks, now=time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()))


def _agent_block(v: AgentView, now: datetime) -> str:
    verdict = v.verdict
    name = esc(v.name)
    iface = next((r.interface_url for r in v.latest.values() if r.interface_url), None)
    calls = f'<span class="muted url">calls {_breakable(iface)}</span>' if iface else ""
    full = f'<a href="{esc(report_href(v.name, "html"))}">full report</a>'
    head = (f'<header><h2 id="agent-{name}">{name}</h2><span class="badge {verdict}">{verdict.upper()}</span>'
            f"{calls}{_tls(v, now)}{_card(v)}<span class=\"links\">{full}</span></header>")
    return (f'<section class="agent {verdict}" data-agent="{name}" aria-labelledby="agent-{name}">{head}'
            f"{_diagnoses(v)}{_interfaces_table(v)}{_modules_table(v, now)}</section>")


def _card(v: AgentView) -> str:
    """The newest run's card when it came from the daemon's card cache: how old, fresh for how long (its detail)."""
    newest = max(v.latest.values(), key=lambda r: r.started_at, default=None)
    step = newest.step(StepName.DISCOVER) if newest is not None else None
    if step is None or not step.detail.startswith(CACHED_CARD):
        return ""
    return f'<span class="muted" data-card="cached">{esc(step.detail.split("; its checks")[0])}</span>'


def _tls(v: AgentView, now: datetime) -> str:
    """insecure_skip_verify (from the config, so it shows before the first result) and the earliest expiry."""
    if any(r.get("tlsInsecure") for r in v.rows):
        return ('<span class="badge fail" data-tls="insecure" title="tls.insecure_skip_verify is on for this agent">'
                "TLS NOT VERIFIED</span>")
    expiries = [i.earliest_expiry for r in v.latest.values() for i in r.tls.values() if i.earliest_expiry]
    if not expiries:
        return ""
    days = (min(expiries) - now.timestamp()) / 86400
    cls = "bad" if days < 14 else "muted"
    text = "TLS certificate expired" if days < 0 else f"TLS certificate expires in {days:.0f} days"
    return f'<span class="{cls}" data-tls="expiry">{esc(text)}</span>'


def _diagnoses(v: AgentView) -> str:
    """One diagnosis per distinct reason among the failing modules, from the newest such result."""
    by_reason: dict[Reason, list[tuple[str, ProbeResult]]] = {}
    for module, r in v.latest.items():
        if not r.success and r.reason is not None:
            by_reason.setdefault(r.reason, []).append((module, r))
    out = []
    for reason, pairs in by_reason.items():
        result = max((r for _, r in pairs), key=lambda r: r.started_at)
        modules = ", ".join(m for m, _ in pairs)
        parts = [f'<p><code>{esc(reason.value)}</code> — {esc(describe(reason))} '
                 f'<span class="muted">(module{"s" if len(pairs) > 1 else ""} {esc(modules)})</span></p>']
        if result.problem:
            parts.append(f'<p class="problem"><strong>Problem:</strong> {esc(result.problem)}</p>')
        advice = report.advice(result)
        if advice:
            parts.append(f'<p class="fix"><strong>Fix:</strong> {esc(advice)}</p>')
        hops = report.evidence(result)
        if hops:
            parts.append('<ul class="evidence">' + "".join(report.hop_html(h) for h in hops) + "</ul>")
        out.append('<div class="diagnosis">' + "".join(parts) + "</div>")
    return "".join(out)


def _interfaces_table(v: AgentView) -> str:
    """Each interface of an agent probed on several (the daemon probes every one the card advertises): binding,
    version, URL, verdict and reason over the agent's modules, the failing interfaces first."""
    seen: dict[str, tuple[InterfaceResult, list[tuple[str, InterfaceResult]]]] = {}
    for module, r in v.latest.items():
        if len(r.interfaces) < 2:
            continue
        for i in r.interfaces:
            entry, failing = seen.setdefault(i.key, (i, []))
            if not i.success:
                failing.append((module, i))
    if not seen:
        return ""
    rows = []
    for key, (entry, failing) in sorted(seen.items(), key=lambda kv: not kv[1][1]):  # stable: card order
        verdict = "fail" if failing else "pass"
        if failing:
            reasons: dict[str, list[str]] = {}
            for module, i in failing:
                reasons.setdefault(i.reason.value if i.reason else "unknown", []).append(module)
            why = "; ".join(f'<code>{esc(reason)}</code> <span class="muted">({esc(", ".join(modules))})</span>'
                            for reason, modules in reasons.items())
            detail = failing[0][1].detail
            if detail:
                why += f'<br><span class="muted">{esc(detail[:200])}</span>'
        else:
            why = "—"
        url = _breakable(entry.interface_url) if entry.interface_url else "—"
        rows.append(f'<tr class="{verdict}" data-interface="{esc(key)}"><th scope="row">{esc(entry.binding)} '
                    f'<span class="muted">{esc(entry.protocol_version or "?")}</span></th>'
                    f'<td class="url">{url}</td><td><span class="badge {verdict}">{verdict.upper()}</span></td>'
                    f"<td>{why}</td></tr>")
    head = "".join(f'<th scope="col">{h}</th>' for h in ("Interface", "URL", "Verdict", "Reason"))
    return (f'<table class="interfaces" aria-label="interfaces of {esc(v.name)}"><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table>')


def _modules_table(v: AgentView, now: datetime) -> str:
    rows = []
    for r in v.rows:
        verdict = r["verdict"] or "pending"
        module = esc(r["module"])
        reason = f'<code>{esc(r["reason"])}</code>' if r["reason"] else (
            '<span class="muted">waiting for the first result</span>' if verdict == "pending" else "—")
        checked = f'<br><span class="muted">checked {_when(r["lastRun"], now, absolute=False)}</span>' \
            if r["lastRun"] else ""
        last_ok = _when(r["lastSuccess"], now) if r["lastSuccess"] else "never"
        ms = r["duration_ms"]
        latency = "—" if ms is None else (f"{ms:.0f} ms" if ms >= 10 else f"{ms:.1f} ms")
        links = " · ".join(
            f'<a href="{esc(report_href(v.name, fmt, r["module"]))}" '
            f'aria-label="{fmt} report for {esc(v.name)} {module}">{fmt}</a>' for fmt in ("html", "markdown", "json"))
        rows.append(f'<tr class="{verdict}" data-module="{module}"><th scope="row">{module}</th>'
                    f'<td class="when"><span class="badge {verdict}">{verdict.upper()}</span>{checked}</td>'
                    f'<td>{reason}</td><td class="when">{last_ok}</td><td class="num">{latency}</td>'
                    f'<td class="links">{links}</td></tr>')
    num = ' class="num"'
    head = "".join(f'<th scope="col"{num if h == "Latency" else ""}>{h}</th>'
                   for h in ("Module", "Verdict", "Reason", "Last success", "Latency", "Report"))
    return f'<table class="modules"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def _breakable(url: str) -> str:
    return re.sub(r"(?<!/)/(?!/)", "/<wbr>", esc(url))  # long URLs wrap at path slashes only


def _ago(now: datetime, t: datetime) -> str:
    secs = max(0, int((now - t).total_seconds()))
    if secs < 120:
        return f"{secs} s ago"
    if secs < 7200:
        return f"{secs // 60} min ago"
    if secs < 172800:
        return f"{secs // 3600} h ago"
    return f"{secs // 86400} d ago"


def _when(iso: str, now: datetime, absolute: bool = True) -> str:
    """'12 s ago' in a <time> element, plus (if absolute) the UTC time underneath."""
    t = datetime.fromisoformat(iso)
    t = (t if t.tzinfo else t.replace(tzinfo=UTC)).astimezone(UTC)
    rel = f'<time datetime="{esc(t.isoformat())}">{_ago(now, t)}</time>'
    return f'{rel}<br><span class="muted">{t:%Y-%m-%d %H:%M:%S} UTC</span>' if absolute else rel
