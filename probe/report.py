"""Render a ProbeResult for people and machines. Field names follow the conformance-report schema."""

from __future__ import annotations

import json
from typing import Any

from probe import __version__
from probe.levels import level
from probe.reasons import Reason, describe, recommend
from probe.results import ProbeResult, Status

# reasons whose best advice is a specific check's recommendation (it names the concrete fix)
REASON_CHECKS: dict[Reason, tuple[str, ...]] = {
    Reason.INTERFACE_PATH_DOUBLED: ("interface.no_path_repeat",),
    Reason.INTERFACE_URL_UNROUTABLE: ("interface.routable_host",),
    Reason.CARD_UNSIGNED: ("card.signature",),
    Reason.CARD_SIGNATURE_INVALID: ("card.signature",),
    Reason.CARD_INVALID: ("card.size", "card.strict_json", "card.required_fields", "card.interfaces"),
}


def to_dict(result: ProbeResult) -> dict[str, Any]:
    checks = result.checks
    counts = {s: sum(1 for c in checks if c.status is s) for s in Status}
    return {
        "agentUrl": result.target_url,
        "agentName": result.card_name,
        "agentVersion": result.card_version,
        "testDate": result.started_at.isoformat().replace("+00:00", "Z"),
        "probeVersion": __version__,
        "agent": result.agent,
        "success": result.success,
        "reason": result.reason.value if result.reason else None,
        "reasonDescription": describe(result.reason) if result.reason else None,
        "reasonRecommendation": _reason_advice(result),
        "problem": result.problem,
        "cardUrl": result.card_url,
        "interfaceUrl": result.interface_url,
        "binding": result.binding,
        "protocolVersion": result.protocol_version,
        "cardSignature": result.card_signature,
        "duration_ms": round(result.duration_s * 1000, 3),
        "conformanceLevel": level(result).value,
        "summary": {"total": len(checks), "passed": counts[Status.PASS], "failed": counts[Status.FAIL],
                    "skipped": counts[Status.SKIP]},
        "steps": [
            {"name": s.name.value, "status": s.status.value, "duration_ms": round(s.duration_s * 1000, 3),
             "httpStatus": s.http_status, "reason": s.reason.value if s.reason else None, "detail": s.detail,
             "method": s.a2a_method,
             "http": [{"method": e.method, "url": e.url, "status": e.status, "contentType": e.content_type,
                       "duration_ms": round(e.duration_s * 1000, 3), "retried": e.retried,
                       "phases_ms": {k: round(v * 1000, 3) for k, v in e.phases.model_dump().items()}}
                      for e in s.exchanges]}
            for s in result.steps
        ],
        "results": [
            {"test": c.id, "category": c.category.value, "severity": c.severity.value, "status": c.status.value,
             "message": c.message, "duration_ms": c.duration_ms, "recommendation": c.recommendation,
             "step": c.step.value if c.step else None}
            for c in checks
        ],
    }


def _reason_advice(result: ProbeResult) -> str | None:
    """The fix in words: the failing check's own advice when one explains the reason, else the reason's."""
    if result.reason is None:
        return None
    for check_id in REASON_CHECKS.get(result.reason, ()):
        c = result.check(check_id)
        if c is not None and c.status is Status.FAIL and c.recommendation:
            return c.recommendation
    return recommend(result.reason)


def to_json(result: ProbeResult) -> str:
    return json.dumps(to_dict(result), indent=2, ensure_ascii=False)


_MARK = {Status.PASS: "✔", Status.FAIL: "✘", Status.SKIP: "-"}


def to_text(result: ProbeResult, *, verbose: bool = False) -> str:
    d = to_dict(result)
    lines = [f"{'PASS' if result.success else 'FAIL'}  {result.agent}  ({d['duration_ms']:.0f} ms)"]
    if result.card_name:
        lines.append(f"  card       {result.card_url}  — {result.card_name} {result.card_version or ''}".rstrip())
    if result.interface_url:
        lines.append(f"  interface  {result.binding} {result.protocol_version} at {result.interface_url}")
    if result.problem:
        lines.append(f"  problem    {result.problem} (no step ran)")
    for s in result.steps:
        extra = f" HTTP {s.http_status}" if s.http_status else ""
        detail = f" — {s.detail}" if s.detail and s.status is not Status.PASS else ""
        lines.append(f"  {_MARK[s.status]} {s.name.value:<9}{s.duration_s * 1000:8.1f} ms{extra}{detail}")
    if result.reason:
        lines.append(f"  reason     {result.reason.value}: {describe(result.reason)}")
        lines.append(f"  fix        {d['reasonRecommendation']}")
    failed = [c for c in result.checks if c.status is Status.FAIL]
    shown = result.checks if verbose else failed
    if shown:
        lines.append("  checks:" if verbose else "  failed checks:")
    for c in shown:
        lines.append(f"    {_MARK[c.status]} [{c.severity.value}] {c.id}: {c.message}")
        if c.status is Status.FAIL and c.recommendation:
            lines.append(f"        → {c.recommendation}")
    s = d["summary"]
    lines.append(f"  {s['passed']} passed, {s['failed']} failed, {s['skipped']} skipped — "
                 f"conformance: {d['conformanceLevel']}")
    return "\n".join(lines)


