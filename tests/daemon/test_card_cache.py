"""The daemon honours HTTP caching of the Agent Card (A2A 1.0 §8.6.2, RFC 9111) on its scheduled runs.

A real loopback agent counts the card requests it serves and the validators they carry; the daemon's own runner
runs the scheduled path (`Runner.scheduled`), so what is proved is what the scheduler does, without waiting for
phase slots (the module's interval is a day and the first pass is off: nothing else runs)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from probe import report
from probe.daemon import Daemon
from probe.reasons import Reason
from probe.results import ProbeResult, Status, StepName
from tests.agents.cache_agent import CardAgent
from tests.agents.server import serve
from tests.daemon.helpers import get, metric_value, post, running_daemon, write_config

MODULE = {"prober": "ping", "interval": "24h", "timeout": "5s", "jitter": 0}


@asynccontextmanager
async def daemon_with(tmp_path: Path, agent: CardAgent, **agent_fields: Any) -> AsyncIterator[tuple[Daemon, str]]:
    async with serve(agent.app()) as origin:
        cfg = write_config(tmp_path / "c.yaml", [{"name": "cached", "url": origin, "modules": ["p"],
                                                  **agent_fields}], modules={"p": MODULE})
        async with running_daemon(cfg, first_pass_rate=0) as (d, base):
            yield d, base


async def scheduled(d: Daemon, name: str = "cached") -> ProbeResult:
    agent = d.config.agent(name)
    assert agent is not None
    await d.runner.scheduled(agent, "p", d.config.all_modules()["p"])
    found = d.history.latest(name, "p")
    assert found is not None
    return found[1]


def discover(r: ProbeResult) -> Any:
    step = r.step(StepName.DISCOVER)
    assert step is not None
    return step


def card_checks(r: ProbeResult) -> dict[str, tuple[Status, str]]:
    return {c.id: (c.status, c.message) for c in r.checks if c.step is StepName.DISCOVER}


async def test_a_fresh_card_is_not_requested_again_and_its_verdicts_stay(tmp_path: Path) -> None:
    agent = CardAgent()
    async with daemon_with(tmp_path, agent) as (d, base):
        first = await scheduled(d)
        second = await scheduled(d)
        third = await scheduled(d)
        _, text, _ = await get(base + "/metrics")
        _, raw, _ = await get(base + "/report?agent=cached&module=p&format=json")
        _, md, _ = await get(base + "/report?agent=cached&module=p&format=markdown")
        _, page, _ = await get(base + "/report?agent=cached&module=p&format=html")  # linked from the status page
        _, status, _ = await get(base + "/")
    assert first.success and second.success and third.success
    assert agent.card_requests == [{}]  # one card request for three probes
    assert agent.rpc_requests == 3  # the interface is called every probe
    assert card_checks(second) == card_checks(first)  # the same checks and verdicts, from the last fetch
    assert discover(first).detail == ""
    detail = discover(second).detail
    assert "from the probe's cache (no request sent)" in detail and "freshness lifetime (max-age=300" in detail
    assert "card_cache_max_age 300s" in detail
    assert discover(second).http_status == 200 and discover(second).exchanges  # the last fetch's, said so
    assert second.card_name == "cached" and second.card_url == first.card_url
    steps = {s["name"]: s for s in json.loads(raw)["steps"]}
    assert "from the probe's cache" in steps["discover"]["detail"]  # the report JSON says it
    assert "from the probe's cache" in md and "from the probe&#x27;s cache" in page  # the markdown and HTML reports
    assert "from the probe's cache" in report.to_text(second)  # and the CLI-style text report
    assert 'data-card="cached">Agent Card from the probe&#x27;s cache (no request sent): age' in status
    assert "freshness lifetime (max-age=300; card_cache_max_age 300s)</span>" in status  # the status page
    assert metric_value(text, "a2a_probe_card_cache_total", result="miss") == 1
    assert metric_value(text, "a2a_probe_card_cache_total", result="hit") == 2
    assert metric_value(text, "a2a_probe_card_cache_entries") == 1
    assert metric_value(text, "a2a_probe_agent_card_info", agent="cached", card_version="1.0.0") == 1


async def test_a_stale_card_is_revalidated_and_a_304_keeps_it(tmp_path: Path) -> None:
    agent = CardAgent()
    agent.cache_headers = {"Cache-Control": "max-age=300", "Last-Modified": "Tue, 01 Dec 2026 10:00:00 GMT"}
    async with daemon_with(tmp_path, agent, card_cache_max_age="1s") as (d, base):
        first = await scheduled(d)
        await asyncio.sleep(1.05)  # past the cap: stale
        second = await scheduled(d)
        third = await scheduled(d)  # the 304 made it fresh again
        _, text, _ = await get(base + "/metrics")
    assert agent.card_requests == [{}, {"If-None-Match": '"v1"', "If-Modified-Since": "Tue, 01 Dec 2026 10:00:00 GMT"}]
    assert first.success and second.success and third.success
    assert {k: v for k, v in card_checks(second).items() if k != "card.not_modified"} == card_checks(first)
    assert card_checks(second)["card.not_modified"][0] is Status.PASS  # the 304 graded: it names the stored card
    assert "card.not_modified" not in card_checks(third)  # no conditional request in that run
    assert "revalidated now: HTTP 304" in discover(second).detail
    assert discover(second).http_status == 304  # the real exchange of this run
    assert "no request sent" in discover(third).detail
    assert metric_value(text, "a2a_probe_card_cache_total", result="revalidated") == 1


async def test_a_changed_card_is_picked_up_on_revalidation(tmp_path: Path) -> None:
    agent = CardAgent()
    async with daemon_with(tmp_path, agent, card_cache_max_age="1s") as (d, _):
        first = await scheduled(d)
        agent.card_version, agent.etag = "2.0.0", '"v2"'
        cached = await scheduled(d)  # within freshness: still the stored card
        await asyncio.sleep(1.05)
        changed = await scheduled(d)
    assert (first.card_version, cached.card_version, changed.card_version) == ("1.0.0", "1.0.0", "2.0.0")
    assert agent.card_requests == [{}, {"If-None-Match": '"v1"'}]  # the 200 to the conditional GET replaced it
    assert discover(changed).detail == ""  # fetched now


@pytest.mark.parametrize("headers", [{"Cache-Control": "no-store, max-age=300"}, {}], ids=["no-store", "none"])
async def test_no_store_and_no_caching_headers_fetch_every_probe(tmp_path: Path, headers: dict[str, str]) -> None:
    agent = CardAgent()
    agent.cache_headers, agent.etag = headers, None
    async with daemon_with(tmp_path, agent) as (d, base):
        results = [await scheduled(d) for _ in range(3)]
        _, text, _ = await get(base + "/metrics")
    assert agent.card_requests == [{}, {}, {}]
    assert all(r.success and discover(r).detail == "" for r in results)
    assert metric_value(text, "a2a_probe_card_cache_total", result="uncacheable") == 3
    assert metric_value(text, "a2a_probe_card_cache_entries") == 0


async def test_no_cache_revalidates_every_probe(tmp_path: Path) -> None:
    agent = CardAgent()
    agent.cache_headers = {"Cache-Control": "no-cache"}
    async with daemon_with(tmp_path, agent) as (d, _):
        results = [await scheduled(d) for _ in range(3)]
    assert agent.card_requests == [{}, {"If-None-Match": '"v1"'}, {"If-None-Match": '"v1"'}]
    assert all(r.success for r in results)
    assert "revalidated now" in discover(results[2]).detail


async def test_a_card_that_starts_failing_is_reported_once_freshness_runs_out(tmp_path: Path) -> None:
    agent = CardAgent()
    async with daemon_with(tmp_path, agent, card_cache_max_age="1s") as (d, _):
        assert (await scheduled(d)).success
        agent.card_status = 503
        within = await scheduled(d)  # still fresh: the card is not asked for
        await asyncio.sleep(1.05)
        failed = await scheduled(d)
        again = await scheduled(d)  # a failed card is never served from the cache
    assert within.success
    assert not failed.success and failed.reason is Reason.CARD_HTTP_STATUS
    assert not again.success and again.reason is Reason.CARD_HTTP_STATUS
    assert agent.card_requests == [{}, {"If-None-Match": '"v1"'}, {}]  # the entry was dropped at the failure


async def test_with_cap_zero_a_failing_card_fails_at_once(tmp_path: Path) -> None:
    agent = CardAgent()
    async with daemon_with(tmp_path, agent, card_cache_max_age=0) as (d, _):
        assert (await scheduled(d)).success
        agent.card_status = 500
        failed = await scheduled(d)
    assert failed.reason is Reason.CARD_HTTP_STATUS
    assert agent.card_requests == [{}, {}]  # every probe fetches, without validators: as without a cache


async def test_an_interface_that_breaks_under_a_cached_card_fails_at_once(tmp_path: Path) -> None:
    agent = CardAgent()
    async with daemon_with(tmp_path, agent) as (d, _):
        assert (await scheduled(d)).success
        agent.rpc_status = 404  # the gateway-404 case: the card would still answer 200
        broken = await scheduled(d)
    assert agent.card_requests == [{}]
    assert not broken.success and broken.reason is Reason.INVOKE_ROUTE_NOT_FOUND
    assert "from the probe's cache" in discover(broken).detail


async def test_a_304_naming_another_etag_is_not_used(tmp_path: Path) -> None:
    agent = CardAgent()
    agent.cache_headers = {"Cache-Control": "max-age=0"}
    agent.etag_on_304 = '"other"'
    async with daemon_with(tmp_path, agent) as (d, _):
        assert (await scheduled(d)).success
        r = await scheduled(d)
    # RFC 9111 §4.3.4: a 304 whose strong validator is not the stored card's must not refresh it: fetched anew
    assert agent.card_requests == [{}, {"If-None-Match": '"v1"'}, {}]
    assert r.success and "does not identify the stored card" in discover(r).detail
    assert [e.status for e in discover(r).exchanges] == [304, 200]
    status, message = card_checks(r)["card.not_modified"]  # a SHOULD of the server's: graded, the run still passes
    assert status is Status.FAIL and '"other"' in message and '"v1"' in message


async def test_a_304_without_the_cards_etag_is_not_used(tmp_path: Path) -> None:
    agent = CardAgent()
    agent.cache_headers = {"Cache-Control": "max-age=0"}
    async with daemon_with(tmp_path, agent) as (d, _):
        assert (await scheduled(d)).card_version == "1.0.0"
        # a front end that answers any If-None-Match with a bare 304, while the card behind it changed: a 304
        # without the ETag the 200 had identifies no stored card (RFC 9110 §15.4.5 MUST, RFC 9111 §4.3.4)
        agent.bare_304, agent.card_version = True, "1.0.1"
        r = await scheduled(d)
    assert agent.card_requests == [{}, {"If-None-Match": '"v1"'}, {}]
    assert r.success and r.card_version == "1.0.1"  # fetched anew: the changed card, not the stored one
    status, message = card_checks(r)["card.not_modified"]
    assert status is Status.FAIL and "no ETag" in message


async def test_a_last_modified_that_is_not_an_http_date_is_neither_judged_valid_nor_sent_back(tmp_path: Path) -> None:
    agent = CardAgent()  # an e-mail date without weekday or zone: the standard library takes it, RFC 9110 does not
    agent.cache_headers = {"Cache-Control": "max-age=0", "Last-Modified": "01 Dec 2026 10:00:00"}
    async with daemon_with(tmp_path, agent) as (d, _):
        first = await scheduled(d)
        await scheduled(d)
    status, message = card_checks(first)["card.last_modified"]
    assert status is Status.FAIL and "not an HTTP-date" in message
    assert agent.card_requests == [{}, {"If-None-Match": '"v1"'}]  # If-Modified-Since only with an HTTP-date


async def test_probe_duration_seconds_is_the_whole_probe_as_in_blackbox_exporter(tmp_path: Path) -> None:
    agent = CardAgent()
    agent.card_delay = 0.6  # a slow card behind a fast interface
    async with daemon_with(tmp_path, agent) as (_, base):
        status, text, _ = await get(base + "/probe?agent=cached&module=p")
    assert status == 200 and metric_value(text, "probe_success") == 1
    # blackbox_exporter's meaning (probe_duration_seconds / probe_timeout_seconds: how much of the timeout the
    # probe used): the card's fetch is part of it; the agent's latency alone is probe_a2a_latency_seconds
    assert metric_value(text, "probe_duration_seconds") >= 0.6
    assert metric_value(text, "probe_a2a_latency_seconds") < 0.6
    assert metric_value(text, "probe_a2a_step_duration_seconds", step="discover") >= 0.6


async def test_on_demand_runs_always_fetch_the_card(tmp_path: Path) -> None:
    agent = CardAgent()
    async with daemon_with(tmp_path, agent) as (d, base):
        await scheduled(d)
        status, _, _ = await get(base + "/probe?agent=cached&module=p")
        agent_spec = d.config.agent("cached")
        assert agent_spec is not None
        on_demand = await d.runner.run(agent_spec, d.config.all_modules()["p"], timeout=5)
    assert status == 200 and on_demand.success
    assert agent.card_requests == [{}, {}, {}]  # /probe and an unscheduled run (as /report?refresh) fetch it
    assert discover(on_demand).detail == ""


async def test_reload_drops_the_entries_of_agents_that_left(tmp_path: Path) -> None:
    agent = CardAgent()
    async with daemon_with(tmp_path, agent) as (d, _):
        await scheduled(d)
        assert len(d.runner.cards) == 1
        assert d.config_path is not None
        write_config(d.config_path, [{"name": "other", "url": "http://127.0.0.1:9/", "modules": ["p"]}],
                     modules={"p": MODULE}, card_cache_max_age="1m")
        ok, _ = await d.reload()
        assert ok and len(d.runner.cards) == 0 and d.runner.cards.default_max_age == 60


async def test_a_changed_agent_config_misses_its_old_entry(tmp_path: Path) -> None:
    agent = CardAgent()
    async with serve(agent.app()) as origin:
        cfg = write_config(tmp_path / "c.yaml", [{"name": "cached", "url": origin, "modules": ["p"]}],
                           modules={"p": MODULE})
        async with running_daemon(cfg, first_pass_rate=0) as (d, _):
            await scheduled(d)
            write_config(cfg, [{"name": "cached", "url": origin, "modules": ["p"], "a2a_version": "1.0"}],
                         modules={"p": MODULE})
            status, _ = await post(f"http://{d.bound[0]}/-/reload")
            assert status == 200
            await scheduled(d)  # its discovery settings changed: the stored card is not this config's
    assert agent.card_requests == [{}, {}]


async def test_a_304_to_a_request_without_validators_is_a_failed_card(tmp_path: Path) -> None:
    agent = CardAgent()
    agent.card_status = 304
    async with daemon_with(tmp_path, agent) as (d, _):
        r = await scheduled(d)
    assert r.reason is Reason.CARD_HTTP_STATUS
    checks = card_checks(r)
    assert checks["card.not_modified"][0] is Status.FAIL
    assert "Not Modified to a request without validators" in checks["card.discovered"][1]


async def test_a_card_failing_after_an_unusable_304_fails_the_run_and_leaves_the_cache(tmp_path: Path) -> None:
    agent = CardAgent()
    agent.cache_headers, agent.etag_on_304, agent.status_after_304 = {"Cache-Control": "max-age=0"}, '"x"', 503
    async with daemon_with(tmp_path, agent) as (d, _):
        assert (await scheduled(d)).success and len(d.runner.cards) == 1
        r = await scheduled(d)
        assert len(d.runner.cards) == 0
    assert r.reason is Reason.CARD_HTTP_STATUS
    assert card_checks(r)["card.not_modified"][0] is Status.FAIL
    assert agent.card_requests == [{}, {"If-None-Match": '"v1"'}, {}]


async def test_turning_the_cap_to_zero_on_reload_drops_the_entry(tmp_path: Path) -> None:
    agent = CardAgent()
    async with daemon_with(tmp_path, agent) as (d, _):
        await scheduled(d)
        assert d.config_path is not None and len(d.runner.cards) == 1
        write_config(d.config_path, [{"name": "cached", "url": d.config.agents[0].url, "modules": ["p"]}],
                     modules={"p": MODULE}, card_cache_max_age=0)
        assert (await d.reload())[0]
        await scheduled(d)
        await scheduled(d)
        assert len(d.runner.cards) == 0
    assert agent.card_requests == [{}, {}, {}]


async def test_an_agents_modules_share_its_cached_card(tmp_path: Path) -> None:
    agent = CardAgent()
    async with serve(agent.app()) as origin:
        cfg = write_config(tmp_path / "c.yaml", [{"name": "cached", "url": origin, "modules": ["p", "q"]}],
                           modules={"p": MODULE, "q": {**MODULE, "prober": "invoke"}})
        async with running_daemon(cfg, first_pass_rate=0) as (d, _):
            spec = d.config.agent("cached")
            assert spec is not None
            modules = d.config.all_modules()
            await d.runner.scheduled(spec, "p", modules["p"])
            await d.runner.scheduled(spec, "q", modules["q"])
            found = d.history.latest("cached", "q")
    assert found is not None and "from the probe's cache" in discover(found[1]).detail
    assert agent.card_requests == [{}]  # the invoke module reused the card the ping module fetched
