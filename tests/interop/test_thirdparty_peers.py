"""More real implementations nobody here wrote, each pinned in its own venv: the probe's exact verdict on each.

Every failed check is asserted with its level, so any drift in how the probe judges a real implementation shows.
Each verdict was checked against the text of the version the agent's card speaks (docs/peers.md, "Third-party
peers"):

* python-a2a 0.5.10: a valid 0.3 card (protocolVersion 0.3.0, JSON-RPC at its url), but the library serves the
  pre-0.2 methods on its own paths (POST /tasks/send ...) and answers message/send at the url with HTTP 500 and a
  body that is no JSON-RPC response (0.3 §3.2.1, §7.1): one root cause, so the suite stops there.
* a2a-server 0.6.1: a card without protocolVersion (read as 0.2) whose fields are snake_case
  (default_input_modes: 0.2 §5.5 requires defaultInputModes/defaultOutputModes), and a JSON-RPC endpoint that
  speaks the pre-0.2 methods (tasks/send): message/send is MethodNotFound, every answer carries "result": null
  beside its error (0.2 §6.11.2: result MUST NOT exist on an error), FastAPI's HTTP 422 for bodies that are not
  JSON-RPC (-32700/-32600 required), InternalError instead of TaskNotFoundError (0.2 §8.2: SHOULD).
"""

from __future__ import annotations

import pytest

from probe.engine import run_interfaces
from probe.levels import Level, level
from probe.reasons import Reason
from probe.results import ProbeResult, Severity, Status
from probe.suite import SuiteOptions, run_suite_interfaces
from probe.target import Target
from probe.wire.http import HttpClient
from tests.peers import venv_peers
from tests.peers.venv_peers import VenvPeer

pytestmark = pytest.mark.external
python_a2a_peer, a2a_server_peer = venv_peers.python_a2a_peer, venv_peers.a2a_server_peer  # session fixtures

M, S = Severity.MUST, Severity.SHOULD


def _failed(result: ProbeResult) -> set[tuple[str, Severity]]:
    return {(c.id, c.severity) for c in result.failed_checks()}


async def _suite(client: HttpClient, peer: VenvPeer) -> ProbeResult:
    """`a2a-probe check URL --binding all --suite full`: ping, invoke, stream and the suite on every interface."""
    return await run_suite_interfaces(Target(name=peer.name, url=peer.base_url, timeout=10.0), client,
                                      SuiteOptions(timeout=30.0))


async def test_python_a2a_answers_message_send_with_http_500(client: HttpClient, python_a2a_peer: VenvPeer) -> None:
    result = await run_interfaces(Target(name="python-a2a", url=python_a2a_peer.base_url, timeout=10.0), client)
    assert result.protocol_version == "0.3" and not result.success
    assert result.reason is Reason.INVOKE_UNEXPECTED_STATUS
    assert _failed(result) == {("invoke.transport", M)}
    transport = result.check("invoke.transport")
    assert transport is not None and transport.reason is Reason.INVOKE_UNEXPECTED_STATUS
    assert "message/send to " in transport.message and "answered HTTP 500" in transport.message
    assert "Unknown content type" in transport.message  # what the library said, quoted
    assert [(i.binding, i.protocol_version, i.reason) for i in result.interfaces] == [
        ("jsonrpc", "0.3", Reason.INVOKE_UNEXPECTED_STATUS)]
    card = result.check("card.required_fields")
    assert card is not None and card.status is Status.PASS  # the 0.3 card itself is valid


async def test_python_a2a_suite_names_the_one_root_cause(client: HttpClient, python_a2a_peer: VenvPeer) -> None:
    result = await _suite(client, python_a2a_peer)
    assert result.reason is Reason.INVOKE_UNEXPECTED_STATUS
    assert _failed(result) == {("invoke.transport", M)}  # the suite's checks depend on it, not ten more failures
    skipped = [c for c in result.checks if c.status is Status.SKIP and c.message.startswith("depends on")]
    assert skipped and all(c.message.startswith("depends on invoke.transport, which failed") for c in skipped)
    assert len(result.interfaces) == 1
    assert level(result) is Level.NON_CONFORMANT


async def test_a2a_server_basic_probe(client: HttpClient, a2a_server_peer: VenvPeer) -> None:
    result = await run_interfaces(Target(name="a2a-server", url=a2a_server_peer.base_url, timeout=10.0), client)
    assert result.card_url == a2a_server_peer.base_url + "/.well-known/agent.json"  # the 0.2 path, found
    assert result.protocol_version == "0.2" and not result.success
    assert result.reason is Reason.CARD_INVALID  # the first failure of the run names the verdict
    assert _failed(result) == {("card.protocol_version", S), ("card.required_fields", M), ("invoke.framing", M)}
    fields = result.check("card.required_fields")
    assert fields is not None and fields.message == "defaultInputModes is missing; defaultOutputModes is missing"
    framing = result.check("invoke.framing")
    assert framing is not None and framing.message == (
        "both result and error are present (the error: JSON-RPC MethodNotFoundError -32601: message/send not found)")
    assert [(i.binding, i.protocol_version) for i in result.interfaces] == [("jsonrpc", "0.2")]


async def test_a2a_server_suite(client: HttpClient, a2a_server_peer: VenvPeer) -> None:
    result = await _suite(client, a2a_server_peer)
    assert result.reason is Reason.CARD_INVALID  # the first failure names the verdict ...
    # one entry for its one interface (a 0.2 card's interface was probed twice, as "0.2" and as "0.3")
    assert [(i.binding, i.protocol_version) for i in result.interfaces] == [("jsonrpc", "0.2")]
    # ... and the interface that cannot be called (message/send MethodNotFound, framed with "result": null) is the
    # suite's one root cause: its checks depend on it, as they would with a valid card, not eight more failures
    assert _failed(result) == {("card.protocol_version", S), ("card.required_fields", M), ("invoke.framing", M)}
    were_failures = {"lifecycle.unknown_task_message", "streaming.subscribe_unknown", "errors.parse_error",
                     "errors.invalid_request", "errors.invalid_params", "errors.task_not_found",
                     "errors.cancel_unknown", "errors.push_not_supported"}  # before the root cause was seen here
    for check_id in were_failures:
        c = result.check(check_id)
        assert c is not None and c.status is Status.SKIP, check_id
        assert c.message.startswith("depends on invoke.framing, which failed: both result and error are present")
    assert level(result) is Level.NON_CONFORMANT
