"""The live connection: reconnecting after the service restarts, resynchronising on a
seq gap, commands over REST while the socket is down, and watching someone's game."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from service.domain.auth import Tokens
from service.runtime.clock import Clock
from service.solver import Budget, solve_deal
from tests.live import TOKEN_SECRET, ServiceProcess
from tests.web.helpers import DESKTOP, GamePage, Service, assert_same_board, choose, expect, http

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserContext

# Drops the next diff the page's socket receives, as a lossy network would.
_DROP_NEXT_DIFF = """() => {
  const socket = window.solitaire.game.socket;
  const deliver = socket.onMessage;
  let dropped = false;
  socket.onMessage = (msg) => {
    if (!dropped && msg.type === 'diff') { dropped = true; window.droppedDiff = msg.seq; return; }
    deliver(msg);
  };
}"""


# Holds back the diffs the page's socket receives, and the moves lists that follow them,
# until window.releaseDiffs(), as a slow network would while another device moves.
_HOLD_DIFFS = """() => {
  const socket = window.solitaire.game.socket;
  const deliver = socket.onMessage;
  const held = [];
  socket.onMessage = (msg) =>
    (['diff', 'moves'].includes(msg.type) ? held.push(msg) : deliver(msg));
  window.releaseDiffs = () => { socket.onMessage = deliver; held.forEach(deliver); };
}"""


def playing(url: str, context: BrowserContext, variant: str, seed: int) -> tuple[GamePage, Service]:
    """A new player's page on a new game of ``variant`` (``seed``), and the same game as the
    service has it."""
    page = GamePage(context.new_page(), url).open()
    page.create_player()
    return page, Service(url, page.start_game(variant, seed), page.token)


def play_over_http(server: Service, count: int) -> None:
    last = None
    for i in range(count):
        last = choose(server.moves()["moves"], "draw" if i % 2 else "move", last)
        assert last is not None
        status, body = server.command(last)
        assert status == 200, body


def test_the_page_reconnects_after_the_service_restarts_and_resumes_with_since(
        service_on_redis: ServiceProcess, context: BrowserContext) -> None:
    page, server = playing(service_on_redis.url, context, "gilbert", 6)
    play_over_http(server, 2)
    page.wait_live(2)
    opened = page.page.evaluate("window.solitaire.game.socket.connections")

    service_on_redis.stop()  # the store (the suite's Redis) keeps the game
    expect(page.page.locator("#conn")).to_have_attribute("data-conn", "offline")
    service_on_redis.start()
    page.wait_live(2)
    assert page.page.evaluate("window.solitaire.game.socket.connections") > opened

    play_over_http(server, 1)  # another client's move arrives on the new socket
    page.wait_live(3)
    assert_same_board(page, server)
    move = choose(server.moves()["moves"], "move", None)
    assert move is not None
    page.perform(move)
    page.wait_live(4)
    assert_same_board(page, server)
    assert page.errors == []


def test_a_move_tried_while_the_service_is_down_is_refused_in_words_until_it_is_back(
        service_on_redis: ServiceProcess, context: BrowserContext) -> None:
    page, server = playing(service_on_redis.url, context, "gilbert", 6)
    move = choose(server.moves()["moves"], "move", None)
    assert move is not None

    service_on_redis.stop()
    expect(page.page.locator("#conn")).to_have_attribute("data-conn", "offline")
    expect(page.page.locator("#conn")).to_have_text("reconnecting…")
    page.perform(move)  # over REST, as the socket is down: it cannot be sent
    message = page.page.locator("#message")
    expect(message).to_have_attribute("data-code", "network")
    expect(message).to_contain_text("cannot be reached")

    service_on_redis.start()
    page.wait_live(0)
    expect(message).to_have_text("")  # no longer true: the page does not say it any more
    page.perform(move)
    page.wait_live(1)
    assert_same_board(page, server)
    assert page.errors == []


def test_a_gap_in_seq_makes_the_page_resynchronise(
        service: ServiceProcess, context: BrowserContext) -> None:
    page, server = playing(service.url, context, "caprice", 7)
    page.page.evaluate(_DROP_NEXT_DIFF)
    play_over_http(server, 1)  # its diff is lost: the page stays at 0 ...
    page.page.wait_for_function("window.droppedDiff === 1")
    expect(page.page.locator("#seq")).to_have_text("0")
    play_over_http(server, 1)  # ... until diff 2 shows the gap: reconnect with since=0
    page.wait_live(2)
    expect(page.page.locator("#seq")).to_have_attribute("data-resyncs", "1")
    assert_same_board(page, server)


def test_a_move_made_at_once_on_another_device_is_explained_in_a_players_words(
        service: ServiceProcess, context: BrowserContext) -> None:
    """Two devices move at once: the page's command, sent at a seq the game has left, is
    refused (409). The page says so without the protocol's words, then that the board is up
    to date once it is, and the words go once the game moves on."""
    page, server = playing(service.url, context, "gilbert", 6)
    legal = server.moves()["moves"]
    mine = choose(legal, "move", None)
    theirs = choose(legal, "draw", None)
    assert mine is not None and theirs is not None and mine != theirs
    page.page.evaluate(_HOLD_DIFFS)
    status, body = server.command(theirs, expected_seq=0)  # the other device goes first
    assert status == 200, body
    page.perform(mine)  # still at seq 0 on this page
    message = page.page.locator("#message")
    expect(message).to_have_attribute("data-code", "conflict")
    expect(message).to_have_text(
        "The game changed on another device; bringing the board up to date…")
    page.page.evaluate("window.releaseDiffs()")
    page.wait_live(1)
    expect(message).to_have_text("The game changed on another device; the board is up to date.")
    assert_same_board(page, server)
    play_over_http(server, 1)  # the game moves on: the words are old news
    page.wait_live(2)
    expect(message).to_be_empty()
    assert not page.errors


def test_a_screen_reader_hears_the_connection_lost_and_back_and_the_moves_it_missed(
        service_on_redis: ServiceProcess, context: BrowserContext) -> None:
    page, server = playing(service_on_redis.url, context, "gilbert", 6)
    announced = expect(page.page.locator("#announce"))

    service_on_redis.stop()
    announced.to_contain_text("The connection to the server is lost: reconnecting")
    service_on_redis.start()
    page.wait_live(0)
    announced.to_contain_text("Reconnected.")

    # Moves that reach the page only in a replay (here after a gap) are told too.
    page.page.evaluate(_DROP_NEXT_DIFF)
    move = choose(server.moves()["moves"], "move", None)
    assert move is not None
    assert server.command(move)[0] == 200  # its diff is lost ...
    assert server.command({"type": "draw"})[0] == 200  # ... and this one shows the gap
    page.wait_live(2)
    announced.to_contain_text(f"moved from {move['from'].replace('/', ' ')}")
    announced.to_contain_text("Drew")
    assert_same_board(page, server)
    assert page.errors == []


def test_commands_go_over_rest_while_the_socket_is_down_and_the_socket_resumes_after(
        service: ServiceProcess, context: BrowserContext) -> None:
    page, server = playing(service.url, context, "shamrocks", 3)
    page.page.evaluate("window.solitaire.game.socket.stop()")
    expect(page.page.locator("#conn")).to_have_attribute("data-conn", "closed")
    move = choose(server.moves()["moves"], "move", None)
    assert move is not None
    page.perform(move)
    expect(page.page.locator("#seq")).to_have_text("1")
    assert_same_board(page, server)

    play_over_http(server, 1)  # missed while the socket is down
    page.page.evaluate("window.solitaire.game.socket.start()")
    page.wait_live(2)
    assert_same_board(page, server)
    assert page.page.evaluate("window.solitaire.game.resyncs") == 0


def test_another_player_watches_a_public_game_but_cannot_see_a_private_one(
        service: ServiceProcess, context: BrowserContext, browser: Browser) -> None:
    owner = GamePage(context.new_page(), service.url).open()
    owner.create_player("Owner")
    owner.page.check("#public")
    public_id = owner.start_game("gate", 14)
    server = Service(service.url, public_id, owner.token)

    other_context = browser.new_context(viewport=DESKTOP)
    try:
        watcher = GamePage(other_context.new_page(), service.url).open()
        watcher.create_player("Watcher")
        watcher.open(f"#g={public_id}")
        expect(watcher.page.locator("#seq")).to_have_text("0")
        expect(watcher.page.locator("#banner")).to_contain_text("watching")
        expect(watcher.page.locator("#undo")).to_be_hidden()
        move = choose(server.moves()["moves"], "move", None)
        assert move is not None
        owner.perform(move)
        expect(watcher.page.locator("#seq")).to_have_text("1")
        assert_same_board(watcher, server)

        status, created = http("POST", f"{service.url}/v1/games", owner.token, {"variant": "gate"})
        assert status == 201
        watcher.open(f"#g={created['game_id']}")
        expect(watcher.page.locator("#message")).to_have_attribute("data-code", "not_found")
        expect(watcher.page.locator("#conn")).to_have_attribute("data-conn", "refused")
    finally:
        other_context.close()


def test_a_link_to_a_game_that_is_gone_says_so_and_offers_nothing_to_press(
        service: ServiceProcess, context: BrowserContext) -> None:
    """A recent game that has expired (404), or a mistyped link: the socket is refused."""
    page = GamePage(context.new_page(), service.url).open()
    page.create_player()
    page.open("#g=g_neverdealt")
    expect(page.page.locator("#conn")).to_have_attribute("data-conn", "refused")
    expect(page.page.locator("#message")).to_have_attribute("data-code", "not_found")
    expect(page.page.locator("#title")).to_have_text("No game to show")
    for control in ("#hint", "#undo", "#resign"):  # they act on a game there is not
        expect(page.page.locator(control)).to_be_hidden()
    page.page.click("#back")
    expect(page.page.locator("#new-game")).to_be_visible()
    assert page.errors == []


def test_a_watcher_is_told_the_end_of_someone_elses_game_in_words_that_fit(
        service: ServiceProcess, context: BrowserContext) -> None:
    """The owner's page says "You won!"; a watcher did not win, and cannot undo a loss."""
    # A winning line of deal 2, decided by the node budget (the time cap is a backstop).
    solved = solve_deal("gilbert", {}, seed=2, budget=Budget(max_nodes=300_000, max_seconds=600))
    assert solved.result == "won"
    line = solved.commands
    status, owner = http("POST", f"{service.url}/v1/players", body={"name": "Owner"})
    assert status == 201, owner
    status, created = http("POST", f"{service.url}/v1/games", owner["token"],
                           {"variant": "gilbert", "seed": 2, "public": True})
    assert status == 201, created
    server = Service(service.url, created["game_id"], owner["token"])
    for command in line[:-1]:
        assert server.command(command)[0] == 200

    watcher = GamePage(context.new_page(), service.url).open()
    watcher.create_player("Watcher")
    watcher.open(f"#g={created['game_id']}")
    watcher.wait_live(len(line) - 1)
    assert server.command(line[-1])[0] == 200
    watcher.wait_live(len(line))
    banner = watcher.page.locator("#banner")
    expect(banner).to_contain_text("The game is won")
    expect(banner).to_contain_text("You are watching this game.")
    expect(banner).not_to_contain_text("You won")
    expect(watcher.page.locator("#announce")).to_contain_text("The game is won")
    expect(watcher.page.locator("#announce")).not_to_contain_text("You won")
    assert watcher.errors == []


