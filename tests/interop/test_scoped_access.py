"""security.scoped_access (1.0 §13.1, §3.3.2; the TCK's AUTH-SCOPE-001..003): a second identity must neither reach
the first identity's task nor learn that it exists.

The fault agents (tests/agents/scope_agent.py: JSON-RPC and HTTP+JSON, bearer tokens mapped to users) share tasks
across callers, or refuse another caller's task as forbidden where an unknown id is not found; the scoped one passes.
The official a2a-sdk server, whose InMemoryTaskStore keeps each user's tasks apart, passes on every binding with two
bearer tokens mapped to two users (tests/peers/py_agent.py --users), and fails once both tokens name one user.
The identities come through the daemon's config (other_auth) or the CLI's options, so their secrets are resolved
and masked as they are in use: no report carries either.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from probe import report
from probe.checks.catalogue import Severity
from probe.cli import main
from probe.config import parse
from probe.results import ProbeResult, Status
from probe.suite import SuiteOptions, run_suite
from probe.suite.security import NO_OTHER_IDENTITY
from probe.target import Target
from probe.wire.http import HttpClient
from tests.agents.scope_agent import scope_agent
from tests.peers.harness import Peer, start_peer

ALICE, BOB = "alice-scope-Jq4tok", "bob-scope-Vn8tok"  # distinctive values: no report may carry them
USERS = {ALICE: "alice", BOB: "bob"}
BINDINGS = {"jsonrpc": "JSONRPC", "http_json": "HTTP+JSON"}


def _target(monkeypatch: pytest.MonkeyPatch, url: str, binding: str, *, other: bool = True) -> Target:
    """The agent as the daemon's config gives it: both identities' tokens from the environment."""
    monkeypatch.setenv("A2A_TEST_SCOPE_ALICE", ALICE)
    monkeypatch.setenv("A2A_TEST_SCOPE_BOB", BOB)
    second = "\n    other_auth: {bearer_token: {env: A2A_TEST_SCOPE_BOB}}" if other else ""
    cfg = parse(f"""agents:
  - name: scope
    url: {url}
    binding: {binding}
    auth: {{bearer_token: {{env: A2A_TEST_SCOPE_ALICE}}}}{second}
