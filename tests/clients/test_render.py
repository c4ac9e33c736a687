"""The terminal client's board: every variant renders by its layout hints; face-down
cards are only ever counted."""

from __future__ import annotations

import re
from collections import Counter

import msgspec
import pytest

from clients.python.notation import pile_label
from clients.python.render import face_down, render, render_moves
from clients.python.rest import Client
from protocol import Draw, GameState, LegalMoves, Move, Pile, Resign, VariantInfo

from .conftest import VARIANTS

CARD = re.compile(r"\b[A2-9TJQK][CDHS]\b")
FACE_DOWN = re.compile(r"##(?:x(\d+))?")
DECK = [rank + suit for suit in "CDHS" for rank in "A23456789TJQK"]


async def _variant(client: Client, variant: str) -> VariantInfo:
    return next(v for v in await client.variants() if v.id == variant)


def _board(text: str) -> list[str]:
    return text.splitlines()[1:]  # the header names the game, whose id is random text


def _check_only_counts_face_down(state: GameState, text: str) -> None:
    board = "\n".join(_board(text))
    shown = sum(int(n) if n else 1 for n in FACE_DOWN.findall(board))
    assert shown == sum(p.down for p in state.piles.values())
    up = Counter(card for p in state.piles.values() for card in p.up)
    assert not Counter(CARD.findall(board)) - up  # every card shown is a face-up one


@pytest.mark.parametrize("variant", VARIANTS)
async def test_every_variant_renders_by_its_layout(client: Client, variant: str) -> None:
    info = await _variant(client, variant)
    game = await client.create_game(variant, seed=21)
    for _ in range(2):
        legal = await client.moves(game.game_id)
        await client.command(
            game.game_id, next((m for m in legal.moves if isinstance(m, Draw)), legal.moves[0])
        )
    state = await client.game(game.game_id)
    text = render(state, info)
    lines = text.splitlines()
    assert info.name in lines[0] and f"seq {state.seq}" in lines[0] and "deal 21" in lines[0]
    for row in {p.row for p in info.piles}:  # a row of piles is a line of labels, in col order
        labels = [pile_label(p.id) for p in sorted(info.piles, key=lambda p: p.col) if p.row == row]
        line = next(line for line in lines if re.search(rf"(^|\s){labels[0]}\b", line))
        assert re.findall(r"\b[tfrsw]\d*\b", line) == labels
    _check_only_counts_face_down(state, text)


@pytest.mark.parametrize("variant", VARIANTS)
async def test_face_down_cards_are_counted_never_shown(client: Client, variant: str) -> None:
    info = await _variant(client, variant)
    game = await client.create_game(variant, seed=1)
    deck = iter(DECK * 2)
    piles = {
        p.id: Pile(
            down=i % 4 + (20 if p.kind == "stock" else 0), up=[next(deck) for _ in range(i % 5)]
        )
        for i, p in enumerate(info.piles)
    }
    state = msgspec.structs.replace(game.state, piles=piles)
    text = render(state, info)
    _check_only_counts_face_down(state, text)
    assert face_down(1) == "##" and face_down(24) == "##x24"
    if "stock" in piles:
        assert face_down(piles["stock"].down) in text


async def test_colour_paints_red_cards(client: Client) -> None:
    info = await _variant(client, "caprice")
    state = (await client.create_game("caprice", seed=5)).state
    plain, coloured = render(state, info), render(state, info, color=True)
    assert "\x1b[31mAD\x1b[0m" in coloured and "\x1b[31mAC" not in coloured
    assert re.sub(r"\x1b\[\d+m", "", coloured) == plain


async def test_the_outcome_is_said_below_the_board(client: Client) -> None:
    info = await _variant(client, "gate")
    game = await client.create_game("gate", seed=5)
    result = await client.command(game.game_id, Resign())
    assert render(await client.game(game.game_id), info).endswith("Resigned.")
    assert result.diff.status == "resigned"


def test_legal_moves_are_listed_in_the_notation() -> None:
    legal = LegalMoves(
        seq=3,
        moves=[
            Move(from_="tableau/3", to="foundation/1"),
            Move(from_="waste", to="tableau/0", count=1),
            Draw(),
        ],
        can_undo=True,
    )
    assert render_moves(legal) == "legal: t3 f1, w t0, d, u"
    assert render_moves(LegalMoves(seq=0, moves=[], can_undo=False)) == "no legal move"
