"""Agent Card discovery, parsing and version sniffing (digest §1, §2 and "Version sniffing")."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from probe.wire import strictjson
from probe.wire.dialects import Dialect, for_version
from probe.wire.http import DEFAULT_CONFIG, ClientConfig, Deadline, HttpClient, Response, gateway_problem

WELL_KNOWN = "/.well-known/agent-card.json"
LEGACY_WELL_KNOWN = "/.well-known/agent.json"
MAX_CARD_BYTES = 1 << 20
# The most interfaces the probe judges per card (each list: supportedInterfaces, additionalInterfaces). Real cards
# advertise a handful, one per binding and version; a hostile 1 MiB card of ~9,000 held the event loop (every
# other agent's probe) for ~1.6 s of URL parsing per fetch. Past the bound the card is judged on its first entries,
# in the card's order of preference, and card.interfaces says so: advertising many is no MUST broken.
MAX_INTERFACES = 256


@dataclass(frozen=True, slots=True)
class Interface:
    url: str
    binding: str  # JSONRPC | HTTP+JSON | GRPC | a URI
    version: str  # as the card spells it: "1.0", "0.3", "0.3.0"
    tenant: str | None = None
    source: str = "supportedInterfaces"  # or "url" / "additionalInterfaces" for 0.x cards


@dataclass(slots=True)
class Card:
    url: str  # where it was finally fetched from
    doc: dict[str, Any]
    family: str  # "1.0" | "0.3" | "0.2" | "0.1" | "unknown"
    hybrid: bool
    interfaces: list[Interface]
    legacy_path: bool = False
    response: Response | None = None
    requested: str = ""  # the candidate URL whose GET gave it (discovery revalidates there)

    @property
    def name(self) -> str | None:
        v = self.doc.get("name")
        return v if isinstance(v, str) else None

    @property
    def version(self) -> str | None:
        v = self.doc.get("version")
        return v if isinstance(v, str) else None

    @property
    def streaming(self) -> bool:
        caps = self.doc.get("capabilities")
        return isinstance(caps, dict) and caps.get("streaming") is True


class CardError(Exception):
    """Discovery failed; `kind` is one of http_status, too_large, json, not_object."""

    def __init__(self, kind: str, message: str, response: Response | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.response = response


class NotModified(Exception):  # an answer, not an error: the stored card is still current
    """The conditional request (`discover(conditional=...)`) to the URL the stored card came from answered 304."""

    def __init__(self, response: Response, sent: dict[str, str]) -> None:
        super().__init__(f"HTTP 304 from {response.exchange.url}")
        self.response = response
        self.sent = sent


@dataclass(slots=True)
class Discovery:
    attempts: list[Response] = field(default_factory=list)


# candidate_urls and _parsable are pure functions of their strings, asked again for every agent on every probe that
# fetches its card: remembered, bounded (URLs up to 2 KiB; cleared when full; 2**16 holds 50,000 agents' entries)
_CANDIDATES: dict[tuple[str, str | None], tuple[str, ...]] = {}
_PARSABLE: dict[str, bool] = {}
_MEMO_MAX = 1 << 16


def candidate_urls(base_url: str, card_url: str | None) -> list[str]:
    key = (base_url, card_url)
    known = _CANDIDATES.get(key)
    if known is None:
        known = tuple(_candidate_urls(base_url, card_url))
        if len(base_url) + len(card_url or "") <= 2048:  # a caller's huge URL (`/probe?target=`) is not kept
            if len(_CANDIDATES) >= _MEMO_MAX:
                _CANDIDATES.clear()
            _CANDIDATES[key] = known
    return list(known)


def _candidate_urls(base_url: str, card_url: str | None) -> list[str]:
    """The one place that derives card URLs, in the order they are tried.

    An explicit card URL alone; a URL at a well-known path alone; a URL ending in `.json` first as the card
    itself, then the well-known paths of its origin; any other URL (which may carry a gateway path prefix):
    the well-known path under it, the legacy 0.1/0.2 path, and last the URL itself, in case it serves the card.
    """
    if card_url:
        return [card_url]
    base = base_url.rstrip("/")
    for suffix in (WELL_KNOWN, LEGACY_WELL_KNOWN):
        if base.endswith(suffix):
            return [base]
    parts = urlsplit(base)
    if parts.path.lower().endswith(".json"):
        root = urlunsplit((parts.scheme, parts.netloc, "", "", ""))
        return [base_url, root + WELL_KNOWN, root + LEGACY_WELL_KNOWN]
    return [base + WELL_KNOWN, base + LEGACY_WELL_KNOWN, base_url]


def _looks_like_card(doc: Any) -> bool:
    return isinstance(doc, dict) and "name" in doc and any(k in doc for k in ("supportedInterfaces", "url"))


async def discover(client: HttpClient, base_url: str, card_url: str | None, *, deadline: Deadline,
                   headers: dict[str, str], allow_cross_origin_redirect: bool, record: Discovery,
                   config: ClientConfig = DEFAULT_CONFIG,
                   conditional: tuple[str, dict[str, str]] | None = None) -> Card:
    """Fetch and parse the card, trying the candidates in order while they answer 404 (or, for the bare URL
    tried last, something that is not a card); a failure lists every URL tried with its answer.

    `conditional` (candidate URL, validator headers) revalidates a stored card: the candidates are tried as always,
    the one the card came from with the validators, and a 304 there raises NotModified. A 304 anywhere else (to
    a request without validators) is a failed discovery, as any other status."""
    urls = candidate_urls(base_url, card_url)
    guessed = urls[-1] if len(urls) > 1 and not urls[-1].lower().endswith(".json") else None
    tried: list[str] = []
    first: Response | None = None
    for i, url in enumerate(urls):
        validators = conditional[1] if conditional is not None and conditional[0] == url else None
        sent = {**headers, **validators} if validators else headers
        resp = await client.request("GET", url, deadline=deadline, headers=sent, max_bytes=MAX_CARD_BYTES,
                                    allow_cross_origin_redirect=allow_cross_origin_redirect, config=config)
        record.attempts.append(resp)
        first = first or resp
        last = i + 1 == len(urls)
        if resp.status == 304 and validators:
            raise NotModified(resp, validators)
        if url == guessed:  # the bare URL, a last resort: only a JSON card counts
            doc = _card_or_none(resp)
            if doc is not None:
                return _requested(build(url=resp.url, doc=doc, legacy=False, response=resp), url)
            what = resp.content_type.split(";", 1)[0] or "no content type"
            tried.append(f"GET {resp.exchange.url} answered HTTP {resp.status}"
                         + (f" ({what}, not an Agent Card)" if resp.status == 200 else ""))
            raise CardError("http_status", _tried(tried), first)
        if resp.status != 200:
            gateway = gateway_problem(resp.status, "")
            tried.append(f"GET {resp.exchange.url} answered HTTP {resp.status}" + (
                _UNCONDITIONAL_304 if resp.status == 304 else f": {gateway}" if gateway else ""))
            if resp.status == 404 and not last:
                continue
            raise CardError("http_status", _tried(tried), resp)
        doc = parse(resp.body, resp)
        return _requested(build(url=resp.url, doc=doc, legacy=url.endswith(LEGACY_WELL_KNOWN), response=resp), url)
    raise AssertionError("unreachable: the last candidate always returns or raises")


def _requested(card: Card, url: str) -> Card:
    card.requested = url
    return card


_UNCONDITIONAL_304 = (" (Not Modified to a request without validators: RFC 9110 §15.4.5 allows a 304 only for a "
                      "conditional request)")


def _card_or_none(resp: Response) -> dict[str, Any] | None:
    if resp.status != 200:
        return None
    try:
        doc = strictjson.loads(resp.body)
    except strictjson.StrictJSONError:
        return None
    return doc if _looks_like_card(doc) else None


def _tried(tried: list[str]) -> str:
    if len(tried) == 1:
        return tried[0]
    return f"no Agent Card at any of the {len(tried)} URLs tried: " + "; ".join(tried)


def parse(body: bytes, response: Response | None = None) -> dict[str, Any]:
    try:
        doc = strictjson.loads(body)
    except strictjson.StrictJSONError as exc:
        raise CardError("json", f"the card is not valid JSON: {exc}", response) from None
    if not isinstance(doc, dict):
        raise CardError("not_object", f"the card is a JSON {type(doc).__name__}, not an object", response)
    return doc


def build(*, url: str, doc: dict[str, Any], legacy: bool = False, response: Response | None = None) -> Card:
    family, hybrid = sniff(doc)
    return Card(url=url, doc=doc, family=family, hybrid=hybrid, interfaces=interfaces(doc),
                legacy_path=legacy, response=response)


def _top_03(doc: dict[str, Any]) -> bool:
    """A top-level 0.3 interface beside supportedInterfaces: url with protocolVersion or preferredTransport (a
    hybrid card). A bare url is no declaration: 1.0 has no such field, 0.3 §5.6.1 requires preferredTransport."""
    return "url" in doc and ("protocolVersion" in doc or "preferredTransport" in doc)


def blank_03(doc: dict[str, Any]) -> bool:
    """A 0.3 card whose protocolVersion is "": a2a-go v0.3.x writes the field without omitempty and neither its
    examples nor its TCK server set it (a2a/agent.go:93). preferredTransport, a 0.3-only field (§5.6.1), names the
    version; a2a-sdk 0.3's and @a2a-js/sdk 0.3's clients call such a card's url with the 0.3 methods."""
    pv = doc.get("protocolVersion")
    return isinstance(pv, str) and not pv.strip() and "url" in doc and "preferredTransport" in doc \
        and "supportedInterfaces" not in doc


