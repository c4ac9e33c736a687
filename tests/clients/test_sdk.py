"""The one-import SDK, as its README shows it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

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


async def test_a_hint_and_a_solution_through_the_sdk(client: Client) -> None:
    """hint() suggests a legal command; solution() of a resigned game, sent as commands to a
    new game of the same seed, wins it."""
    from protocol.solver import Hint, Solution

    game = await client.create_game("gate", seed=13)
    hint = await client.hint(game.game_id)
    assert isinstance(hint, Hint) and hint.seq == 0 and hint.samples > 0
    legal = (await client.moves(game.game_id)).moves
    assert hint.command in legal
    assert (await client.game(game.game_id)).stats.hints == 1
    with pytest.raises(ApiError) as early:
        await client.solution(game.game_id)
    assert early.value.code == "conflict"
    await client.command(game.game_id, {"type": "resign"})
    solution = await client.solution(game.game_id)
    assert isinstance(solution, Solution) and solution.result == "won"
    fresh = await client.create_game("gate", seed=13)
    status = "playing"
    for command in solution.commands:
        status = (await client.command(fresh.game_id, command)).diff.status
    assert status == "won"


async def test_the_readme_example_itself_runs_to_its_end(
    service_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The README's code block, as a reader copies it (but for the service's address):
    it ends. It used to wait for ever, for a diff applied before its loop began."""
    text = (Path(__file__).parents[2] / "clients/python/README.md").read_text()
    code = text.split("```python\n", 1)[1].split("```", 1)[0]
    assert "asyncio.run(main())" in code
    code = code.replace("http://127.0.0.1:8080", service_url).replace("asyncio.run(main())", "")
    namespace: dict[str, Any] = {}
    exec(compile(code, "README.md", "exec"), namespace)
    # The bound only turns a hang into a failure; nothing here measures time.
    await asyncio.wait_for(namespace["main"](), timeout=60)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "1 1" and "illegal_move" in lines[1] and lines[2].startswith("1 ")
