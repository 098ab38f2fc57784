"""HTTP caching of the Agent Card for the daemon's scheduled runs (A2A 1.0 §8.6.2; RFC 9111 as a private cache).

Freshness is RFC 9111's, for a private cache: `max-age` (s-maxage is for shared caches), else `Expires` minus
`Date`; the corrected initial age (`Age`, the response delay, the apparent age from `Date`) counts against it.
`no-store` is never stored, `no-cache` (and `max-age=0`) is revalidated on every use, a response without caching
headers is not reused at all (no heuristic freshness: the implementation-specific default of §8.6.2 is 0).
Malformed or duplicated freshness information makes the response stale (RFC 9111 §4.2.1), never an error.
Whatever the agent says, freshness is capped by the configured `card_cache_max_age`.

A stale entry is revalidated with a conditional GET (If-None-Match with its ETag, If-Modified-Since with its
Last-Modified); a 304 that identifies it (RFC 9111 §4.3.4) refreshes it, anything else replaces or drops it.

Why a small parser of our own: the maintained ones at hand (werkzeug's, CacheControl's) fold a duplicated
directive into one value, so "a duplicated max-age is stale" cannot be told from them, and each would bring a
web framework or requests along for one function. HTTP-dates go through the standard library's parser once
they match RFC 9110's grammar.
"""

from __future__ import annotations

import copy
import email.utils
import json
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC
from typing import Protocol, TypeVar

import zstandard
from multidict import CIMultiDict, CIMultiDictProxy
from pydantic import BaseModel

from probe import redact
from probe.interning import Interned
from probe.results import CheckResult, Exchange, HttpPhases, Status
from probe.wire.card import Card, build
from probe.wire.http import Response

MAX_DELTA = 1 << 31  # RFC 9111 §1.2.2: a larger delta-seconds (or an overflow) is taken as 2^31
MAX_ENTRIES = 65_536  # overall cap: entries past it are not admitted (a fleet larger than this refetches)
MAX_VALIDATOR = 1024  # characters of an ETag / Last-Modified kept to send back; a longer one is not used
# the header fields a 304 updates on the stored entry (RFC 9111 §3.2); Date and Age always come from the new answer
_KEPT = ("Cache-Control", "Expires", "ETag", "Last-Modified", "Vary")
_JUDGED = ("Content-Type", "Cache-Control", "ETag", "Last-Modified")  # what the discover checks read of the 200
MAX_BYTES = 128 << 20  # overall cap on the compressed cards kept (a fleet of 1 MiB cards stops being admitted)
_COMPRESSOR = zstandard.ZstdCompressor(level=1)
# one context for every use (the event loop's thread alone reads the cache): zstandard.decompress() makes a new
# one each call, 6.5 of its 7.4 us for a fleet card (0.85 us with this one)
_DECOMPRESSOR = zstandard.ZstdDecompressor()


class Headers(Protocol):
    """What a response's headers offer (aiohttp's CIMultiDictProxy, multidict's CIMultiDict)."""

    def getall(self, key: str, default: list[str]) -> list[str]: ...


# ---- Cache-Control (RFC 9111 §5.2)

@dataclass(frozen=True, slots=True)
class Directives:
    max_age: int | None = None
    no_store: bool = False
    no_cache: bool = False
    must_revalidate: bool = False
    problem: str | None = None  # malformed or duplicated freshness information: the response is stale


def split_list(value: str) -> list[str]:
    """The members of a comma-separated list field (RFC 9110 §5.6.1), commas inside quoted strings kept; empty
    members dropped."""
    members: list[str] = []
    cur: list[str] = []
    quoted = escaped = False
    for ch in value:
        if escaped:
            escaped = False
        elif quoted and ch == "\\":
            escaped = True
        elif ch == '"':
            quoted = not quoted
        elif ch == "," and not quoted:
            members.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    members.append("".join(cur).strip())
    return [m for m in members if m]


def _unquote(value: str) -> str | None:
    """A directive argument as token or quoted-string (recipients accept both, §5.2); None when malformed."""
    if len(value) >= 2 and value[0] == '"' and value[-1] == '"':
        out, escaped = [], False
        for ch in value[1:-1]:
            if escaped:
                out.append(ch)
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                return None
            else:
                out.append(ch)
        return None if escaped else "".join(out)
    return None if '"' in value else value


