"""Render a ProbeResult for people and machines. Field names follow the conformance-report schema."""

from __future__ import annotations

import html
import json
from dataclasses import dataclass, field
from typing import Any

from probe import __version__, templates
from probe.checks.catalogue import ACROSS_INTERFACES, Severity
from probe.checks.grading import binding_of, check_binding, family, grade, rule_for
from probe.checks.registry import REQUIREMENTS, not_tested
from probe.checks.urls import doubled_prefix
from probe.levels import level
from probe.reasons import Reason, describe, recommend
from probe.results import CheckResult, InterfaceResult, ProbeResult, Status, StepName
from probe.wire import a2a_errors

_CALL_STEPS = (StepName.PING, StepName.INVOKE, StepName.STREAM)

# reasons whose best advice is a specific check's recommendation (it names the concrete fix)
REASON_CHECKS: dict[Reason, tuple[str, ...]] = {
    Reason.INTERFACE_PATH_DOUBLED: ("interface.no_path_repeat",),
    Reason.INTERFACE_URL_UNROUTABLE: ("interface.routable_host",),
    Reason.CARD_UNSIGNED: ("card.signature_trusted",),
    Reason.CARD_SIGNATURE_INVALID: ("card.signature",),
    Reason.CARD_SIGNATURE_UNTRUSTED: ("card.signature_trusted",),
    Reason.CARD_INVALID: ("card.size", "card.strict_json", "card.required_fields", "card.interfaces"),
}


def to_dict(result: ProbeResult, module: str | None = None) -> dict[str, Any]:
    checks = result.checks
    counts = {s: sum(1 for c in checks if c.status is s) for s in Status}
    return {
        "module": module,
        "agentUrl": result.target_url,
        "agentName": result.card_name,
        "agentVersion": result.card_version,
        "testDate": result.started_at.isoformat().replace("+00:00", "Z"),
        "probeVersion": __version__,
        "agent": result.agent,
        "success": result.success,
        "reason": result.reason.value if result.reason else None,
        "reasonDescription": describe(result.reason) if result.reason else None,
        "reasonRecommendation": advice(result),
        "problem": result.problem,
        "evidence": [] if result.success else [_hop_dict(h) for h in evidence(result)],
        "cardUrl": result.card_url,
        "interfaceUrl": result.interface_url,
        "binding": result.binding,
        "protocolVersion": result.protocol_version,
        # the failing interfaces first (stable: the card's preference within each verdict); the top-level fields
        # describe the preferred one
        "interfaces": [_interface_dict(result, i) for i in sorted(result.interfaces, key=lambda i: i.success)],
        **_error_mapping(result),
        "cardSignature": result.card_signature,
        "tls": {channel: info.model_dump() for channel, info in result.tls.items()},
        "tlsInsecure": result.tls_insecure,
        "extendedCard": result.extended_card,
        "duration_ms": round(result.duration_s * 1000, 3),
        "conformanceLevel": level(result).value,
        "summary": {"total": len(checks), "passed": counts[Status.PASS], "failed": counts[Status.FAIL],
                    "skipped": counts[Status.SKIP]},
        "steps": [
            {"name": s.name.value, "status": s.status.value, "duration_ms": round(s.duration_s * 1000, 3),
             "httpStatus": s.http_status, "reason": s.reason.value if s.reason else None, "detail": s.detail,
             "method": s.a2a_method,
             "http": [{"transport": e.transport.value, "method": e.method, "url": e.url, "status": e.status,
                       "grpcStatus": e.grpc_status, "contentType": e.content_type,
                       "duration_ms": round(e.duration_s * 1000, 3), "retried": e.retried,
                       "tls": e.tls.model_dump() if e.tls else None,
                       "phases_ms": {k: round(v * 1000, 3) for k, v in e.phases.model_dump().items()}}
                      for e in s.exchanges]}
            for s in result.steps
        ],
        "results": [_result_dict(c, result.protocol_version, result.binding) for c in checks],
        "levels": _level_totals(checks),
        "notTested": [{"id": n.id, "title": n.title, "level": n.level.value, "section": n.section, "why": n.why}
                      for n in not_tested(result.protocol_version, {c.id: (c.status.value, c.message) for c in checks},
                                          suite=any(s.name is StepName.SUITE for s in result.steps),
                                          binding=binding_of(result.binding))],
    }


