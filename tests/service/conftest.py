"""Fixtures shared by the service tests: a client session, and an Api on the test's ``base``
(each module says which service ``base`` is)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
import pytest

from tests.service.helpers import Api


@pytest.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as s:
        yield s


@pytest.fixture
def api(session: aiohttp.ClientSession, base: str) -> Api:
    return Api(session, base)