def delta_seconds(value: str) -> int | None:
    """1*DIGIT (RFC 9111 §1.2.2), clamped to 2^31; None for anything else (a sign, a fraction, a space)."""
    if not value or not value.isascii() or not value.isdigit():
        return None
    return min(int(value[:12]), MAX_DELTA)  # 12 digits already exceed 2^31: no huge int from a hostile header


def parse_cache_control(lines: Sequence[str]) -> Directives:
    """Every Cache-Control line of a response as one list (a field may be split over lines)."""
    max_age: int | None = None
    seen_max_age = no_store = no_cache = must_revalidate = False
    problem: str | None = None
    for member in split_list(",".join(lines)):
        name, eq, raw = member.partition("=")
        spaced = name != name.rstrip() or raw != raw.lstrip()  # no whitespace around "=" in the grammar (§5.2)
        name = name.strip().lower()
        arg = _unquote(raw) if eq and not spaced else None
        if name == "max-age":
            if seen_max_age:
                problem = "max-age given twice (RFC 9111 §4.2.1: treated as stale)"
            seen_max_age = True
            value = delta_seconds(arg) if arg is not None else None
            if value is None and problem is None:
                problem = f"max-age {raw.strip()[:40]!r} is not a number of seconds (treated as stale)" if eq else (
                    "max-age without a value (treated as stale)")
            max_age = value if max_age is None else max_age
        elif name == "no-store":
            no_store = True
        elif name == "no-cache":  # the qualified form (no-cache="field") is handled as the unqualified one
            no_cache = True
        elif name == "must-revalidate":
            must_revalidate = True
    return Directives(max_age, no_store, no_cache, must_revalidate, problem)


# ---- dates (RFC 9110 §5.6.7) and freshness (RFC 9111 §4.2)

_DAY, _MONTH = "(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)", "(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
_TIME = r"\d\d:\d\d:\d\d"
_HTTP_DATE = re.compile(  # RFC 9110 §5.6.7: IMF-fixdate, obsolete RFC 850, asctime; case-sensitive, ASCII digits
    rf"{_DAY}, \d\d {_MONTH} \d{{4}} {_TIME} GMT"
    rf"|(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), \d\d-{_MONTH}-\d\d {_TIME} GMT"
    rf"|{_DAY} {_MONTH} (?: \d|\d\d) {_TIME} \d{{4}}", re.ASCII)


def http_date(value: str) -> float | None:
    """An HTTP-date (IMF-fixdate, RFC 850 or asctime) as Unix time; None when it is not one. Only the grammar's
    three forms: the e-mail date parser behind it also takes dates without a weekday, other zones or numeric
    offsets, which RFC 9111 §5.3 says a cache must take as a time in the past."""
    if len(value) > 64 or not _HTTP_DATE.fullmatch(value):
        return None
    try:
        parsed = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if parsed.tzinfo is None:  # asctime carries no zone: it is GMT
        parsed = parsed.replace(tzinfo=UTC)
    try:
        return parsed.timestamp()
    except (OverflowError, ValueError):
        return None


def _one(headers: Headers, name: str) -> tuple[str | None, bool]:
    """A singleton field's value, and whether it was given more than once."""
    values = headers.getall(name, [])
    return (values[0] if values else None), len(values) > 1


@dataclass(frozen=True, slots=True)
class Freshness:
    store: bool  # may be kept at all (not no-store, not Vary: *)
    lifetime: float  # seconds the response is fresh for, from its own headers (0: stale at once)
    initial_age: float  # its corrected initial age when received (RFC 9111 §4.2.3)
    always_revalidate: bool  # no-cache: never reused without a successful validation
    basis: str  # how the lifetime was derived, for people


def freshness(headers: Headers, request_time: float, response_time: float) -> Freshness:
    """RFC 9111 §4.2.1 and §4.2.3 for a private cache; times are Unix seconds of our own clock."""
    cc = parse_cache_control(headers.getall("Cache-Control", []))
    vary = [m.strip() for line in headers.getall("Vary", []) for m in line.split(",")]
    store = not cc.no_store and "*" not in vary
    date_raw, dup_date = _one(headers, "Date")
    date = http_date(date_raw) if date_raw is not None and not dup_date else None
    date_value = date if date is not None else response_time  # RFC 9110 §6.6.1: no valid Date, the receipt time
    lifetime, basis = _lifetime(cc, headers, date_value)
    age_lines = headers.getall("Age", [])
    first_age = split_list(age_lines[0])[0] if age_lines and split_list(age_lines[0]) else ""
    age_value = delta_seconds(first_age) or 0  # RFC 9111 §5.1: the first member; an invalid one is ignored
    apparent_age = max(0.0, response_time - date_value)
    response_delay = max(0.0, response_time - request_time)
    initial_age = max(apparent_age, age_value + response_delay)
    if cc.no_store:
        basis = "no-store"
    elif not store:
        basis = "Vary: * (never reused)"
    elif cc.no_cache:
        basis = "no-cache (revalidated every probe)"
    return Freshness(store, lifetime if not cc.no_cache else 0.0, initial_age, cc.no_cache, basis)