def _error_mapping(result: ProbeResult) -> dict[str, Any]:
    """errorMapping: which of the 1.0.0 / 1.0.1 HTTP and gRPC error mappings the agent follows, with evidence."""
    seen = [(e.error, e.binding, e.status, tuple(e.mappings)) for e in result.error_statuses]
    verdict, lines = a2a_errors.mapping_followed(result.protocol_version, seen)
    return {"errorMapping": verdict, "errorMappingEvidence": lines}


def _result_dict(c: CheckResult, version: str | None, binding: str | None) -> dict[str, Any]:
    """One check; a check of one interface (`--binding all`) names it and is graded by that interface's version
    and binding."""
    if c.interface:
        version = c.interface.rpartition(" ")[2]
    return {"test": c.id, "category": c.category.value, "severity": c.severity.value, "status": c.status.value,
            "message": c.message, "duration_ms": c.duration_ms, "recommendation": c.recommendation,
            "step": c.step.value if c.step else None, "reason": c.reason.value if c.reason else None,
            "requirement": _requirement(c.id, version, check_binding(c, binding)), "interface": c.interface}


def interface_view(result: ProbeResult, entry: InterfaceResult) -> ProbeResult:
    """One interface as a result of its own: the card's checks, its own checks and steps (for its level)."""
    view = result.model_copy(update={
        "checks": [c for c in result.checks if c.interface in (None, entry.key) and c.id not in ACROSS_INTERFACES],
        "steps": entry.steps, "success": entry.success, "reason": entry.reason,
        "protocol_version": entry.protocol_version, "binding": entry.binding, "interfaces": []})
    grade(view)  # the card's checks were graded by the first interface's version; this one may speak another
    return view


def _interface_dict(result: ProbeResult, i: InterfaceResult) -> dict[str, Any]:
    own = [c for c in result.checks if c.interface == i.key]
    counts = {s: sum(1 for c in own if c.status is s) for s in Status}
    return {"binding": i.binding, "protocolBinding": i.protocol_binding, "protocolVersion": i.protocol_version,
            "interfaceUrl": i.interface_url, "success": i.success, "reason": i.reason.value if i.reason else None,
            "finalState": i.final_state, "duration_ms": round(i.duration_s * 1000, 3), "outcomes": i.outcomes,
            "artifacts": i.artifacts,
            "conformanceLevel": level(interface_view(result, i)).value if own else None,
            "summary": {"total": len(own), "passed": counts[Status.PASS], "failed": counts[Status.FAIL],
                        "skipped": counts[Status.SKIP]},
            "results": [_result_dict(c, i.protocol_version, i.binding) for c in own]}


def _requirement(check_id: str, version: str | None, binding: str | None) -> dict[str, Any] | None:
    """The requirement the check tests in the probed version's own text (on its binding), or None where it has none."""
    rule = rule_for(check_id, version, binding)
    if rule is None:
        return None
    return {"version": family(version), "level": rule.level.value, "section": rule.section, "words": rule.words,
            "tck": list(REQUIREMENTS[check_id].tck) if check_id in REQUIREMENTS else []}


def _level_totals(checks: list[CheckResult]) -> dict[str, dict[str, float]]:
    """Per level, the checks that were graded (passed or failed) and the pass percentage."""
    out: dict[str, dict[str, float]] = {}
    for sev in Severity:
        graded = [c for c in checks if c.severity is sev and c.status in (Status.PASS, Status.FAIL)]
        passed = sum(c.status is Status.PASS for c in graded)
        out[sev.value] = {"passed": passed, "failed": len(graded) - passed,
                          "percent": round(100.0 * passed / len(graded), 1) if graded else 100.0}
    return out


def advice(result: ProbeResult) -> str | None:
    """The fix in words: the failing check's own advice when one explains the reason, else the reason's."""
    if result.reason is None:
        return None
    for check_id in REASON_CHECKS.get(result.reason, ()):
        c = result.check(check_id)
        if c is not None and c.status is Status.FAIL and c.recommendation:
            return c.recommendation
    return recommend(result.reason)


def to_json(result: ProbeResult, module: str | None = None) -> str:
    return json.dumps(to_dict(result, module), indent=2, ensure_ascii=False)


_MARK = {Status.PASS: "✔", Status.FAIL: "✘", Status.SKIP: "-"}


