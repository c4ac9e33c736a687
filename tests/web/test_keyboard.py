"""The web client without a mouse: a game played with the keyboard alone (Tab to a pile,
Enter to pick up and to put down, F to a foundation, Escape to cancel), every move told
in the live region a screen reader reads, and the lobby's radio buttons named. The
legal moves come over the socket: the page never asks GET /moves while it is live."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from tests.live import ServiceProcess
from tests.web.helpers import GamePage, Service, assert_same_board, card_name, expect, http

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Page

VARIANT_NAMES = {"gilbert": "Gilbert", "shamrocks": "Shamrocks", "gate": "Gate",
                 "caprice": "Caprice"}
SEED = 6  # Gilbert deal 6: two cards may go to a foundation at once, and a tableau move

# True when the focused element matches the selector; and whether it comes before it.
_FOCUS_IS = "selector => document.activeElement && document.activeElement.matches(selector)"
_BEFORE_FOCUS = """selector => {
  const target = document.querySelector(selector);
  return !!target && !!(document.activeElement.compareDocumentPosition(target)
    & Node.DOCUMENT_POSITION_PRECEDING);
}"""

TARGET = re.compile(r"(^|\s)target(\s|$)")
def tab_to(page: Page, selector: str, limit: int = 120) -> None:
    """Move the focus to ``selector`` with Tab (or Shift+Tab when it lies behind)."""
    key = "Shift+Tab" if page.evaluate(_BEFORE_FOCUS, selector) else "Tab"
    for _ in range(limit):
        if page.evaluate(_FOCUS_IS, selector):
            return
        page.keyboard.press(key)
    raise AssertionError(f"{limit} presses of {key} never reached {selector}")


def pile(pile_id: str) -> str:
    return f'[data-pile="{pile_id}"]'


def announced(page: GamePage) -> Any:
    return expect(page.page.locator("#announce"))


def play_by_keys(page: GamePage, server: Service, move: dict[str, Any]) -> None:
    """One legal entry with the keyboard: Enter on the source (again for a longer run),
    then Enter on the target; a draw is Enter on the stock."""
    p = page.page
    seq = server.state()["seq"]
    page.wait_live(seq)
    if move["type"] == "draw":
        tab_to(p, pile("stock"))
        p.keyboard.press("Enter")
    else:
        tab_to(p, pile(move["from"]))
        p.keyboard.press("Enter")
        up = page.piles()[move["from"]]["up"]
        count = move.get("count", 1)
        picked = up[len(up) - count:]
        for _ in range(count):  # a run: Enter again takes a longer one
            if p.locator(".card.selected").count() == count:
                break
            p.keyboard.press("Enter")
        expect(p.locator(f"{pile(move['from'])} .card.selected")).to_have_count(count)
        announced(page).to_contain_text(f"Picked up {card_name(picked[0])}")
        expect(p.locator(pile(move["to"]))).to_have_class(TARGET)
        tab_to(p, pile(move["to"]))
        p.keyboard.press("Enter")
    expect(p.locator("#seq")).to_have_text(str(seq + 1))
    assert_same_board(page, server)


def test_the_variant_radios_are_named_by_their_games(
        service: ServiceProcess, context: BrowserContext) -> None:
    page = GamePage(context.new_page(), service.url).open()
    page.create_player("Named")
    status, body = http("GET", f"{service.url}/v1/variants")
    assert status == 200
    decks = {v["id"]: v["decks"] for v in body["variants"]}
    for variant, name in VARIANT_NAMES.items():
        radio = page.page.get_by_role("radio", name=name, exact=True)
        expect(radio).to_have_count(1)
        expect(radio).to_have_attribute("value", variant)
        n = decks[variant]
        expect(radio).to_have_accessible_description("1 deck" if n == 1 else f"{n} decks")


def test_a_game_is_played_with_the_keyboard_alone_and_every_move_is_announced(
        service: ServiceProcess, context: BrowserContext) -> None:
    tab = context.new_page()
    page = GamePage(tab, service.url)
    asked: list[str] = []
    tab.on("request", lambda r: asked.append(r.url) if r.url.endswith("/moves") else None)
    page.open()
    # No mouse from here on: Tab, arrows, typing, Enter, Space, Escape.
    tab_to(tab, "#player-name")
    tab.keyboard.press("Control+A")
    tab.keyboard.type("Keys")
    tab.keyboard.press("Enter")
    gilbert = tab.get_by_role("radio", name="Gilbert", exact=True)
    expect(gilbert).to_be_visible()
    tab_to(tab, 'input[name="variant"]:checked')
    for _ in range(len(VARIANT_NAMES)):  # the arrows go round the group
        if gilbert.is_checked():
            break
        tab.keyboard.press("ArrowDown")
    expect(gilbert).to_be_checked()
    tab_to(tab, "#seed")
    tab.keyboard.type(str(SEED))
    tab.keyboard.press("Enter")
    page.wait_live(0)
    server = Service(service.url, page.game_id, page.token)
    assert server.state()["variant"] == "gilbert"

    # A card to a foundation: picked up with Enter, put down with Enter.
    legal = server.moves()["moves"]
    to_foundation = [m for m in legal if m["type"] == "move" and m["to"].startswith("foundation/")]
    assert len(to_foundation) >= 2, legal
    first = to_foundation[0]
    card = server.state()["piles"][first["from"]]["up"][-1]
    play_by_keys(page, server, first)
    announced(page).to_contain_text(
        f"{card_name(card)} moved from {first['from'].replace('/', ' ')} to "
        f"{first['to'].replace('/', ' ')}")

    # Escape puts a picked-up card back; nothing is sent.
    second = next(m for m in server.moves()["moves"]
                  if m["type"] == "move" and m["to"].startswith("foundation/"))
    tab_to(tab, pile(second["from"]))
    tab.keyboard.press(" ")  # Space picks up as Enter does
    expect(tab.locator(".card.selected")).to_have_count(1)
    tab.keyboard.press("Escape")
    expect(tab.locator(".card.selected")).to_have_count(0)
    announced(page).to_contain_text("Selection cancelled")
    expect(tab.locator("#seq")).to_have_text("1")

    # F sends the focused pile's top card to a foundation.
    card = server.state()["piles"][second["from"]]["up"][-1]
    tab.keyboard.press("f")
    expect(tab.locator("#seq")).to_have_text("2")
    announced(page).to_contain_text(f"{card_name(card)} moved from "
                                    f"{second['from'].replace('/', ' ')} to foundation")
    assert server.state()["stats"]["foundation_cards"] == 2

    # Moves between piles, and a draw.
    tableau = next(m for m in server.moves()["moves"]
                   if m["type"] == "move" and m["to"].startswith("tableau/"))
    play_by_keys(page, server, tableau)
    announced(page).to_contain_text(f"to {tableau['to'].replace('/', ' ')}")
    play_by_keys(page, server, {"type": "draw"})
    announced(page).to_contain_text("Drew")
    assert server.state()["seq"] == 4

    # The arrow keys go from pile to pile.
    tab_to(tab, pile("tableau/0"))
    tab.keyboard.press("ArrowRight")
    assert tab.evaluate(_FOCUS_IS, pile("tableau/1"))

    # Resigning is two presses of its button; the end is announced.
    tab_to(tab, "#resign")
    tab.keyboard.press("Enter")
    expect(tab.locator("#resign")).to_have_text("Really resign?")
    tab.keyboard.press("Enter")
    expect(tab.locator("#status")).to_have_text("resigned")
    announced(page).to_contain_text("Game resigned.")
    assert_same_board(page, server)

    assert asked == [], "the page asked GET /moves although the socket sends them"
    assert page.errors == []


def test_a_second_page_hears_the_moves_made_elsewhere(service: ServiceProcess,
                                                      context: BrowserContext) -> None:
    owner = GamePage(context.new_page(), service.url).open()
    owner.create_player("Owner")
    game_id = owner.start_game("gilbert", SEED)
    server = Service(service.url, game_id, owner.token)
    second = GamePage(context.new_page(), service.url).open(f"#g={game_id}")
    second.wait_live(0)
    move = next(m for m in server.moves()["moves"]
                if m["type"] == "move" and m["to"].startswith("foundation/"))
    card = server.state()["piles"][move["from"]]["up"][-1]
    status, body = server.command(move)
    assert status == 200, body
    second.wait_live(1)
    announced(second).to_contain_text(f"{card_name(card)} moved from")
