"""The daemon probes every interface an agent's card advertises, each with its own bounded `binding` series.

Fault agent (tests/agents/bindings.py): JSON-RPC works, the HTTP+JSON route 404s (no REST handler at all), and
the gRPC interface points at a closed port. Each binding's verdict and reason must be right in /metrics, in the
report and on the status page, and an interface that leaves the card must take its series with it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from aiohttp import web
from prometheus_client.parser import text_string_to_metric_families

from probe.metrics import PREFIX, series_per_job
from tests.agents.bindings import Interface, closed_port, multi_binding_app
from tests.agents.server import serve
from tests.daemon.helpers import get, post, running_daemon, wait_for, write_config

FAST = {"prober": "ping", "interval": "1s", "timeout": "0.9s", "jitter": 0}


def _series(text: str, name: str, agent: str) -> dict[tuple[str, ...], float]:
    """binding (and reason, for the info metric) -> value of one per-job metric of `agent`."""
    out: dict[tuple[str, ...], float] = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            if s.name == PREFIX + name and s.labels.get("agent") == agent:
                out[(s.labels["binding"], *([s.labels["reason"]] if "reason" in s.labels else []))] = s.value
    return out


async def test_each_binding_of_a_fault_agent_gets_its_own_verdict_and_reason(tmp_path: Path) -> None:
    extra: list[Interface] = [(f"http://127.0.0.1:{closed_port()}", "GRPC", "1.0")]
    async with serve(multi_binding_app({}, extra=extra)) as origin:
        cfg = write_config(tmp_path / "c.yaml", [
            {"name": "multi", "url": origin, "modules": ["fast"]},
            {"name": "rpc-only", "url": origin, "modules": ["fast"], "bindings": ["jsonrpc"]},
        ], modules={"fast": FAST}, card_cache_max_age=0)  # the card changes below (max-age=60): fetched every run
        async with running_daemon(cfg) as (d, base):
            await wait_for(lambda: d.history.recent("multi", "fast") and d.history.recent("rpc-only", "fast"),
                           timeout=15)
            _, text, _ = await get(base + "/metrics")
            _, raw, _ = await get(base + "/report?agent=multi&module=fast&format=json")
            _, page, _ = await get(base + "/")
            # the gRPC interface leaves the card: its series go at the next run, the others stay
            extra.clear()
            runs = len(d.history.recent("multi", "fast"))
            await wait_for(lambda: len(d.history.recent("multi", "fast")) >= runs + 2, timeout=15)
            _, after, _ = await get(base + "/metrics")

    assert _series(text, "success", "multi") == {("jsonrpc",): 1, ("http_json",): 0, ("grpc",): 0}
    assert _series(text, "failure_reason_info", "multi") == {
        ("jsonrpc", "none"): 1, ("http_json", "invoke_route_not_found"): 1, ("grpc", "invoke_unreachable"): 1}
    failures = {k: v for k, v in _series(text, "failures_total", "multi").items() if v}
    assert set(failures) == {("http_json", "invoke_route_not_found"), ("grpc", "invoke_unreachable")}
    assert set(_series(text, "last_success_timestamp_seconds", "multi")) == {("jsonrpc",)}
    # a configured subset: one binding's series only, and the agent passes
    assert _series(text, "success", "rpc-only") == {("jsonrpc",): 1}
    lean = [line for line in text.splitlines() if line.startswith(PREFIX) and 'agent="rpc-only"' in line
            and 'module="fast"' in line and "failures_total" not in line]
    assert len(lean) == series_per_job(3, 3), lean

    # the report: one entry per interface, the failing ones first, each with its reason
    rep = json.loads(raw)
    assert not rep["success"]
    assert [(i["binding"], i["success"], i["reason"]) for i in rep["interfaces"]] == [
        ("grpc", False, "invoke_unreachable"), ("http_json", False, "invoke_route_not_found"),
        ("jsonrpc", True, None)]  # the failing ones in the card's order, then the passing one
    assert rep["binding"] == "JSONRPC"  # the top level describes the preferred interface
    assert {i["protocolVersion"] for i in rep["interfaces"]} == {"1.0"}
    assert rep["interfaces"][1]["interfaceUrl"].endswith("/rest")

    # the status page: the interfaces of the agent, failing first
    block = page.split('data-agent="multi"', 1)[1].split("</section>", 1)[0]
    rows = block.split('<table class="interfaces"', 1)[1].split("</table>", 1)[0]
    order = [row.split('"', 1)[0] for row in rows.split('data-interface="')[1:]]
    assert order == ["grpc 1.0", "http_json 1.0", "jsonrpc 1.0"]
    assert "invoke_route_not_found" in rows and "invoke_unreachable" in rows

    assert _series(after, "success", "multi") == {("jsonrpc",): 1, ("http_json",): 0}
    assert not [line for line in after.splitlines() if 'agent="multi"' in line and 'binding="grpc"' in line]


async def test_a_card_that_fails_first_exports_binding_card_then_the_real_bindings(tmp_path: Path) -> None:
    state = {"up": False}

    @web.middleware
    async def gate(request: web.Request, handler: Any) -> web.StreamResponse:
        if not state["up"]:  # the card (and everything else) is down until the test brings it up
            raise web.HTTPServiceUnavailable()
        return await handler(request)  # type: ignore[no-any-return]

    app = multi_binding_app({}, also_rest=False, middlewares=[gate])
    async with serve(app) as origin:
        cfg = write_config(tmp_path / "c.yaml", [{"name": "late", "url": origin, "modules": ["fast"]}],
                           modules={"fast": FAST})
        async with running_daemon(cfg) as (d, base):
            await wait_for(lambda: d.history.recent("late", "fast"), timeout=15)
            _, down, _ = await get(base + "/metrics")
            state["up"] = True
            await wait_for(lambda: (d.history.latest("late", "fast") or ("", None))[1] is not None
                           and d.history.latest("late", "fast")[1].success, timeout=15)  # type: ignore[index]
            _, up, _ = await get(base + "/metrics")
            assert (await post(base + "/-/reload"))[0] == 200
    assert _series(down, "failure_reason_info", "late") == {("card", "card_http_status"): 1}
    assert _series(up, "success", "late") == {("jsonrpc",): 1}
    assert not [line for line in up.splitlines() if 'agent="late"' in line and 'binding="card"' in line]


async def test_a_hanging_interface_costs_the_others_no_time() -> None:
    """The interfaces run at once under the one deadline: a REST route that never answers times out alone."""
    import asyncio
    import time

    from probe.engine import run_interfaces
    from probe.reasons import Reason
    from probe.results import StepName
    from probe.target import Target
    from probe.wire.http import HttpClient

    async def hang(_: web.Request) -> web.Response:
        await asyncio.sleep(30)
        return web.Response()

    grpc = (f"http://127.0.0.1:{closed_port()}", "GRPC", "1.0")
    async with serve(multi_binding_app({"GET /rest/tasks/{id}": hang}, extra=[grpc])) as origin, \
            HttpClient() as client:
        t0 = time.monotonic()
        r = await run_interfaces(Target(name="h", url=origin, timeout=2), client, steps=(StepName.PING,),
                                 agree=False)
        took = time.monotonic() - t0
    by = {i.binding: i for i in r.interfaces}
    assert by["jsonrpc"].success, by["jsonrpc"]
    assert by["http_json"].reason is Reason.INVOKE_TIMEOUT
    assert by["grpc"].reason is Reason.INVOKE_UNREACHABLE
    assert took < 3.5, f"{took:.1f}s: the interfaces did not share the one 2 s deadline"


def test_the_log_event_names_each_interface_and_the_failing_ones_detail() -> None:
    from probe.logs import probe_fields
    from probe.reasons import Reason
    from probe.results import InterfaceResult, ProbeResult

    ok = InterfaceResult(binding="jsonrpc", protocol_binding="JSONRPC", protocol_version="1.0", success=True)
    bad = InterfaceResult(binding="grpc", protocol_binding="GRPC", protocol_version="1.0",
                          reason=Reason.INVOKE_UNREACHABLE, detail="GetTask answered gRPC UNAVAILABLE")
    r = ProbeResult(agent="a", target_url="http://x", binding="JSONRPC", reason=Reason.INVOKE_UNREACHABLE,
                    interfaces=[ok, bad])
    fields = probe_fields("ping", r, "id")
    assert fields["interfaces"] == {"jsonrpc 1.0": "pass", "grpc 1.0": "invoke_unreachable"}
    assert fields["detail"] == "grpc 1.0: GetTask answered gRPC UNAVAILABLE"
    assert probe_fields("ping", r.model_copy(update={"interfaces": [ok]}), "id")["interfaces"] is None


def test_history_stores_a_single_interfaces_steps_once_and_gives_them_back() -> None:
    from probe.history import pack, unpack
    from probe.results import InterfaceResult, ProbeResult, Status, StepName, StepResult

    steps = [StepResult(name=StepName.DISCOVER, status=Status.PASS, detail="card read"),
             StepResult(name=StepName.PING, status=Status.PASS, detail="GetTask answered")]
    one = InterfaceResult(binding="jsonrpc", protocol_binding="JSONRPC", steps=steps)
    r = ProbeResult(agent="a", target_url="http://x", steps=steps, interfaces=[one])
    assert pack(r).__len__() < pack(r.model_copy(update={"interfaces": [one, one]})).__len__()
    back = unpack(pack(r))
    assert back.interfaces[0].steps == steps and back.steps == steps
    other = one.model_copy(update={"binding": "grpc", "steps": steps[:1]})
    two = unpack(pack(r.model_copy(update={"interfaces": [one, other]})))
    assert [len(i.steps) for i in two.interfaces] == [2, 1]  # several interfaces keep their own steps
