from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import SecretStr

from probe.config import ConfigError, Settings, load, parse, parse_duration
from probe.demo.run import demo_config

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("path", sorted((ROOT / "config").glob("*.yaml")), ids=lambda p: p.name)
def test_shipped_examples_are_valid(path: Path) -> None:
    config, sha = load(path)
    assert config.agents and len(sha) == 64


def test_demo_yaml_matches_the_demo_command() -> None:
    shipped, _ = load(ROOT / "config" / "demo.yaml")
    built = demo_config("http://127.0.0.1:9471", "http://127.0.0.1:9472")
    assert built == shipped


@pytest.mark.parametrize(("raw", "seconds"), [("30s", 30), ("5m", 300), ("1.5h", 5400), ("250ms", 0.25), (12, 12)])
def test_durations(raw: object, seconds: float) -> None:
    assert parse_duration(raw) == seconds


INVALID = {
    "unknown top-level key": ("agents: []\nbogus: 1\n", "bogus: unknown key"),
    "unknown agent key": ("agents:\n  - {name: a, url: 'http://x', colour: red}\n", "agents.0.colour: unknown key"),
    "bad duration": ("modules: {m: {prober: ping, interval: soon}}\nagents: []\n",
                     "modules.m.interval: 'soon' is not a duration"),
    "unknown module": ("agents:\n  - {name: a, url: 'http://x', modules: [nope]}\n", "unknown module(s) ['nope']"),
    "duplicate agent": ("agents:\n  - {name: a, url: 'http://x'}\n  - {name: a, url: 'http://y'}\n",
                        "agent names must be unique"),
    "secret in headers": ("agents:\n  - {name: a, url: 'http://x', headers: {Authorization: 'Bearer x'}}\n",
                          "Authorization looks like a credential"),
    "timeout over interval": ("modules: {m: {prober: ping, interval: 5s, timeout: 10s}}\nagents: []\n",
                              "timeout (10s) must not exceed interval (5s)"),
    "bad url": ("agents:\n  - {name: a, url: 'ftp://x'}\n", "agents.0.url: URL must start with http:// or https://"),
    "bad prober": ("modules: {m: {prober: icmp}}\nagents: []\n", "modules.m.prober"),
    "bad agent name": ("agents:\n  - {name: 'a b', url: 'http://x'}\n", "agents.0.name"),
    "secret ref needs one": ("agents:\n  - {name: a, url: 'http://x', auth: {bearer_token: {}}}\n",
                             "give exactly one of env or file"),
    "reserved info label": ("metrics: {agent_info_labels: [job]}\nagents: []\n", "'job' is not an allowed label"),
    "label not allow-listed": ("metrics: {agent_info_labels: [team]}\nagents:\n  - {name: a, url: 'http://x', "
                               "labels: {owner: me}}\n", "labels ['owner'] not in metrics.agent_info_labels"),
    "unknown binding name": ("agents:\n  - {name: a, url: 'http://x', bindings: [jsonrpc, REST]}\n",
                             "agents.0.bindings.1: Input should be 'jsonrpc', 'http_json' or 'grpc' (got 'REST')"),
    "card spelling in bindings": ("agents:\n  - {name: a, url: 'http://x', bindings: [GRPC]}\n",
                                  "agents.0.bindings.0: Input should be 'jsonrpc', 'http_json' or 'grpc'"),
    "empty bindings": ("agents:\n  - {name: a, url: 'http://x', bindings: []}\n",
                       "agents.0.bindings: an empty list probes nothing"),
    "binding listed twice": ("modules: {m: {prober: ping, bindings: [grpc, grpc]}}\nagents: []\n",
                             "modules.m: a binding is listed twice"),
    "binding and bindings": ("agents:\n  - {name: a, url: 'http://x', binding: GRPC, bindings: [grpc]}\n",
                             "give binding (one) or bindings (a subset), not both"),
    "bad single binding": ("agents:\n  - {name: a, url: 'http://x', binding: grpc}\n",
                           "agents.0.binding: Input should be 'JSONRPC', 'HTTP+JSON' or 'GRPC' (got 'grpc')"),
    "bindings on a one-interface prober": ("modules: {m: {prober: full, bindings: [grpc]}}\nagents: []\n",
                                           "bindings applies to the ping, invoke, stream probers only"),
    "agent and module bindings disjoint": (
        "modules: {m: {prober: ping, bindings: [grpc]}}\nagents:\n  - {name: a, url: 'http://x', modules: [m], "
        "bindings: [jsonrpc]}\n", "agent 'a': its bindings and module 'm''s bindings have none in common"),
    "negative card cache age": ("card_cache_max_age: -5\nagents: []\n",
                                "card_cache_max_age: '-5' is not a duration like 5m or 300s, or 0 to fetch the card"),
    "card cache age not a duration": ("agents:\n  - {name: a, url: 'http://x', card_cache_max_age: often}\n",
                                      "agents.0.card_cache_max_age: 'often' is not a duration"),
    "card cache age over a day": ("card_cache_max_age: 48h\nagents: []\n", "172800s is over 24h"),
    "second identity without credentials": ("agents:\n  - {name: a, url: 'http://x', other_auth: {}}\n",
                                            "other_auth gives no credentials: give the second identity's "
                                            "bearer_token, headers, api_key, basic or oauth2"),
    "second identity's secret ref needs one": (
        "agents:\n  - {name: a, url: 'http://x', other_auth: {bearer_token: {env: A, file: /b}}}\n",
        "agents.0.other_auth.bearer_token: give exactly one of env or file"),
    "second identity unknown key": ("agents:\n  - {name: a, url: 'http://x', other_auth: {token: {env: B}}}\n",
                                    "agents.0.other_auth.token: unknown key"),
    "second identity is the first": (
        "agents:\n  - {name: a, url: 'http://x', auth: {bearer_token: {env: A}}, "
        "other_auth: {bearer_token: {env: A}}}\n", "other_auth names the same credentials as auth"),
    "not a mapping": ("- just\n- a list\n", "expected a mapping"),
    "yaml syntax": ("agents: [\n", "not valid YAML"),
}


