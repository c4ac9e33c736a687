"""Players: a name per player id, as shown on leaderboards (the token carries the id)."""

from __future__ import annotations

import re
import unicodedata

from service.errors import ApiError
from service.store import keys
from service.store.connection import RedisConn

NAME_MAX = 32
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
        if not 1 <= len(clean) <= NAME_MAX:
            raise ApiError("bad_request", f"a player name has 1 to {NAME_MAX} characters, got {len(clean)}",
                           {"field": "name"})
        if not _NAME.match(clean) or "  " in clean:
            raise ApiError("bad_request", "a player name holds letters, digits, single spaces and . ' - _ "
                           "and starts with a letter or digit", {"field": "name"})
        return clean

    async def set_name(self, player_id: str, name: str) -> None:
        await self.redis.execute("HSET", keys.player(player_id), "name", name)

    async def names(self, player_ids: list[str]) -> dict[str, str]:
        out: dict[str, str] = {}
        for pid in dict.fromkeys(player_ids):
            raw = await self.redis.execute("HGET", keys.player(pid), "name")
            out[pid] = raw.decode() if isinstance(raw, bytes) else (raw or pid)
        return out
