"""Hidden information, more cases (PROTOCOL.md "Conventions": no face-down card the player
has not seen, no order of unseen stock cards, no secret seed of a game in play).

tests/service/domain/test_hidden_information.py plays random games in every variant through
REST and the WebSocket and checks every byte sent with its ``Truth`` (the real game,
replayed from the stored seed). This file reuses that check on what random play
rarely reaches:

- a flip then an undo (the card goes face down again, stays known), then play on,
  seen by the owner's socket, a watcher, a watcher that joins later with ``since``
  and one with a snapshot, and by every read endpoint, in every variant;
- every illegal move that points at face-down cards: every pile, every count up to
  past its face-down cards, to every pile, and from the stock where that is not
  allowed: no error message names a hidden card;
- many short random games per variant, Hypothesis choosing the commands (legal,
  undo, illegal, the other player's), every answer checked;
- a daily attempt: its seed is in no byte, even after it is resigned, until the day
  is over.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.app import Context
from service.engine import RESIGN, Game
from service.store import keys
from tests.commands import legal_commands, to_json
from tests.live import daily_chosen, settings_for_test
from tests.redis_servers import sync_client
from tests.service.domain.test_hidden_information import Truth
from tests.service.helpers import CONFIGS, Api, Socket, connect, new_command_id, running_app


class Seen:
    """A game in play and every byte sent about it, checked against the real game."""

    def __init__(
        self, api: Api, redis_url: str, token: str, other: str, created: dict[str, Any]
    ) -> None:
        self.api, self.token, self.other = api, token, other
        self.game_id = created["game_id"]
        with sync_client(redis_url) as r:
            seed = int(r.hget(keys.game_meta(self.game_id), "seed"))
        state = created["state"]
        self.truth = Truth(state["variant"], seed, state["options"])
        self.piles = list(state["piles"])
        self.sockets: list[Socket] = []
        self.last: dict[int, int] = {}  # the last seq each socket has

    def __repr__(self) -> str:
        return f"Seen({self.game_id})"

    async def rest(self, method: str, path: str, who: str | None = "owner", check: bool = True,
                   **kwargs: Any) -> Any:
        token = self.token if who == "owner" else who
        reply = await self.api.request(method, path, token, **kwargs)
        assert reply.status < 500, reply.raw
        if check:
            self.truth.check(reply.raw, what=f"{method} {path}")
        return reply

    async def command(self, command: dict[str, Any]) -> bool:
        reply = await self.rest("POST", f"/v1/games/{self.game_id}/commands", check=False, json={
            "command": command, "command_id": new_command_id()})
        if reply.status == 200:
            self.truth.applied(reply.body["diff"]["command"])
        self.truth.check(reply.raw, what=f"the answer to {command}")
        assert reply.status in (200, 400, 409, 422), reply.raw
        return bool(reply.status == 200)

    async def read_everything(self) -> None:
        for who in ("owner", None, self.other):
            for path in ("", "/moves", "/events", "/events?after=0"):
                await self.rest("GET", f"/v1/games/{self.game_id}{path}", who)

    async def watch(self, token: str | None = None, since: int | None = None) -> Socket:
        sock, hello = await connect(self.api.session, self.api.base, self.game_id, token, since)
        self.last[id(sock)] = hello[-1]["seq"]
        self.sockets.append(sock)
        for raw in sock.received:
            self.truth.check(raw, what="hello")
        sock.received.clear()
        return sock

    async def check_sockets(self) -> None:
        """Every socket has every diff up to now; every byte they got was sendable when sent."""
        for sock in self.sockets:
            if self.last[id(sock)] < self.truth.seq:
                await sock.until(lambda m: m.get("type") == "diff" and m["seq"] >= self.truth.seq)
            for raw in sock.received:
                m = json.loads(raw)
                if m["type"] == "diff":
                    assert m["seq"] == self.last[id(sock)] + 1
                    self.last[id(sock)] = m["seq"]
                self.truth.check(raw, m.get("seq") if m["type"] == "diff" else None, "socket")
            sock.received.clear()

    async def close(self) -> None:
        for sock in self.sockets:
            await sock.ws.close()


@pytest.fixture
async def live(redis_url: str, tmp_path: Path) -> AsyncIterator[tuple[Api, Context, str, str]]:
    async with running_app(settings_for_test(redis_url, tmp_path)) as (base, ctx), \
            aiohttp.ClientSession() as session:
        api = Api(session, base)
        _, token = await api.player("owner")
        _, other = await api.player("other")
        yield api, ctx, token, other


def flipping_moves(game: Game) -> list[dict[str, Any]]:
    """The legal commands that turn a face-down card up (or deal one from the stock)."""
    out = []
    for command in legal_commands(game):
        if command == RESIGN:
            continue
        _, diff = game.apply(command)
        if any(
            op["op"] == "flip" or (op["op"] == "push" and op["pile"] == "waste") for op in diff.ops
        ):
            out.append(to_json(command))
    return out


@pytest.mark.parametrize(
    ("variant", "options"), CONFIGS, ids=[v + ("+1" if o else "") for v, o in CONFIGS]
)
async def test_a_flip_undone_and_played_again_reveals_only_what_was_seen(
    live: tuple[Api, Context, str, str], redis_url: str, variant: str, options: dict[str, Any],
) -> None:
    api, _, token, other = live
    # A secret seed.
    created = await api.create(token, variant, options=options or None, public=True)
    seen = Seen(api, redis_url, token, other, created)
    await seen.watch()
    await seen.watch(other)
    await seen.watch(token)
    undos = 0
    try:
        for _round in range(12):
            candidates = flipping_moves(seen.truth.game)
            if not candidates:
                candidates = [to_json(c) for c in seen.truth.game.legal_moves()]
            if not candidates:
                break
            assert await seen.command(candidates[0])
            await seen.read_everything()
            if seen.truth.game.can_undo:
                assert await seen.command({"type": "undo"})
                undos += 1
                await seen.read_everything()
                # The same card again, and a late watcher with since and one with a snapshot.
                assert await seen.command(candidates[0])
                await seen.watch(since=max(0, seen.truth.seq - 3))
                await seen.watch()
            await seen.check_sockets()
        assert undos >= 3, f"only {undos} undos in {variant}"
        await seen.read_everything()
        await seen.check_sockets()
    finally:
        await seen.close()


@pytest.mark.parametrize("variant", ["gilbert", "gate", "caprice"])
async def test_no_refusal_of_a_move_names_a_face_down_card(
    live: tuple[Api, Context, str, str], redis_url: str, variant: str
) -> None:
    """Every pile, every count up to past its face-down cards, onto every pile (and the
    word "foundation"), and moves from the stock: refused (or applied), never telling."""
    api, _, token, other = live
    created = await api.create(token, variant, public=True)
    seen = Seen(api, redis_url, token, other, created)
    try:
        tried = 0
        for _ in range(3):  # at the deal, and after a few commands
            piles = seen.truth.game.piles
            for source in seen.piles:
                up, depth = len(piles[source].up), len(piles[source].down) + len(piles[source].up)
                # Up to just past the face-up cards, then into and past the face-down ones.
                for count in sorted(
                    {*range(1, up + 3), depth, depth + 1, (up + depth) // 2 + 1} - {0}
                ):
                    for target in [*seen.piles, "foundation"]:
                        if source == target or (count > 1 and target.startswith("foundation")):
                            continue
                        reply = await api.command(
                            token,
                            seen.game_id,
                            {"type": "move", "from": source, "to": target, "count": count},
                            expected_seq=seen.truth.seq,
                            expect=None,
                        )
                        tried += 1
                        if reply.status == 200:
                            seen.truth.applied(reply.body["diff"]["command"])
                        seen.truth.check(reply.raw, what=f"{source}->{target} x{count}")
            for command in seen.truth.game.legal_moves()[:2]:
                await seen.command(to_json(command))
            await seen.command({"type": "draw"})
        assert tried > 300
    finally:
        await seen.close()


CHOICES = st.lists(
    st.tuples(
        st.sampled_from(
            ["legal", "legal", "legal", "undo", "draw", "illegal", "other", "read", "resign"]
        ),
        st.integers(0, 1000),
        st.integers(0, 1000),
    ),
    min_size=5,
    max_size=40,
)


@settings(max_examples=12, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(config=st.sampled_from(CONFIGS), choices=CHOICES)
async def test_random_games_chosen_by_hypothesis_reveal_nothing_unseen(
        live: tuple[Api, Context, str, str], redis_url: str, config: tuple[str, dict[str, Any]],
        choices: list[tuple[str, int, int]]) -> None:
    api, _, token, other = live
    api.received.clear()
    variant, options = config
    created = await api.create(token, variant, options=options or None, public=True)
    seen = Seen(api, redis_url, token, other, created)
    await seen.watch()
    try:
        for kind, a, b in choices:
            game = seen.truth.game
            if kind == "legal" and game.legal_moves():
                moves = game.legal_moves()
                await seen.command(to_json(moves[a % len(moves)]))
            elif kind in ("undo", "draw", "resign"):
                await seen.command({"type": kind})
            elif kind == "illegal":
                await seen.command({"type": "move", "from": seen.piles[a % len(seen.piles)],
                                    "to": [*seen.piles, "foundation"][b % (len(seen.piles) + 1)],
                                    "count": 1 + b % 5})
            elif kind == "other":
                reply = await seen.rest("POST", f"/v1/games/{seen.game_id}/commands", other,
                                        json={"command": {"type": "undo"}})
                assert reply.status == 403
            else:
                await seen.read_everything()
        await seen.read_everything()
        await seen.check_sockets()
    finally:
        await seen.close()


async def test_a_daily_attempts_seed_is_in_no_byte_before_the_day_is_over(
        live: tuple[Api, Context, str, str], redis_url: str) -> None:
    api, _, token, other = live
    today = datetime.now(UTC).date().isoformat()
    await daily_chosen(api.base)  # attempts are a 503 until the day's deals are chosen
    attempt = await api.request("POST", f"/v1/daily/{today}/gilbert/attempts", token)
    if attempt.status == 404 and "no such endpoint" in attempt.error["message"]:
        pytest.skip(
            "the daily endpoints are not there yet (POST /v1/daily/{date}/{variant}/attempts)"
        )
    assert attempt.status == 201, attempt.raw
    game_id = attempt.body["game_id"]
    with sync_client(redis_url) as r:
        seed = str(int(r.hget(keys.game_meta(game_id), "seed"))).encode()
    sock, _ = await connect(api.session, api.base, game_id, token)
    try:
        for command in ({"type": "draw"}, {"type": "undo"}, {"type": "draw"}, {"type": "resign"}):
            await sock.command(command)
            await sock.until(lambda m: m["type"] in ("ack", "error"))
        for path in (
            f"/v1/games/{game_id}",
            f"/v1/games/{game_id}/moves",
            f"/v1/games/{game_id}/events",
            f"/v1/daily?date={today}",
            f"/v1/daily/{today}/gilbert/leaderboard",
        ):
            for who in (token, other, None):
                await api.request("GET", path, who)
        await api.command(token, game_id, {"type": "draw"}, expect=422)  # over, and still secret
    finally:
        await sock.ws.close()
    sent = [*api.received, *sock.received]
    assert (await api.state(game_id, token))["status"] == "resigned"
    assert not [raw for raw in sent if seed in raw], (
        "the daily seed was sent before its day is over"
    )
