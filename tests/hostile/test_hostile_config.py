"""Hostile config files: too large, endless, nested past any config's shape, alias bombs, cycles, duplicate keys,
integers past Python's limit, infinite durations. Each is a one-line ConfigError naming the file and what is wrong
(`config check` exits 2 without a traceback, a reload keeps the running config), never a hang or a crash."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from probe import config as cfg
from probe.config import ConfigError
from tests.daemon.helpers import running_daemon, write_config

AGENT = "agents:\n  - name: a\n    url: http://127.0.0.1:9\n    modules: [m]\n"
MODULES = "modules:\n  m: {prober: ping}\n"


def _jwks(body: str) -> str:
    """A valid config whose one Any-typed field (an inline JWK Set) holds `body` (indented under it)."""
    return MODULES + AGENT + "    card_signatures:\n      trusted_jwks:\n" + body


def _alias_bomb(levels: int) -> str:
    lines = "        a0: &a0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n"
    for i in range(1, levels):
        lines += f"        a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]\n"
    return _jwks(lines)


def _load(tmp_path: Path, text: str | bytes) -> str:
    p = tmp_path / "probe.yaml"
    p.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(ConfigError) as err:
        cfg.load(p)
    message = str(err.value)
    assert message.startswith(str(p)), message
    return message


CASES = {
    "flow nesting": ("[" * 100_000, "maximum nesting depth"),  # was RecursionError from the pure loader
    "block nesting": ("x:\n" + "".join(" " * i + f"k{i}:\n" for i in range(1, 3000)), "maximum nesting depth"),
    "nesting inside the JWK Set": (_jwks("        k: " + "[" * 70 + "]" * 70 + "\n"), "nested deeper than 64"),
    "alias bomb": (_alias_bomb(9), "YAML aliases expanded"),  # 10^9 values from ~900 bytes
    "alias cycle": (_jwks("        keys: &k [*k]\n"), "a cycle"),
    "duplicate agent key": (MODULES + AGENT + "    url: http://evil.example:9\n", "duplicate key 'url'"),
    "duplicate top-level key": (MODULES + AGENT + "agents: []\n", "duplicate key 'agents'"),
    "huge integer": (MODULES + AGENT + "    timeout: " + "9" * 5000 + "\n", "an integer of 5000 characters"),
    "infinite interval": ("modules:\n  m: {prober: ping, interval: .inf}\n" + AGENT, "at most 365 days"),
    "NaN timeout": ("modules:\n  m: {prober: ping, timeout: .nan}\n" + AGENT, "must be positive"),
}


@pytest.mark.parametrize("case", CASES)
def test_a_hostile_config_is_one_specific_error(case: str, tmp_path: Path) -> None:
    text, expected = CASES[case]
    t0 = time.process_time()
    message = _load(tmp_path, text)
    assert expected in message, message
    assert time.process_time() - t0 < 2.0  # refused early, not after walking 10^9 values


def test_a_config_file_is_read_up_to_its_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cfg, "MAX_CONFIG_BYTES", 4096)
    text = MODULES + AGENT
    padded = text + "#" * (4096 - len(text) - 1) + "\n"  # exactly at the cap: loads
    (tmp_path / "ok.yaml").write_text(padded)
    config, _ = cfg.load(tmp_path / "ok.yaml")
    assert [a.name for a in config.agents] == ["a"]
    assert "larger than 0 MiB" in _load(tmp_path, padded + "#")  # one byte more


def test_an_endless_config_path_is_refused_at_the_cap() -> None:
    t0 = time.monotonic()
    with pytest.raises(ConfigError, match=r"/dev/zero: larger than 32 MiB"):
        cfg.load("/dev/zero")  # read_bytes() never returned (and grew without bound)
    assert time.monotonic() - t0 < 10


def test_merge_keys_may_still_be_overridden(tmp_path: Path) -> None:
    # `<<:` merges defaults that the mapping's own keys override: not a duplicate
    p = tmp_path / "probe.yaml"
    p.write_text("modules:\n  base: &base {prober: ping, interval: 30s, timeout: 5s}\n"
                 "  m:\n    <<: *base\n    timeout: 2s\n" + AGENT)
    config, _ = cfg.load(p)
    assert config.all_modules()["m"].timeout == 2.0 and config.all_modules()["m"].interval == 30.0


def test_config_check_says_what_is_wrong_without_a_traceback(tmp_path: Path) -> None:
    for case in ("flow nesting", "huge integer", "duplicate agent key"):
        p = tmp_path / "probe.yaml"
        p.write_text(CASES[case][0])
        out = subprocess.run([sys.executable, "-m", "probe", "config", "check", str(p)], capture_output=True,
                             text=True, timeout=60)
        assert out.returncode == 2, (case, out.stderr)
        assert CASES[case][1] in out.stderr and "Traceback" not in out.stderr and "internal error" not in out.stderr


async def test_a_reload_with_a_hostile_file_keeps_the_running_config(tmp_path: Path) -> None:
    path = write_config(tmp_path / "probe.yaml", [{"name": "a", "url": "http://127.0.0.1:9", "modules": ["ping"]}])
    async with running_daemon(path) as (daemon, _):
        path.write_text("[" * 100_000)  # a RecursionError out of the reload before
        ok, message = await daemon.reload()
        assert not ok and "maximum nesting depth" in message
        assert [a.name for a in daemon.config.agents] == ["a"]
