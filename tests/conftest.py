from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator

import pytest
import structlog

from probe.wire.http import HttpClient
from tests.peers.fixtures import *  # noqa: F403  (session-scoped official SDK peers)

# fixtures that start a program outside this Python; a test using one must carry the `external` marker
EXTERNAL_FIXTURES = frozenset({"py_peer", "js_peer", "py_peer_compat", "js_peer_compat", "chromium", "helm",
                               "image_venv", "py_peer_push", "js_peer_push"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    unmarked = [item.nodeid for item in items if EXTERNAL_FIXTURES & set(getattr(item, "fixturenames", ()))
                and not item.get_closest_marker("external")]
    if unmarked:
        raise pytest.UsageError("tests that start external programs must be marked @pytest.mark.external: "
                                + ", ".join(unmarked[:5]))


@pytest.fixture
async def client() -> AsyncIterator[HttpClient]:
    async with HttpClient() as c:
        yield c


@pytest.fixture(autouse=True)
def _reset_logging() -> Iterator[None]:
    """A test that configures logs (e.g. into capsys) must not leave later tests writing to a closed stream."""
    yield
    structlog.reset_defaults()
    logging.getLogger().handlers.clear()
