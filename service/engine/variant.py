"""The base of every variant: a declaration (layout, deal, build rules by name)
plus small hooks for what the data cannot say.

A variant is a subclass that sets the class attributes below and, where it
must, overrides a hook. It is registered in :mod:`service.engine.variants`
and found by its ``id``. A configured instance (``Gate({"single_card_moves":
True})``) is what a game holds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from .cards import ordered_deck
from .errors import BadOptions, IllegalCommand
from .movegen import has_legal_move
from .piles import Kind, Pile, PileSpec
from .refusals import Rule
from .rng import shuffle

if TYPE_CHECKING:
    from .position import Position


@dataclass(frozen=True, slots=True)
class Option:
    """A boolean rule option a game may be created with."""

    default: bool
    description: str
    type: str = "boolean"

    def describe(self) -> dict[str, Any]:
        return {"type": self.type, "default": self.default, "description": self.description}


class Variant:
    # --- the declaration -------------------------------------------------
    id: ClassVar[str]
    name: ClassVar[str]
    decks: ClassVar[int] = 1
    layout: ClassVar[tuple[PileSpec, ...]]
    rules: ClassVar[str]  # a short rules text for clients
    options_spec: ClassVar[dict[str, Option]] = {}
    tableau_build: ClassVar[str] = "alternate_colour_down"  # a name in rules.BUILD_RULES
    tableau_capacity: ClassVar[int | None] = None  # at most this many cards on a tableau pile
    runs_move: bool = True  # face-up runs move as a unit (else one card at a time)
    # where a foundation's top card may go back into play
    foundation_returns: ClassVar[frozenset[Kind]] = frozenset({"tableau"})
    # what the refusals call a pile of each kind ("the waste", "a pillar")
    pile_nouns: ClassVar[Mapping[Kind, str]] = {
        "stock": "stock", "waste": "waste", "foundation": "foundation",
        "tableau": "tableau pile", "reserve": "reserve",
    }

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        self.options = self.normalize_options(options)
        self.spec: dict[str, PileSpec] = {p.id: p for p in self.layout}
        self.kind: dict[str, Kind] = {p.id: p.kind for p in self.layout}
        # In index order, as in every layout: "to": "foundation" takes the first that accepts.
        self.foundations = tuple(p for p in self.layout if p.kind == "foundation")
        self.tableaux = tuple(p for p in self.layout if p.kind == "tableau")
        # The piles moves may come from, in the order legal moves are listed: the stock last.
        self.sources = (*(p for p in self.layout if p.kind != "stock"),
                        *(p for p in self.layout if p.kind == "stock"))
        self.total_cards = 52 * self.decks

    @classmethod
    def normalize_options(cls, options: Mapping[str, Any] | None) -> dict[str, Any]:
        """Every option with its value; :class:`BadOptions` for unknown names or wrong types."""
        given = dict(options or {})
        unknown = sorted(set(given) - set(cls.options_spec))
        if unknown:
            known = ", ".join(cls.options_spec) or "none"
            raise BadOptions(f"{cls.id} has no option {', '.join(map(repr, unknown))} "
                             f"(its options: {known})", unknown[0])
        out: dict[str, Any] = {}
        for key, spec in cls.options_spec.items():
            value = given.get(key, spec.default)
            if not isinstance(value, bool):
                raise BadOptions(f"option {key!r} of {cls.id} is true or false, got {value!r}",
                                 key)
            out[key] = value
        return out

    # --- the deal ----------------------------------------------------------
    def shuffled_deck(self, seed: int) -> list[str]:
        """The deck of :meth:`deck_to_shuffle`, shuffled by :func:`rng.shuffle` with ``seed``."""
        cards = self.deck_to_shuffle()
        shuffle(cards, seed)
        return cards

    def deck_to_shuffle(self) -> list[str]:
        return ordered_deck(self.decks)

    def deal(self, seed: int) -> dict[str, Pile]:  # pragma: no cover - every variant defines it
        raise NotImplementedError

    def empty_piles(self) -> dict[str, Pile]:
        return {p.id: Pile() for p in self.layout}

    # --- hooks ---------------------------------------------------------------
    def empty_tableau_refusal(self, source_kind: Kind, card: str) -> str | None:
        """Why an empty tableau pile refuses ``card`` coming from a ``source_kind`` pile
        (``None``: it accepts it)."""
        return None

    def stock_refusal(self, piles: Mapping[str, Pile]) -> tuple[Rule, str] | None:
        """Why the stock's top card may not now be moved, turned face up, into an empty
        tableau pile: the ``rule`` and a sentence (``None``: it may). By default cards
        leave the stock only by a draw."""
        return (Rule.STOCK_BY_DRAW_ONLY, "cards leave the stock only by a draw")

    def why_one_card_at_a_time(self) -> str:
        """The refusal of a run of cards moved as one, in a variant where they may not."""
        return f"only one card moves at a time in {self.name}"

    def can_draw(self, piles: Mapping[str, Pile]) -> bool:
        return False

    def draw(self, piles: dict[str, Pile]) -> bool:
        """Apply a ``draw`` to ``piles`` in place, or raise :class:`IllegalCommand`.
        True when it turned the waste back over into the stock."""
        raise IllegalCommand(Rule.NO_STOCK, f"{self.name} has no stock to draw from")

    def after_move(self, piles: dict[str, Pile], source: str) -> None:
        """What happens at once after a move, as part of it. By default a tableau
        pile whose face-up cards are gone turns its top face-down card up."""
        if self.kind[source] == "tableau":
            pile = piles[source]
            if not pile.up and pile.down:
                piles[source] = Pile(pile.down[:-1], (pile.down[-1],))

    def is_lost(self, position: Position) -> bool:
        """No ``move`` and no ``draw`` is legal (Gilbert has a test of its own)."""
        return not self.can_draw(position.piles) and not has_legal_move(self, position.piles)

    # --- description for clients ---------------------------------------------
    def describe(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "decks": self.decks,
            "piles": [p.describe() for p in self.layout],
            "options": {k: o.describe() for k, o in self.options_spec.items()},
            "rules": self.rules,
        }
