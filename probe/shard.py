"""Sharding a fleet across replicas: each agent belongs to exactly one of n shards, by rendezvous hashing.

Rendezvous (highest-random-weight) hashing of the agent *name*: every replica computes, for each agent, a
weight per shard and keeps the agents whose highest weight is its own. Nothing is shared between replicas,
so n replicas reading one config probe disjoint sets that cover it, and a resize from n to n+1 moves only
the agents the new shard wins (about 1/(n+1) of them); no agent moves between two shards that both stay.
The weight is a keyed BLAKE2b of the name, stable across processes, machines and Python versions (the
built-in `hash()` is salted per process and would give every replica a different answer).

A shard is given as `i/n` (0 <= i < n) or, in a Kubernetes StatefulSet, as `ordinal/n`: i is then the
ordinal at the end of the pod name (`a2a-probe-2` -> 2), read from the pod name setting or `$HOSTNAME`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass

MAX_SHARDS = 1024  # far above any sensible replica count; bounds the per-agent hashing work
_SPEC = re.compile(r"^\s*(\d+|ordinal)\s*/\s*(\d+)\s*$")
_ORDINAL = re.compile(r"-(\d+)$")


class ShardError(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class Shard:
    index: int = 0
    count: int = 1

    def __post_init__(self) -> None:
        if not 1 <= self.count <= MAX_SHARDS:
            raise ShardError(f"the shard count must be 1-{MAX_SHARDS}, got {self.count}")
        if not 0 <= self.index < self.count:
            raise ShardError(f"shard index {self.index} is outside 0-{self.count - 1}")

    def owns(self, agent: str) -> bool:
        return self.count == 1 or shard_of(agent, self.count) == self.index

    def select(self, names: Iterable[str]) -> list[str]:
        return [n for n in names if self.owns(n)]

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def weight(agent: str, shard: int) -> int:
    # the shard number is the key, so each shard draws an independent weight for the same name
    digest = hashlib.blake2b(agent.encode(), digest_size=8, key=shard.to_bytes(4, "big")).digest()
    return int.from_bytes(digest, "big")


def shard_of(agent: str, count: int) -> int:
    """The shard (0..count-1) an agent belongs to when the fleet is split count ways."""
    if count == 1:
        return 0
    return max(range(count), key=lambda i: weight(agent, i))


def parse(spec: str, pod_name: str = "") -> Shard:
    """`i/n`, or `ordinal/n` with i taken from the StatefulSet pod name (`<statefulset>-<ordinal>`)."""
    m = _SPEC.match(spec)
    if not m:
        raise ShardError(f"{spec!r} is not a shard: expected i/n (e.g. 0/3) or ordinal/n")
    count = int(m.group(2))
    if m.group(1) != "ordinal":
        return Shard(int(m.group(1)), count)
    ordinal = _ORDINAL.search(pod_name.strip())
    if not ordinal:
        raise ShardError(f"shard {spec!r} takes i from the pod ordinal, but the pod name {pod_name!r} does not end "
                         "in -<number> (set A2A_PROBE_POD_NAME from metadata.name in a StatefulSet)")
    return Shard(int(ordinal.group(1)), count)