def to_text(result: ProbeResult, *, verbose: bool = False) -> str:
    d = to_dict(result)
    lines = [f"{'PASS' if result.success else 'FAIL'}  {result.agent}  ({d['duration_ms']:.0f} ms)"]
    if result.card_name:
        lines.append(f"  card       {result.card_url}  — {result.card_name} {result.card_version or ''}".rstrip())
    if result.interface_url:
        lines.append(f"  interface  {result.binding} {result.protocol_version} at {result.interface_url}")
    if len(result.interfaces) > 1:
        for i in result.interfaces:
            why = f" — {i.reason.value}" if i.reason else ""
            lines.append(f"  {_MARK[Status.PASS if i.success else Status.FAIL]} {i.key:<14} {i.interface_url}{why}")
    if result.card_signature:
        lines.append(f"  signature  {result.card_signature}")
    if d["errorMapping"] != a2a_errors.NOT_APPLICABLE:
        lines.append(f"  errors     {_mapping_words(d)}")
    if result.tls or result.tls_insecure:
        tls = "; ".join(f"{ch}: {i.version} {i.cipher}" for ch, i in result.tls.items())
        off = "  (verification OFF: insecure_skip_verify)" if result.tls_insecure else ""
        lines.append(f"  tls        {tls}{off}")
    if result.extended_card is not None:
        adds = "; ".join(f"{k}: {', '.join(v)}" for k, v in result.extended_card.items() if v) or "nothing"
        lines.append(f"  extended   card adds {adds}")
    if result.problem:
        lines.append(f"  problem    {result.problem} (no step ran)")
    for s in result.steps:
        extra = f" HTTP {s.http_status}" if s.http_status else ""
        # a passing discover step says when its card came from the daemon's card cache (its age and lifetime)
        said = s.status is not Status.PASS or s.name is StepName.DISCOVER
        detail = f" — {s.detail}" if s.detail and said else ""
        lines.append(f"  {_MARK[s.status]} {s.name.value:<9}{s.duration_s * 1000:8.1f} ms{extra}{detail}")
    if result.reason:
        lines.append(f"  reason     {result.reason.value}: {describe(result.reason)}")
        lines.append(f"  fix        {d['reasonRecommendation']}")
    failed = [c for c in result.checks if c.status is Status.FAIL]
    shown = result.checks if verbose else failed
    if shown:
        lines.append("  checks:" if verbose else "  failed checks:")
    for c in shown:
        version = c.interface.rpartition(" ")[2] if c.interface else result.protocol_version
        rule = rule_for(c.id, version, check_binding(c, result.binding))
        where = f" ({family(version)} {rule.section})" if rule else ""
        on = f" on {c.interface}" if c.interface else ""
        lines.append(f"    {_MARK[c.status]} [{c.severity.value}] {c.id}{on}{where}: {c.message}")
        if c.status is Status.FAIL and c.recommendation:
            lines.append(f"        → {c.recommendation}")
    s = d["summary"]
    lines.append(f"  {s['passed']} passed, {s['failed']} failed, {s['skipped']} skipped — "
                 f"conformance: {d['conformanceLevel']}")
    lines.append("  by level:  " + ", ".join(f"{lvl} {t['percent']:g}%" for lvl, t in d["levels"].items()
                                            if t["passed"] + t["failed"]))
    if d["notTested"] and verbose:
        lines.append(f"  not tested ({len(d['notTested'])} {d['protocolVersion']} requirements):")
        lines += [f"    - [{n['level']}] {n['id']} ({n['section']}): {n['why']}" for n in d["notTested"]]
    elif d["notTested"]:
        lines.append(f"  not tested: {len(d['notTested'])} requirements of {d['protocolVersion']} (see --verbose)")
    return "\n".join(lines)


def _md(text: object) -> str:
    return str(text or "").replace("|", "\\|").replace("\n", " ")


# ---- evidence: what the wire said, hop by hop (the card answered 200, the advertised URL 404)

@dataclass(frozen=True, slots=True)
class Hop:
    label: str  # "card" or "advertised URL"
    url: str
    status: int | None  # the HTTP status, None when nothing answered
    cause: str = ""  # what went wrong, when it did
    repeated: str | None = None  # the path run the URL repeats (a doubled gateway prefix), to highlight


