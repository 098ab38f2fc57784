"""The one place that decides what is secret and masks it in every text the probe emits.

Every configured credential is registered here when it is resolved (`register`), together with
the forms an agent may echo it back in: the bare token of an `Authorization` value, the
`user:pass` inside a Basic credential and its password, base64 (standard and URL-safe, with and
without padding), URL encoding (either case of hex), JSON (also with `\\/`) and HTML escaping, hex,
and a value of 8+ characters reversed, upper- or lower-cased. `text` masks all of them, a prefix of one
left by a truncation, any `Bearer`/`Basic` credential and any userinfo in a URL. Reports, the
status page, /probe?debug=true, the CLI and the log processor all call it (see `result`, `deep`).
"""

from __future__ import annotations

import base64
import binascii
import html
import json
import re
from collections.abc import Mapping
from datetime import datetime
from enum import Enum
from functools import cache, lru_cache
from typing import Any, TypeVar, get_args
from urllib.parse import parse_qsl, quote, quote_plus, urlsplit, urlunsplit

from pydantic import BaseModel

SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key",
                            "api-key", "x-auth-token"})
REDACTED = "<redacted>"
_MIN_LEN = 4  # shorter values would mask ordinary words
_PARTIAL = 6  # a truncated secret is masked once this many of its first characters remain
_PARTIAL_WORD = 8  # ... and from this many on even where a letter or digit follows (see _mask_prefixes)
_MAX_SECRETS = 1000  # insertion-ordered and bounded: rotated credentials must not grow it forever
_SCHEMES = ("bearer", "basic", "token", "apikey", "digest")

# a credential after an auth scheme word; the token must not be an ordinary lower-case word ("basic probe")
_AUTH = re.compile(r"\b([Bb]earer|[Bb]asic|BEARER|BASIC)(\s+)(?=\S*[A-Z0-9+/=_.~-])[A-Za-z0-9._~+/=-]{8,}")
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@?#]+@")

_secrets: dict[str, tuple[str, ...]] = {}  # registered value -> the forms it may be echoed in
_ephemeral: dict[str, tuple[str, ...]] = {}  # the same for values made for one run (`register(ephemeral=True)`)
_MAX_EPHEMERAL = 3 * 512  # three a push round trip, for as many as the push receiver holds at once
_forms: tuple[str, ...] = ()  # every form of every secret, longest first
_cores: tuple[str, ...] = ()  # the plain values, for prefix (truncation) matching


def is_secret_header(name: str, extra: frozenset[str] = frozenset()) -> bool:
    low = name.lower()
    return low in SECRET_HEADERS or low in extra or "token" in low or "secret" in low or "key" in low


def headers(h: Mapping[str, str], extra: frozenset[str] = frozenset()) -> dict[str, str]:
    return {k: (REDACTED if is_secret_header(k, extra) else v) for k, v in h.items()}


def register(value: str, *, ephemeral: bool = False) -> None:
    """A value that must never be emitted (a resolved credential), with the forms it may be echoed in.

    `ephemeral`: a value the probe made for one run (a push round trip's webhook token and credentials), kept in
    a table of its own: three of them a push run would otherwise evict the operator's credentials that are
    registered once (the web auth token, a configured URL's `?api_key=`) after 334 push runs."""
    table = _ephemeral if ephemeral else _secrets
    if value in table:  # already known (every probe re-registers its credentials): refresh its place in the order
        table[value] = table.pop(value)
        return
    if len(value) < _MIN_LEN:
        return
    bound = _MAX_EPHEMERAL if ephemeral else _MAX_SECRETS
    _text_cached.cache_clear()  # what was scrubbed before may hold this secret
    _unshare()  # and so may every object shared as clean: its cache scrubs a new one on its next use
    table[value] = _forms_of(value)
    while len(table) > bound:
        del table[next(iter(table))]
    _index()


def _index() -> None:
    global _forms, _cores
    both = (*_secrets.items(), *_ephemeral.items())
    forms = {f for _, fs in both for f in fs}
    _forms = tuple(sorted(forms, key=len, reverse=True))
    # prefix matching only on the credentials themselves: "Bearer " alone is not a secret
    _cores = tuple(sorted({c for v, _ in both for c in _core_values(v) if not _has_scheme(c)}, key=len,
                          reverse=True))


# query parameters whose value is a credential by its name (`?api_key=`, `?access_token=`, `?sig=`, `?code=`)
_CREDENTIAL_PARAM = re.compile(r"(?i)token|secret|key|sig|pass|pwd|auth|credential|code|session")


def register_url(url: str) -> None:
    """The credentials a configured URL carries in its query string (a gateway's `?api_key=...`), registered like
    any resolved credential, so no output prints them. Only for URLs from the operator (config, command line):
    an agent's or a caller's could otherwise evict real credentials from the bounded table."""
    try:
        query = urlsplit(url).query
    except ValueError:
        return
    for name, value in parse_qsl(query, keep_blank_values=False):
        if _CREDENTIAL_PARAM.search(name):
            register(value)


