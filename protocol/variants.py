"""``GET /v1/variants``: what a thin client needs to draw and describe each game."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import Meta

from .fields import Count, OptionValue, PileId, VariantId


class PileInfo(msgspec.Struct):
    """One pile of a layout. `row`, `col` and `spread` are layout hints for thin
    clients: grid cell, and which way the face-up cards fan out."""

    id: PileId
    kind: Literal["stock", "waste", "foundation", "tableau", "reserve"]
    suit: Literal["C", "D", "H", "S"] | None
    direction: Literal["ascending", "descending"] | None
    row: Count
    col: Count
    spread: Literal["none", "down", "right"]


class OptionInfo(msgspec.Struct):
    """A rule option a game may be created with, and its default."""

    type: Literal["boolean", "integer", "string"]
    default: OptionValue
    description: str


class VariantInfo(msgspec.Struct):
    """One variant: id, name, number of decks, pile layout, options, a short rules text."""

    id: VariantId
    name: str
    decks: Annotated[int, Meta(ge=1)]
    piles: list[PileInfo]
    options: dict[str, OptionInfo]
    rules: str


class Variants(msgspec.Struct):
    """Every variant the server plays."""

    variants: list[VariantInfo]
