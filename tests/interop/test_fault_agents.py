"""The engine against our fault-injecting agents: one failure mode each, exact reason and advice."""

from __future__ import annotations

import pytest

from probe.engine import run_probe
from probe.reasons import Reason
from probe.report import to_dict
from probe.results import ProbeResult, Status, StepName
from probe.target import Target
from probe.wire.http import HttpClient
from tests.agents.catalogue import GATEWAY_PREFIX, run_agent
from tests.agents.fault_agent import DemoAgent, Faults


async def _probe(client: HttpClient, url: str, **kw: object) -> ProbeResult:
    kw.setdefault("timeout", 5.0)
    return await run_probe(Target(name="t", url=url, **kw), client)  # type: ignore[arg-type]


def _failed(result: ProbeResult) -> set[str]:
    return {c.id for c in result.failed_checks()}


async def test_healthy_demo_agent_passes_everything(client: HttpClient) -> None:
    async with run_agent("healthy") as agent:
        r = await _probe(client, agent.origin or "", expect_text="echo")
    assert r.success, to_dict(r)
    assert _failed(r) == set()


@pytest.mark.parametrize("fault", ["healthy_03", "hybrid", "crlf_chunked_stream"])
async def test_other_healthy_shapes_pass(client: HttpClient, fault: str) -> None:
    async with run_agent(fault) as agent:
        r = await _probe(client, agent.origin or "")
    assert r.success, to_dict(r)
    assert r.protocol_version == ("0.3" if fault == "healthy_03" else "1.0")


async def test_card_ok_but_doubled_prefix_404(client: HttpClient) -> None:
    async with run_agent("doubled_prefix") as agent:
        origin = agent.origin
        r = await _probe(client, f"{origin}{GATEWAY_PREFIX}")
    assert r.reason is Reason.INTERFACE_PATH_DOUBLED
    assert r.step(StepName.DISCOVER).status is Status.PASS  # type: ignore[union-attr]
    invoke = r.step(StepName.INVOKE)
    assert invoke is not None
    assert invoke.http_status == 404
    assert invoke.reason is Reason.INVOKE_ROUTE_NOT_FOUND
    assert r.interface_url == f"{origin}/api/a2a/api/a2a/ns/name"
    rep = to_dict(r)
    assert "base-URL setting should hold only scheme and host" in rep["reasonRecommendation"]
    assert f"{origin}{GATEWAY_PREFIX}" in rep["reasonRecommendation"]
    assert "interface.no_path_repeat" in _failed(r)


async def test_in_cluster_advertised_host_explains_unreachable(client: HttpClient) -> None:
    # the card comes from loopback but advertises an in-cluster name that does not resolve here
    async with run_agent("in_cluster_host") as agent:
        r = await _probe(client, agent.origin or "", timeout=3.0)
    assert r.reason is Reason.INTERFACE_URL_UNROUTABLE
    assert r.step(StepName.INVOKE).reason in (Reason.INVOKE_UNREACHABLE, Reason.INVOKE_TIMEOUT)  # type: ignore[union-attr]
    assert "controller.a2aBaseUrl" in to_dict(r)["reasonRecommendation"]


@pytest.mark.parametrize(("fault", "reason", "check_id", "fragment"), [
    ("html_interface", Reason.INVOKE_NOT_A2A, "invoke.framing", "text/html"),
    ("jsonrpc_error_200", Reason.INVOKE_A2A_ERROR, None, "-32603"),
    ("task_failed", Reason.TASK_FAILED, "invoke.task_completed", "FAILED"),
])
async def test_invoke_faults(client: HttpClient, fault: str, reason: Reason, check_id: str | None,
                             fragment: str) -> None:
    async with run_agent(fault) as agent:
        r = await _probe(client, agent.origin or "")
    assert r.reason is reason, to_dict(r)
    step = r.step(StepName.INVOKE)
    assert step is not None
    assert fragment in step.detail
    if check_id:
        assert check_id in _failed(r)
    assert to_dict(r)["reasonRecommendation"]


async def test_version_header_required_passes_because_probe_sends_it(client: HttpClient) -> None:
    async with run_agent("version_header_required") as agent:
        ok = await _probe(client, agent.origin or "")
        assert ok.success, to_dict(ok)
        assert all(rq.header("A2A-Version") == "1.0" for rq in agent.requests if rq.method == "POST")


async def test_version_header_required_fails_without_header() -> None:
    # a 0.3-only interface on a kagent-like server: no header is sent, so the server answers 400
    faults = Faults(protocol="0.3", require_version_header=True)
    async with DemoAgent("kagent-like", faults) as agent, HttpClient() as c:
        r = await _probe(c, agent.origin or "", a2a_version="0.3")
    assert r.reason is Reason.INVOKE_VERSION_UNSUPPORTED, to_dict(r)
    assert "400" in r.step(StepName.INVOKE).detail  # type: ignore[union-attr]


