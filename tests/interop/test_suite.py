"""The full conformance suite: levels against the official SDK peers, and proof that every check can fail."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import jsonschema
import pytest

from probe.checks import grading, urls
from probe.checks.catalogue import ALL_CHECKS
from probe.cli import main
from probe.engine import run_probe
from probe.reasons import Reason
from probe.results import ProbeResult, Status, StepName
from probe.suite import SuiteOptions, run_suite
from probe.target import AuthSpec, Target
from probe.wire.http import HttpClient
from tests.agents.catalogue import GATEWAY_PREFIX, run_agent
from tests.agents.scripted import Reply, scripted_agent, sse, status, task
from tests.agents.sloppy import Sloppy, sloppy_agent
from tests.agents.versioned import rpc, versioned_agent
from tests.peers.harness import Peer

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "probe" / "schemas" / "report.schema.json").read_text())
PROMPTS = ["--slow-prompt", "slow please", "--input-prompt", "input please"]
EXTENSIONS_CARD = {"capabilities": {"streaming": True, "extendedAgentCard": True,
                                    "extensions": [{"uri": "https://example.com/ext/signed/v1", "required": True}]}}

# The deviations each official SDK really has (sdk-peers.md); anything else failing is a regression. Both SDKs check a
# part's media type against the card's input modes only when asked to (a2a-sdk DefaultRequestHandler
# validate_input_modes, @a2a-js/sdk validateInputModes, both off by default): a part the card does not accept is
# processed, not refused with ContentTypeNotSupportedError (a SHOULD: 1.0 §13.4, 0.3 §8.2).
_MEDIA = "errors.content_type_not_supported"
# @a2a-js/sdk 1.3.0 refuses A2A-Version 1.0.1 with VersionNotSupportedError: its validateVersion (src/server/version.ts)
# looks the header up verbatim among the card's interface protocolVersions ("1.0"), where 1.0.1 §3.6 says patch
# numbers MUST not be considered in negotiation (a2a-sdk compares the major version only)
_PATCH = "errors.patch_version_ignored"
EXPECTED_FAILURES = {
    "py_peer": ({"card.cache_headers", _MEDIA}, "partial"),  # no Cache-Control on the card
    "js_peer": ({"errors.invalid_request", _MEDIA, _PATCH}, "partial"),  # malformed request -> -32602, not -32600
    # graded by 0.3's rules: card caching is a 1.0 rule (§8.6) only; 0.3 invalid params -> -32600
    "py_peer_compat": ({"errors.invalid_params", _MEDIA}, "partial"),
    "js_peer_compat": ({_MEDIA}, "partial"),
    # push on, through the CLI's own receiver (loopback, ephemeral): a2a-sdk's 0.3 delete answers without `result`
    "py_peer_push": ({"errors.invalid_params", "push.config_delete", _MEDIA}, "partial"),
    "js_peer_push": ({_MEDIA}, "partial"),
}


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["check", *args])
    return code, capsys.readouterr().out


@pytest.mark.external
@pytest.mark.parametrize("peer_name", sorted(EXPECTED_FAILURES))
def test_full_suite_levels_on_sdk_peers(peer_name: str, request: pytest.FixtureRequest,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    peer: Peer = request.getfixturevalue(peer_name)
    version = ["--a2a-version", "0.3"] if peer.compat else []
    code, out = _run(capsys, peer.base_url, "--suite", "full", *PROMPTS, *version, "--format", "json")
    rep = json.loads(out)
    jsonschema.validate(rep, SCHEMA)
    failed = {r["test"] for r in rep["results"] if r["status"] == "fail"}
    expected, level = EXPECTED_FAILURES[peer_name]
    assert failed == expected, [r for r in rep["results"] if r["status"] == "fail"]
    assert rep["conformanceLevel"] == level
    # --suite full exits 1 on a failed MUST check (the default --fail-on must); SHOULDs don't fail the run
    must_failed = any(r["severity"] == "MUST" for r in rep["results"] if r["status"] == "fail")
    assert code == (1 if must_failed else 0)
    ran = {r["test"] for r in rep["results"] if r["status"] != "skip"}
    # the prompts enable the multi-turn, cancel and subscribe checks on both SDKs
    assert {"lifecycle.input_required", "lifecycle.cancel", "streaming.subscribe", "errors.not_cancelable"} <= ran
    if not peer.compat:  # ListTasks and several streams of one task are 1.0 rules; history is graded in both
        assert {"lifecycle.list_tasks", "lifecycle.list_pagination", "streaming.multi_stream"} <= ran
    assert {"lifecycle.history_on_send", "lifecycle.history_kept", "lifecycle.history_order"} <= ran
    assert {r["test"] for r in rep["results"]} == {c.id for c in ALL_CHECKS}


@pytest.mark.external
def test_interop_between_the_two_sdks(py_peer: Peer, js_peer: Peer, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _run(capsys, py_peer.base_url, "--suite", "full", "--peer", js_peer.base_url, "--format", "json")
    results = {r["test"]: r for r in json.loads(out)["results"]}
    assert {t for t, r in results.items() if r["status"] == "fail"} == EXPECTED_FAILURES["py_peer"][0]
    assert code == 0  # the pinned deviations are SHOULDs, and the interop checks pass
    for cid in ("interop.common_interface", "interop.both_callable", "interop.no_cross_talk"):
        assert results[cid]["status"] == "pass", results[cid]
    assert "('JSONRPC', '1.0')" in results["interop.common_interface"]["message"]
    assert results["interop.delegation"]["status"] == "skip"


@pytest.mark.external
def test_safe_only_runs_no_agent_work(js_peer: Peer, capsys: pytest.CaptureFixture[str]) -> None:
    _, out = _run(capsys, js_peer.base_url, "--suite", "full", "--safe-only", "--format", "json")
    rep = json.loads(out)
    by_id = {c.id: c for c in ALL_CHECKS}
    for r in rep["results"]:
        if by_id[r["test"]].side_effects:
            assert r["status"] == "skip", r
    assert [s["name"] for s in rep["steps"]] == ["discover", "validate", "ping", "suite"]
    assert {r["test"] for r in rep["results"] if r["status"] == "pass"} >= {"errors.unknown_method",
                                                                            "errors.task_not_found"}


@pytest.mark.external
def test_markdown_and_junit_reports(py_peer: Peer, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    _, md = _run(capsys, py_peer.base_url, "--suite", "full", "--format", "markdown")
    assert "## Failed tests" in md and "| card.cache_headers | agent-card | SHOULD |" in md
    assert "## error-handling" in md and "## lifecycle" in md
    out = tmp_path / "junit.xml"
    main(["check", py_peer.base_url, "--suite", "full", "--format", "junit", "--output", str(out)])
    root = ET.parse(out).getroot()
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert {"agent-card", "lifecycle", "streaming", "error-handling", "security", "interop"} <= set(suites)
    failure = root.find(".//testcase[@name='card.cache_headers']/failure")
    assert failure is not None and "Recommendation:" in (failure.text or "")
    assert int(root.get("tests") or 0) == len(ALL_CHECKS)


def test_a_rendering_failure_still_prints_the_results(monkeypatch: pytest.MonkeyPatch) -> None:
    from probe import report

    r = ProbeResult(agent="x", target_url="http://x")

    def broken(_: ProbeResult) -> str:
        raise RuntimeError("template bug")

    monkeypatch.setitem(report.RENDERERS, "markdown", broken)
    out = report.render(r, "markdown")
    assert json.loads(out.split("\n<!--")[0])["agent"] == "x" and "rendering failed" in out


# ---- every catalogued check can fail -------------------------------------------------------------

async def _suite(client: HttpClient, url: str, **opts: Any) -> ProbeResult:
    headers = opts.pop("headers", {})
    target = Target(name="t", url=url, timeout=5.0, headers=headers)
    return await run_suite(target, client, SuiteOptions(timeout=20.0, slow_prompt="slow please",
                                                        input_prompt="input please", **opts))


async def _failing(r: ProbeResult) -> set[str]:
    return {c.id for c in r.checks if c.status is Status.FAIL}


async def test_every_check_can_fail(client: HttpClient) -> None:
    failed: set[str] = set()

    async def probe(url: str, **kw: Any) -> None:
        failed.update(await _failing(await _suite(client, url, **kw)))

    bad_card = {"securitySchemes": {"oauth": {"oauth2SecurityScheme": {"flows": {"clientCredentials": {}}}}},
                "securityRequirements": [{"schemes": {"missing": {"list": []}}}],
                "capabilities": {"streaming": "yes"},
                "skills": [{"id": "s", "name": "s", "description": "d"}],
                "iconUrl": 7}  # card.schema: the official parser refuses a number where a string belongs
    async with sloppy_agent(Sloppy(card_extra=bad_card, card_headers={"Content-Type": "text/html"})) as url:
        await probe(url)  # lifecycle.*, errors.*, card.*, security (declared, not enforced)
    async with sloppy_agent(Sloppy()) as url:
        await probe(url)  # with streaming declared: subscribe to a terminal task is accepted
    async with sloppy_agent(Sloppy({"subscribe", "error_info"})) as url:
        await probe(url)  # cancel works, the subscription is not a stream; errors without ErrorInfo
    async with sloppy_agent(Sloppy({"untyped_details", "response_id"})) as url:
        await probe(url)  # an object without @type in error.data; error answers without their id
    from tests.agents.rest_mapping import rest_mapping_agent

    async with rest_mapping_agent("unmapped") as url:  # A2A errors over HTTP+JSON in neither 1.0 mapping's status
        rest = Target(name="t", url=url, timeout=5.0, binding="HTTP+JSON")
        failed.update(await _failing(await run_suite(rest, client, SuiteOptions(timeout=20.0))))
    async with sloppy_agent(Sloppy(set(), streaming=False)) as url:
        await probe(url)  # streams although streaming is not declared
    async with sloppy_agent(Sloppy({"version_on_send"})) as url:
        await probe(url)
    async with sloppy_agent(Sloppy({"list_tasks", "list_pagination", "history_on_send", "history_order",
                                    "multi_stream"})) as url:
        await probe(url)  # ListTasks unfiltered and unpaged, historyLength ignored, history reordered, no broadcast
    async with sloppy_agent(Sloppy({"history_kept", "offset_stamp", "media_type"})) as url:
        await probe(url)  # no history kept at all; GetTask's timestamps at +00:00; answers as text/plain
    async with sloppy_agent(Sloppy({"history_empty"})) as url:
        await probe(url)  # "history": [] at historyLength 0
    async with sloppy_agent(Sloppy({"required_gap", "stream_zoneless"})) as url:
        await probe(url)  # GetTask's artifacts without artifactId; a zoneless timestamp in the stream
    async with sloppy_agent(Sloppy({"context_inferred", "context_mismatch", "patch_version"})) as url:
        await probe(url)  # follow-ups naming an INPUT_REQUIRED task: a new contextId; another contextId accepted;
        # A2A-Version 1.0.1 refused
    async with sloppy_agent(Sloppy({"extension", "extended_card_auth", "extensions_echo"},
                                   card_extra=EXTENSIONS_CARD)) as url:
        await probe(url)  # a required extension not enforced nor echoed; the extended card served without credentials
    auth = {"securitySchemes": {"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}},
            "securityRequirements": [{"schemes": {"bearer": {"list": []}}}]}
    from pydantic import SecretStr

    async with sloppy_agent(Sloppy(set(), card_extra=auth, require_auth=True)) as url:
        await probe(url, headers={"Authorization": SecretStr("Bearer sloppy-token")})  # 401 without a challenge
    async with sloppy_agent(Sloppy(set(), card_status=401)) as url:
        await probe(url)
    from tests.agents.scope_agent import scope_agent

    async with scope_agent("shared", {"alice-every": "alice", "bob-every": "bob"}) as url:  # security.scoped_access
        shared = Target(name="t", url=url, timeout=5.0, auth=AuthSpec(bearer=SecretStr("alice-every")),
                        other_auth=AuthSpec(bearer=SecretStr("bob-every")))
        failed.update(await _failing(await run_suite(shared, client, SuiteOptions(timeout=20.0))))
    http_iface = {"supportedInterfaces": [{"url": "", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
                                          {"url": "http://agent.example.com/a2a", "protocolBinding": "JSONRPC",
                                           "protocolVersion": "1.0"}]}
    sloppy = Sloppy(set(), card_extra=http_iface)
    async with sloppy_agent(sloppy) as url:
        http_iface["supportedInterfaces"][0]["url"] = f"{url}/rpc"
        await probe(url)  # card.https on the second interface
    async with sloppy_agent(Sloppy(set(), card_extra={"supportedInterfaces": [
            {"url": "127.0.0.1:1", "protocolBinding": "GRPC", "protocolVersion": "1.0"}]})) as url:
        await probe(url)  # interface.selected
    # interop: no common interface, a broken peer, shared task ids, a delegation that never arrives
    async with run_agent("healthy") as a, run_agent("healthy_03") as b:
        await probe(a.origin or "", peer=Target(name="b", url=b.origin or "", a2a_version="0.3"))
        await probe(a.origin or "", peer=Target(name="b", url=b.origin or ""), delegation_prompt="ask b",
                    delegation_expect="never-there")
    async with run_agent("healthy") as a, run_agent("doubled_prefix") as b:
        await probe(a.origin or "", peer=Target(name="b", url=f"{b.origin}{GATEWAY_PREFIX}"))
    async with sloppy_agent(Sloppy({"same_task_id"})) as x, sloppy_agent(Sloppy(set())) as y:
        await probe(x, peer=Target(name="y", url=y))
    # push notifications: the push fault agents, with the probe's own receiver
    from probe.inbox import Listener
    from tests.agents.push_faults import PushFault, push_fault_agent

    async with Listener() as inbox:
        for push_fault in ("never", "out_of_order", "no_token", "wrong_task", "bad_payload", "broken_config",
                           "not_supported"):
            async with push_fault_agent(PushFault(push_fault)) as url:
                await probe(url, inbox=inbox)
    # the basic probe's own checks, from the fault agents
    for fault in ("pre_03", "oversized_card", "duplicate_keys_card", "invalid_card", "doubled_prefix",
                  "in_cluster_host", "html_interface", "task_failed", "stream_wrong_content_type",
                  "stream_task_id_changes", "stream_regression", "stream_closes_early"):
        async with run_agent(fault) as agent:
            base = f"{agent.origin}{GATEWAY_PREFIX}" if fault == "doubled_prefix" else agent.origin or ""
            failed.update(await _failing(await run_probe(Target(name="t", url=base, timeout=3.0), client)))
    async with run_agent("healthy") as agent:
        base = agent.origin or ""
        for steps in ((StepName.INVOKE,), (StepName.STREAM,)):
            r = await run_probe(Target(name="t", url=base, expect_text="never-there"), client, steps=steps)
            failed.update(await _failing(r))
        failed.update(await _failing(await run_probe(Target(name="t", url=f"{base}/nope"), client)))
        from tests.trust.material import ec_key, jwks

        unsigned = Target(name="t", url=base, trusted_jwks=jwks(ec_key("k")), signature_policy="verify")
        failed.update(await _failing(await run_probe(unsigned, client, steps=())))  # card.signature_trusted
    # card.signature: a card changed after it was signed under a trusted key
    from tests.trust.agent import base_card, trust_agent
    from tests.trust.material import sign

    key = ec_key("k")

    def tampered(origin: str) -> dict[str, Any]:
        return {**sign(base_card(origin), key), "name": "someone else"}

    async with trust_agent(tampered) as signed:
        r = await run_probe(Target(name="t", url=signed.origin, trusted_jwks=jwks(key), signature_policy="verify"),
                            client, steps=())
        failed.update(await _failing(r))
    # card.not_modified: the daemon's revalidation of a cached card gets a 304 naming another ETag
    from probe.engine import run_interfaces
    from probe.wire.cardcache import CardCache
    from tests.agents.cache_agent import CardAgent
    from tests.agents.server import serve

    cache_agent, cards = CardAgent(), CardCache(default_max_age=300)
    cache_agent.cache_headers, cache_agent.etag_on_304 = {"Cache-Control": "max-age=0"}, '"other"'
    async with serve(cache_agent.app()) as origin:
        for _ in range(2):
            r = await run_interfaces(Target(name="t", url=origin), client, steps=(), agree=False, cards=cards)
            failed.update(await _failing(r))
    from tests.trust.scenarios import trust_failures

    failed |= await trust_failures(client)  # tls.cert_expiry, tls.verified, card.extended
    from tests.agents.fault_agent import DemoAgent, Faults

    async with run_agent("healthy") as other, DemoAgent("r", Faults(
            card_redirect_to=f"{other.origin}/.well-known/agent-card.json")) as agent:
        failed.update(await _failing(await run_probe(Target(name="t", url=agent.origin or ""), client)))
    scripted = {
        "body_03": {"SendMessage": Reply(chunks=[json.dumps({"jsonrpc": "2.0", "id": "{id}", "result": {
            "kind": "task", "id": "t", "contextId": "c", "status": {"state": "completed"}}})])},
        "state_03": {"SendMessage": Reply(chunks=[json.dumps({"jsonrpc": "2.0", "id": "{id}", "result": {
            "task": {"id": "t", "contextId": "c", "status": {"state": "completed"}}}})])},
        "stream_rules": {"SendStreamingMessage": Reply(content_type="text/event-stream", chunks=[
            "data: {broken\n\n", *sse(status("WORKING"), {"artifactUpdate": {
                "taskId": "t1", "contextId": "c1", "append": True, "artifact": {"artifactId": "z", "parts": []}}},
                status("COMPLETED"), status("WORKING"))])},
        "stream_open": {"SendStreamingMessage": Reply(content_type="text/event-stream", hold_open=3.0,
                                                      chunks=sse(task("SUBMITTED"), status("COMPLETED")))},
        "stream_failed": {"SendStreamingMessage": Reply(content_type="text/event-stream",
                                                        chunks=sse(task("SUBMITTED"), status("FAILED")))},
        "zoneless": {"SendMessage": Reply(chunks=[json.dumps({"jsonrpc": "2.0", "id": "{id}", "result": {"task": {
            "id": "t", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED",
                                                    "timestamp": "2026-01-01T00:00:00"}}}})])},
        "snake_case": {"SendMessage": Reply(chunks=[json.dumps({"jsonrpc": "2.0", "id": "{id}", "result": {
            "task": {"id": "t", "context_id": "c", "status": {"state": "TASK_STATE_COMPLETED"}}}})])},
        "rpc_error": {"SendMessage": Reply(chunks=[json.dumps({"jsonrpc": "2.0", "id": "{id}", "error": {
            "code": -32603, "message": "internal"}})])},
        "stream_error": {"SendStreamingMessage": Reply(content_type="text/event-stream", chunks=[
            "data: " + json.dumps({"jsonrpc": "2.0", "id": "{id}", "error": {"code": -32603, "message": "x"}})
            + "\n\n"])},
        "not_blocking": {"SendMessage": Reply(chunks=[json.dumps({"jsonrpc": "2.0", "id": "{id}", "result": task(
            "WORKING")})]), "GetTask": Reply(chunks=[json.dumps({"jsonrpc": "2.0", "id": "{id}", "result": task(
                "COMPLETED")["task"]})])},
        "other_task": {"SendMessage": Reply(chunks=[json.dumps({"jsonrpc": "2.0", "id": "{id}", "result": task(
            "WORKING")})]), "GetTask": Reply(chunks=[json.dumps({"jsonrpc": "2.0", "id": "{id}", "result": task(
                "COMPLETED", tid="t2")["task"]})])},
    }
    for name, replies in scripted.items():
        async with scripted_agent(replies) as origin:
            steps = (StepName.INVOKE,) if name in ("body_03", "state_03", "zoneless", "snake_case",
                                                   "not_blocking", "rpc_error", "other_task") else (StepName.STREAM,)
            r = await run_probe(Target(name=name, url=origin, timeout=3.0, stream_close_grace=0.2), client,
                                steps=steps)
            failed.update(await _failing(r))
    # unknown ids answered -32601, not TaskNotFoundError; a Last-Modified that is not an HTTP-date; SubscribeToTask
    # answered InternalError whatever the task (a SubscribeToTask that is MethodNotFound is one root cause, failed by
    # the first check that meets it: streaming.subscribe_unknown would depend on streaming.subscribe_terminal)
    completed = {"task": {"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"},
                          "artifacts": [{"artifactId": "a", "parts": [{"text": "ok"}]}]}}
    internal = rpc(error={"code": -32603, "message": "internal error"})
    async with versioned_agent("1.0", {"SendMessage": rpc(completed), "SubscribeToTask": internal},
                               card_headers={"Last-Modified": "yesterday"},
                               card_extra={"capabilities": {"streaming": True}}) as url:
        await probe(url)
    # a probe that cannot run (its own config, or a bug) still fails a check, so JUnit agrees with the exit code
    crashed = ProbeResult(agent="t", target_url="http://x", reason=Reason.PROBE_ERROR, problem="bug")
    grading.agree(crashed)
    failed.update(c.id for c in crashed.failed_checks())
    # https card advertising http: needs TLS on loopback; shown at the diagnosis level
    if any(f.check_id == "interface.scheme" for f in urls.diagnose("https://gw/.well-known/agent-card.json",
                                                                   "http://gw/a2a")):
        failed.add("interface.scheme")
    # credentials in the advertised URL: live in tests/hostile/test_userinfo.py
    if any(f.check_id == "interface.no_credentials" for f in urls.diagnose("http://gw/.well-known/agent-card.json",
                                                                           "http://u:p@gw/a2a")):
        failed.add("interface.no_credentials")
    # a schemeless gRPC URL: the gRPC peer's card fails it live in tests/interop/test_bindings.py
    from probe.wire.bindings.grpc_binding import target_of

    if target_of("127.0.0.1:50051")[2]:
        failed.add("interface.grpc_url")
    # a card that declares security, enforced on JSON-RPC and not on gRPC (the official SDK's server: live in
    # tests/interop/test_bindings_same_auth.py)
    from pydantic import SecretStr

    from tests.agents.grpc_faults import grpc_fault_agent

    async with grpc_fault_agent("auth_jsonrpc_only") as origin:
        r = await run_interfaces(Target(name="t", url=origin, headers={"Authorization": SecretStr("Bearer t")}),
                                 client, steps=(StepName.INVOKE,))
        failed.update(await _failing(r))
    # two interfaces that disagree (live: tests/interop/test_bindings.py::test_binding_all_names_the_broken_binding)
    from probe.engine import _equivalence
    from probe.results import InterfaceResult

    split = ProbeResult(agent="t", target_url="http://x", interfaces=[
        InterfaceResult(binding="jsonrpc", protocol_binding="JSONRPC", success=True),
        InterfaceResult(binding="grpc", protocol_binding="GRPC", reason=Reason.INVOKE_UNREACHABLE)])
    _equivalence(split)
    failed.update(c.id for c in split.failed_checks())
    never_failed = {c.id for c in ALL_CHECKS} - failed
    assert never_failed == set(), f"checks no scenario made fail: {sorted(never_failed)}"
