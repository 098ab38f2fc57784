from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator

import pytest
import structlog

from probe.wire.http import HttpClient
from tests.peers.fixtures import *  # noqa: F403  (session-scoped official SDK peers)


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
