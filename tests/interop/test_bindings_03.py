"""A2A 0.3 over HTTP+JSON (`/v1/...`, the 0.3 proto's JSON) and gRPC (`a2a.v1.A2AService`), and the JS SDK's gRPC.

Real servers: the official a2a-sdk 0.3 line (0.3.26, its own venv: JSON-RPC, REST and gRPC from one process),
and the 1.x SDKs' 0.3 compat layers (Python and JS serve 0.3 REST under the 1.0 REST prefix and the 0.3 gRPC
service beside the 1.0 one). Each quick check and full suite names its binding and version; where a server
deviates from the 0.3 text the suite reports exactly that, and nothing else.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import grpc
import grpc.aio
import pytest
from aiohttp import web

from probe.cli import main
from probe.engine import run_probe
from probe.reasons import Reason
from probe.report import to_dict
from probe.results import StepName
from probe.target import Target
from probe.wire.http import HttpClient
from tests.agents.server import serve, serve_grpc
from tests.peers import venv_peers
from tests.peers.harness import Peer
from tests.peers.venv_peers import VenvPeer

sdk03_peer = venv_peers.sdk03_peer  # the session fixture, used here

# every server that serves 0.3 REST and 0.3 gRPC
PEERS_03 = ["sdk03_peer", "py_peer_compat", "js_peer_compat"]

# the deviations of each real server from the 0.3 text, per binding: the full suite fails exactly these. No SDK
# checks a part's media type against its input modes (errors.content_type_not_supported, as on JSON-RPC).
MEDIA = "errors.content_type_not_supported"
DEVIATIONS: dict[tuple[str, str], set[str]] = {
    # a2a-sdk 0.3.26 (and its JSON-RPC too): tasks/resubscribe on a task that is canceled meanwhile ends with no
    # state; a message without messageId is a 500 "unknown exception" on REST and gRPC UNKNOWN (JSON-RPC says
    # -32602); /v1/card is not routed without the extended card (FastAPI's 404); gRPC GetAgentCard answers the
    # card without one and refuses push with UNKNOWN
    ("sdk03_peer", "http_json"): {MEDIA, "streaming.subscribe", "errors.invalid_params",
                                  "errors.extended_card_not_declared", "errors.no_server_errors"},
    ("sdk03_peer", "grpc"): {MEDIA, "streaming.subscribe", "errors.invalid_params", "errors.push_not_supported",
                             "errors.extended_card_not_declared", "errors.no_server_errors"},
    # a2a-sdk 1.3.0's 0.3 layer: a file part's bytes (`fileWithBytes`, raw bytes in the proto) are base64-decoded
    # once more, a 500 / gRPC UNKNOWN "Incorrect padding". (Its REST reads a push-config create body as §7.5's
    # `{config: …}`, the CreateTaskPushNotificationConfigRequest: the spec's text, which the probe now sends first.)
    ("py_peer_compat", "http_json"): {MEDIA, "errors.no_server_errors"},
    ("py_peer_compat", "grpc"): {MEDIA, "errors.no_server_errors"},
    ("js_peer_compat", "http_json"): {MEDIA},
    ("js_peer_compat", "grpc"): {MEDIA},
}


def _check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    code = main(["check", *args, "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


def _urls(peer: Peer | VenvPeer) -> tuple[str, str]:
    return peer.rest_url, peer.grpc_url


@pytest.mark.external
@pytest.mark.parametrize("peer_name", PEERS_03)
def test_quick_check_over_0_3_http_json(peer_name: str, request: pytest.FixtureRequest,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    peer = request.getfixturevalue(peer_name)
    code, rep = _check(capsys, peer.base_url, "--binding", "http_json", "--a2a-version", "0.3",
                       "--message", "hello rest", "--expect-text", "echo: hello rest")
    assert code == 0, rep
    assert (rep["binding"], rep["interfaceUrl"], rep["protocolVersion"]) == ("HTTP+JSON", _urls(peer)[0], "0.3")
    steps = {s["name"]: s for s in rep["steps"]}
    assert (steps["invoke"]["method"], steps["stream"]["method"]) == ("POST /v1/message:send",
                                                                      "POST /v1/message:stream")
    results = {r["test"]: r for r in rep["results"]}
    assert "A2A 0.3 proto (a2a.v1)" in results["invoke.schema"]["message"]  # judged by the 0.3 proto, strictly
    assert results["invoke.dialect"]["status"] == "pass"
    assert [r["test"] for r in rep["results"] if r["status"] == "fail"] == []


@pytest.mark.external
@pytest.mark.parametrize("peer_name", PEERS_03)
def test_quick_check_over_0_3_grpc(peer_name: str, request: pytest.FixtureRequest,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    peer = request.getfixturevalue(peer_name)
    code, rep = _check(capsys, peer.base_url, "--binding", "grpc", "--a2a-version", "0.3",
                       "--message", "hello grpc", "--expect-text", "echo: hello grpc")
    assert code == 0, rep
    assert (rep["binding"], rep["interfaceUrl"], rep["protocolVersion"]) == ("GRPC", _urls(peer)[1], "0.3")
    steps = {s["name"]: s for s in rep["steps"]}
    assert (steps["invoke"]["method"], steps["stream"]["method"]) == ("SendMessage", "SendStreamingMessage")
    [exchange] = steps["invoke"]["http"]
    assert (exchange["method"], exchange["grpcStatus"]) == ("/a2a.v1.A2AService/SendMessage", "OK")
    results = {r["test"]: r for r in rep["results"]}
    assert "A2A 0.3 proto (a2a.v1)" in results["invoke.schema"]["message"]
    assert [r["test"] for r in rep["results"] if r["status"] == "fail"] == []


@pytest.mark.external
@pytest.mark.parametrize("binding", ["http_json", "grpc"])
@pytest.mark.parametrize("peer_name", PEERS_03)
def test_full_suite_over_0_3(peer_name: str, binding: str, request: pytest.FixtureRequest,
                             capsys: pytest.CaptureFixture[str]) -> None:
    peer = request.getfixturevalue(peer_name)
    code, rep = _check(capsys, peer.base_url, "--binding", binding, "--a2a-version", "0.3", "--suite", "full",
                       "--slow-prompt", "slow", "--input-prompt", "input please", "--suite-timeout", "60")
    assert rep["protocolVersion"] == "0.3" and rep["binding"] == {"http_json": "HTTP+JSON", "grpc": "GRPC"}[binding]
    assert rep["success"] is True, rep["reason"]
    results = {r["test"]: r for r in rep["results"]}
    failed = {t for t, r in results.items() if r["status"] == "fail"}
    assert failed == DEVIATIONS[(peer_name, binding)], {t: results[t]["message"] for t in failed}
    for id_ in ("errors.task_not_found", "errors.cancel_unknown", "lifecycle.cancel", "lifecycle.get_task",
                "errors.not_cancelable", "stream.terminal",
                "lifecycle.history_order"):  # before: a crash reading the 0.3 proto's `content` as `parts`
        assert results[id_]["status"] == "pass", (id_, results[id_]["message"])
    assert "TaskNotFoundError" in results["errors.task_not_found"]["message"]
    # --suite full fails on a failed MUST by default; a SHOULD-only deviation keeps exit 0
    assert code == (1 if any(results[t]["severity"] == "MUST" for t in failed) else 0)
    for jsonrpc_only in ("errors.parse_error", "errors.invalid_request", "errors.unknown_method"):
        assert results[jsonrpc_only]["status"] == "skip"


# ---- the JS SDK's gRPC (lf.a2a.v1), served from the same process as its JSON-RPC and REST


@pytest.mark.external
def test_quick_check_over_js_grpc(js_peer: Peer, capsys: pytest.CaptureFixture[str]) -> None:
    code, rep = _check(capsys, js_peer.base_url, "--binding", "grpc", "--message", "hello grpc",
                       "--expect-text", "echo: hello grpc")
    assert code == 0, rep
    assert (rep["binding"], rep["interfaceUrl"], rep["protocolVersion"]) == ("GRPC", js_peer.grpc_url, "1.0")
    steps = {s["name"]: s for s in rep["steps"]}
    assert steps["invoke"]["http"][0]["method"] == "/lf.a2a.v1.A2AService/SendMessage"
    results = {r["test"]: r for r in rep["results"]}
    assert [t for t, r in results.items() if r["status"] == "fail"] == ["interface.grpc_url"]  # schemeless (SHOULD)


@pytest.mark.external
def test_full_suite_over_js_grpc(js_peer: Peer, capsys: pytest.CaptureFixture[str]) -> None:
    code, rep = _check(capsys, js_peer.base_url, "--binding", "grpc", "--suite", "full", "--slow-prompt", "slow",
                       "--input-prompt", "input please", "--suite-timeout", "60")
    assert (rep["binding"], rep["protocolVersion"]) == ("GRPC", "1.0")
    results = {r["test"]: r for r in rep["results"]}
    failed = {t for t, r in results.items() if r["status"] == "fail"}
    # unlike the Python SDK, the JS gRPC server enforces the a2a-version metadata, verbatim: 1.0.1 is refused
    # (test_suite._PATCH)
    assert failed == {"interface.grpc_url", MEDIA, "errors.patch_version_ignored"}, \
        {t: results[t]["message"] for t in failed}
    # the grpc_url and media rules are SHOULDs; the refused patch version is a MUST, so --fail-on must fails
    assert results[MEDIA]["severity"] == "SHOULD" and results["errors.patch_version_ignored"]["severity"] == "MUST"
    assert code == 1
    for id_ in ("errors.version_not_supported", "errors.task_not_found", "lifecycle.cancel", "streaming.subscribe",
                "errors.error_info", "lifecycle.input_required"):
        assert results[id_]["status"] == "pass", (id_, results[id_]["message"])
    assert "gRPC NOT_FOUND TaskNotFoundError (TASK_NOT_FOUND)" in results["errors.task_not_found"]["message"]


# ---- fault agents: 0.3 REST error bodies


def _card_03(origin: str) -> dict[str, Any]:
    return {"protocolVersion": "0.3.0", "name": "f", "description": "a 0.3 REST fault agent", "version": "1",
            "url": f"{origin}/rest", "preferredTransport": "HTTP+JSON", "capabilities": {"streaming": False},
            "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "skills": [{"id": "s", "name": "s", "description": "d", "tags": ["t"]}]}


def _agent_03(get_task: web.Response) -> web.Application:
    async def card(request: web.Request) -> web.Response:
        return web.json_response(_card_03(f"http://{request.host}"))

    async def task(_: web.Request) -> web.Response:
        return get_task

    app = web.Application()
    app.router.add_get("/.well-known/agent-card.json", card)
    app.router.add_get("/rest/v1/tasks/{id}", task)
    return app


async def test_a_0_3_rest_error_body_with_the_wrong_status(client: HttpClient) -> None:
    body = web.json_response({"code": -32001, "message": "Task not found"}, status=500)
    async with serve(_agent_03(body)) as origin:
        r = await run_probe(Target(name="f", url=origin, binding="HTTP+JSON"), client, steps=(StepName.PING,))
    assert (r.binding, r.protocol_version) == ("HTTP+JSON", "0.3")
    assert r.reason is Reason.INVOKE_UNEXPECTED_STATUS
    detail = r.steps[-1].detail or ""
    assert "HTTP 500 TaskNotFoundError" in detail and "corresponds to TaskNotFoundError: HTTP 404" in detail


async def test_a_0_3_rest_task_not_found_in_the_sdks_bare_message_form_proves_the_route(client: HttpClient) -> None:
    body = web.json_response({"message": "Task x was specified but does not exist"}, status=404)
    async with serve(_agent_03(body)) as origin:
        r = await run_probe(Target(name="f", url=origin, binding="HTTP+JSON"), client, steps=(StepName.PING,))
    assert r.success, r.steps


async def test_a_0_3_rest_route_404_is_a_missing_route(client: HttpClient) -> None:
    body = web.json_response({"detail": "Not Found"}, status=404)  # a framework's own 404, no A2A error
    async with serve(_agent_03(body)) as origin:
        r = await run_probe(Target(name="f", url=origin, binding="HTTP+JSON"), client, steps=(StepName.PING,))
    assert (r.binding, r.reason) == ("HTTP+JSON", Reason.INVOKE_ROUTE_NOT_FOUND)
    assert "without an A2A error body" in (r.steps[-1].detail or "")


async def test_a_0_3_rest_agent_answering_0_3_json_rpc_shapes_is_a_bad_result(client: HttpClient) -> None:
    """The kind-shaped 0.3 JSON (what a2a-js 0.3.x REST servers sent) where the 0.3 proto's JSON is due."""
    async def send(_: web.Request) -> web.Response:
        return web.json_response({"kind": "task", "id": "t", "contextId": "c", "status": {"state": "completed"},
                                  "artifacts": [{"artifactId": "a", "parts": [{"kind": "text", "text": "hi"}]}]})

    app = _agent_03(web.json_response({"message": "Task not found"}, status=404))
    app.router.add_post("/rest/v1/message:send", send)
    async with serve(app) as origin:
        r = await run_probe(Target(name="f", url=origin, binding="HTTP+JSON"), client, steps=(StepName.INVOKE,))
    assert (r.binding, r.protocol_version, r.reason) == ("HTTP+JSON", "0.3", Reason.INVOKE_BAD_RESULT)
    shape = r.check("invoke.result_shape")
    assert shape is not None and "looks like a 0.3 result with 'kind'" in shape.message
    schema = r.check("invoke.schema")
    assert schema is not None and "A2A 0.3 proto (a2a.v1)" in schema.message


