from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator

import pytest
import structlog

from probe.wire.http import HttpClient
from tests.peers.fixtures import *  # noqa: F403  (session-scoped official SDK peers)

# fixtures that start a program outside this Python (every official-SDK peer fixture is named *_peer*); a test
# using one must carry the `external` marker, so `pytest -m "not external"` stays a fast, self-contained loop
EXTERNAL_FIXTURES = frozenset({"chromium", "helm", "image_venv", "gateway"})


def _external(fixture: str) -> bool:
    return fixture in EXTERNAL_FIXTURES or "_peer" in fixture


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    unmarked = [item.nodeid for item in items if any(_external(f) for f in getattr(item, "fixturenames", ()))
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