@pytest.mark.parametrize(("fault", "reason", "check_id"), [
    ("stream_never_terminates", Reason.STREAM_NO_TERMINAL, "stream.terminal"),
    ("stream_closes_early", Reason.STREAM_NO_TERMINAL, "stream.terminal"),
    ("stream_regression", Reason.STREAM_STATE_REGRESSION, "stream.no_regression"),
    ("stream_task_id_changes", Reason.STREAM_PROTOCOL_VIOLATION, "stream.consistent_ids"),
    ("stream_wrong_content_type", Reason.STREAM_NOT_A_STREAM, "stream.content_type"),
    ("stream_error_event", Reason.INVOKE_A2A_ERROR, None),
])
async def test_stream_faults(client: HttpClient, fault: str, reason: Reason, check_id: str | None) -> None:
    async with run_agent(fault) as agent:
        r = await _probe(client, agent.origin or "", timeout=2.0)
    assert r.reason is reason, to_dict(r)
    assert r.step(StepName.INVOKE).status is Status.PASS  # type: ignore[union-attr]
    stream = r.step(StepName.STREAM)
    assert stream is not None
    assert stream.status is Status.FAIL
    assert stream.reason is reason
    if check_id:
        assert check_id in _failed(r)
        rec = next(c.recommendation for c in r.checks if c.id == check_id)
        assert rec
    assert r.duration_s < 4.0  # the deadline bounds a stream that never ends


async def test_stream_regression_names_the_transition(client: HttpClient) -> None:
    async with run_agent("stream_regression") as agent:
        r = await _probe(client, agent.origin or "")
    msg = next(c.message for c in r.checks if c.id == "stream.no_regression")
    assert "COMPLETED -> WORKING" in msg


@pytest.mark.parametrize(("fault", "reason", "check_id", "fragment"), [
    ("invalid_card", Reason.CARD_INVALID, "card.required_fields", "name is missing"),
    ("oversized_card", Reason.CARD_INVALID, "card.size", "exceeds the 1048576-byte limit"),
    ("duplicate_keys_card", Reason.CARD_INVALID, "card.strict_json", "duplicate key 'name'"),
    ("nan_card", Reason.CARD_INVALID, "card.strict_json", "NaN is not valid JSON"),
])
async def test_card_faults(client: HttpClient, fault: str, reason: Reason, check_id: str, fragment: str) -> None:
    async with run_agent(fault) as agent:
        r = await _probe(client, agent.origin or "")
    assert r.reason is reason, to_dict(r)
    check = r.check(check_id)
    assert check is not None
    assert check.status is Status.FAIL
    assert fragment in check.message
    assert check.recommendation


async def test_invalid_card_lists_every_problem(client: HttpClient) -> None:
    async with run_agent("invalid_card") as agent:
        r = await _probe(client, agent.origin or "")
    msg = r.check("card.interfaces").message  # type: ignore[union-attr]
    assert "supportedInterfaces[0].url is missing" in msg
    assert "supportedInterfaces[1].url is missing" in msg
    assert r.reason is Reason.CARD_INVALID


async def test_pre_0_3_agent_is_detected_not_invoked(client: HttpClient) -> None:
    async with run_agent("pre_03") as agent:
        r = await _probe(client, agent.origin or "")
        posts = [rq for rq in agent.requests if rq.method == "POST"]
    assert r.reason is Reason.INVOKE_LEGACY_PROTOCOL
    assert r.check("card.well_known_path").status is Status.FAIL  # type: ignore[union-attr]
    assert "0.1" in r.check("card.protocol_version").message  # type: ignore[union-attr]
    assert posts == []


async def test_cross_origin_redirect_refused_and_no_credentials_leak(client: HttpClient) -> None:
    async with run_agent("healthy", name="other-origin") as other:
        faults = Faults(card_redirect_to=f"{other.origin}/.well-known/agent-card.json")
        async with DemoAgent("redirector", faults) as agent:
            r = await _probe(client, agent.origin or "", headers={"Authorization": "Bearer s3cret-token"})
            assert r.reason is Reason.CARD_UNREACHABLE
            assert r.check("card.no_cross_origin_redirect").status is Status.FAIL  # type: ignore[union-attr]
            assert other.requests == []
            # allowed: followed, still without credentials, and reported
            r2 = await _probe(client, agent.origin or "", headers={"Authorization": "Bearer s3cret-token"},
                              allow_cross_origin_redirect=True)
            assert r2.check("card.no_cross_origin_redirect").status is Status.FAIL  # type: ignore[union-attr]
            card_gets = [rq for rq in other.requests if rq.method == "GET"]
            assert card_gets
            assert all(rq.header("Authorization") is None for rq in card_gets)
            # discovery is public: the agent's own card GET carried no credentials either
            assert all(rq.header("Authorization") is None for rq in agent.requests if rq.method == "GET")
    assert "s3cret-token" not in str(to_dict(r2))


