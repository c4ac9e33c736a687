"""Hidden information never leaves the server (PROTOCOL.md "Conventions").

Random games in every variant, played with random legal and illegal commands
through REST and the WebSocket, watched by other sockets. Every byte the
service sends is checked against the engine's real game, replayed from the
seed read from the store itself: no card appears that has not been face up at
some point up to then (a face-down card may show again once it was seen, and
with two decks a card's twin counts as seen), and no server-chosen seed of a
game that is not won or resigned appears anywhere.
"""

from __future__ import annotations

import json
import random
import re
from typing import Any

import pytest

from service.engine import Game
from service.engine.cards import RANK_NAMES, SUIT_NAMES
from service.engine.rules import foundation_next
from service.store import keys
from tests.commands import from_json
from tests.redis_servers import sync_client
from tests.service.helpers import CONFIGS, Api, Socket, connect, new_command_id

CARD = re.compile(r"(?<![A-Za-z0-9])([A2-9TJQK][CDHS])(?![A-Za-z0-9])")
NAME = re.compile(r"\b(" + "|".join(RANK_NAMES.values()) + r") of ("
                  + "|".join(SUIT_NAMES.values()) + r")\b", re.IGNORECASE)
_RANK_OF = {v.lower(): k for k, v in RANK_NAMES.items()}
_SUIT_OF = {v: k for k, v in SUIT_NAMES.items()}
IDS = re.compile(r"\b[gp]_[A-Za-z0-9_-]+")  # game and player ids inside messages
ID_FIELDS = {"game_id", "owner", "player_id", "token", "command_id", "name"}

GAMES_PER_CONFIG = 4
STEPS_PER_GAME = 40


def cards_in(payload: bytes) -> tuple[set[str], set[str]]:
    """The cards a payload names: in card fields (``up``, ``cards``, ``card``), and in
    the words of a message (``"the Seven of hearts"``, ``"7H"``)."""
    fields: set[str] = set()
    words: set[str] = set()

    def walk(value: Any, key: str | None) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, k)
        elif isinstance(value, list):
            for v in value:
                walk(v, key)
        elif isinstance(value, str) and key not in ID_FIELDS:
            if CARD.fullmatch(value):
                fields.add(value)
                return
            text = IDS.sub(" ", value)
            words.update(CARD.findall(text))
            for rank, suit in NAME.findall(text):
                words.add(_RANK_OF[rank.lower()] + _SUIT_OF[suit.lower()])

    walk(json.loads(payload), None)
    return fields, words


def wanted(game: Game) -> set[str]:
    """The card each foundation takes next: public knowledge, whereever that card is."""
    out = {foundation_next(spec, game.piles[spec.id]) for spec in game.variant.foundations}
    return {c for c in out if c is not None}


def face_up(game: Game) -> set[str]:
    return {c for pile in game.piles.values() for c in pile.up}


class Truth:
    """The real game, replayed by the test from the stored seed, and what was ever shown."""

    def __init__(self, variant: str, seed: int, options: dict[str, Any]) -> None:
        self.seed = seed
        self.game = Game.deal(variant, seed, options)
        self.shown = [face_up(self.game)]  # shown[s]: every card face up at some seq <= s
        self.checked = 0
        self.cards_seen_in_payloads = 0
        self.hidden_max = len(self.hidden())

    @property
    def seq(self) -> int:
        return len(self.shown) - 1

    def applied(self, command: dict[str, Any]) -> None:
        self.game = self.game.apply(from_json(command))[0]
        self.shown.append(self.shown[-1] | face_up(self.game))
        self.hidden_max = max(self.hidden_max, len(self.hidden()))

    def hidden(self) -> set[str]:
        """The face-down cards never seen (by their code: a seen twin counts as seen)."""
        return {c for pile in self.game.piles.values() for c in pile.down} - self.shown[-1]

    def check(self, payload: bytes, seq: int | None = None, what: str = "") -> None:
        """``payload`` was sent when the game was at ``seq`` (now, by default)."""
        at = self.seq if seq is None else seq
        fields, words = cards_in(payload)
        # A message may say which card a foundation wants next; it says nothing of where it is.
        leaked = (fields - self.shown[at]) | (words - self.shown[at] - wanted(self.game))
        assert not leaked, f"{what}: {sorted(leaked)} never shown by seq {at} in {payload[:400]!r}"
        if not self.game.status.is_final:
            assert str(self.seed).encode() not in payload, (
                f"{what}: the secret seed in {payload[:400]!r}")
        self.checked += 1
        self.cards_seen_in_payloads += len(fields) + len(words)


@pytest.fixture
def base(live_base: str) -> str:
    return live_base


def random_move(rng: random.Random, piles: list[str]) -> dict[str, Any]:
    """A move that is most often illegal: any pile to any pile (or "foundation"), any count."""
    source = rng.choice([*piles, "stock"])
    target = rng.choice([*piles, "foundation", "stock", "waste"])
    move: dict[str, Any] = {"type": "move", "from": source, "to": target}
    if rng.random() < 0.4:
        move["count"] = rng.randint(1, 4)
    return move


