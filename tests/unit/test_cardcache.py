"""RFC 9111 freshness of the Agent Card as a private cache (probe.wire.cardcache): every directive the daemon
honours, malformed and duplicated values, Age, Expires/Date and clock edge cases, the 304's identification and
the store's bounds."""

from __future__ import annotations

import email.utils

import pytest
from multidict import CIMultiDict, CIMultiDictProxy

from probe import redact
from probe.results import Exchange, HttpPhases, TlsInfo
from probe.wire import cardcache as cc
from probe.wire.card import Card, build, parse
from probe.wire.http import Response

NOW = 1_800_000_000.0  # a fixed Unix time: the tests pass their own clock


def hdrs(*pairs: tuple[str, str]) -> CIMultiDict[str]:
    return CIMultiDict(pairs)


def date(t: float) -> str:
    return email.utils.formatdate(t, usegmt=True)


def fresh(*pairs: tuple[str, str], request_time: float = NOW, response_time: float = NOW) -> cc.Freshness:
    return cc.freshness(hdrs(*pairs), request_time, response_time)


# ---- Cache-Control parsing

@pytest.mark.parametrize(("lines", "max_age"), [
    (["max-age=300"], 300),
    (["MAX-AGE=300"], 300),  # directive names are case-insensitive
    (['max-age="300"'], 300),  # recipients accept the quoted-string form
    (["public, max-age=60"], 60),
    (["private, max-age=60"], 60),  # we are a private cache
    (["s-maxage=600, max-age=10"], 10),  # s-maxage is for shared caches
    ([", ,max-age=5,,"], 5),  # empty list members are ignored
    (["no-transform", "max-age=7"], 7),  # a field over two lines is one list
    (['community="UCI, x", max-age=9'], 9),  # a comma inside a quoted string splits nothing
    (["max-age=0300"], 300),
    (["max-age=99999999999999999999999"], cc.MAX_DELTA),  # RFC 9111 §1.2.2: 2^31 at most
])
def test_max_age(lines: list[str], max_age: int) -> None:
    d = cc.parse_cache_control(lines)
    assert d.max_age == max_age and d.problem is None


@pytest.mark.parametrize("lines", [
    ["max-age=-1"], ["max-age=+5"], ["max-age=1.5"], ["max-age=abc"], ["max-age="], ["max-age"],
    ['max-age="30'], ["max-age = 30"], ["max-age=30 s"], ["max-age=٣٠"],  # non-ASCII digits are no DIGIT
    ["max-age=30, max-age=30"], ["max-age=30", "max-age=60"],  # duplicated: stale (§4.2.1)
])
def test_malformed_or_duplicated_max_age_is_stale(lines: list[str]) -> None:
    d = cc.parse_cache_control(lines)
    assert d.problem is not None
    f = cc.freshness(hdrs(*(("Cache-Control", v) for v in lines)), NOW, NOW)
    assert f.lifetime == 0 and f.store  # stale, not an error: revalidated (or fetched) on the next use
    assert "stale" in f.basis


def test_flags() -> None:
    d = cc.parse_cache_control(["No-Store, no-cache, must-revalidate"])
    assert (d.no_store, d.no_cache, d.must_revalidate) == (True, True, True)
    assert cc.parse_cache_control(['no-cache="Set-Cookie, X-Foo", max-age=60']).no_cache  # qualified: unqualified


def test_split_list_keeps_quoted_commas_and_escapes() -> None:
    assert cc.split_list('a, b="x, \\"y\\", z", c') == ["a", 'b="x, \\"y\\", z"', "c"]
    assert cc.split_list(" , ") == []


# ---- freshness lifetime

def test_no_store_and_vary_star_are_never_stored() -> None:
    assert not fresh(("Cache-Control", "no-store, max-age=300")).store
    assert not fresh(("Cache-Control", "max-age=300"), ("Vary", "Accept, *")).store
    assert fresh(("Cache-Control", "max-age=300"), ("Vary", "A2A-Version")).store


