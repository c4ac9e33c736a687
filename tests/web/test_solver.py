"""The solver in the browser: the Hint button, and a finished game's winning line replayed."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from tests.live import ServiceProcess
from tests.web.helpers import GamePage, Service, card_name, expect, http, pile_name, wait_daily

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext


def _has(cls: str) -> re.Pattern[str]:
    return re.compile(rf"(^|\s){re.escape(cls)}(\s|$)")


def test_the_hint_button_highlights_the_suggested_card_and_target(
        service: ServiceProcess, context: BrowserContext) -> None:
    page = GamePage(context.new_page(), service.url).open()
    page.create_player("Hinted")
    game_id = page.start_game("gate", 13)
    server = Service(service.url, game_id, page.token)
    page.page.click("#hint")
    message = page.page.locator("#message")
    expect(message).to_have_attribute("data-kind", "hint")
    expect(message).to_contain_text("sampled deals of the face-down cards")
    # The same visible position gets the same hint: ask the server what it was.
    status, hint = http("POST", f"{service.url}/v1/games/{game_id}/hint", page.token)
    assert status == 200 and hint["seq"] == 0 and hint["command"] is not None, hint
    command = hint["command"]
    if command["type"] == "move":
        expect(page.pile(command["from"])).to_have_class(_has("hint-source"))
        expect(page.pile(command["to"])).to_have_class(_has("hint-target"))
        # in the words the board's piles are named by, the card named
        up = server.state()["piles"][command["from"]]["up"]
        expect(message).to_contain_text(
            f"Hint: move {card_name(up[-1])} from {pile_name(command['from'])} "
            f"to {pile_name(command['to'])}")
    else:
        expect(page.pile("stock")).to_have_class(_has("hint-source"))
        expect(message).to_contain_text("Hint: draw from the stock")
    assert server.state()["stats"]["hints"] == 2
    page.perform(command)  # playing on clears the highlight
    page.wait_live(1)
    expect(page.page.locator(".hint-source")).to_have_count(0)
    assert not page.errors


NO_HINT_WHY = "No hints in a ranked daily attempt: its leaderboard ranks unaided play."


def test_a_ranked_daily_attempt_offers_no_hint_and_says_why(
        service: ServiceProcess, context: BrowserContext) -> None:
    """The service refuses every hint in a ranked daily attempt (403): the button is not
    offered there, and a screen reader is told why; a page that did not know the game was
    an attempt (the link opened elsewhere) learns it from the first refusal."""
    page = GamePage(context.new_page(), service.url).open()
    page.create_player("Unaided")
    wait_daily(service.url)
    page.page.reload()
    page.page.click('[data-daily-play="gilbert"]')
    page.wait_live(0)
    hint = page.page.locator("#hint")
    expect(hint).to_be_disabled()
    expect(hint).to_have_accessible_description(NO_HINT_WHY)
    page.page.reload()  # the page still knows it from how the game was opened
    page.wait_live(0)
    expect(hint).to_be_disabled()

    page.page.evaluate("""() => Object.keys(localStorage)
        .filter((k) => k.startsWith('solitaire.recent.'))
        .forEach((k) => localStorage.removeItem(k))""")
    page.page.reload()  # now it does not: the button is offered, and the refusal teaches it
    page.wait_live(0)
    expect(hint).to_be_enabled()
    hint.click()
    expect(page.page.locator("#message")).to_have_attribute("data-code", "forbidden")
    expect(hint).to_be_disabled()
    expect(hint).to_have_accessible_description(NO_HINT_WHY)
    assert Service(service.url, page.game_id, page.token).state()["stats"]["hints"] == 0
    assert not page.errors


def test_a_finished_games_winning_line_is_replayed_step_by_step(
        service: ServiceProcess, context: BrowserContext) -> None:
    page = GamePage(context.new_page(), service.url).open()
    page.create_player("Replayer")
    first = page.start_game("gate", 12)
    page.page.locator("#resign").click()
    page.page.locator("#resign").click()
    expect(page.page.locator("#status")).to_have_text("resigned")
    page.page.click("#show-solution")
    expect(page.page.locator("#replay")).to_be_visible()
    replay = page.game_id
    assert replay != first
    step = page.page.locator("#replay-step")
    total = int(step.get_attribute("data-total") or "0")
    assert total > 0
    expect(page.page.locator("#hint")).to_be_hidden()
    page.wait_live(0)
    for i in range(3):
        page.page.click("#replay-next")
        expect(step).to_have_attribute("data-index", str(i + 1))
    page.page.click("#replay-back")  # an undo on the replay game
    expect(step).to_have_attribute("data-index", "2")
    page.screenshot("solution-replay")
    for i in range(2, total):
        page.page.click("#replay-next")
        expect(step).to_have_attribute("data-index", str(i + 1))
    expect(page.page.locator("#status")).to_have_text("won")
    server = Service(service.url, replay, page.token)
    assert server.state()["status"] == "won"
    expect(page.page.locator("#replay-next")).to_be_disabled()
    assert not page.errors
