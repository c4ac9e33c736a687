"""The lobby: the first visit, the daily challenge and its leaderboard, recent games;
and the client's diff applier (state.js)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from protocol.fields import PLAYER_NAME_MAX
from service.engine.game import MAX_SEED
from tests.live import DAILY_SOLVE_NODES, ServiceProcess
from tests.web.helpers import DESKTOP, GamePage, Service, expect, http, wait_daily

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserContext


def test_the_first_visit_creates_a_player_that_a_reload_keeps(
        service: ServiceProcess, context: BrowserContext) -> None:
    page = GamePage(context.new_page(), service.url).open()
    expect(page.page.locator("#welcome")).to_be_visible()
    page.create_player("Ada")
    expect(page.page.locator("#who")).to_have_text("Ada")
    token = page.token
    assert http("GET", f"{service.url}/v1/variants")[0] == 200
    page.page.reload()
    expect(page.page.locator("#new-game")).to_be_visible()
    assert page.token == token
    expect(page.page.locator("#start")).to_be_enabled()
    page.screenshot("lobby-desktop")


def test_a_kept_token_the_server_refuses_starts_again_from_the_welcome(
        service: ServiceProcess, context: BrowserContext) -> None:
    """The server checks every token it is sent, GET /v1/variants's too: a token it no
    longer accepts (expired, or another server's) must not stop the client at its first call."""
    page = GamePage(context.new_page(), service.url).open()
    page.create_player("Ada")
    page.page.evaluate("""() => {
        const me = JSON.parse(localStorage.getItem('solitaire.player'));
        me.token = 'v1.' + me.token.split('.')[1] + '.' + 'A'.repeat(43);  // forged
        localStorage.setItem('solitaire.player', JSON.stringify(me));
    }""")
    page.page.reload()
    expect(page.page.locator("#welcome")).to_be_visible()
    page.create_player("Bea")
    expect(page.page.locator("#who")).to_have_text("Bea")
    assert not page.errors, page.errors


def test_a_bad_deal_number_is_refused_before_anything_is_sent(
        service: ServiceProcess, context: BrowserContext) -> None:
    page = GamePage(context.new_page(), service.url).open()
    page.create_player()
    for bad in ("-3", str(MAX_SEED)):  # the engine's limit, as the client has it
        page.page.fill("#seed", bad)
        page.page.click("#start")
        expect(page.page.locator("#lobby-message")).to_have_text(
            f"A deal number is a whole number from 0 to {MAX_SEED - 1}.")
        assert page.page.evaluate("location.hash") == ""
    page.start_game("gilbert", MAX_SEED - 1)  # the largest seed is dealt
    expect(page.page.locator("#deal")).to_have_text(f"Deal #{MAX_SEED - 1}")


def test_a_name_field_takes_as_many_characters_as_a_name_may_have(
        service: ServiceProcess, context: BrowserContext) -> None:
    page = GamePage(context.new_page(), service.url).open()
    name = page.page.locator("#player-name")
    expect(name).to_have_attribute("maxlength", str(PLAYER_NAME_MAX))
    page.create_player("N" * PLAYER_NAME_MAX)  # the longest name is accepted
    expect(page.page.locator("#who")).to_have_text("N" * PLAYER_NAME_MAX)


def test_recent_games_are_listed_and_resume(
        service: ServiceProcess, context: BrowserContext) -> None:
    page = GamePage(context.new_page(), service.url).open()
    page.create_player()
    game_id = page.start_game("shamrocks", 3)
    page.page.click("#back")
    link = page.page.locator(f'#recent a[data-game="{game_id}"]')
    expect(link).to_have_text("Shamrocks #3")
    link.click()
    page.wait_live(0)
    assert page.game_id == game_id


def test_recent_games_follow_the_player_to_another_device(
        service: ServiceProcess, context: BrowserContext, browser: Browser) -> None:
    """The recent games are the service's list of the player's games (GET
    /v1/players/me/games), not this browser's: another browser with the same player lists
    them too, newest first, with their status, and opens them."""
    page = GamePage(context.new_page(), service.url).open()
    page.create_player("Traveller")
    first = page.start_game("gilbert", 6)
    page.click_pile("stock")
    page.wait_live(1)
    page.page.click("#back")
    second = page.start_game("caprice", 5)
    status, _ = http("POST", f"{service.url}/v1/games/{second}/commands", page.token,
                     {"command": {"type": "resign"}})
    assert status == 200
    identity = page.page.evaluate("localStorage.getItem('solitaire.player')")

    other_context = browser.new_context(viewport=DESKTOP)
    try:
        other = GamePage(other_context.new_page(), service.url).open()
        other.page.evaluate("identity => localStorage.setItem('solitaire.player', identity)",
                            identity)
        other.page.reload()
        links = other.page.locator("#recent a[data-game]")
        expect(links).to_have_count(2)
        assert [links.nth(i).get_attribute("data-game") for i in range(2)] == [second, first]
        expect(links.nth(0)).to_have_text("Caprice")  # this browser never knew its deal number
        expect(other.page.locator(f'#recent li:has(a[data-game="{second}"])')).to_have_attribute(
            "data-status", "resigned")
        links.nth(1).click()
        other.wait_live(1)
        assert other.game_id == first
        assert other.errors == []
    finally:
        other_context.close()
    page.page.click("#back")  # this browser keeps the labels it opened them with
    expect(page.page.locator(f'#recent a[data-game="{first}"]')).to_have_text("Gilbert #6")
    assert page.errors == []


def test_an_address_naming_no_leaderboard_says_so_in_words(
        service: ServiceProcess, context: BrowserContext) -> None:
    page = GamePage(context.new_page(), service.url).open()
    page.create_player()
    for fragment in ("#lb=garbage", "#lb=2026-01-01/nosuchgame", "#lb=2026-13-45/gilbert"):
        page.open(fragment)
        expect(page.page.locator("h2")).to_have_text("No such leaderboard")
        expect(page.page.locator("#view")).not_to_contain_text("undefined")
        page.page.click("#back")
        expect(page.page.locator("#new-game")).to_be_visible()
    assert page.errors == []


def test_the_daily_challenge_is_played_once_and_ranked(
        service: ServiceProcess, context: BrowserContext) -> None:
    page = GamePage(context.new_page(), service.url).open()
    page.create_player("Daily Dan")
    day = wait_daily(service.url)  # the service chooses winnable deals first
    page.page.reload()
    date = day["date"]
    for c in day["challenges"]:  # each shows that the solver won it, and its par
        expect(page.page.locator(f'[data-daily="{c["variant"]}"] .par')).to_have_text(
            f'winnable · par {c["par"]}')
    page.page.click('[data-daily-play="gilbert"]')
    page.wait_live(0)
    expect(page.page.locator("#deal")).to_have_text("Secret deal")  # the day's seed is hidden
    server = Service(service.url, page.game_id, page.token)
    assert server.state()["seed"] is None

    page.page.locator("#resign").click()
    page.page.locator("#resign").click()
    expect(page.page.locator("#status")).to_have_text("resigned")
    page.page.click("#back")

    page.page.click('[data-daily-play="gilbert"]')  # one ranked attempt a day
    expect(page.page.locator("#daily-message")).not_to_be_empty()
    expect(page.page.locator("#daily-message")).to_have_attribute("data-code", "conflict")

    page.page.click('[data-daily-leaderboard="gilbert"]')
    assert page.page.evaluate("location.hash") == f"#lb={date}/gilbert"
    table = page.page.locator("#leaderboard table.leaderboard").first
    expect(table).to_contain_text("Daily Dan")
    # Dan signed up today, after the day began: the entry carries the "new" mark, in words.
    mark = table.locator('[data-mark="new_player"]')
    expect(mark).to_have_text("new")
    expect(mark).to_have_attribute("title", "signed up after the day began")
    expect(table.locator('[data-mark="machine_paced"]')).to_have_count(0)
    expect(page.page.locator("#my-rank")).to_contain_text("Your rank: 1")
    page.screenshot("leaderboard-desktop")


def test_the_daily_challenge_shows_once_the_days_deals_are_chosen_without_a_reload(
        tmp_path: Path, context: BrowserContext) -> None:
    """While the day's deals are being chosen, GET /v1/daily answers 503 with Retry-After:
    the lobby says so and asks again by itself, through a restart of the service too."""
    # A budget of one position proves no deal: this instance never finishes choosing.
    service = ServiceProcess(None, tmp_path / "service", SOLITAIRE_DAILY_SOLVE_NODES="1")
    with service:
        page = GamePage(context.new_page(), service.url).open()
        page.create_player()
        waiting = page.page.locator("#no-daily")
        expect(waiting).to_have_attribute("data-code", "unavailable")
        expect(waiting).to_contain_text("being chosen")
        service.stop()
        service.env["SOLITAIRE_DAILY_SOLVE_NODES"] = str(DAILY_SOLVE_NODES)  # one that proves
        service.start()
        day = wait_daily(service.url)
        for c in day["challenges"]:
            expect(page.page.locator(f'[data-daily="{c["variant"]}"] .par')).to_have_text(
                f'winnable · par {c["par"]}', timeout=30_000)
        assert page.errors == []


def test_a_leaderboard_shows_once_the_days_deals_are_chosen_without_a_reload(
        tmp_path: Path, context: BrowserContext) -> None:
    """While the day's deals are being chosen, its leaderboard answers 503 with Retry-After,
    as GET /v1/daily does: the page says so and asks again by itself, as the lobby does."""
    service = ServiceProcess(None, tmp_path / "service", SOLITAIRE_DAILY_SOLVE_NODES="1")
    with service:
        status, body = http("GET", f"{service.url}/v1/daily")
        assert status == 503, body
        date = body["error"]["details"]["date"]
        page = GamePage(context.new_page(), service.url).open()
        page.create_player()
        page.open(f"#lb={date}/gilbert")
        waiting = page.page.locator("#leaderboard .message")
        expect(waiting).to_have_attribute("data-code", "unavailable")
        service.stop()
        service.env["SOLITAIRE_DAILY_SOLVE_NODES"] = str(DAILY_SOLVE_NODES)  # one that proves
        service.start()
        wait_daily(service.url)
        expect(page.page.locator("#leaderboard")).to_have_text(
            "No finished attempts yet.", timeout=30_000)
        assert page.errors == []


# Runs state.js in the page: one diff with every op, then diffs that must be refused.
_STATE_JS_CHECKS = """async () => {
  const { applyDiff, applyOps, DiffError } = await import('/js/src/state.js');
  const state = {seq: 12, status: 'playing', stats: {moves: 12, foundation_cards: 4},
    piles: {'tableau/3': {down: 1, up: ['8S', '7D']}, 'foundation/1': {down: 0, up: ['6D']},
            'stock': {down: 5, up: []}, 'waste': {down: 0, up: ['2C']}}};
  const next = applyDiff(state, {
    seq: 13, command: {type: 'move', from: 'tableau/3', to: 'foundation/1', count: 1},
    ops: [{pile: 'tableau/3', op: 'pop', n: 1}, {pile: 'foundation/1', op: 'push', cards: ['7D']},
          {pile: 'tableau/3', op: 'flip', card: '9C'}, {pile: 'stock', op: 'down', n: -3}],
    status: 'playing', stats: {moves: 13, foundation_cards: 5}});
  const refused = (f) => {
    try { f(); return false; } catch (e) { return e instanceof DiffError; }
  };
  const piles = state.piles;
  return {
    next, untouched: piles['tableau/3'],
    gap: refused(() => applyDiff(state, {seq: 14, ops: [], status: 'playing', stats: {}})),
    overPop: refused(() => applyOps(piles, [{pile: 'waste', op: 'pop', n: 2}])),
    noDown: refused(() => applyOps(piles, [{pile: 'waste', op: 'flip', card: 'AS'}])),
    unknownPile: refused(() => applyOps(piles, [{pile: 'reserve/9', op: 'push', cards: ['AS']}])),
  };
}"""


def test_state_js_applies_diffs_mechanically_and_refuses_what_does_not_fit(
        service: ServiceProcess, context: BrowserContext) -> None:
    page = GamePage(context.new_page(), service.url).open()
    result = page.page.evaluate(_STATE_JS_CHECKS)
    assert result["next"]["seq"] == 13
    assert result["next"]["stats"] == {"moves": 13, "foundation_cards": 5}
    assert result["next"]["piles"] == {
        "tableau/3": {"down": 0, "up": ["8S", "9C"]},
        "foundation/1": {"down": 0, "up": ["6D", "7D"]},
        "stock": {"down": 2, "up": []},
        "waste": {"down": 0, "up": ["2C"]},
    }
    assert result["untouched"] == {"down": 1, "up": ["8S", "7D"]}  # the old state is kept
    assert result["gap"] and result["overPop"] and result["noDown"] and result["unknownPile"]
