"""interop.bindings_same_auth against the official Python SDK's server (a2a-sdk 1.x, JSON-RPC, HTTP+JSON and gRPC from
one process) deployed with a Bearer token in front of its handlers (tests/peers/py_agent.py --bearer: an ASGI
middleware and a gRPC interceptor), once on every binding and once with one binding's route left open, as a
gateway route without the auth filter would be.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from pydantic import SecretStr

from probe.cli import main
from probe.engine import OP_ANONYMOUS, run_interfaces
from probe.reasons import Reason
from probe.results import ProbeResult, Status
from probe.suite import SuiteOptions, run_suite_interfaces
from probe.target import AuthSpec, Target
from probe.wire.http import HttpClient
from tests.peers.harness import Peer, start_peer

pytestmark = pytest.mark.external

TOKEN = "same-auth-Zq7tok"  # a distinctive value: no report may carry it
KEYS = ("jsonrpc 1.0", "http_json 1.0", "grpc 1.0")


@pytest.fixture(scope="module")
def guarded() -> Iterator[Peer]:
    with start_peer("python", extra_args=("--bearer", TOKEN)) as peer:
        yield peer


@pytest.fixture(scope="module")
def grpc_open() -> Iterator[Peer]:
    with start_peer("python", extra_args=("--bearer", TOKEN, "--open-bindings", "grpc")) as peer:
        yield peer


def _target(peer: Peer, token: str = TOKEN, grpc_too: bool = True) -> Target:
    """The token for the agent's origin and (`grpc_too`) its gRPC port's, another origin that must be allowed."""
    allowed = (f"http://127.0.0.1:{peer.grpc_port}",) if grpc_too else ()
    return Target(name="auth", url=peer.base_url, timeout=10.0,
                  auth=AuthSpec(bearer=SecretStr(token), allowed_origins=allowed))


def _same_auth(r: ProbeResult) -> tuple[Status, str]:
    c = r.check("interop.bindings_same_auth")
    assert c is not None
    return c.status, c.message


async def test_every_binding_behind_the_token_passes(client: HttpClient, guarded: Peer) -> None:
    r = await run_interfaces(_target(guarded), client)
    assert r.success and r.reason is None, r.reason
    assert [i.key for i in r.interfaces] == list(KEYS)
    outcomes = {i.key: i.outcomes[OP_ANONYMOUS] for i in r.interfaces}
    assert outcomes == {"jsonrpc 1.0": "refused: HTTP 401", "http_json 1.0": "refused: HTTP 401",
                        "grpc 1.0": "refused: gRPC UNAUTHENTICATED"}
    match = [c for c in r.checks if c.id == "security.credentials_match"]  # the gRPC origin allowed: no finding
    assert match and all(c.status is Status.PASS for c in match), [c.message for c in match]
    status, message = _same_auth(r)
    assert status is Status.PASS, message
    assert all(f"{key} refused" in message for key in KEYS), message


async def test_a_binding_that_skips_the_token_fails_and_is_named(client: HttpClient, grpc_open: Peer) -> None:
    r = await run_interfaces(_target(grpc_open), client)
    status, message = _same_auth(r)
    assert status is Status.FAIL, message
    assert message == ("a call without credentials is refused on jsonrpc 1.0, http_json 1.0 but processed on "
                       "grpc 1.0 (TaskNotFoundError (gRPC NOT_FOUND))"), message
    assert r.reason is None  # every real call works: the verdict stands, the MUST check says what is wrong
    assert r.check("interop.bindings_agree") is not None
    assert r.check("interop.bindings_agree").status is Status.PASS  # type: ignore[union-attr]


async def test_an_interface_the_probe_sent_no_credentials_is_not_blamed_for_refusing_them(
        client: HttpClient, guarded: Peer) -> None:
    r = await run_interfaces(_target(guarded, grpc_too=False), client)
    entries = {i.key: i for i in r.interfaces}
    assert entries["grpc 1.0"].reason is Reason.INVOKE_AUTH  # no token on another origin: refused, rightly
    assert entries["jsonrpc 1.0"].success and entries["http_json 1.0"].success
    match = {c.interface: c for c in r.checks if c.id == "security.credentials_match"}
    assert match["grpc 1.0"].status is Status.FAIL and "another origin" in match["grpc 1.0"].message
    status, message = _same_auth(r)
    assert status is Status.PASS, message  # not compared on the credentials it was never sent
    assert message == ("the interfaces enforce the card's security alike (a call without credentials: jsonrpc 1.0 "
                       "refused, http_json 1.0 refused)")


async def test_a_wrong_token_is_refused_on_every_binding_alike(client: HttpClient, guarded: Peer) -> None:
    r = await run_interfaces(_target(guarded, "not-the-token"), client)
    assert r.reason is Reason.INVOKE_AUTH
    assert {i.key: i.reason for i in r.interfaces} == dict.fromkeys(KEYS, Reason.INVOKE_AUTH)
    status, message = _same_auth(r)
    assert status is Status.PASS, message
    assert message.endswith("(the configured credentials refused on jsonrpc 1.0, http_json 1.0, grpc 1.0)")


async def test_the_suite_grades_each_interface_and_reads_grpc_unauthenticated_as_a_refusal(
        client: HttpClient, grpc_open: Peer) -> None:
    r = await run_suite_interfaces(_target(grpc_open), client, SuiteOptions(timeout=60.0))
    rejected = {c.interface: c for c in r.checks if c.id == "security.unauthenticated_rejected"}
    assert rejected["jsonrpc 1.0"].status is Status.PASS, rejected["jsonrpc 1.0"].message
    assert rejected["grpc 1.0"].status is Status.FAIL
    assert "TaskNotFoundError" in rejected["grpc 1.0"].message
    status, message = _same_auth(r)
    assert status is Status.FAIL and "processed on grpc 1.0" in message, message


async def test_grpc_unauthenticated_passes_security_unauthenticated_rejected(client: HttpClient,
                                                                             guarded: Peer) -> None:
    r = await run_suite_interfaces(_target(guarded), client, SuiteOptions(timeout=60.0))
    rejected = {c.interface: c for c in r.checks if c.id == "security.unauthenticated_rejected"}
    assert set(rejected) == set(KEYS)
    assert all(c.status is Status.PASS for c in rejected.values()), {k: c.message for k, c in rejected.items()}
    assert "UNAUTHENTICATED" in rejected["grpc 1.0"].message
    assert _same_auth(r)[0] is Status.PASS


def test_the_cli_report_names_the_open_binding_and_never_the_token(grpc_open: Peer, monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("A2A_PROBE_SAME_AUTH_TOKEN", TOKEN)
    code = main(["check", grpc_open.base_url, "--binding", "all", "--bearer-token-env", "A2A_PROBE_SAME_AUTH_TOKEN",
                 "--format", "json", "--fail-on", "must"])
    out = capsys.readouterr().out
    assert TOKEN not in out
    rep = json.loads(out)
    row = next(x for x in rep["results"] if x["test"] == "interop.bindings_same_auth")
    assert row["status"] == "fail" and "processed on grpc 1.0" in row["message"], row
    assert code != 0
    grpc = next(i for i in rep["interfaces"] if i["binding"] == "grpc")
    assert grpc["outcomes"][OP_ANONYMOUS] == "processed: TaskNotFoundError (gRPC NOT_FOUND)"


def test_the_cli_sends_the_token_to_an_allowed_origin_only(guarded: Peer, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """--allowed-origin: the gRPC interface's port gets the token too; without it, none (security.credentials_match
    says so) and the gRPC invoke is refused, which interop.bindings_same_auth does not count against the agent."""
    monkeypatch.setenv("A2A_PROBE_SAME_AUTH_TOKEN", TOKEN)
    args = ["check", guarded.base_url, "--binding", "all", "--bearer-token-env", "A2A_PROBE_SAME_AUTH_TOKEN",
            "--format", "json"]
    assert main([*args, "--allowed-origin", f"http://127.0.0.1:{guarded.grpc_port}"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert all(i["success"] for i in rep["interfaces"]), rep["interfaces"]
    assert main(args) == 1
    out = capsys.readouterr().out
    assert TOKEN not in out
    rep = json.loads(out)
    grpc = next(i for i in rep["interfaces"] if i["binding"] == "grpc")
    assert grpc["reason"] == "invoke_auth"
    rows = {(x["test"], x.get("interface")): x for x in rep["results"]}
    assert "--allowed-origin" in rows[("security.credentials_match", "grpc 1.0")]["message"]
    assert rows[("interop.bindings_same_auth", None)]["status"] == "pass"
    assert main([*args, "--allowed-origin", "not a url"]) == 2
    assert "--allowed-origin" in capsys.readouterr().err