def test_no_cache_and_max_age_zero_revalidate_every_use() -> None:
    f = fresh(("Cache-Control", "no-cache, max-age=300"))
    assert f.always_revalidate and f.lifetime == 0 and f.store
    f = fresh(("Cache-Control", "max-age=0"))
    assert f.lifetime == 0 and not f.always_revalidate


def test_no_caching_headers_have_no_heuristic_freshness() -> None:
    f = fresh(("Last-Modified", date(NOW - 86400 * 365)))  # a year old: a heuristic cache would keep it a month
    assert f.lifetime == 0 and "no caching headers" in f.basis


def test_expires_minus_date() -> None:
    f = fresh(("Date", date(NOW - 10)), ("Expires", date(NOW + 110)))
    assert f.lifetime == 120 and f.basis == "Expires minus Date"
    assert fresh(("Expires", date(NOW + 60))).lifetime == 60  # no Date: the time it was received


@pytest.mark.parametrize("value", ["0", "-1", "yesterday", "Sun, 31 Feb 2026 08:49:37 GMT", "x" * 100])
def test_an_invalid_expires_is_already_expired(value: str) -> None:
    assert fresh(("Expires", value)).lifetime == 0  # RFC 9111 §5.3


def test_duplicated_expires_is_stale_and_max_age_overrides_expires() -> None:
    assert fresh(("Expires", date(NOW + 60)), ("Expires", date(NOW + 60))).lifetime == 0
    assert fresh(("Cache-Control", "max-age=60"), ("Expires", date(NOW - 3600))).lifetime == 60
    assert fresh(("Expires", date(NOW - 60))).lifetime == 0  # in the past: never negative


def test_http_date_forms() -> None:
    t = 784111777.0  # RFC 9110 §5.6.7's example instant
    assert cc.http_date("Sun, 06 Nov 1994 08:49:37 GMT") == t
    assert cc.http_date("Sunday, 06-Nov-94 08:49:37 GMT") == t  # obsolete RFC 850
    assert cc.http_date("Sun Nov  6 08:49:37 1994") == t  # asctime, zoneless: GMT
    for bad in ("", "0", "Sun, 06 Nov 1994 25:49:37 GMT", "Sun, 06 Nov 99999 08:49:37 GMT"):
        assert cc.http_date(bad) is None
    # RFC 9110 §5.6.7's three forms only (RFC 9111 §5.3: any other format is a time in the past): what the
    # standard library's e-mail date parser also takes is not an HTTP-date
    for bad in ("06 Nov 1994 08:49:37", "06 Nov 2099 08:49:37 GMT", "Sun, 06 Nov 2099 08:49:37 EST",
                "Sun, 06 Nov 2099 08:49:37 +0000", "Sun, 06 Nov 2099 08:49:37", "sun, 06 nov 2099 08:49:37 gmt",
                "Sun, 6 Nov 2099 08:49:37 GMT", "Sun,  06 Nov 2099 08:49:37 GMT", "Sun, 06 Nov 2099 8:49:37 GMT",
                "Sun, 06 Nov 2099 08:49 GMT", "Sunday, 06-Nov-2099 08:49:37 GMT", "Sun Nov  6 08:49:37 2099 GMT",
                "Sun, 06 Nov 2099 08:49:37 GMT ", "Sun, ٠٦ Nov 2099 08:49:37 GMT"):
        assert cc.http_date(bad) is None, bad
    assert fresh(("Expires", "06 Nov 2099 08:49:37")).lifetime == 0  # already expired, not fresh for decades


# ---- age (RFC 9111 §4.2.3)

def test_age_header_counts_against_freshness() -> None:
    f = fresh(("Cache-Control", "max-age=300"), ("Age", "100"))
    assert f.initial_age == 100
    assert fresh(("Cache-Control", "max-age=300"), ("Age", "10, 20")).initial_age == 10  # the first member
    for bad in ("-5", "abc", "1.5", ""):
        assert fresh(("Cache-Control", "max-age=300"), ("Age", bad)).initial_age == 0  # ignored


