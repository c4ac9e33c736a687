"""Legal moves: one generator says which moves are legal; a move it does not list is
refused with the rule it breaks.

:func:`_moves` is the only statement of which moves are legal. The full list
(:func:`legal_moves`), the lost test (:func:`has_legal_move`) and the check of one
command (:func:`check_move`) all ask it, the last for the one source and the one
destination the command names, so checking a command costs no more than the piles
it names. :func:`_why_refused` only explains a move the generator does not list:
it names the rule (the ``rule`` of PROTOCOL.md's 422 ``illegal_move``) and says it
in words. The property tests check, over many random positions of every variant,
that the check accepts exactly the listed moves and that every other move gets a
reason.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol

from .cards import name
from .commands import Move
from .errors import BadCommand, IllegalCommand
from .piles import Kind, Pile, PileSpec, foundation_name
from .refusals import Rule
from .rules import ACCEPTS, BUILD_RULE_TEXT, foundation_next, run_length


class MoveRules(Protocol):
    """What move generation reads of a variant: every :class:`~.variant.Variant` is one.
    Said here, not imported, because a variant's lost test is built on this module."""

    @property
    def name(self) -> str: ...
    @property
    def layout(self) -> tuple[PileSpec, ...]: ...
    @property
    def spec(self) -> Mapping[str, PileSpec]: ...
    @property
    def foundations(self) -> tuple[PileSpec, ...]: ...
    @property
    def sources(self) -> tuple[PileSpec, ...]: ...
    @property
    def tableau_build(self) -> str: ...
    @property
    def tableau_capacity(self) -> int | None: ...
    @property
    def runs_move(self) -> bool: ...
    @property
    def foundation_returns(self) -> frozenset[Kind]: ...
    @property
    def pile_nouns(self) -> Mapping[Kind, str]: ...
    def empty_tableau_refusal(self, source_kind: Kind, card: str) -> str | None: ...
    def stock_refusal(self, piles: Mapping[str, Pile]) -> tuple[Rule, str] | None: ...
    def why_one_card_at_a_time(self) -> str: ...

_UNLIMITED = 1 << 30  # the room of a tableau pile in a variant without a capacity


def movable_counts(variant: MoveRules, spec: PileSpec, pile: Pile) -> range:
    """How many cards may leave the top of this pile in one move."""
    if not pile.up:
        return range(0)
    if spec.kind == "tableau" and variant.runs_move:
        return range(1, run_length(pile.up, variant.tableau_build) + 1)
    return range(1, 2)


def _moves(variant: MoveRules, piles: Mapping[str, Pile], sources: Iterable[PileSpec],
           dests: Iterable[PileSpec], first_only: bool = False) -> list[Move]:
    """The legal moves from ``sources`` onto ``dests``: for each source in order, each
    count (fewest cards first), the foundations, then the non-empty tableau piles,
    then the empty ones, each in the order of ``dests``. ``first_only``: stop at one."""
    # What each destination takes now. Nothing is ever placed on a stock, waste or reserve.
    needs: dict[str, list[str]] = {}  # card -> the foundations that take it next
    targets: list[tuple[str, frozenset[str], int]] = []  # tableau pile, cards it takes, room
    spaces: list[str] = []  # tableau piles holding no card
    accepts = ACCEPTS[variant.tableau_build]
    capacity = _UNLIMITED if variant.tableau_capacity is None else variant.tableau_capacity
    for spec in dests:
        pile = piles[spec.id]
        if spec.kind == "foundation":
            need = foundation_next(spec, pile)
            if need is not None:
                needs.setdefault(need, []).append(spec.id)
        elif spec.kind == "tableau":
            if pile.up:
                room = capacity - len(pile.up)
                if room > 0:
                    targets.append((spec.id, accepts[pile.up[-1]], room))
            elif not pile.down:
                spaces.append(spec.id)
    returns = variant.foundation_returns
    out: list[Move] = []
    for spec in sources:
        src = spec.id
        if spec.kind == "stock":  # its unseen top card, into a space, where the variant allows
            if spaces and variant.stock_refusal(piles) is None:
                for dest in spaces:
                    out.append(Move(src, dest, 1))
                    if first_only:
                        return out
            continue
        pile = piles[src]
        from_foundation = spec.kind == "foundation"
        onto_foundation = not from_foundation or "foundation" in returns
        onto_tableau = not from_foundation or "tableau" in returns
        for count in movable_counts(variant, spec, pile):
            card = pile.up[-count]
            if count == 1 and onto_foundation:
                for dest in needs.get(card, ()):
                    if dest != src:
                        out.append(Move(src, dest, 1))
                        if first_only:
                            return out
            if not onto_tableau:
                continue
            for dest, takes, room in targets:
                if card in takes and count <= room and dest != src:
                    out.append(Move(src, dest, count))
                    if first_only:
                        return out
            if spaces and variant.empty_tableau_refusal(spec.kind, card) is None:
                for dest in spaces:
                    out.append(Move(src, dest, count))
                    if first_only:
                        return out
    return out