def _md(text: object) -> str:
    return str(text or "").replace("|", "\\|").replace("\n", " ")


def to_markdown(result: ProbeResult) -> str:
    d = to_dict(result)
    s = d["summary"]
    out = [f"# A2A probe report: {_md(result.agent)}", "",
           f"- **Verdict:** {'PASS' if result.success else 'FAIL'}"
           + (f" — `{d['reason']}`: {_md(d['reasonDescription'])}" if d["reason"] else ""),
           f"- **Conformance level:** {d['conformanceLevel']}"]
    if d["problem"]:
        out.append(f"- **Probe config problem (no step ran):** {_md(d['problem'])}")
    if d["cardUrl"]:
        named = " ".join(_md(x) for x in (d["agentName"], d["agentVersion"]) if x)
        out.append(f"- **Card:** {_md(d['cardUrl'])}" + (f" ({named})" if named else ""))
    if d["interfaceUrl"]:
        out.append(f"- **Interface:** {_md(d['binding'])} {_md(d['protocolVersion'])} at {_md(d['interfaceUrl'])}")
    out += [f"- **Tested:** {d['testDate']} in {d['duration_ms']:.0f} ms",
           f"- **Checks:** {s['total']} total, {s['passed']} passed, {s['failed']} failed, {s['skipped']} skipped"]
    if d["reason"]:
        out += ["", f"**How to fix:** {_md(d['reasonRecommendation'])}"]
    if d["steps"]:
        out += ["", "## Steps", "", "| step | status | ms | HTTP | detail |", "|---|---|---|---|---|"]
        out += [f"| {st['name']} | {st['status']} | {st['duration_ms']:.1f} | {st['httpStatus'] or ''} | "
                f"{_md(st['detail'])} |" for st in d["steps"]]
    failed = [r for r in d["results"] if r["status"] == "fail"]
    if failed:
        out += ["", "## Failed tests", "", "| test | category | severity | message | recommendation |",
                "|---|---|---|---|---|"]
        out += [f"| {r['test']} | {r['category']} | {r['severity']} | {_md(r['message'])} | "
                f"{_md(r['recommendation'])} |" for r in failed]
    categories = sorted({r["category"] for r in d["results"]})
    for cat in categories:
        out += ["", f"## {cat}", "", "| test | severity | status | message |", "|---|---|---|---|"]
        out += [f"| {r['test']} | {r['severity']} | {r['status']} | {_md(r['message'])} |"
                for r in d["results"] if r["category"] == cat]
    return "\n".join(out) + "\n"


def to_junit(result: ProbeResult) -> str:
    """JUnit XML: a testsuite per category, a testcase per check, failures with message and details."""
    from xml.etree import ElementTree as ET

    d = to_dict(result)
    root = ET.Element("testsuites", name=f"a2a-probe {result.agent}", tests=str(d["summary"]["total"]),
                      failures=str(d["summary"]["failed"]), skipped=str(d["summary"]["skipped"]),
                      time=f"{result.duration_s:.3f}")
    for cat in sorted({r["category"] for r in d["results"]}):
        rows = [r for r in d["results"] if r["category"] == cat]
        suite = ET.SubElement(root, "testsuite", name=cat, tests=str(len(rows)),
                              failures=str(sum(r["status"] == "fail" for r in rows)),
                              skipped=str(sum(r["status"] == "skip" for r in rows)),
                              timestamp=d["testDate"])
        for r in rows:
            case = ET.SubElement(suite, "testcase", classname=f"a2a.{cat}", name=r["test"],
                                 time=f"{r['duration_ms'] / 1000:.3f}")
            if r["status"] == "fail":
                fail = ET.SubElement(case, "failure", message=r["message"][:500], type=r["severity"])
                fail.text = f"{r['message']}\n\nRecommendation: {r['recommendation']}"
            elif r["status"] == "skip":
                ET.SubElement(case, "skipped", message=r["message"][:500])
    props = ET.SubElement(root, "properties")
    for key in ("agentUrl", "interfaceUrl", "protocolVersion", "reason", "conformanceLevel"):
        ET.SubElement(props, "property", name=key, value=str(d[key] or ""))
    return ET.tostring(root, encoding="unicode", xml_declaration=True)


RENDERERS = {"json": to_json, "markdown": to_markdown, "junit": to_junit}
CONTENT_TYPES = {"json": "application/json", "markdown": "text/markdown; charset=utf-8",
                 "junit": "application/xml", "text": "text/plain; charset=utf-8"}


def render(result: ProbeResult, fmt: str) -> str:
    """Render; if the renderer itself fails, fall back to JSON so no result is ever lost."""
    try:
        return RENDERERS[fmt](result) if fmt in RENDERERS else to_text(result)
    except Exception as exc:  # a report bug must not swallow the result
        return to_json(result) + f"\n<!-- {fmt} rendering failed: {type(exc).__name__}: {exc} -->"