def evidence(result: ProbeResult) -> list[Hop]:
    """The requests that show why the verdict is what it is: the card fetch, and the call that failed."""
    hops: list[Hop] = []
    disc = result.step(StepName.DISCOVER)
    if disc is not None and disc.exchanges:
        last = disc.exchanges[-1]
        hops.append(Hop("card", result.card_url or last.url, last.status,
                        disc.detail if disc.status is Status.FAIL else ""))
    elif disc is not None and disc.status is Status.FAIL:  # failed before any request went out
        hops.append(Hop("card", result.target_url, None, disc.detail))
    failing = next((s for s in result.steps if s.status is Status.FAIL and s.name in _CALL_STEPS), None)
    broken = next((i for i in result.interfaces if not i.success), None)
    if failing is None and broken is not None:  # --binding all: the first interface works, another does not
        failing = next((s for s in broken.steps if s.status is Status.FAIL and s.name in _CALL_STEPS), None)
        if failing is not None and broken.interface_url:
            status = failing.http_status or next((e.status for e in reversed(failing.exchanges) if e.status), None)
            hops.append(Hop("advertised URL", broken.interface_url, status, f"{broken.key}: {failing.detail}"))
        return hops
    if failing is not None and result.interface_url:
        repeated = doubled_prefix(result.card_url, result.interface_url) if result.card_url else None
        status = failing.http_status or next((e.status for e in reversed(failing.exchanges) if e.status), None)
        hops.append(Hop("advertised URL", result.interface_url, status, failing.detail, repeated))
    return hops


def mark_repeat(url: str, repeated: str | None) -> tuple[str, str, str]:
    """(before, the repeated run's second occurrence, after): the part of the URL a person should look at."""
    if not repeated:
        return url, "", ""
    path_at = url.find("/", url.find("//") + 2) if "//" in url else 0
    first = url.find(repeated, path_at)
    second = url.find(repeated, first + len(repeated)) if first >= 0 else -1
    if second < 0:
        return url, "", ""
    return url[:second], repeated, url[second + len(repeated):]


def _hop_dict(h: Hop) -> dict[str, Any]:
    return {"what": h.label, "url": h.url, "httpStatus": h.status, "cause": h.cause or None,
            "repeatedSegment": h.repeated}


def _hop_outcome(h: Hop) -> str:
    return f"HTTP {h.status}" if h.status is not None else "no answer"


# ---- one document, two renderings (Markdown and HTML) so they never say different things

Inline = list[tuple[str, bool]]  # (text, is code)


@dataclass(slots=True)
class _Doc:
    title: str
    facts: list[tuple[str, Inline]] = field(default_factory=list)
    fix: str | None = None
    hops: list[Hop] = field(default_factory=list)
    tables: list[tuple[str, list[str], list[list[str]]]] = field(default_factory=list)


def _document(result: ProbeResult, module: str | None) -> _Doc:
    d = to_dict(result, module)
    s = d["summary"]
    doc = _Doc(f"A2A probe report: {result.agent}")
    verdict: Inline = [("PASS" if result.success else "FAIL", False)]
    if d["reason"]:
        verdict += [(" — ", False), (d["reason"], True), (f": {d['reasonDescription']}", False)]
    doc.facts.append(("Verdict", verdict))
    if module:
        doc.facts.append(("Module", [(module, True)]))
    doc.facts.append(("Conformance level", [(d["conformanceLevel"], False)]))
    if d["problem"]:
        doc.facts.append(("Probe config problem (no step ran)", [(d["problem"], False)]))
    if d["cardUrl"]:
        named = " ".join(x for x in (d["agentName"], d["agentVersion"]) if x)
        doc.facts.append(("Card", [(d["cardUrl"], False), (f" ({named})" if named else "", False)]))
    if d["interfaceUrl"]:
        doc.facts.append(("Interface", [(f"{d['binding']} {d['protocolVersion']} at {d['interfaceUrl']}", False)]))
    if d["errorMapping"] != a2a_errors.NOT_APPLICABLE:
        doc.facts.append(("Error mapping", [(d["errorMapping"], True), (f" — {_mapping_words(d, short=True)}",
                                                                          False)]))
    doc.facts += [("Tested", [(f"{d['testDate']} in {d['duration_ms']:.0f} ms", False)]),
                  ("Checks", [(f"{s['total']} total, {s['passed']} passed, {s['failed']} failed, "
                               f"{s['skipped']} skipped", False)])]
    doc.fix = d["reasonRecommendation"] if d["reason"] else None
    doc.hops = [] if result.success else evidence(result)
    if d["steps"]:
        doc.tables.append(("Steps", ["step", "status", "ms", "HTTP", "detail"],
                           [[st["name"], st["status"], f"{st['duration_ms']:.1f}", str(st["httpStatus"] or ""),
                             st["detail"]] for st in d["steps"]]))
    doc.facts.append(("Pass rate by level", [("; ".join(
        f"{lvl} {t['percent']:g}% ({t['passed']:g}/{t['passed'] + t['failed']:g})" for lvl, t in d["levels"].items()),
        False)]))
    if len(d["interfaces"]) > 1:
        doc.tables.append(("Interfaces", ["interface", "url", "verdict", "reason", "level", "checks failed"],
                           [[f"{i['binding']} {i['protocolVersion']}", i["interfaceUrl"],
                             "PASS" if i["success"] else "FAIL", i["reason"] or "", i["conformanceLevel"] or "",
                             f"{i['summary']['failed']} of {i['summary']['total']}"] for i in d["interfaces"]]))
    failed = [r for r in d["results"] if r["status"] == "fail"]
    tagged = any(r["interface"] for r in d["results"])
    if failed:
        doc.tables.append(("Failed tests", ["test", *(["interface"] if tagged else []), "category", "severity",
                                            "requirement", "message", "recommendation"],
                           [[r["test"], *([r["interface"] or "all"] if tagged else []), r["category"], r["severity"],
                             _section(r), r["message"], r["recommendation"]] for r in failed]))
    for where, cat in sorted({(r["interface"] or "", r["category"]) for r in d["results"]}):
        doc.tables.append((f"{cat} ({where})" if where else cat, ["test", "severity", "status", "requirement",
                                                                  "message"],
                           [[r["test"], r["severity"], r["status"], _section(r), r["message"]]
                            for r in d["results"] if r["category"] == cat and (r["interface"] or "") == where]))
    if d["notTested"]:
        doc.tables.append((f"Not tested ({d['protocolVersion']} requirements no check ran)",
                           ["requirement", "level", "section", "why"],
                           [[n["id"], n["level"], n["section"], n["why"]] for n in d["notTested"]]))
    return doc