def sniff(doc: dict[str, Any]) -> tuple[str, bool]:
    """Classify a card by its fields: (family, hybrid)."""
    if isinstance(doc.get("supportedInterfaces"), list):
        return "1.0", _top_03(doc)
    pv = doc.get("protocolVersion")
    if blank_03(doc):
        return "0.3", False
    if isinstance(pv, str):
        mm = ".".join(pv.split(".")[:2])
        if mm in ("0.3", "0.2", "0.1"):
            return mm, False
        if mm.startswith("1."):
            return "1.0", False
        return "unknown", False
    if isinstance(doc.get("authentication"), dict) and "securitySchemes" not in doc:
        return "0.1", False
    if "url" in doc:
        return "0.2", False  # early 0.2.0 cards had no protocolVersion
    return "unknown", False


def _parsable(url: Any) -> bool:
    """A URL the standard parser accepts (port, IPv6 brackets); an entry that fails is reported by card.interfaces
    and never offered for selection, so nothing downstream meets it."""
    if not isinstance(url, str):
        return False
    known = _PARSABLE.get(url)
    if known is None:
        try:
            urlsplit(url).port  # noqa: B018
            known = True
        except ValueError:
            known = False
        if len(url) <= 2048:  # an agent's hostile 1 MiB URL is judged every time, not kept
            if len(_PARSABLE) >= _MEMO_MAX:
                _PARSABLE.clear()
            _PARSABLE[url] = known
    return known


