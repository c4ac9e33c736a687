"""Issue 13, point 2: events carry a chained hash, and a log rewritten under a
live socket (rolled back by one event, as a failover does, then written again at
the reused seq) resynchronises the watcher instead of leaving it on a state the
server no longer has."""

from __future__ import annotations

from pathlib import Path

import aiohttp

from protocol.codec import encode
from service.domain.eventhash import START, event_hash
from service.store import keys
from tests.live import settings_for_test
from tests.redis_servers import sync_client
from tests.service.helpers import (
    Api,
    apply,
    connect,
    game_state,
    new_command_id,
    running_app,
    same_state,
)


async def test_every_event_carries_a_hash_chained_from_the_deal(
    redis_url: str, tmp_path: Path
) -> None:
    async with running_app(settings_for_test(redis_url, tmp_path)) as (base, _), \
            aiohttp.ClientSession() as session:
        api = Api(session, base)
        _, token = await api.player()
        game_id = (await api.create(token, "gilbert", seed=21))["game_id"]
        sock, _ = await connect(session, base, game_id, token)
        replies = [await api.command(token, game_id, {"type": "draw"}) for _ in range(4)]
        ws_diffs = await sock.until(lambda m: m["type"] == "diff" and m["seq"] == 4)
        events = await api.events(game_id, token)
        previous = START
        for event, reply in zip(events, replies, strict=True):
            expected = event_hash(previous, event["seq"], encode(event["command"]), event["at"])
            assert event["hash"] == expected
            assert reply.body["diff"]["hash"] == expected
            previous = expected
        assert [d["hash"] for d in ws_diffs if d["type"] == "diff"] == [e["hash"] for e in events]
        assert len({e["hash"] for e in events}) == 4
        await sock.ws.close()


async def test_a_log_rolled_back_and_rewritten_at_a_seq_a_watcher_holds_resynchronises_it(
        redis_url: str, tmp_path: Path) -> None:
    async with running_app(settings_for_test(redis_url, tmp_path)) as (base, _), \
            aiohttp.ClientSession() as session:
        api = Api(session, base)
        _, token = await api.player()
        created = await api.create(token, "gilbert", seed=21, public=True)
        game_id = created["game_id"]
        watcher, hello = await connect(session, base, game_id, None)
        state = game_state(hello[0]["state"])
        first = await api.command(token, game_id, {"type": "draw"}, command_id=new_command_id())
        lost_id = new_command_id()
        await api.command(token, game_id, {"type": "draw"}, command_id=lost_id)
        for m in await watcher.until(lambda m: m["type"] == "diff" and m["seq"] == 2):
            if m["type"] == "diff":
                state = apply(state, m)
        assert state.seq == 2 and state.status == "playing"

        # A failover to a replica that had not received event 2: the log is back at seq 1.
        with sync_client(redis_url) as r:
            assert r.rpop(keys.game_events(game_id)) is not None
            r.hset(keys.game_meta(game_id), mapping={"seq": 1, "hash": first.body["diff"]["hash"]})
            r.hdel(keys.game_commands(game_id), lost_id)
        # The next command is stored at the reused seq 2, a different event.
        again = await api.command(token, game_id, {"type": "resign"})
        assert again.body["seq"] == 2

        messages = await watcher.until(lambda m: m["type"] == "snapshot")
        snapshot = messages[-1]
        assert snapshot["seq"] == 2 and snapshot["state"]["status"] == "resigned"
        server = await api.state(game_id, token)
        assert server["status"] == "resigned"
        assert same_state(game_state(snapshot["state"]), game_state(server))
        await watcher.ws.close()
