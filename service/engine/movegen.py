"""Legal moves: generating them all, and checking one with the reason it is refused.

Both paths use the same declarations (build rule, capacity, what an empty
tableau pile accepts, where a foundation's top may go), and the property tests
check that they agree.
"""

from __future__ import annotations

from collections.abc import Mapping

from .cards import RANK, card as make_card, name
from .commands import Move
from .errors import BadCommand, IllegalCommand
from .piles import Pile, PileSpec, foundation_name
from .rules import ACCEPTS, BUILD_RULE_TEXT, BUILD_RULES, run_length
from .variant import Variant


def foundation_next(spec: PileSpec, pile: Pile) -> str | None:
    """The one card a foundation takes next (``None`` when it is complete)."""
    suit = spec.suit or "C"
    if spec.direction == "ascending":
        rank = RANK[pile.up[-1]] + 1 if pile.up else 1
        return make_card(rank, suit) if rank <= 13 else None
    rank = RANK[pile.up[-1]] - 1 if pile.up else 13
    return make_card(rank, suit) if rank >= 1 else None


def movable_counts(variant: Variant, spec: PileSpec, pile: Pile) -> range:
    """How many cards may leave the top of this pile in one move."""
    if not pile.up:
        return range(0)
    if spec.kind == "tableau" and variant.runs_move:
        return range(1, run_length(pile.up, variant.tableau_build) + 1)
    return range(1, 2)


def _destinations(variant: Variant, piles: Mapping[str, Pile]) -> tuple[dict[str, list[str]], list[str]]:
    """Card -> the non-empty piles that take it; and the empty tableau piles."""
    index: dict[str, list[str]] = {}
    for spec in variant.foundations:
        need = foundation_next(spec, piles[spec.id])
        if need is not None:
            index.setdefault(need, []).append(spec.id)
    accepts = ACCEPTS[variant.tableau_build]
    cap = variant.tableau_capacity
    empties: list[str] = []
    for spec in variant.tableaux:
        pile = piles[spec.id]
        if pile.up:
            if cap is not None and len(pile.up) >= cap:
                continue
            for c in accepts[pile.up[-1]]:
                index.setdefault(c, []).append(spec.id)
        elif not pile.down:
            empties.append(spec.id)
    return index, empties


def legal_moves(variant: Variant, piles: Mapping[str, Pile], first_only: bool = False) -> list[Move]:
    """Every legal ``move`` now, foundations named by index, in layout order."""
    index, empties = _destinations(variant, piles)
    kind = variant.kind
    returns = variant.foundation_returns
    out: list[Move] = []
    for spec in variant.sources:
        pile = piles[spec.id]
        if not pile.up:
            continue
        src_kind = spec.kind
        for count in movable_counts(variant, spec, pile):
            c = pile.up[-count]
            for dest in index.get(c, ()):
                if dest == spec.id:
                    continue
                dest_kind = kind[dest]
                if dest_kind == "foundation" and count != 1:
                    continue
                if src_kind == "foundation" and dest_kind not in returns:
                    continue
                out.append(Move(spec.id, dest, count))
                if first_only:
                    return out
            if empties and (src_kind != "foundation" or "tableau" in returns):
                if variant.empty_tableau_refusal(src_kind, c) is None:
                    for dest in empties:
                        out.append(Move(spec.id, dest, count))
                        if first_only:
                            return out
    if variant.stock_fills_spaces and empties and piles["stock"].down and not piles["waste"].up:
        if variant.empty_tableau_refusal("stock", "") is None:
            out.extend(Move("stock", dest, 1) for dest in empties)
    return out


def has_legal_move(variant: Variant, piles: Mapping[str, Pile]) -> bool:
    """Whether :func:`legal_moves` would find any move (the lost test, after every command).

    The same conditions as :func:`legal_moves`, answered at the first move found,
    without building the card -> destinations index or any move."""
    needs: dict[str, list[str]] = {}
    for spec in variant.foundations:
        need = foundation_next(spec, piles[spec.id])
        if need is not None:
            needs.setdefault(need, []).append(spec.id)
    accepts = ACCEPTS[variant.tableau_build]
    cap = variant.tableau_capacity
    targets: list[tuple[str, frozenset[str]]] = []  # non-empty tableau piles with room: what they take
    empties = False
    for spec in variant.tableaux:
        pile = piles[spec.id]
        if pile.up:
            if cap is None or len(pile.up) < cap:
                targets.append((spec.id, accepts[pile.up[-1]]))
        elif not pile.down:
            empties = True
    returns = variant.foundation_returns
    to_foundation_from_foundation = "foundation" in returns
    to_tableau_from_foundation = "tableau" in returns
    for spec in variant.sources:
        pile = piles[spec.id]
        if not pile.up:
            continue
        from_foundation = spec.kind == "foundation"
        for count in movable_counts(variant, spec, pile):
            c = pile.up[-count]
            if count == 1 and (not from_foundation or to_foundation_from_foundation):
                for dest in needs.get(c, ()):
                    if dest != spec.id:
                        return True
            if not from_foundation or to_tableau_from_foundation:
                for dest, takes in targets:
                    if c in takes and dest != spec.id:
                        return True
                if empties and variant.empty_tableau_refusal(spec.kind, c) is None:
                    return True
    if variant.stock_fills_spaces and empties and piles["stock"].down and not piles["waste"].up:
        if variant.empty_tableau_refusal("stock", "") is None:
            return True
    return False


# --- checking one move, with the reason -------------------------------------------