def _mapping_words(d: dict[str, Any], *, short: bool = False) -> str:
    """errorMapping in words: what the verdict means and the statuses that decided it."""
    verdict = str(d["errorMapping"])
    meaning = {
        a2a_errors.FOLLOWS_100: "follows the 1.0.0 HTTP/gRPC error mapping",
        a2a_errors.FOLLOWS_101: "follows the 1.0.1 HTTP/gRPC error mapping",
        a2a_errors.BOTH_COMPATIBLE: "every error status seen is the same in the 1.0.0 and 1.0.1 mappings",
        a2a_errors.MIXED: "mixes the 1.0.0 and 1.0.1 error mappings",
        a2a_errors.NEITHER: "error statuses follow neither the 1.0.0 nor the 1.0.1 mapping",
        a2a_errors.NOT_OBSERVED: "no A2A error with an HTTP or gRPC status seen (JSON-RPC codes are the same in "
                                 "both mappings)",
    }.get(verdict, verdict)
    evidence = d["errorMappingEvidence"][:2 if short else 4]
    return meaning + (f" ({'; '.join(evidence)})" if evidence else "")


def _section(row: dict[str, Any]) -> str:
    req = row.get("requirement")
    return f"{req['version']} {req['section']}" if req else "not a rule of this version"


def to_markdown(result: ProbeResult, module: str | None = None) -> str:
    doc = _document(result, module)
    out = [f"# {_md(doc.title)}", ""]
    out += [f"- **{label}:** " + "".join(f"`{t}`" if code else _md(t) for t, code in parts)
            for label, parts in doc.facts]
    if doc.fix:
        out += ["", f"**How to fix:** {_md(doc.fix)}"]
    if doc.hops:
        out += ["", "## Evidence", ""]
        for h in doc.hops:
            rep = f" (the path repeats `{h.repeated}`)" if h.repeated else ""
            cause = f" — {_md(h.cause)}" if h.cause and h.status is None else ""
            out.append(f"- {h.label}: `{h.url}` → {_hop_outcome(h)}{rep}{cause}")
    for title, header, rows in doc.tables:
        out += ["", f"## {_md(title)}", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        out += ["| " + " | ".join(_md(c) for c in row) + " |" for row in rows]
    return "\n".join(out) + "\n"


def hop_html(h: Hop) -> str:
    """One evidence line: the URL (its repeated segment marked) and what it answered."""
    before, marked, after = mark_repeat(h.url, h.repeated)
    url = html.escape(before) + (f"<mark>{html.escape(marked)}</mark>{html.escape(after)}" if marked else "")
    ok = h.status is not None and 200 <= h.status < 300
    outcome = f'<span class="http {"ok" if ok else "bad"}">{_hop_outcome(h)}</span>'
    rep = f' <span class="muted">(the path repeats <code>{html.escape(h.repeated)}</code>)</span>' if h.repeated \
        else ""
    cause = f'<br><span class="cause">{html.escape(h.cause)}</span>' if h.cause and not ok else ""
    return f'<li><span class="hop">{html.escape(h.label)}</span> <code class="url">{url}</code> → {outcome}{rep}' \
           f"{cause}</li>"


def to_html(result: ProbeResult, module: str | None = None) -> str:
    """The Markdown report's content as a page (linked from the status page)."""
    esc = html.escape
    doc = _document(result, module)
    body = [f"<h1>{esc(doc.title)}</h1>", "<ul class=\"facts\">"]
    body += [f"<li><strong>{esc(label)}:</strong> "
             + "".join(f"<code>{esc(t)}</code>" if code else esc(t) for t, code in parts) + "</li>"
             for label, parts in doc.facts]
    body.append("</ul>")
    if doc.fix:
        body.append(f'<p class="fix"><strong>How to fix:</strong> {esc(doc.fix)}</p>')
    if doc.hops:
        body += ["<h2>Evidence</h2>", '<ul class="evidence">', *(hop_html(h) for h in doc.hops), "</ul>"]
    for title, header, rows in doc.tables:
        body += [f"<h2>{esc(title)}</h2>", "<table><thead><tr>"
                 + "".join(f'<th scope="col">{esc(c)}</th>' for c in header) + "</tr></thead><tbody>"]
        body += ["<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>" for row in rows]
        body.append("</tbody></table>")
    return templates.page(title=doc.title, body="\n".join(body))


def to_junit(result: ProbeResult, module: str | None = None) -> str:
    """JUnit XML: a testsuite per category, a testcase per check, failures with message and details."""
    from xml.etree import ElementTree as ET

    d = to_dict(result, module)
    root = ET.Element("testsuites", name=f"a2a-probe {result.agent}", tests=str(d["summary"]["total"]),
                      failures=str(d["summary"]["failed"]), skipped=str(d["summary"]["skipped"]),
                      time=f"{result.duration_s:.3f}")
    # a testsuite per category, and with --binding all per interface and category: "grpc 1.0 lifecycle"
    for where, cat in sorted({(r["interface"] or "", r["category"]) for r in d["results"]}):
        rows = [r for r in d["results"] if r["category"] == cat and (r["interface"] or "") == where]
        scope = f"a2a.{where.replace(' ', '_').replace('.', '_')}." if where else "a2a."
        suite = ET.SubElement(root, "testsuite", name=f"{where} {cat}".strip(), tests=str(len(rows)),
                              failures=str(sum(r["status"] == "fail" for r in rows)),
                              skipped=str(sum(r["status"] == "skip" for r in rows)),
                              timestamp=d["testDate"])
        for r in rows:
            case = ET.SubElement(suite, "testcase", classname=f"{scope}{cat}", name=r["test"],
                                 time=f"{r['duration_ms'] / 1000:.3f}")
            if r["status"] == "fail":
                fail = ET.SubElement(case, "failure", message=r["message"][:500], type=r["severity"])
                fail.text = f"{r['message']}\n\nRecommendation: {r['recommendation']}"
            elif r["status"] == "skip":
                ET.SubElement(case, "skipped", message=r["message"][:500])
    props = ET.SubElement(root, "properties")
    for key in ("agentUrl", "module", "interfaceUrl", "protocolVersion", "reason", "conformanceLevel"):
        ET.SubElement(props, "property", name=key, value=str(d[key] or ""))
    return ET.tostring(root, encoding="unicode", xml_declaration=True)


RENDERERS = {"json": to_json, "markdown": to_markdown, "junit": to_junit, "html": to_html}
CONTENT_TYPES = {"json": "application/json", "markdown": "text/markdown; charset=utf-8",
                 "junit": "application/xml", "html": "text/html; charset=utf-8", "text": "text/plain; charset=utf-8"}


def render(result: ProbeResult, fmt: str, module: str | None = None) -> str:
    """Render; if the renderer itself fails, fall back to JSON so no result is ever lost."""
    try:
        return RENDERERS[fmt](result, module) if fmt in RENDERERS else to_text(result)
    except Exception as exc:  # a report bug must not swallow the result
        return to_json(result, module) + f"\n<!-- {fmt} rendering failed: {type(exc).__name__}: {exc} -->"
