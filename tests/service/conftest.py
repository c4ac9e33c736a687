"""Fixtures shared by the service tests: a client session, and an Api on the test's ``base``
(each module says which service ``base`` is: ``live_base`` for the service as a whole), and
a player to own games."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from tests.live import running_service, settings_for_test
from tests.service.helpers import Api


@pytest.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as s:
        yield s


@pytest.fixture
def api(session: aiohttp.ClientSession, base: str) -> Api:
    return Api(session, base)


@pytest.fixture
async def live_base(redis_url: str, tmp_path: Path) -> AsyncIterator[str]:
    """The URL of a service of the test's own: the whole app, the test settings, the
    test's store."""
    async with running_service(settings_for_test(redis_url, tmp_path)) as base:
        yield base


@pytest.fixture
async def owner(api: Api) -> tuple[str, str]:
    """A player named "owner", and its token."""
    return await api.player("owner")
