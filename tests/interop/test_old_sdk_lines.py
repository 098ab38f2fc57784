"""The official SDKs' older lines, run as real agents the way platform teams still run them: the probe's exact
verdict on each, every finding justified by the text of the version the agent speaks.

* @a2a-js/sdk 0.3.14 (the JS 0.3 line's last release; tests/peers/js03): a 0.3 server on JSON-RPC, HTTP+JSON and
  gRPC from one process. `check` passes on all three. The full suite finds two deviations, both SHOULD: no binding
  refuses a part whose media type is not in the card's input modes (0.3 §8.2 ContentTypeNotSupportedError, as no
  SDK does), and its REST `POST /v1/tasks/{id}:subscribe` for an unknown task answers HTTP 500 "Bug: toJson
  serializer and body must be provided" instead of TaskNotFoundError (0.3 §7.9). Its gRPC errors carry no name,
  only §8's message ("Push Notification is not supported") at the status it maps the error to (UNIMPLEMENTED,
  INVALID_ARGUMENT): 0.3 §3.2.2 asks no more ("map A2A error codes to appropriate gRPC status codes").
* a2a-sdk 0.2.16 (the Python 0.2 line's last release): a 0.2 JSON-RPC server, its card at the 0.2 path saying
  protocolVersion 0.2.6 (0.2.5 §5.5 asks that it be declared: it is). `check` passes. The full suite finds real
  faults: every request that fails its pydantic model (an unknown method, a message without messageId) is
  InvalidRequestError -32600 with `"id": null` although the id was readable (JSON-RPC 2.0 §5: null only when it
  cannot be read; 0.2.5 §8.1 -32601 / -32602); push without the capability is InternalError -32603 wrapping the
  SDK's own UnsupportedOperation (0.2.5 §7.5: PushNotificationNotSupportedError); a COMPLETED task is "canceled"
  with a result (§7.4: TaskNotCancelableError); tasks/resubscribe does not end when the task is canceled. It waits
  for the end despite `blocking: false` (0.2.5 gives the field no behaviour: a MAY finding), so the cancel check
  takes its running task from the slow prompt's own stream.
"""

from __future__ import annotations

import pytest

from probe.engine import run_interfaces
from probe.levels import Level, level
from probe.results import ProbeResult, Severity, Status
from probe.suite import SuiteOptions, run_suite_interfaces
from probe.target import Target
from probe.wire.http import HttpClient
from tests.peers import venv_peers
from tests.peers.venv_peers import VenvPeer

pytestmark = pytest.mark.external
js03_peer, sdk02_peer = venv_peers.js03_peer, venv_peers.sdk02_peer  # the session fixtures, used here

M, S, MAY = Severity.MUST, Severity.SHOULD, Severity.MAY
MEDIA = "errors.content_type_not_supported"


def _failed(result: ProbeResult) -> set[tuple[str, Severity, str | None]]:
    return {(c.id, c.severity, c.interface) for c in result.failed_checks()}


async def _suite(client: HttpClient, peer: VenvPeer, timeout: float = 60.0) -> ProbeResult:
    """`a2a-probe check URL --binding all --suite full --slow-prompt slow --input-prompt 'input please'`."""
    return await run_suite_interfaces(Target(name=peer.name, url=peer.base_url, timeout=10.0), client,
                                      SuiteOptions(timeout=timeout, slow_prompt="slow", input_prompt="input please"))


# ---- @a2a-js/sdk 0.3.14


async def test_js_0_3_line_check_passes_on_every_binding(client: HttpClient, js03_peer: VenvPeer) -> None:
    result = await run_interfaces(Target(name="js03", url=js03_peer.base_url, timeout=10.0), client)
    assert result.success and result.reason is None, result.reason
    assert result.protocol_version == "0.3"
    assert result.card_url == js03_peer.base_url + "/.well-known/agent-card.json"
    assert [(i.binding, i.protocol_version, i.interface_url, i.success) for i in result.interfaces] == [
        ("jsonrpc", "0.3", js03_peer.base_url + "/a2a/jsonrpc", True),
        ("http_json", "0.3", js03_peer.rest_url, True),
        ("grpc", "0.3", js03_peer.grpc_url, True)]
    assert _failed(result) == set()
    rest_schema = next(c for c in result.checks if c.id == "invoke.schema" and c.interface == "http_json 0.3")
    assert "A2A 0.3 proto (a2a.v1)" in rest_schema.message  # 0.3.14's REST speaks the proto's JSON, not `kind`
    assert level(result) is Level.FULL