def _lifetime(cc: Directives, headers: Headers, date_value: float) -> tuple[float, str]:
    if cc.problem is not None:
        return 0.0, cc.problem
    if cc.max_age is not None:
        return float(cc.max_age), f"max-age={cc.max_age}"
    expires_raw, dup = _one(headers, "Expires")
    if expires_raw is None:
        return 0.0, "no caching headers (the default freshness is 0)"
    if dup:
        return 0.0, "Expires given twice (treated as stale)"
    expires = http_date(expires_raw)
    if expires is None:  # RFC 9111 §5.3: an invalid date, "0" among them, is in the past
        return 0.0, f"Expires {expires_raw[:40]!r} is not an HTTP-date (already expired)"
    return max(0.0, min(float(MAX_DELTA), expires - date_value)), "Expires minus Date"


# ---- validators (RFC 9110 §8.8) and the 304 (RFC 9111 §4.3.4)

def _validator(value: str | None) -> str | None:
    if value is None or not value or len(value) > MAX_VALIDATOR or not value.isprintable() or not value.isascii():
        return None
    return value


def _opaque(etag: str) -> str:
    return etag.strip().removeprefix("W/")


def weak_match(a: str, b: str) -> bool:
    """Weak comparison of two entity tags (RFC 9110 §8.8.3.2): the opaque tags are equal."""
    return _opaque(a) == _opaque(b)


# ---- the store

@dataclass(frozen=True, slots=True)
class Key:
    """What decides which card an agent's discovery gets: where it looks, what it asks for, with which TLS."""

    base_url: str
    card_url: str | None
    a2a_version: str | None
    tls: tuple[object, ...]
    allow_cross_origin_redirect: bool


