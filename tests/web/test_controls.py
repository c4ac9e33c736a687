"""The game's controls in the browser: undo, resign, drag and drop, double-click,
and Gate's space filled from the stock."""

from __future__ import annotations

import random
import re
from typing import TYPE_CHECKING, Any

from service.engine import Game
from tests.commands import from_json, to_json
from tests.live import ServiceProcess
from tests.web.helpers import GamePage, Service, assert_same_board, choose, expect

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext


def started(context: BrowserContext, service: ServiceProcess, variant: str,
            seed: int) -> tuple[GamePage, Service]:
    page = GamePage(context.new_page(), service.url).open()
    page.create_player()
    game_id = page.start_game(variant, seed)
    return page, Service(service.url, game_id, page.token)


def first_move(server: Service, **match: Any) -> dict[str, Any]:
    for move in server.moves()["moves"]:
        if move["type"] == "move" and all(
                re.fullmatch(pattern, str(move[key])) for key, pattern in match.items()):
            return dict(move)
    raise AssertionError(f"no legal move matching {match}")


def test_undo_reverts_the_last_move_and_resign_ends_the_game(
        service: ServiceProcess, context: BrowserContext) -> None:
    page, server = started(context, service, "gilbert", 6)
    before = server.state()["piles"]
    expect(page.page.locator("#undo")).to_be_disabled()
    page.perform(first_move(server, to=r"tableau/\d+"))
    page.wait_live(1)
    assert page.piles() != before

    page.page.click("#undo")  # enabled once the server says an undo would be accepted
    page.wait_live(2)
    assert assert_same_board(page, server)["piles"] == before
    expect(page.page.locator("#moves")).to_have_text("2")  # an undo counts as a move

    resign = page.page.locator("#resign")
    resign.click()
    expect(resign).to_have_text("Really resign?")  # a second click confirms
    resign.click()
    expect(page.page.locator("#status")).to_have_text("resigned")
    expect(page.page.locator("#banner")).to_be_visible()
    expect(page.page.locator("#banner")).to_contain_text("resigned")
    expect(resign).to_be_disabled()
    assert_same_board(page, server)

    page.click_pile("stock")  # the server refuses anything now, and says why
    expect(page.page.locator("#message")).to_have_attribute("data-code", "illegal_move")
    expect(page.page.locator("#message")).to_contain_text("over")
    page.page.click("#new-game")
    expect(page.page.locator("#new-game")).to_be_visible()


def test_a_run_dragged_onto_a_pile_moves(service: ServiceProcess, context: BrowserContext) -> None:
    page, server = started(context, service, "gilbert", 6)
    # Play (over HTTP) until a run of several cards may move; then drag it.
    last = None
    for want in ["move", "draw", "move", "move", "move", "move"]:
        moves = server.moves()["moves"]
        runs = [m for m in moves if m["type"] == "move" and m.get("count", 1) > 1
                and m["from"].startswith("tableau/") and m["to"].startswith("tableau/")]
        if runs:
            break
        last = choose(moves, want, last)
        assert last is not None
        status, body = server.command(last)
        assert status == 200, body
    assert runs, "no run to drag in the first moves of this deal"
    run = runs[0]
    seq = server.state()["seq"]
    page.wait_live(seq)
    up = page.piles()[run["from"]]["up"]
    count = run["count"]
    card = page.card(run["from"], len(up) - count).bounding_box()
    target = page.pile(run["to"]).bounding_box()
    assert card and target
    mouse = page.page.mouse
    mouse.move(card["x"] + card["width"] * 0.5, card["y"] + 8)
    mouse.down()
    mouse.move(card["x"] + card["width"] * 0.5 + 20, card["y"] + 30, steps=4)
    expect(page.page.locator(".drag-ghost .card")).to_have_count(count)
    expect(page.pile(run["to"])).to_have_class(re.compile(r"\btarget\b"))
    mouse.move(target["x"] + target["width"] * 0.5, target["y"] + target["height"] * 0.5, steps=10)
    mouse.up()
    page.wait_live(seq + 1)
    state = assert_same_board(page, server)
    assert state["piles"][run["to"]]["up"][-count:] == up[-count:]
    expect(page.page.locator(".drag-ghost")).to_have_count(0)


def test_a_double_click_sends_a_card_to_a_foundation(
        service: ServiceProcess, context: BrowserContext) -> None:
    page, server = started(context, service, "gilbert", 6)
    move = first_move(server, to=r"foundation/\d+")
    up = page.piles()[move["from"]]["up"]
    box = page.card(move["from"], len(up) - 1).bounding_box()
    assert box
    page.page.mouse.dblclick(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.wait_live(1)
    state = assert_same_board(page, server)
    assert state["piles"][move["to"]]["up"][-1] == up[-1]


def gate_position_with_a_move_from_the_stock() -> tuple[int, list[dict[str, Any]], dict[str, Any]]:
    """A deal and commands after which Gate's stock may fill a space (both pillars empty,
    the waste empty): found by seeded random play in the engine."""
    for seed in range(1, 200):
        for trial in range(30):
            rnd = random.Random(seed * 1000 + trial)
            game, commands = Game.deal("gate", seed), []
            for _ in range(150):
                legal = [to_json(c) for c in game.legal_moves()]
                from_stock = [m for m in legal if m["type"] == "move" and m["from"] == "stock"]
                if from_stock:
                    return seed, commands, from_stock[0]
                if not legal:
                    break
                pillars = [m for m in legal
                           if m["type"] == "move" and m["from"].startswith("reserve/")]
                pick = rnd.choice(pillars) if pillars and rnd.random() < 0.8 else rnd.choice(legal)
                game, _ = game.apply(from_json(pick))
                commands.append(pick)
    raise AssertionError("no Gate position found with a move from the stock")


def test_gate_fills_a_space_from_the_stock_by_clicking_the_stock_then_the_space(
        service: ServiceProcess, context: BrowserContext) -> None:
    seed, commands, stock_move = gate_position_with_a_move_from_the_stock()
    page, server = started(context, service, "gate", seed)
    for command in commands:
        status, body = server.command(command)
        assert status == 200, body
    page.wait_live(len(commands))
    assert_same_board(page, server)
    assert stock_move in server.moves()["moves"]

    page.click_pile("stock")  # picks the stock up: the spaces light up
    expect(page.pile(stock_move["to"])).to_have_class(re.compile(r"\btarget\b"))
    expect(page.page.locator("#message")).to_contain_text("stock again to draw")
    page.click_pile(stock_move["to"])
    page.wait_live(len(commands) + 1)
    state = assert_same_board(page, server)
    assert len(state["piles"][stock_move["to"]]["up"]) == 1
    assert server.state()["piles"]["waste"]["up"] == []