def legal_moves(variant: MoveRules, piles: Mapping[str, Pile]) -> list[Move]:
    """Every legal ``move`` now, foundations named by index, in layout order."""
    return _moves(variant, piles, variant.sources, variant.layout)


def moves_from(variant: MoveRules, piles: Mapping[str, Pile], source: str) -> list[Move]:
    """The legal moves whose ``from`` is ``source``, in the order of :func:`legal_moves`."""
    return _moves(variant, piles, (variant.spec[source],), variant.layout)


def has_legal_move(variant: MoveRules, piles: Mapping[str, Pile]) -> bool:
    """Whether :func:`legal_moves` lists any move (the lost test, after every command):
    the same generator, stopped at the first move it finds."""
    return bool(_moves(variant, piles, variant.sources, variant.layout, first_only=True))


# --- checking one command ------------------------------------------------------------


def check_move(variant: MoveRules, piles: Mapping[str, Pile], move: Move) -> Move:
    """The move if :func:`legal_moves` lists it, with ``"foundation"`` resolved to the
    lowest-index foundation listed for it; else :class:`IllegalCommand` with the rule."""
    if type(move.count) is not int or move.count < 1:  # the wire's decoder refuses these too
        raise BadCommand(f"'count' must be a whole number of at least 1, got {move.count!r}")
    src = variant.spec.get(move.from_)
    if src is None:
        raise IllegalCommand(Rule.UNKNOWN_PILE, f"{variant.name} has no pile {move.from_!r}; "
                             f"its piles are {', '.join(variant.spec)}")
    dests: tuple[PileSpec, ...]
    if move.to == "foundation":
        if not variant.foundations:
            raise IllegalCommand(Rule.UNKNOWN_PILE, f"{variant.name} has no foundation")
        dests = variant.foundations  # in index order: the first listed is the lowest
    elif move.to in variant.spec:
        dests = (variant.spec[move.to],)
    else:
        raise IllegalCommand(Rule.UNKNOWN_PILE, f"{variant.name} has no pile {move.to!r}; "
                             f"its piles are {', '.join(variant.spec)} (or \"foundation\")")
    for legal in _moves(variant, piles, (src,), dests):
        if legal.count == move.count:
            return legal
    reason = _why_refused(variant, piles, src, move)
    if reason is None:
        raise RuntimeError(f"engine bug: {variant.name} refuses {move!r}, "
                           "but none of the refusal rules applies")
    raise IllegalCommand(*reason)


# --- why a move is refused ------------------------------------------------------------


# Refusals by _destination_refusal that do not depend on which foundation is the destination.
_SAME_FOR_EVERY_FOUNDATION = frozenset(
    {Rule.FOUNDATION_RETURNS, Rule.STOCK_FILLS_SPACES_ONLY, Rule.ONE_CARD_TO_FOUNDATION})


def _why_refused(variant: MoveRules, piles: Mapping[str, Pile], src: PileSpec,
                 move: Move) -> tuple[Rule, str] | None:
    """The first rule ``move`` (between known piles) breaks: its ``rule`` and a sentence.
    ``None`` when it breaks none, which the generator and this agreeing rules out."""
    if move.to == move.from_:
        return (Rule.SAME_PILE, "a move never lands on the pile it came from")
    reason = _source_refusal(variant, piles, src, move.count)
    if reason is not None:
        return reason
    card = "" if src.kind == "stock" else piles[src.id].up[-move.count]  # "": unseen
    if move.to == "foundation":
        # A reason that holds for every foundation alike is given as for a named one;
        # otherwise each foundation refuses the card for a reason of its own. The stock's
        # unseen card is always refused by the rule: no foundation looked at it, and saying
        # none accepts it would tell the player what it is not.
        stand_in = next(f for f in variant.foundations if f.id != src.id)
        reason = _destination_refusal(variant, piles, src, stand_in, card, move.count)
        if reason is not None and (not card or reason[0] in _SAME_FOR_EVERY_FOUNDATION):
            return reason
        what = f"the {name(card)}" if card else "that card"
        return (Rule.NO_FOUNDATION_ACCEPTS, f"no foundation accepts {what}")
    return _destination_refusal(variant, piles, src, variant.spec[move.to], card, move.count)


