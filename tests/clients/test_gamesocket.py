"""GameSocket against a real service: live state, resume with since, resync, errors, idempotency.

Network trouble is made by a proxy between the socket and the service
(:mod:`tests.clients.proxy`): it cuts connections, refuses new ones, or loses
frames the server sent, while REST calls go straight to the service.
"""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
import pytest

from clients.python.errors import ApiError, ConnectionLost
from clients.python.gamesocket import GameSocket, StateChange
from clients.python.rest import EVENTS_PAGE, Client
from protocol import Command, Draw, GameCreated, Move, Resign

from .conftest import VARIANTS, assert_same_state, eventually
from .proxy import Proxy

FAST: dict[str, Any] = {
    "backoff_initial_s": 0.01,
    "backoff_max_s": 0.05,
    "max_reconnect_attempts": None,
}


def _pick(moves: list[Command]) -> Command:
    """A legal command, a move rather than a draw when there is one."""
    return next((m for m in moves if isinstance(m, Move)), moves[0])


def _record(sock: GameSocket) -> list[StateChange]:
    changes: list[StateChange] = []
    sock.on_change(changes.append)
    return changes


@pytest.mark.parametrize("variant", VARIANTS)
async def test_the_local_state_follows_every_command_in_every_variant(
    client: Client, variant: str
) -> None:
    game = await client.create_game(variant, seed=11)
    async with client.socket(game.game_id) as sock:
        assert sock.state == game.state
        changes = _record(sock)
        for expected in range(1, 6):
            legal = await client.moves(game.game_id)
            if sock.state.status != "playing":
                break
            seq = await sock.send(_pick(legal.moves))
            assert seq == expected == sock.state.seq
        assert_same_state(sock.state, await client.game(game.game_id))
        assert [c.diff.seq for c in changes if c.diff is not None] == list(range(1, sock.seq + 1))


async def test_a_watcher_without_a_token_sees_the_owners_commands(
    client: Client, service_url: str
) -> None:
    game = await client.create_game("shamrocks", seed=5, public=True)
    async with (
        client.socket(game.game_id) as player,
        GameSocket(service_url, game.game_id) as watcher,
    ):
        seen = watcher.changes()
        for _ in range(3):
            await player.send(_pick((await client.moves(game.game_id)).moves))
        for expected in (1, 2, 3):
            change = await anext(seen)
            assert change.diff is not None and change.diff.seq == expected
        assert watcher.state == player.state
        assert_same_state(watcher.state, await client.game(game.game_id))
        with pytest.raises(ApiError) as caught:
            await watcher.send(Draw())
        assert (caught.value.status, caught.value.code) == (401, "unauthorized")


async def test_hello_with_since_replays_the_missed_diffs_instead_of_a_snapshot(
    client: Client,
) -> None:
    game = await client.create_game("gilbert", seed=3)
    for _ in range(3):
        await client.command(game.game_id, Draw())
    sock = client.socket(game.game_id, state=game.state)  # the caller's state at seq 0
    changes = _record(sock)
    async with sock:
        assert [c.diff.seq if c.diff else None for c in changes] == [1, 2, 3]
        assert_same_state(sock.state, await client.game(game.game_id))


async def test_a_local_state_ahead_of_the_game_is_replaced_by_a_snapshot(client: Client) -> None:
    """A state whose seq the game's log does not reach (the log lost its end in a
    failover) gets 400 with details.since on hello: the socket starts again from a
    snapshot instead of failing for ever."""
    game = await client.create_game("gate", seed=6)
    await client.command(game.game_id, Draw())
    ahead = msgspec.structs.replace(game.state, seq=5)
    sock = client.socket(game.game_id, state=ahead)
    changes = _record(sock)
    async with sock:
        assert sock.seq == 1
        assert_same_state(sock.state, await client.game(game.game_id))
        assert [c.diff for c in changes] == [None]  # one snapshot, no diff
        assert await sock.send(Draw()) == 2


# --- reconnecting -------------------------------------------------------------------------


async def test_after_a_cut_the_socket_resumes_with_since(client: Client, proxy: Proxy) -> None:
    game = await client.create_game("gate", seed=4)
    async with GameSocket(proxy.url, game.game_id, client.token, **FAST) as sock:
        changes = _record(sock)
        await sock.send(_pick((await client.moves(game.game_id)).moves))
        proxy.refuse = True
        await proxy.cut()
        await eventually(lambda: not sock.connected, "the socket notices the cut")
        for _ in range(3):  # meanwhile, through REST
            await client.command(game.game_id, Draw())
        proxy.refuse = False
        await sock.wait_for_seq(4)
        assert_same_state(sock.state, await client.game(game.game_id))
        assert sock.stats.reconnects >= 1
        # Every seq arrived as a diff, once, in order: no snapshot, no gap, no duplicate.
        assert [c.diff.seq if c.diff else None for c in changes] == [1, 2, 3, 4]
        assert await sock.send(Draw()) == 5  # and it is live again


