"""The Python SDK of the solitaire service, in one import::

    from clients.python.sdk import Client, GameSocket, ApiError, Move, Draw

    async with Client("http://127.0.0.1:8080") as client:
        await client.create_player("ada")             # the client now acts as ada
        game = await client.create_game("gilbert", seed=7)
        async with client.socket(game.game_id, state=game.state) as sock:
            await sock.send(Move(from_="tableau/3", to="foundation"))
            print(sock.state.piles["foundation/0"])
        async for mine in client.all_my_games(status="playing"):  # newest first
            print(mine.game_id, mine.variant, mine.seq)

:class:`Client` speaks REST, :class:`GameSocket` the game's WebSocket; both take
and return the msgspec Structs of :mod:`protocol`, and raise :class:`ApiError`
for every error the service answers with.
"""

from protocol.commands import Command, Draw, Move, Resign, Undo
from protocol.diffs import GameState, Pile
from protocol.rest import GameSummary, Me, PlayerGames

from .commands import CommandLike, as_command, new_command_id
from .errors import ApiError, ConnectionLost
from .gamesocket import LATEST, GameSocket, SocketStats, StateChange
from .rest import Client

__all__ = [
    "LATEST",
    "ApiError",
    "Client",
    "Command",
    "CommandLike",
    "ConnectionLost",
    "Draw",
    "GameSocket",
    "GameState",
    "GameSummary",
    "Me",
    "Move",
    "Pile",
    "PlayerGames",
    "Resign",
    "SocketStats",
    "StateChange",
    "Undo",
    "as_command",
    "new_command_id",
]
