"""The search: depth-first (or, for variants that ask, best-first by score) over the
positions a variant's :class:`Rules` lead to, with a transposition table of canonical
keys, so each position is expanded once. A won line is then shortened where one
step reaches a position further along it.

Winning from a position is reachability of a won position, so a position already
in the table (expanded, or on the current path: a cycle) never needs a second
look. When the whole reachable game has been expanded without a win, the loss is
proved. Nothing is ever undone: every position is a fresh immutable value.
"""

from __future__ import annotations

import heapq
import itertools
import time
from collections.abc import Callable, Hashable
from typing import Any

from .result import Budget, SolveResult
from .rules import Cmd, Rules, State, command_dict

CHECK_CLOCK_EVERY = 64  # positions between looks at the clock (a look costs about 0.1 µs)


def search(rules: Rules, start: State, budget: Budget) -> SolveResult:
    """Search from ``start`` within ``budget``: won with a line, proved lost, or unknown.

    For variants with a hasty mode, a hasty search first, with half the budget: if it
    wins, that is the answer; if not, the full search, with what is left of the budget,
    answers (only the full search proves a loss)."""
    if not rules.has_hasty or rules.hasty or rules.won(start):
        return _search(rules, start, budget)
    first = _search(rules.hastily(), start, Budget(max(1, budget.max_nodes // 2),
                                                   budget.max_seconds / 2))
    if first.result == "won":
        return first
    nodes_left = budget.max_nodes - first.nodes
    seconds_left = budget.max_seconds - first.elapsed_ms / 1000
    if nodes_left <= 1 or seconds_left <= 0:
        return SolveResult("unknown", (), first.nodes, first.elapsed_ms)
    rest = _search(rules, start, Budget(nodes_left, seconds_left))
    return SolveResult(rest.result, rest.commands, first.nodes + rest.nodes,
                       first.elapsed_ms + rest.elapsed_ms)


def _search(rules: Rules, start: State, budget: Budget) -> SolveResult:
    began = time.perf_counter()
    deadline = began + budget.max_seconds
    max_nodes = budget.max_nodes

    def done(result: str, line: list[tuple[Cmd, ...]], nodes: int) -> SolveResult:
        commands = tuple(command_dict(c) for step in line for c in step)
        elapsed_ms = int((time.perf_counter() - began) * 1000)
        return SolveResult(result, commands, nodes, elapsed_ms)

    if rules.won(start):
        return done("won", [], 0)
    if rules.best_first:
        return _best_first(rules, start, max_nodes, deadline, done)
    seen: set[Hashable] = {rules.key(start)}
    key, won, steps_of = rules.key, rules.won, rules.steps
    play, commands = rules.play, rules.commands
    nodes = 1
    if max_nodes <= 1:
        return done("unknown", [], nodes)
    stack: list[tuple[list[Any], int]] = [(steps_of(start), 0)]
    line: list[tuple[Cmd, ...]] = []
    path: list[State] = [start]
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
        size = len(seen)
        seen.add(key(child))  # one hash per key: a tuple does not keep its hash
        if len(seen) == size:
            continue
        nodes += 1
        cmds = commands(step)
        if won(child):
            return done("won", shortcut(rules, path + [child], line + [cmds], deadline), nodes)
        if nodes >= max_nodes or (nodes % CHECK_CLOCK_EVERY == 0
                                   and time.perf_counter() > deadline):
            return done("unknown", [], nodes)
        line.append(cmds)
        path.append(child)
        stack.append((steps_of(child), 0))
    return done("lost", [], nodes)


Done = Callable[[str, list[tuple[Cmd, ...]], int], SolveResult]


def _best_first(rules: Rules, start: State, max_nodes: int, deadline: float,
                done: Done) -> SolveResult:
    """Always expand the open position of highest score (oldest first on ties); each
    position's parent is kept to rebuild the line."""
    key, won, successors, score = rules.key, rules.won, rules.successors, rules.score
    start_key = key(start)
    parent: dict[Hashable, tuple[Hashable, tuple[Cmd, ...]] | None] = {start_key: None}
    tick = itertools.count()
    heap: list[tuple[int, int, State, Hashable]] = [(-score(start), next(tick), start, start_key)]
    nodes = 1
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
                                       and time.perf_counter() > deadline):
                return done("unknown", [], nodes)
            heapq.heappush(heap, (-score(child), next(tick), child, k))
    return done("lost", [], nodes)


def shortcut(rules: Rules, states: list[State], line: list[tuple[Cmd, ...]],
             deadline: float) -> list[tuple[Cmd, ...]]:
    """A line no longer than ``line`` (which leads through ``states``, from the start to
    a win): wherever one step from a position reaches a position further along,
    the steps in between are left out. Stops shortening (not the line) at ``deadline``."""
    # Exact positions, not keys: a key forgets which pile is which (and Gilbert's waste
    # pointer), and the rest of the line names piles.
    at = {s: i for i, s in enumerate(states)}
    out: list[tuple[Cmd, ...]] = []
    i = 0
    while i < len(line):
        best, via = i + 1, line[i]
        if time.perf_counter() < deadline:
            for _, cmds, child in rules.successors(states[i]):
                j = at.get(child, -1)
                if j > best:
                    best, via = j, cmds
        out.append(via)
        i = best
    return out
