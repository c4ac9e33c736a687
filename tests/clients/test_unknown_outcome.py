"""The SDK after a 503 whose outcome is unknown, against a real service whose real
store is paused (SIGSTOP): a command sent before the pause may be applied once the
store runs again, so the SDK may send it again only with the same command_id, and a
write without one (a new player or game) not at all."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from clients.python.errors import ApiError
from clients.python.rest import Client
from protocol import Draw
from service.store.embedded import EmbeddedServer
from tests.live import running_service, settings_for_test

from .conftest import eventually


@pytest.fixture
def store(server_factory: Callable[..., EmbeddedServer]) -> EmbeddedServer:
    return server_factory("tcp", port=0)


@pytest.fixture
async def service_url(store: EmbeddedServer, tmp_path: Path) -> AsyncIterator[str]:
    settings = settings_for_test(
        store.url, tmp_path, request_deadline_s=1.0, redis_timeout_s=2.0, redis_retries=3
    )
    async with running_service(settings) as url:
        yield url


@contextmanager
def paused(store: EmbeddedServer) -> Iterator[None]:
    assert store.pid is not None
    os.kill(store.pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(store.pid, signal.SIGCONT)


async def test_a_command_without_a_command_id_is_never_applied_twice(
    service_url: str, store: EmbeddedServer
) -> None:
    async with Client(service_url, retries=2) as client:
        await client.create_player("careful")
        game = await client.create_game("gilbert", seed=5)
        await client.command(game.game_id, Draw())  # the game is loaded: seq 1
        with paused(store), pytest.raises(ApiError) as caught:
            await client.command(game.game_id, Draw())  # sent, resent, resent: all 503
        err = caught.value
        assert (err.status, err.unknown_outcome) == (503, True)
        # The SDK gave the command an id, said it, and sent every retry with it: the
        # caller resends with that id and the draw is in the log once, whatever the
        # paused attempts did.
        assert err.command_id is not None and err.retryable
        result = await client.command(game.game_id, Draw(), command_id=err.command_id)
        assert result.seq == 2
        assert [e.seq for e in await client.events(game.game_id)] == [1, 2]


async def test_a_new_game_whose_outcome_is_unknown_is_not_created_again(
    service_url: str, store: EmbeddedServer
) -> None:
    async with Client(service_url, retries=2) as client:
        await client.create_player("careful")
        await client.create_game("gate", seed=1)
        with paused(store), pytest.raises(ApiError) as caught:
            await client.create_game("gate", seed=2)
        assert caught.value.unknown_outcome and caught.value.command_id is None
        assert caught.value.retryable is False  # the caller must look before sending it again


async def test_the_socket_resends_a_command_with_its_id_until_the_store_answers(
    service_url: str, store: EmbeddedServer
) -> None:
    async with Client(service_url) as client:
        await client.create_player("patient")
        game = await client.create_game("gilbert", seed=5)
        async with client.socket(game.game_id, state=game.state) as sock:
            await sock.send(Draw())
            with paused(store):
                sending = asyncio.ensure_future(sock.send(Draw(), command_id="draw-2"))
                await eventually(
                    lambda: sock.stats.last_error is not None, "a 503 for the paused store"
                )
            assert sock.stats.last_error is not None
            assert sock.stats.last_error.code == "unavailable"
            assert await sending == 2
            assert sock.stats.commands_sent >= 3  # sent, refused, sent again: same id
        assert [e.seq for e in await client.events(game.game_id)] == [1, 2]


async def test_the_socket_waits_as_long_as_a_rate_limit_says(
    store: EmbeddedServer, tmp_path: Path
) -> None:
    settings = settings_for_test(store.url, tmp_path, rate_limit_per_s=2.0, rate_limit_burst=1)
    async with running_service(settings) as url, Client(url) as client:
        await client.create_player("hasty")  # a write: the one token of the burst
        game = await client.create_game("gilbert", seed=5)
        async with client.socket(game.game_id, state=game.state) as sock:
            seqs = [await sock.send(Draw()) for _ in range(3)]
            assert seqs == [1, 2, 3]
            assert sock.stats.last_error is not None
            assert sock.stats.last_error.code == "rate_limited"
            assert sock.stats.last_error.retry_after_s is not None
