"""Card validation: required fields, interfaces, skills, capabilities, security, transport hygiene.

Each function returns one CheckResult for a catalogued id; problems are listed in the message so a
person can fix them all in one pass.
"""

from __future__ import annotations

import hashlib
import re
from collections import OrderedDict
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

from probe import redact
from probe.checks.catalogue import from_problems, make_check
from probe.checks.urls import LOOPBACK, host_class
from probe.results import CheckResult, Status, StepName, copy_check
from probe.target import InvalidUrl, check_url
from probe.wire import schema
from probe.wire.card import MAX_INTERFACES, Card, blank_03, judged

_MAJOR_MINOR = re.compile(r"^\d+\.\d+$")
# 1.0 §3.6.1: "Patch version numbers SHOULD NOT be used in ... Agent Cards" (a SHOULD, card.protocol_version's);
# the official clients read "1.0.0" as 1.0 (a2a-sdk compares packaging Versions, @a2a-js/sdk ignores the field)
_WITH_PATCH = re.compile(r"^\d+\.\d+\.\d+$")
_HTTP_BINDINGS = frozenset({"JSONRPC", "HTTP+JSON"})  # the core bindings whose URL is an http(s) URL

_REQUIRED: dict[str, dict[str, type | tuple[type, ...]]] = {
    "1.0": {"name": str, "description": str, "version": str, "supportedInterfaces": list, "capabilities": dict,
            "defaultInputModes": list, "defaultOutputModes": list, "skills": list},
    "0.3": {"protocolVersion": str, "name": str, "description": str, "url": str, "version": str,
            "capabilities": dict, "defaultInputModes": list, "defaultOutputModes": list, "skills": list},
    "0.2": {"name": str, "description": str, "url": str, "version": str, "capabilities": dict,
            "defaultInputModes": list, "defaultOutputModes": list, "skills": list},
    "0.1": {"name": str, "url": str, "version": str, "capabilities": dict, "skills": list},
}
_V = StepName.VALIDATE


def _result(check_id: str, problems: list[str], ok_message: str = "") -> CheckResult:
    return from_problems(check_id, problems, ok_message, step=_V)


def _typename(t: type | tuple[type, ...]) -> str:
    """'an object', 'an array', 'a string' — with the article, for messages like 'x is not an array'."""
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}
    return names.get(t, str(t)) if isinstance(t, type) else "/".join(names.get(x, str(x)) for x in t)


def required_fields(card: Card) -> CheckResult:
    spec = _REQUIRED.get(card.family, _REQUIRED["1.0"])
    problems: list[str] = []
    for name, typ in spec.items():
        value = card.doc.get(name)
        if value is None:
            problems.append(f"{name} is missing")
        elif not isinstance(value, typ) or isinstance(value, bool):
            problems.append(f"{name} is a {type(value).__name__}, expected {_typename(typ)}")
        elif isinstance(value, str | list) and not value and name != "skills" and card.family == "1.0":
            # 1.0 §5.7: a REQUIRED field MUST be "present and set" (ProtoJSON: "" is the unset default), a required
            # array MUST hold an element; 0.3 and 0.2 have no such rule (their schemas: `string`, `array`, no
            # minLength/minItems), and the 0.3 models read "" and [] (a2a-sdk 0.3's resolver accepts the card)
            problems.append(f"{name} is empty")
    declared = card.doc.get("protocolVersion")
    if card.family == "0.2" and declared is not None and not isinstance(declared, str):
        # sniffed as 0.2 (no string to read a version from), but both official clients refuse the card: the 0.3
        # models and a2a-sdk 1.x's legacy mapping read a string (0.2.5 and 0.3 schemas: `string`, REQUIRED)
        problems.append(f"protocolVersion is a {type(declared).__name__}, expected a string")
    if card.hybrid and not isinstance(card.doc.get("url"), str):
        problems.append("hybrid card: top-level url is not a string")
    return _result("card.required_fields", problems, f"all {card.family} required fields present")


