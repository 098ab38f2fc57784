"""HTTP+JSON against the official SDK servers' REST endpoints, and REST fault agents with exact reasons."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from aiohttp import web

from probe.cli import main
from probe.engine import run_probe
from probe.reasons import Reason
from probe.report import to_dict
from probe.results import Status, StepName
from probe.suite import SuiteOptions, run_suite
from probe.target import Target
from probe.wire.http import HttpClient
from tests.agents.bindings import multi_binding_app as _rest_agent
from tests.agents.server import serve
from tests.peers.harness import Peer

REPORT_SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "probe" / "schemas" / "report.schema.json")
                           .read_text())

PEERS = ["py_peer", "js_peer"]
NOT_FOUND_INFO = {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "TASK_NOT_FOUND",
                  "domain": "a2a-protocol.org"}


@pytest.mark.external
@pytest.mark.parametrize("peer_name", PEERS)
def test_quick_check_over_http_json(peer_name: str, request: pytest.FixtureRequest,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    peer: Peer = request.getfixturevalue(peer_name)
    code = main(["check", peer.base_url, "--binding", "http_json", "--message", "hello rest",
                 "--expect-text", "echo: hello rest", "--format", "json"])
    rep = json.loads(capsys.readouterr().out)
    assert code == 0, rep
    assert (rep["binding"], rep["interfaceUrl"], rep["protocolVersion"]) == ("HTTP+JSON", peer.rest_url, "1.0")
    steps = {s["name"]: s for s in rep["steps"]}
    assert steps["invoke"]["method"] == "POST /message:send"
    assert steps["stream"]["method"] == "POST /message:stream"
    results = {r["test"]: r for r in rep["results"]}
    assert "application/a2a+json" in results["invoke.transport"]["message"]  # the content type seen is reported


@pytest.mark.external
@pytest.mark.parametrize("peer_name", PEERS)
async def test_full_suite_over_http_json(peer_name: str, request: pytest.FixtureRequest, client: HttpClient) -> None:
    peer: Peer = request.getfixturevalue(peer_name)
    r = await run_suite(Target(name=peer_name, url=peer.base_url, binding="HTTP+JSON"), client,
                        SuiteOptions(timeout=60, slow_prompt="slow", input_prompt="input please"))
    failed = {c.id: c.message for c in r.checks if c.status is Status.FAIL and c.id != "card.cache_headers"}
    # both SDKs accept any part media type unless validate_input_modes is on; @a2a-js/sdk refuses A2A-Version 1.0.1
    # (test_suite.EXPECTED_FAILURES)
    expected = {"errors.content_type_not_supported"} | ({"errors.patch_version_ignored"} if peer_name == "js_peer"
                                                         else set())
    assert set(failed) == expected, failed
    checks = {c.id: c for c in r.checks}
    for jsonrpc_only in ("errors.parse_error", "errors.invalid_request", "errors.unknown_method"):
        assert checks[jsonrpc_only].status is Status.SKIP and "jsonrpc-only" in checks[jsonrpc_only].message
    for id_ in ("errors.task_not_found", "errors.not_cancelable", "lifecycle.cancel", "streaming.subscribe",
                "errors.version_not_supported", "lifecycle.get_task"):
        assert checks[id_].status is Status.PASS, (id_, checks[id_].message)
    assert "HTTP 404 TaskNotFoundError (TASK_NOT_FOUND)" in checks["errors.task_not_found"].message


async def test_a_rest_route_that_404s_while_jsonrpc_works(client: HttpClient) -> None:
    async with serve(_rest_agent({})) as origin:  # no REST route at all: aiohttp's plain 404
        rest = await run_probe(Target(name="r", url=origin, binding="HTTP+JSON"), client, steps=(StepName.INVOKE,))
        rpc = await run_probe(Target(name="r", url=origin), client, steps=(StepName.INVOKE,))
    assert rpc.success, rpc.reason
    assert rest.reason is Reason.INVOKE_ROUTE_NOT_FOUND
    assert rest.binding == "HTTP+JSON"
    assert "without an A2A error body" in (rest.failed_checks()[0].message + str(rest.steps[-1].detail))


async def test_a_rest_a2a_404_is_not_a_route_404(client: HttpClient) -> None:
    status = {"error": {"code": 404, "status": "NOT_FOUND", "message": "Task not found", "details": [
        NOT_FOUND_INFO]}}

    async def get_task(_: web.Request) -> web.Response:
        return web.json_response(status, status=404)

    async with serve(_rest_agent({"GET /rest/tasks/{id}": get_task})) as origin:
        r = await run_probe(Target(name="r", url=origin, binding="HTTP+JSON"), client, steps=(StepName.PING,))
    assert r.success, r.steps  # the ping's TaskNotFound proves the route reaches an A2A server


async def test_a_rest_error_body_with_the_wrong_status(client: HttpClient) -> None:
    status = {"error": {"code": 500, "status": "INTERNAL", "message": "no such task", "details": [
        NOT_FOUND_INFO]}}

    async def get_task(_: web.Request) -> web.Response:
        return web.json_response(status, status=500)

    async with serve(_rest_agent({"GET /rest/tasks/{id}": get_task})) as origin:
        r = await run_probe(Target(name="r", url=origin, binding="HTTP+JSON"), client, steps=(StepName.PING,))
    assert r.reason is Reason.INVOKE_UNEXPECTED_STATUS
    assert "the spec maps TaskNotFoundError to HTTP 404" in (r.steps[-1].detail or "")


# ---- gRPC (the Python SDK peer serves lf.a2a.v1.A2AService from the same process)


@pytest.mark.external
def test_quick_check_over_grpc(py_peer: Peer, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["check", py_peer.base_url, "--binding", "grpc", "--message", "hello grpc",
                 "--expect-text", "echo: hello grpc", "--format", "json"])
    rep = json.loads(capsys.readouterr().out)
    assert code == 0, rep
    assert (rep["binding"], rep["interfaceUrl"], rep["protocolVersion"]) == ("GRPC", py_peer.grpc_url, "1.0")
    steps = {s["name"]: s for s in rep["steps"]}
    assert (steps["invoke"]["method"], steps["stream"]["method"]) == ("SendMessage", "SendStreamingMessage")
    results = {r["test"]: r for r in rep["results"]}
    assert results["interface.grpc_url"]["status"] == "fail"  # the SDK advertises a schemeless host:port (SHOULD)
    assert results["invoke.transport"]["message"].startswith("gRPC OK")


@pytest.mark.external
async def test_full_suite_over_grpc(py_peer: Peer, client: HttpClient) -> None:
    r = await run_suite(Target(name="py-grpc", url=py_peer.base_url, binding="GRPC"), client,
                        SuiteOptions(timeout=60, slow_prompt="slow", input_prompt="input please"))
    failed = {c.id: c.message for c in r.checks if c.status is Status.FAIL}
    # the Python SDK's gRPC handler ignores the a2a-version metadata (its HTTP handlers enforce it): a real
    # finding on this binding only, as the sdk-peers notes say -- 99.0 is accepted, and a call without the key is
    # served as 1.0 rather than read as 0.3; and it accepts any part media type (validate_input_modes is off)
    assert set(failed) == {"card.cache_headers", "interface.grpc_url", "errors.version_not_supported",
                           "errors.missing_version_is_0_3", "errors.content_type_not_supported"}, failed
    checks = {c.id: c for c in r.checks}
    for id_ in ("errors.task_not_found", "errors.not_cancelable", "lifecycle.cancel", "streaming.subscribe",
                "lifecycle.get_task", "lifecycle.history_length", "errors.error_info"):
        assert checks[id_].status is Status.PASS, (id_, checks[id_].message)
    assert "gRPC NOT_FOUND TaskNotFoundError (TASK_NOT_FOUND)" in checks["errors.task_not_found"].message
    assert checks["errors.parse_error"].status is Status.SKIP
    assert checks["errors.error_info"].severity == "MUST"  # §10.6: "MUST include a google.rpc.ErrorInfo"
    # §5.5 "All JSON serializations … MUST use camelCase", §5.6.1 timestamps "serialized to JSON": not gRPC's
    for id_ in ("invoke.camel_case", "invoke.timestamps_utc"):
        assert checks[id_].status is Status.SKIP and "other bindings than grpc" in checks[id_].message, checks[id_]


async def test_a_closed_grpc_port_while_jsonrpc_works(client: HttpClient) -> None:
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]

    app = _rest_agent({}, extra=((f"http://127.0.0.1:{dead}", "GRPC", "1.0"),))
    async with serve(app) as origin:
        g = await run_probe(Target(name="g", url=origin, binding="GRPC", timeout=5), client, steps=(StepName.INVOKE,))
        rpc = await run_probe(Target(name="g", url=origin), client, steps=(StepName.INVOKE,))
    assert rpc.success, rpc.reason
    assert g.reason is Reason.INVOKE_UNREACHABLE, g.steps
    assert g.binding == "GRPC"
    invoke = g.step(StepName.INVOKE)
    assert invoke is not None and invoke.exchanges[0].grpc_status == "UNAVAILABLE"
    # the report names each exchange's transport and its status in that transport's own terms
    [grpc_step] = [st for st in to_dict(g)["steps"] if st["name"] == "invoke"]
    assert [(e["transport"], e["grpcStatus"], e["status"]) for e in grpc_step["http"]] == [("grpc", "UNAVAILABLE",
                                                                                               None)]
    [rpc_step] = [st for st in to_dict(rpc)["steps"] if st["name"] == "invoke"]
    assert {(e["transport"], e["grpcStatus"]) for e in rpc_step["http"]} == {("http", None)}
    jsonschema.Draft202012Validator(REPORT_SCHEMA).validate(to_dict(g))


# ---- every advertised interface (--binding all)


@pytest.mark.external
def test_binding_all_probes_every_interface_of_the_sdk_peer(py_peer: Peer, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["check", py_peer.base_url, "--binding", "all", "--format", "json"])
    rep = json.loads(capsys.readouterr().out)
    assert code == 0, rep
    entries = {(i["binding"], i["protocolVersion"]): i for i in rep["interfaces"]}
    assert set(entries) == {("jsonrpc", "1.0"), ("http_json", "1.0"), ("grpc", "1.0")}
    assert entries[("grpc", "1.0")]["interfaceUrl"] == py_peer.grpc_url
    assert all(i["success"] and i["finalState"] == "COMPLETED" for i in entries.values())
    assert rep["binding"] == "JSONRPC"  # the top-level fields describe the first interface, as before
    agree = next(r for r in rep["results"] if r["test"] == "interop.bindings_agree")
    assert agree["status"] == "pass"


async def test_binding_all_names_the_broken_binding(client: HttpClient) -> None:
    from probe.engine import run_interfaces

    async with serve(_rest_agent({})) as origin:  # JSON-RPC works, the REST route is missing
        r = await run_interfaces(Target(name="r", url=origin), client, steps=(StepName.INVOKE,))
    entries = {i.binding: i for i in r.interfaces}
    assert entries["jsonrpc"].success and not entries["http_json"].success
    assert entries["http_json"].reason is Reason.INVOKE_ROUTE_NOT_FOUND
    assert not r.success and r.reason is Reason.INVOKE_ROUTE_NOT_FOUND  # the agent is not healthy
    agree = r.check("interop.bindings_agree")
    assert agree is not None and agree.status is Status.FAIL
    assert "http_json 1.0 (invoke_route_not_found)" in agree.message


# ---- the full suite on every advertised interface (--suite full --binding all)

# what each SDK peer really deviates in, per interface (None: the card's own checks); sdk-peers.md §9, §12.6
# both SDKs accept any part media type unless validate_input_modes is on (test_suite.EXPECTED_FAILURES), on every
# binding; the Python gRPC handler ignores a2a-version, so a call without it is served as 1.0 too
_MEDIA = "errors.content_type_not_supported"
SUITE_DEVIATIONS = {
    "py_peer": {(None, "card.cache_headers"), ("grpc 1.0", "interface.grpc_url"),
                ("grpc 1.0", "errors.version_not_supported"), ("grpc 1.0", "errors.missing_version_is_0_3"),
                ("jsonrpc 1.0", _MEDIA), ("http_json 1.0", _MEDIA), ("grpc 1.0", _MEDIA)},
    "js_peer": {("jsonrpc 1.0", "errors.invalid_request"), ("grpc 1.0", "interface.grpc_url"),
                ("jsonrpc 1.0", _MEDIA), ("http_json 1.0", _MEDIA), ("grpc 1.0", _MEDIA),
                # it refuses A2A-Version 1.0.1 (test_suite._PATCH)
                *{(i, "errors.patch_version_ignored") for i in ("jsonrpc 1.0", "http_json 1.0", "grpc 1.0")}},
}


@pytest.mark.external
@pytest.mark.parametrize("peer_name", PEERS)
def test_full_suite_on_every_binding(peer_name: str, request: pytest.FixtureRequest, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    from xml.etree import ElementTree as ET

    peer: Peer = request.getfixturevalue(peer_name)
    args = ["check", peer.base_url, "--suite", "full", "--binding", "all", "--slow-prompt", "slow",
            "--input-prompt", "input please", "--suite-timeout", "60"]
    code = main([*args, "--format", "json"])
    rep = json.loads(capsys.readouterr().out)
    jsonschema.Draft202012Validator(REPORT_SCHEMA).validate(rep)
    failed = {(r["interface"], r["test"]) for r in rep["results"] if r["status"] == "fail"}
    assert failed == SUITE_DEVIATIONS[peer_name], failed
    musts = [r for r in rep["results"] if r["status"] == "fail" and r["severity"] == "MUST"]
    assert code == (1 if musts else 0)  # --fail-on must, the suite's default
    entries = {f"{i['binding']} {i['protocolVersion']}": i for i in rep["interfaces"]}
    expected = {"jsonrpc 1.0", "http_json 1.0", "grpc 1.0"}  # both SDK peers serve gRPC
    assert set(entries) == expected
    for key, entry in entries.items():
        assert entry["success"] and entry["reason"] is None, key
        own = {r["test"] for r in entry["results"]}
        # each interface ran the binding-neutral suite itself; JSON-RPC-only checks are skipped elsewhere, saying so
        assert {"errors.task_not_found", "lifecycle.cancel", "streaming.subscribe", "errors.no_server_errors"} <= own
        parse = next(r for r in entry["results"] if r["test"] == "errors.parse_error")
        if key.startswith("jsonrpc"):
            assert parse["status"] == "pass"
        else:
            assert parse["status"] == "skip" and "jsonrpc-only check" in parse["message"]
        assert entry["summary"]["failed"] == sum(1 for (where, _) in failed if where == key)
        assert entry["conformanceLevel"] in ("full", "partial")
        assert entry["outcomes"] == {"GetTask of an unknown task id": "TaskNotFoundError",
                                     "CancelTask of a finished task": "TaskNotCancelableError"}
    agree = next(r for r in rep["results"] if r["test"] == "interop.bindings_agree")
    assert agree["status"] == "pass", agree
    # JUnit: a testsuite per interface and category; its failures are the JSON summary's, as is the exit code
    out = tmp_path / "a2a.xml"
    assert main([*args, "--format", "junit", "--output", str(out)]) == code
    junit = ET.parse(out).getroot()
    assert int(junit.get("failures", "-1")) == len(junit.findall(".//testcase/failure")) == len(failed)
    suites = {s.get("name") for s in junit.findall("testsuite")}
    assert {f"{key} error-handling" for key in expected} <= suites and "agent-card" in suites
    assert main([*args, "--format", "markdown", "--output", str(tmp_path / "a2a.md")]) == code
    md = (tmp_path / "a2a.md").read_text()
    assert "## Interfaces" in md and all(f"## error-handling ({key})" in md for key in expected)


async def test_binding_all_names_a_rest_error_body_with_the_wrong_status(client: HttpClient) -> None:
    from probe.engine import run_interfaces

    status = {"error": {"code": 500, "status": "INTERNAL", "message": "no such task", "details": [NOT_FOUND_INFO]}}

    async def get_task(_: web.Request) -> web.Response:
        return web.json_response(status, status=500)

    async with serve(_rest_agent({"GET /rest/tasks/{id}": get_task})) as origin:
        r = await run_interfaces(Target(name="r", url=origin), client, steps=(StepName.PING,))
    rep = to_dict(r)
    entries = {i["binding"]: i for i in rep["interfaces"]}
    assert entries["jsonrpc"]["success"] and entries["http_json"]["reason"] == "invoke_unexpected_status"
    assert rep["reason"] == "invoke_unexpected_status"  # one broken binding fails the agent, with its reason
    carrier = next(x for x in rep["results"] if x["reason"] == "invoke_unexpected_status")
    assert carrier["interface"] == "http_json 1.0"
    agree = next(x for x in rep["results"] if x["test"] == "interop.bindings_agree")
    assert "jsonrpc 1.0 pass(es) but http_json 1.0 (invoke_unexpected_status) fail(s)" in agree["message"]
    # and as the daemon exports it: the binding label names the broken one, with its reason
    from tests.daemon.helpers import binding_metrics

    assert binding_metrics(r, "ping") == ({"jsonrpc": 1.0, "http_json": 0.0},
                                          {"jsonrpc": "none", "http_json": "invoke_unexpected_status"})


@pytest.mark.external
@pytest.mark.parametrize("peer_name", ["py_peer_compat", "js_peer_compat"])
async def test_binding_all_across_versions_of_the_compat_peers(peer_name: str, request: pytest.FixtureRequest,
                                                               client: HttpClient) -> None:
    from probe.engine import run_interfaces

    peer: Peer = request.getfixturevalue(peer_name)
    r = await run_interfaces(Target(name=peer_name, url=peer.base_url), client)
    versions = {i.protocol_version for i in r.interfaces}
    assert versions == {"1.0", "0.3"}, r.interfaces
    assert all(i.success for i in r.interfaces), [(i.key, i.reason) for i in r.interfaces]
    for i in r.interfaces:  # the same error names in 1.0 and 0.3, on every binding
        assert i.outcomes == {"GetTask of an unknown task id": "TaskNotFoundError",
                              "CancelTask of a finished task": "TaskNotCancelableError"}, i.key
    agree = r.check("interop.bindings_agree")
    assert agree is not None and agree.status is Status.PASS, agree
    # the card is judged once (graded by the first interface's version), not once per interface
    cache = [c for c in r.checks if c.id == "card.cache_headers"]
    assert len(cache) == 1 and cache[0].interface is None
    assert (cache[0].status is Status.FAIL) is (peer_name == "py_peer_compat")  # only Python omits Cache-Control
    rep = to_dict(r)
    levels = {f"{i['binding']} {i['protocolVersion']}": i["conformanceLevel"] for i in rep["interfaces"]}
    if peer_name == "py_peer_compat":  # the missing Cache-Control is a 1.0 SHOULD; 0.3 has no such rule
        assert levels["jsonrpc 0.3"] == "full" and levels["jsonrpc 1.0"] == "partial", levels
