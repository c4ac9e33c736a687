"""Invariants over random games: thousands of seeded random games per variant.

Each configuration (variant and options) is played once per module: many short
games (the opening, where most deals differ), fewer long ones (the end of the
stock, turn-overs, lost games), and the random games pinned in the perft data files
(each lost along the way: a Gilbert game is rarely lost in random play). All have
fixed seeds, so a failure repeats.
Every assertion message names the game (``deal seed``, ``walk``) and the step; to
repeat a random game::

    python -c "from tests.engine.test_properties import repeat
    print(repeat('gilbert:long:3').log())"

then ``replay(variant, seed, options, [from_json(c) for c in log])`` reproduces it
(``replay`` and ``from_json`` of :mod:`tests.commands`).
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from typing import Any

import pytest

from service.engine import (
    DRAW,
    RESIGN,
    UNDO,
    BadCommand,
    Command,
    Draw,
    Game,
    IllegalCommand,
    Move,
    Pile,
    Position,
    Status,
)
from service.engine.movegen import check_move, has_legal_move, legal_moves
from tests.commands import from_json, legal_commands, replay, to_json

from .helpers import (
    CONFIGS,
    Step,
    all_cards,
    apply_ops,
    assert_message_hides,
    config_id,
    full_deck,
    hidden_cards,
    layout_commands,
    random_command,
    through_snapshot,
    walk,
)
from .make_data import DATA

SHORT_GAMES, SHORT_STEPS = 2000, 5  # per configuration
LONG_GAMES, LONG_STEPS = 40, 180
EXHAUSTIVE_EVERY = (
    150  # in long games, check every command over the layout at one step in this many
)


@dataclass
class Played:
    """One random game: how to repeat it, and every step."""

    config: tuple[str, dict[str, Any]]
    seed: int
    walk: str
    steps: list[Step] = field(default_factory=list)

    @property
    def variant_id(self) -> str:
        return self.config[0]

    @property
    def options(self) -> dict[str, Any]:
        return self.config[1]

    def where(self, step: Step | None = None) -> str:
        at = f" step {step.index} ({step.command})" if step is not None else ""
        return f"{config_id(self.config)} deal seed {self.seed}, walk {self.walk!r}{at}"

    def start(self) -> Game:
        return Game.deal(self.variant_id, self.seed, self.options)

    def final(self) -> Game:
        return self.steps[-1].after if self.steps else self.start()

    def log(self) -> list[dict[str, Any]]:
        return [to_json(s.command) for s in self.steps]


def _deal_seed(k: int) -> int:
    # Small seeds, and seeds at the top of the range, both exercised.
    return k if k % 5 else 2**53 - 1 - k


def _play_one(config: tuple[str, dict[str, Any]], k: int, max_steps: int, tag: str) -> Played:
    variant_id, options = config
    key = f"{config_id(config)}:{tag}:{k}"
    rng = random.Random(key)
    played = Played(config, _deal_seed(k), key)
    draw_rate = rng.choice([0.0, 0.3, 0.7] if max_steps < 50 else [0.3, 0.7])
    for step in walk(
        variant_id,
        options,
        played.seed,
        rng,
        max_steps=max_steps,
        draw_rate=draw_rate,
        undo_rate=0.06,
        resign_rate=0.1 / max_steps,
        to_foundation_rate=0.3,
    ):
        played.steps.append(step)
    return played


def _play(
    config: tuple[str, dict[str, Any]], games: int, max_steps: int, tag: str
) -> Iterator[Played]:
    for k in range(games):
        yield _play_one(config, k, max_steps, tag)


def repeat(walk_key: str) -> Played:
    """The random game an assertion message names by its walk, e.g. ``repeat("gilbert:long:3")``;
    ``.log()`` is its command log, ``.steps`` every step."""
    name, tag, k = walk_key.rsplit(":", 2)
    config = next(c for c in CONFIGS if config_id(c) == name)
    return _play_one(config, int(k), SHORT_STEPS if tag == "short" else LONG_STEPS, tag)


def _pinned(config: tuple[str, dict[str, Any]]) -> Iterator[Played]:
    """The games of the perft data file with these options: long, and lost along the way
    (a Gilbert game is rarely lost in random play)."""
    variant_id, options = config
    records = json.loads((DATA / f"perft_{variant_id}.json").read_text())["games"]
    for i, record in enumerate(records):
        if record["options"] == options and record["policy"] == "random":
            played = Played(config, record["seed"], f"long: perft_{variant_id}.json game {i}")
            game = played.start()
            for index, data in enumerate(record["commands"]):
                command = from_json(data)
                after, diff = game.apply(command)
                played.steps.append(Step(index, game, command, after, diff))
                game = after
            yield played


@pytest.fixture(scope="module", params=CONFIGS, ids=config_id)
def games(request) -> list[Played]:
    config = request.param
    return [
        *_play(config, SHORT_GAMES, SHORT_STEPS, "short"),
        *_play(config, LONG_GAMES, LONG_STEPS, "long"),
        *_pinned(config),
    ]


def _steps(games: list[Played]) -> Iterator[tuple[Played, Step]]:
    for played in games:
        for step in played.steps:
            yield played, step


# --- cards ------------------------------------------------------------------------------


def test_every_card_is_conserved(games):
    deck = full_deck(games[0].start().variant.decks)
    for played in games:
        assert all_cards(played.start()) == deck, played.where()
        for step in played.steps:
            assert all_cards(step.after) == deck, played.where(step)


def test_face_down_cards_lie_only_under_face_up_ones_in_the_tableau(games):
    # A tableau pile showing no card but holding face-down ones never exists: the top turns up
    # at once.
    for played, step in _steps(games):
        for spec in step.after.variant.tableaux:
            p = step.after.piles[spec.id]
            assert p.up or not p.down, played.where(step)


# --- hidden information -----------------------------------------------------------------


def test_no_public_view_shows_a_face_down_card(games):
    for played, step in _steps(games):
        game = step.after
        public = game.public_piles()
        assert public.keys() == game.piles.keys(), played.where(step)
        for pile_id, pile in game.piles.items():
            assert public[pile_id] == {"down": len(pile.down), "up": list(pile.up)}, played.where(
                step
            )
        assert all(isinstance(v["down"], int) for v in public.values())
        shown = Counter(c for v in public.values() for c in v["up"])
        face_up = Counter(c for p in game.piles.values() for c in p.up)
        assert shown == face_up, played.where(step)  # no face-down card among them


def test_no_diff_names_a_face_down_card(games):
    for played, step in _steps(games):
        piles = step.after.piles
        for op in step.diff.ops:
            named = op.get("cards", []) + ([op["card"]] if "card" in op else [])
            assert Counter(named) <= Counter(piles[op["pile"]].up), (played.where(step), op)


def test_no_legal_move_names_a_card(games):
    for played, step in list(_steps(games))[::4]:
        spec = step.after.variant.spec
        for command in step.after.legal_moves():
            # A command names piles and a count, the same fields as its JSON form.
            assert {f.name for f in fields(command)} <= {"from_", "to", "count"}, played.where(step)
            if isinstance(command, Move):
                assert command.from_ in spec and command.to in spec, (played.where(step), command)
                assert type(command.count) is int, (played.where(step), command)


def _twin(played: Played, rng: random.Random) -> tuple[Game, bool]:
    """The deal of ``played`` with the cards it never shows face up, in any of its steps,
    dealt into one another's places: the same game as far as the player can ever tell.
    True when the twin really differs."""
    start = played.start()
    shown = {c for g in (start, *(s.after for s in played.steps)) for p in g.piles.values()
             for c in p.up}
    places = [(k, i) for k, p in start.piles.items() for i, c in enumerate(p.down)
              if c not in shown]
    cards = [start.piles[k].down[i] for k, i in places]
    rng.shuffle(cards)
    down = {k: list(p.down) for k, p in start.piles.items()}
    for (k, i), card in zip(places, cards, strict=True):
        down[k][i] = card
    piles = {k: Pile(tuple(down[k]), p.up) for k, p in start.piles.items()}
    twin = Game(start.variant, start.seed, Position(piles, None, None, True), 0, start.status)
    return twin, piles != start.piles


def _answer(game: Game, command: Command) -> tuple[Any, ...]:
    """What the player learns from sending ``command``, less the cards it turns up."""
    try:
        after, diff = game.apply(command)
    except IllegalCommand as err:
        return ("refused", err.rule, err.message)
    return ("applied", after.status, after.can_undo, after.public_piles().keys(),
            [{k: v for k, v in op.items() if k not in ("card", "cards")} for op in diff.ops])


def test_nothing_depends_on_a_card_never_seen(games):
    """Two games that differ only in cards the player never sees show the same thing at
    every step: the view, the diff, the status (Gilbert's "lost" test (c) exists for this),
    the legal moves; and every command over the layout gets the same refusal, or is
    applied the same way but for the cards it turns up."""
    rng = random.Random(f"twins:{config_id(games[0].config)}")
    long_games = [p for p in games if "long" in p.walk]
    differed = lost = 0
    for played in long_games:
        twin, differs = _twin(played, rng)
        differed += differs
        game = played.start()
        for index, step in enumerate([None, *played.steps]):
            if step is not None:
                twin, diff = twin.apply(step.command)
                game = step.after
                assert diff.ops == step.diff.ops, played.where(step)
            where = played.where(step) if step is not None else played.where()
            assert twin.public_piles() == game.public_piles(), where
            assert twin.status is game.status, where
            assert legal_commands(twin) == legal_commands(game), where
            lost += game.status is Status.LOST and differs
            if differs and (index % EXHAUSTIVE_EVERY == 0 or game.status is Status.LOST):
                for command in layout_commands(game):
                    assert _answer(twin, command) == _answer(game, command), (where, command)
    # Shamrocks is dealt face up: it has no card to hide.
    assert differed or games[0].variant_id == "shamrocks"
    # A Gilbert game lost with cards it never showed: the pinned games have some.
    assert lost or games[0].variant_id != "gilbert"


# --- diffs ------------------------------------------------------------------------------


def test_each_diff_turns_the_previous_public_view_into_the_next(games):
    for played, step in _steps(games):
        assert apply_ops(step.before.public_piles(), step.diff.ops) == step.after.public_piles(), (
            played.where(step)
        )


def test_every_diff_in_order_from_the_deal_gives_the_final_view(games):
    for played in games:
        view = played.start().public_piles()
        for step in played.steps:
            view = apply_ops(view, step.diff.ops)
        assert view == played.final().public_piles(), played.where()


def test_a_diff_carries_the_new_status_and_stats(games):
    for played, step in _steps(games):
        after, diff = step.after, step.diff
        assert (diff.status, diff.moves, diff.foundation_cards) == (
            after.status,
            after.moves,
            after.foundation_cards,
        ), played.where(step)


# --- replay, undo, snapshots ------------------------------------------------------------


def _state(game: Game) -> tuple:
    return (
        game.piles,
        game.status,
        game.moves,
        game.foundation_cards,
        game.effective_commands(),
        legal_commands(game),
        game.can_undo,
    )


def test_replaying_the_log_gives_the_same_game(games):
    for played in games[::2]:
        log = [from_json(c) for c in played.log()]
        replayed = replay(played.variant_id, played.seed, played.options, log)
        assert _state(replayed) == _state(played.final()), played.where()


def test_replaying_the_commands_in_effect_gives_the_same_piles(games):
    for played in games[::5]:
        final = played.final()
        replayed = replay(
            played.variant_id, played.seed, played.options, final.effective_commands()
        )
        assert replayed.piles == final.piles, played.where()
        if final.status is not Status.RESIGNED:
            assert replayed.status == final.status, played.where()


def test_undo_restores_the_previous_state_exactly(games):
    for played, step in _steps(games):
        if isinstance(step.command, (Move, Draw)):
            undone, _diff = step.after.apply(UNDO)
            before = step.before
            assert undone.piles == before.piles, played.where(step)
            assert undone.status == before.status, played.where(step)
            assert undone.effective_commands() == before.effective_commands(), played.where(step)
            if step.index % 3 == 0:
                assert legal_commands(undone) == legal_commands(before), played.where(step)
            assert undone.moves == step.after.moves + 1, played.where(step)


def test_each_undo_steps_one_command_further_back(games):
    for played in games:
        in_effect = [played.start().piles]  # the piles before each command still in effect, and now
        for step in played.steps:
            if isinstance(step.command, (Move, Draw)):
                in_effect.append(step.after.piles)
            elif step.command == UNDO:
                in_effect.pop()
            assert step.after.piles == in_effect[-1], played.where(step)
            assert step.after.can_undo == (len(in_effect) > 1 and not step.after.status.is_final), (
                played.where(step)
            )


def test_a_snapshot_restores_the_same_game(games):
    for played in games[::10]:
        for step in played.steps[::15]:
            game = step.after
            restored = through_snapshot(game)
            assert _state(restored) == _state(game), played.where(step)
            assert (restored.seed, restored.variant.options) == (game.seed, game.variant.options)
            for command in legal_commands(game)[:3]:
                a, da = game.apply(command)
                b, db = restored.apply(command)
                assert (a.piles, a.status, da.ops) == (b.piles, b.status, db.ops), played.where(
                    step
                )


def test_undo_reaches_past_a_snapshot(games):
    for played in games[::25]:
        step = played.steps[len(played.steps) // 2] if played.steps else None
        if step is None:
            continue
        game = step.after
        restored = through_snapshot(game)
        while game.can_undo:
            assert restored.can_undo, played.where(step)
            game, d1 = game.apply(UNDO)
            restored, d2 = restored.apply(UNDO)
            assert (game.piles, game.status, d1.ops) == (restored.piles, restored.status, d2.ops), (
                played.where(step)
            )
        assert not restored.can_undo, played.where(step)


# --- legal commands and apply agree -----------------------------------------------------


def _lowest_foundation(listed: list[Command], src: str, count: int) -> str | None:
    found = sorted(
        int(m.to.split("/")[1])
        for m in listed
        if isinstance(m, Move)
        and m.from_ == src
        and m.count == count
        and m.to.startswith("foundation/")
    )
    return f"foundation/{found[0]}" if found else None


def _agrees(
    played: Played,
    step: Step,
    game: Game,
    command: Command,
    listed: list[Command],
    hidden: set[str] | None,
) -> None:
    """``command`` applies iff it is listed (``"to": "foundation"``: iff a foundation move from
    the same pile is listed, resolved to the lowest index); a refusal changes nothing and hides."""
    where = (played.where(step), command)
    before = (dict(game.piles), game.status, game.moves)
    if isinstance(command, Move) and command.to == "foundation":
        expected = _lowest_foundation(listed, command.from_, command.count)
        legal = expected is not None
    else:
        legal = command in listed
        expected = None
    try:
        after, diff = game.apply(command)
    except IllegalCommand as err:
        assert not legal, (*where, err.rule, err.message)
        assert_message_hides(game, err.message, hidden)
        assert (dict(game.piles), game.status, game.moves) == before, where
        return
    except BadCommand as err:
        raise AssertionError(f"{where}: well-formed command refused as malformed: {err}") from err
    assert legal, (*where, "applied but not listed")
    if expected is not None:
        assert diff.command == Move(command.from_, expected, command.count), where
    assert after.moves == game.moves + (command != RESIGN), where


def test_every_listed_command_applies_and_nothing_else_does_random_commands(games):
    for played, step in list(_steps(games))[::2]:
        rng = random.Random(f"{played.walk}:{step.index}")
        game = step.after
        listed = legal_commands(game)
        assert len(set(listed)) == len(listed), played.where(step)
        _agrees(played, step, game, random_command(game, rng), listed, None)


def test_every_listed_command_applies_and_nothing_else_does_every_command_over_the_layout(games):
    long_games = [p for p in games if "long" in p.walk]
    for played in long_games:
        for step in played.steps[EXHAUSTIVE_EVERY // 2 :: EXHAUSTIVE_EVERY]:
            game = step.after
            listed = legal_commands(game)
            hidden = hidden_cards(game)
            for command in [*layout_commands(game), *listed]:
                _agrees(played, step, game, command, listed, hidden)


def test_a_move_onto_a_foundation_is_one_card_and_never_onto_its_own_pile(games):
    for played, step in list(_steps(games))[::2]:
        for m in step.after.legal_moves():
            if isinstance(m, Move):
                assert m.from_ != m.to, played.where(step)
                assert m.count == 1 or step.after.variant.kind[m.to] == "tableau", played.where(
                    step
                )


# --- status -----------------------------------------------------------------------------


def _any_move_legal(game: Game) -> bool:
    """Whether any move is legal, found by checking every (from, to, count) one by one,
    independently of the move generator."""
    variant, piles = game.variant, game.piles
    for src in variant.spec:
        for count in range(1, max(1, len(piles[src].up)) + 1):
            for dst in variant.spec:
                try:
                    check_move(variant, piles, Move(src, dst, count))
                except IllegalCommand:
                    continue
                return True
    return False


def _draw_legal(game: Game) -> bool:
    try:
        game.variant.draw(dict(game.piles))
    except IllegalCommand:
        return False
    return True


def _gilbert_lost(game: Game) -> bool:
    """RULES.md's Gilbert test, worked out step by step: (c), then (a), then (b) by drawing."""
    piles = game.piles
    if piles["stock"].down:
        return False  # (c): the stock is not empty
    position = game.position
    while position.command is not None:  # (c): only draws since the last turn-over
        parent = position.parent
        if not isinstance(position.command, Draw):
            if piles["waste"].up:
                return False
            break  # stock and waste empty: (c) holds trivially
        if not parent.piles["stock"].down:
            break  # this draw turned the waste over
        position = parent
    if _any_move_legal(game):
        return False  # (a)
    trial = dict(piles)
    for _ in range(len(piles["waste"].up) // 3 + 2):  # (b): a turn-over and a whole pass of draws
        if not trial["waste"].up and not trial["stock"].down:
            break
        game.variant.draw(trial)
        if trial["waste"].up:
            for dst in game.variant.spec:
                try:
                    check_move(game.variant, trial, Move("waste", dst))
                except IllegalCommand:
                    continue
                return False
    return True


def test_status_is_won_lost_or_playing_as_the_rules_say(games):
    total = games[0].start().variant.total_cards
    seen = Counter()
    checked = set()  # random play often comes back to the same lost position: check it once
    for played, step in _steps(games):
        game = step.after
        seen[game.status] += 1
        key = (game.status, tuple(game.piles.values()), game.position.only_draws_since_turnover)
        if key in checked:
            continue
        checked.add(key)
        if step.command == RESIGN:
            assert game.status is Status.RESIGNED, played.where(step)
            continue
        if game.foundation_cards == total:
            assert game.status is Status.WON, played.where(step)
            continue
        if played.variant_id == "gilbert":
            if game.status is Status.LOST or not game.piles["stock"].down:
                assert (game.status is Status.LOST) == _gilbert_lost(game), played.where(step)
        elif game.status is Status.LOST:
            assert not _any_move_legal(game) and not _draw_legal(game), played.where(step)
        if game.status is Status.PLAYING:
            assert game.legal_moves(), played.where(step)
    assert seen[Status.LOST] > 0, f"no random game of {config_id(games[0].config)} was ever lost"


def test_a_lost_game_accepts_only_undo_and_resign(games):
    for played, step in _steps(games):
        game = step.after
        if game.status is Status.LOST:
            assert game.legal_moves() == [], played.where(step)
            assert legal_commands(game) == ([UNDO] if game.can_undo else []) + [RESIGN], (
                played.where(step)
            )
            with pytest.raises(IllegalCommand):
                game.apply(DRAW)


def test_the_lost_tests_shortcut_agrees_with_the_move_generator(games):
    """``has_legal_move`` (run after every command) stops at the first move it finds:
    it says yes exactly when ``legal_moves`` lists a move, before and after every step."""
    for played, step in _steps(games):
        for game in (step.before, step.after):
            piles = game.piles
            assert has_legal_move(game.variant, piles) == bool(legal_moves(game.variant, piles)), (
                played.where(step))


# --- what each variant keeps true -------------------------------------------------------


def test_variant_invariants_hold(games):
    variant_id = games[0].variant_id
    for played, step in _steps(games):
        before, after = step.before.piles, step.after.piles
        where = played.where(step)
        if variant_id == "shamrocks":
            assert all(len(after[f"tableau/{i}"]) <= 3 for i in range(18)), where
            if isinstance(step.command, Move):  # an empty fan stays empty
                assert all(
                    before[f"tableau/{i}"] or not after[f"tableau/{i}"] for i in range(18)
                ), where
        elif variant_id == "gate":
            if (
                after["reserve/0"].up or after["reserve/1"].up
            ):  # no space while a pillar holds cards
                assert all(after[f"tableau/{i}"].up for i in range(8)), where
            if isinstance(step.command, (Move, Draw)):  # nothing is placed on a pillar
                for r in ("reserve/0", "reserve/1"):
                    assert after[r].up == before[r].up[: len(after[r].up)], where
            assert not after["waste"].down and not after["stock"].up, where
            if played.options.get("single_card_moves"):
                assert all(m.count == 1 for m in step.after.legal_moves() if isinstance(m, Move)), (
                    where
                )
        elif variant_id == "caprice":
            assert all(not after[f"tableau/{i}"].down for i in range(12)), where
            if isinstance(step.command, Draw):
                assert len(after["stock"].down) == len(before["stock"].down) - 12, where
        elif variant_id == "gilbert" and isinstance(step.command, Draw):
            n = len(before["stock"].down)
            assert len(after["stock"].down) == (max(n - 3, 0) if n else len(before["waste"].up)), (
                where
            )
