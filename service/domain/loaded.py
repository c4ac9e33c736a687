"""One game as the service holds it: as of a ``seq`` of its log, its metadata and the
engine's game (service/domain/games.py reads it from the log; game_cache.py keeps recent ones)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from service.domain.eventhash import START
from service.engine import Game
from service.store.games import GameMeta


@dataclass(slots=True)
class Loaded:
    """One game as of ``seq``: its metadata and the engine's game."""

    game_id: str
    meta: GameMeta  # as created; what changes with play is kept below
    game: Game
    seq: int
    started_at: datetime | None = None  # the first command
    finished_at: datetime | None = None  # the command that made it won or resigned
    last_at: datetime | None = None  # the latest command
    hash: str = START  # the hash of the event at seq (START at seq 0): see eventhash.py
    hints: int = 0  # hints taken (counted in the meta, beside the log)

    @property
    def owner(self) -> str:
        return self.meta.owner


def same(a: Loaded, b: Loaded) -> bool:
    """Whether two reads of a game found it as it was (the hash chains every event)."""
    return (a.seq == b.seq and a.hash == b.hash and a.hints == b.hints and a.meta == b.meta
            and a.last_at == b.last_at)
