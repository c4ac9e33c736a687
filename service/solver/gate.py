"""Gate for the search.

Position: ``(found, bars, pillars, talon, w)``: ``found[s]`` counts the cards on
``foundation/s``; ``bars[i]`` the cards of ``tableau/i`` bottom to top; ``pillars`` the
cards of ``reserve/0`` and ``reserve/1``; ``talon`` the waste (bottom to top) then the
stock in the order it deals, ``w`` of them in the waste. One pass: a draw is a plain
move of the search. The bars are interchangeable (the key sorts them); the pillars
are not (the left one refills on a tie).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import Any

from service.engine import Pile

from .build import ALT_DOWN, alt_run
from .cards import RANK_OF, RED_OF, SUIT_OF, card_of
from .dead import Where, lower, stay_stuck
from .foundations import bump
from .rules import DRAW, Cmd, F, P, R, Rules, State, Step, T, codes

Bars = tuple[tuple[int, ...], ...]


def _put(bars: Bars, j: int, cards: tuple[int, ...]) -> Bars:
    lst = list(bars)
    lst[j] = lst[j] + cards
    return tuple(lst)


def _low_enough(found: tuple[int, ...], c: int) -> bool:
    """``c`` may go up for good: nothing still in play could be built on it (see gilbert)."""
    r = RANK_OF[c]
    if r <= 2:
        return True
    red = RED_OF[c]
    for s in range(4):
        need = r - 1 if RED_OF[card_of(s, 1)] != red else r - 2
        if found[s] < need:
            return False
    return True


def _awaited(c: int, bars: Bars, pillars: tuple[tuple[int, ...], ...],
             talon: tuple[int, ...], w: int) -> bool:
    """Some card could be built on ``c`` at once and is not already on a card it is built
    on: the waste's top, a pillar's, or a bar's top lying alone or on a card it does not
    build on (the hasty search's guess for taking ``c`` down from its foundation)."""
    below = ALT_DOWN[c]
    if w and talon[w - 1] in below:
        return True
    for p in bars:
        if p and p[-1] in below and (len(p) == 1 or p[-1] not in ALT_DOWN[p[-2]]):
            return True
    return any(p and p[-1] in below for p in pillars)


def _bases(c: int) -> tuple[int, ...]:
    """The cards ``c`` may be built on in the bars: one rank higher, the other colour."""
    r = RANK_OF[c]
    if r == 13:
        return ()
    return tuple(card_of(s, r + 1) for s in range(4) if RED_OF[card_of(s, 1)] != RED_OF[c])


# Gate.dead's mark for "an emptied bar or a space", among the cards a card may land on.
SPACE = -1


def _tops(under: Callable[[int], bool], in_bars: set[int], filler: set[int],
          found: tuple[int, ...]) -> set[int]:
    """Gate.dead's ``Top(C)``: from the Kings down, each card not ``under`` a stuck card
    that is in a bar (``in_bars``), or in ``filler`` (the pillars', the waste's and the
    stock's cards, where some bar holds no stuck card), or may be built on one already
    found and, if it lies on a foundation below its top, has the next card of its suit
    found."""
    tops: set[int] = set()
    for r in range(13, 0, -1):
        for suit in range(4):
            z = card_of(suit, r)
            if under(z):
                continue
            if z in in_bars or z in filler or (
                    any(b in tops for b in _bases(z)) and (r >= found[suit] or z + 1 in tops)):
                tops.add(z)
    return tops


class Gate(Rules):
    variant_id = "gate"

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        super().__init__(options)
        # Measured with single_card_moves (benchmarks/README, branch gs): 11 of the table's
        # 76 unknown deals won at 2,000,000 positions (0 without); plain Gate left as it was.
        self.has_hasty = not self.runs_move

    def dead(self, s: State) -> bool:
        """With ``single_card_moves``: some cards of the bars, the pillars or the waste can
        never move (so never reach a foundation).

        The test (a greatest fixpoint, dead.py's :func:`stay_stuck`, as Gilbert's): start
        with the set ``C`` of every card in the bars, the pillars and the waste; then,
        again and again, drop from ``C`` each card ``y`` that (i) has no lower card of its
        suit lying below a card of ``C`` in its pile (a bar, a pillar, the waste), or (ii)
        may be built on (one rank higher, the other colour; none for a King) a card of
        ``Top(C)``, or (iii) lies in a pillar or the waste while some bar holds no card of
        ``C``, until none is dropped. Dead if ``C`` is then not empty. ``Top(C)``
        (:func:`_tops`) is the least set holding each card not below a card of ``C`` that
        is in a bar, or lies in a pillar, the waste or the stock while some bar holds no
        card of ``C``, or may be built on a card of ``Top(C)`` and, if it lies on a
        foundation below its top, has the next card of its suit in ``Top(C)``: found from
        the Kings down.

        Proof, against docs/rules.md (Gate, one card at a time). Take any game from here,
        and the time ``t`` of the first move that takes a card of ``C`` off its pile (all
        time if none does). Before ``t`` no card of ``C`` moves, and a card below one of
        them cannot move (only a bar's, a pillar's or the waste's top card moves; a
        card only ever goes on top of a bar or of the waste, and a draw puts its card on
        top of the waste), so it stays below it: never a top, never moved. A bar holding a
        card of ``C`` is never empty before ``t``, so it is never refilled and never a
        space. So every card that is a bar's top at some time before ``t`` is in
        ``Top(C)``, by induction on time: it was in a bar from here, not below a card of
        ``C``; or a move put it there, onto a bar's top (in ``Top(C)`` by induction) that
        it may be built on, or into an emptied bar or a space (from a pillar, the waste or
        the stock: the only cards that go there), which exists only if some bar holds no
        card of ``C``. A foundation's card goes onto a bar only as the foundation's top,
        so, if it lay below the top here, only after the next card of its suit left the
        foundation, which it does only onto a bar: that card was a bar's top earlier, in
        ``Top(C)`` by induction. Suppose the move at ``t`` exists, taking ``y`` of ``C``. (1) Not to
        a foundation: it takes ``y`` only holding every lower card of its suit, and by (i)
        one of them is still below a card of ``C``. (2) Not into an emptied bar or a space:
        a bar's card never goes there, and by (iii) a pillar's or the waste's card could
        only if some bar held no card of ``C``. (3) Not onto a bar's top ``z``: ``z`` would
        be a top before ``t``, so in ``Top(C)``, and ``y`` may be built on it, against
        (ii). So no card of ``C`` ever moves, and none reaches its foundation: the
        position is lost. The fixpoint drops only cards that (i), (ii) or (iii) let go,
        so what is left holds to all three.

        Plain Gate (runs move) has no test: a run may carry a card below a card of ``C``
        along. A position reached may be dead where the one before was not, but the
        search tests only its start (:attr:`dead_in_search` stays False): measured, testing
        every position it reaches left out 14-23% of the main search's positions and cost
        it 17-33% more CPU time (benchmarks/README, branch gs4), and the restarts lost won
        deals with it. The test is sound at every position (tests/solver/test_dead.py
        checks the search with it on)."""
        if self.runs_move:
            return False
        found, bars, pillars, talon, w = s
        where: Where = {}
        for i, p in enumerate(bars):
            for k, c in enumerate(p):
                where[c] = (i, k)
        in_bars = set(where)
        for r, p in enumerate(pillars):
            for k, c in enumerate(p):
                where[c] = (len(bars) + r, k)
        for k in range(w):
            where[talon[k]] = (len(bars) + 2, k)
        filler = {c for p in pillars for c in p} | set(talon)

        def bases(y: int) -> tuple[int, ...]:
            return _bases(y) if y in in_bars else (*_bases(y), SPACE)

        def kept_off(y: int, under: Callable[[int], bool]) -> bool:
            return any(under(x) for x in lower(y))

        def landings(stuck: set[int], under: Callable[[int], bool]) -> set[int]:
            blocked = len({where[c][0] for c in stuck if c in in_bars}) == len(bars)
            if blocked:
                return _tops(under, in_bars, set(), found)
            return _tops(under, in_bars, filler, found) | {SPACE}

        return stay_stuck(set(where), where, bases, landings, kept_off)

    def order(self, steps: list[Step]) -> list[Step]:
        steps.sort(key=lambda step: step[0])  # by priority alone: measured better than by score
        return steps

    def from_piles(self, piles: Mapping[str, Pile]) -> State:
        found = tuple(len(piles[f].up) for f in F[:4])
        bars = tuple(codes(piles[t].up) for t in T[:8])
        pillars = (codes(piles[R[0]].up), codes(piles[R[1]].up))
        waste, stock = piles["waste"].up, piles["stock"].down
        return (found, bars, pillars, codes(waste) + codes(stock[::-1]), len(waste))

    def key(self, s: State) -> Hashable:
        found, bars, pillars, talon, w = s
        return (found, tuple(sorted(bars)), pillars, talon, w)

    def _leave_bar(self, bars: Bars, pillars: tuple[tuple[int, ...], ...], i: int,
                   rest: tuple[int, ...]) -> tuple[Bars, tuple[tuple[int, ...], ...]]:
        """The bars and pillars once ``tableau/i`` is left holding ``rest`` (refilled if
        emptied)."""
        lst = list(bars)
        left, right = pillars
        if not rest and (left or right):
            if len(left) >= len(right):
                rest, pillars = left[-1:], (left[:-1], right)
            else:
                rest, pillars = right[-1:], (left, right[:-1])
        lst[i] = rest
        return tuple(lst), pillars

    def moves(self, s: State) -> list[tuple[int, Cmd, State]]:
        found, bars, pillars, talon, w = s
        out: list[tuple[int, Cmd, State]] = []
        targets: dict[int, list[int]] = {}
        empties = []
        for j, p in enumerate(bars):
            if p:
                for c in ALT_DOWN[p[-1]]:
                    targets.setdefault(c, []).append(j)
            else:
                empties.append(j)
        if w:
            c = talon[w - 1]
            rest = talon[:w - 1] + talon[w:]
            if found[SUIT_OF[c]] == RANK_OF[c] - 1:
                out.append((P.TO_FOUNDATION, ("waste", F[SUIT_OF[c]], 1),
                            (bump(found, SUIT_OF[c], 1), bars, pillars, rest, w - 1)))
            for j in targets.get(c, ()):
                out.append((P.FROM_WASTE, ("waste", T[j], 1), (found, _put(bars, j, (c,)), pillars,
                                                             rest, w - 1)))
            for j in empties:
                out.append((P.FROM_WASTE, ("waste", T[j], 1), (found, _put(bars, j, (c,)), pillars,
                                                             rest, w - 1)))
        elif empties and len(talon) > 0:
            c = talon[0]
            for j in empties:
                out.append((P.FROM_WASTE, ("stock", T[j], 1), (found, _put(bars, j, (c,)), pillars,
                                                             talon[1:], 0)))
        for r in range(2):
            pillar = pillars[r]
            if not pillar:
                continue
            c = pillar[-1]
            less = (pillar[:-1], pillars[1]) if r == 0 else (pillars[0], pillar[:-1])
            if found[SUIT_OF[c]] == RANK_OF[c] - 1:
                out.append((P.TO_FOUNDATION, (R[r], F[SUIT_OF[c]], 1),
                            (bump(found, SUIT_OF[c], 1), bars, less, talon, w)))
            for j in targets.get(c, ()):
                out.append((P.REVEALS, (R[r], T[j], 1),
                            (found, _put(bars, j, (c,)), less, talon, w)))
        for f in range(4):
            n = found[f]
            if not n:
                continue
            c = card_of(f, n)
            if self.hasty and not _awaited(c, bars, pillars, talon, w):
                continue
            less_found = bump(found, f, -1)
            for j in targets.get(c, ()):
                out.append((P.FROM_FOUNDATION, (F[f], T[j], 1), (less_found, _put(bars, j, (c,)),
                                                               pillars, talon, w)))
        for i, p in enumerate(bars):
            if not p:
                continue
            run = alt_run(p, 0) if self.runs_move else 1
            for k in range(1, run + 1):
                c = p[-k]
                moved = p[-k:]
                rest = p[:-k]
                nbars, npillars = self._leave_bar(bars, pillars, i, rest)
                if k == 1 and found[SUIT_OF[c]] == RANK_OF[c] - 1:
                    out.append((P.TO_FOUNDATION, (T[i], F[SUIT_OF[c]], 1),
                                (bump(found, SUIT_OF[c], 1), nbars, npillars, talon, w)))
                prio = (P.REVEALS if not rest else P.SETTLED if c in ALT_DOWN[rest[-1]]
                        else P.TABLEAU)
                for j in targets.get(c, ()):
                    if j != i:
                        out.append((prio, (T[i], T[j], k), (found, _put(nbars, j, moved), npillars,
                                                            talon, w)))
        if w < len(talon):
            out.append((P.DRAWS, DRAW, (found, bars, pillars, talon, w + 1)))
        return out

    def successors(self, s: State) -> list[Step]:
        """With the waste empty and cards in the stock, a draw alone (after a safe move).

        Proof, against docs/rules.md (Gate): from such a position ``P``, whatever wins
        also wins after a draw, in at most as many moves. Take a shortest winning line
        from ``P``. The stock is not empty, so some move of the line takes its top card
        ``c``; let ``m`` be the first move of the line that touches the stock or the
        waste, and ``m1 .. mk`` the moves before it. None of these touches the stock or
        the waste: each moves a bar's, a pillar's or a foundation's card onto a bar or a
        foundation (only the waste's or the stock's card may go into a space, and
        nothing goes onto the waste or the stock), and a pillar refills an emptied bar
        as part of the move. So none depends on them, and each is legal after a draw,
        leading to the same bars, pillars and foundations. Either ``m`` is the draw of
        ``c``: then the line draw, ``m1 .. mk``, then the rest wins, one move shorter
        from the draw's position. Or ``m`` puts ``c`` from the stock into a space (the
        waste is empty until a draw): then draw, ``m1 .. mk``, ``c`` from the waste into
        the same space (still empty; the waste's top is now ``c``) reach the position
        after ``m`` in as many moves from the draw's position as the line took from
        ``P``, and the rest wins. Nothing else takes
        ``c`` out of the stock. So the draw's position is won, at no greater distance,
        with one card less in the stock. The steps kept depend on the position alone,
        not on the path to it (a transposition table keeps them right), and from every
        winnable position one of them leads to a winnable position nearer a win, or (this
        draw) as near with a shorter stock, which never grows again (one pass): following
        those steps cannot go round, so it reaches a win, and the search loses none. (A
        safe foundation move, when there is one, comes first: that is :meth:`safe`'s own
        rule, older than this one.)"""
        found, bars, pillars, talon, w = s
        if self.pruning and not w and talon and self.safe(s) is None:
            return [(P.DRAWS, (DRAW,), (found, bars, pillars, talon, 1))]
        steps = super().successors(s)
        if self.runs_move or not self.pruning:
            return steps
        # Each step in its place: the order is by priority alone, a step's pairs the same.
        return [kept for step in steps for kept in self._with_use(s, step)]

    def _with_use(self, s: State, step: Step) -> list[Step]:
        """With ``single_card_moves``, ``step`` (from ``s``) as the search plays it: a card
        down from a foundation (:meth:`_down_for_use`) or, with the full rules, across
        (:meth:`_across_for_use`) together with the moves that use it; any other alone."""
        if step[0] == P.FROM_FOUNDATION:
            return self._down_for_use(step[1][0], step[2])
        if step[0] == P.SETTLED and not self.hasty:
            return self._across_for_use(s, step)
        return [step]

    def _down_for_use(self, down: Cmd, s: State) -> list[Step]:
        """With ``single_card_moves``, a card ``c`` comes down from its foundation only
        together with a move that uses it: ``s`` is the position after ``down`` (``c``
        from ``foundation/f`` onto ``tableau/j``), and the steps are ``down`` then a card
        onto ``c``, or ``down`` then the card it uncovered on ``foundation/f`` onto a bar;
        or ``down``, a second foundation's top ``c1`` onto a bar, and the card ``c1``
        uncovered onto ``c``.

        Proof, against docs/rules.md (Gate, one card at a time): from a winnable position
        ``P``, some step the search keeps reaches a position nearer a win. Take a
        shortest winning line from ``P``. Say a move ``y`` *uses* an earlier move ``m``
        that takes ``c`` from ``foundation/f`` onto the bar ``j`` (onto its top ``t``) if
        ``y`` moves ``c``, puts a card onto ``c``, or takes the card uncovered on
        ``foundation/f``. If ``y`` comes straight after ``m`` and does not use it, the two
        may be played the other way round, to the same position: ``y`` does not take from
        or put onto bar ``j`` (its top is ``c``: a move from it moves ``c``, onto it goes
        onto ``c``), nor take from ``foundation/f`` (its top is the uncovered card), nor
        put onto ``foundation/f`` (only ``c`` may go there next); bar ``j`` is not empty,
        so no refill and no space is in question. So ``y`` is legal before ``m``, moves
        the same card, and ``m`` is still legal after it (``c`` still on top of
        ``foundation/f``, ``t`` still on top of bar ``j``).
        Now let the line begin with ``x1 .. xa``, each a card down from a foundation, then
        ``x(a+1)``, not one (a winning line ends with a card going up). If ``a`` is 0, the
        first move is kept as it is. Otherwise let ``xp`` be the first of ``x2 .. x(a+1)``
        that uses an earlier move of these; if none does, ``x(a+1)`` uses none of
        ``x1 .. xa`` and, swapped forward one place at a time, begins a line as long: a
        kept step. Otherwise ``x1 .. x(p-1)`` use none of each other, so they may be played
        in any order, and those that ``xp`` does not use may be swapped past ``xp``: a
        line as long begins with the one or two moves that ``xp`` uses, then ``xp``. In a
        shortest line ``xp`` does not move a card ``c`` that such an ``m`` brought down:
        ``c`` going back up would leave the position after ``m`` and ``xp`` equal to the
        one before them (a line two shorter), and ``c`` going on to another bar could have
        gone there from its foundation (one shorter; also onto a card just brought down,
        which is then already there). So ``xp`` uses ``m`` by putting a card onto ``c``, or
        by taking the card ``c`` uncovered; it uses at most two such moves, one through the
        pile it takes from, one through the pile it puts onto, so either the line begins
        with ``m`` and ``xp`` (the first two kinds of step kept here), or with two cards
        brought down, ``c`` from ``foundation/f`` and ``c1`` from ``foundation/f1``, and
        ``xp`` taking the card ``c1`` uncovered onto ``c``; either of the two first, the
        third kind of step kept here. Each kept step begins a shortest line and reaches a
        position nearer a win, and it depends on the position alone, not on the path to it
        (a transposition table keeps it right). With the draw alone and the safe move
        (which reach a position as near a win with a shorter stock, and :meth:`safe`'s own
        proof), following such steps from a winnable position cannot go round, so it
        reaches a win, and the search loses none.

        A card that :meth:`safe` would send straight back up (no card still in play could
        be built on it, and bringing it down makes no other card safe) does not come down
        in any of these steps, as before this rule: the position it would reach has that
        safe move as its only step, back to the position it came from (already in the
        transposition table), so every position reachable through it is reachable
        without it. Left in, such steps cost more positions than the rule saves
        (benchmarks/README, branch gs2).

        In hasty mode (the restarts), the same steps with a card onto ``c`` from the
        waste, a pillar or a bar only (where :meth:`moves` lets ``c`` come down at all):
        alone, ``c``'s only hasty step would be straight back up, since a card that can
        go to a foundation goes; so the restarts, which find wins only, never used a
        foundation's card before."""
        f, j = F.index(down[0]), T.index(down[1])
        out: list[Step] = []
        if _low_enough(s[0], s[1][j][-1]):
            return out  # its only step would be back up (safe): the position it came from
        after = self.moves(s)
        for _, c, t in after:
            if self.hasty and (c[1] != T[j] or c[0].startswith("foundation/")):
                continue  # hasty: only the waste's, a pillar's or a bar's card onto it
            if c[1] == T[j] or c[0] == F[f]:
                out.append((P.FROM_FOUNDATION, (down, c), t))
        if self.hasty:
            return out
        found, bars, pillars, talon, w = s
        c = bars[j][-1]
        for f1 in range(4):
            n1 = found[f1]
            if f1 == f or n1 < 2 or card_of(f1, n1 - 1) not in ALT_DOWN[c]:
                continue
            if _low_enough(bump(found, f1, -1), card_of(f1, n1)):
                continue  # the same: that card's only step would be back up
            for _, c1, t1 in after:
                if c1[0] == F[f1]:
                    found1, bars1, pillars1, talon1, w1 = t1
                    out.append((P.FROM_FOUNDATION, (down, c1, (F[f1], T[j], 1)),
                                (bump(found1, f1, -1), _put(bars1, j, (card_of(f1, n1 - 1),)),
                                 pillars1, talon1, w1)))
        return out

    def _across_for_use(self, s: State, step: Step) -> list[Step]:
        """With ``single_card_moves``, a bar's top card ``c`` lying on the card it is
        built on, ``b``, moved across onto ``b``'s twin ``b'`` (the card of the same rank
        and colour: the only other card ``c`` may go onto, one deck) changes nothing but
        which twin holds ``c``. So it comes only together with a move that uses it:
        ``b`` going up or onto a bar, or a card (from the waste, a pillar, another bar or
        a foundation) onto ``b`` or onto ``c``; alone only where a second such move could
        be needed with it (:meth:`_across_alone`). ``step`` is the move (``c`` from
        ``tableau/i`` onto ``tableau/j``) from ``s``.

        Proof, against docs/rules.md (Gate, one card at a time), extending
        :meth:`_down_for_use`'s: call a card down from a foundation and a move across
        *deferrable*, and say a later move ``y`` *uses* a deferrable move ``m`` if ``y``
        takes from or puts onto a pile ``m`` took from or put onto. If ``y`` comes straight
        after ``m`` and does not use it, the two may be played the other way round, to
        the same position: ``m`` changes only its two piles and empties none (``b`` stays
        under ``c``; a card down lands on a bar's card), so ``y`` is legal before it (a
        refill takes from a pillar, a space is filled from the waste or the stock: neither
        is ``m``'s) and ``m`` after it (its card still on top, its target too). Take a
        shortest winning line from a winnable position: ``x1 .. xa`` deferrable, then
        ``x(a+1)`` not (a win ends with a card going up). If ``a`` is 0 the first move is
        kept. Otherwise let ``xp`` be the first of ``x2 .. x(a+1)`` that uses one of the
        moves before it; if none does, ``x(a+1)`` swapped forward begins a line as long
        and is kept. Otherwise ``x1 .. x(p-1)`` use none of each other (their piles are
        apart), so they may be played in any order, and those ``xp`` does not use swapped
        past it: a line as long begins with the one or two moves ``xp`` uses (one through
        the pile it takes from, one through the pile it puts onto), then ``xp``. In a
        shortest line ``xp`` does not move the card such a move ``m`` put down: back where
        it came from is a line two shorter, and anywhere else it could have gone
        straight from where it was (``c`` across: only ``b`` and ``b'`` take it, and a
        foundation, which it could reach from ``b``). So ``xp`` takes the card ``m``
        uncovered (``b``, or a foundation's next card), or puts a card onto the card ``m``
        moved or onto ``b``. If ``xp`` uses one move, that is a kept step: ``m`` across
        then ``xp`` here (or ``m`` alone, where :meth:`_across_alone` keeps it), or a card
        down then ``xp`` (:meth:`_down_for_use`). If it uses two
        and one is a move across, that move may come first, and is kept alone where
        :meth:`_across_alone` says such a second move could exist (it looks for every card
        that the second one could put down or uncover and ``xp`` could use with the
        first); if both are cards down, :meth:`_down_for_use`'s third kind of step. Each
        kept step begins a shortest line, so it reaches a position nearer a win, and it
        depends on the position alone, not on the path to it. With the draw alone and
        the safe move (their own proofs), following such steps from a winnable position
        cannot go round, so it reaches a win, and the search loses none.

        The restarts (hasty) keep the move as it was: paired there, it won 2 more of the
        table's unknown deals but lost 5 of its hard won ones (benchmarks/README, branch
        gs3)."""
        across = step[1][0]
        i, j = across[0], across[1]
        if self._across_alone(s, T.index(i), T.index(j)):
            return [step]
        out: list[Step] = []
        for _, c, t in self.moves(step[2]):
            if c[0] == j:
                continue  # c moved on again
            if c[0] == i or c[1] in (i, j):
                out.append((P.SETTLED, (across, c), t))
        return out

    @staticmethod
    def _across_alone(s: State, i: int, j: int) -> bool:
        """Whether a second deferrable move (:meth:`_across_for_use`) could be used
        together with ``c`` (on ``b``, ``tableau/i``) going across onto ``tableau/j``: a
        card that ``b`` may go onto (one rank higher, the other colour) that a card down
        or a move across off other piles could put down or uncover (a foundation's top,
        a bar's top or the card under it), or a card that may go onto ``b`` or onto
        ``c`` that one could uncover (the card under a foundation's top or under a
        bar's top)."""
        found, bars = s[0], s[1]
        b, c = bars[i][-2], bars[i][-1]
        kids = ALT_DOWN[b] + ALT_DOWN[c]
        for g in range(4):
            n = found[g]
            if n and b in ALT_DOWN[card_of(g, n)]:
                return True
            if n > 1 and card_of(g, n - 1) in kids:
                return True
        for k, p in enumerate(bars):
            if k == i or k == j or not p:
                continue
            if b in ALT_DOWN[p[-1]]:
                return True
            if len(p) > 1 and (b in ALT_DOWN[p[-2]] or p[-2] in kids):
                return True
        return False

    def safe(self, s: State) -> tuple[Cmd, State] | None:
        # Not from a pillar, nor from a bar that a pillar would refill: either changes
        # which pillar refills later spaces.
        found, bars, pillars, talon, w = s
        no_pillars = not pillars[0] and not pillars[1]
        for i, p in enumerate(bars):
            if p and (len(p) > 1 or no_pillars):
                c = p[-1]
                if found[SUIT_OF[c]] == RANK_OF[c] - 1 and _low_enough(found, c):
                    lst = list(bars)
                    lst[i] = p[:-1]
                    return (T[i], F[SUIT_OF[c]], 1), (bump(found, SUIT_OF[c], 1), tuple(lst),
                                                      pillars, talon, w)
        if w:
            c = talon[w - 1]
            if found[SUIT_OF[c]] == RANK_OF[c] - 1 and _low_enough(found, c):
                return (("waste", F[SUIT_OF[c]], 1),
                        (bump(found, SUIT_OF[c], 1), bars, pillars, talon[:w - 1] + talon[w:],
                         w - 1))
        return None