async def test_a_gap_in_seq_makes_the_socket_resync(client: Client, proxy: Proxy) -> None:
    game = await client.create_game("caprice", seed=8)
    async with GameSocket(proxy.url, game.game_id, client.token, **FAST) as sock:
        changes = _record(sock)
        proxy.drop_frames = 1
        await client.command(game.game_id, Draw())  # its diff is lost on the way
        await eventually(lambda: proxy.dropped == 1, "the proxy loses diff 1")
        await client.command(game.game_id, Draw())  # diff 2 arrives after seq 0: a gap
        await sock.wait_for_seq(2)
        assert sock.stats.resyncs == 1 and sock.stats.reconnects == 1
        assert [c.diff.seq if c.diff else None for c in changes] == [1, 2]
        assert_same_state(sock.state, await client.game(game.game_id))


async def test_a_lost_diff_is_noticed_from_its_ack(client: Client, proxy: Proxy) -> None:
    game = await client.create_game("shamrocks", seed=8)
    async with GameSocket(proxy.url, game.game_id, client.token, **FAST) as sock:
        changes = _record(sock)
        proxy.drop_frames = 1  # the diff of the next command, not its ack
        assert await sock.send(_pick((await client.moves(game.game_id)).moves)) == 1
        assert proxy.dropped == 1 and sock.stats.resyncs == 1
        assert [c.diff.seq if c.diff else None for c in changes] == [1]
        assert_same_state(sock.state, await client.game(game.game_id))


async def test_a_command_whose_ack_was_lost_is_resent_with_its_command_id(
    client: Client, proxy: Proxy
) -> None:
    game = await client.create_game("gilbert", seed=2)
    async with GameSocket(proxy.url, game.game_id, client.token, **FAST) as sock:
        proxy.drop_frames = 2  # the diff and the ack of the next command
        sending = asyncio.create_task(sock.send(Draw(), command_id="draw-once"))
        await eventually(lambda: proxy.dropped == 2, "the proxy loses the diff and the ack")
        assert not sending.done() and (await client.game(game.game_id)).seq == 1
        await proxy.cut()
        assert await sending == 1  # answered on the new connection with the first result
        assert sock.stats.commands_sent == 2  # sent twice, applied once
    events = await client.events(game.game_id)
    assert [(e.seq, e.command) for e in events] == [(1, Draw())]


async def test_a_silent_connection_is_replaced(client: Client, proxy: Proxy) -> None:
    game = await client.create_game("gilbert", seed=2)
    async with GameSocket(
        proxy.url, game.game_id, client.token, ping_interval_s=0.05, pong_timeout_s=0.1, **FAST
    ) as sock:
        proxy.refuse = True
        proxy.drop_frames = 1_000_000  # the server goes silent: no pong comes back
        await eventually(lambda: not sock.connected, "the socket drops the silent connection")
        proxy.refuse = False
        proxy.drop_frames = 0
        await eventually(lambda: sock.connected, "the socket reconnects")
        await client.command(game.game_id, Draw())
        await sock.wait_for_seq(1)
        assert sock.stats.reconnects == 1 and proxy.accepted == 2


async def test_a_socket_that_cannot_reconnect_gives_up(client: Client, proxy: Proxy) -> None:
    game = await client.create_game("gilbert", seed=2)
    sock = GameSocket(
        proxy.url,
        game.game_id,
        client.token,
        backoff_initial_s=0.01,
        backoff_max_s=0.02,
        max_reconnect_attempts=3,
    )
    await sock.connect()
    changes = sock.changes()
    proxy.refuse = True
    await proxy.cut()
    with pytest.raises(ConnectionLost, match="gave up"):
        await anext(changes)
    assert sock.closed
    with pytest.raises(ConnectionLost):
        await sock.send(Draw())
    await sock.close()


async def test_hello_since_replays_more_than_a_page(client: Client, long_game: GameCreated) -> None:
    async with client.socket(long_game.game_id, state=long_game.state) as sock:  # since=0
        assert sock.seq == EVENTS_PAGE + 5


# --- errors -----------------------------------------------------------------------------