async def test_slow_task_polls_to_completion(client: HttpClient) -> None:
    async with run_agent(Faults(task_delay=0.6)) as agent:
        r = await _probe(client, agent.origin or "")
    assert r.success, to_dict(r)


async def test_task_timeout(client: HttpClient) -> None:
    async with run_agent("slow_task") as agent:
        r = await run_probe(Target(name="t", url=agent.origin or "", timeout=1.0), client,
                            steps=(StepName.INVOKE,))
    assert r.reason in (Reason.TASK_TIMEOUT, Reason.INVOKE_TIMEOUT)
    assert r.duration_s < 2.0


async def test_unreachable_card(client: HttpClient) -> None:
    r = await _probe(client, "http://127.0.0.1:9")
    assert r.reason is Reason.CARD_UNREACHABLE
    assert "cannot connect" in r.step(StepName.DISCOVER).detail  # type: ignore[union-attr]


async def test_card_404_everywhere(client: HttpClient) -> None:
    async with run_agent("healthy") as agent:
        r = await _probe(client, f"{agent.origin}/nothing-here")
    assert r.reason is Reason.CARD_HTTP_STATUS
    discover = r.step(StepName.DISCOVER)
    assert discover is not None
    # the well-known path, the legacy path, and the URL itself: every one listed with its answer
    assert [e.status for e in discover.exchanges] == [404, 404, 404]
    assert discover.detail.startswith("no Agent Card at any of the 3 URLs tried")
    assert discover.detail.count("answered HTTP 404") == 3 and "/nothing-here/.well-known/agent.json" in discover.detail


async def test_ping_step(client: HttpClient) -> None:
    async with run_agent("healthy") as agent:
        ok = await run_probe(Target(name="t", url=agent.origin or ""), client, steps=(StepName.PING,))
        methods = [rq.json()["method"] for rq in agent.requests if rq.method == "POST"]
    assert ok.success
    assert methods == ["GetTask"]
    async with run_agent("doubled_prefix") as agent:
        bad = await run_probe(Target(name="t", url=f"{agent.origin}{GATEWAY_PREFIX}"), client, steps=(StepName.PING,))
    assert bad.reason is Reason.INTERFACE_PATH_DOUBLED


async def test_timestamps_with_an_offset_are_a_must_finding_not_the_verdict(client: HttpClient) -> None:
    """1.0.0 and 1.0.1 §5.6.1: "Timestamps MUST NOT include timezone offsets other than 'Z' (all times are UTC)".
    a2a-sdk's json_format reads "+02:00", so the call works (invoke.schema passes, the verdict stays green); the
    offsets are a finding of their own, with where they were seen: the level and --fail-on must count it."""
    from probe.cli import failed
    from probe.levels import Level, level

    async with run_agent("timestamp_offset") as agent:
        r = await _probe(client, agent.origin or "")
    assert r.success and r.reason is None, to_dict(r)
    assert _failed(r) == {"invoke.timestamps_utc"}
    c = r.check("invoke.timestamps_utc")
    assert c is not None and c.severity == "MUST" and c.reason is None
    assert "carry an offset other than 'Z'" in c.message and "+02:00" in c.message
    assert "SendMessage: task.status.timestamp" in c.message or "GetTask: status.timestamp" in c.message
    assert "statusUpdate.status.timestamp" in c.message  # a stream event's
    schema_check = r.check("invoke.schema")
    assert schema_check is not None and schema_check.status is Status.PASS
    assert not failed(r, "verdict") and failed(r, "must")
    assert level(r) is Level.MINIMAL  # a lifecycle MUST, as invoke.camel_case: the answers break the text


async def test_timestamps_in_utc_pass_and_0_3_has_no_such_rule(client: HttpClient) -> None:
    """0.3 has no such rule: TaskStatus.timestamp is "An ISO 8601 datetime string" (the 0.3 JSON schema)."""
    async with run_agent("healthy") as v1, run_agent("timestamp_offset_03") as v03:
        ok = await _probe(client, v1.origin or "")
        old = await _probe(client, v03.origin or "")
    c = ok.check("invoke.timestamps_utc")
    assert c is not None and c.status is Status.PASS, c
    assert old.success and _failed(old) == set(), to_dict(old)
    c03 = old.check("invoke.timestamps_utc")
    assert c03 is not None and c03.status is Status.SKIP and "not graded: A2A 0.3" in c03.message
    assert "+00:00" in c03.message  # what was observed is still said
