"""Players: a name per player id, as shown on leaderboards (the token carries the id), the
count of their open games, and the index of all their games (``keys.player_games``)."""

from __future__ import annotations

import re
import unicodedata
from datetime import UTC, datetime

from protocol.fields import PLAYER_NAME_MAX
from service.domain.errors import ApiError
from service.domain.name_scripts import mixed_scripts
from service.store import keys
from service.store import meta as mf
from service.store.connection import RedisConn, Script

# Letters (any script), digits, spaces and a little punctuation; no control or format characters.
_NAME = re.compile(r"^[\w][\w .'\-]*$", re.UNICODE)


# Default_Ignorable_Code_Point (Unicode's DerivedCoreProperties.txt), and the Hangul
# and Braille blanks that render as nothing: a name of them looks like no name.
_INVISIBLE = (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160), (0x17B4, 0x17B5),
    (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0x2800, 0x2800),
    (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8),
    (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF),
)


def is_invisible(char: str) -> bool:
    """A default-ignorable or filler code point, or any format or control character."""
    code = ord(char)
    if unicodedata.category(char) in ("Cf", "Cc", "Co", "Cn", "Cs"):
        return True
    return any(lo <= code <= hi for lo, hi in _INVISIBLE)


class Players:
    def __init__(self, redis: RedisConn) -> None:
        self.redis = redis

    @staticmethod
    def validate_name(name: str) -> str:
        """The name, normalised (NFKC, spaces trimmed), or 400 saying what is wrong.

        NFKC folds the look-alike forms (fullwidth ``ａｄｍｉｎ`` is ``admin``), so two
        names that read the same are the same string wherever names are compared or
        shown. Invisible characters (default-ignorable and filler code points such as
        U+3164) are refused, and at least one character must be visible."""
        clean = unicodedata.normalize("NFKC", name).strip()
        invisible = next((c for c in name + clean if is_invisible(c)), None)  # as sent, then folded
        if invisible is not None:
            raise ApiError("bad_request", f"a player name may not hold the invisible character "
                           f"U+{ord(invisible):04X} ({unicodedata.name(invisible, 'unnamed')})",
                           {"field": "name"})
        if not 1 <= len(clean) <= PLAYER_NAME_MAX:
            raise ApiError("bad_request", f"a player name has 1 to {PLAYER_NAME_MAX} characters, "
                           f"got {len(clean)}", {"field": "name"})
        mixed = mixed_scripts(clean)
        if mixed is not None:
            first, other, letter = mixed
            raise ApiError("bad_request", f"a player name is written in one script: this one "
                           f"mixes {first.title()} and {other.title()} letters ({letter!r} is "
                           f"U+{ord(letter):04X} {unicodedata.name(letter)}), which lets one "
                           f"name pass for another", {"field": "name"})
        if not _NAME.match(clean) or "  " in clean:
            raise ApiError("bad_request", "a player name holds letters, digits, single spaces "
                           "and . ' - _ and starts with a letter or digit", {"field": "name"})
        return clean

    async def sign_up(self, player_id: str, name: str, joined_s: float, ttl_s: int) -> None:
        """A new player: kept ``ttl_s`` (``unplayed_player_ttl_s``) until its first game."""
        await self.redis.run(_SIGN_UP, [keys.player(player_id)], [name, int(joined_s), ttl_s])

    async def set_name(self, player_id: str, name: str, ttl_s: int, unplayed_ttl_s: int) -> None:
        """A new name; the player is kept ``ttl_s`` more, or ``unplayed_ttl_s`` while it has
        not played (a player whose record is gone comes back as one that has not)."""
        await self.redis.run(_SET_NAME, [keys.player(player_id)], [name, ttl_s, unplayed_ttl_s])

    async def touch(self, player_id: str, ttl_s: int) -> None:
        """A game of the player (the first ends its short unplayed lifetime): keep it
        ``ttl_s`` more."""
        await self.redis.run(_TOUCH, [keys.player(player_id)], [ttl_s])

    async def open_game(self, player_id: str, game_id: str, now_s: float, expires_s: float,
                        cap: int) -> None:
        """Count a new open game of the player, or 429 when it has ``cap`` open already
        (Retry-After: when the first of them would expire untouched)."""
        ok, first = await self.redis.run(_OPEN_GAME, [keys.player_open_games(player_id)],
                                         [game_id, int(now_s), int(expires_s), cap])
        if not ok:
            retry = max(1, int(first) - int(now_s))
            raise ApiError("rate_limited",
                           f"you have {cap} open games, the limit: win or resign one "
                           f"(POST /v1/games/{{id}}/commands with resign), "
                           f"or wait until one expires (in {retry} s)",
                           {"limit": "open_games_per_player", "open_games": cap},
                           retry_after_s=retry)

    async def get(self, player_id: str) -> tuple[str, datetime | None] | None:
        """The player's name and when they signed up (None: made before that was kept), or
        None when the player is not kept (never made, or expired)."""
        name, joined = await self.redis.execute("HMGET", keys.player(player_id),
                                                mf.PLAYER_NAME, mf.PLAYER_JOINED)
        if name is None:
            return None
        return (name.decode(),
                None if joined is None else datetime.fromtimestamp(int(joined), UTC))

    async def closed_game(self, player_id: str, game_id: str, variant: str = "",
                          kept_s: int = 0) -> None:
        """The game is over: it no longer counts as open, and the index of the player's games
        lives at least as long as the game is kept from now (``kept_s``)."""
        await self.redis.run(_CLOSED_GAME, [keys.player_open_games(player_id),
                                            keys.player_games(player_id),
                                            keys.player_games(player_id, variant or None)],
                             [game_id, kept_s])

    # --- the index of a player's games (keys.player_games) ---------------------------
    async def add_game(self, player_id: str, game_id: str, variant: str, created_ms: int,
                       kept_s: int) -> None:
        """Index a new game of the player; the index is kept ``kept_s`` more (the player's
        own lifetime: it is renewed with each new game, as the player is)."""
        await self.redis.run(_ADD_GAME, [keys.player_games(player_id),
                                         keys.player_games(player_id, variant)],
                             [created_ms, f"{game_id} {variant}", kept_s])

    async def games_page(self, player_id: str, variant: str | None, after: bytes | None,
                         count: int) -> list[bytes]:
        """At most ``count`` members of the player's index (of ``variant`` only, when given),
        newest first, from just after the member ``after`` (None: from the newest): one
        lex range, read in O(log n + count)."""
        top = b"+" if after is None else b"(" + after
        members: list[bytes] = await self.redis.execute(
            "ZRANGE", keys.player_games(player_id, variant), top, "-", "BYLEX", "REV",
            "LIMIT", 0, count)
        return members

    async def forget_games(self, player_id: str, members: list[bytes]) -> None:
        """Take members whose games expired out of the player's indexes."""
        if not members:
            return
        calls: list[tuple[object, ...]] = [("ZREM", keys.player_games(player_id), *members)]
        calls += [("ZREM", keys.player_games(player_id, parse_member(m)[2]), m) for m in members]
        await self.redis.pipeline(calls)


