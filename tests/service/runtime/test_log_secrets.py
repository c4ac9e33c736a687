"""No log line and no file the service writes tells a hidden card, a secret seed or a token.

PROTOCOL.md: "Hidden cards never leave the server, not even through a hint, a log
line or a file on disk". A real ``python -m service`` (its embedded store, log level
DEBUG) plays games with face-down cards over REST and the WebSocket, with hints, a
daily attempt, illegal and malformed commands and bad tokens; then its whole log, and
every file in its data folder but the store's own (its append-only file is the games'
log), are searched for the token, the two secrets, the seeds of the games in play and
the cards still face down and never seen.
"""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import aiohttp

from service.engine.cards import RANK_NAMES, SUIT_NAMES
from service.store import keys
from tests.live import ServiceProcess, daily_chosen
from tests.redis_servers import sync_client
from tests.service.domain.test_hidden_information import CARD, IDS, NAME, Truth
from tests.service.helpers import Api, connect, new_command_id

TOKEN_SECRET = "log-check-token-secret-0123456789abcdef"
DAILY_SECRET = "log-check-daily-secret-0123456789abcdef"


def secrets_in(text: str, secrets: dict[str, str]) -> list[str]:
    return [what for what, secret in secrets.items() if secret in text]


CODE_OF_NAME = {name.lower(): code for code, name in (*RANK_NAMES.items(), *SUIT_NAMES.items())}


def hidden_cards_in(text: str, hidden: set[str]) -> set[str]:
    """The cards of ``hidden`` that ``text`` names, as codes ("7H") or words ("Seven of
    hearts"); the letters inside game and player ids are no cards."""
    words = IDS.sub(" ", text)
    named = {CODE_OF_NAME[rank.lower()] + CODE_OF_NAME[suit.lower()]
             for rank, suit in NAME.findall(words)}
    return (set(CARD.findall(words)) | named) & hidden


def test_the_search_finds_a_card_by_its_code_or_its_name_but_not_inside_an_id() -> None:
    hidden = {"7H", "TS", "KD"}
    assert hidden_cards_in("moved 7H; the ten of Spades; game g_KD_x", hidden) == {"7H", "TS"}


async def play(api: Api, store_url: str, token: str, variant: str, rng: random.Random,
               daily: bool = False) -> tuple[str, Truth]:
    """A game with face-down cards, played a little with legal, illegal and malformed
    commands, a hint, and a socket; returns the game as the store deals it."""
    if daily:
        day = (await api.request("GET", "/v1/daily", expect=200)).body["date"]
        created = (await api.request("POST", f"/v1/daily/{day}/{variant}/attempts", token,
                                     201)).body
    else:
        created = await api.create(token, variant)
    game_id = created["game_id"]
    with sync_client(store_url) as r:
        seed = int(r.hget(keys.game_meta(game_id), "seed"))
    truth = Truth(variant, seed, created["state"]["options"])
    # No hint in a ranked daily attempt: refused, which is logged too.
    await api.request("POST", f"/v1/games/{game_id}/hint", token, 403 if daily else 200)
    await api.request("GET", f"/v1/games/{game_id}/solution", token, 409)
    await api.command(token, game_id, {"type": "move", "from": "tableau/0", "to": "tableau/0"},
                      expect=422)
    await api.command(token, game_id, {"type": "move", "from": "nowhere", "to": "x"}, expect=400)
    socket, _ = await connect(api.session, api.base, game_id, token)
    try:
        for _ in range(6):
            legal = (await api.moves(game_id, token))["moves"]
            if not legal:
                break
            command = rng.choice(legal)
            await socket.send({"type": "command", "command_id": new_command_id(),
                               "command": command})
            reply = await socket.until(lambda m: m["type"] in ("ack", "error"))
            assert reply[-1]["type"] == "ack", reply
            truth.applied(command)
        await socket.send({"type": "command", "command_id": new_command_id(),
                           "command": {"type": "move", "from": "stock", "to": "stock"}})
        await socket.until(lambda m: m["type"] == "error")
        await socket.send(b"\xff not json")
        await socket.until(lambda m: m["type"] == "error")
    finally:
        await socket.ws.close()
    assert not truth.game.status.is_final and truth.hidden(), "nothing left hidden to look for"
    return game_id, truth


async def test_no_log_line_or_file_tells_a_hidden_card_a_secret_seed_or_a_token(
        tmp_path: Path) -> None:
    data = tmp_path / "data"
    service = ServiceProcess(None, data, SOLITAIRE_LOG_LEVEL="DEBUG",
                             SOLITAIRE_TOKEN_SECRET=TOKEN_SECRET,
                             SOLITAIRE_DAILY_SECRET=DAILY_SECRET)
    with service:
        store_url = f"unix://{data / 'redis' / 'redis.sock'}"
        rng = random.Random(11)
        async with aiohttp.ClientSession() as session:
            api = Api(session, service.url)
            _, token = await api.player("ada")
            played = [await play(api, store_url, token, variant, rng)
                      for variant in ("gilbert", "gate", "caprice")]
            await daily_chosen(service.url, timeout_s=300)
            played.append(await play(api, store_url, token, "gilbert", rng, daily=True))
            # A forged token, and a token where it does not belong (a query string).
            forged = token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB")
            await api.request("GET", "/v1/variants", forged, 401)
            await api.request("GET", f"/v1/daily?token={token}", expect=200)
            async with session.ws_connect(
                    f"{service.url}/v1/games/{played[0][0]}/ws") as ws:
                await ws.send_str('{"type": "hello", "token": "' + forged + '"}')
                assert b"unauthorized" in (await ws.receive(timeout=30)).data.encode()
        # A malformed request whose bad header holds the token.
        reader, writer = await asyncio.open_connection("127.0.0.1", service.port)
        writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                     + token.encode() + b"\x01\r\n\r\n")
        await writer.drain()
        assert b" 400 " in await reader.read(100)
        writer.close()
        await writer.wait_closed()
    log = service.log()
    assert "POST /v1/games/" in log and "malformed HTTP request" in log  # it logged them
    secrets = {"the token": token, "the token's signature": token.rsplit(".", 1)[-1],
               "a forged token": forged, "the token secret": TOKEN_SECRET,
               "the daily secret": DAILY_SECRET}
    truths = [truth for _, truth in played]
    for truth in truths:
        secrets[f"the seed {truth.seed} of a game in play"] = str(truth.seed)
    hidden = set().union(*(truth.hidden() for truth in truths))
    written: dict[str, str] = {"the log": log}
    store_files = data / "redis" / "appendonlydir"
    for path in sorted(data.rglob("*")):
        if path.is_file() and store_files not in path.parents and path != service.log_path:
            written[str(path.relative_to(data))] = path.read_text(errors="replace")
    assert "redis/server.log" in written  # the store's own log is searched too
    for name, text in written.items():
        assert not secrets_in(text, secrets), f"{name} holds {secrets_in(text, secrets)}"
        assert not hidden_cards_in(text, hidden), (
            f"{name} names face-down cards never seen: {sorted(hidden_cards_in(text, hidden))}")