# Sends the next command, then drops the connection before any answer can come back.
_DROP_AFTER_NEXT_COMMAND = """() => {
  const socket = window.solitaire.game.socket;
  const send = socket.send.bind(socket);
  let done = false;
  socket.send = (msg) => {
    const sent = send(msg);
    if (!done && msg.type === 'command') { done = true; socket.ws.close(); }
    return sent;
  };
}"""


def test_a_command_unanswered_when_the_socket_drops_is_sent_again_and_applied_once(
        service: ServiceProcess, context: BrowserContext) -> None:
    page, server = playing(service.url, context, "gilbert", 6)
    page.page.evaluate(_DROP_AFTER_NEXT_COMMAND)
    page.click_pile("stock")
    page.wait_live(1)
    expect(page.page.locator("#message")).to_have_text("")
    assert page.page.evaluate("window.solitaire.game.socket.connections") == 2
    # the command was sent again on the new socket: wait until that is answered too
    page.page.wait_for_function("window.solitaire.game.session.pending.size === 0")
    state = assert_same_board(page, server)
    assert state["seq"] == 1 and state["stats"]["moves"] == 1


# The page's kept state claims seq 4 of a game the server has at 1: as after a failover
# that lost acknowledged commands (durability "memory"), or a state kept from another store.
_CLAIM_A_FUTURE = """([gameId, seq]) => {
  const key = 'solitaire.state.' + gameId;
  const state = JSON.parse(sessionStorage.getItem(key));
  state.seq = seq;
  sessionStorage.setItem(key, JSON.stringify(state));
}"""


