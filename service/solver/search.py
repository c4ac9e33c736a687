"""The search: depth-first (or, for variants that ask, best-first by score) over the
positions a variant's :class:`Rules` lead to, with a transposition table of canonical
keys, so each position is expanded once. A won line is then shortened where one
step reaches a position further along it.

Winning from a position is reachability of a won position, so a position already
in the table (expanded, or on the current path: a cycle) never needs a second
look. When the whole reachable game has been expanded without a win, the loss is
proved; positions that the variant's dead-position test (:meth:`Rules.dead`) proves
lost are counted but not expanded, and a dead start is lost at once. Nothing is ever
undone: every position is a fresh immutable value.
"""

from __future__ import annotations

import heapq
import itertools
import random
from collections.abc import Callable, Hashable
from typing import Any, Protocol

from . import native as core
from .result import Budget, SolveResult
from .rules import Cmd, Rules, State, command_dict

CHECK_CLOCK_EVERY = 64  # positions between looks at the clock (a look costs about 0.1 µs)


# The restarts (see :func:`search`) of a depth-first search, the first with FIRST_LIMIT
# positions, each next one GROWTH times more. Measured on deals 1..60 at fixed node
# budgets: more deals won in every variant than one long search (Gate with
# single_card_moves at 100,000 positions: 34 -> 49).
FIRST_LIMIT = 300
GROWTH = 1.05
# After each restart, the main search (one table for the whole budget) goes on for this
# share of the restart's positions: it has a fifth of the budget, spread over all of it.
MAIN_SHARE = 0.25
# Best-first variants search best-first (hasty if they can) with this share of the
# budget before the restarts (measured on Shamrocks: as many deals won as restarts
# alone, with shorter lines, in less time: a best-first position costs less).
BEST_FIRST_SHARE = 0.5
# ... and at most this many positions: Shamrocks' hard deals are won by the restarts, not
# by a longer best-first search (its 12 first unknown deals of the tables at 5,000,000
# positions: 7 won either way, with the restarts starting after 200,000 positions
# instead of 2,500,000 each win came 2,300,000 positions sooner).
BEST_FIRST_MAX_NODES = 200_000
# Variants with ``full_best_first`` then search best-first with the full rules (proved
# cuts only, so a loss it finds is proved) with this share of the budget, at most this
# many positions, before the restarts (measured on Shamrocks' 33 unknown deals of the
# table, branch sham4 in benchmarks/README: 468, 591, 742 and 817 won within 160,000
# positions each).
FULL_BEST_FIRST_SHARE = 0.25
FULL_BEST_FIRST_MAX_NODES = 200_000
# Then once more for each of the variant's ``more_best_first`` guides (Rules.guided), the
# full rules each time, with this share of the budget, at most this many positions each
# (measured on Shamrocks, branch sham5 in benchmarks/README: their wins come within
# 200,000 positions or not at all).
MORE_BEST_FIRST_SHARE = 0.05
MORE_BEST_FIRST_MAX_NODES = 200_000
RESTART_SEED = 0  # the restarts' random order is seeded: same budget, same answer


