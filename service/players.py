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


class Players:
    def __init__(self, redis: RedisConn) -> None:
        self.redis = redis

    @staticmethod
    def validate_name(name: str) -> str:
        """The name, normalised (NFC, spaces trimmed), or 400 saying what is wrong."""
        clean = unicodedata.normalize("NFC", name).strip()
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
