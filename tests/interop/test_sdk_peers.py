"""`a2a-probe check` against the official SDK servers, 1.0 and 0.3-compat, invoke and stream."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from probe.cli import main
from tests.peers.harness import Peer

pytestmark = pytest.mark.external  # starts programs outside this Python (see pyproject)

PEERS = ["py_peer", "js_peer", "py_peer_compat", "js_peer_compat"]


def _check_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    code = main(["check", *args, "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("peer_name", PEERS)
def test_check_passes_1_0(peer_name: str, request: pytest.FixtureRequest, capsys: pytest.CaptureFixture[str]) -> None:
    peer: Peer = request.getfixturevalue(peer_name)
    code, rep = _check_json(capsys, peer.base_url, "--message", "hello probe", "--expect-text", "echo: hello probe")
    assert code == 0, rep
    assert rep["success"] is True
    assert rep["reason"] is None
    assert rep["protocolVersion"] == "1.0"
    assert rep["binding"] == "JSONRPC"
    assert rep["interfaceUrl"] == peer.jsonrpc_url
    steps = {s["name"]: s for s in rep["steps"]}
    assert [s for s in steps] == ["discover", "validate", "invoke", "stream"]
    assert all(s["status"] == "pass" for s in steps.values())
    assert steps["invoke"]["method"] == "SendMessage"
    assert steps["stream"]["method"] == "SendStreamingMessage"
    results = {r["test"]: r for r in rep["results"]}
    for must in ("invoke.task_completed", "invoke.expected_text", "stream.terminal", "stream.expected_text",
                 "stream.closes_after_terminal", "stream.first_event", "invoke.framing"):
        assert results[must]["status"] == "pass", results[must]
    assert rep["summary"]["total"] == len(rep["results"])


@pytest.mark.parametrize("peer_name", ["py_peer_compat", "js_peer_compat"])
def test_check_passes_0_3(peer_name: str, request: pytest.FixtureRequest, capsys: pytest.CaptureFixture[str]) -> None:
    peer: Peer = request.getfixturevalue(peer_name)
    code, rep = _check_json(capsys, peer.base_url, "--a2a-version", "0.3", "--message", "hi",
                            "--expect-text", "echo: hi")
    assert code == 0, rep
    assert rep["protocolVersion"] == "0.3"
    steps = {s["name"]: s for s in rep["steps"]}
    assert steps["invoke"]["method"] == "message/send"
    assert steps["stream"]["method"] == "message/stream"
    assert steps["stream"]["status"] == "pass"


def test_v1_only_peer_has_no_0_3_interface(py_peer: Peer, capsys: pytest.CaptureFixture[str]) -> None:
    code, rep = _check_json(capsys, py_peer.base_url, "--a2a-version", "0.3")
    assert code == 1
    assert rep["reason"] == "no_usable_interface"
    assert "JSONRPC 1.0" in next(s for s in rep["steps"] if s["name"] == "validate")["detail"]


@pytest.mark.parametrize("peer_name", ["py_peer", "js_peer"])
@pytest.mark.parametrize(("message", "state"), [("please fail", "FAILED"), ("need input", "INPUT_REQUIRED")])
def test_a_task_that_does_not_complete_is_task_failed(peer_name: str, message: str, state: str,
                                                      request: pytest.FixtureRequest,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    peer: Peer = request.getfixturevalue(peer_name)
    code, rep = _check_json(capsys, peer.base_url, "--message", message)
    assert code == 1
    assert rep["reason"] == "task_failed"
    assert state in next(r for r in rep["results"] if r["test"] == "invoke.task_completed")["message"]
    assert state in next(s for s in rep["steps"] if s["name"] == "invoke")["detail"]


def test_message_reply_passes(js_peer: Peer, capsys: pytest.CaptureFixture[str]) -> None:
    code, rep = _check_json(capsys, js_peer.base_url, "--message", "message please", "--expect-text", "echo")
    assert code == 0, rep


def test_console_script_exit_codes_and_text_output(py_peer: Peer, tmp_path: Path) -> None:
    exe = Path(sys.executable).parent / "a2a-probe"
    ok = subprocess.run([str(exe), "check", py_peer.base_url], capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.startswith("PASS")
    assert "interface  JSONRPC 1.0" in ok.stdout
    out = tmp_path / "r.json"
    bad = subprocess.run([str(exe), "check", "http://127.0.0.1:9", "--format", "json", "--output", str(out),
                          "--timeout", "5"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 1
    assert json.loads(out.read_text())["reason"] == "card_unreachable"
    usage = subprocess.run([str(exe), "check", py_peer.base_url, "--header", "novalue"], capture_output=True,
                           text=True, timeout=60)
    assert usage.returncode == 2
    assert "expected K=V" in usage.stderr
    missing_env = subprocess.run([str(exe), "check", py_peer.base_url, "--bearer-token-env", "A2A_PROBE_NOPE_X"],
                                 capture_output=True, text=True, timeout=60)
    assert missing_env.returncode == 2
    assert "A2A_PROBE_NOPE_X" in missing_env.stderr


def test_fail_on_policies(py_peer: Peer, capsys: pytest.CaptureFixture[str]) -> None:
    # the Python SDK's card misses Cache-Control: a failed SHOULD check, not a failed probe
    assert main(["check", py_peer.base_url]) == 0
    assert main(["check", py_peer.base_url, "--fail-on", "any"]) == 1
    assert main(["check", "http://127.0.0.1:9", "--timeout", "2", "--fail-on", "never"]) == 0
    capsys.readouterr()