@dataclass(slots=True)
class Entry:
    """A card kept compact (at 50,000 agents each byte of an entry is 50 KB): the body zstd-compressed and parsed
    again when used (a parse costs ~10 us, the round trip it saves ~100 times that), the few header fields the
    checks judge and validation needs, the last real exchanges."""

    key: Key
    url: str  # where the card was finally fetched from
    requested: str  # the candidate URL whose GET gave it (revalidated there)
    legacy_path: bool
    body: bytes  # zstd
    exchange_url: str  # as the 200's exchange recorded it (redacted)
    redirects: tuple[str, ...]
    cross_origin_redirect: bool
    card_headers: tuple[tuple[str, str], ...]  # the 200's fields the discover checks judge (_JUDGED)
    headers: dict[str, tuple[str, ...]]  # the fields freshness and validation read (_KEPT), updated by a 304
    exchanges: tuple[Packed, ...]  # the last real exchanges (the 200, or the 304 that revalidated it), packed
    http_status: int | None
    fresh: Freshness
    received: float  # monotonic time of the last real answer
    received_wall: float  # Unix time of the last real answer (a 200 or a 304)
    fetched_wall: float  # Unix time of the 200 the card and its checks come from
    epoch: int  # redact's epoch when stored: a secret registered since makes the entry unusable
    # the discover step's checks of this card (a pure function of the fields above: the same body, the same header
    # fields, the same URLs), kept by the engine's first cached run in redact's epoch then (-1: none): each shared
    # check itself, an unshared one (a fleet's per-agent messages, past the shared table's bound) as the id, status,
    # message and recommendation it is made again from. ~0.3 KB an agent
    judged: tuple[int, tuple[Kept, ...]] | None = None
    # what the engine's validate step derived from this card and a run's Target (probe.engine._Plan: the interface,
    # its checks, the headers), for the next run with the same Target; ~0.4 KB an agent
    planned: object = None

    @classmethod
    def of(cls, key: Key, card: Card, exchanges: Sequence[Exchange], http_status: int | None, fresh: Freshness,
           received_wall: float) -> Entry:
        resp = card.response
        assert resp is not None
        judged = tuple((name, _common(v)) for name in _JUDGED for v in resp.headers.getall(name, []))
        body = _pack_body(resp.body)
        url = card.url  # most often the requested URL and the exchange's too: one string for the three
        return cls(key=key, url=url, requested=_same(card.requested, url), legacy_path=card.legacy_path, body=body,
                   exchange_url=_same(resp.exchange.url, url), redirects=tuple(resp.redirects),
                   cross_origin_redirect=resp.cross_origin_redirect, card_headers=judged,
                   headers=kept_headers(resp.headers), exchanges=pack(exchanges, url), http_status=http_status,
                   fresh=fresh, received=time.monotonic(), received_wall=received_wall, fetched_wall=received_wall,
                   epoch=redact.epoch())

    def card(self) -> Card:
        """The stored card, rebuilt as discovery built it (the same body: the same validation-cache entry).

        The body passed the strict parse (probe.wire.strictjson) when it was fetched, so the plain C parser gives
        the very same document: no duplicate key, no NaN, valid UTF-8 without a BOM."""
        body = _unpack_body(self.body)
        headers = CIMultiDictProxy(CIMultiDict(self.card_headers))
        exchange = _construct(Exchange, {**_CARD_EXCHANGE, "url": self.exchange_url,
                                         "content_type": headers.get("Content-Type"),
                                         "phases": _construct(HttpPhases, dict(_NO_PHASES), set())}, _CARD_GIVEN)
        resp = Response(self.url, 200, headers, body, exchange, list(self.redirects), self.cross_origin_redirect)
        card = build(url=self.url, doc=json.loads(body.decode()), legacy=self.legacy_path, response=resp)
        card.requested = self.requested
        return card

    @property
    def size(self) -> int:
        return len(self.body)

    def age(self, now: float | None = None) -> float:
        return self.fresh.initial_age + max(0.0, (time.monotonic() if now is None else now) - self.received)

    def lifetime(self, cap: float) -> float:
        return min(self.fresh.lifetime, cap)

    def is_fresh(self, cap: float, now: float | None = None) -> bool:
        return not self.fresh.always_revalidate and self.age(now) < self.lifetime(cap)

    @property
    def etag(self) -> str | None:
        values = self.headers.get("ETag", ())
        return _validator(values[0]) if len(values) == 1 else None

    @property
    def last_modified(self) -> str | None:
        values = self.headers.get("Last-Modified", ())
        return values[0] if len(values) == 1 and _validator(values[0]) and http_date(values[0]) else None

    def conditional(self) -> dict[str, str]:
        """The headers of the conditional GET (RFC 9111 §4.3.1: the ETag, and Last-Modified besides)."""
        out: dict[str, str] = {}
        if (etag := self.etag) is not None:
            out["If-None-Match"] = etag
        if (lm := self.last_modified) is not None:
            out["If-Modified-Since"] = lm
        return out

    def identifies(self, headers: Headers, sent: Mapping[str, str]) -> str | None:
        """None when a 304 identifies this entry for update (RFC 9111 §4.3.4); else why it does not. The 304's
        ETag is matched against the one the 200 carried, even one too long to have been sent back."""
        etags = headers.getall("ETag", [])
        stored_tags = self.headers.get("ETag", ())
        stored = stored_tags[0] if len(stored_tags) == 1 else None
        lms = headers.getall("Last-Modified", [])
        if not etags and not lms and "If-None-Match" in sent:
            # RFC 9110 §15.4.5: a 304 MUST carry the ETag a 200 would; one without any validator identifies no
            # stored response that has one (RFC 9111 §4.3.4): a front end answering 304 to anything
            return f"the 304 to If-None-Match {sent['If-None-Match'][:80]} carries no ETag (nor Last-Modified)"
        if etags:
            if len(etags) > 1:
                return "the 304 carries more than one ETag"
            if stored is None or not weak_match(etags[0], stored):
                sent_tag = sent.get("If-None-Match")
                return (f"the 304 names ETag {etags[0][:80]} but the probe sent If-None-Match {sent_tag[:80]}"
                        if sent_tag else f"the 304 names ETag {etags[0][:80]}, which the stored card does not have")
            return None
        if lms and self.last_modified is not None and http_date(lms[0]) != http_date(self.last_modified):
            return f"the 304 names Last-Modified {lms[0][:40]}, not the stored card's {self.last_modified}"
        return None  # no validator in the 304 to If-Modified-Since alone (a 304 need not send Last-Modified)

    def refresh(self, headers: Headers, exchanges: Iterable[Exchange], status: int | None, request_time: float,
                response_time: float) -> None:
        """Freshen the entry with a 304's header fields (RFC 9111 §3.2, §4.3.4); the card and its checks stay."""
        merged = {name: tuple(headers.getall(name, [])) or self.headers.get(name, ()) for name in _KEPT}
        merged = {k: v for k, v in merged.items() if v}
        view = _Fields({**merged, "Date": tuple(headers.getall("Date", [])), "Age": tuple(headers.getall("Age", []))})
        self.headers = merged
        self.fresh = freshness(view, request_time, response_time)
        self.exchanges = pack(exchanges, self.url)
        self.http_status = status
        self.received = time.monotonic()
        self.received_wall = response_time

    def exchanges_for_result(self) -> list[Exchange]:
        return [unpack(p) for p in self.exchanges]  # each result gets (and scrubs) its own


