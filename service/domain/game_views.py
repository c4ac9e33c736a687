"""What a client is shown of a game: its stats, and its redacted state (PROTOCOL.md):
face-down cards as backs, the seed only where the access policy shows it."""

from __future__ import annotations

from datetime import timedelta

from protocol.diffs import GameState, Stats
from protocol.fields import rfc3339
from service.domain import wire
from service.domain.loaded import Loaded

_MS = timedelta(milliseconds=1)


def stats(loaded: Loaded) -> Stats:
    started, finished = loaded.started_at, loaded.finished_at
    end = finished or loaded.last_at
    duration = max(0, (end - started) // _MS) if started and end else 0
    return Stats(moves=loaded.game.moves, foundation_cards=loaded.game.foundation_cards,
                 started_at=rfc3339(started) if started else None,
                 finished_at=rfc3339(finished) if finished else None, duration_ms=duration,
                 hints=loaded.hints)


def state(loaded: Loaded, seed_visible: bool) -> GameState:
    """The redacted state of PROTOCOL.md (``seed_visible``: GameAccess.seed_visible)."""
    game = loaded.game
    return GameState(
        game_id=loaded.game_id, variant=game.variant.id, options=game.variant.options,
        seq=loaded.seq, status=wire.status(game.status), piles=wire.piles(game.public_piles()),
        stats=stats(loaded), public=loaded.meta.public,
        seed=game.seed if seed_visible else None, owner=loaded.owner,
    )