def dialect_of(iface: Interface) -> Dialect | None:
    """The dialect the interface is called in: its version's; a 1.0 card's entry without a protocolVersion is
    called as 1.0, as a2a-sdk's client calls it (`_find_best_interface` takes it last, then its current version).
    That it has none is card.interfaces' MUST finding."""
    if not iface.version and iface.source == "supportedInterfaces":
        return for_version("1.0")
    return for_version(iface.version)


def judged(entries: Any) -> list[Any]:
    """The first MAX_INTERFACES entries of an interface list (nothing when it is not a list)."""
    return entries[:MAX_INTERFACES] if isinstance(entries, list) else []


def interfaces(doc: dict[str, Any]) -> list[Interface]:
    """Every interface the card advertises, in the card's order of preference (1.0 entries first)."""
    out: list[Interface] = []
    for e in judged(doc.get("supportedInterfaces")):
        if isinstance(e, dict) and _parsable(e.get("url")):
            tenant = e.get("tenant") if isinstance(e.get("tenant"), str) and e.get("tenant") else None
            pv = e.get("protocolVersion")  # null is absent (ProtoJSON), never the text "None"
            out.append(Interface(e["url"], str(e.get("protocolBinding", "")), "" if pv is None else str(pv), tenant))
    # a 1.0 card's top-level url is an interface only in a hybrid: a2a-sdk 1.3's resolver drops it beside
    # supportedInterfaces, and a bare one declares no 0.3 interface (LangGraph's card carries one)
    v1 = isinstance(doc.get("supportedInterfaces"), list)
    if _parsable(doc.get("url")) and (not v1 or _top_03(doc)):
        pv = doc.get("protocolVersion")
        # without protocolVersion: a hybrid's is 0.3 (preferredTransport is a 0.3 field, and a2a-sdk 0.3's default
        # is 0.3.0); a plain card's is early 0.2, or 0.1
        version = ("0.3" if blank_03(doc) else pv if isinstance(pv, str)
                   else "0.3" if v1 else "0.1" if "authentication" in doc else "0.2")
        out.append(Interface(doc["url"], str(doc.get("preferredTransport") or "JSONRPC"), version, source="url"))
        for e in judged(doc.get("additionalInterfaces")):
            if isinstance(e, dict) and _parsable(e.get("url")):
                out.append(Interface(e["url"], str(e.get("transport", "")), version, source="additionalInterfaces"))
    return out


def required_extensions(doc: dict[str, Any]) -> list[str]:
    """The URIs of the extensions the card declares `required: true` (capabilities.extensions, 0.2.5 and later)."""
    caps = doc.get("capabilities")
    exts = caps.get("extensions") if isinstance(caps, dict) else None
    if not isinstance(exts, list):
        return []
    return [str(e["uri"]) for e in exts if isinstance(e, dict) and e.get("required") is True
            and isinstance(e.get("uri"), str) and e["uri"]]


def extensions_header(version: str) -> str:
    """The header a client activates extensions with: 1.0 A2A-Extensions (§3.2.6), 0.3/0.2 X-A2A-Extensions."""
    return "A2A-Extensions" if version == "1.0" else "X-A2A-Extensions"