# Card bodies are compressed against the first card the process kept (raw content, at most _MAX_DICTIONARY): a
# fleet's cards differ in little more than names and URLs, so the fleet benchmark's 467-byte card is 24 bytes
# instead of 311. A body begins with how it was compressed (without a dictionary: those kept before there was one).
# Like `_DECOMPRESSOR`, the dictionary's one decompression context serves every read (0.5 us a fleet card).
_PLAIN, _WITH_DICTIONARY = b"\x00", b"\x01"
_MAX_DICTIONARY = 16 << 10


class _BodyCodec:
    __slots__ = ("compressor", "decompressor")

    def __init__(self, body: bytes) -> None:
        dictionary = zstandard.ZstdCompressionDict(body, dict_type=zstandard.DICT_TYPE_RAWCONTENT)
        self.compressor = zstandard.ZstdCompressor(level=1, dict_data=dictionary)
        self.decompressor = zstandard.ZstdDecompressor(dict_data=dictionary)


_bodies: list[_BodyCodec] = []  # the one codec, made from the first card small enough; it never changes


def _pack_body(body: bytes) -> bytes:
    """The card's body compressed, one copy of its own size (not zstandard's compression bound)."""
    if not _bodies and len(body) <= _MAX_DICTIONARY:
        _bodies.append(_BodyCodec(body))
    if _bodies:
        return _WITH_DICTIONARY + _bodies[0].compressor.compress(body)
    return _PLAIN + _COMPRESSOR.compress(body)


def _unpack_body(blob: bytes) -> bytes:
    data = memoryview(blob)[1:]
    return _DECOMPRESSOR.decompress(data) if blob[:1] == _PLAIN else _bodies[0].decompressor.decompress(data)


# a check result kept for later runs (probe.engine._kept): a shared one, or what makes an unshared one again
Kept = CheckResult | tuple[str, Status, str, str]


# an Exchange as a tuple of its field values (its phases as a tuple too): ~0.3 KB against ~1.2 KB as a model
Packed = tuple[object, ...]
_FIELDS = tuple(Exchange.model_fields)
_PHASES = tuple(HttpPhases.model_fields)


def pack(exchanges: Iterable[Exchange], url: str = "") -> tuple[Packed, ...]:
    """`url`: the entry's card URL, kept once for the exchanges made to it."""
    return tuple(tuple(_packed(e, f, url) for f in _FIELDS) for e in exchanges)


def _packed(e: Exchange, name: str, url: str) -> object:
    value = getattr(e, name)
    if name == "phases":
        return tuple(getattr(value, p) for p in _PHASES)
    if name == "url":
        return _same(value, url)
    return _common(value) if name == "content_type" and value is not None else value


# An entry is kept per agent (50,000 at scale): values equal across a fleet's entries are kept as one object (the
# header values most agents send alike, their card URL where the request and the exchange repeat it). Bounded.
_interned: Interned[str] = Interned(4096)
_COMMON_LENGTH = 64  # longer values (an ETag, a date: each agent's own) are not looked up


def _common(value: str) -> str:
    return value if len(value) > _COMMON_LENGTH else _interned(value)


def _same(value: str, kept: str) -> str:
    return kept if value == kept else value


def unpack(packed: Packed) -> Exchange:
    values = dict(zip(_FIELDS, packed, strict=True))
    phases = values["phases"]
    assert isinstance(phases, tuple)
    values["phases"] = _construct(HttpPhases, dict(zip(_PHASES, phases, strict=True)), set(_PHASES))
    if values["tls"] is not None:
        values["tls"] = copy.copy(values["tls"])  # each result its own: a result's scrub may set its fields
    return _construct(Exchange, values, set(_FIELDS))


