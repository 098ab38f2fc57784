from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from probe.wire.http import HttpClient
from tests.peers.fixtures import *  # noqa: F403  (session-scoped official SDK peers)


@pytest.fixture
async def client() -> AsyncIterator[HttpClient]:
    async with HttpClient() as c:
        yield c