def search(rules: Rules, start: State, budget: Budget, *,
           native: bool | None = None) -> SolveResult:
    """Search from ``start`` within ``budget``: won with a line, proved lost, or unknown.
    Each search runs in the native core (:mod:`.native`) where it was built, unless
    ``native`` is False (the pure-Python reference); both give the same answers.

    Wins in these games are mostly found within a few hundred positions by following
    the variant's move ordering, or not for a long time: one early step that the order
    got wrong holds a depth-first search in a subtree without a win. So a first pass
    restarts: short depth-first searches, the first in the variant's order, the next
    ones each in an order shaken at random (seeded; how far: the variant's ``shake``),
    each allowed a little more than the one before, after a best-first search for the
    variants that search best-first (hasty if they can, then with the full rules for those
    that ask: ``full_best_first``, whose loss is proved; then, the full rules again, by each
    of the variant's ``more_best_first`` guides). Variants with a hasty mode
    restart hastily. A restart that wins answers; one that searches its whole reachable
    game with the full rules (not hasty) has proved the loss. Between restarts, the main
    search, with the full rules in the variant's order, goes on where it stopped
    (:class:`DepthFirst`, :data:`MAIN_SHARE` of each restart's positions): its one table
    lasts the whole budget, so it can prove a loss whenever the game's reachable
    positions fit in its share; when the restarts are done (a hasty game searched whole)
    it has the rest."""
    native = core.AVAILABLE if native is None else native
    if native and not core.AVAILABLE:
        raise RuntimeError(core.MISSING)
    clock = budget.clock
    began = clock()
    if not rules.won(start) and rules.dead_ends and (
            core.dead(rules, start) if native else rules.dead(start)):
        return _spent(SolveResult("lost", (), 0, 0), 1, began, clock)  # proved: Rules.dead
    if rules.hasty or rules.won(start):
        return _search(rules, start, budget, native=native)
    quick = rules.hastily() if rules.has_hasty else rules
    rng = core.generator(RESTART_SEED) if native else random.Random(RESTART_SEED)
    nodes, limit, shaken, searched = 0, float(FIRST_LIMIT), False, False
    if rules.best_first:
        first = _search(quick, start, _part(budget, BEST_FIRST_SHARE, BEST_FIRST_MAX_NODES),
                        native=native)
        nodes += first.nodes
        if first.result == "won" or (first.result == "lost" and not quick.hasty):
            return _spent(first, nodes, began, clock)
        searched = first.result == "lost"
        if rules.full_best_first and quick.hasty:
            full = _search(rules, start,
                           _part(budget, FULL_BEST_FIRST_SHARE, FULL_BEST_FIRST_MAX_NODES),
                           native=native)
            nodes += full.nodes
            if full.result != "unknown":  # the full rules: a loss is proved
                return _spent(full, nodes, began, clock)
            for guide in rules.more_best_first:  # the same, in other orders
                left = budget.max_nodes - nodes
                if left < 1:
                    break
                more = _search(rules.guided(guide), start,
                               _part(budget, MORE_BEST_FIRST_SHARE,
                                     min(MORE_BEST_FIRST_MAX_NODES, left)), native=native)
                nodes += more.nodes
                if more.result != "unknown":
                    return _spent(more, nodes, began, clock)
    # The main search: full rules, the variant's order, one table for the whole budget.
    main: Resumable | None = None
    main_nodes = 0
    restarting = not searched
    while True:
        if restarting:
            nodes_left = min(int(limit), budget.max_nodes - nodes - main_nodes)
            seconds_left = budget.max_seconds - (clock() - began)
            if nodes_left < 1 or seconds_left <= 0:
                break
            first = _search(quick, start, Budget(nodes_left, seconds_left, clock),
                            rng if shaken else None, depth_first=True, native=native)
            nodes += first.nodes
            if first.result == "won" or (first.result == "lost" and not quick.hasty):
                return _spent(first, nodes + main_nodes, began, clock)
            # The whole hasty game searched: in any order, the same positions; the main
            # search has what is left.
            restarting = first.result != "lost"
            shaken = True
        left = budget.max_nodes - nodes - main_nodes - (main is None)  # its start counts
        turn = min(max(1, int(limit * MAIN_SHARE)), left) if restarting else left
        if turn < 1 or clock() - began >= budget.max_seconds:
            break
        if main is None:
            main = core.depth_first(rules, start) if native else DepthFirst(rules, start)
        result, line, main_nodes = main.run(main.nodes + turn, began + budget.max_seconds,
                                            clock)
        if result != "unknown":
            commands = tuple(command_dict(c) for step in line for c in step)
            return _spent(SolveResult(result, commands, 0, 0), nodes + main_nodes, began, clock)
        limit *= GROWTH
    return _spent(SolveResult("unknown", (), 0, 0), nodes + main_nodes, began, clock)


class Resumable(Protocol):
    """:class:`DepthFirst`, or the core's."""

    nodes: int

    def run(self, max_nodes: int, deadline: float,
            clock: Callable[[], float]) -> tuple[str, list[tuple[Cmd, ...]], int]: ...


def _part(budget: Budget, share: float, most: int) -> Budget:
    """``share`` of ``budget``, at most ``most`` positions (at least one)."""
    return Budget(max(1, min(int(budget.max_nodes * share), most)), budget.max_seconds * share,
                  budget.clock)


