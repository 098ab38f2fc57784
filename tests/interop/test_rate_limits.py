"""A refusal by rate (HTTP 429, RFC 6585 §4; gRPC RESOURCE_EXHAUSTED) is `rate_limited`: the request was not served,
so nothing of it is the agent's to judge (level unknown), whatever body came with it; the daemon waits out the
Retry-After it names (at most an hour) before calling that agent again, counting the runs it skips.

A2A 1.0.1 §3.3.2 lists "rate limit exceeded" among the system errors (temporary unavailability; "Servers MAY include
retry guidance (e.g., Retry-After header in HTTP)"), and §13 "Agents SHOULD return appropriate error responses when
rate limits are exceeded": a 429 is such an answer, not an unexpected status."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from urllib.parse import urlsplit

import aiohttp
import grpc
import pytest
from aiohttp import web

from probe import redact
from probe.engine import run_probe
from probe.levels import Level, level
from probe.reasons import Reason
from probe.report import render, to_dict
from probe.results import ProbeResult, Status, StepName
from probe.target import AuthSpec, Target
from probe.wire.bindings import retry_after_seconds
from probe.wire.http import HttpClient
from tests.agents.cards import valid_card
from tests.agents.grpc_scripted import Call, scripted_grpc_agent
from tests.agents.scripted import Reply, scripted_agent
from tests.agents.server import serve
from tests.daemon.helpers import get, metric_value, running_daemon, write_config
from tests.hostile.test_secrets import TOKEN, _assert_clean

RPC_ERROR = json.dumps({"jsonrpc": "2.0", "id": "{id}", "error": {"code": -32603, "message": "rate limit exceeded"}})


async def _probe(client: HttpClient, origin: str, step: StepName, **kw: str) -> ProbeResult:
    return await run_probe(Target(name="t", url=origin, timeout=3.0, **kw), client, steps=(step,))


def _transport(r: ProbeResult) -> str:
    check = r.check("invoke.transport") or r.check("stream.content_type")
    assert check is not None and check.status is Status.FAIL and check.reason is Reason.RATE_LIMITED, to_dict(r)
    return check.message


@pytest.mark.parametrize("step", [StepName.INVOKE, StepName.STREAM])
async def test_a_429_with_a_json_rpc_error_is_a_rate_limit_not_the_agents_error(client: HttpClient,
                                                                                step: StepName) -> None:
    reply = Reply(status=429, chunks=[RPC_ERROR], headers={"Retry-After": "120"}, whole=True)
    async with scripted_agent({"SendMessage": reply, "SendStreamingMessage": reply}) as origin:
        r = await _probe(client, origin, step)
    assert r.reason is Reason.RATE_LIMITED and not r.success, to_dict(r)
    assert r.retry_after_s == 120.0
    assert "HTTP 429" in _transport(r) and "Retry-After 120 s" in _transport(r)
    assert level(r) is Level.UNKNOWN  # the agent was not judged: neither non-conformant nor a pass


async def test_a_429_on_http_json_with_an_http_date_retry_after(client: HttpClient) -> None:
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=90), usegmt=True)
    body = json.dumps({"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "message": "slow down"}})
    reply = Reply(status=429, chunks=[body], headers={"Retry-After": when}, whole=True)
    async with scripted_agent({}, rest={"POST /message:send": reply}) as origin:
        r = await _probe(client, origin, StepName.INVOKE, binding="HTTP+JSON")
    assert r.reason is Reason.RATE_LIMITED, to_dict(r)
    assert r.retry_after_s is not None and 80 <= r.retry_after_s <= 90


async def test_a_429_without_retry_after_says_so(client: HttpClient) -> None:
    reply = Reply(status=429, content_type="text/plain", chunks=["Too Many Requests"], whole=True)
    async with scripted_agent({"SendMessage": reply}) as origin:
        r = await _probe(client, origin, StepName.INVOKE)
    assert r.reason is Reason.RATE_LIMITED and r.retry_after_s is None
    assert "no Retry-After" in _transport(r)


async def test_a_card_refused_by_rate_is_not_a_card_fault(client: HttpClient) -> None:
    async def card(_request: web.Request) -> web.Response:
        return web.Response(status=429, text="Too Many Requests", headers={"Retry-After": "30"})

    app = web.Application()
    app.router.add_get("/.well-known/agent-card.json", card)
    async with serve(app) as origin:
        r = await _probe(client, origin, StepName.INVOKE)
    assert r.reason is Reason.RATE_LIMITED and r.retry_after_s == 30.0, to_dict(r)
    assert level(r) is Level.UNKNOWN


async def test_grpc_resource_exhausted_with_retry_info(client: HttpClient) -> None:
    from google.protobuf import any_pb2, duration_pb2
    from google.rpc import error_details_pb2, status_pb2

    packed = any_pb2.Any()
    packed.Pack(error_details_pb2.RetryInfo(retry_delay=duration_pb2.Duration(seconds=45)))
    status = status_pb2.Status(code=grpc.StatusCode.RESOURCE_EXHAUSTED.value[0], message="quota", details=[packed])
    call = Call(code=grpc.StatusCode.RESOURCE_EXHAUSTED, details="quota",
                trailers=[("grpc-status-details-bin", status.SerializeToString())])
    async with scripted_grpc_agent({"SendMessage": call}) as origin:
        r = await _probe(client, origin, StepName.INVOKE, binding="GRPC")
    assert r.reason is Reason.RATE_LIMITED and r.retry_after_s == 45.0, to_dict(r)
    assert "RESOURCE_EXHAUSTED" in _transport(r)


@pytest.mark.parametrize(("value", "seconds"), [
    ("120", 120.0), (" 0 ", 0.0), ("99999999999999999999", 1e9), (None, None), ("", None), ("soon", None),
    ("-5", None), ("1.5", None),
    ("Wed, 21 Oct 2015 07:28:00 GMT", 0.0),  # a date in the past: retry now
    ("Wed, 21 Oct 2015 07:28:00", None),  # no zone: not an HTTP-date (RFC 9110 §5.6.7)
])
def test_retry_after_values(value: str | None, seconds: float | None) -> None:
    assert retry_after_seconds(value) == seconds


async def test_the_daemon_waits_out_retry_after_and_counts_the_skipped_runs(tmp_path: Path) -> None:
    calls = []

    async def rpc(request: web.Request) -> web.Response:
        calls.append(request.path)
        return web.Response(status=429, text="Too Many Requests", headers={"Retry-After": "600"})

    async def card(_request: web.Request) -> web.Response:
        return web.json_response(valid_card(f"{origin}/rpc", name="limited"))

    app = web.Application()
    app.router.add_get("/.well-known/agent-card.json", card)
    app.router.add_post("/rpc", rpc)
    async with serve(app) as origin:
        cfg = write_config(tmp_path / "c.yaml", [{"name": "limited", "url": origin, "modules": ["p"]}],
                           modules={"p": {"prober": "invoke", "interval": "24h", "timeout": "5s", "jitter": 0}})
        async with running_daemon(cfg, first_pass_rate=0) as (d, base):
            agent = d.config.agent("limited")
            assert agent is not None
            module = d.config.all_modules()["p"]
            await d.runner.scheduled(agent, "p", module)
            found = d.history.latest("limited", "p")
            assert found is not None and found[1].reason is Reason.RATE_LIMITED
            assert len(calls) == 1
            await d.runner.scheduled(agent, "p", module)  # within the 600 s: not called, counted
            await d.runner.scheduled(agent, "p", module)
            assert len(calls) == 1
            _, text, _ = await get(f"{base}/metrics")
            missed = metric_value(text, "a2a_probe_scheduler_missed_runs_total", agent="limited", module="p",
                                  cause="rate_limited")
            assert missed == 2.0
            assert d.runner.slots.used == 0  # a skipped run holds no slot


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON", "GRPC"])
async def test_a_rate_limit_echoing_the_credentials_is_masked_in_every_output(
        client: HttpClient, caplog: pytest.LogCaptureFixture, binding: str) -> None:
    """The 429's body (and a Retry-After that is no number) or the RESOURCE_EXHAUSTED details quote the Authorization
    the agent received: the detail the report quotes is masked like every other agent text."""
    redact.register(TOKEN)
    echo = "slow down, {secret}"
    reply = Reply(status=429, content_type="text/plain", chunks=[echo], headers={"Retry-After": echo}, whole=True)
    serving = (scripted_agent({"SendMessage": reply}) if binding == "JSONRPC"
               else scripted_agent({}, rest={"POST /message:send": reply}) if binding == "HTTP+JSON"
               else scripted_grpc_agent({"SendMessage": Call(code=grpc.StatusCode.RESOURCE_EXHAUSTED, details=echo)}))
    async with serving as origin:
        async with aiohttp.ClientSession() as session, session.get(f"{origin}/.well-known/agent-card.json") as got:
            url = urlsplit((await got.json())["supportedInterfaces"][0]["url"])
        r = await run_probe(Target(name="t", url=origin, timeout=3.0, binding=binding, headers={
            "Authorization": f"Bearer {TOKEN}"}, auth=AuthSpec(allowed_origins=(f"{url.scheme}://{url.netloc}",))),
            client, steps=(StepName.INVOKE,))
    assert r.reason is Reason.RATE_LIMITED and r.retry_after_s is None, to_dict(r)
    assert "<redacted>" in render(r, "json")  # the echo reached the report, masked
    for fmt in ("json", "text", "markdown", "junit", "html"):
        _assert_clean(f"{binding} {fmt}", render(r, fmt))
    _assert_clean("logs", caplog.text)