def test_response_delay_and_apparent_age() -> None:
    f = fresh(("Cache-Control", "max-age=300"), ("Age", "5"), request_time=NOW - 2, response_time=NOW)
    assert f.initial_age == 7  # age_value + response_delay
    # the server's clock an hour behind ours: the response looks an hour old (stale at once with max-age=300)
    assert fresh(("Cache-Control", "max-age=300"), ("Date", date(NOW - 3600))).initial_age == 3600
    # its clock ahead: never a negative age
    assert fresh(("Cache-Control", "max-age=300"), ("Date", date(NOW + 3600))).initial_age == 0
    # a malformed or duplicated Date is the time of receipt
    assert fresh(("Cache-Control", "max-age=300"), ("Date", "nonsense")).initial_age == 0
    assert fresh(("Cache-Control", "max-age=300"), ("Date", date(NOW - 50)), ("Date", date(NOW - 50))).initial_age == 0


# ---- entries: freshness under the cap, validators, the 304

def entry(*pairs: tuple[str, str], received: float = 1000.0) -> cc.Entry:
    h = hdrs(*pairs)
    e = cc.Entry.of(key(), _card(h), (), 200, cc.freshness(h, NOW, NOW), NOW)
    e.received = received
    return e


def _card(h: CIMultiDict[str]) -> Card:
    body = b'{"name": "x", "supportedInterfaces": []}'
    resp = Response("http://a/.well-known/agent-card.json", 200, CIMultiDictProxy(h), body,
                    Exchange(method="GET", url="http://a/.well-known/agent-card.json", status=200))
    card = build(url=resp.url, doc=parse(body), response=resp)
    card.requested = resp.url
    return card


def key(url: str = "http://a") -> cc.Key:
    return cc.Key(url, None, None, (None, None, None, False), False)


def test_fresh_until_the_lifetime_or_the_cap() -> None:
    e = entry(("Cache-Control", "max-age=300"))
    assert e.is_fresh(300, now=1000.0) and e.is_fresh(300, now=1299.9)
    assert not e.is_fresh(300, now=1300.0)  # fresh while age < lifetime
    assert e.is_fresh(60, now=1059) and not e.is_fresh(60, now=1060)  # the cap is the tighter bound
    hostile = entry(("Cache-Control", "max-age=31536000"))
    assert not hostile.is_fresh(300, now=1300.0)  # a year's max-age delays a check by the cap at most
    assert not e.is_fresh(0, now=1000.0)
    aged = entry(("Cache-Control", "max-age=300"), ("Age", "250"))
    assert aged.is_fresh(300, now=1049) and not aged.is_fresh(300, now=1050)
    assert not entry(("Cache-Control", "no-cache, max-age=300")).is_fresh(300, now=1000.0)
    # must-revalidate changes nothing while fresh; stale, it is revalidated like every stale card
    mr = entry(("Cache-Control", "max-age=60, must-revalidate"))
    assert mr.is_fresh(300, now=1059) and not mr.is_fresh(300, now=1060)


def test_monotonic_time_going_backwards_never_makes_an_entry_younger() -> None:
    e = entry(("Cache-Control", "max-age=300"), ("Age", "10"))
    assert e.age(now=900.0) == 10


def test_conditional_headers() -> None:
    lm = date(NOW - 60)
    e = entry(("Cache-Control", "max-age=0"), ("ETag", 'W/"v1"'), ("Last-Modified", lm))
    assert e.conditional() == {"If-None-Match": 'W/"v1"', "If-Modified-Since": lm}
    assert entry(("ETag", '"a"'), ("ETag", '"b"')).conditional() == {}  # ambiguous: no validator
    assert entry(("Last-Modified", "not a date")).conditional() == {}
    assert entry(("ETag", '"' + "x" * 2000 + '"')).conditional() == {}  # absurdly long: not echoed


