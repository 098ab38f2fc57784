"""A cached card's discover checks are judged once per card-cache entry (`Entry.judged`), and what validate derives
from the card and the run's Target (`Entry.planned`) is made once per Target; later runs take them: the results are
the very ones a fresh judgment of the stored card gives, shared checks the same objects, unshared ones (past the
shared table's bound) made anew for each result. Real loopback agents, the engine as the daemon calls it
(`run_interfaces` with the runner's card cache)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from aiohttp import web

from probe import redact
from probe.checks import catalogue
from probe.engine import run_interfaces
from probe.results import ProbeResult, StepName
from probe.target import Target
from probe.wire import cardcache
from probe.wire.http import HttpClient
from tests.agents.cards import valid_card
from tests.agents.server import serve

Variant = Callable[[str], dict[str, Any]]


def _app(path: str, headers: dict[str, str], *, content_type: str = "application/json",
         redirect_from: str | None = None, card: Variant | None = None) -> web.Application:
    async def card_route(request: web.Request) -> web.Response:
        origin = f"http://{request.host}"
        doc = (card or (lambda o: valid_card(f"{o}/rpc", name="judged")))(origin)
        return web.json_response(doc, headers=headers, content_type=content_type)

    async def moved(_request: web.Request) -> web.Response:
        raise web.HTTPFound(path)

    async def rpc(request: web.Request) -> web.Response:
        body = await request.json()
        return web.json_response({"jsonrpc": "2.0", "id": body["id"],
                                  "error": {"code": -32001, "message": "task not found"}})

    app = web.Application()
    app.router.add_get(path, card_route)
    if redirect_from is not None:
        app.router.add_get(redirect_from, moved)
    app.router.add_post("/rpc", rpc)
    return app


CACHE = {"Cache-Control": "max-age=300", "ETag": '"v1"'}
VARIANTS: dict[str, web.Application] = {
    "plain": _app("/.well-known/agent-card.json", {**CACHE, "Last-Modified": "Tue, 01 Dec 2026 10:00:00 GMT"}),
    # every discover check that can fail on a cacheable card: its content type, its validators, Last-Modified
    "sloppy": _app("/.well-known/agent-card.json", {"Cache-Control": "max-age=300", "Last-Modified": "yesterday"},
                   content_type="text/plain"),
    "legacy path": _app("/.well-known/agent.json", CACHE),
    "redirected": _app("/cards/judged.json", CACHE, redirect_from="/.well-known/agent-card.json"),
    # a card the official clients refuse (capabilities not an object: protobuf's parser fails) is card_invalid
    "invalid card": _app("/.well-known/agent-card.json", CACHE,
                         card=lambda o: valid_card(f"{o}/rpc", name="judged", capabilities="all of them")),
    # a MUST they read past (no name: json_format does not enforce REQUIRED) is a finding; the card is planned
    "card without a name": _app("/.well-known/agent-card.json", CACHE,
                                card=lambda o: {k: v for k, v in valid_card(f"{o}/rpc").items() if k != "name"}),
    # validate's own findings: credentials in the interface URL (a failed URL check with its advice), an extension
    # the agent requires (its header on every call)
    "interface URL with credentials": _app("/.well-known/agent-card.json", CACHE, card=lambda o: valid_card(
        o.replace("http://", "http://probe:pw@") + "/rpc", name="judged")),
    "required extension": _app("/.well-known/agent-card.json", CACHE, card=lambda o: valid_card(
        f"{o}/rpc", name="judged", capabilities={"streaming": True, "extensions": [
            {"uri": "urn:example:required", "required": True}]})),
}
HEADERS = {"X-Probe": "yes", "Authorization": "Bearer judged-token-0123456789"}  # one public, one secret


def _comparable(r: ProbeResult) -> str:
    """The result's JSON without what differs run to run by nature: start time, durations and phases, the cache's
    age."""
    text = r.model_dump_json(exclude={"started_at", "duration_s"})
    text = re.sub(r'"(duration_s|resolve|connect|tls|processing|transfer)":[0-9.e-]+', r'"\1":0', text)
    return re.sub(r"age \d+s", "age Ns", text)


async def _probe(t: Target, client: HttpClient, cards: cardcache.CardCache) -> ProbeResult:
    return await run_interfaces(t, client, steps=(StepName.PING,), agree=False, cards=cards)


@pytest.mark.parametrize("variant", list(VARIANTS))
async def test_a_memoised_judgment_gives_the_same_result(variant: str) -> None:
    async with serve(VARIANTS[variant]) as origin, HttpClient() as client:
        cards = cardcache.CardCache(default_max_age=300)
        t = Target(name="judged", url=origin, message="hi", fresh_connection=True, headers=HEADERS)
        await _probe(t, client, cards)  # fetched: judged on the wire, no memo
        entry = cards.entries["judged"]
        assert entry.judged is None and entry.planned is None
        first_cached = await _probe(t, client, cards)  # the first cached run judges the card and keeps it
        assert entry.judged is not None and entry.judged[0] == redact.epoch()
        kept, planned = entry.judged, entry.planned
        assert (planned is None) == (variant == "invalid card")  # a card whose MUSTs fail is planned every run
        memoised = await _probe(t, client, cards)
        assert entry.judged is kept and entry.planned is planned
        entry.judged = entry.planned = None  # the same run judged afresh, as before the memo
        fresh = await _probe(t, client, cards)
        other = Target(name="judged", url=origin, message="hi", fresh_connection=True, headers=HEADERS)
        again = await _probe(other, client, cards)  # an equal Target, another object: planned anew
        assert entry.planned is not planned or planned is None
    assert _comparable(memoised) == _comparable(fresh) == _comparable(first_cached) == _comparable(again)
    found = [c for c in memoised.checks if c.step is StepName.DISCOVER]
    assert [c.id for c in found] == [c.id for c in fresh.checks if c.step is StepName.DISCOVER]
    assert all(c is k for c, k in zip(found, kept[1], strict=True))  # the shared objects themselves
    if variant == "sloppy":
        failed = {c.id for c in found if c.status.value == "fail"}
        assert {"card.content_type", "card.cache_headers", "card.last_modified"} <= failed
    if variant == "interface URL with credentials":
        c = memoised.check("interface.no_credentials")
        assert c is not None and c.status.value == "fail" and c.recommendation
    if planned is not None:  # validate's interface checks: the plan's shared objects themselves
        plan_ids = {"interface.selected", "interface.no_path_repeat", "interface.routable_host", "interface.scheme",
                    "interface.no_credentials"}
        mine = [c for c in memoised.checks if c.id in plan_ids]
        assert len(mine) == 5 and all(c is k for c, k in zip(mine, planned.checks, strict=True))  # type: ignore[attr-defined]


async def test_a_planned_run_sends_what_a_fresh_one_sends() -> None:
    """The calls' headers (public ones, the required extension's, the secret one with the flow) from the plan."""
    seen: list[dict[str, str]] = []

    async def rpc(request: web.Request) -> web.Response:
        seen.append({k: request.headers.get(k, "") for k in ("X-Probe", "Authorization", "A2A-Extensions")})
        body = await request.json()
        return web.json_response({"jsonrpc": "2.0", "id": body["id"],
                                  "error": {"code": -32001, "message": "task not found"}})

    app = web.Application()

    async def card_route(request: web.Request) -> web.Response:
        doc = valid_card(f"http://{request.host}/rpc", name="judged", capabilities={
            "streaming": True, "extensions": [{"uri": "urn:example:required", "required": True}]})
        return web.json_response(doc, headers=CACHE)

    app.router.add_get("/.well-known/agent-card.json", card_route)
    app.router.add_post("/rpc", rpc)
    async with serve(app) as origin, HttpClient() as client:
        cards = cardcache.CardCache(default_max_age=300)
        t = Target(name="judged", url=origin, message="hi", fresh_connection=True, headers=HEADERS)
        for _ in range(4):
            assert (await _probe(t, client, cards)).success
        assert cards.entries["judged"].planned is not None
    assert seen == [{"X-Probe": "yes", "Authorization": HEADERS["Authorization"],
                     "A2A-Extensions": "urn:example:required"}] * 4


async def test_unshared_checks_are_made_anew_for_each_result(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(catalogue, "MAX_SHARED_CHECKS", 0)  # a full table: this agent's own messages stay unshared
    # nor an earlier test's: its agent may have had this port (ports are reused) and shared its card.discovered
    monkeypatch.setattr(catalogue, "_SHARED", {})
    async with serve(VARIANTS["plain"]) as origin, HttpClient() as client:
        cards = cardcache.CardCache(default_max_age=300)
        t = Target(name="judged", url=origin, message="hi", fresh_connection=True)
        await _probe(t, client, cards)
        await _probe(t, client, cards)
        entry = cards.entries["judged"]
        assert entry.judged is not None
        own = [c for c in entry.judged[1] if isinstance(c, tuple)]
        assert own and own[0][0] == "card.discovered" and origin in own[0][2]  # "HTTP 200 from <its card URL>"
        a = await _probe(t, client, cards)
        b = await _probe(t, client, cards)
        entry.judged = entry.planned = None
        fresh = await _probe(t, client, cards)
    assert _comparable(a) == _comparable(b) == _comparable(fresh)
    found_a, found_b = (next(c for c in r.checks if c.id == "card.discovered") for r in (a, b))
    assert found_a is not found_b and not redact.is_shared(found_a)  # each result its own (its walk scrubs it)
    assert found_a.__pydantic_fields_set__ == next(c for c in fresh.checks if c.id == "card.discovered"
                                                   ).__pydantic_fields_set__


async def test_a_judgment_from_another_epoch_is_not_used() -> None:
    async with serve(VARIANTS["plain"]) as origin, HttpClient() as client:
        cards = cardcache.CardCache(default_max_age=300)
        t = Target(name="judged", url=origin, message="hi", fresh_connection=True)
        await _probe(t, client, cards)
        await _probe(t, client, cards)
        entry = cards.entries["judged"]
        assert entry.judged is not None
        stale = (entry.judged[0] - 1, ())  # judged under other secrets: nothing of it may be used
        entry.judged = stale
        planned = entry.planned
        assert planned is not None
        planned.epoch -= 1  # type: ignore[attr-defined]
        again = await _probe(t, client, cards)
    assert entry.judged is not stale and entry.judged[0] == redact.epoch()
    assert len([c for c in again.checks if c.step is StepName.DISCOVER]) == len(entry.judged[1]) > 5
    assert entry.planned is not planned and entry.planned.epoch == redact.epoch()  # type: ignore[attr-defined]
    assert len([c for c in again.checks if c.id.startswith("interface.")]) == 6