def interfaces(card: Card) -> CheckResult:
    problems: list[str] = []
    if card.family == "1.0":
        entries = card.doc.get("supportedInterfaces")
        if isinstance(entries, list) and not entries:
            problems.append("supportedInterfaces is empty")
        for i, e in enumerate(judged(entries)):
            where = f"supportedInterfaces[{i}]"
            if not isinstance(e, dict):
                problems.append(f"{where} is not an object")
                continue
            problems += _interface_problems(where, e.get("url"), e.get("protocolBinding"), e.get("protocolVersion"))
    else:
        # 0.3 §5.5.5: the transport SHOULD be a core value and "Additional transport values MAY be used": any
        # string; §5.6.1: "The preferredTransport field is REQUIRED and MUST be present in every AgentCard"
        # (0.2 has no such field)
        pt = card.doc.get("preferredTransport")
        if pt is None and card.family == "0.3":
            problems.append("preferredTransport is missing (0.3 §5.6.1: REQUIRED, MUST be present in every card)")
        elif pt is not None and (not isinstance(pt, str) or not pt):
            problems.append(f"preferredTransport {pt!r} is not a transport name")
        for i, e in enumerate(judged(card.doc.get("additionalInterfaces"))):
            if not isinstance(e, dict) or not isinstance(e.get("url"), str) or not isinstance(e.get("transport"), str):
                problems.append(f"additionalInterfaces[{i}] needs url and transport strings")
    bound = _bound_note(card.doc)
    result = _result("card.interfaces", problems, f"{len(card.interfaces)} interface(s) advertised{bound}")
    if bound and problems:
        result.message += bound
    return result


def _bound_note(doc: dict[str, Any]) -> str:
    """What the card.interfaces message adds when a list is longer than the probe judges (none: '')."""
    notes = [f"{name} has {len(doc[name])} entries: the probe judged the first {MAX_INTERFACES} "
             f"(its bound on the interfaces judged per card); the rest were not checked nor probed"
             for name in ("supportedInterfaces", "additionalInterfaces")
             if isinstance(doc.get(name), list) and len(doc[name]) > MAX_INTERFACES]
    return "".join(f"; {n}" for n in notes)


def _scheme(url: str) -> str:
    try:
        return urlsplit(url).scheme
    except ValueError:  # e.g. an unclosed IPv6 bracket
        return ""


def _interface_problems(where: str, url: Any, binding: Any, version: Any) -> list[str]:
    out: list[str] = []
    http = isinstance(binding, str) and binding.upper() in _HTTP_BINDINGS  # gRPC: host:port; custom: its own
    if not isinstance(url, str) or not url:
        out.append(f"{where}.url is missing")
    elif http and not _scheme(url).startswith("http"):
        out.append(f"{where}.url {url[:80]!r} is not an absolute http(s) URL")
    elif http:
        try:  # the probe's one URL check; userinfo is its own finding (interface.no_credentials)
            check_url(redact.strip_userinfo(url))
        except InvalidUrl as exc:
            out.append(f"{where}.url: {exc}")
    # an open-form string (the proto: "to be easily extended for other protocol bindings"; 1.0.1 §5.8 custom
    # bindings SHOULD be URIs, 1.0.0 §12.7 "a clear, descriptive transport name"): only a missing one breaks a MUST
    if not isinstance(binding, str) or not binding:
        out.append(f"{where}.protocolBinding is missing")
    if not isinstance(version, str) or not version:
        out.append(f"{where}.protocolVersion is missing")
    elif not (_MAJOR_MINOR.match(version) or _WITH_PATCH.match(version)):
        out.append(f"{where}.protocolVersion {version!r} is not Major.Minor (e.g. \"1.0\")")
    return out