def test_a_304_identifies_the_stored_card() -> None:
    e = entry(("Cache-Control", "max-age=60"), ("ETag", '"v1"'), ("Last-Modified", date(NOW - 60)))
    sent = e.conditional()
    assert e.identifies(hdrs(("ETag", '"v1"')), sent) is None
    assert e.identifies(hdrs(("ETag", 'W/"v1"')), sent) is None  # weak comparison (If-None-Match's)
    why = e.identifies(hdrs(), sent)  # the probe sent If-None-Match: a 304 without an ETag identifies nothing
    assert why is not None and "no ETag" in why  # (RFC 9110 §15.4.5 MUST, RFC 9111 §4.3.4)
    why = e.identifies(hdrs(("ETag", '"v2"')), sent)
    assert why is not None and '"v2"' in why and '"v1"' in why  # RFC 9111 §4.3.4: must not update
    assert e.identifies(hdrs(("ETag", '"v1"'), ("ETag", '"v1"')), sent) is not None
    assert e.identifies(hdrs(("Last-Modified", date(NOW))), sent) is not None
    assert e.identifies(hdrs(("Last-Modified", date(NOW - 60))), sent) is None


def test_a_304_without_validators_identifies_a_card_stored_with_last_modified_only() -> None:
    e = entry(("Cache-Control", "max-age=60"), ("Last-Modified", date(NOW - 60)))
    sent = e.conditional()
    assert sent == {"If-Modified-Since": date(NOW - 60)}
    assert e.identifies(hdrs(), sent) is None  # RFC 9110 §15.4.5 does not require Last-Modified on a 304


def test_a_304_naming_a_stored_etag_too_long_to_send_identifies_it() -> None:
    long_tag = '"' + "x" * 2000 + '"'  # valid, but not echoed in If-None-Match (MAX_VALIDATOR)
    e = entry(("Cache-Control", "max-age=0"), ("ETag", long_tag), ("Last-Modified", date(NOW - 60)))
    sent = e.conditional()
    assert sent == {"If-Modified-Since": date(NOW - 60)}
    assert e.identifies(hdrs(("ETag", long_tag)), sent) is None  # the 304 sends the card's ETag, as it MUST
    assert e.identifies(hdrs(("ETag", '"other"')), sent) is not None


def test_a_304_refreshes_from_its_own_headers() -> None:
    e = entry(("Cache-Control", "max-age=60"), ("ETag", '"v1"'), ("Date", date(NOW - 30)), ("Age", "20"))
    e.refresh(hdrs(("Cache-Control", "max-age=600"), ("Date", date(NOW))), (), 304, NOW, NOW)
    assert e.fresh.lifetime == 600 and e.fresh.initial_age == 0  # Date and Age only from the 304
    assert e.etag == '"v1"' and e.http_status == 304
    e.refresh(hdrs(("Date", date(NOW))), (), 304, NOW, NOW)  # no Cache-Control: the stored one still holds
    assert e.fresh.lifetime == 600
    e.refresh(hdrs(("Cache-Control", "no-store")), (), 304, NOW, NOW)
    assert not e.fresh.store


# ---- the store

def test_store_keys_epochs_and_bounds() -> None:
    store = cc.CardCache(max_entries=2)
    e = entry(("Cache-Control", "max-age=60"))
    assert store.put("a", e) and store.get("a", key()) is e
    assert store.get("a", key("http://other")) is None and len(store) == 0  # the agent's config changed
    assert store.put("a", e) and store.put("b", entry()) and not store.put("c", entry())  # full: not admitted
    assert store.put("a", entry()) and len(store) == 2  # a known agent is replaced
    assert store.size == 2 * e.size
    store.retain(["b"])
    assert list(store.entries) == ["b"]
    redact.register("a-secret-registered-now-9f3b")  # what was scrubbed before may hold it: unusable now
    assert store.get("b", key()) is None
    assert store.cap(None) == 0 and store.cap(30) == 30
    store.default_max_age = 300
    assert store.cap(None) == 300 and store.cap(0) == 0


def test_store_byte_budget() -> None:
    e = entry(("Cache-Control", "max-age=60"))
    store = cc.CardCache(max_bytes=e.size * 2)
    assert store.put("a", e) and store.put("b", entry()) and not store.put("c", entry())
    store.drop("a")
    assert store.size == e.size and store.put("c", entry())


