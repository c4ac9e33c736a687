"""What the solver answers: a finished game's solution, and a hint."""

from __future__ import annotations

from typing import Literal

import msgspec

from .commands import Command
from .fields import Count, Seq

SolveResultName = Literal["won", "lost", "unknown"]


class Solution(msgspec.Struct):
    """`GET /v1/games/{id}/solution`: the solver's answer for the game's deal.

    `result`: `won` (a winning line was found), `lost` (proved that no line wins),
    `unknown` (the search budget ran out). `commands`: when `won`, the winning line
    from the deal (seq 0), exactly the commands a client sends, each accepted in turn
    by a new game with the same seed, the last one winning it; empty otherwise.
    `nodes`: positions searched; `elapsed_ms`: time the search took."""

    result: SolveResultName
    commands: list[Command]
    nodes: Count
    elapsed_ms: Count


class Hint(msgspec.Struct):
    """`POST /v1/games/{id}/hint`: a suggested command at `seq`, from what the player sees.

    The face-down cards are treated as unknown: the server deals `samples` random
    completions of them (from the cards not visible; one when none is face down),
    solves each within a small budget, and suggests the command that won the most
    (`wins` of them), never one leading back to a position the game has already shown
    while another leads elsewhere. The sampling depends only on the visible position
    (and the positions shown before), never on where the face-down cards really are.
    `command` is null when no move or draw is legal (a hint never
    suggests `undo` or `resign`), and `samples` and `wins` are then 0; it may be a
    command that won no sample (`wins` 0) when none did."""

    seq: Seq
    command: Command | None
    samples: Count
    wins: Count