def skills(card: Card) -> CheckResult:
    problems: list[str] = []
    entries = card.doc.get("skills")
    if not isinstance(entries, list):
        return _result("card.skills", ["skills is not an array"])
    required: dict[str, type] = ({"id": str, "name": str} if card.family == "0.1"
                                 else {"id": str, "name": str, "description": str, "tags": list})
    seen: set[str] = set()
    for i, s in enumerate(entries):
        if not isinstance(s, dict):
            problems.append(f"skills[{i}] is not an object")
            continue
        for name, typ in required.items():
            # an empty string is unset only in 1.0 (§5.7); the 0.x schemas allow it
            if not isinstance(s.get(name), typ) or (typ is str and not s.get(name) and card.family == "1.0"):
                problems.append(f"skills[{i}].{name} is missing or not {_typename(typ)}")
        if isinstance(s.get("id"), str):
            if s["id"] in seen:
                problems.append(f"skill id {s['id']!r} is not unique")
            seen.add(s["id"])
    empty = "" if entries else (" (1.0 §5.7: a required array MUST contain at least one element; card.schema says so)"
                                if card.family == "1.0" else " (an empty skills list is allowed but unhelpful)")
    msg = f"{len(entries)} skill(s){empty}"
    return _result("card.skills", problems, msg)


def capabilities(card: Card) -> CheckResult:
    caps = card.doc.get("capabilities")
    problems: list[str] = []
    # null is absent: ProtoJSON's default value (1.0), an optional boolean the 0.3 models read as None
    if isinstance(caps, dict):
        for flag in ("streaming", "pushNotifications", "extendedAgentCard", "stateTransitionHistory"):
            if caps.get(flag) is not None and not isinstance(caps[flag], bool):
                problems.append(f"capabilities.{flag} is {caps[flag]!r}, not a boolean")
    if card.doc.get("supportsAuthenticatedExtendedCard") is not None and not isinstance(
            card.doc["supportsAuthenticatedExtendedCard"], bool):
        problems.append("supportsAuthenticatedExtendedCard is not a boolean")
    return _result("card.capabilities", problems)


def security(card: Card) -> CheckResult:
    schemes = card.doc.get("securitySchemes")
    declared = set(schemes) if isinstance(schemes, dict) else set()
    problems: list[str] = []
    for where, names in _requirement_names(card.doc):
        problems += [f"{where} names undeclared scheme {n!r}" for n in names if n not in declared]
    return _result("card.security", problems,
                   f"{len(declared)} scheme(s) declared" if declared else "no security declared")