def _source_refusal(variant: MoveRules, piles: Mapping[str, Pile], src: PileSpec,
                    count: int) -> tuple[Rule, str] | None:
    """Why ``count`` cards may not leave ``src`` now, wherever they go."""
    if src.kind == "stock":
        reason = variant.stock_refusal(piles)
        if reason is None and count != 1:
            return (Rule.ONE_CARD_FROM_STOCK, "one card at a time comes from the stock")
        return reason
    pile = piles[src.id]
    if not pile.up:
        return (Rule.NOTHING_TO_MOVE, f"nothing to move: {src.id} has no face-up card")
    if src.kind != "tableau" and count != 1:
        return (Rule.TOP_CARD_ONLY,
                f"only the top card of {_a_pile(variant, src.kind)} can be played")
    if count > len(pile.up):
        return (Rule.NOT_ENOUGH_CARDS,
                f"{src.id} shows {len(pile.up)} face-up card(s); cannot move {count}")
    if count > 1 and not variant.runs_move:
        return (Rule.ONE_CARD_AT_A_TIME, variant.why_one_card_at_a_time())
    if count > run_length(pile.up, variant.tableau_build):
        return (Rule.NOT_A_RUN, f"the {count} cards moved must form a run: "
                f"{BUILD_RULE_TEXT[variant.tableau_build]}")
    return None


def _destination_refusal(variant: MoveRules, piles: Mapping[str, Pile], src: PileSpec,
                         dest: PileSpec, card: str, count: int) -> tuple[Rule, str] | None:
    """Why ``dest`` refuses the ``count`` cards from ``src`` starting with ``card``."""
    pile = piles[dest.id]
    if dest.kind in ("stock", "waste"):
        return (Rule.NEVER_ONTO, f"nothing is ever placed on the {variant.pile_nouns[dest.kind]}")
    if dest.kind == "reserve":
        return (Rule.NEVER_ONTO, f"nothing is ever placed on {_a_pile(variant, dest.kind)} "
                f"({dest.id})")
    returns = variant.foundation_returns
    if src.kind == "foundation" and dest.kind not in returns:
        onto = " or ".join(_a_pile(variant, k) for k in ("tableau", "foundation") if k in returns)
        return (Rule.FOUNDATION_RETURNS, f"a foundation's top card may go back only onto {onto}")
    if src.kind == "stock" and not (dest.kind == "tableau" and not pile.up and not pile.down):
        return (Rule.STOCK_FILLS_SPACES_ONLY, "a card from the stock may only fill a space")
    if dest.kind == "foundation":
        if count != 1:
            return (Rule.ONE_CARD_TO_FOUNDATION, "cards go onto a foundation one at a time")
        need = foundation_next(dest, pile)
        if need is None:
            return (Rule.FOUNDATION_COMPLETE, f"{foundation_name(dest)} is complete")
        if card != need:
            return (Rule.FOUNDATION_ORDER, f"{foundation_name(dest)} takes the {name(need)} next, "
                    f"not the {name(card)}")
        return None
    # a tableau pile
    if pile.up:
        capacity = variant.tableau_capacity
        if capacity is not None and len(pile.up) + count > capacity:
            return (Rule.CAPACITY,
                    f"{_a_pile(variant, 'tableau')} holds at most {capacity} cards")
        top = pile.up[-1]
        if card not in ACCEPTS[variant.tableau_build][top]:
            return (Rule.BUILD, f"{BUILD_RULE_TEXT[variant.tableau_build]}: the {name(card)} "
                    f"cannot go on the {name(top)}")
        return None
    if pile.down:  # a tableau pile always shows its top card; kept for safety
        return (Rule.BUILD, f"{dest.id} has no face-up card")
    reason = variant.empty_tableau_refusal(src.kind, card)
    return None if reason is None else (Rule.EMPTY_TABLEAU, reason)


def _a_pile(variant: MoveRules, kind: Kind) -> str:
    """``"the waste"``, ``"a pillar"``: a pile of ``kind`` in the variant's own words."""
    noun = variant.pile_nouns[kind]
    return f"the {noun}" if kind in ("stock", "waste") else f"a {noun}"