@pytest.mark.parametrize("case", sorted(INVALID))
def test_invalid_configs_name_file_field_and_expectation(case: str) -> None:
    raw, fragment = INVALID[case]
    with pytest.raises(ConfigError) as info:
        parse(raw.encode(), "probe.yaml")
    text = str(info.value)
    assert text.startswith("probe.yaml"), text
    assert fragment in text, text


def test_secret_refs_resolve_at_probe_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    token = tmp_path / "token"
    token.write_text("file-secret\n")
    monkeypatch.setenv("A2A_TEST_KEY", "env-secret")
    cfg = parse(f"""agents:
  - name: a
    url: http://x
    auth:
      bearer_token: {{file: {token}}}
      headers: {{X-API-Key: {{env: A2A_TEST_KEY}}}}
""".encode(), "t.yaml")
    target = cfg.agents[0].target(5.0)
    # credentials travel in the auth flow (bound to the agent's origin), never as plain invocation headers
    assert target.invoke_headers() == {}
    assert isinstance(target.auth.bearer, SecretStr) and target.auth.bearer.get_secret_value() == "file-secret"
    assert {k: v.get_secret_value() for k, v in target.auth.headers.items()} == {"X-API-Key": "env-secret"}
    assert target.auth.bearer_file == str(token)  # re-read when it changes
    assert "file-secret" not in repr(target) and "env-secret" not in repr(target)
    monkeypatch.delenv("A2A_TEST_KEY")
    with pytest.raises(ConfigError, match="A2A_TEST_KEY is not set"):
        cfg.agents[0].target(5.0)


def test_a_second_identity_resolves_like_the_first_and_is_masked(monkeypatch: pytest.MonkeyPatch) -> None:
    """other_auth (security.scoped_access): its secrets are resolved at probe time, registered for redaction, and
    sent where the first identity's may go (the agent's origin, both allow-lists)."""
    from probe import redact

    monkeypatch.setenv("A2A_TEST_ALICE", "alice-token-Qx81")
    monkeypatch.setenv("A2A_TEST_BOB", "bob-token-Wz27")
    monkeypatch.setenv("A2A_TEST_BOB_KEY", "bob-key-Pv55")
    cfg = parse(b"""agents:
  - name: a
    url: http://x
    modules: [full]
    auth:
      bearer_token: {env: A2A_TEST_ALICE}
      allowed_origins: [http://x:50051]
    other_auth:
      bearer_token: {env: A2A_TEST_BOB}
      headers: {X-API-Key: {env: A2A_TEST_BOB_KEY}}
modules: {full: {prober: full, interval: 5m, timeout: 2m}}
""", "t.yaml")
    agent = cfg.agents[0]
    assert set(agent.secret_refs()) == {"auth.bearer_token", "other_auth.bearer_token", "other_auth.headers.X-API-Key"}
    target = agent.target(5.0)
    other = target.other_auth
    assert other is not None and other.bearer is not None
    assert other.bearer.get_secret_value() == "bob-token-Wz27"
    assert {k: v.get_secret_value() for k, v in other.headers.items()} == {"X-API-Key": "bob-key-Pv55"}
    assert other.allowed_origins == ("http://x:50051",) and target.auth.bearer is not None
    text = redact.text("alice-token-Qx81 bob-token-Wz27 bob-key-Pv55")
    assert not {"alice-token-Qx81", "bob-token-Wz27", "bob-key-Pv55"} & set(text.split()), text
    assert "bob-token-Wz27" not in repr(target)
    assert parse(b"agents:\n  - {name: a, url: 'http://x'}\n", "t.yaml").agents[0].target(5.0).other_auth is None
    monkeypatch.delenv("A2A_TEST_BOB")  # a second identity that cannot be resolved is a config error, named
    with pytest.raises(ConfigError, match=r"other_auth\.bearer_token: environment variable A2A_TEST_BOB is not set"):
        agent.target(5.0)
    assert agent.credential_problems() == ["other_auth.bearer_token: environment variable A2A_TEST_BOB is not set "
                                           "or empty"]