def _has_scheme(value: str) -> bool:
    scheme, sep, _ = value.partition(" ")
    return bool(sep) and scheme.lower() in _SCHEMES


def registered() -> tuple[str, ...]:
    return tuple(_secrets)


def _core_values(value: str) -> set[str]:
    """The value, the token of `Scheme token`, and the `user:pass` and password inside a Basic credential."""
    out = {value.strip()}
    scheme, _, token = value.strip().partition(" ")
    if scheme.lower() in _SCHEMES and token.strip():
        out.add(token.strip())
        if scheme.lower() == "basic":
            try:
                pair = base64.b64decode(token.strip(), validate=True).decode("utf-8")
            except (binascii.Error, UnicodeDecodeError):
                pair = ""
            if pair:
                out.add(pair)
                out.add(pair.partition(":")[2])
    return {v for v in out if len(v) >= _MIN_LEN}


def _forms_of(value: str) -> tuple[str, ...]:
    out: set[str] = set()
    for v in _core_values(value):
        raw = v.encode()
        b64 = base64.b64encode(raw).decode()
        url64 = base64.urlsafe_b64encode(raw).decode()
        out |= {v, quote(v, safe=""), quote(v), quote_plus(v), b64, b64.rstrip("="), url64, url64.rstrip("="),
                json.dumps(v)[1:-1], json.dumps(v, ensure_ascii=False)[1:-1], html.escape(v)}
        out |= {raw.hex(), raw.hex().upper()}
        out |= {f for f in _embedded_b64(raw) if len(f) >= _MIN_EMBEDDED}
        # JSON with `/` escaped (PHP's json_encode), percent-encoding in lower-case hex
        out |= {json.dumps(v)[1:-1].replace("/", "\\/"), _LOWER_HEX.sub(lambda m: m[0].lower(), quote(v, safe=""))}
        if len(v) >= _PARTIAL_WORD:  # long enough that no ordinary word is one of these
            out |= {v[::-1], v.upper(), v.lower()}  # what a careless or hostile agent echoes reversed or re-cased
    return tuple(f for f in out if len(f) >= _MIN_LEN)


_LOWER_HEX = re.compile(r"%[0-9A-F]{2}")
_MIN_EMBEDDED = 8  # an embedded base64 form of fewer characters could match ordinary base64 by chance


