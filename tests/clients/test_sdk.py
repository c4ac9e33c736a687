"""The one-import SDK, as its README shows it."""

from __future__ import annotations

import pytest

from clients.python.sdk import ApiError, Client, Draw, GameSocket, Move


async def test_the_readme_example_runs(service_url: str) -> None:
    async with Client(service_url) as client:
        await client.create_player("ada")
        game = await client.create_game("gilbert", seed=1)
        legal = await client.moves(game.game_id)
        async with client.socket(game.game_id, state=game.state) as sock:
            assert isinstance(sock, GameSocket)
            assert await sock.send(legal.moves[0]) == 1
            with pytest.raises(ApiError) as caught:
                await sock.send(Move(from_="tableau/2", to="tableau/2"))
            assert caught.value.code == "illegal_move"
            changes = sock.changes()
            await client.command(game.game_id, Draw())
            change = await anext(changes)
            assert change.diff is not None and change.diff.command == Draw()
            assert change.state.seq == 2
