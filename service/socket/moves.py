"""The ``moves`` messages of one socket: a hello with ``"moves": true`` asks for them.

Anyone who may hold the socket may ask: the readers GET /moves answers too. The
socket's game follows the diffs its writer sends (service/domain/moves.py MovesFeed); the
writer asks :meth:`SocketMoves.due` after ``synced`` and after each diff, and sends
what it gets.
"""

from __future__ import annotations

import logging

from service.domain.games import GameService, Loaded
from service.domain.moves import MovesFeed

log = logging.getLogger(__name__)


class SocketMoves:
    __slots__ = ("feed", "game_id", "games", "sent", "wanted")

    def __init__(self, games: GameService, game_id: str) -> None:
        self.games = games
        self.game_id = game_id
        self.wanted = False  # the latest hello said "moves": true
        self.feed: MovesFeed | None = None  # the game at the socket's seq, while wanted
        self.sent = -1  # the seq of the latest moves message sent

    def start(self, loaded: Loaded) -> None:
        """The first hello asked for moves: they follow from ``loaded``, the game it read."""
        self.wanted, self.feed = True, MovesFeed(self.games, loaded)

    async def update(self) -> None:
        """A later hello turned moves on (then read the game: the resync that follows
        brings it to the socket's seq) or off."""
        if self.wanted and self.feed is None:
            self.feed = MovesFeed(self.games, await self.games.load(self.game_id))
        elif not self.wanted:
            self.feed = None

    def reset(self, loaded: Loaded) -> None:
        """A snapshot was sent: the moves follow from its state."""
        if self.feed is not None:
            self.feed.reset(loaded)
            self.sent = -1  # even at the same seq: the state may differ (a failover)

    def follow(self, seq: int, event: bytes) -> None:
        """The diff ``event`` at ``seq`` was sent."""
        if self.feed is not None:
            self.feed.follow(seq, event)

    def due(self, seq: int, after_synced: bool = False) -> bytes | None:
        """The ``moves`` message at the socket's ``seq``, when one is due: after ``synced``,
        and once after the diff of each later seq (none when no diff was sent since the
        last one). The caller sends it."""
        feed = self.feed
        if feed is None or (self.sent == seq and not after_synced):
            return None
        if feed.seq != seq:  # every diff sent goes through follow: cannot happen
            log.warning("game %s: moves at seq %d, the socket at %d; not sent", self.game_id,
                        feed.seq, seq)
            return None
        self.sent = feed.seq
        return feed.message()
