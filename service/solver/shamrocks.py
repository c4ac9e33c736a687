"""Shamrocks for the search.

Position: ``(found, fans)``: ``found[s]`` counts the cards on ``foundation/s``,
``fans[i]`` the cards of ``tableau/i`` bottom to top. The fans are interchangeable
(an empty fan stays empty whatever its index): the key sorts them.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import Any

from service.engine import Pile

from .build import ADJ_ANY
from .cards import RANK_OF, SUIT_OF, card_of
from .dead import Where, lower, stay_stuck
from .foundations import bump
from .rules import Cmd, F, P, Rules, State, Step, T, codes

# The kinds of the search's steps (see Shamrocks._steps); COMBINED plays two or three
# moves as one step (Shamrocks._combined).
UP, BACK, ACROSS, COMBINED = range(4)
# More combined steps than this from one position (never seen): the moves themselves
# instead, a set of steps as sound (Shamrocks._steps); the core's SH_COMBINED_MAX.
COMBINED_MAX = 2000


class Shamrocks(Rules):
    variant_id = "shamrocks"
    best_first = True
    full_best_first = True  # measured: more deals won within a budget (benchmarks/README, sham4)
    # Then by these guides (:meth:`other_score`), the full rules each time: measured on the
    # table's unknown deals, each wins a few that no other order wins (benchmarks/README, sham5).
    more_best_first = ("count", "buried", "full_fans")
    has_hasty = True  # measured: more deals won within a budget
    dead_in_search = True

    def dead(self, s: State) -> bool:
        """Some cards can never leave their fans (so never reach a foundation).

        The test (a greatest fixpoint): start with the set ``C`` of every card in a fan;
        then, again and again, drop from ``C`` each card ``y`` that (i) has no lower card
        of its suit lying below a card of ``C`` (in its fan), or (ii) is one rank away
        from a *possible landing* (the set ``L``), until none is dropped. Dead if ``C`` is
        then not empty. ``L`` holds (a) every card at index 0 or 1 of its fan (from the
        bottom) that lies below no card of ``C``, and (b) every card one rank away from a
        card at index 0 of (a) (a *bottom*), unless it lies below a card of ``C`` or is
        itself in ``C``.

        Proof, against docs/rules.md (Shamrocks: one card moves at a time, onto a fan
        whose top is one rank higher or lower when the fan holds fewer than three cards,
        or by suit up from the Ace onto a foundation; an empty fan stays empty). Two
        facts first. A card keeps its index in its fan for as long as it stays there
        (the cards below it move only after it). And the card at index 0 of a fan is the
        one dealt there, never a card that moved: a card moves onto a fan holding a card
        (an empty fan takes nothing), so it lands at index 1 or 2.

        Take any game from here, and the time ``t`` of the first move that takes a card
        of ``C`` out of its fan (all time if none does). Before ``t`` no card of ``C``
        moves, so a card below one of them stays below it: never a top, never moved.

        Lemma: a card ``z`` that is the top of a fan of one or two cards at some time
        ``u`` <= ``t`` is in ``L``. If ``z`` has not moved by then, it lies below no card
        of ``C`` (it is a top) at index 0 or 1: (a). Otherwise its last move before ``u``
        put it, at index 1 (its fan holds at most two cards at ``u``), onto the top ``w``
        of a fan of one card, one rank away: ``w`` is at index 0, so it never moved, and,
        a top then, lies below no card of ``C``: a bottom of (a). And ``z``, having moved
        (from a fan, as a top, or from a foundation), is neither in ``C`` nor below a
        card of ``C``: (b).

        Now suppose the move at ``t`` exists, taking card ``y`` of ``C``. Not to a
        foundation: by (i) a lower card of its suit is still below a card of ``C``, so
        that foundation has not reached it. So onto another fan, whose top ``z``, one
        rank away, is the top of a fan of one or two cards: ``z`` is in ``L`` (the
        lemma), and by (ii) ``y`` would have been dropped from ``C``. A contradiction: no
        card of ``C`` ever leaves its fan, and the game cannot be won."""
        fans = s[1]
        where: Where = {c: (i, k) for i, p in enumerate(fans) for k, c in enumerate(p)}

        def landings(stuck: set[int], under: Callable[[int], bool]) -> set[int]:
            bottoms = {z for z, (_, k) in where.items() if k == 0 and not under(z)}
            possible = bottoms | {z for z, (_, k) in where.items() if k == 1 and not under(z)}
            possible |= {z for w in bottoms for z in ADJ_ANY[w]
                         if not under(z) and z not in stuck}
            return possible

        def kept_off(y: int, under: Callable[[int], bool]) -> bool:
            return any(under(x) for x in lower(y))

        return stay_stuck(set(where), where, ADJ_ANY.__getitem__, landings, kept_off)

    def score(self, s: State) -> int:
        """Four points a card on the foundations, less one for each card lying above a
        suit's next card (the lowest card of its suit not yet up): the best-first searches'
        guide (the depth-first order goes by the foundations' count, the steps' ``gain``).
        Measured on the table's 33 unknown deals (branch sham4, benchmarks/README): the
        hasty best-first search at 1,000,000 positions won 164, 406 and 742 with it; by
        the foundations' count alone, none of the eight tried (406 and 742 among them)."""
        found, fans = s
        out = 4 * sum(found)
        for p in fans:
            for k, c in enumerate(p):
                if RANK_OF[c] == found[SUIT_OF[c]] + 1:
                    out -= len(p) - 1 - k
        return out

    def other_score(self, s: State) -> int:
        """:meth:`score`, less more (the guides ``buried`` and ``full_fans``, other orders of
        the best-first search; the core's score_of). ``buried``: less one for each card
        lying above a lower card of its suit in its fan (the higher card has to move off
        before the lower one can go up). ``full_fans``: less two for each fan of three
        cards (it takes no card)."""
        out = self.score(s)
        if self.guide == "full_fans":
            return out - 2 * sum(len(p) == 3 for p in s[1])
        for p in s[1]:
            for k, c in enumerate(p):
                out -= sum(SUIT_OF[d] == SUIT_OF[c] and RANK_OF[d] > RANK_OF[c] for d in p[k + 1:])
        return out

    def from_piles(self, piles: Mapping[str, Pile]) -> State:
        return (tuple(len(piles[f].up) for f in F[:4]), tuple(codes(piles[t].up) for t in T[:18]))

    def key(self, s: State) -> Hashable:
        return (s[0], tuple(sorted(s[1])))

    # The search's steps are small tuples ``(priority, gain, kind, x, y)``, the position
    # built only when the search gets to it (:meth:`play`); ``gain`` is how much the step
    # raises the foundations' count (the depth-first order). Kinds: UP (fan ``x`` to foundation
    # ``y``), BACK (foundation ``x`` to fan ``y``), ACROSS (fan ``x`` to fan ``y``).

    def _steps(self, s: State, prune: bool = False) -> list[Any]:
        """Every legal move, as steps; with ``prune``, none that moves the only card of a
        fan onto another fan.

        Proof that such a move is never part of a shortest win (so leaving it out loses
        no win, and the search still proves losses), against docs/rules.md (one card
        moves at a time, onto a fan of fewer than three cards whose top is one rank away,
        or onto its foundation; a foundation's top may come back onto such a fan; an empty
        fan stays empty). Say the move takes ``z``, alone on fan ``A``, onto fan ``B``.
        Compare two positions: ``Q``, with a stack of cards ``S`` (not empty) alone on
        fan ``A``, and ``Q'``, the same but with ``S`` on top of fan ``B``'s cards and
        ``A`` empty (right after the move, ``S`` is ``z``). Every move from ``Q'`` has a
        move from ``Q`` that leads to a pair of the same kind or to the same position: a
        move that touches neither ``B``'s top nor ``S`` is legal in both; taking ``S``'s
        top card (to a foundation or a fan) is legal in ``Q`` too, and when it was
        ``S``'s last card both positions are the same; putting a card on ``S``'s top is
        legal in ``Q`` (``A`` holds fewer cards than ``B`` with ``S``, so fewer than
        three), and ``S`` grows in both. Both are won once the foundations hold every
        card. So a win of ``n`` moves from ``Q'`` gives one of ``n`` moves from ``Q``,
        and a win through the move has a shorter one without it."""
        found, fans = s
        out: list[Any] = []
        targets: dict[int, list[int]] = {}
        for j, p in enumerate(fans):
            if 0 < len(p) < 3:
                for c in ADJ_ANY[p[-1]]:
                    targets.setdefault(c, []).append(j)
        for f in range(4):
            n = found[f]
            if n:
                for j in targets.get(card_of(f, n), ()):
                    out.append((P.FROM_FOUNDATION, -1, BACK, f, j))
        for i, p in enumerate(fans):
            if not p:
                continue
            c = p[-1]
            s_ = SUIT_OF[c]
            if found[s_] == RANK_OF[c] - 1:
                out.append((P.TO_FOUNDATION, 1, UP, i, s_))
            if prune and len(p) == 1:
                continue
            for j in targets.get(c, ()):
                if j != i:
                    prio = (P.REVEALS if len(p) == 1 else P.SETTLED if c in ADJ_ANY[p[-2]]
                            else P.TABLEAU)
                    out.append((prio, 0, ACROSS, i, j))
        return out

    def steps(self, s: State) -> list[Any]:
        steps = self._steps(s, self.pruning)
        if self.hasty:
            for step in steps:
                if step[2] == UP:
                    return [step]
        if self.pruning and not self.hasty:  # the main search (_combined)
            steps = self._combined(s, steps)
        steps.sort(key=_order)  # higher score reached first, then lower priority
        return steps

    def _combined(self, s: State, steps: list[Any]) -> list[Any]:
        """``steps`` (from :meth:`_steps`, pruned) with each move of a fan's top card ``c``
        from fan ``A`` onto fan ``B`` played only together with a later move that *uses*
        it: ``c`` across, then a move that takes from ``A`` or puts onto ``A`` or ``B``
        (not one that moves ``c`` again); or ``c`` across, a second top card ``c2``
        across from fan ``A2`` onto fan ``B2`` (four different fans), then the card
        ``c`` uncovered on ``A`` onto ``A2``'s or ``B2``'s new top.

        Proof, against docs/rules.md (Shamrocks: one card at a time; a fan's top card
        goes onto its foundation, or onto another fan of fewer than three cards whose top
        is one rank away; a foundation's top may come back onto such a fan; an empty fan
        takes nothing). From a winnable position ``P``, some step kept here begins a
        shortest winning line, so following kept steps reaches a win and the search
        loses none (the steps depend on the position alone, so a transposition table
        keeps it right). Call a move of ``c`` from ``A`` onto ``B`` an *across* move, and
        say a later move *touches* it if it takes from or puts onto ``A`` or ``B``.

        Commuting: if ``y`` comes straight after the across move ``m`` and touches
        neither ``A`` nor ``B``, the two may be played the other way round, to the same
        position. ``y`` takes from and puts onto other fans or foundations, which ``m``
        leaves as they were, so it is legal before ``m``; and after ``y``, ``c`` is still
        ``A``'s top and ``B`` still holds the same cards, so ``m`` is legal; the two
        change different piles.

        Take a shortest winning line from ``P``, ``x1 .. xn``; say ``x1 .. xa`` are
        across moves and ``x(a+1)`` is not (a winning line ends with a card going up).
        If ``a`` is 0, ``x1`` is kept as it is. Otherwise let ``xk`` be the first of
        ``x2 .. x(a+1)`` that touches an earlier move of these. If none does, their fans
        are four different ones for each pair, so ``x(a+1)``, swapped forward one place
        at a time, begins a line as long: kept. Otherwise ``x1 .. x(k-1)`` move on
        different fans, two each, so they may be played in any order; ``xk`` touches one
        or two of them (it takes from one pile and puts onto one), and those it does not
        touch may be swapped past it: a line as long begins with the one or two across
        moves ``xk`` touches, then ``xk``. In a shortest line ``xk`` does not move a card
        ``c`` that such a move put onto ``B``: back onto ``A``, the position would be
        one from before (two moves shorter); to a foundation or onto another fan,
        ``c`` could have gone there from ``A`` (one shorter). So with one such move, the
        line begins with ``c`` across and a move that uses it, kept here. With two,
        ``c`` from ``A`` onto ``B`` and ``c2`` from ``A2`` onto ``B2``, ``xk`` takes from
        one fan of one move and puts onto one of the other's: not ``c`` or ``c2`` (above),
        so it takes the card that one of them uncovered, say on ``A`` (the two across
        moves in either order), onto ``A2`` or ``B2``: kept here. A reordered line is
        still a shortest win, so none of its moves takes a lone card across
        (:meth:`_steps`): the steps combined here are pruned the same way. A move across
        after which the position is dead (:meth:`dead`, with ``dead_ends``) is left out
        with its uses: every position after it is lost.

        The restarts (hasty) keep the moves as they are. With these steps in the restarts
        too, the table's first 1,000 deals had 31 unknown instead of 33, but the hint bot
        won 161 of 200 deals instead of 181: the hints' short searches are mostly restarts,
        and the steps' order led them astray (benchmarks/README, branch sham3 and after)."""
        out: list[Any] = []
        for st in steps:
            if st[2] != ACROSS:
                out.append(st)
                continue
            a, b = st[3], st[4]
            m = (ACROSS, a, b)
            s1 = self.play(s, st)
            if self.dead_ends and self.dead(s1):
                continue  # lost (the dead test): so is every position after it
            after = self._steps(s1, True)
            for y in after:
                kind, x, z = y[2:]
                if (x == a if kind == UP else z in (a, b) if kind == BACK
                        else x != b and (x == a or z in (a, b))):
                    out.append((st[0], st[1] + y[1], COMBINED, (m, (kind, x, z))))
                    if len(out) > COMBINED_MAX:
                        return steps
            fans = s1[1]
            if len(fans[a]) < 2:
                continue  # the card c uncovered lies alone: it does not go across
            u = fans[a][-1]
            for y in after:
                a2, b2 = y[3], y[4]
                if y[2] != ACROSS or a2 in (a, b) or b2 in (a, b):
                    continue
                for j in sorted((a2, b2)):
                    top = fans[a2][-2] if j == a2 else fans[a2][-1]  # after c2 across
                    if (j == a2 or len(fans[b2]) == 1) and top in ADJ_ANY[u]:
                        out.append((st[0], 0, COMBINED, (m, (ACROSS, a2, b2), (ACROSS, a, j))))
                        if len(out) > COMBINED_MAX:
                            return steps
        return out

    def play(self, s: State, step: Any) -> State:
        if step[2] == COMBINED:
            for part in step[3]:
                s = self._play(s, part)
            return s
        return self._play(s, step[2:])

    def _play(self, s: State, part: tuple[int, int, int]) -> State:
        found, fans = s
        kind, x, y = part
        lst = list(fans)
        if kind == BACK:
            lst[y] = lst[y] + (card_of(x, found[x]),)
            return (bump(found, x, -1), tuple(lst))
        lst[x] = fans[x][:-1]
        if kind == UP:
            return (bump(found, y, 1), tuple(lst))
        lst[y] = lst[y] + (fans[x][-1],)
        return (found, tuple(lst))

    def commands(self, step: Any) -> tuple[Cmd, ...]:
        if step[2] == COMBINED:
            return tuple(c for part in step[3] for c in _commands(part))
        return _commands(step[2:])

    def moves(self, s: State) -> list[tuple[int, Cmd, State]]:
        return [(st[0], self.commands(st)[0], self.play(s, st)) for st in self._steps(s)]

    def successors(self, s: State) -> list[Step]:
        return [(st[0], self.commands(st), self.play(s, st)) for st in self.steps(s)]


def _commands(part: tuple[int, int, int]) -> tuple[Cmd, ...]:
    kind, x, y = part
    if kind == BACK:
        return ((F[x], T[y], 1),)
    return ((T[x], F[y] if kind == UP else T[y], 1),)


def _order(step: tuple[Any, ...]) -> tuple[int, int]:
    return (-step[1], step[0])