def test_the_stored_card_is_rebuilt_as_fetched() -> None:
    e = entry(("Cache-Control", "max-age=60"), ("Content-Type", "application/json"), ("ETag", '"v1"'),
              ("X-Other", "not kept"))
    card = e.card()
    assert card.doc == {"name": "x", "supportedInterfaces": []} and card.family == "1.0"
    assert card.url == card.requested == "http://a/.well-known/agent-card.json"
    assert card.response is not None and card.response.content_type == "application/json"
    assert card.response.headers.get("ETag") == '"v1"' and "X-Other" not in card.response.headers
    assert len(e.body) < 200  # compressed, and held at its own size


def test_exchanges_pack_and_unpack_to_equal_models() -> None:
    tls = TlsInfo(version="TLSv1.3", cipher="TLS_AES_128_GCM_SHA256", earliest_expiry=1.0e9)
    e = Exchange(method="GET", url="https://a/x", status=200, content_type="application/json", duration_s=0.01,
                 phases=HttpPhases(resolve=0.001, connect=0.002, tls=0.003, processing=0.004, transfer=0.005),
                 tls=tls, retried="why")
    (back,) = [cc.unpack(p) for p in cc.pack([e])]
    assert back == e and back is not e and back.tls == tls and back.tls is not tls  # as it was; its own


def _same_model(got: Exchange | HttpPhases, want: Exchange | HttpPhases) -> None:
    """Equal as pydantic compares them, and in what == does not compare: which fields count as set, field order."""
    assert got == want and type(got) is type(want)
    assert got.__pydantic_fields_set__ == want.__pydantic_fields_set__
    assert list(got.__dict__) == list(want.__dict__)
    assert got.model_dump_json() == want.model_dump_json()
    assert got.model_dump_json(exclude_unset=True) == want.model_dump_json(exclude_unset=True)


def test_the_fast_constructors_build_what_model_construct_builds() -> None:
    e = Exchange(method="GET", url="https://a/x", status=200, duration_s=0.01,
                 phases=HttpPhases(resolve=0.001, connect=0.002))
    (back,) = [cc.unpack(p) for p in cc.pack([e])]
    values = {f: getattr(e, f) for f in Exchange.model_fields}
    _same_model(back, Exchange.model_construct(**{**values, "phases": HttpPhases.model_construct(
        **e.phases.model_dump())}))
    _same_model(back.phases, HttpPhases.model_construct(**e.phases.model_dump()))
    card = entry(("Content-Type", "application/json")).card()
    assert card.response is not None
    built = card.response.exchange
    _same_model(built, Exchange.model_construct(method="GET", url="http://a/.well-known/agent-card.json", status=200,
                                                content_type="application/json"))
    _same_model(built.phases, HttpPhases())
    assert built.phases is not entry().card().response.exchange.phases  # type: ignore[union-attr]  # its own


@pytest.mark.parametrize("body", [
    b'{"name": "x", "supportedInterfaces": [], "n": 1e400, "big": 123456789012345678901234567890}',
    '{"name": "caf\u00e9 \\u00e9 \\ud83d\\ude00", "url": "http://a", "a": {"b": [1.5, -0.0, null, true]}}'.encode(),
])
def test_the_stored_body_parses_as_the_strict_parser_parsed_it(body: bytes) -> None:
    h = hdrs(("Cache-Control", "max-age=60"))
    resp = Response("http://a/c.json", 200, CIMultiDictProxy(h), body, Exchange(method="GET", url="http://a/c.json"))
    card = build(url=resp.url, doc=parse(body), response=resp)
    doc = cc.Entry.of(key(), card, (), 200, cc.freshness(h, NOW, NOW), NOW).card().doc
    assert doc == parse(body) and list(doc) == list(parse(body)) and repr(doc) == repr(parse(body))


def test_the_cached_detail_times_read_as_strftime_reads_them() -> None:
    import math
    import random
    from datetime import UTC, datetime

    from probe.engine import _clock
    rng = random.Random(14)
    for t in [0.0, 59.999999, 1_796_000_000.5, *(rng.uniform(0, 4e9) for _ in range(2000))]:
        assert _clock(math.floor(t)) == datetime.fromtimestamp(t, UTC).strftime("%H:%M:%S UTC") or (
            t % 1 > 0.9999995)  # strftime's microseconds round up to the next second there; the clock keeps it
