"""Helpers for the daily-challenge tests: a small REST client and a winning line.

The winning line is found with the engine from the challenge's seed, which a
test can derive because it knows the server secret; the players then send it
over REST like any client would. 2026-11-13's Gate deal is won by the greedy
search below in about 155 moves (checked when the line is built).
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import aiohttp

from service.domain.daily.challenge import Seeds
from service.engine import VARIANTS, Draw, Game, Status
from service.store.connection import RedisConn
from service.store.solver import ChosenDeal, SolverStore
from tests.commands import to_json
from tests.live import settings_for_test

SECRET = "test-secret-0123456789abcdef"
DAILY_SECRET = "test-daily-secret-0123456789abcdef"  # tests.live.settings_for_test's
DAY = date(2026, 11, 13)
VARIANT = "gate"
MORNING = datetime(2026, 11, 13, 9, tzinfo=UTC)
NEXT_DAY = datetime(2026, 11, 14, 0, 0, 5, tzinfo=UTC)


# The deals the service chose for a date, kept across tests: every test starts on a
# flushed store, and choosing again would cost each test most of a minute of solving.
# Written back before the service starts, they are what it would have kept itself.
_CHOSEN: dict[str, dict[str, ChosenDeal]] = {}


async def restore_chosen(url: str, tmp_path: Path) -> None:
    """Write back the deals an earlier test's service chose (none before the first)."""
    redis = RedisConn(settings_for_test(url, tmp_path), url)
    try:
        store = SolverStore(redis)
        for day, deals in _CHOSEN.items():
            for variant, deal in deals.items():
                await store.keep_chosen(day, variant, deal, 40 * 86400)
    finally:
        await redis.aclose()


async def chosen_many(store: SolverStore, date: str,
                      variants: Sequence[str]) -> dict[str, ChosenDeal | None]:
    """Each variant's chosen deal of ``date`` (separate slots in a cluster: one call each)."""
    found = await asyncio.gather(*(store.chosen(date, v) for v in variants))
    return dict(zip(variants, found, strict=True))


async def remember_chosen(url: str, tmp_path: Path) -> None:
    """Keep the deals of DAY and the next day, once the service has chosen them all."""
    redis = RedisConn(settings_for_test(url, tmp_path), url)
    try:
        for day in (DAY, DAY + timedelta(days=1)):
            found = await chosen_many(SolverStore(redis), day.isoformat(), tuple(VARIANTS))
            if all(found.values()):
                _CHOSEN[day.isoformat()] = found  # type: ignore[assignment]
    finally:
        await redis.aclose()


class Api:
    """Calls the service like a thin client does; checks the status it expects."""

    def __init__(self, session: aiohttp.ClientSession, base: str) -> None:
        self.session = session
        self.base = base

    async def call(self, method: str, path: str, token: str | None = None, expect: int = 200,
                   **kwargs: Any) -> Any:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        async with self.session.request(method, self.base + path, headers=headers, **kwargs) as r:
            body = await r.json(content_type=None)
            assert r.status == expect, (method, path, r.status, body)
            return body

    async def chosen(self, day: date = DAY, timeout_s: float = 900.0) -> Any:
        """The day's challenges, once the service has chosen them (503 until then)."""
        deadline = asyncio.get_running_loop().time() + timeout_s
        while True:
            async with self.session.get(
                self.base + "/v1/daily", params={"date": day.isoformat()}
            ) as r:
                body = await r.json(content_type=None)
                if r.status == 200:
                    return body
                assert r.status == 503 and r.headers.get("Retry-After"), (r.status, body)
            assert asyncio.get_running_loop().time() < deadline, (
                f"the deals of {day} were never chosen"
            )
            await asyncio.sleep(0.2)

    async def player(self, name: str) -> tuple[str, str]:
        body = await self.call("POST", "/v1/players", json={"name": name}, expect=201)
        return body["player_id"], body["token"]

    async def attempt(
        self, token: str, day: date = DAY, variant: str = VARIANT, expect: int = 201
    ) -> Any:
        return await self.call(
            "POST", f"/v1/daily/{day.isoformat()}/{variant}/attempts", token, expect
        )

    async def command(
        self, token: str, game_id: str, command: dict[str, Any], expect: int = 200
    ) -> Any:
        return await self.call("POST", f"/v1/games/{game_id}/commands", token, expect,
                               json={"command": command})

    async def board(self, token: str | None = None, day: date = DAY, variant: str = VARIANT,
                    expect: int = 200, **query: Any) -> Any:
        return await self.call(
            "GET",
            f"/v1/daily/{day.isoformat()}/{variant}/leaderboard",
            token,
            expect,
            params={k: str(v) for k, v in query.items()},
        )

    async def whole_board(
        self, token: str | None = None, limit: int = 7, day: date = DAY
    ) -> list[Any]:
        entries: list[Any] = []
        cursor = None
        while True:
            query: dict[str, Any] = {"limit": limit}
            if cursor:
                query["cursor"] = cursor
            page = await self.board(token, day=day, **query)
            entries += page["entries"]
            cursor = page["next_cursor"]
            if cursor is None:
                return entries


def _key(game: Game) -> tuple[Any, ...]:
    return tuple((pid, pile.down, tuple(pile.up)) for pid, pile in sorted(game.piles.items()))


@functools.cache
def winning_line(day: date = DAY, variant: str = VARIANT) -> tuple[dict[str, Any], ...]:
    """A greedy line that wins the day's deal: foundation moves first, never back to a seen
    position."""
    game = Game.deal(variant, Seeds(DAILY_SECRET.encode()).seed(day, variant))
    seen = {_key(game)}
    line = []
    for _ in range(1000):
        if game.status is not Status.PLAYING:
            break

        def score(m: Any) -> int:
            if isinstance(m, Draw):
                return 0
            if m.from_.startswith("foundation"):
                return -1
            return 10 if m.to.startswith("foundation") else 1

        for move in sorted(game.legal_moves(), key=score, reverse=True):
            if score(move) < 0:
                continue
            nxt = game.apply(move)[0]
            if _key(nxt) in seen and not isinstance(move, Draw):
                continue
            game = nxt
            seen.add(_key(game))
            line.append(to_json(move))
            break
        else:
            break
    assert game.status is Status.WON, (
        f"the greedy line no longer wins {variant} {day}: pick another date"
    )
    return tuple(line)


def spec_order(entry: dict[str, Any]) -> tuple[Any, ...]:
    """PROTOCOL.md's ranking: won first, then more foundation cards, then shorter duration,
    then fewer moves, then earlier finish (a finish the day's end caught counts as that end);
    marked entries (a new player's, a machine-paced one) after every unmarked one (issue 23)."""
    return (entry["new_player"] or entry["machine_paced"], not entry["won"],
            -entry["foundation_cards"], entry["duration_ms"], entry["moves"],
            entry["finished_at"] or "9999", entry["player_id"])
