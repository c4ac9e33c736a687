"""Gilbert for the search.

Position: ``(found, tableau, down, talon, w)``. ``found[i]`` counts the cards on
``foundation/i`` (0..3 ascending, 4..7 descending); ``tableau[i]`` the cards of
``tableau/i`` bottom to top, of which the lowest ``down[i]`` are face down; ``talon``
the waste (bottom to top) followed by the stock in the order it deals, and ``w`` how
many of them are in the waste.

Draws cycle forever, so the search never plays a bare draw: from a position it
plays any waste card that some number of draws would bring to the top (through a
turn-over if need be), as that many ``draw`` commands followed by the move, as
Klondike solvers do. A position's key forgets ``w`` when draws alone lead back to
it from the turned-over talon (``w`` a multiple of three, or the whole talon).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import Any

from service.engine import Pile
from service.engine.variants.gilbert import CARDS_PER_DRAW

from .build import ALT_DOWN, alt_run
from .cards import RANK_OF, RED_OF, card_of
from .dead import Where, higher, lower, stay_stuck
from .foundations import accepts, bump
from .rules import DRAW, Cmd, F, P, Rules, State, Step, T, codes

# The kinds of the search's steps (see Gilbert._board_steps).
WASTE, FOUNDATION, TABLEAU_MOVE, SAFE = range(4)


def _top(f: int, n: int) -> int:
    return card_of(f, n) if f < 4 else card_of(f - 4, 14 - n)


def _targets(tab: tuple[tuple[int, ...], ...]) -> tuple[dict[int, list[int]], list[int]]:
    targets: dict[int, list[int]] = {}
    empties = []
    for j, p in enumerate(tab):
        if p:
            for c in ALT_DOWN[p[-1]]:
                targets.setdefault(c, []).append(j)
        else:
            empties.append(j)
    return targets, empties


Tab = tuple[tuple[int, ...], ...]


def _put(tab: Tab, j: int, cards: tuple[int, ...]) -> Tab:
    lst = list(tab)
    lst[j] = lst[j] + cards
    return tuple(lst)


class Gilbert(Rules):
    variant_id = "gilbert"
    has_hasty = True
    dead_in_search = True  # see dead()

    def dead(self, s: State) -> bool:
        """Some tableau cards can never leave their piles (so never reach a foundation).

        The test (a greatest fixpoint, as Shamrocks'): start with the set ``C`` of the
        tableau cards that lie on a face-down card (face down themselves, or the lowest
        face-up card of their pile) or at the bottom of their pile; then, again and again,
        drop from ``C`` each card ``y`` that (i) has no lower card of its suit, or no
        higher one, lying below a card of ``C`` in a tableau pile, or (ii) may be built on
        (one rank higher, the other colour; none for a King) a card of ``Top(C)``, or
        (iii) is a Seven while some tableau pile holds no card of ``C``, until none is
        dropped. Dead if ``C`` is then not empty. ``Top(C)`` (:func:`_tops`) is the least
        set holding each card not below a card of ``C`` that is in the tableau, or may be
        built on a card of ``Top(C)``, or is a Seven while some pile holds no card of
        ``C``: found from the Kings down.

        Proof, against docs/rules.md (Gilbert). Take any game from here, and the time
        ``t`` of the first move that takes a card of ``C`` out of its pile (all time if
        none does). Before ``t`` no card of ``C`` moves, and a card below one of them
        moves only with it (a run moves with every card above its first), so it stays
        below it: never a top, never on a foundation, never moved. A pile holding a card
        of ``C`` is never empty before ``t``. So every card that is a tableau top at some
        time before ``t`` is in ``Top(C)``, by induction on time: it was in the tableau
        from here, not below a card of ``C``; or a move put it there, onto a tableau top
        (in ``Top(C)`` by induction) of which it may be built on, or, a Seven, into an
        empty pile, which exists only if some pile holds no card of ``C``; and no card
        ever comes to a pile in any other way (a card turned up was in the tableau).
        Suppose the move at ``t`` exists, taking ``y`` of ``C``. ``y`` is the card moved
        or the first of a run (an ordered run is of face-up cards, and the card below
        ``y``, if any, is face down). (1) Not to a foundation: the ascending one of its
        suit takes ``y`` only holding every lower card of the suit, the descending one
        only holding every higher one, and by (i) a lower and a higher one are still
        below cards of ``C``. (2) Not into an empty pile: by (iii), ``y`` is no Seven or
        every pile holds a card of ``C``. (3) So onto a tableau pile whose top ``z``, one
        rank higher and of the other colour, is a top before ``t``: in ``Top(C)``, which
        (ii) rules out. A contradiction: no card of ``C`` ever leaves its pile, and the
        game cannot be won.

        A move can make a position dead (a King that goes to a foundation never comes
        back to the tableau, where it was a possible top), so the search tests every
        position it reaches (:attr:`dead_in_search`)."""
        tab, down = s[1], s[2]
        where: Where = {}
        stuck = set()
        for i, p in enumerate(tab):
            for k, c in enumerate(p):
                where[c] = (i, k)
                if k <= down[i]:
                    stuck.add(c)

        def kept_off(y: int, under: Callable[[int], bool]) -> bool:
            return any(under(x) for x in lower(y)) and any(under(x) for x in higher(y))

        def landings(stuck: set[int], under: Callable[[int], bool]) -> set[int]:
            blocked = len({where[c][0] for c in stuck}) == len(tab)
            tops = _tops(under, where, blocked)
            return tops if blocked else tops | {EMPTY}

        return stay_stuck(stuck, where, _bases, landings, kept_off)

    def hastily(self) -> Rules:
        """Hasty mode (:meth:`Rules.hastily`) without the dead test at every position:
        the hasty search only looks for wins, and the test costs it more time than the
        dead positions it would leave out (measured: on 40 of the table's unknown deals at
        1,000,000 positions, 22% more positions a CPU second and one more deal won; see
        benchmarks/README.md). The main search, which proves losses, still tests them."""
        out = super().hastily()
        out.dead_ends = False
        return out

    def from_piles(self, piles: Mapping[str, Pile]) -> State:
        found = tuple(len(piles[f].up) for f in F)
        tab = tuple(codes(piles[t].down + piles[t].up) for t in T[:7])
        down = tuple(len(piles[t].down) for t in T[:7])
        waste, stock = piles["waste"].up, piles["stock"].down
        return (found, tab, down, codes(waste) + codes(stock[::-1]), len(waste))

    def key(self, s: State) -> Hashable:
        found, tab, down, talon, w = s
        if w % CARDS_PER_DRAW == 0 or w == len(talon):
            w = 0
        return (found, tuple(sorted(zip(tab, down, strict=True))), talon, w)

    # The search's steps are small tuples ``(priority, gain, kind, x, y, z)``, the
    # position built only when the search gets to it (:meth:`play`); ``gain`` is how much
    # the step raises :meth:`score`, so ordering by it orders by the score reached.
    # Kinds: WASTE (``talon[x - 1]`` as the waste top after ``y`` draws, to ``z``),
    # FOUNDATION (foundation ``x`` to ``z``), TABLEAU (the top ``y`` cards of
    # ``tableau/x`` to ``z``), SAFE (:meth:`safe`'s command ``x``, position ``y``).
    # A destination ``z`` is a foundation index (0..7), or 8 + a tableau index.

    def _waste_steps(self, s: State, p: int, draws: int, out: list[Any],
                     targets: dict[int, list[int]], empties: list[int]) -> None:
        """Moves of ``talon[p - 1]`` as the waste top, after ``draws`` draws."""
        found, talon = s[0], s[3]
        c = talon[p - 1]
        prio = P.FROM_WASTE + draws
        for f in accepts(found, c):
            out.append((P.TO_FOUNDATION + draws, 2, WASTE, p, draws, f))
        for j in targets.get(c, ()):
            out.append((prio, 0, WASTE, p, draws, 8 + j))
        if RANK_OF[c] == 7:
            for j in empties:
                out.append((prio, 0, WASTE, p, draws, 8 + j))

    def _board_steps(self, s: State, out: list[Any], targets: dict[int, list[int]],
                     empties: list[int], prune: bool = False, hasty: bool = False) -> None:
        """Moves from the foundations and the tableau.

        With ``prune`` (the search's steps, not :meth:`moves`), a foundation's top card
        ``c`` does not come back into play when :meth:`safe` would send it straight back
        up (``_needs_no_base`` holds for it with it off the foundation). Sound for the
        search, whatever the safe moves are worth: the position ``P'`` that move leads to
        has ``c`` on a tableau top and no other safe card (the parent ``P`` had none, or
        it would have played it instead of listing moves, and taking ``c`` off a
        foundation makes no other card safer), so ``P'``'s only step is ``c`` to
        ``fs[0]``, the first foundation that takes it. That is ``P`` itself (already in
        the transposition table), or, when ``c`` came off the other foundation of its
        suit, ``P``'s own foundation-to-foundation move. Every position reachable through
        ``P'`` is reachable without it: skipping it changes neither a win found nor a
        loss proved, and saves a position each time.

        With ``hasty`` (the hasty search's steps), a foundation's card does not come back
        to the tableau, and a move between tableau piles is tried only if it turns a card
        up, empties a pile or leaves on top a card that can go to a foundation (a guess:
        such moves mostly rearrange)."""
        found, tab, down = s[0], s[1], s[2]
        for f in range(8):
            n = found[f]
            if not n:
                continue
            c = _top(f, n)
            less = bump(found, f, -1)
            for g in accepts(found, c):
                if g != f:
                    out.append((P.FROM_FOUNDATION, 0, FOUNDATION, f, 0, g))
            if hasty or (prune and _needs_no_base(less, c)):
                continue  # see the docstring
            for j in targets.get(c, ()):
                out.append((P.FROM_FOUNDATION, -2, FOUNDATION, f, 0, 8 + j))
            if RANK_OF[c] == 7:
                for j in empties:
                    out.append((P.FROM_FOUNDATION, -2, FOUNDATION, f, 0, 8 + j))
        for i, p in enumerate(tab):
            if not p:
                continue
            d = down[i]
            n = len(p)
            for k in range(1, alt_run(p, d) + 1):
                c = p[-k]
                bare = n - k == d
                turn = 1 if bare and d else 0
                if bare:
                    prio = P.REVEALS
                elif c in ALT_DOWN[p[-k - 1]]:
                    prio = P.SETTLED
                else:
                    prio = P.TABLEAU
                if k == 1:
                    for f in accepts(found, c):
                        out.append((P.TO_FOUNDATION, 2 + turn, TABLEAU_MOVE, i, 1, f))
                if hasty and not bare and not accepts(found, p[-k - 1]):
                    continue
                for j in targets.get(c, ()):
                    if j != i:
                        out.append((prio, turn, TABLEAU_MOVE, i, k, 8 + j))
                if RANK_OF[c] == 7:
                    for j in empties:
                        out.append((prio, turn, TABLEAU_MOVE, i, k, 8 + j))

    def play(self, s: State, step: Any) -> State:
        found, tab, down, talon, w = s
        kind, x, y, z = step[2:]
        if kind == SAFE:
            return y  # type: ignore[no-any-return]
        if kind == WASTE:
            c = talon[x - 1]
            rest = talon[:x - 1] + talon[x:]
            if z < 8:
                return (bump(found, z, 1), tab, down, rest, x - 1)
            return (found, _put(tab, z - 8, (c,)), down, rest, x - 1)
        if kind == FOUNDATION:
            less = bump(found, x, -1)
            if z < 8:
                return (bump(less, z, 1), tab, down, talon, w)
            return (less, _put(tab, z - 8, (_top(x, found[x]),)), down, talon, w)
        p = tab[x]
        rest = p[:-y]
        lst = list(tab)
        lst[x] = rest
        if len(rest) == down[x] and down[x]:
            dl = list(down)
            dl[x] -= 1
            down = tuple(dl)
        if z < 8:
            return (bump(found, z, 1), tuple(lst), down, talon, w)
        lst[z - 8] = lst[z - 8] + p[-y:]
        return (found, tuple(lst), down, talon, w)

    def commands(self, step: Any) -> tuple[Cmd, ...]:
        kind, x, y, z = step[2:]
        if kind == SAFE:
            cmd: Cmd = x
            return (cmd,)
        to = F[z] if z < 8 else T[z - 8]
        if kind == WASTE:
            draws: int = y
            return (DRAW,) * draws + (("waste", to, 1),)
        if kind == FOUNDATION:
            return ((F[x], to, 1),)
        return ((T[x], to, y),)

    def moves(self, s: State) -> list[tuple[int, Cmd, State]]:
        talon, w = s[3], s[4]
        targets, empties = _targets(s[1])
        steps: list[Any] = []
        if w:
            self._waste_steps(s, w, 0, steps, targets, empties)
        self._board_steps(s, steps, targets, empties)
        out = [(st[0], self.commands(st)[0], self.play(s, st)) for st in steps]
        if talon:
            nw = min(w + CARDS_PER_DRAW, len(talon)) if w < len(talon) else 0
            out.append((P.DRAWS, DRAW, (s[0], s[1], s[2], talon, nw)))
        return out

    def safe(self, s: State) -> tuple[Cmd, State] | None:
        # Only from the tableau: taking a card out of the talon would change which
        # cards later passes of draw-three bring to the top.
        found, tab, down, talon, w = s
        for i, p in enumerate(tab):
            if not p:
                continue
            c = p[-1]
            fs = accepts(found, c)
            if not fs or not _needs_no_base(found, c):
                continue
            rest = p[:-1]
            ndown = down
            if len(rest) == down[i] and down[i]:
                dl = list(down)
                dl[i] -= 1
                ndown = tuple(dl)
            lst = list(tab)
            lst[i] = rest
            return (T[i], F[fs[0]], 1), (bump(found, fs[0], 1), tuple(lst), ndown, talon, w)
        return None

    def steps(self, s: State) -> list[Any]:
        safe = self.safe(s)
        if safe is not None:
            return [(P.TO_FOUNDATION, 0, SAFE, safe[0], safe[1], 0)]
        talon, w = s[3], s[4]
        targets, empties = _targets(s[1])
        steps: list[Any] = []
        self._board_steps(s, steps, targets, empties, self.pruning, self.hasty)
        for p, draws in _reachable(len(talon), w).items():
            self._waste_steps(s, p, draws, steps, targets, empties)
        steps.sort(key=_order)  # higher score reached first, then lower priority
        return steps

    def successors(self, s: State) -> list[Step]:
        return [(st[0], self.commands(st), self.play(s, st)) for st in self.steps(s)]

    def score(self, s: State) -> int:
        # Cards up count twice; each face-down card turned up counts once.
        return 2 * sum(s[0]) - sum(s[2])


# In Gilbert.dead, where a Seven may land besides its bases: an empty tableau pile.
EMPTY = -1


def _bases(c: int) -> tuple[int, ...]:
    """The cards ``c`` may be built on in the tableau: one rank higher, the other colour
    (and, for a Seven, :data:`EMPTY`)."""
    r = RANK_OF[c]
    if r == 13:
        return ()
    out = tuple(card_of(s, r + 1) for s in range(4) if RED_OF[card_of(s, 1)] != RED_OF[c])
    return (*out, EMPTY) if r == 7 else out


def _tops(under: Callable[[int], bool], where: Where, blocked: bool) -> set[int]:
    """Gilbert.dead's ``Top(C)``: from the Kings down, each card not ``under`` a stuck card
    that is in the tableau (in ``where``), or may be built on one already found, or is a
    Seven unless every pile is ``blocked`` (holds a stuck card)."""
    tops: set[int] = set()
    for r in range(13, 0, -1):
        for suit in range(4):
            z = card_of(suit, r)
            if not under(z) and (z in where or (r == 7 and not blocked)
                                 or any(b in tops for b in _bases(z))):
                tops.add(z)
    return tops


def _order(step: tuple[Any, ...]) -> tuple[int, int]:
    return (-step[1], step[0])


def _low(found: tuple[int, ...], suit: int) -> int:
    """How many of the suit's lowest ranks are on the foundations for good."""
    return 13 if found[suit] + found[4 + suit] == 13 else found[suit]


def _needs_no_base(found: tuple[int, ...], c: int) -> bool:
    """No card still in play could ever be built on ``c``: every card of the other
    colour one rank lower, and of its colour two ranks lower, is on a foundation
    (any card built on ``c`` would start such a chain)."""
    r = RANK_OF[c]
    if r <= 2:
        return True
    red = RED_OF[c]
    for s in range(4):
        if RED_OF[card_of(s, 1)] != red:
            if _low(found, s) < r - 1:
                return False
        elif _low(found, s) < r - 2:
            return False
    return True


def _reachable(size: int, w: int) -> dict[int, int]:
    """Waste sizes that draws lead to from ``w`` (``size`` cards in stock and waste),
    each with the fewest draws, for the ones with a card on the waste."""
    out: dict[int, int] = {}
    if not size:
        return out
    draws, p = 0, w
    while True:
        if p and p not in out:
            out[p] = draws
        if p == size:
            break
        p = min(p + CARDS_PER_DRAW, size)
        draws += 1
    draws += 1  # the turn-over
    p = 0
    while p < size:
        p = min(p + CARDS_PER_DRAW, size)
        draws += 1
        if p not in out:
            out[p] = draws
    return out
