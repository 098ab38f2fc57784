"""Discovery: a card URL at any path is recognised, and a failure lists every URL tried with its answer."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from aiohttp import web

from probe.engine import run_probe
from probe.reasons import Reason
from probe.results import ProbeResult, Status, StepName
from probe.target import Target
from probe.wire.http import HttpClient
from tests.agents.server import serve
from tests.agents.versioned import card_for, rpc, versioned_agent

_COMPLETED = {"task": {"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"},
                       "artifacts": [{"artifactId": "a", "parts": [{"text": "ok"}]}]}}


@asynccontextmanager
async def card_at(path: str, *, page: str | None = None) -> AsyncIterator[str]:
    """An agent whose card is only at `path` (nothing at the well-known paths); `page` is HTML at /agent."""
    async def card(_: web.Request) -> web.Response:
        return web.json_response(card_for("1.0", origin))

    async def html(_: web.Request) -> web.Response:
        return web.Response(text=page or "", content_type="text/html")

    async def handle(request: web.Request) -> web.Response:
        body = await request.json()
        return web.json_response({"jsonrpc": "2.0", "id": body["id"], "result": _COMPLETED})

    app = web.Application()
    app.router.add_get(path, card)
    if page is not None:
        app.router.add_get("/agent", html)
    app.router.add_post("/rpc", handle)
    async with serve(app) as origin:
        yield origin


async def _probe(client: HttpClient, url: str) -> ProbeResult:
    return await run_probe(Target(name="t", url=url, timeout=5.0), client, steps=(StepName.INVOKE,))


def _tried(result: ProbeResult) -> list[tuple[str, int | None]]:
    step = result.step(StepName.DISCOVER)
    assert step is not None
    return [(e.url.rsplit(":", 1)[-1].split("/", 1)[-1], e.status) for e in step.exchanges]


async def test_a_json_url_at_any_path_is_tried_as_the_card_first(client: HttpClient) -> None:
    async with card_at("/registry/agents/billing.json") as origin:
        result = await _probe(client, f"{origin}/registry/agents/billing.json")
    assert result.success, result.reason
    assert _tried(result) == [("registry/agents/billing.json", 200)]
    assert result.card_url == f"{origin}/registry/agents/billing.json"


async def test_a_json_url_that_is_missing_falls_back_to_the_origin_well_known_path(client: HttpClient) -> None:
    async with versioned_agent("1.0", {"SendMessage": rpc(_COMPLETED)}) as origin:
        result = await _probe(client, f"{origin}/gone/card.json")
    assert result.success, result.reason
    assert _tried(result) == [("gone/card.json", 404), (".well-known/agent-card.json", 200)]


async def test_a_url_that_serves_the_card_itself_is_recognised(client: HttpClient) -> None:
    async with card_at("/agent") as origin:
        result = await _probe(client, f"{origin}/agent")
    assert result.success, result.reason
    assert _tried(result) == [("agent/.well-known/agent-card.json", 404), ("agent/.well-known/agent.json", 404),
                              ("agent", 200)]


async def test_a_discovery_failure_lists_every_url_tried_with_its_answer(client: HttpClient) -> None:
    async with card_at("/elsewhere.json", page="<html>hello</html>") as origin:
        result = await _probe(client, f"{origin}/agent")
    assert result.reason is Reason.CARD_HTTP_STATUS
    step = result.step(StepName.DISCOVER)
    assert step is not None and step.status is Status.FAIL
    assert step.detail == (
        f"no Agent Card at any of the 3 URLs tried: GET {origin}/agent/.well-known/agent-card.json answered HTTP 404; "
        f"GET {origin}/agent/.well-known/agent.json answered HTTP 404; "
        f"GET {origin}/agent answered HTTP 200 (text/html, not an Agent Card)")
    discovered = result.check("card.discovered")
    assert discovered is not None and discovered.status is Status.FAIL and "3 URLs tried" in discovered.message


async def test_a_0_2_agent_is_labelled_0_2(client: HttpClient) -> None:
    task = {"kind": "task", "id": "t", "contextId": "c", "status": {"state": "completed"},
            "artifacts": [{"artifactId": "a", "parts": [{"kind": "text", "text": "ok"}]}]}
    async with versioned_agent("0.2", {"message/send": rpc(task)}) as origin:
        result = await _probe(client, origin)
    assert result.success, result.reason
    assert result.protocol_version == "0.2"
