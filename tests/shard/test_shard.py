"""Sharding: rendezvous hashing splits a fleet into disjoint shards that cover it, and a resize moves ~1/n."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from probe import shard
from probe.config import Settings
from probe.shard import Shard, ShardError, shard_of

NAMES = [f"team-{i % 37}/agent-{i}" for i in range(6000)]


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 16])
def test_shards_are_disjoint_cover_the_fleet_and_are_balanced(n: int) -> None:
    shares = [Shard(i, n).select(NAMES) for i in range(n)]
    seen = [name for share in shares for name in share]
    assert sorted(seen) == sorted(NAMES)  # covered, and each name exactly once (disjoint)
    expected = len(NAMES) / n
    for share in shares:  # a fair hash: every shard within 15% of its fair share
        assert abs(len(share) - expected) < 0.15 * expected + 5


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7, 12])
def test_growing_by_one_shard_moves_about_one_in_n_plus_one_and_only_to_the_new_shard(n: int) -> None:
    before = {name: shard_of(name, n) for name in NAMES}
    after = {name: shard_of(name, n + 1) for name in NAMES}
    moved = [name for name in NAMES if before[name] != after[name]]
    assert all(after[name] == n for name in moved)  # nothing moves between shards that stay
    share = len(moved) / len(NAMES)
    assert abs(share - 1 / (n + 1)) < 0.25 / (n + 1), share


@pytest.mark.parametrize("n", [2, 3, 6])
def test_shrinking_by_one_moves_only_the_removed_shards_agents(n: int) -> None:
    before = {name: shard_of(name, n) for name in NAMES}
    after = {name: shard_of(name, n - 1) for name in NAMES}
    moved = {name for name in NAMES if before[name] != after[name]}
    assert moved == {name for name in NAMES if before[name] == n - 1}


def test_the_hash_is_stable_across_processes() -> None:
    # the built-in hash() is salted per process; replicas must agree, so run the hash in two fresh interpreters
    code = "from probe.shard import shard_of; print([shard_of(f'a{i}', 5) for i in range(50)])"
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": seed}).stdout for seed in ("1", "2")}
    assert len(outs) == 1
    assert outs.pop().strip() == str([shard_of(f"a{i}", 5) for i in range(50)])


@pytest.mark.parametrize(("spec", "pod", "want"), [
    ("0/1", "", Shard(0, 1)), ("2/3", "", Shard(2, 3)), (" 1 / 4 ", "", Shard(1, 4)),
    ("ordinal/3", "a2a-probe-2", Shard(2, 3)), ("ordinal/12", "my-release-a2a-probe-11", Shard(11, 12)),
])
def test_parse(spec: str, pod: str, want: Shard) -> None:
    assert shard.parse(spec, pod) == want
    assert str(want) == f"{want.index}/{want.count}"


@pytest.mark.parametrize(("spec", "pod", "message"), [
    ("3/3", "", "outside 0-2"), ("0/0", "", "count must be"), ("1", "", "expected i/n"), ("a/b", "", "expected i/n"),
    ("-1/2", "", "expected i/n"), ("ordinal/3", "probe", "does not end in -<number>"),
    ("ordinal/3", "a2a-probe-3", "outside 0-2"), ("0/100000", "", "count must be"),
])
def test_bad_shards_are_refused_with_a_clear_error(spec: str, pod: str, message: str) -> None:
    with pytest.raises(ShardError, match=message):
        shard.parse(spec, pod)


def test_settings_take_the_shard_from_the_environment_and_the_pod_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("A2A_PROBE_SHARD", "ordinal/4")
    monkeypatch.setenv("HOSTNAME", "a2a-probe-3")
    assert Settings().shard_spec() == Shard(3, 4)
    monkeypatch.setenv("A2A_PROBE_POD_NAME", "a2a-probe-1")  # the downward-API name wins over $HOSTNAME
    assert Settings().shard_spec() == Shard(1, 4)
    monkeypatch.setenv("A2A_PROBE_SHARD", "5/4")
    with pytest.raises(ValueError, match="outside 0-3"):
        Settings()


def test_run_refuses_a_bad_shard_flag_before_it_starts(capsys: pytest.CaptureFixture[str]) -> None:
    from probe.cli import EXIT_USAGE, main

    assert main(["run", "--config", "/nonexistent.yaml", "--shard", "3/3"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "shard index 3 is outside 0-2" in err and "Traceback" not in err
