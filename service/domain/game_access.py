"""Who may read a game or command it, and when: the access policy of games.

Reading: the owner always; anyone else a public game, or a daily attempt once its
day is over (until then nobody else may look). A game nobody else may read is 404
to them, never 403: its existence is not told. Commanding: the owner only (401
without a token), and only while the game takes commands: a daily attempt whose day
is over takes none (403), and a game that has had the most commands a game may have
(``max_commands_per_game``) takes only resign (422 ``command_limit``). The seed of a
daily challenge is shown once its day is over; a seed the server chose, once the game
is over.
"""

from __future__ import annotations

from dataclasses import dataclass

from protocol.fields import rfc3339
from service.domain.errors import ApiError
from service.domain.loaded import Loaded
from service.engine import Command, Resign, Rule
from service.runtime.clock import Clock
from service.settings import Settings
from service.store.games import GameMeta


@dataclass(frozen=True, slots=True)
class GameAccess:
    settings: Settings
    clock: Clock

    def can_read(self, loaded: Loaded, player: str | None) -> bool:
        if player is not None and player == loaded.owner:
            return True
        readable_from = loaded.meta.readable_from
        if readable_from:  # a daily attempt: nobody else may look until its day is over
            return self.clock.now() >= readable_from
        return loaded.meta.public

    def check_read(self, loaded: Loaded, player: str | None) -> None:
        if not self.can_read(loaded, player):
            raise ApiError("not_found", f"no game {loaded.game_id!r}")  # private: 404, not 403

    def check_command(self, loaded: Loaded, player: str | None) -> None:
        if player is None:
            if not self.can_read(loaded, None):
                raise ApiError("not_found", f"no game {loaded.game_id!r}")
            raise ApiError("unauthorized",
                           "a command needs the owner's token (Authorization: Bearer)")
        if player != loaded.owner:
            self.check_read(loaded, player)
            raise ApiError("forbidden", "only the game's owner may send commands to it")
        closes_at = loaded.meta.closes_at
        if closes_at is not None and self.day_is_over(loaded.meta):
            raise ApiError("forbidden", "the challenge is over", {"closes_at": rfc3339(closes_at)})

    def at_command_limit(self, seq: int) -> bool:
        """Whether a game at ``seq`` has had the most commands a game may have
        (``settings.max_commands_per_game``): it takes only resign from then on."""
        return seq >= self.settings.max_commands_per_game

    def check_command_limit(self, loaded: Loaded, command: Command) -> None:
        """Refuse (422 ``command_limit``) any command but resign to a game at the limit."""
        if self.at_command_limit(loaded.seq) and not isinstance(command, Resign):
            limit = self.settings.max_commands_per_game
            raise ApiError("illegal_move",
                           f"this game has had {limit} commands, the most one game may have "
                           f"(SOLITAIRE_MAX_COMMANDS_PER_GAME): only resign is accepted now",
                           {"rule": Rule.COMMAND_LIMIT, "limit": "max_commands_per_game",
                            "seq": loaded.seq})

    def takes_no_moves(self, meta: GameMeta, seq: int) -> bool:
        """Whether the game at ``seq`` refuses every command but resign (and so lists no
        legal move): a daily attempt whose day is over, or a game at the command limit
        (:meth:`at_command_limit`)."""
        return self.at_command_limit(seq) or self.day_is_over(meta)

    def day_is_over(self, meta: GameMeta) -> bool:
        """The game is a daily attempt whose day is over: fixed, it takes no more commands
        (403 "the challenge is over") and so has no legal moves. False for any other game."""
        closes_at = meta.closes_at
        return closes_at is not None and self.clock.now() >= closes_at

    def seed_visible(self, loaded: Loaded) -> bool:
        meta = loaded.meta
        if meta.seed_from:  # a daily challenge's seed: hidden until its day is over
            return self.clock.now() >= meta.seed_from
        if meta.seed_secret:
            return loaded.game.status.is_final
        return True