async def play_one(api: Api, redis_url: str, rng: random.Random, variant: str,
                   options: dict[str, Any], token: str, other: str) -> Truth:
    created = await api.create(token, variant, options=options or None, public=rng.random() < 0.7)
    game_id = created["game_id"]
    with sync_client(redis_url) as r:
        seed = int(r.hget(keys.game_meta(game_id), "seed"))
    truth = Truth(variant, seed, created["state"]["options"])
    truth.check(api.received[-1], what="create")
    piles = list(created["state"]["piles"])
    public = created["state"]["public"]
    watchers: list[tuple[Socket, list[dict[str, Any]]]] = []
    if public:
        watchers.append(await connect(api.session, api.base, game_id))
        watchers.append(await connect(api.session, api.base, game_id, other))
    owner, _ = await connect(api.session, api.base, game_id, token)
    for sock, _hello in [*watchers, (owner, [])]:
        for raw in sock.received:
            truth.check(raw, what="hello")
    owner.received.clear()

    async def rest(method: str, path: str, who: str | None = token, **kwargs: Any) -> Any:
        reply = await api.request(method, path, who, **kwargs)
        assert reply.status < 500, reply.raw
        truth.check(reply.raw, what=f"{method} {path}")
        return reply

    try:
        for _step in range(STEPS_PER_GAME):
            moves = (await rest("GET", f"/v1/games/{game_id}/moves")).body
            roll = rng.random()
            if roll < 0.5 and moves["moves"]:
                command = rng.choice(moves["moves"])
            elif roll < 0.6:
                command = {"type": "undo"}
            elif roll < 0.65:
                command = {"type": "draw"}
            elif roll < 0.67:
                command = {"type": "resign"}
            elif roll < 0.9:
                command = random_move(rng, piles)
            else:
                who = rng.choice([None, other, token])
                for path in ("", "/moves", "/events?after=0"):
                    await rest("GET", f"/v1/games/{game_id}{path}", who)
                await rest("POST", f"/v1/games/{game_id}/commands", other,
                           json={"command": {"type": "draw"}})
                continue
            if rng.random() < 0.5:
                expected_seq = truth.seq if rng.random() < 0.5 else None
                reply = await api.command(token, game_id, command, command_id=new_command_id(),
                                          expected_seq=expected_seq, expect=None)
                assert reply.status in (200, 422), reply.raw
                if reply.status == 200:
                    truth.applied(reply.body["diff"]["command"])
                truth.check(reply.raw, what=f"command {command}")
            else:
                cid = await owner.command(command)
                got = await owner.until(lambda m, cid=cid: m.get("command_id") == cid)
                answer = got[-1]
                assert answer["type"] in ("ack", "error"), answer
                if answer["type"] == "ack":
                    diff = next(m for m in got if m["type"] == "diff" and m["seq"] == answer["seq"])
                    truth.applied(diff["command"])
                else:
                    assert answer["error"]["code"] == "illegal_move", answer
                for raw in owner.received:
                    message = json.loads(raw)
                    seq = message.get("seq") if message["type"] == "diff" else None
                    truth.check(raw, seq, "socket")
                owner.received.clear()
        # What the log says, and what the state says, once more at the end.
        await rest("GET", f"/v1/games/{game_id}/events")
        state = (await rest("GET", f"/v1/games/{game_id}")).body
        assert state["seq"] == truth.seq
        assert state["piles"] == truth.game.public_piles()  # the replay is the real game
        for sock, _hello in watchers:
            if truth.seq:
                await sock.until(lambda m: m["type"] == "diff" and m["seq"] == truth.seq)
            for raw in sock.received:
                message = json.loads(raw)
                synced = message["type"] in ("diff", "snapshot", "synced")
                seq = message.get("seq") if synced else None
                truth.check(raw, seq, "watcher")
    finally:
        for sock, _ in watchers:
            await sock.ws.close()
        await owner.ws.close()
    return truth


@pytest.mark.parametrize(("variant", "options"), CONFIGS,
                         ids=[v + ("+1" if o else "") for v, o in CONFIGS])
async def test_no_byte_sent_reveals_an_unseen_card_or_a_secret_seed(
        api: Api, redis_url: str, variant: str, options: dict[str, Any]) -> None:
    rng = random.Random(f"hidden-{variant}-{options}")
    _, token = await api.player("owner")
    _, other = await api.player("other")
    truths = [await play_one(api, redis_url, rng, variant, options, token, other)
              for _ in range(GAMES_PER_CONFIG)]
    commands = sum(t.seq for t in truths)
    print(f"{variant} {options}: {commands} commands applied, "
          f"{sum(t.checked for t in truths)} payloads checked, "
          f"{sum(t.cards_seen_in_payloads for t in truths)} card mentions")
    assert commands >= 10
    assert sum(t.cards_seen_in_payloads for t in truths) > 100  # the check looked at real cards
    # Shamrocks is dealt all face up: there is nothing to hide but the seed
    if variant != "shamrocks":
        assert max(t.hidden_max for t in truths) > 10  # and there was something to hide


def test_the_card_finder_finds_codes_and_names_but_not_ids() -> None:
    payload = json.dumps({"game_id": "g_7H-QS_abc", "piles": {"t": {"up": ["7H", "TD"]}},
                          "error": {"message": "the Queen of spades cannot go on the King of "
                                                "hearts (g_xx-2C-yy)"},
                          "token": "v1.AS.KD"}).encode()
    assert cards_in(payload) == ({"7H", "TD"}, {"QS", "KH"})


def test_the_check_catches_an_unseen_card_and_the_secret_seed() -> None:
    truth = Truth("gilbert", 123456789012345, {})
    down = truth.game.piles["tableau/6"].down[0]
    assert down not in truth.shown[0]
    for leak in ({"piles": {"tableau/6": {"down": 5, "up": [down]}}},
                 {"error": {"message": f"the {down} is under there"}},
                 {"seed": 123456789012345}):
        with pytest.raises(AssertionError):
            truth.check(json.dumps(leak).encode())
    truth.check(json.dumps({"up": sorted(truth.shown[0])}).encode())