async def test_js_0_3_line_full_suite(client: HttpClient, js03_peer: VenvPeer) -> None:
    result = await _suite(client, js03_peer)
    assert result.success and result.protocol_version == "0.3"
    assert _failed(result) == {(MEDIA, S, "jsonrpc 0.3"), (MEDIA, S, "http_json 0.3"), (MEDIA, S, "grpc 0.3"),
                               ("streaming.subscribe_unknown", S, "http_json 0.3")}
    unknown = next(c for c in result.failed_checks() if c.id == "streaming.subscribe_unknown")
    assert "HTTP 500" in unknown.message and "toJson serializer" in unknown.message  # what the SDK said, quoted
    checks = {(c.id, c.interface): c for c in result.checks}
    for iface in ("jsonrpc 0.3", "http_json 0.3", "grpc 0.3"):
        for cid in ("lifecycle.cancel", "streaming.subscribe", "lifecycle.input_required", "errors.invalid_params",
                    "errors.push_not_supported", "errors.extended_card_not_declared", "errors.task_not_found"):
            assert checks[(cid, iface)].status is Status.PASS, (cid, iface, checks[(cid, iface)].message)
    # before: gRPC INVALID_ARGUMENT without an error name failed the MUST; UNIMPLEMENTED "Push Notification is not
    # supported" was read as a missing a2a.v1.A2AService; REST push got §7.5's body, not only the proto's
    grpc_params = checks[("errors.invalid_params", "grpc 0.3")].message
    assert "INVALID_ARGUMENT" in grpc_params and "0.3 §3.2.2" in grpc_params
    assert "PushNotificationNotSupportedError" in checks[("errors.push_not_supported", "grpc 0.3")].message
    assert "PushNotificationNotSupportedError" in checks[("errors.push_not_supported", "http_json 0.3")].message
    assert level(result) is Level.PARTIAL  # SHOULDs only


# ---- a2a-sdk 0.2.16


async def test_python_0_2_line_check_passes(client: HttpClient, sdk02_peer: VenvPeer) -> None:
    result = await run_interfaces(Target(name="sdk02", url=sdk02_peer.base_url, timeout=10.0), client)
    assert result.success and result.reason is None, result.reason
    assert result.card_url == sdk02_peer.base_url + "/.well-known/agent.json"  # the 0.2 path
    assert result.protocol_version == "0.2"
    assert [(i.binding, i.protocol_version) for i in result.interfaces] == [("jsonrpc", "0.2")]
    assert _failed(result) == set()
    version = result.check("card.protocol_version")
    assert version is not None and version.status is Status.PASS and "declared 0.2.6" in version.message
    assert level(result) is Level.FULL


async def test_python_0_2_line_full_suite(client: HttpClient, sdk02_peer: VenvPeer) -> None:
    result = await _suite(client, sdk02_peer, timeout=90.0)  # its blocking send of the slow prompt takes 30 s
    assert result.success and result.protocol_version == "0.2"
    assert {(cid, sev) for cid, sev, _ in _failed(result)} == {
        ("errors.unknown_method", M), ("errors.invalid_params", M), ("streaming.subscribe", M),
        ("errors.not_cancelable", S), ("errors.push_not_supported", S), (MEDIA, S),
        ("lifecycle.return_immediately", MAY)}
    for cid in ("errors.unknown_method", "errors.invalid_params"):
        c = result.check(cid)
        assert c is not None and "id 'None' does not echo the request id" in c.message
        assert "InvalidRequestError -32600" in c.message
    push = result.check("errors.push_not_supported")
    assert push is not None and "InternalError -32603" in push.message
    cancel = result.check("lifecycle.cancel")  # before: failed the MUST ("did not leave a running task")
    assert cancel is not None and cancel.status is Status.PASS, cancel.message

