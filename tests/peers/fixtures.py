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

__all__ = ["js_peer", "js_peer_compat", "py_peer", "py_peer_compat"]

_lock = threading.Lock()
_shared: dict[tuple[str, bool], tuple[Peer, int]] = {}


def _acquire(kind: str, compat: bool) -> Peer:
    with _lock:
        peer, users = _shared.get((kind, compat), (None, 0))
        if peer is None or not peer.running:
            peer = start_peer(kind, compat)
        _shared[(kind, compat)] = (peer, users + 1)
        return peer


def _release(kind: str, compat: bool) -> None:
    with _lock:
        peer, users = _shared[(kind, compat)]
        if users > 1:
            _shared[(kind, compat)] = (peer, users - 1)
            return
        del _shared[(kind, compat)]
    peer.stop()


def _peer(kind: str, compat: bool) -> Iterator[Peer]:
    peer = _acquire(kind, compat)
    try:
        yield peer
    finally:
        _release(kind, compat)


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
