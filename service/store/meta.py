"""Every field of a game's meta hash (``keys.game_meta``): its name, kind and meaning.

The hash is written by the store (creating a game, appending an event), by the
service (the counters each command changes, a daily attempt's tags) and by the
solver's store (hints taken), and read by Lua scripts too (ranking a day's open
attempts): each of them names a field by the constant here, never by a string of
its own. Values are text in Redis; a field's :class:`Kind` is the one place that
turns a value into that text and back (:func:`to_text`, :func:`from_text`): no other
module parses or formats a meta field.

A player's hash (``keys.player``) has its own short catalogue at the end, on the
same terms: written by :mod:`service.domain.players`, read by the daily store's Lua.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import date, datetime
from string import Template
from typing import Any, NamedTuple

import msgspec

from protocol.fields import parse_rfc3339, rfc3339


class Kind(NamedTuple):
    """How values of one Python ``type`` are kept as a hash's text."""

    type: type
    to_text: Callable[[Any], str]
    from_text: Callable[[str], Any]
    description: str


TEXT = Kind(str, str, str, "text as it is")
INTEGER = Kind(int, str, int, "a decimal integer")
FLAG = Kind(bool, lambda value: "1" if value else "0", lambda text: text == "1", "'1' or '0'")
TIME = Kind(datetime, rfc3339, parse_rfc3339, "an RFC 3339 UTC time, in milliseconds")
JSON_OBJECT = Kind(dict, lambda value: msgspec.json.encode(value).decode(),
                   msgspec.json.Decoder(dict[str, Any]).decode, "a JSON object")


class DailyTag(NamedTuple):
    """A daily attempt's challenge: its UTC date and variant. As text (in the hash, and
    the ``daily`` detail of an error), ``<YYYY-MM-DD>/<variant>``."""

    date: date
    variant: str

    def __str__(self) -> str:
        return f"{self.date.isoformat()}/{self.variant}"

    @classmethod
    def parse(cls, text: str) -> DailyTag:
        iso, _, variant = text.partition("/")
        if not variant:
            raise ValueError(f"a daily tag reads <YYYY-MM-DD>/<variant>, not {text!r}")
        return cls(date.fromisoformat(iso), variant)


DAILY_TAG = Kind(DailyTag, str, DailyTag.parse, "<YYYY-MM-DD>/<variant>")


class Field(NamedTuple):
    name: str
    kind: Kind
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
    Field(VARIANT, TEXT, "the variant's id"),
    Field(OPTIONS, JSON_OBJECT, "the variant's options"),
    Field(SEED, INTEGER, "the deal's seed"),
    Field(OWNER, TEXT, "the player id of the game's owner"),
    Field(RULES_VERSION, TEXT, "the rules version the game was dealt under"),
    Field(CREATED_AT, TIME, "when the game was created"),
    Field(STATUS, TEXT, "playing, won, lost or resigned (the engine's Status)"),
    Field(PUBLIC, FLAG, "anyone may watch the game"),
    Field(SEQ, INTEGER, "the seq of the latest event (0: none yet); only an append sets it"),
    Field(CREATE_ID, TEXT, "a random id of the create call, so that its retry knows itself"),
    Field(SEED_SECRET, FLAG, "the seed stays hidden until the game is over"),
    Field(DAILY, DAILY_TAG, "a daily attempt's challenge"),
    Field(READABLE_FROM, TIME, "a daily attempt: others may read it from then on"),
    Field(SEED_FROM, TIME, "a daily attempt: its seed is shown from then on"),
    Field(CLOSES_AT, TIME, "a daily attempt: commands are refused from then on"),
    Field(MOVES, INTEGER, "moves made (the game's counter)"),
    Field(FOUNDATION_CARDS, INTEGER, "cards on the foundations"),
    Field(STARTED_AT, TIME, "the first command (absent: none yet)"),
    Field(LAST_AT, TIME, "the latest command"),
    Field(FINISHED_AT, TIME, "the command that made the game won or resigned"),
    Field(HASH, TEXT, "the hash of the latest event (service/domain/eventhash.py)"),
    Field(HINTS, INTEGER, "hints taken (POST /v1/games/{id}/hint)"),
)
BY_NAME: Mapping[str, Field] = {f.name: f for f in CATALOGUE}
NAMES = frozenset(BY_NAME)

def to_text(name: str, value: object) -> str:
    """``value`` as the hash keeps the field ``name``; ValueError for a name outside the
    catalogue or a value not of the field's type."""
    field = BY_NAME.get(name)
    # Every command writes a few fields: a value of the exact type is the quick way.
    if field is not None and type(value) is field.kind.type:
        return field.kind.to_text(value)
    kind = _field(name).kind
    # A subtype is its kind's too, but for a bool: an int to Python, not to the hash.
    if not isinstance(value, kind.type) or isinstance(value, bool):
        raise ValueError(f"the meta field {name!r} holds {kind.type.__name__} "
                         f"({kind.description}), not {type(value).__name__}: {value!r}")
    return kind.to_text(value)


def to_texts(values: Mapping[str, object]) -> dict[str, str]:
    """Each of ``values`` (field name -> value) as the hash keeps it (see :func:`to_text`)."""
    return {name: to_text(name, value) for name, value in values.items()}


def from_text(name: str, raw: str | bytes) -> Any:
    """The value of the field ``name`` whose text in the hash is ``raw``; ValueError
    when ``raw`` is not of the field's kind."""
    kind = _field(name).kind
    return kind.from_text(raw.decode() if isinstance(raw, bytes) else raw)


def _field(name: str) -> Field:
    try:
        return BY_NAME[name]
    except KeyError:
        raise ValueError(f"not a meta field of the catalogue (service/store/meta.py): "
                         f"{name!r}") from None


# What ranking a daily attempt reads (Games.attempts), in this order.
ATTEMPT = (OWNER, SEQ, STATUS, MOVES, FOUNDATION_CARDS, STARTED_AT, LAST_AT, FINISHED_AT)


# -- a player's hash (keys.player), not a game's ----------------------------------
PLAYER_NAME = "name"
PLAYER_JOINED = "joined"
PLAYER_UNPLAYED = "unplayed"

PLAYER_CATALOGUE: tuple[Field, ...] = (
    Field(PLAYER_NAME, TEXT,
          "the player's name as leaderboards show it (service/domain/players.py)"),
    Field(PLAYER_JOINED, INTEGER, "when the player signed up, in seconds since the epoch "
          "(players from before it was kept have none: they count as joined long ago)"),
    Field(PLAYER_UNPLAYED, FLAG, "present until the player's first game or daily attempt: "
          "until then it is kept unplayed_player_ttl_s, not player_ttl_days"),
)


def lua_list(names: tuple[str, ...]) -> str:
    """``names`` as a Lua argument list: ``'owner', 'seq', ...``."""
    return ", ".join(f"'{name}'" for name in names)


def lua(source: str, **names: str | int) -> str:
    """A Lua script with the ``$name`` placeholders of ``source`` replaced (field names
    from here; Lua itself never uses ``$``)."""
    return Template(source).substitute(names)
