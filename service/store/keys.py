"""Every Redis key and channel of the service, in one place.

All keys of one game share the hash tag ``{<game_id>}``, so a game lives in a
single Redis Cluster slot: its Lua scripts touch only keys of that slot, and
its pub/sub channel (published with SPUBLISH) is served by the same node.

| key                   | type   | holds                                              |
|-----------------------|--------|----------------------------------------------------|
| ``g:{id}:meta``       | hash   | the fields of :mod:`service.store.meta`            |
| ``g:{id}:events``     | list   | event bytes; index ``seq - 1``                     |
| ``g:{id}:cmds``       | hash   | command_id -> ``<seq> <command>``, its first use   |
| ``g:{id}:snap``       | hash   | ``seq`` and ``data``: the latest snapshot          |
| ``g:{id}:dur``        | string | a durable acknowledgement's marker (60 s)          |
| ``g:{id}:diffs``      | channel| ``b"<seq> <event bytes>"`` per appended event      |
| ``rl:{<subject>}``    | string | a rate limit's bucket: its theoretical arrival     |
|                       |        | time (µs); each limit's subject in the rate limits |
|                       |        | section below (``{p_…}``, ``{read:<address>}``...) |
| ``p:{player_id}``     | hash   | the player's name; expires unused                  |
| ``p:{pid}:open``      | zset   | the player's open games -> when each would expire  |
| ``p:{pid}:games``     | zset   | every game of the player, newest first (below)     |
| ``p:{pid}:games:<v>`` | zset   | the same, of variant ``v`` only                    |
| ``daily:{d:v}:...``   | (many) | a daily challenge: see the daily section below     |
| ``sol:{v:seed}:r:o``  | string | a deal's solution (the solver's answer, JSON)      |
| ``sol:…:searching``   | string | set while a worker searches that solution          |
| ``inst:{i}:workers``  | zset   | an instance's live worker processes -> lease end   |
| ``inst:{i}:n:<what>`` | hash   | worker -> what it holds of a per-instance limit    |
"""

from __future__ import annotations

from typing import NamedTuple

# -- games --------------------------------------------------------------------

def game_meta(game_id: str) -> str:
    return f"g:{{{game_id}}}:meta"


def game_events(game_id: str) -> str:
    return f"g:{{{game_id}}}:events"


def game_commands(game_id: str) -> str:
    return f"g:{{{game_id}}}:cmds"


def game_snapshot(game_id: str) -> str:
    return f"g:{{{game_id}}}:snap"


def game_channel(game_id: str) -> str:
    """The pub/sub channel on which every appended event of the game is published."""
    return f"g:{{{game_id}}}:diffs"


def game_durable(game_id: str) -> str:
    """A marker a durable acknowledgement writes in the game's slot (durability.py); it
    expires after a minute."""
    return f"g:{{{game_id}}}:dur"


def game_keys(game_id: str) -> tuple[str, str, str, str]:
    """The game's data keys (meta, events, cmds, snap), in the order the scripts take them."""
    return (game_meta(game_id), game_events(game_id), game_commands(game_id),
            game_snapshot(game_id))


# -- rate limits --------------------------------------------------------------
# One bucket per limit and subject (service/store/ratelimit.py: a string holding the
# bucket's theoretical arrival time, µs, expiring once the bucket is full again). The
# hash tag is the limit's subject, a player or a client address, behind a prefix naming
# the limit (none for commands), so that one subject's limits are separate buckets.
# service/app.py gives each Limiter (service/domain/ratelimit.py) its key below; the setting
# each limit is named by (details.limit of its 429) is in parentheses.

def command_limit(player_id: str) -> str:
    """A player's commands and writes (``rate_limit_per_s``)."""
    return f"rl:{{{player_id}}}"


def read_limit(address: str) -> str:
    """Reads of games (REST and socket hellos) from a client address (``read_rate_per_s``)."""
    return f"rl:{{read:{address}}}"


def create_limit(player_id: str) -> str:
    """A player's new games and daily attempts (``create_rate_per_s``)."""
    return f"rl:{{new:{player_id}}}"


def create_address_limit(address: str) -> str:
    """New games, daily attempts and new players from a client address
    (``create_per_address_rate_per_s``)."""
    return f"rl:{{new:ip:{address}}}"


def signup_limit(address: str) -> str:
    """New players from a client address (``signup_per_address_rate_per_s``)."""
    return f"rl:{{signup:ip:{address}}}"


def rename_limit(player_id: str) -> str:
    """A player's renames (``renames_per_day``)."""
    return f"rl:{{rename:{player_id}}}"


# -- players ----------------------------------------------------------------

