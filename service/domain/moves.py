"""The legal moves of a game: the body of ``GET /v1/games/{id}/moves``, and the socket's
``moves`` message (the same body with ``"type": "moves"``) for a ``hello`` that asked.

One function makes the body for both (:func:`legal_moves`). A socket keeps its own
game at the seq it has sent (:class:`MovesFeed`): each diff it sends is applied to it,
in memory, so the moves after a diff cost one engine step, not a read of the log.
A daily attempt whose day is over, and a game that has had the most commands a game may
have, take no command but resign (GameService.takes_no_moves): they have no legal moves,
whatever their state.
"""

from __future__ import annotations

from protocol.codec import encode
from protocol.rest import LegalMoves
from protocol.ws import MovesMessage
from service.domain import wire
from service.domain.games import GameService, Loaded, decode_event
from service.engine import Game


def legal_moves(seq: int, game: Game, no_moves: bool) -> LegalMoves:
    """The legal moves of ``game`` at ``seq``: every legal move (foundations named by
    index) and draw, and whether an undo would be accepted; none of them when the game
    takes no command but resign (``no_moves``: GameService.takes_no_moves)."""
    if no_moves:
        return LegalMoves(seq=seq, moves=[], can_undo=False)
    return LegalMoves(seq=seq, moves=[wire.command(m) for m in game.legal_moves()],
                      can_undo=game.can_undo)


def moves_of(games: GameService, loaded: Loaded) -> LegalMoves:
    """The body of ``GET /v1/games/{id}/moves`` for ``loaded``, now."""
    return legal_moves(loaded.seq, loaded.game, games.takes_no_moves(loaded.meta, loaded.seq))


class MovesFeed:
    """The game of one socket at the seq of the last diff it sent, for its ``moves``."""

    def __init__(self, games: GameService, loaded: Loaded) -> None:
        self.games = games  # its clock says when a daily attempt's day is over
        self.meta = loaded.meta
        self.game = loaded.game
        self.seq = loaded.seq

    def reset(self, loaded: Loaded) -> None:
        """Start again from a state read from the log (a snapshot was sent)."""
        self.meta, self.game, self.seq = loaded.meta, loaded.game, loaded.seq

    def follow(self, seq: int, event: bytes) -> None:
        """The socket sent the diff ``event`` at ``seq``: apply it if it is the next one
        (a replayed diff this game already holds is skipped)."""
        if seq == self.seq + 1:
            self.game = self.game.apply(decode_event(event))[0]
            self.seq = seq

    def message(self) -> bytes:
        """The ``moves`` message at this feed's seq."""
        body = legal_moves(self.seq, self.game, self.games.takes_no_moves(self.meta, self.seq))
        return encode(MovesMessage(seq=body.seq, moves=body.moves, can_undo=body.can_undo))