# ---- fault agents: 0.3 gRPC


@asynccontextmanager
async def _grpc_03_agent(*, serve_03: bool, not_found_code: str = "NOT_FOUND") -> AsyncIterator[str]:
    """A card advertising GRPC 0.3 (and JSON-RPC 0.3 at /rpc, unused); the gRPC server serves the 0.3 service
    (GetTask: every task is unknown, answered as a2a-sdk 0.3 does: the error's name leads the details) or, with
    `serve_03=False`, only the 1.0 service, as after an upgrade that dropped 0.3."""
    from a2a.compat.v0_3 import a2a_v0_3_pb2_grpc
    from a2a.types import a2a_pb2_grpc

    class V03(a2a_v0_3_pb2_grpc.A2AServiceServicer):  # type: ignore[misc]
        async def GetTask(self, request: Any, context: grpc.aio.ServicerContext) -> Any:
            await context.abort(getattr(grpc.StatusCode, not_found_code), f"TaskNotFoundError: {request.name}")

    server = grpc.aio.server()
    if serve_03:
        a2a_v0_3_pb2_grpc.add_A2AServiceServicer_to_server(V03(), server)
    else:
        a2a_pb2_grpc.add_A2AServiceServicer_to_server(a2a_pb2_grpc.A2AServiceServicer(), server)

    async def card(request: web.Request, port: int) -> web.Response:
        doc = _card_03(f"http://{request.host}") | {
            "url": f"http://{request.host}/rpc", "preferredTransport": "JSONRPC",
            "additionalInterfaces": [{"url": f"http://127.0.0.1:{port}", "transport": "GRPC"}]}
        return web.json_response(doc)

    async with serve_grpc(server, card, grace=0.2) as origin:
        yield origin