""".encode(), "t.yaml")
    return cfg.agents[0].target(10.0)


async def _scoped(client: HttpClient, target: Target) -> tuple[ProbeResult, Status, str]:
    r = await run_suite(target, client, SuiteOptions(timeout=30.0))
    c = r.check("security.scoped_access")
    assert c is not None
    return r, c.status, c.message


def _no_secrets(r: ProbeResult) -> None:
    for fmt in ("json", "markdown", "junit"):
        out = report.render(r, fmt)
        assert ALICE not in out and BOB not in out, fmt


@pytest.mark.parametrize("binding", sorted(BINDINGS))
async def test_a_scoped_agent_passes(client: HttpClient, monkeypatch: pytest.MonkeyPatch, binding: str) -> None:
    async with scope_agent("scoped", USERS) as url:
        r, status, message = await _scoped(client, _target(monkeypatch, url, BINDINGS[binding]))
    assert r.binding == BINDINGS[binding]
    assert status is Status.PASS, message
    assert message.startswith("as the second identity, GetTask, CancelTask, ListTaskPushNotificationConfigs, "
                              "ListTasks, ListTasks(contextId="), message
    _no_secrets(r)


SHARED = "tasks are not scoped to their caller: the second identity reaches the first identity's task"
REVEALED = ("is refused the first identity's task {tid} otherwise than a task that does not exist, which reveals that "
            "it exists")


@pytest.mark.parametrize("binding", sorted(BINDINGS))
async def test_an_agent_that_shares_tasks_fails_the_must(client: HttpClient, monkeypatch: pytest.MonkeyPatch,
                                                         binding: str) -> None:
    async with scope_agent("shared", USERS) as url:
        r, status, message = await _scoped(client, _target(monkeypatch, url, BINDINGS[binding]))
    c = r.check("security.scoped_access")
    assert c is not None and c.severity is Severity.MUST
    assert status is Status.FAIL and message.startswith(SHARED), message
    assert message.count("not scoped") == 1  # the root cause, once
    assert ("(GetTask answered it; ListTaskPushNotificationConfigs listed its push configs; ListTasks without a "
            "filter listed it; ListTasks(contextId=") in message, message
    assert "CancelTask" in message  # TaskNotCancelable where an unknown id is not found: the same cause's trace
    _no_secrets(r)  # the task's status message quotes the first identity's token, which the second one read


@pytest.mark.parametrize("binding", sorted(BINDINGS))
async def test_an_agent_that_answers_forbidden_reveals_the_task(client: HttpClient, monkeypatch: pytest.MonkeyPatch,
                                                                binding: str) -> None:
    async with scope_agent("forbidden", USERS) as url:
        r, status, message = await _scoped(client, _target(monkeypatch, url, BINDINGS[binding]))
    assert status is Status.FAIL, message
    assert "not scoped" not in message and "reveals that it exists" in message, message
    tid = message.split("the first identity's task ")[1].split(" ")[0]
    assert REVEALED.format(tid=tid) in message
    assert "GetTask: HTTP 403" in message and "CancelTask: HTTP 403" in message, message
    assert "ListTaskPushNotificationConfigs: HTTP 403" in message, message
    assert "where an id that does not exist gets HTTP 404" in message if binding == "http_json" else \
        "TaskNotFoundError -32001" in message
    assert "ListTasks" not in message  # its listing held only the second identity's own tasks
    _no_secrets(r)


async def test_without_a_second_identity_it_is_skipped_saying_how_to_enable_it(
        client: HttpClient, monkeypatch: pytest.MonkeyPatch) -> None:
    async with scope_agent("shared", USERS) as url:
        r, status, message = await _scoped(client, _target(monkeypatch, url, "JSONRPC", other=False))
    assert status is Status.SKIP and message == NO_OTHER_IDENTITY
    assert "--other-bearer-token-env" in message and "other_auth" in message
    assert r.check("security.unauthenticated_rejected").status is Status.PASS  # type: ignore[union-attr]


async def test_a_second_identity_the_agent_refuses_is_inconclusive(client: HttpClient,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    async with scope_agent("shared", {ALICE: "alice"}) as url:  # the second token is no user of the agent's
        _, status, message = await _scoped(client, _target(monkeypatch, url, "JSONRPC"))
    assert status is Status.SKIP and message.startswith("the second identity is refused outright"), message


async def test_safe_only_never_runs_it(client: HttpClient, monkeypatch: pytest.MonkeyPatch) -> None:
    async with scope_agent("shared", USERS) as url:
        r = await run_suite(_target(monkeypatch, url, "JSONRPC"), client, SuiteOptions(timeout=30.0, safe_only=True))
    c = r.check("security.scoped_access")
    assert c is not None and c.status is Status.SKIP and "--safe-only" in c.message


# ---- the official a2a-sdk server: two bearer tokens, two users ---------------------------------------------------

@pytest.fixture(scope="module")
def two_users() -> Iterator[Peer]:
    with start_peer("python", extra_args=("--users", f"{ALICE}=alice,{BOB}=bob", "--push")) as peer:
        yield peer


@pytest.fixture(scope="module")
def one_user() -> Iterator[Peer]:
    with start_peer("python", extra_args=("--users", f"{ALICE}=alice,{BOB}=alice", "--push")) as peer:
        yield peer


def _cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, peer: Peer, binding: str,
         fmt: str = "json") -> tuple[int, str]:
    monkeypatch.setenv("A2A_TEST_SCOPE_ALICE", ALICE)
    monkeypatch.setenv("A2A_TEST_SCOPE_BOB", BOB)
    code = main(["check", peer.base_url, "--suite", "full", "--binding", binding, "--format", fmt,
                 "--bearer-token-env", "A2A_TEST_SCOPE_ALICE", "--other-bearer-token-env", "A2A_TEST_SCOPE_BOB",
                 "--allowed-origin", f"http://127.0.0.1:{peer.grpc_port}", "--suite-timeout", "60"])
    out = capsys.readouterr()
    assert ALICE not in out.out + out.err and BOB not in out.out + out.err, fmt
    return code, out.out


def _scoped_json(out: str) -> dict[str, str]:
    found = [r for r in json.loads(out)["results"] if r["test"] == "security.scoped_access"]
    assert len(found) == 1
    return found[0]  # type: ignore[no-any-return]


@pytest.mark.external
@pytest.mark.parametrize("binding", ["jsonrpc", "http_json", "grpc"])
def test_the_sdk_server_keeps_two_users_apart(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
                                             two_users: Peer, binding: str) -> None:
    _, out = _cli(capsys, monkeypatch, two_users, binding)
    found = _scoped_json(out)
    assert json.loads(out)["binding"] == {**BINDINGS, "grpc": "GRPC"}[binding]
    assert found["status"] == "pass", found["message"]
    assert found["message"].startswith("as the second identity, GetTask, CancelTask, ListTaskPushNotificationConfigs, "
                                       "SubscribeToTask, ListTasks, ListTasks(contextId="), found["message"]
    assert found["requirement"]["tck"] == ["AUTH-SCOPE-001", "AUTH-SCOPE-002", "AUTH-SCOPE-003"]  # type: ignore


@pytest.mark.external
def test_the_sdk_server_with_one_user_behind_two_tokens_fails(capsys: pytest.CaptureFixture[str],
                                                              monkeypatch: pytest.MonkeyPatch,
                                                              one_user: Peer) -> None:
    code, out = _cli(capsys, monkeypatch, one_user, "grpc")
    found = _scoped_json(out)
    assert found["status"] == "fail" and found["message"].startswith(SHARED), found["message"]
    assert "ListTaskPushNotificationConfigs listed its push configs" in found["message"], found["message"]
    assert found["severity"] == "MUST" and code == 1  # --suite full fails on a MUST
    for fmt in ("markdown", "junit"):
        _, rendered = _cli(capsys, monkeypatch, one_user, "jsonrpc", fmt)
        assert "security.scoped_access" in rendered