def player(player_id: str) -> str:
    """Hash: the player's ``name`` (shown on leaderboards), when it ``joined``, and
    ``unplayed`` until its first game (service/store/meta.py's player catalogue)."""
    return f"p:{{{player_id}}}"


def player_open_games(player_id: str) -> str:
    """Sorted set: the player's open games, scored by when each expires if untouched (s)."""
    return f"p:{{{player_id}}}:open"


def player_games(player_id: str, variant: str | None = None) -> str:
    """Sorted set, every score 0: a member ``<created_at ms, 13 digits> <game_id> <variant>``
    per game of the player (of ``variant`` only, when given), read newest first by lex
    range. Tagged by the player, as every key of theirs: one slot holds all their
    indexes, whatever slots their games are in."""
    base = f"p:{{{player_id}}}:games"
    return base if variant is None else f"{base}:{variant}"


# -- daily challenges ---------------------------------------------------------
# Every key of one challenge (date, variant) shares the hash tag
# ``{<date>:<variant>}``: a challenge lives in one Cluster slot, and each of the
# daily store's scripts touches only that slot.
#
# | key                     | type   | holds                                             |
# |-------------------------|--------|---------------------------------------------------|
# | ``daily:{d:v}:board``   | zset   | score 0, ``<sort key><player_id>|<entry>``: the |
# |                         |        | ranking, each member an entry (names: when shown) |
# | ``daily:{d:v}:entries`` | hash   | game_id -> ``<seq>|<sort key>|<entry JSON>``      |
# | ``daily:{d:v}:ranked``  | hash   | player_id -> their member of the board            |
# | ``daily:{d:v}:attempts``| hash   | player_id -> their attempts' game ids (spaced)    |
# | ``daily:{d:v}:open``    | hash   | game_id -> player_id, attempts not yet ranked     |
# | ``daily:{d:v}:over``    | string | set when ranking the day began: no new attempt    |
# | ``daily:{d:v}:closed``  | string | set when every attempt of the day is ranked       |
# | ``daily:{d:v}:lock``    | string | the instance ranking the day (token, PX)          |

# The chosen deal of a challenge lives beside it, in the same slot:
#
# | key                     | type   | holds                                             |
# |-------------------------|--------|---------------------------------------------------|
# | ``daily:{d:v}:deal``    | hash   | ``k`` (which candidate of the day's sequence) and |
# |                         |        | ``par`` (its winning line's length)               |
# | ``daily:{d:v}:choosing``| string | the instance choosing the deal (token, PX)        |


def daily_deal(date: str, variant: str) -> str:
    return f"daily:{{{date}:{variant}}}:deal"


def daily_choosing(date: str, variant: str) -> str:
    return f"daily:{{{date}:{variant}}}:choosing"


DAILY_DEAL_K = "k"
DAILY_DEAL_PAR = "par"


class DailyKeys(NamedTuple):
    board: str
    entries: str
    ranked: str
    attempts: str
    open: str
    over: str
    closed: str
    lock: str


def daily_keys(date: str, variant: str) -> DailyKeys:
    """The keys of the challenge of ``date`` (YYYY-MM-DD) and ``variant``, in one slot."""
    base = f"daily:{{{date}:{variant}}}:"
    return DailyKeys(*(base + name for name in DailyKeys._fields))


# -- solutions ----------------------------------------------------------------
# A deal's solution is a function of the rules version, the variant, its options
# and the seed. Options go in as a digest of their JSON: braces in the key would
# end the hash tag early.

def solution(rules_version: str, variant: str, options_digest: str, seed: int) -> str:
    return f"sol:{{{variant}:{seed}}}:r{rules_version}:o{options_digest}"


def solution_searching(solution_key: str) -> str:
    """String, beside a solution (same slot): set while one worker of any instance searches
    it (expires with the search's budget, so a dead searcher's runs out)."""
    return solution_key + ":searching"


# -- per-instance counts --------------------------------------------------------
# The limits documented "per instance" (sockets per address, watchers per game,
# searches per address and per player) are counted across an instance's worker
# processes here. Every key of one instance shares the hash tag ``{<instance id>}``,
# so one script sees the instance's live workers and its counts together.

def instance_workers(instance: str) -> str:
    """Sorted set: the instance's live worker processes (a token each), scored by when
    their lease ends (ms, the store's clock)."""
    return f"inst:{{{instance}}}:workers"


def instance_count(instance: str, what: str) -> str:
    """Hash: worker token -> how many of ``what`` (``ws:<address>``...) that worker holds."""
    return f"inst:{{{instance}}}:n:{what}"


# -- service ------------------------------------------------------------------

# A shard channel used once at start-up to learn whether the server has
# sharded pub/sub (SPUBLISH/SSUBSCRIBE: Redis >= 7, Valkey).
PROBE_CHANNEL = "probe:{solitaire}"