def check_move(variant: Variant, piles: Mapping[str, Pile], move: Move) -> Move:
    """The move with ``"foundation"`` resolved to an index, or :class:`IllegalCommand`."""
    if type(move.count) is not int or move.count < 1:  # a Move built directly, not parsed
        raise BadCommand(f"'count' must be a whole number of at least 1, got {move.count!r}")
    src = variant.spec.get(move.from_)
    if src is None:
        raise IllegalCommand("unknown_pile", f"{variant.name} has no pile {move.from_!r}; "
                             f"its piles are {', '.join(variant.spec)}")
    if move.to != "foundation" and move.to not in variant.spec:
        raise IllegalCommand("unknown_pile", f"{variant.name} has no pile {move.to!r}; "
                             f"its piles are {', '.join(variant.spec)} (or \"foundation\")")
    if move.to == move.from_:
        raise IllegalCommand("same_pile", "a move never lands on the pile it came from")
    c = _check_source(variant, piles, src, move.count)
    if move.to == "foundation":
        if not variant.foundations:
            raise IllegalCommand("unknown_pile", f"{variant.name} has no foundation")
        for spec in variant.foundations:
            if spec.id != move.from_ and _refusal(variant, piles, src, spec, c, move.count) is None:
                return Move(move.from_, spec.id, move.count)
        what = f"the {name(c)}" if c else "that card"
        raise IllegalCommand("no_foundation_accepts", f"no foundation accepts {what}")
    dest = variant.spec[move.to]
    reason = _refusal(variant, piles, src, dest, c, move.count)
    if reason is not None:
        raise IllegalCommand(reason[0], reason[1])
    return move


def _check_source(variant: Variant, piles: Mapping[str, Pile], src: PileSpec, count: int) -> str:
    """The first (bottom) card that would move; ``""`` for the unseen top of the stock."""
    pile = piles[src.id]
    if src.kind == "stock":
        if not variant.stock_fills_spaces:
            raise IllegalCommand("stock_by_draw_only", "cards leave the stock only by a draw")
        if count != 1:
            raise IllegalCommand("one_card_from_stock", "one card at a time comes from the stock")
        if not pile.down:
            raise IllegalCommand("stock_empty", "the stock is empty")
        if piles["waste"].up:
            raise IllegalCommand("space_from_waste_first",
                                 "a space is filled from the stock only when the waste is empty: "
                                 "play the waste top into it")
        return ""
    if not pile.up:
        raise IllegalCommand("nothing_to_move", f"nothing to move: {src.id} has no face-up card")
    if src.kind != "tableau" and count != 1:
        what = {"waste": "the waste", "reserve": "a pillar", "foundation": "a foundation"}[src.kind]
        raise IllegalCommand("top_card_only", f"only the top card of {what} can be played")
    if count > len(pile.up):
        raise IllegalCommand("not_enough_cards",
                             f"{src.id} shows {len(pile.up)} face-up card(s); cannot move {count}")
    if count > 1:
        if not variant.runs_move:
            raise IllegalCommand("one_card_at_a_time", f"only one card moves at a time in {variant.name}"
                                 + (" with single_card_moves" if variant.options.get("single_card_moves") else ""))
        if run_length(pile.up, variant.tableau_build) < count:
            raise IllegalCommand("not_a_run", f"the {count} cards moved must form a run: "
                                 f"{BUILD_RULE_TEXT[variant.tableau_build]}")
    return pile.up[-count]


def _refusal(variant: Variant, piles: Mapping[str, Pile], src: PileSpec, dest: PileSpec,
             c: str, count: int) -> tuple[str, str] | None:
    """Why ``dest`` refuses the ``count`` cards starting with ``c`` from ``src`` (None: it takes them)."""
    pile = piles[dest.id]
    if dest.kind in ("stock", "waste"):
        return ("never_onto", f"nothing is ever placed on the {dest.kind}")
    if dest.kind == "reserve":
        return ("never_onto", f"nothing is ever placed on {dest.id}")
    if src.kind == "foundation" and dest.kind not in variant.foundation_returns:
        return ("foundation_returns", "a foundation's top card may go back only onto the tableau")
    if src.kind == "stock" and not (dest.kind == "tableau" and not pile.up and not pile.down):
        return ("stock_fills_spaces_only", "a card from the stock may only fill a space")
    if dest.kind == "foundation":
        if count != 1:
            return ("one_card_to_foundation", "cards go onto a foundation one at a time")
        need = foundation_next(dest, pile)
        if need is None:
            return ("foundation_complete", f"{foundation_name(dest)} is complete")
        if c != need:
            return ("foundation_order", f"{foundation_name(dest)} takes the {name(need)} next, "
                    f"not the {name(c)}")
        return None
    # a tableau pile
    if pile.up:
        cap = variant.tableau_capacity
        if cap is not None and len(pile.up) + count > cap:
            return ("capacity", f"a {_tableau_word(variant)} holds at most {cap} cards")
        top = pile.up[-1]
        if not BUILD_RULES[variant.tableau_build](top, c):
            return ("build", f"{BUILD_RULE_TEXT[variant.tableau_build]}: the {name(c)} "
                    f"cannot go on the {name(top)}")
        return None
    if pile.down:  # a tableau pile always shows its top card; kept for safety
        return ("build", f"{dest.id} has no face-up card")
    reason = variant.empty_tableau_refusal(src.kind, c)
    return None if reason is None else ("empty_tableau", reason)


def _tableau_word(variant: Variant) -> str:
    return "fan" if variant.tableau_capacity is not None else "tableau pile"