async def test_an_illegal_move_raises_422_with_its_reason(client: Client) -> None:
    game = await client.create_game("gilbert", seed=1)
    async with client.socket(game.game_id) as sock:
        with pytest.raises(ApiError) as caught:
            await sock.send(Move(from_="tableau/0", to="tableau/5"))
        assert (caught.value.status, caught.value.code) == (422, "illegal_move")
        assert caught.value.details.get("rule") and len(caught.value.message) > 10
        assert sock.state == game.state


async def test_a_stale_expected_seq_raises_409(client: Client) -> None:
    game = await client.create_game("gate", seed=1)
    async with client.socket(game.game_id) as sock:
        await sock.send(Draw())
        with pytest.raises(ApiError) as caught:
            await sock.send(Draw(), expected_seq=0)
        assert (caught.value.status, caught.value.code) == (409, "conflict")
        assert await sock.send(Draw(), expected_seq=None) == 2  # None: no check


async def test_hello_on_an_unknown_or_private_game_raises_404(
    client: Client, other: Client, service_url: str
) -> None:
    game = await client.create_game("gilbert", seed=1)
    for sock in (
        GameSocket(service_url, "g_nope", client.token),
        GameSocket(service_url, game.game_id, other.token),
        GameSocket(service_url, game.game_id),
    ):
        with pytest.raises(ApiError) as caught:
            async with sock:  # a failed enter leaves nothing open behind it
                pass
        assert (caught.value.status, caught.value.code) == (404, "not_found")


async def test_another_player_may_watch_a_public_game_but_not_command_it(
    client: Client, other: Client
) -> None:
    game = await client.create_game("gilbert", seed=1, public=True)
    async with other.socket(game.game_id) as sock:
        with pytest.raises(ApiError) as caught:
            await sock.send(Draw())
        assert (caught.value.status, caught.value.code) == (403, "forbidden")


# --- idempotency and closing ---------------------------------------------------------------


async def test_the_same_command_id_is_applied_once(client: Client) -> None:
    game = await client.create_game("shamrocks", seed=9)
    move = _pick((await client.moves(game.game_id)).moves)
    async with client.socket(game.game_id) as sock:
        first = await sock.send(move, command_id="same")
        again = await sock.send(move, command_id="same", expected_seq=0)
        assert first == again == 1
    assert len(await client.events(game.game_id)) == 1


async def test_closing_ends_iterators_and_refuses_commands(client: Client) -> None:
    game = await client.create_game("gilbert", seed=1)
    sock = client.socket(game.game_id)
    await sock.connect()
    changes = sock.changes()
    await sock.send(Resign())
    assert (await anext(changes)).state.status == "resigned"
    await sock.close()
    assert [c async for c in changes] == []
    with pytest.raises(ConnectionLost):
        await sock.send(Draw())


async def test_a_different_event_at_a_held_seq_makes_the_socket_start_from_a_snapshot(
    client: Client,
) -> None:
    # The server's socket writer resynchronises a watcher itself when a failover rewrote
    # the log (tests/service/domain/test_event_hash.py); the SDK also checks, for a diff that
    # reaches it another way (an older server, a replay): same seq, other hash.
    import msgspec

    from clients.python.gamesocket import _Resync

    game = await client.create_game("gilbert", seed=3)
    async with client.socket(game.game_id) as sock:
        changes = _record(sock)
        seq = await sock.send(Draw())
        diff = next(c.diff for c in changes if c.diff is not None and c.diff.seq == seq)
        await sock._on_diff(diff)  # the same event again: ignored
        other = msgspec.structs.replace(diff, hash="f" * 16 if diff.hash != "f" * 16 else "0" * 16)
        with pytest.raises(_Resync) as caught:
            await sock._on_diff(other)
        assert caught.value.snapshot


# --- legal moves on the socket ---------------------------------------------------------------


@pytest.mark.parametrize("variant", VARIANTS)
async def test_a_socket_asked_for_moves_knows_the_legal_moves_after_every_diff(
    client: Client, variant: str
) -> None:
    game = await client.create_game(variant, seed=9)
    async with client.socket(game.game_id, moves=True) as sock:
        for _ in range(4):
            legal = await sock.legal_moves()
            assert legal == await client.moves(game.game_id)  # what GET would answer
            if not legal.moves:
                break
            await sock.send(_pick(legal.moves))
        assert (await sock.legal_moves()).seq == sock.seq


async def test_a_socket_not_asked_for_moves_says_so(client: Client) -> None:
    game = await client.create_game("gate", seed=9)
    async with client.socket(game.game_id) as sock:
        assert sock.legal is None
        with pytest.raises(RuntimeError, match="moves=True"):
            await sock.legal_moves()