# A game's member in its player's indexes: ``<ms, 13 digits> <game_id> <variant>``, the
# milliseconds those of its making (moved on past the newest member when not after it), so
# that lex order is the order of making (13 digits hold every millisecond until 2286).
MEMBER = re.compile(rb"^[0-9]{13} [A-Za-z0-9_-]{1,64} [a-z][a-z0-9_]{0,31}$")


def parse_member(member: bytes) -> tuple[int, str, str]:
    """(created_ms, game_id, variant) of an index member."""
    ms, game_id, variant = member.decode().split(" ")
    return int(ms), game_id, variant


# KEYS: the player's index, its variant's index.  ARGV: created_ms, "<game_id> <variant>",
# kept_s. A game made in the same millisecond as the newest (or, by a clock behind another
# instance's, before it) sorts just after it: the index is in the order the games were made.
_ADD_GAME = Script("""
local ms = tonumber(ARGV[1])
local newest = redis.call('ZRANGE', KEYS[1], -1, -1)[1]
if newest then
  local top = tonumber(string.sub(newest, 1, 13))
  if top and top >= ms then ms = top + 1 end
end
local member = string.format('%013d', ms) .. ' ' .. ARGV[2]
for i = 1, 2 do
  redis.call('ZADD', KEYS[i], 0, member)
  redis.call('EXPIRE', KEYS[i], ARGV[3])
end
return 1
""")

# KEYS: the player's open games, their index, its variant's index.  ARGV: game_id, kept_s.
# EXPIRE GT only lengthens (a key with no TTL is kept for ever already).
_CLOSED_GAME = Script("""
redis.call('ZREM', KEYS[1], ARGV[1])
if tonumber(ARGV[2]) > 0 then
  redis.call('EXPIRE', KEYS[2], ARGV[2], 'GT')
  redis.call('EXPIRE', KEYS[3], ARGV[2], 'GT')
end
return 1
""")

# KEYS: the player. ARGV: name, joined (s), ttl_s.
_SIGN_UP = Script(mf.lua("""
redis.call('HSET', KEYS[1], '$name', ARGV[1], '$joined', ARGV[2], '$unplayed', '1')
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[3]))
return 1
""", name=mf.PLAYER_NAME, joined=mf.PLAYER_JOINED, unplayed=mf.PLAYER_UNPLAYED))

# KEYS: the player. ARGV: name, ttl_s, unplayed ttl_s. A rename does not lengthen the life
# of a player that never played (nor bring back one that is gone for longer than that).
_SET_NAME = Script(mf.lua("""
if redis.call('EXISTS', KEYS[1]) == 0 then redis.call('HSET', KEYS[1], '$unplayed', '1') end
redis.call('HSET', KEYS[1], '$name', ARGV[1])
if redis.call('HEXISTS', KEYS[1], '$unplayed') == 1 then
  redis.call('EXPIRE', KEYS[1], tonumber(ARGV[3]))
else
  redis.call('EXPIRE', KEYS[1], tonumber(ARGV[2]))
end
return 1
""", name=mf.PLAYER_NAME, unplayed=mf.PLAYER_UNPLAYED))

# KEYS: the player. ARGV: ttl_s. A game of the player: it has played, keep it ttl_s more.
_TOUCH = Script(mf.lua("""
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HDEL', KEYS[1], '$unplayed')
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[1]))
return 1
""", unplayed=mf.PLAYER_UNPLAYED))

# KEYS: the player's open games. ARGV: game_id, now_s, expires_s, cap.
# A game whose score has passed has expired untouched, or was played since and lives
# on uncounted (the score is its expiry when it was opened; commands do not update
# it, to cost them nothing): the cap errs towards letting a player in. The set itself
# lives as long as its last game.
_OPEN_GAME = Script("""
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[2])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) then
  local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return {0, tonumber(first[2])}
end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
redis.call('EXPIRE', KEYS[1], math.max(1, math.floor(tonumber(last[2]) - tonumber(ARGV[2])) + 1))
return {1, 0}
""")
