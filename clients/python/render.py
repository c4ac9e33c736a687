"""Draw a game as text, by the variant's layout hints (pure, no I/O).

Piles sit in the grid cells ``row``/``col`` that ``GET /v1/variants`` gives; a pile
spread ``down`` lists its cards one per line, ``right`` on one line, ``none`` shows
its top card. Face-down cards are only ever counted (``##`` one, ``##x5`` five):
the state holds nothing else about them. Labels are the names the notation uses
(``t3``, ``f1``, ``w``), so what is on screen is what to type.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

import msgspec

from protocol.diffs import GameState, Pile
from protocol.rest import LegalMoves
from protocol.solver import Hint
from protocol.variants import PileInfo, VariantInfo

from .notation import format_command, pile_label

EMPTY: Final = "--"
RIGHT_SHOWN: Final = 3  # cards shown of a pile spread right; "+n" counts the rest
_GAP: Final = "  "
_RED_CARD: Final = re.compile(r"\b([A2-9TJQK][DH])\b")
_ARROW: Final = {"ascending": "^", "descending": "v"}


def face_down(count: int) -> str:
    """How ``count`` face-down cards look: ``##`` for one, ``##x5`` for five."""
    return "##" if count == 1 else f"##x{count}"


def pile_lines(info: PileInfo, pile: Pile) -> list[str]:
    """A pile as lines of text, its label first."""
    label = pile_label(info.id)
    if info.kind == "foundation" and info.suit:
        label += f" {info.suit}{_ARROW.get(info.direction or '', '')}"
    lines = [label]
    if info.spread == "down":
        if pile.down:
            lines.append(face_down(pile.down))
        lines.extend(pile.up)
        if not pile.down and not pile.up:
            lines.append(EMPTY)
        return lines
    parts = [face_down(pile.down)] if pile.down else []
    if info.spread == "right":
        hidden = len(pile.up) - RIGHT_SHOWN
        if hidden > 0:
            parts.append(f"+{hidden}")
        parts.extend(pile.up[-RIGHT_SHOWN:])
    elif pile.up:
        parts.append(pile.up[-1])
        if info.kind in ("stock", "waste") and len(pile.up) > 1:
            parts.append(f"({len(pile.up)})")
    lines.append(" ".join(parts) or EMPTY)
    return lines


def render(state: GameState, variant: VariantInfo, *, color: bool = False) -> str:
    """The whole board: a header, the piles in their grid, and the outcome if any.

    ``color`` paints red cards with ANSI escapes (for a terminal)."""
    total = variant.decks * 52
    header = (
        f"{variant.name} - game {state.game_id} - seq {state.seq} - "
        f"moves {state.stats.moves} - foundations {state.stats.foundation_cards}/{total}"
        + ("" if state.seed is None else f" - deal {state.seed}")
    )
    out = [header, ""]
    out.extend(_grid(state, variant.piles))
    footer = _outcome(state)
    if footer:
        out += ["", footer]
    text = "\n".join(out)
    return _RED_CARD.sub("\x1b[31m\\1\x1b[0m", text) if color else text


def _min_width(info: PileInfo) -> int:
    # Room for what the pile may come to show, so the board does not shift as it fills.
    if info.spread == "right":
        return RIGHT_SHOWN * 3 - 1 + (4 if info.kind == "waste" else 0)
    return 5


def _grid(state: GameState, layout: Sequence[PileInfo]) -> list[str]:
    blocks: dict[tuple[int, int], list[str]] = {}
    widths: dict[int, int] = {}
    for info in layout:
        pile = state.piles.get(info.id)
        if pile is not None:
            block = blocks[(info.row, info.col)] = pile_lines(info, pile)
            widths[info.col] = max(
                widths.get(info.col, 0), _min_width(info), *(len(line) for line in block)
            )
    if not blocks:
        return []
    columns = max(col for _, col in blocks) + 1
    lines: list[str] = []
    for row in sorted({row for row, _ in blocks}):
        cells = [blocks.get((row, col), []) for col in range(columns)]
        height = max(len(cell) for cell in cells)
        if lines:
            lines.append("")
        for i in range(height):
            text = _GAP.join(
                (cell[i] if i < len(cell) else "").ljust(widths.get(col, 2))
                for col, cell in enumerate(cells)
            )
            lines.append(text.rstrip())
    return lines


def _outcome(state: GameState) -> str:
    if state.status == "won":
        return "You won: every card is on the foundations."
    if state.status == "lost":
        return "No move is left: the game is lost (u to undo, resign to give up, q to leave)."
    if state.status == "resigned":
        return "Resigned."
    return ""


def render_hint(hint: Hint) -> str:
    """A hint in the short notation, and how sure the solver is of it."""
    if hint.command is None:
        return "hint: no command is legal here"
    return (f"hint: {format_command(msgspec.to_builtins(hint.command))}  "
            f"(won {hint.wins} of {hint.samples} sampled deals of the face-down cards)")


def render_moves(moves: LegalMoves) -> str:
    """The server's legal moves in the short notation, one line."""
    names = [format_command(m) for m in moves.moves]
    if moves.can_undo:
        names.append("u")
    return "legal: " + ", ".join(names) if names else "no legal move"
