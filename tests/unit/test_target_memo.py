"""Agent.target's per-agent memo: the same Target as a fresh build, and a new one whenever a live input changes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from probe import config, redact
from probe.config import Agent

URL = "http://127.0.0.1:9/a/x"
EC_KEY = {"kty": "EC", "crv": "P-256", "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
          "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0", "kid": "one"}


def _fresh(agent: Agent, timeout: float, fresh: bool) -> dict[str, Any]:
    """What the general path builds, without the memo."""
    config._TARGETS.clear()
    built = agent.target(timeout, fresh_connection=fresh)
    config._TARGETS.clear()
    return _dump(built)


def _dump(target: Any) -> dict[str, Any]:
    out = target.model_dump()
    out["_secrets"] = target.auth.secret_values() + [v.get_secret_value() for v in target.headers.values()]
    out["_set"] = sorted(target.__pydantic_fields_set__)
    return out


AGENTS: list[dict[str, Any]] = [
    {},
    {"headers": {"X-Tenant": "t1"}, "binding": "JSONRPC", "a2a_version": "1.0", "expect_text": "ok"},
    {"auth": {"bearer_token": {"env": "MEMO_TOKEN"}, "allowed_origins": ["http://127.0.0.1:10"]}},
    {"auth": {"headers": {"X-Api-Key": {"env": "MEMO_TOKEN"}}}, "tls": {"insecure_skip_verify": True}},
    {"auth": {"basic": {"username": "u", "password": {"env": "MEMO_TOKEN"}}}, "tls": {"expiry_window": "1h"}},
    {"auth": {"oauth2": {"client_id": "c", "client_secret": {"env": "MEMO_TOKEN"}, "scopes": ["a"]}}},
    {"auth": {"api_key": {"value": {"env": "MEMO_TOKEN"}, "name": "k", "location": "query"}}},
    {"card_signatures": {"trusted_jwks": {"keys": [EC_KEY]}, "policy": "verify"}},
]


@pytest.mark.parametrize("extra", AGENTS, ids=range(len(AGENTS)))
def test_memo_equals_the_general_path(extra: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMO_TOKEN", "s3cret-value-1")
    agent = Agent(name="x", url=URL, **extra)
    for timeout, fresh in ((5.0, True), (5.0, False), (30.0, True)):
        want = _fresh(agent, timeout, fresh)
        first = agent.target(timeout, fresh_connection=fresh)
        again = agent.target(timeout, fresh_connection=fresh)
        assert again is first  # the memo
        assert _dump(first) == want  # equal to what the general path builds


def test_a_rotated_env_secret_builds_a_new_target(monkeypatch: pytest.MonkeyPatch) -> None:
    agent = Agent(name="x", url=URL, auth={"bearer_token": {"env": "MEMO_ROTATE"}})
    monkeypatch.setenv("MEMO_ROTATE", "mr1-7Qx-aaaa")
    one = agent.target(5.0)
    assert agent.target(5.0) is one
    monkeypatch.setenv("MEMO_ROTATE", "mr2-9Zk-bbbb")
    two = agent.target(5.0)
    assert two is not one
    assert two.auth.bearer is not None and two.auth.bearer.get_secret_value() == "mr2-9Zk-bbbb"
    assert "mr2-9Zk-bbbb" in redact.registered()  # registered on every run, memo or not
    monkeypatch.delenv("MEMO_ROTATE")
    with pytest.raises(config.ConfigError):
        agent.target(5.0)  # read live: a secret that is gone is an error every run, never the remembered one


def test_a_rotated_secret_file_builds_a_new_target(tmp_path: Path) -> None:
    secret = tmp_path / "token"
    secret.write_text("file-token-1111\n")
    agent = Agent(name="x", url=URL, auth={"headers": {"X-Api-Key": {"file": str(secret)}}})
    one = agent.target(5.0)
    assert agent.target(5.0) is one
    secret.write_text("file-token-2222\n")
    two = agent.target(5.0)
    assert two.auth.headers["X-Api-Key"].get_secret_value() == "file-token-2222"


def test_a_changed_jwks_file_builds_a_new_target(tmp_path: Path) -> None:
    jwks = tmp_path / "jwks.json"
    key = EC_KEY
    jwks.write_text(json.dumps({"keys": [key]}))
    agent = Agent(name="x", url=URL, card_signatures={"trusted_jwks_file": str(jwks)})
    one = agent.target(5.0)
    assert agent.target(5.0) is one
    jwks.write_text(json.dumps({"keys": [{**key, "kid": "two"}]}))
    two = agent.target(5.0)
    assert two is not one and two.trusted_jwks is not None and two.trusted_jwks["keys"][0]["kid"] == "two"


def test_another_agent_object_or_setting_is_another_target() -> None:
    a = Agent(name="x", url=URL)
    reloaded = Agent(name="x", url=URL, message="changed")  # a config reload: new objects
    assert a.target(5.0) is a.target(5.0)
    assert reloaded.target(5.0).message == "changed"
    assert a.target(5.0).message == "a2a-probe health check"
    assert a.target(6.0).timeout == 6.0 and a.target(6.0, fresh_connection=True).fresh_connection


def test_the_shared_fields_set_is_never_changed_by_a_copy() -> None:
    a, b = Agent(name="a", url=URL), Agent(name="b", url=URL)
    ta, tb = a.target(5.0), b.target(5.0)
    assert ta.__pydantic_fields_set__ is tb.__pydantic_fields_set__  # one set for the same keywords
    before = set(ta.__pydantic_fields_set__)
    copied = ta.model_copy(update={"max_stream_events": 5, "binding": "GRPC"})
    assert copied.max_stream_events == 5 and "max_stream_events" in copied.__pydantic_fields_set__
    assert tb.__pydantic_fields_set__ == before and "max_stream_events" not in before
    with pytest.raises(ValueError, match="frozen"):
        ta.name = "other"  # type: ignore[misc]  # frozen: nothing changes a kept Target in place


def test_the_memo_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(config, "MAX_TARGETS", 8)
    config._TARGETS.clear()
    agents = [Agent(name=f"a{i}", url=URL) for i in range(20)]
    for agent in agents:
        agent.target(5.0)
    assert len(config._TARGETS) == 8
    assert config._TARGETS[id(agents[-1])][0] is agents[-1]
