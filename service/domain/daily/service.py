"""Daily challenges: attempts, the leaderboard, and ranking what is left when a day ends.

- An attempt is an ordinary game of its player dealt from the day's seed,
  private, readable by others only once the day is over (``readable_from``),
  its seed shown only then (``seed_from``), refusing commands from then on
  (``closes_at``: GameService answers 403 "the challenge is over").
- Its entry is written by the server, from the game, when the game becomes
  final (won or resigned): :meth:`DailyService.on_final` is a GameService hook.
- When the day is over, the attempts still open (lost ones included) are
  ranked as they stand, once, by whichever instance first takes the day's lock:
  lazily on the first leaderboard read after the day, and by a background task
  that looks at yesterday's challenges every ``poll_s``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import secrets
import time
from dataclasses import dataclass
from datetime import timedelta

import msgspec

from protocol.daily import Leaderboard, LeaderboardEntry, MyEntry
from service.domain.cursors import decode_cursor, encode_cursor
from service.domain.daily.challenge import Day, epoch_ms, today
from service.domain.daily.deals import DailyDeals
from service.domain.daily.periodic import Periodic
from service.domain.daily.ranking import Standing, board_entry
from service.domain.deadline import time_left
from service.domain.errors import ApiError
from service.domain.games import DailyTags, GameService, Loaded, new_game_id
from service.engine import VARIANTS, Game, Status
from service.runtime.clock import Clock
from service.settings import Settings
from service.store.daily import (
    KEY_LEN,
    PLAYER_ID_PATTERN,
    DailyStore,
    Page,
    Profile,
    Record,
    Row,
)
from service.store.errors import GameExists, StoreError
from service.store.meta import DailyTag

log = logging.getLogger("service.domain.daily")

AROUND = 2  # neighbours above and below the caller's own entry
# Names a worker read for a page are reused this long: the top page's players are on
# nearly every read, and reading their names each time cost the store 2.5 times the
# page itself (benchmarks/README.md). A rename shows at once on the worker that took it.
NAME_CACHE_S = 1.0
NAME_CACHE_MAX = 50_000
ANSWER_MARGIN_S = 0.25  # of the request's deadline, kept to answer once a wait gives up


@dataclass
class DailyService:
    settings: Settings
    clock: Clock
    games: GameService
    store: DailyStore
    deals: DailyDeals
    poll_s: float = 30.0
    lock_ms: int = 120_000
    wait_for_ranking_s: float = 20.0
    batch: int = 500

    def __post_init__(self) -> None:
        self._closed: set[tuple[str, str]] = set()  # (date, variant) known ranked
        self._job = Periodic("daily-ranking", "ranking yesterday's attempts", self._rank_yesterday,
                             self.poll_s, log)
        self._deals: dict[tuple[str, str], Game] = {}
        self._names: dict[str, tuple[str | None, float]] = {}  # player -> (name, until)

    # --- challenges ----------------------------------------------------------------
    async def seed(self, day: Day, variant: str) -> int:
        """The seed of the day's chosen deal (503 while it is being chosen)."""
        return (await self.deals.require(day, variant))[0]

    def keep_s(self, day: Day) -> int:
        return day.keep_s(self.clock.now(), self.settings.daily_keep_days)

    async def _deal(self, day: Day, variant: str) -> Game:
        key = (day.iso, variant)
        game = self._deals.get(key)
        if game is None:
            seed = await self.seed(day, variant)
            if len(self._deals) > 64:
                self._deals.clear()
            game = self._deals[key] = Game.deal(variant, seed)
        return game

    # --- attempts ------------------------------------------------------------------
    async def start_attempt(self, player: str, day: Day, variant: str) -> Loaded:
        """The player's new attempt at today's challenge of ``variant``.

        Raises ApiError: 403 (not today's challenge, or its day is being ranked),
        409 (no ranked attempt left).
        """
        now = self.clock.now()
        current = today(now)
        if day.date != current:
            when = "is over" if day.date < current else "has not begun"
            raise ApiError("forbidden", f"the challenge of {day.iso} {when}: only today's "
                           f"({current.isoformat()}) can be attempted",
                           {"date": day.iso, "today": current.isoformat()})
        seed = await self.seed(day, variant)  # before reserving: 503 while the deal is being chosen
        game_id = new_game_id()
        state, used = await self.store.reserve(day.iso, variant, player, game_id,
                                               self.settings.daily_attempts, self.keep_s(day))
        if state == "over":
            raise ApiError("forbidden", f"the challenge of {day.iso} is over", {"date": day.iso})
        if state == "used":
            n = self.settings.daily_attempts
            attempts = "attempt" if n == 1 else "attempts"
            raise ApiError("conflict", f"you have used your {n} ranked {attempts} "
                           f"at the {variant} challenge of {day.iso}",
                           {"date": day.iso, "variant": variant, "game_ids": used})
        ends = day.ends_at
        try:
            return await self.games.create(
                player, variant, seed, None, public=False, seed_secret=True,
                game_id=game_id,
                daily=DailyTags(DailyTag(day.date, variant), readable_from=ends, seed_from=ends,
                                closes_at=ends),
            )
        except (StoreError, GameExists):
            # Give the attempt back; if even that fails, the day's end skips a game that does
            # not exist.
            with contextlib.suppress(StoreError):
                await self.store.unreserve(day.iso, variant, player, game_id)
            raise

    async def on_final(self, loaded: Loaded) -> None:
        """GameService hook: a daily attempt that became won or resigned takes its place."""
        tag = loaded.meta.daily
        if tag is None or not loaded.game.status.is_final:
            return  # not an attempt, or lost (undo may still save it): ranked at the day's end
        day, variant = Day(tag.date), tag.variant
        profiles = await self.store.profiles([loaded.owner])
        standing = Standing.from_stats(loaded.owner, loaded.game_id, loaded.seq,
                                       loaded.game.status.value, self.games.stats(loaded),
                                       epoch_ms(day.ends_at),
                                       new_player=_new_player(profiles[loaded.owner], day),
                                       pace_floor_ms=self.settings.machine_pace_ms_per_move)
        await self.store.record(day.iso, variant, [_record(standing)], self.keep_s(day))

    # --- the day's end ---------------------------------------------------------------
    async def ensure_ranked(self, day: Day, variant: str) -> None:
        """Rank the open attempts of a day that is over, once across every instance."""
        key = (day.iso, variant)
        if key in self._closed:
            return
        keep = self.keep_s(day)
        if keep <= 0:
            return  # its data is gone
        token = secrets.token_hex(8)
        start = await self.store.begin_close(day.iso, variant, token, self.lock_ms, keep)
        if start.state == "busy":
            await self._wait_for_ranking(day, variant)
        elif start.state == "mine":
            started = time.perf_counter()
            await self._rank_open(day, variant, start.open_attempts, keep)
            await self.store.finish_close(day.iso, variant, token, keep)
            log.info("ranked %d open attempts of the %s challenge of %s in %.3f s",
                     len(start.open_attempts), variant, day.iso, time.perf_counter() - started)
        self._closed.add(key)

    async def _wait_for_ranking(self, day: Day, variant: str) -> None:
        """Wait for another instance to rank the day: ``wait_for_ranking_s`` at most, and no
        longer than the request's deadline allows (less a moment to answer), so that the
        client hears what it waited for, not that the store was slow (it was not)."""
        wait = self.wait_for_ranking_s
        left = time_left()
        if left is not None:
            wait = min(wait, left - ANSWER_MARGIN_S)
        give_up = time.monotonic() + wait
        while not await self.store.is_closed(day.iso, variant):
            now = time.monotonic()
            if now >= give_up:
                raise ApiError("unavailable",
                               f"the {variant} challenge of {day.iso} is being ranked (its day "
                               "is over, and its attempts still open are being ranked as they "
                               "stand): try again shortly",
                               {"date": day.iso, "variant": variant}, retry_after_s=1)
            await asyncio.sleep(min(0.05, give_up - now))

    async def _rank_open(self, day: Day, variant: str, attempts: dict[str, str], keep: int) -> None:
        if not attempts:
            # Nothing to rank, and no deal needed: a day whose deals this store never chose
            # (a fresh instance's yesterday) has none to give, and its board is just empty.
            return
        deal = await self._deal(day, variant)
        end_ms = epoch_ms(day.ends_at)
        ids = list(attempts)
        # A few batches in flight: reads of one overlap writes of another.
        limit = asyncio.Semaphore(4)

        async def rank(chunk: list[str]) -> None:
            async with limit:
                await self._rank_chunk(day, variant, chunk, keep, deal, end_ms)

        await asyncio.gather(*(rank(ids[i:i + self.batch]) for i in range(0, len(ids), self.batch)))

    async def _rank_chunk(self, day: Day, variant: str, chunk: list[str], keep: int, deal: Game,
                          end_ms: int) -> None:
        final = [s.value for s in Status if s.is_final]
        attempts = await self.games.store.attempts(chunk, keep, final)
        profiles = await self.store.profiles(sorted({a.owner for a in attempts if a is not None}))
        records = []
        for gid, a in zip(chunk, attempts, strict=True):
            if a is None:
                continue  # its creation failed after the reservation: nothing to rank
            fc = a.foundation_cards if a.foundation_cards is not None else deal.foundation_cards
            standing = Standing.of(player_id=a.owner, game_id=gid, seq=a.seq, status=a.status,
                                   foundation_cards=fc, moves=a.moves, started_at=a.started_at,
                                   last_at=a.last_at, finished_at=a.finished_at, day_end_ms=end_ms,
                                   new_player=_new_player(profiles[a.owner], day),
                                   pace_floor_ms=self.settings.machine_pace_ms_per_move)
            records.append(_record(standing))
        await self.store.record(day.iso, variant, records, keep, batch=self.batch)

    async def _rank_yesterday(self) -> None:
        yesterday = Day(today(self.clock.now()) - timedelta(days=1))
        for variant in VARIANTS:
            await self.ensure_ranked(yesterday, variant)

    def start(self) -> None:
        self._job.start()

    async def stop(self) -> None:
        await self._job.stop()

    # --- the leaderboard --------------------------------------------------------------
    async def leaderboard(self, day: Day, variant: str, after: bytes | None, limit: int,
                          me: str | None) -> Leaderboard:
        """The ``Leaderboard`` body of PROTOCOL.md: two round trips, the page, then the
        names of the players on it (at most ``limit`` + 5), read as they are now: the
        board keeps player ids, so a rename costs one write and shows everywhere at once.
        """
        over = day.is_over(self.clock.now())
        page = await self._page(day, variant, after, limit, me, over)
        names = await self._names_of(page.player_ids())

        def entry(row: Row) -> LeaderboardEntry:
            return board_entry(row, names.get(row.player_id))

        mine = None
        if page.me is not None:
            mine = MyEntry(**msgspec.structs.asdict(entry(page.me)),
                           around=[entry(row) for row in page.around])
        cursor = encode_cursor(page.last) if page.more and page.last else None
        return Leaderboard(entries=[entry(row) for row in page.entries], next_cursor=cursor,
                           me=mine)

    async def _names_of(self, player_ids: list[str]) -> dict[str, str | None]:
        """The players' names, from the last ``NAME_CACHE_S`` or in one call to the store."""
        now = self.clock.time()
        out: dict[str, str | None] = {}
        missing = []
        for pid in player_ids:
            kept = self._names.get(pid)
            if kept is not None and kept[1] > now:
                out[pid] = kept[0]
            else:
                missing.append(pid)
        if missing:
            if len(self._names) > NAME_CACHE_MAX:
                self._names.clear()
            for pid, profile in (await self.store.profiles(missing)).items():
                out[pid] = profile.name
                self._names[pid] = (profile.name, now + NAME_CACHE_S)
        return out

    def renamed(self, player_id: str) -> None:
        """The player has a new name: this worker reads it again (the others within
        ``NAME_CACHE_S``)."""
        self._names.pop(player_id, None)

    async def _page(self, day: Day, variant: str, after: bytes | None, limit: int, me: str | None,
                    over: bool) -> Page:
        page = await self.store.page(day.iso, variant, after, limit, me, AROUND,
                                     require_closed=over)
        if page is None:
            await self.ensure_ranked(day, variant)
            page = await self.store.page(day.iso, variant, after, limit, me, AROUND,
                                         require_closed=False)
            assert page is not None
        return page


def _new_player(profile: Profile, day: Day) -> bool:
    """Signed up after the day began (a player from before ``joined`` was kept: no)."""
    return profile.joined_s is not None and profile.joined_s >= day.starts_at.timestamp()


def _record(s: Standing) -> Record:
    return Record(s.player_id, s.game_id, s.seq, s.sort_key(), s.entry_json())


# --- cursors -------------------------------------------------------------------------
# A cursor is ``<sort key><player id>`` of the last entry read (base64url): the next
# page starts just after it, wherever entries were added meanwhile.

_MEMBER = re.compile(rb"^[0-9]{%d}%s$" % (KEY_LEN, PLAYER_ID_PATTERN.encode()))


def decode_board_cursor(cursor: str) -> bytes:
    """The ``<sort key><player id>`` a cursor names, or 400."""
    return decode_cursor(cursor, _MEMBER, "a previous page")