def _spent(result: SolveResult, nodes: int, began: float,
           clock: Callable[[], float]) -> SolveResult:
    """``result`` with the nodes and time of the whole search."""
    return SolveResult(result.result, result.commands, nodes, int((clock() - began) * 1000))


def _shaken(steps_of: Callable[[State], list[Any]], rng: core.Shaker,
            spread: float) -> Callable[[State], list[Any]]:
    """``steps_of`` with each list of steps shaken: each step's rank gets a uniform
    draw in [0, ``spread``) added before they are sorted again (see Rules.shake)."""
    def shaken(s: State) -> list[Any]:
        steps = steps_of(s)
        if len(steps) < 2:
            return steps
        rank = [i + spread * rng.random() for i in range(len(steps))]
        return [steps[i] for i in sorted(range(len(steps)), key=rank.__getitem__)]
    return shaken


def _search(rules: Rules, start: State, budget: Budget, rng: core.Shaker | None = None,
            depth_first: bool = False, native: bool = False) -> SolveResult:
    """One search: depth-first (with ``rng``, in a shaken order), or best-first for
    variants that ask and unless ``depth_first``; in the native core if ``native``."""
    clock = budget.clock
    began = clock()
    deadline = began + budget.max_seconds
    max_nodes = budget.max_nodes

    def done(result: str, line: list[tuple[Cmd, ...]], nodes: int) -> SolveResult:
        commands = tuple(command_dict(c) for step in line for c in step)
        elapsed_ms = int((clock() - began) * 1000)
        return SolveResult(result, commands, nodes, elapsed_ms)

    if rules.won(start):
        return done("won", [], 0)
    if native:
        return done(*core.run(rules, start, max_nodes, deadline, clock, rng,
                              depth_first or not rules.best_first))
    if rules.best_first and not depth_first:
        return _best_first(rules, start, max_nodes, deadline, clock, done)
    result, line, nodes = DepthFirst(rules, start, rng).run(max_nodes, deadline, clock)
    return done(result, line, nodes)


class DepthFirst:
    """A depth-first search (with ``rng``, in a shaken order) that a budget pauses and a
    later :meth:`run` resumes, its transposition table and path kept: so one search can
    last a whole budget, taking turns with others, and still prove a loss.

    "Do not move back to the pile just moved from", in the form that is sound for every
    variant: a step whose position is exactly the one the search just came from (the same
    card or run moved straight back, where the move turned no card up, refilled no bar
    and emptied no fan for good) is left out before its position is hashed. That
    position is on the search's path, so in its table, which would skip it anyway: no
    answer and no count of positions changes, a hash is saved. The looser rule, "not back
    while neither pile has changed since", depends on the path that led to a position,
    and a transposition table keeps only the first path to each: it could leave a
    position unsearched and a loss unproved, so it is not used."""

    def __init__(self, rules: Rules, start: State, rng: core.Shaker | None = None) -> None:
        self.rules, self.start = rules, start
        self.seen: set[Hashable] = {rules.key(start)}
        self.steps_of: Callable[[State], list[Any]] = rules.steps
        # Positions Rules.dead proves lost are counted, not searched (the start is
        # tested by search()).
        self.cut_dead = rules.dead_ends and rules.dead_in_search
        if rng is not None:
            self.steps_of = _shaken(rules.steps, rng, rules.shake)
        self.nodes = 1
        self.stack: list[tuple[list[Any], int]] | None = None  # made by the first run
        self.line: list[tuple[Cmd, ...]] = []
        self.path: list[State] = [start]
        # The position (and its commands) counted when a budget paused the search, entered
        # by the next run: it is in the table, so it would otherwise never be searched.
        self.pending: tuple[State, tuple[Cmd, ...]] | None = None

    def run(self, max_nodes: int, deadline: float,
            clock: Callable[[], float]) -> tuple[str, list[tuple[Cmd, ...]], int]:
        """On until ``max_nodes`` positions are counted in all runs, or ``clock`` passes
        ``deadline``: (result, the won line, positions counted in all)."""
        rules, seen, line, path = self.rules, self.seen, self.line, self.path
        key, won, play, commands = rules.key, rules.won, rules.play, rules.commands
        steps_of = self.steps_of
        if self.stack is None:
            if max_nodes <= self.nodes:
                return "unknown", [], self.nodes
            self.stack = [(steps_of(self.start), 0)]
        stack = self.stack
        cut_dead, dead = self.cut_dead, rules.dead
        if self.pending is not None:
            child, cmds = self.pending
            self.pending = None
            if not (cut_dead and dead(child)):
                line.append(cmds)
                path.append(child)
                stack.append((steps_of(child), 0))
        nodes = self.nodes
        try:
            while stack:
                steps, at = stack[-1]
                if at == len(steps):
                    stack.pop()
                    if line:
                        line.pop()
                        path.pop()
                    continue
                stack[-1] = (steps, at + 1)
                step = steps[at]
                child = play(path[-1], step)
                if len(path) > 1 and child == path[-2]:
                    continue  # moved straight back (see the class's docstring)
                size = len(seen)
                seen.add(key(child))  # one hash per key: a tuple does not keep its hash
                if len(seen) == size:
                    continue
                nodes += 1
                cmds = commands(step)
                if won(child):
                    return "won", shortcut(rules, path + [child], line + [cmds], deadline,
                                           clock), nodes
                if nodes >= max_nodes or (nodes % CHECK_CLOCK_EVERY == 0
                                           and clock() > deadline):
                    self.pending = (child, cmds)
                    return "unknown", [], nodes
                if cut_dead and dead(child):
                    continue
                line.append(cmds)
                path.append(child)
                stack.append((steps_of(child), 0))
            return "lost", [], nodes
        finally:
            self.nodes = nodes