def test_settings_from_env_and_validation(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("A2A_PROBE_MAX_CONCURRENCY", "3")
    monkeypatch.setenv("A2A_PROBE_LISTEN_ADDRESS", "127.0.0.1:9999")
    s = Settings()
    assert s.max_concurrency == 3 and s.host_port == ("127.0.0.1", 9999)
    monkeypatch.setenv("A2A_PROBE_LISTEN_ADDRESS", "nonsense")
    with pytest.raises(ValueError, match="is not host:port"):
        Settings()


def test_config_check_command(tmp_path: Path) -> None:
    exe = [sys.executable, "-m", "probe"]
    good = subprocess.run([*exe, "config", "check", str(ROOT / "config" / "gateway-kagent.yaml")],
                          capture_output=True, text=True, timeout=60)
    assert good.returncode == 0 and "valid" in good.stdout
    bad_file = tmp_path / "bad.yaml"
    bad_file.write_text("agents:\n  - {name: a, url: 'http://x', colour: red}\n")
    bad = subprocess.run([*exe, "config", "check", str(bad_file)], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2
    assert f"{bad_file}: agents.0.colour: unknown key" in bad.stderr
    assert "Traceback" not in bad.stderr
    missing = subprocess.run([*exe, "config", "check", str(tmp_path / "nope.yaml")], capture_output=True, text=True,
                             timeout=60)
    assert missing.returncode == 2 and "cannot read" in missing.stderr


def test_a_jobs_bindings_are_the_agents_within_the_modules() -> None:
    from probe.results import BindingName as B

    cfg = parse(b"""
modules:
  rest-and-grpc: {prober: ping, bindings: [http_json, grpc]}
agents:
  - {name: every, url: 'http://x', modules: [ping, rest-and-grpc]}
  - {name: some, url: 'http://x', modules: [ping, rest-and-grpc], bindings: [jsonrpc, grpc]}
  - {name: one, url: 'http://x', modules: [ping], binding: HTTP+JSON}
""", "probe.yaml")
    every, some, one = cfg.agents
    assert cfg.bindings(every, "ping") is None  # every advertised interface
    assert cfg.bindings(every, "rest-and-grpc") == {B.HTTP_JSON, B.GRPC}
    assert cfg.bindings(some, "ping") == {B.JSONRPC, B.GRPC}
    assert cfg.bindings(some, "rest-and-grpc") == {B.GRPC}
    assert cfg.bindings(one, "ping") == {B.HTTP_JSON}  # the single override still works


def test_card_cache_max_age_defaults_and_overrides() -> None:
    cfg = parse(b"agents:\n  - {name: a, url: 'http://x'}\n  - {name: b, url: 'http://x', card_cache_max_age: 0}\n"
                b"  - {name: c, url: 'http://x', card_cache_max_age: 90s}\n", "probe.yaml")
    assert cfg.card_cache_max_age == 300  # the daemon's default: 5 minutes
    assert [a.card_cache_max_age for a in cfg.agents] == [None, 0, 90]
    assert [a.target(5).card_cache_max_age for a in cfg.agents] == [None, 0, 90]  # None: the daemon's default
    assert parse(b"card_cache_max_age: 0s\nagents: []\n", "p.yaml").card_cache_max_age == 0