_set = object.__setattr__
_M = TypeVar("_M", bound=BaseModel)


def _construct(model: type[_M], values: dict[str, object], given: set[str]) -> _M:
    """What `model.model_construct(**given values)` builds when `values` holds every field in declaration order
    (the others at their defaults), without pydantic's per-field Python work: ~20 us an Exchange with its phases'
    default factory, three a cached-card run (tests/unit/test_cardcache.py compares the two)."""
    m = model.__new__(model)
    _set(m, "__dict__", values)
    _set(m, "__pydantic_fields_set__", given)
    _set(m, "__pydantic_extra__", None)
    _set(m, "__pydantic_private__", None)
    return m


# the exchange a stored card's Response carries (what discovery's 200 recorded: only its URL is read, by the checks)
_CARD_GIVEN = {"method", "url", "status", "content_type"}
_CARD_EXCHANGE: dict[str, object] = {name: None if f.is_required() or f.default_factory else f.default
                                     for name, f in Exchange.model_fields.items()}
_CARD_EXCHANGE.update(method="GET", status=200)
_NO_PHASES = {name: f.default for name, f in HttpPhases.model_fields.items()}


class _Fields:
    """Header fields as `Headers`, from a dict of lines."""

    def __init__(self, fields: Mapping[str, tuple[str, ...]]) -> None:
        self._f = {k.lower(): v for k, v in fields.items()}

    def getall(self, key: str, default: list[str]) -> list[str]:
        values = self._f.get(key.lower())
        return list(values) if values else default


def kept_headers(headers: Headers) -> dict[str, tuple[str, ...]]:
    return {name: tuple(_common(x) for x in v) for name in _KEPT if (v := headers.getall(name, []))}


CACHED_CARD = "Agent Card from the probe's cache"  # how a cached run's discover detail begins (the status page)
# what a scheduled run's discovery did: a fresh card reused (no request), a 304 that kept it, a stale one fetched
# anew (200), a first fetch (no entry), a card that may not be reused (no-store, no caching headers, Vary: *)
RESULTS = ("hit", "revalidated", "refetched", "miss", "uncacheable")


@dataclass(slots=True)
class CardCache:
    """One entry per agent name, bounded (`MAX_ENTRIES`); owned by the daemon's runner, shared by an agent's modules.

    It holds what the card response holds (the public card, its validators) and the checks made of it: discovery
    never carries credentials, so no secret is stored here."""

    default_max_age: float = 0.0  # the cap of agents that set none (the config's top-level card_cache_max_age)
    max_entries: int = MAX_ENTRIES
    max_bytes: int = MAX_BYTES
    entries: dict[str, Entry] = field(default_factory=dict)
    size: int = 0  # compressed card bytes held
    on_result: Callable[[str], None] | None = None  # counts RESULTS (the daemon's a2a_probe_card_cache_total)

    def count(self, result: str) -> None:
        if self.on_result is not None:
            self.on_result(result)

    def cap(self, configured: float | None) -> float:
        return self.default_max_age if configured is None else configured

    def get(self, name: str, key: Key) -> Entry | None:
        entry = self.entries.get(name)
        if entry is None:
            return None
        if entry.key != key or entry.epoch != redact.epoch():  # the agent's config changed, or a secret came
            self.drop(name)
            return None
        return entry

    def put(self, name: str, entry: Entry) -> bool:
        """Keep `entry`; False when full (not admitted: evicting would make a round-robin fleet miss every time)."""
        old = self.entries.get(name)
        if old is None and len(self.entries) >= self.max_entries:
            return False
        if self.size - (old.size if old is not None else 0) + entry.size > self.max_bytes:
            self.drop(name)
            return False
        self.drop(name)
        self.entries[name] = entry
        self.size += entry.size
        return True

    def drop(self, name: str) -> None:
        old = self.entries.pop(name, None)
        if old is not None:
            self.size -= old.size

    def retain(self, names: Iterable[str]) -> None:
        """Keep only the entries of these agents (a reload: agents that left the config lose theirs)."""
        keep = set(names)
        for name in [n for n in self.entries if n not in keep]:
            self.drop(name)

    def clear(self) -> None:
        self.entries.clear()
        self.size = 0

    def __len__(self) -> int:
        return len(self.entries)
