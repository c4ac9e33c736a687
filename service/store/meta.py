"""Every field of a game's meta hash (``keys.game_meta``): its name, type and meaning.

The hash is written by the store (creating a game, appending an event), by the
service (the counters each command changes, a daily attempt's tags) and by the
solver's store (hints taken), and read by Lua scripts too (ranking a day's open
attempts): each of them names a field by the constant here, never by a string of
its own. Values are strings in Redis; the type says how to read one.

A player's hash (``keys.player``) has its own short catalogue at the end, on the
same terms: written by :mod:`service.players`, read by the daily store's Lua.
"""

from __future__ import annotations

from string import Template
from typing import NamedTuple


class Field(NamedTuple):
    name: str
    type: type
    meaning: str


# -- set when the game is created (GameMeta) ------------------------------------
VARIANT = "variant"
OPTIONS = "options"
SEED = "seed"
OWNER = "owner"
RULES_VERSION = "rules_version"
CREATED_AT = "created_at"
STATUS = "status"
PUBLIC = "public"
SEQ = "seq"
CREATE_ID = "create_id"
SEED_SECRET = "seed_secret"
# -- a daily attempt's tags, set when it is created ----------------------------
DAILY = "daily"
READABLE_FROM = "readable_from"
SEED_FROM = "seed_from"
CLOSES_AT = "closes_at"
# -- changed by each command, with its event -------------------------------------
MOVES = "moves"
FOUNDATION_CARDS = "foundation_cards"
STARTED_AT = "started_at"
LAST_AT = "last_at"
FINISHED_AT = "finished_at"
HASH = "hash"
# -- beside the log ----------------------------------------------------------------
HINTS = "hints"

CATALOGUE: tuple[Field, ...] = (
    Field(VARIANT, str, "the variant's id"),
    Field(OPTIONS, str, "the variant's options, JSON"),
    Field(SEED, int, "the deal's seed"),
    Field(OWNER, str, "the player id of the game's owner"),
    Field(RULES_VERSION, str, "the rules version the game was dealt under"),
    Field(CREATED_AT, str, "when the game was created, RFC 3339 UTC"),
    Field(STATUS, str, "playing, won, lost or resigned (the engine's Status)"),
    Field(PUBLIC, bool, "'1' when anyone may watch the game, else '0'"),
    Field(SEQ, int, "the seq of the latest event (0: none yet); only an append sets it"),
    Field(CREATE_ID, str, "a random id of the create call, so that its retry knows itself"),
    Field(SEED_SECRET, bool, "'1' when the seed stays hidden until the game is over"),
    Field(DAILY, str, "a daily attempt's challenge, '<YYYY-MM-DD>/<variant>'"),
    Field(READABLE_FROM, str, "a daily attempt: others may read it from then on, RFC 3339"),
    Field(SEED_FROM, str, "a daily attempt: its seed is shown from then on, RFC 3339"),
    Field(CLOSES_AT, str, "a daily attempt: commands are refused from then on, RFC 3339"),
    Field(MOVES, int, "moves made (the game's counter)"),
    Field(FOUNDATION_CARDS, int, "cards on the foundations"),
    Field(STARTED_AT, str, "the first command, RFC 3339 (absent: none yet)"),
    Field(LAST_AT, str, "the latest command, RFC 3339"),
    Field(FINISHED_AT, str, "the command that made the game won or resigned, RFC 3339"),
    Field(HASH, str, "the hash of the latest event (service/eventhash.py)"),
    Field(HINTS, int, "hints taken (POST /v1/games/{id}/hint)"),
)
NAMES = frozenset(f.name for f in CATALOGUE)

# The fields GameMeta holds as its own attributes; every other catalogued field
# travels in GameMeta.extra.
CORE = frozenset((VARIANT, OPTIONS, SEED, OWNER, RULES_VERSION, CREATED_AT, STATUS, PUBLIC, SEQ,
                  CREATE_ID))

# What ranking a daily attempt reads (Games.attempts), in this order.
ATTEMPT = (OWNER, SEQ, STATUS, MOVES, FOUNDATION_CARDS, STARTED_AT, LAST_AT, FINISHED_AT)


# -- a player's hash (keys.player), not a game's ----------------------------------
PLAYER_NAME = "name"

PLAYER_CATALOGUE: tuple[Field, ...] = (
    Field(PLAYER_NAME, str, "the player's name as leaderboards show it (service/players.py)"),
)


def lua_list(names: tuple[str, ...]) -> str:
    """``names`` as a Lua argument list: ``'owner', 'seq', ...``."""
    return ", ".join(f"'{name}'" for name in names)


def lua(source: str, **names: str | int) -> str:
    """A Lua script with the ``$name`` placeholders of ``source`` replaced (field names
    from here; Lua itself never uses ``$``)."""
    return Template(source).substitute(names)