def _embedded_b64(raw: bytes) -> set[str]:
    """The value base64-encoded inside a longer blob (an agent encoding all it received): at each of the three
    alignments, the whole quads that encode the value's bytes alone (the quads it shares with its neighbours differ
    from blob to blob, and hold at most two of its bytes at each end)."""
    out: set[str] = set()
    for skip in range(3):
        core = raw[skip:]
        core = core[: len(core) // 3 * 3]
        if core:
            out |= {base64.b64encode(core).decode(), base64.urlsafe_b64encode(core).decode()}
    return out


def text(s: str) -> str:
    """`s` with every registered secret (in any known form), auth credential and URL userinfo masked."""
    if not s:
        return s
    if len(s) > _CACHED_LEN:
        return _text(s)
    return _text_cached(s)


# A probe's result repeats the same strings run after run (check messages, card fields): they are scrubbed once.
# The cache holds only what `_text` returns for the secrets registered now, so `register` clears it.
_CACHED_LEN = 512


def _text(s: str) -> str:
    out = _scrub(s)
    if "\\u" in s:  # a JSON body shown raw (a snippet) may spell a secret in escapes: judged decoded
        decoded = _ESCAPED.sub(_unescape, s)
        if decoded != s and (masked := _scrub(decoded)) != decoded:
            out = masked
    if not out.isprintable() and _UNPRINTABLE.search(out):  # isprintable: one C pass, true for most text
        return _UNPRINTABLE.sub(_visible, out)
    return out


# What an agent's text may hold that no output can carry as it is: C0 controls but tab and newline, DEL, C1, and
# lone surrogates (a JSON "\ud800" decodes to one). Raw, a surrogate cannot be encoded as UTF-8 (every report
# format failed: `check` said "internal error"), a control character breaks JUnit XML and steers the operator's
# terminal (ESC ] 0 ; ... BEL sets its title, ESC [ 2 J clears it). Each is shown as an escape: \x1b, \ud800.
_UNPRINTABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


def _visible(m: re.Match[str]) -> str:
    code = ord(m[0])
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


# JSON \uXXXX escapes of printable ASCII only (what credentials are made of): never a surrogate or a control
# character in the text shown instead
_ESCAPED = re.compile(r"\\u00([2-7][0-9A-Fa-f])")


def _unescape(m: re.Match[str]) -> str:
    return chr(int(m[1], 16))


def _scrub(s: str) -> str:
    if "@" in s:
        s = _USERINFO.sub(lambda m: f"{m.group(1)}{REDACTED}@", s)
    if "earer" in s or "asic" in s or "EARER" in s or "ASIC" in s:  # in every match of _AUTH; the regex costs more
        s = _AUTH.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", s)
    for form in _forms:
        if form in s:
            s = s.replace(form, REDACTED)
    for core in _cores:
        s = _mask_prefixes(s, core)
        s = _mask_suffix(s, core)
    return s


_text_cached = lru_cache(maxsize=8192)(_text)


def _mask_prefixes(s: str, secret: str) -> str:
    """Mask what a truncation left of a secret: a run of at least its first `_PARTIAL` characters.

    A run shorter than `_PARTIAL_WORD` that a letter or digit continues is a word that merely starts like the
    secret ("seconds" for a secret "second-…"), not what a cut left (a cut ends the text or is followed by what
    wraps it: a quote, an ellipsis, a space); masking it would rewrite ordinary text and metric names."""
    head = secret[:_PARTIAL]
    if len(secret) <= _PARTIAL or head not in s:
        return s
    out, i, pos = [], 0, 0
    while (j := s.find(head, pos)) >= 0:
        n = _PARTIAL
        while n < len(secret) and j + n < len(s) and s[j + n] == secret[n]:
            n += 1
        if n < _PARTIAL_WORD and j + n < len(s) and s[j + n].isalnum():
            pos = j + 1
            continue
        out.append(s[i:j] + REDACTED)
        i = pos = j + n
    return "".join(out) + s[i:]


def _mask_suffix(s: str, secret: str) -> str:
    """Mask a run of at least the last `_PARTIAL_WORD` characters of a secret: the tail an agent left when it split
    the secret (two parts, events or chunks), whose head `_mask_prefixes` masks."""
    tail = secret[-_PARTIAL_WORD:]
    if len(secret) <= _PARTIAL_WORD or tail not in s:
        return s
    out, i, pos = [], 0, 0
    while (j := s.find(tail, pos)) >= 0:
        start, k = j, len(secret) - _PARTIAL_WORD
        while start > i and k > 0 and s[start - 1] == secret[k - 1]:
            start, k = start - 1, k - 1
        out.append(s[i:start] + REDACTED)
        i = pos = j + len(tail)
    return "".join(out) + s[i:]


def deep(value: Any) -> Any:
    """`text` applied to every string in a JSON-like value (keys that name a credential hide their value)."""
    if isinstance(value, str):
        return text(value)
    if isinstance(value, dict):
        return {k: (REDACTED if isinstance(k, str) and is_secret_header(k) and isinstance(v, str) else deep(v))
                for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [deep(v) for v in value]
    return value


_R = TypeVar("_R", bound=BaseModel)


def result(r: _R) -> _R:
    """Scrub a ProbeResult in place and return it: every string in it, whatever field holds it (card text,
    details, messages, exchanges, per-interface entries, the extended card's additions), so a field added
    later is covered without being listed here. Enum values (reasons, states) are code's, never an agent's."""
    _scrub_model(r, set())
    return r


# Objects shared between results (interned check results, the card-validation cache's), scrubbed once when they
# were shared under the secrets registered then: the walk skips them. Nobody mutates a shared object (copy-on-write:
# `probe.results.copy_check`). `register` forgets them all, since what was clean may hold the new secret; the caches
# that hand them out ask `is_shared` and share a newly scrubbed one instead. The objects are kept alive here, so an
# id in the table is its object's own.
_MAX_SHARED = 65_536  # above what the bounded tables that share can hold together (catalogue, card, grading)
_shared: dict[int, BaseModel] = {}
_epoch = 0  # counts the times the table was forgotten: a cache of shared objects made in another epoch is stale


def share(model: _R) -> _R:
    """Scrub `model` (not yet in any result) and mark it clean for every result it will be part of."""
    _scrub_model(model, set())
    if len(_shared) >= _MAX_SHARED:  # bounded: the caches re-share what they still hand out
        _unshare()
    _shared[id(model)] = model
    return model


def epoch() -> int:
    """Every object shared in this epoch is still shared (`is_shared`) until the epoch changes."""
    return _epoch


def _unshare() -> None:
    global _epoch
    _shared.clear()
    _epoch += 1


def is_shared(model: BaseModel) -> bool:
    """`model` was scrubbed by `share` under the secrets registered now."""
    return _shared.get(id(model)) is model


def _scrub_model(model: BaseModel, seen: set[int]) -> None:
    key = id(model)
    # the same object twice (an interface's steps are the result's): scrubbed once; a shared one: already clean
    if key in seen or key in _shared:
        return
    fields = _text_fields(type(model))
    if not fields:  # numbers only (phases)
        return
    seen.add(key)
    values = model.__dict__
    for name, _plain in fields:  # the flag: what the str fast path below now checks by value
        value = values.get(name, _MISSING)
        if value is _MISSING:
            value = getattr(model, name)
        kind = value.__class__
        if kind is str:  # a `str` field (or a str in a wider one): the common case, without the dispatch below
            if value:
                clean = text(value)
                if clean != value:
                    setattr(model, name, clean)
            continue
        if value is None or (not value and (kind is list or kind is dict)):  # nothing to scrub: no call
            continue
        clean = _scrub_value(value, seen)
        if clean is not value:
            setattr(model, name, clean)


_PLAIN = frozenset({int, float, bool, type(None), bytes})
_MISSING: Any = object()


@cache  # one entry per model class
def _text_fields(model: type[BaseModel]) -> tuple[tuple[str, bool], ...]:
    """The fields of a model whose type can hold a string (or a model, list or dict that can), each with whether
    it is a plain `str` (or `str | None`) field: the others (numbers, flags, enums, times) cannot carry an agent's
    text and are not walked."""
    return tuple((name, f.annotation in (str, str | None)) for name, f in model.model_fields.items()
                 if _may_hold_text(f.annotation))


def _may_hold_text(tp: Any) -> bool:
    if tp is None or tp is type(None):
        return False
    if isinstance(tp, type) and not get_args(tp):
        return not issubclass(tp, Enum | int | float | bytes | datetime)  # bool is an int; StrEnum an Enum
    args = get_args(tp)
    return not args or any(_may_hold_text(a) for a in args)  # unknown or Any: walked; unions: any member


def _scrub_value(value: Any, seen: set[int]) -> Any:
    """`value` with its strings scrubbed; models and lists in place (the same object comes back), a dict anew
    only when something in it changed."""
    kind = type(value)
    if kind in _PLAIN:
        return value
    if kind is str:
        clean = text(value)
        return value if clean == value else clean
    if kind is list:  # most often a result's checks: shared ones are skipped without a call
        for i, item in enumerate(value):
            if id(item) in _shared:  # a live object's id is its own: `item` is the shared object
                continue
            clean = _scrub_value(item, seen)
            if clean is not item:
                value[i] = clean
        return value
    if isinstance(value, BaseModel):
        _scrub_model(value, seen)
        return value
    if isinstance(value, Enum):
        return value
    if isinstance(value, str):
        clean = text(value)
        return value if clean == value else clean
    if isinstance(value, list):
        for i, item in enumerate(value):
            clean = _scrub_value(item, seen)
            if clean is not item:
                value[i] = clean
        return value
    if isinstance(value, dict):
        items = [((text(k) if isinstance(k, str) else k), k, _scrub_value(v, seen), v) for k, v in value.items()]
        if all(ck == k and cv is v for ck, k, cv, v in items):
            return value
        return {ck: cv for ck, _, cv, _ in items}
    return value


def strip_userinfo(u: str) -> str:
    """The URL without `user:pass@`: credentials in a URL are never sent (and never printed)."""
    if "@" not in u:  # no userinfo without an "@": the URL as it is (3 a probe, each a urlsplit saved)
        return u
    return _strip_parsed(u)


def _strip_parsed(u: str) -> str:
    """strip_userinfo's general path: the URL parsed, its userinfo dropped."""
    try:
        parts = urlsplit(u)
    except ValueError:
        return u
    if "@" not in parts.netloc:
        return u
    return urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], parts.path, parts.query, parts.fragment))


def has_userinfo(u: str) -> bool:
    try:
        return "@" in urlsplit(u).netloc
    except ValueError:
        return False


# Two URLs an agent a probe (its card's, its interface's), each a miss once the fleet outgrows the cache (13 us
# each): sized for the fleet of one replica (50,000 agents), like the card validation cache.
URL_CACHE_SIZE = 131_072


@lru_cache(maxsize=URL_CACHE_SIZE)
def url(u: str) -> str:
    """Drop userinfo and the query string's values: either may carry a credential. A URL with neither comes back
    as the very same string (the cache keeps one string for it, not two)."""
    try:
        parts = urlsplit(u)
        port = parts.port
    except ValueError:
        return "<unparsable url>"
    netloc = parts.hostname or ""
    if port:
        netloc = f"{netloc}:{port}"
    if parts.hostname and ":" in parts.hostname:
        netloc = f"[{parts.hostname}]" + (f":{port}" if port else "")
    query = "&".join(p.split("=", 1)[0] + "=" + REDACTED for p in parts.query.split("&") if p) if parts.query else ""
    out = urlunsplit((parts.scheme, netloc, parts.path, query, ""))
    return u if out == u else out
