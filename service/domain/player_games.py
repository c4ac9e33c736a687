"""`GET /v1/players/me/games`: a page of the caller's games, newest first.

The player's index (``keys.player_games``: one sorted set for all their games, one per
variant) gives the page's game ids in O(log n + page) from the cursor; each game's meta
then says what the summary shows, and is the truth for the status filter (a status
changes with play, in the game's slot, so no index of the player's follows it). With a
status filter a request examines at most ``PLAYER_GAMES_SCAN_MAX`` games: a page may then
hold fewer than ``limit`` games, even none, and still have a ``next_cursor``.

A game that expired leaves its member in the index: the listing that meets it takes it
out (unless it is a minute old or less: the game may be being made). A cursor is the
member of the last game examined (base64url): the next page starts just after it,
whatever games were made meanwhile.
"""

from __future__ import annotations

from typing import Any

import msgspec

from protocol.fields import rfc3339
from protocol.rest import PLAYER_GAMES_SCAN_MAX, GameSummary, PlayerGames, PlayerGamesQuery
from service.domain.cursors import decode_cursor, encode_cursor
from service.domain.errors import to_api_error
from service.domain.players import MEMBER, Players, parse_member
from service.engine import UnknownVariant, get_variant
from service.store import meta as mf
from service.store.games import Games

# What a summary reads of each game's meta.
_FIELDS = (mf.OWNER, mf.VARIANT, mf.OPTIONS, mf.STATUS, mf.SEQ, mf.PUBLIC, mf.CREATED_AT,
           mf.LAST_AT, mf.DAILY)


def decode_game_cursor(cursor: str) -> bytes:
    """The index member a cursor names, or 400."""
    return decode_cursor(cursor, MEMBER, "a previous page of GET /v1/players/me/games")


# A member is written before its game (so that no game is ever unlisted): a game not there
# yet may be being made. Only a member older than this is taken for an expired game's.
_MADE_WITHIN_MS = 60_000


async def list_games(players: Players, games: Games, player: str,
                     query: PlayerGamesQuery, now_ms: int) -> PlayerGames:
    """One page of ``player``'s games as ``query`` asks (``now_ms``: the time now)."""
    if query.variant is not None:
        try:
            get_variant(query.variant)
        except UnknownVariant as exc:
            err = to_api_error(exc)
            assert err is not None
            err.details["field"] = "variant"
            raise err from None
    after = decode_game_cursor(query.cursor) if query.cursor is not None else None
    limit = query.limit
    # Without a status filter every kept game shows: one more than the page says whether
    # another follows. With one, windows of the index until the page is full or the scan
    # bound is reached.
    window = limit + 1 if query.status is msgspec.UNSET else min(PLAYER_GAMES_SCAN_MAX, limit * 4)
    found: list[GameSummary] = []
    examined = 0
    while True:
        asked = min(window, PLAYER_GAMES_SCAN_MAX - examined + 1)
        members = await players.games_page(player, query.variant, after, asked)
        metas = await games.metas([parse_member(m)[1] for m in members], _FIELDS)
        gone = [m for m, meta in zip(members, metas, strict=True)
                if (meta is None and parse_member(m)[0] < now_ms - _MADE_WITHIN_MS)
                or (meta is not None and meta[mf.OWNER] != player)]
        await players.forget_games(player, gone)
        for member, meta in zip(members, metas, strict=True):
            if len(found) == limit or examined == PLAYER_GAMES_SCAN_MAX:
                return PlayerGames(games=found, next_cursor=encode_cursor(after or member))
            examined += 1
            after = member
            if meta is None or meta[mf.OWNER] != player:
                continue
            if query.status is msgspec.UNSET or meta[mf.STATUS] == query.status:
                found.append(_summary(parse_member(member)[1], meta))
        if len(members) < asked:
            return PlayerGames(games=found, next_cursor=None)  # the end of the index


def _summary(game_id: str, meta: dict[str, Any]) -> GameSummary:
    created, daily = meta[mf.CREATED_AT], meta[mf.DAILY]
    return GameSummary(
        game_id=game_id, variant=meta[mf.VARIANT], options=meta[mf.OPTIONS] or {},
        status=meta[mf.STATUS], seq=meta[mf.SEQ], public=bool(meta[mf.PUBLIC]),
        created_at=rfc3339(created), updated_at=rfc3339(meta[mf.LAST_AT] or created),
        daily=daily.date.isoformat() if daily else msgspec.UNSET)