def test_a_kept_state_beyond_the_games_seq_is_thrown_away_for_a_snapshot(
        service: ServiceProcess, context: BrowserContext) -> None:
    """The server refuses a hello whose since it never reached (bad_request, details.since)
    and keeps the socket open for a correct hello: the page asks for a snapshot."""
    page = GamePage(context.new_page(), service.url).open()
    page.create_player()
    game_id = page.start_game("gilbert", 6)
    server = Service(service.url, game_id, page.token)
    page.click_pile("stock")
    page.wait_live(1)
    page.page.evaluate(_CLAIM_A_FUTURE, [game_id, 4])
    page.page.reload()
    page.wait_live(1)
    assert_same_board(page, server)
    expect(page.page.locator("#message")).to_have_text("")  # nothing for the player to fix
    move = choose(server.moves()["moves"], "move", None)
    assert move is not None
    page.perform(move)
    page.wait_live(2)
    assert_same_board(page, server)
    assert page.errors == []


# The player's kept token replaced by another of the same player, signed as the server
# signs them, that expires within seconds: the socket opens with it, then it expires.
SHORT_TOKEN_S = 8
_USE_TOKEN = """token => {
  const me = JSON.parse(localStorage.getItem('solitaire.player'));
  me.token = token;
  localStorage.setItem('solitaire.player', JSON.stringify(me));
  return me.player_id;
}"""