def _requirement_names(doc: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """(where, scheme names) for every 1.0 securityRequirements and 0.3 security entry, card and skills."""
    out: list[tuple[str, list[str]]] = []
    holders: list[tuple[str, Any]] = [("", doc)]
    holders += [(f"skills[{i}].", s) for i, s in enumerate(doc.get("skills") or []) if isinstance(s, dict)]
    for prefix, holder in holders:
        for i, req in enumerate(holder.get("securityRequirements") or []):
            if isinstance(req, dict) and isinstance(req.get("schemes"), dict):
                out.append((f"{prefix}securityRequirements[{i}]", list(req["schemes"])))
        for i, req in enumerate(holder.get("security") or []):
            if isinstance(req, dict):
                out.append((f"{prefix}security[{i}]", list(req)))
    return out


# required fields per flow and per scheme kind; 1.0 wraps each scheme in a oneof key, 0.3 uses `type`.
# 0.3 (its JSON schema): every flow requires scopes, implicit an authorizationUrl, password a tokenUrl. 1.0 (the
# proto's REQUIRED): authorizationCode, clientCredentials and deviceCode only; the deprecated implicit and password
# flows require nothing. A 1.0 scopes map may be absent: ProtoJSON omits an empty map (a2a-sdk's own cards do), so
# absent and empty are one value on the wire; when present it must be a map.
_FLOWS_03 = {"authorizationCode": ("authorizationUrl", "tokenUrl"), "clientCredentials": ("tokenUrl",),
             "implicit": ("authorizationUrl",), "password": ("tokenUrl",)}
_FLOWS_10 = {"authorizationCode": ("authorizationUrl", "tokenUrl"), "clientCredentials": ("tokenUrl",),
             "deviceCode": ("deviceAuthorizationUrl", "tokenUrl"), "implicit": (), "password": ()}
_SCHEME_FIELDS = {
    "apiKeySecurityScheme": ("name", "location"), "httpAuthSecurityScheme": ("scheme",),
    "openIdConnectSecurityScheme": ("openIdConnectUrl",), "mtlsSecurityScheme": (), "oauth2SecurityScheme": ("flows",),
    "apiKey": ("name", "in"), "http": ("scheme",), "openIdConnect": ("openIdConnectUrl",), "mutualTLS": (),
    "oauth2": ("flows",),
}


def security_schemes(card: Card) -> CheckResult:
    schemes = card.doc.get("securitySchemes")
    problems: list[str] = []
    for name, raw in (schemes.items() if isinstance(schemes, dict) else []):
        where = f"securitySchemes.{name}"
        if not isinstance(raw, dict):
            problems.append(f"{where} is not an object")
            continue
        kind, body = _scheme_kind(raw)
        if kind is None:
            problems.append(f"{where} has no known scheme type (1.0 wrapper key or 0.3 type)")
            continue
        problems += [f"{where}: {kind} needs {f}" for f in _SCHEME_FIELDS[kind] if not body.get(f)]
        flows = body.get("flows")
        if kind in ("oauth2", "oauth2SecurityScheme") and isinstance(flows, dict):
            v1 = kind == "oauth2SecurityScheme"
            known = _FLOWS_10 if v1 else _FLOWS_03
            for flow, fields in flows.items():
                if flow not in known or not isinstance(fields, dict):
                    problems.append(f"{where}.flows.{flow} is not a known OAuth2 flow object")
                    continue
                problems += [f"{where}.flows.{flow} needs {f}" for f in known[flow] if not fields.get(f)]
                scopes = fields.get("scopes")
                if not isinstance(scopes, dict) and not (v1 and scopes is None):
                    problems.append(f"{where}.flows.{flow} needs a scopes map")
        location = body.get("location") or body.get("in")
        if kind in ("apiKey", "apiKeySecurityScheme") and location and location not in ("header", "query", "cookie"):
            problems.append(f"{where}: location {location!r} is not header, query or cookie")
    return _result("card.security_schemes", problems)


def _scheme_kind(raw: dict[str, Any]) -> tuple[str | None, dict[str, Any]]:
    for key in ("apiKeySecurityScheme", "httpAuthSecurityScheme", "oauth2SecurityScheme",
                "openIdConnectSecurityScheme", "mtlsSecurityScheme"):
        if isinstance(raw.get(key), dict):
            return key, raw[key]
    kind = raw.get("type")
    return (kind, raw) if kind in _SCHEME_FIELDS else (None, raw)


def https(card: Card) -> CheckResult:
    problems = []
    for iface in card.interfaces:
        p = urlsplit(iface.url)
        if p.scheme == "http" and host_class(p.hostname or "") != LOOPBACK:
            problems.append(f"{iface.url[:100]} is plain http")
    return _result("card.https", problems)


def protocol_version(card: Card) -> CheckResult:
    if card.family == "0.3" and blank_03(card.doc):
        # 0.3 §5.5: protocolVersion is required and names "the version of the A2A protocol this agent supports"
        return make_check("card.protocol_version", Status.FAIL, "protocolVersion is empty (\"\"): read as 0.3 by its "
                          "preferredTransport (a 0.3 field); a2a-sdk 1.x's client then picks its 1.0 transport",
                          step=_V)
    if card.family in ("1.0", "0.3"):
        patched = _patch_versions(card) if card.family == "1.0" else []
        if patched:
            return make_check("card.protocol_version", Status.FAIL, "; ".join(patched[:5]) + (
                " (1.0 §3.6.1: patch version numbers SHOULD NOT be used in Agent Cards; say \"1.0\")"), step=_V)
        label = "1.0 and 0.3 (hybrid)" if card.hybrid else card.family
        return make_check("card.protocol_version", Status.PASS, f"protocol {label}", step=_V)
    declared = card.doc.get("protocolVersion")
    if card.family == "0.2" and isinstance(declared, str):
        # 0.2.5 §5.5 asks only that the card declare the version it speaks: an old version is no fault of its own
        return make_check("card.protocol_version", Status.PASS,
                          f"protocol 0.2 (declared {declared[:20]}); 0.3 and 1.0 supersede it", step=_V)
    what = {"0.1": "an A2A 0.1 card (authentication.schemes, no protocolVersion)",
            "0.2": "an A2A 0.2 card that declares no protocolVersion (0.2.5 §5.5 requires it)",
            "unknown": "a card of no recognisable A2A version"}[card.family]
    return make_check("card.protocol_version", Status.FAIL, f"this is {what}", step=_V)


# The daemon sees the same card every run: it is validated again only when its bytes change. Sized for a fleet
# (50,000 agents on one replica); validating a card costs about 0.15 ms of CPU, a probe's tenth, so a cache smaller
# than the fleet missed on every probe. Each entry holds the results themselves, shared and already scrubbed
# (probe.redact.share), equal results one object across entries (`_INTERNED`): a fleet of similar agents keeps a
# handful of objects, and a hit costs no copy and no redaction. Nobody mutates them (copy-on-write). Past the
# interning table's bound a result is kept unshared, and handed out as a copy (the walk scrubs the copy).
CACHE_SIZE = 65_536
# key -> (the epoch it was shared in, the results, whether every one of them is shared, `refused`'s answer)
_CACHE: OrderedDict[tuple[str, str, bytes], tuple[int, tuple[CheckResult, ...], bool, bool | None]] = OrderedDict()
_INTERNED: dict[tuple[object, ...], CheckResult] = {}
_MAX_INTERNED = 4_096  # admitted while there is room, like catalogue.shared_check's table


def judge_cached(card: Card) -> tuple[list[CheckResult], bool | None]:
    """`judge`, memoised on the card's URL and body digest; the shared results must never be mutated."""
    body = card.response.body if card.response is not None else None
    if body is None:
        return judge(card)
    key = (card.url, card.family, hashlib.sha256(body).digest())
    hit = _CACHE.get(key)
    if hit is not None and hit[0] == redact.epoch():  # shared under today's secrets: still shared
        _CACHE.move_to_end(key)
        results, every, refusal = hit[1], hit[2], hit[3]
    else:  # a new card, or a secret registered since: validated (and scrubbed) again
        epoch = redact.epoch()
        judged_now, refusal = judge(card)
        results = tuple(_intern(c) for c in judged_now)
        every = all(redact.is_shared(c) for c in results)
        # -1: an epoch passed meanwhile
        _CACHE[key] = (epoch if redact.epoch() == epoch else -1, results, every, refusal)
        _CACHE.move_to_end(key)
        if len(_CACHE) > CACHE_SIZE:
            _CACHE.popitem(last=False)
    return (list(results) if every else [c if redact.is_shared(c) else copy_check(c) for c in results]), refusal


def _intern(c: CheckResult) -> CheckResult:
    """The one shared, scrubbed object equal to `c`; `c` itself, unshared, once the table is full."""
    key = tuple(c.__dict__.values())
    seen = _INTERNED.get(key)
    if seen is not None and redact.is_shared(seen):
        return seen
    if seen is None and len(_INTERNED) >= _MAX_INTERNED:
        return c
    _INTERNED[key] = redact.share(c)
    return c


def _schema_verdict(card: Card) -> schema.Verdict:
    doc = _as_resolved(card.doc) if card.family == "1.0" else card.doc
    verdict = schema.validate(card.family, "JSONRPC", schema.Shape.CARD, doc, root="card")
    crash = _resolver_fails(card.doc) if card.family == "1.0" else None
    return replace(verdict, problems=[*verdict.problems, crash]) if crash else verdict


def _resolver_fails(doc: dict[str, Any]) -> str | None:
    """What a2a-sdk's card resolver fails on before protobuf's parser sees the card (`parse_agent_card`: its legacy
    mappings' TypeError is an AgentCardResolutionError), where ProtoJSON alone would read a null as absent."""
    if "skills" in doc and doc["skills"] is None:
        return "card.skills: null (a2a-sdk's resolver iterates the skills: 'NoneType' object is not iterable)"
    if doc.get("supportsAuthenticatedExtendedCard") and "capabilities" in doc and doc["capabilities"] is None:
        return "card.capabilities: null beside supportsAuthenticatedExtendedCard (a2a-sdk's resolver adds to it)"
    return None


def card_schema(card: Card, reported: frozenset[str] = frozenset()) -> CheckResult:
    """The card as the official clients parse it. 1.0: protobuf's ProtoJSON parser on the 1.0 AgentCard, after the
    legacy (0.3) forms a2a-sdk's card resolver maps first; 0.3: the models of the 0.3 JSON schema the a2a-sdk 0.3
    client validated cards with. A card they cannot parse breaks every call through them. Unknown fields are
    ignored, as both resolvers do; 0.2 and older cards are judged by the field checks alone."""
    if card.family not in ("1.0", "0.3"):
        return make_check("card.schema", Status.SKIP, f"no official definitions for an A2A {card.family} card: "
                          "judged by the field checks", step=_V)
    return _schema_check(_schema_verdict(card), reported)


def _schema_check(verdict: schema.Verdict, reported: frozenset[str]) -> CheckResult:
    if verdict.limit is not None:  # a big card is not an invalid one: said, never failed
        return make_check("card.schema", Status.PASS, f"{verdict.limit}: judged by the field checks", step=_V)
    # a field the field checks already failed is theirs to report (name it once); the rest is the parser's own.
    # A card's REQUIRED fields stay this check's MUST (docs/conformance-audit.md: the card.schema decision); only
    # what the parser refuses makes the card unusable (`judge`)
    problems = [p for p in verdict.problems + verdict.required if _plain_path(p.split(": ", 1)[0]) not in reported]
    return _result("card.schema", problems, f"parses as the {verdict.definitions}")


_WRAPPER_STEP = re.compile(r"\.(?:apiKey|httpAuth|oauth2|openIdConnect|mtls)SecurityScheme(?=\.|$)")
_KEY_STEP = re.compile(r"\['([^']*)'\]")
_NEEDS = re.compile(r"^(\S+?):? (?:\w+ )?needs (\w+)$")


def _plain_path(path: str) -> str:
    """A schema path as the field checks write it: card.securitySchemes['x'].oauth2SecurityScheme.flows ->
    securitySchemes.x.flows."""
    return _WRAPPER_STEP.sub("", _KEY_STEP.sub(r".\1", path.removeprefix("card.")))


def _reported(results: list[CheckResult]) -> frozenset[str]:
    """The field paths the failed field checks named in their problems ("skills[0].tags is …", "x needs y")."""
    out: set[str] = set()
    for c in results:
        if c.status is Status.FAIL:
            for part in c.message.split("; "):
                needs = _NEEDS.match(part)
                out.add(f"{needs[1]}.{needs[2]}" if needs else part.split(" ", 1)[0])
    return frozenset(out)


_SCHEME_WRAPPERS = {"apiKey": "apiKeySecurityScheme", "http": "httpAuthSecurityScheme",
                    "oauth2": "oauth2SecurityScheme", "openIdConnect": "openIdConnectSecurityScheme",
                    "mutualTLS": "mtlsSecurityScheme"}


def _as_resolved(doc: dict[str, Any]) -> dict[str, Any]:
    """A copy of a 1.0 card in the form a2a-sdk's resolver hands protobuf: interface lists cut to the probe's bound,
    0.3 forms mapped (supportsAuthenticatedExtendedCard, `security` lists, `type`-tagged schemes with `in`)."""
    out = dict(doc)
    if isinstance(out.get("supportedInterfaces"), list):
        out["supportedInterfaces"] = judged(out["supportedInterfaces"])
    for legacy in ("url", "preferredTransport", "protocolVersion", "additionalInterfaces"):
        out.pop(legacy, None)  # the resolver pops them; a 1.0 card's own supportedInterfaces win
    if out.pop("supportsAuthenticatedExtendedCard", None) and isinstance(out.get("capabilities"), dict):
        out["capabilities"] = {"extendedAgentCard": True} | out["capabilities"]
    out = _legacy_security(out)
    if isinstance(out.get("skills"), list):
        out["skills"] = [_legacy_security(dict(s)) if isinstance(s, dict) else s for s in out["skills"]]
    schemes = out.get("securitySchemes")
    if isinstance(schemes, dict):
        out["securitySchemes"] = {name: _legacy_scheme(raw) for name, raw in schemes.items()}
    return out


def _legacy_security(holder: dict[str, Any]) -> dict[str, Any]:
    legacy = holder.pop("security", None)
    if "securityRequirements" not in holder and isinstance(legacy, list):
        holder["securityRequirements"] = [
            {"schemes": {n: {"list": scopes} for n, scopes in req.items()}} if isinstance(req, dict) else req
            for req in legacy]
    return holder


def _legacy_scheme(raw: Any) -> Any:
    if not isinstance(raw, dict) or raw.get("type") not in _SCHEME_WRAPPERS:
        return raw
    body = {k: v for k, v in raw.items() if k != "type"}
    if raw["type"] == "apiKey" and "in" in body:
        body["location"] = body.pop("in")
    return {_SCHEME_WRAPPERS[raw["type"]]: body}


def _patch_versions(card: Card) -> list[str]:
    """The supportedInterfaces entries whose protocolVersion carries a patch number ("1.0.0")."""
    return [f"supportedInterfaces[{i}].protocolVersion {e['protocolVersion']!r} has a patch number"
            for i, e in enumerate(judged(card.doc.get("supportedInterfaces")))
            if isinstance(e, dict) and isinstance(e.get("protocolVersion"), str)
            and _WITH_PATCH.match(e["protocolVersion"])]


def validate(card: Card) -> list[CheckResult]:
    return judge(card)[0]


def judge(card: Card) -> tuple[list[CheckResult], bool | None]:
    """The card's checks, and whether the official clients refuse it: True when their parser fails on it (a2a-sdk
    1.x's `parse_agent_card`, the 0.3 models), so no call is ever made through them; None where no official
    definitions judge its version (0.2, 0.1) or the card is past the probe's bound on that work. A MUST of the card
    they read past (a REQUIRED field absent, a 0.3 card without preferredTransport) is a finding that makes the
    agent non-conformant, not a card no client can use (card_invalid): only a refused one is that."""
    fields = [required_fields(card), interfaces(card), skills(card), capabilities(card), security(card),
              security_schemes(card)]
    refusal: bool | None = None  # 0.2, 0.1: no official definitions; a card past the bound: not judged
    if card.family in ("1.0", "0.3"):
        verdict = _schema_verdict(card)  # parsed once: the check and the refusal read the same verdict
        schema_check = _schema_check(verdict, _reported(fields))
        if verdict.limit is None:
            refusal = bool(verdict.problems)
    else:
        schema_check = card_schema(card)
    return [protocol_version(card), fields[0], schema_check, *fields[1:], https(card)], refusal
