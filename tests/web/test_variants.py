"""Each variant played in the browser: start from the lobby with a known deal, make
moves by clicking, resume after a reload, and follow the game live in a second page."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tests.live import ServiceProcess
from tests.web.helpers import PHONE, GamePage, Service, assert_same_board, expect, play_by_clicking

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext

# A deal number per variant whose first moves, picked by `choose`, cover what the
# board must handle: foundations both ways, the stock, runs of several cards, pillars.
DEALS = {"gilbert": 6, "shamrocks": 3, "gate": 14, "caprice": 7}
PLAN = ["move", "draw", "move", "move", "move"]


@pytest.mark.parametrize("variant", list(DEALS))
def test_a_variant_is_played_by_clicking_resumed_and_followed_live(
        variant: str, service: ServiceProcess, context: BrowserContext) -> None:
    page = GamePage(context.new_page(), service.url).open()
    page.create_player(f"Player of {variant}")
    game_id = page.start_game(variant, DEALS[variant])
    server = Service(service.url, game_id, page.token)
    state = assert_same_board(page, server)
    assert state["variant"] == variant and state["seed"] == DEALS[variant]
    expect(page.page.locator("#deal")).to_have_text(f"Deal #{DEALS[variant]}")

    done = play_by_clicking(page, server, PLAN)
    assert len(done) == len(PLAN)
    if variant in ("gilbert", "gate", "caprice"):
        assert {"type": "draw"} in done, "the stock was clicked"
    page.screenshot(f"{variant}-desktop")

    # A reload resumes the same game at the same seq (the game id is in the URL).
    seq = page.seq()
    page.page.reload()
    page.wait_live(seq)
    assert page.game_id == game_id
    assert_same_board(page, server)

    # A second page on the same game, phone-sized, follows the first one live.
    phone = GamePage(context.new_page(), service.url)
    phone.page.set_viewport_size(PHONE)
    phone.open(f"#g={game_id}")
    phone.wait_live(seq)
    assert phone.piles() == page.piles()
    play_by_clicking(page, server, ["move"])
    expect(phone.page.locator("#seq")).to_have_text(str(seq + 1))
    assert_same_board(phone, server)
    # ... and the first follows the second.
    play_by_clicking(phone, server, ["move"])
    expect(page.page.locator("#seq")).to_have_text(str(seq + 2))
    assert_same_board(page, server)
    phone.screenshot(f"{variant}-phone")
    assert page.errors == [] and phone.errors == []


@pytest.mark.parametrize("variant", list(DEALS))
def test_an_illegal_click_shows_the_servers_reason(
        variant: str, service: ServiceProcess, context: BrowserContext) -> None:
    page = GamePage(context.new_page(), service.url).open()
    page.create_player()
    game_id = page.start_game(variant, DEALS[variant])
    server = Service(service.url, game_id, page.token)
    state = server.state()
    legal = {(m["from"], m["to"]) for m in server.moves()["moves"] if m["type"] == "move"}
    candidates = [(a, b) for a, pa in state["piles"].items() for b in state["piles"]
                  if a != b and pa["up"] and a.startswith("tableau/") and b.startswith("tableau/")
                  and state["piles"][b]["up"] and (a, b) not in legal]
    source, target = candidates[0]
    page.click_card(source, len(state["piles"][source]["up"]) - 1)
    expect(page.pile(target)).not_to_have_class("target")
    page.click_pile(target)

    message = page.page.locator("#message")
    expect(message).to_have_attribute("data-code", "illegal_move")
    status, body = server.command({"type": "move", "from": source, "to": target, "count": 1})
    assert status == 422
    expect(message).to_have_text(body["error"]["message"])
    assert_same_board(page, server)  # nothing moved
    assert page.seq() == 0
