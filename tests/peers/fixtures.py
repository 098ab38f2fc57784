"""Session-scoped pytest fixtures for the official-SDK reference peers.

The main conftest pulls these in with ``from tests.peers.fixtures import *``. A test module may also
import them directly; peers are shared per (kind, compat) through a refcounted registry, so a fixture
registered twice (conftest + module) still starts only one process per configuration.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from tests.peers.harness import Peer, start_peer

__all__ = ["js_peer", "js_peer_compat", "js_peer_push", "py_peer", "py_peer_compat", "py_peer_push"]

_lock = threading.Lock()
_shared: dict[tuple[str, bool, bool], tuple[Peer, int]] = {}


def _acquire(kind: str, compat: bool, push: bool) -> Peer:
    with _lock:
        peer, users = _shared.get((kind, compat, push), (None, 0))
        if peer is None or not peer.running:
            peer = start_peer(kind, compat, extra_args=("--push",) if push else ())
        _shared[(kind, compat, push)] = (peer, users + 1)
        return peer


def _release(kind: str, compat: bool, push: bool) -> None:
    with _lock:
        peer, users = _shared[(kind, compat, push)]
        if users > 1:
            _shared[(kind, compat, push)] = (peer, users - 1)
            return
        del _shared[(kind, compat, push)]
    peer.stop()


def _peer(kind: str, compat: bool, push: bool = False) -> Iterator[Peer]:
    peer = _acquire(kind, compat, push)
    try:
        yield peer
    finally:
        _release(kind, compat, push)


@pytest.fixture(scope="session")
def py_peer() -> Iterator[Peer]:
    """a2a-sdk (Python) peer, A2A 1.0 only."""
    yield from _peer("python", compat=False)


@pytest.fixture(scope="session")
def py_peer_compat() -> Iterator[Peer]:
    """a2a-sdk (Python) peer with the 0.3 compat layer (``message/send`` etc.)."""
    yield from _peer("python", compat=True)


@pytest.fixture(scope="session")
def js_peer() -> Iterator[Peer]:
    """@a2a-js/sdk peer, A2A 1.0 only."""
    yield from _peer("js", compat=False)


@pytest.fixture(scope="session")
def js_peer_compat() -> Iterator[Peer]:
    """@a2a-js/sdk peer with ``legacyCompat`` (a header-less client gets the 0.3 card and methods)."""
    yield from _peer("js", compat=True)


@pytest.fixture(scope="session")
def py_peer_push() -> Iterator[Peer]:
    """a2a-sdk (Python) peer with push notifications (in-memory config store, push sender) and 0.3 compat."""
    yield from _peer("python", compat=True, push=True)


@pytest.fixture(scope="session")
def js_peer_push() -> Iterator[Peer]:
    """@a2a-js/sdk peer with push notifications (in-memory store, legacy-aware sender) and legacyCompat."""
    yield from _peer("js", compat=True, push=True)