async def test_a_0_3_grpc_interface_serving_only_the_1_0_service_is_a_missing_route(client: HttpClient) -> None:
    async with _grpc_03_agent(serve_03=False) as origin:
        r = await run_probe(Target(name="g", url=origin, binding="GRPC", timeout=5), client, steps=(StepName.PING,))
    assert (r.binding, r.protocol_version, r.reason) == ("GRPC", "0.3", Reason.INVOKE_ROUTE_NOT_FOUND)
    assert "no a2a.v1.A2AService here" in (r.steps[-1].detail or "")
    [ping] = [s for s in to_dict(r)["steps"] if s["name"] == "ping"]
    assert [(e["transport"], e["grpcStatus"], e["method"]) for e in ping["http"]] == [
        ("grpc", "UNIMPLEMENTED", "/a2a.v1.A2AService/GetTask")]


@pytest.mark.parametrize("code", ["NOT_FOUND", "UNIMPLEMENTED"])
async def test_a_0_3_grpc_task_not_found_named_in_the_details_proves_the_route(code: str, client: HttpClient) -> None:
    """a2a-sdk 0.3 names its errors in the details ("TaskNotFoundError: …"), whatever the status: with 0.3 there
    is no status table, so even UNIMPLEMENTED with an A2A name is an A2A answer, not a missing service."""
    async with _grpc_03_agent(serve_03=True, not_found_code=code) as origin:
        r = await run_probe(Target(name="g", url=origin, binding="GRPC", timeout=5), client, steps=(StepName.PING,))
    assert r.success, r.steps
    assert (r.binding, r.protocol_version) == ("GRPC", "0.3")


# ---- every advertised interface, 1.0 and 0.3, on one agent


@pytest.mark.external
@pytest.mark.parametrize("peer_name", PEERS_03)
def test_binding_all_probes_and_compares_every_0_3_and_1_0_interface(peer_name: str, request: pytest.FixtureRequest,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    peer = request.getfixturevalue(peer_name)
    code, rep = _check(capsys, peer.base_url, "--binding", "all")
    assert code == 0, rep
    entries = {(i["binding"], i["protocolVersion"]): i for i in rep["interfaces"]}
    versions = ("0.3",) if peer_name == "sdk03_peer" else ("1.0", "0.3")
    assert set(entries) == {(b, v) for b in ("jsonrpc", "http_json", "grpc") for v in versions}
    assert all(i["success"] and i["finalState"] == "COMPLETED" for i in entries.values()), entries
    assert entries[("grpc", "0.3")]["interfaceUrl"] == peer.grpc_url
    agree = next(r for r in rep["results"] if r["test"] == "interop.bindings_agree")
    assert agree["status"] == "pass", agree["message"]
    assert f"{len(entries)} interfaces agree" in agree["message"]
