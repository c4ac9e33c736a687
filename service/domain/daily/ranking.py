"""An attempt's standing on its leaderboard, and the order of standings.

Ranking (PROTOCOL.md): won first, then more foundation cards, then shorter
duration, then fewer moves, then earlier finish; the player id breaks what is
left. Marked entries (docs/reliability.md, "The daily leaderboard's integrity") come
after the unmarked ones, in groups: the human-paced entries of players made on the
day, then the machine-paced ones (of players from before the day, then of new ones).
So no machine-paced entry is above a human-paced one, and among each, no new player is
above one from before the day. The order
is encoded in a fixed-width string of digits, the *sort key*:
the leaderboard is a sorted set whose members all have score 0 and begin with
``<sort key><player id>``, so Redis orders them by bytes, which is exactly the
ranking. No float is involved, so nothing is lost to 53-bit precision.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import cast, get_type_hints

import msgspec

from protocol.codec import encode
from protocol.daily import LeaderboardEntry
from protocol.diffs import Stats
from protocol.fields import parse_rfc3339, rfc3339
from service.domain.daily.challenge import epoch_ms
from service.store.daily import CARDS_DIGITS, DURATION_DIGITS, FINISH_DIGITS, MOVES_DIGITS, Row

MAX_FOUNDATION_CARDS = 127  # two decks hold 104 cards


def _clamp(value: int, digits: int) -> int:
    top: int = 10**digits - 1
    return max(0, min(value, top))


_ONE_MS = timedelta(milliseconds=1)

# What an entry gets when the board is read (service.store.daily.Row), not stored, with
# the placeholder an entry read back holds until they are set (board_entry).
ADDED_ON_READ = {"rank": 0, "player_id": "", "name": ""}
# An entry as stored: the protocol's LeaderboardEntry without those, derived from it so
# that the shape is written once (a field renamed there fails here, at the first entry).
StoredEntry = msgspec.defstruct(
    "StoredEntry", [(f.name, f.type) for f in msgspec.structs.fields(LeaderboardEntry)
                    if f.name not in ADDED_ON_READ])

# An entry as read back: a LeaderboardEntry that only decodes differently. Its stored
# fields are decoded with their plain types (str, int, ...) but not their constraints:
# the server wrote them, and matching a Timestamp's pattern on every read would triple
# the cost of decoding. The fields added on read hold a placeholder until they are set.
# Encoded, it is a LeaderboardEntry: a subclass with the same fields in the same order.
# Fields added later have defaults (an entry stored before them decodes with those).
_PLAIN = get_type_hints(LeaderboardEntry)  # without Annotated's constraints
_ReadEntry = cast(type[LeaderboardEntry], msgspec.defstruct(
    "_ReadEntry",
    [(f.name, _PLAIN[f.name], ADDED_ON_READ[f.name]) if f.name in ADDED_ON_READ
     else (f.name, _PLAIN[f.name], f.default) if f.default is not msgspec.NODEFAULT
     else (f.name, _PLAIN[f.name]) for f in msgspec.structs.fields(LeaderboardEntry)],
    bases=(LeaderboardEntry,), kw_only=True))
_decode_entry = msgspec.json.Decoder(_ReadEntry).decode


def board_entry(row: Row, name: str | None) -> LeaderboardEntry:
    """The protocol's entry of a board's row (its stored JSON as :meth:`Standing.entry_json`
    wrote it) under the player's current ``name``; a player whose record is gone (None)
    is shown under their id, as every entry of theirs on every board."""
    read = _decode_entry(row.entry)
    read.rank, read.player_id, read.name = row.rank, row.player_id, name or row.player_id
    return read


def duration_ms(started_at: datetime | None, end: datetime | None) -> int:
    """From the first command to the end, in whole ms (no float), as GameService.stats counts it."""
    if not started_at or not end:
        return 0
    return max(0, (end - started_at) // _ONE_MS)


# The machine-pace test looks at attempts of this many moves or more: fewer say too
# little (a quick resign after a draw or two).
PACED_MOVES_MIN = 10


def machine_paced(moves: int, duration_ms: int, floor_ms_per_move: int) -> bool:
    """Faster than ``floor_ms_per_move`` a move on average, over ``PACED_MOVES_MIN`` moves
    or more: no person plays so (docs/reliability.md says why the floor is 100 ms)."""
    return moves >= PACED_MOVES_MIN and duration_ms < floor_ms_per_move * moves


@dataclass(frozen=True, slots=True)
class Standing:
    """An attempt as the leaderboard ranks it, computed by the server from the game.

    ``finished_at`` is None for an attempt ranked as it stood when its day ended;
    it then ranks as if it finished at the day's end (``finish_ms``). ``new_player``
    and ``machine_paced`` are its marks, which put it in a later group (:attr:`group`).
    """

    player_id: str
    game_id: str
    seq: int
    status: str
    foundation_cards: int
    moves: int
    duration_ms: int
    finished_at: str | None
    finish_ms: int
    new_player: bool = False
    machine_paced: bool = False

    @property
    def won(self) -> bool:
        return self.status == "won"

    @property
    def group(self) -> int:
        """0 unmarked, 1 a new player's (human-paced), 2 machine-paced, 3 both: ranked
        in that order of groups, then by the results within each."""
        return 2 * self.machine_paced + self.new_player

    def sort_key(self) -> str:
        """Fixed-width digits whose byte order is the ranking order (smaller ranks higher)."""
        cards_short = MAX_FOUNDATION_CARDS - min(self.foundation_cards, MAX_FOUNDATION_CARDS)
        # One digit for both: the group (0-3) twice, plus 1 when not won.
        return (str(2 * self.group + (0 if self.won else 1))
                + f"{cards_short:0{CARDS_DIGITS}d}"
                + f"{_clamp(self.duration_ms, DURATION_DIGITS):0{DURATION_DIGITS}d}"
                + f"{_clamp(self.moves, MOVES_DIGITS):0{MOVES_DIGITS}d}"
                + f"{_clamp(self.finish_ms, FINISH_DIGITS):0{FINISH_DIGITS}d}")

    def member(self) -> str:
        return self.sort_key() + self.player_id

    def entry_json(self) -> bytes:
        """The entry's stored fields (rank, player_id and name are added when read)."""
        return encode(StoredEntry(game_id=self.game_id, status=self.status, won=self.won,
                                  foundation_cards=self.foundation_cards, moves=self.moves,
                                  duration_ms=self.duration_ms, finished_at=self.finished_at,
                                  new_player=self.new_player,
                                  machine_paced=self.machine_paced))

    @classmethod
    def of(cls, *, player_id: str, game_id: str, seq: int, status: str, foundation_cards: int,
           moves: int, started_at: datetime | None, last_at: datetime | None,
           finished_at: datetime | None, day_end_ms: int, new_player: bool = False,
           pace_floor_ms: int = 0) -> Standing:
        """The standing of a game from its meta (``Games.attempts``); a game not final
        stands as it is at its day's end. ``pace_floor_ms``: the machine-pace floor per
        move (0: none)."""
        final = status in ("won", "resigned")
        finished = finished_at if final else None
        duration = duration_ms(started_at, finished_at or last_at)
        return cls(player_id=player_id, game_id=game_id, seq=seq, status=status,
                   foundation_cards=foundation_cards, moves=moves, duration_ms=duration,
                   finished_at=rfc3339(finished) if finished else None,
                   finish_ms=epoch_ms(finished) if finished else day_end_ms,
                   new_player=new_player,
                   machine_paced=machine_paced(moves, duration, pace_floor_ms))

    @classmethod
    def from_stats(cls, player_id: str, game_id: str, seq: int, status: str, stats: Stats,
                   day_end_ms: int, new_player: bool = False,
                   pace_floor_ms: int = 0) -> Standing:
        """From GameService.stats of a loaded game."""
        final = status in ("won", "resigned")
        finished = stats.finished_at if final else None
        return cls(player_id=player_id, game_id=game_id, seq=seq, status=status,
                   foundation_cards=stats.foundation_cards, moves=stats.moves,
                   duration_ms=stats.duration_ms, finished_at=finished,
                   finish_ms=epoch_ms(parse_rfc3339(finished)) if finished else day_end_ms,
                   new_player=new_player,
                   machine_paced=machine_paced(stats.moves, stats.duration_ms, pace_floor_ms))