Done = Callable[[str, list[tuple[Cmd, ...]], int], SolveResult]


def _best_first(rules: Rules, start: State, max_nodes: int, deadline: float,
                clock: Callable[[], float], done: Done) -> SolveResult:
    """Always expand the open position of highest score (oldest first on ties); each
    position's parent is kept to rebuild the line."""
    key, won, successors = rules.key, rules.won, rules.successors
    # the variant's own score called directly, not through guide_score's choice per position
    score = rules.score if rules.guide == "score" else rules.guide_score
    cut_dead, dead = rules.dead_ends and rules.dead_in_search, rules.dead
    start_key = key(start)
    parent: dict[Hashable, tuple[Hashable, tuple[Cmd, ...]] | None] = {start_key: None}
    tick = itertools.count()
    heap: list[tuple[int, int, State, Hashable]] = [(-score(start), next(tick), start, start_key)]
    nodes = 1
    if max_nodes <= 1:
        return done("unknown", [], nodes)
    while heap:
        _, _, state, state_key = heapq.heappop(heap)
        for _, cmds, child in successors(state):
            k = key(child)
            if k in parent:
                continue
            parent[k] = (state_key, cmds)
            nodes += 1
            if won(child):
                line: list[tuple[Cmd, ...]] = []
                link = parent[k]
                while link is not None:
                    line.append(link[1])
                    link = parent[link[0]]
                line.reverse()
                return done("won", line, nodes)
            if nodes >= max_nodes or (nodes % CHECK_CLOCK_EVERY == 0
                                       and clock() > deadline):
                return done("unknown", [], nodes)
            if cut_dead and dead(child):
                continue  # counted, not searched: Rules.dead proves it lost
            heapq.heappush(heap, (-score(child), next(tick), child, k))
    return done("lost", [], nodes)


def shortcut(rules: Rules, states: list[State], line: list[tuple[Cmd, ...]],
             deadline: float, clock: Callable[[], float]) -> list[tuple[Cmd, ...]]:
    """A line no longer than ``line`` (which leads through ``states``, from the start to
    a win): wherever one step from a position reaches a position further along,
    the steps in between are left out. Stops shortening (not the line) at ``deadline``
    by ``clock``."""
    # Exact positions, not keys: a key forgets which pile is which (and Gilbert's waste
    # pointer), and the rest of the line names piles.
    at = {s: i for i, s in enumerate(states)}
    out: list[tuple[Cmd, ...]] = []
    i = 0
    while i < len(line):
        best, via = i + 1, line[i]
        if clock() < deadline:
            for _, cmds, child in rules.successors(states[i]):
                j = at.get(child, -1)
                if j > best:
                    best, via = j, cmds
        out.append(via)
        i = best
    return out