def test_a_token_that_expires_during_a_game_starts_again_from_the_welcome_then_the_lobby(
        service: ServiceProcess, context: BrowserContext) -> None:
    """A command sent on the socket after its token expired gets an error unauthorized and
    the socket is closed with 1008: the page starts again, as a 401 over REST makes it; the
    new player lands in the lobby, not in a game it may not open."""
    page = GamePage(context.new_page(), service.url).open()
    page.create_player("Brief")
    game_id = page.start_game("gilbert", 6)
    player_id = page.page.evaluate(_USE_TOKEN, "")
    short = Tokens(TOKEN_SECRET.encode(), SHORT_TOKEN_S, Clock()).issue(player_id)
    page.page.evaluate(_USE_TOKEN, short)
    page.page.reload()
    page.wait_live(0)
    assert page.game_id == game_id
    while http("GET", f"{service.url}/v1/variants", short)[0] != 401:
        time.sleep(0.25)  # until the server's clock says the token has expired
    page.click_pile("stock")
    expect(page.page.locator("#welcome")).to_be_visible()
    expect(page.page.locator("#welcome-message")).to_contain_text("expired")
    page.create_player("Brief again")
    expect(page.page.locator("#new-game")).to_be_visible()
    assert page.page.evaluate("location.hash") in ("", "#")
    assert page.errors == []
