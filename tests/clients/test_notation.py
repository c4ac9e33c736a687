"""The terminal client's notation: every command form, every parse error, and the round trip."""

from __future__ import annotations

from typing import Any

import pytest

from clients.python.commands import as_command
from clients.python.notation import (
    HELP,
    Action,
    ParseError,
    format_command,
    in_notation,
    parse,
    pile_label,
)
from protocol import Draw, Move, Resign, Undo


@pytest.mark.parametrize(
    ("text", "command"),
    [
        ("t3 f", {"type": "move", "from": "tableau/3", "to": "foundation"}),
        ("t3 f1", {"type": "move", "from": "tableau/3", "to": "foundation/1"}),
        ("t3 t5", {"type": "move", "from": "tableau/3", "to": "tableau/5"}),
        ("t3 t5 2", {"type": "move", "from": "tableau/3", "to": "tableau/5", "count": 2}),
        ("t12 t17", {"type": "move", "from": "tableau/12", "to": "tableau/17"}),
        ("w t5", {"type": "move", "from": "waste", "to": "tableau/5"}),
        ("w f", {"type": "move", "from": "waste", "to": "foundation"}),
        ("r0 f", {"type": "move", "from": "reserve/0", "to": "foundation"}),
        ("r1 t2", {"type": "move", "from": "reserve/1", "to": "tableau/2"}),
        ("f1 t2", {"type": "move", "from": "foundation/1", "to": "tableau/2"}),
        ("f2 f6", {"type": "move", "from": "foundation/2", "to": "foundation/6"}),
        ("s t4", {"type": "move", "from": "stock", "to": "tableau/4"}),
        ("tableau/3 foundation/1", {"type": "move", "from": "tableau/3", "to": "foundation/1"}),
        ("waste foundation", {"type": "move", "from": "waste", "to": "foundation"}),
        ("  T3   F  ", {"type": "move", "from": "tableau/3", "to": "foundation"}),
        ("t03 t5", {"type": "move", "from": "tableau/3", "to": "tableau/5"}),
        ("d", {"type": "draw"}),
        ("draw", {"type": "draw"}),
        ("u", {"type": "undo"}),
        ("undo", {"type": "undo"}),
        ("resign", {"type": "resign"}),
    ],
)
def test_each_form_parses_to_its_command(text: str, command: dict[str, Any]) -> None:
    assert parse(text) == Action("command", command)
    as_command(command)  # and it is a valid command of the protocol


@pytest.mark.parametrize(
    ("text", "kind"),
    [("h", "help"), ("help", "help"), ("?", "help"), ("m", "moves"), ("moves", "moves")],
)
def test_help_and_moves_are_the_clients_own(text: str, kind: str) -> None:
    assert parse(text) == Action(kind)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "type a command"),
        ("   ", "type a command"),
        ("zz", "unknown pile or command 'zz'"),
        ("x1 t2", "unknown pile or command 'x1'"),
        ("t3", "where to?"),
        ("w", "where to?"),
        ("t", "say which tableau pile"),
        ("r f", "say which reserve pile"),
        ("f t3", "say which foundation to take from"),
        ("t3 t", "say which tableau pile"),
        ("t3 t5 0", "a number from 1: got '0'"),
        ("t3 t5 two", "a number from 1: got 'two'"),
        ("t3 t5 -1", "a number from 1"),
        ("t3 t5 2 4", "too many words"),
        ("d 3", "'d' takes nothing after it"),
        ("q now", "'q' takes nothing after it"),
        ("t1000 f", "unknown pile or command 't1000'"),
        ("t3 zz", "unknown pile or command 'zz'"),
    ],
)
def test_what_is_not_a_command_gets_a_readable_reason(text: str, reason: str) -> None:
    with pytest.raises(ParseError) as caught:
        parse(text)
    assert reason in str(caught.value)
    assert isinstance(caught.value, ValueError)


@pytest.mark.parametrize(
    "command",
    [
        Move(from_="tableau/3", to="foundation/1"),
        Move(from_="tableau/3", to="foundation"),
        Move(from_="tableau/10", to="tableau/5", count=4),
        Move(from_="waste", to="tableau/0"),
        Move(from_="reserve/1", to="foundation/2"),
        Move(from_="stock", to="tableau/4"),
        Move(from_="foundation/7", to="foundation/3"),
        Draw(),
        Undo(),
        Resign(),
    ],
)
def test_format_and_parse_round_trip(command: Any) -> None:
    action = parse(format_command(command))
    assert action.command is not None and as_command(action.command) == command


def test_a_command_in_json_form_formats_too() -> None:
    assert format_command({"type": "move", "from": "waste", "to": "foundation/0"}) == "w f0"
    assert (
        format_command({"type": "move", "from": "tableau/1", "to": "tableau/2", "count": 3})
        == "t1 t2 3"
    )


def test_pile_labels_are_what_the_player_types() -> None:
    assert [
        pile_label(p) for p in ("tableau/3", "foundation/7", "reserve/0", "waste", "stock")
    ] == ["t3", "f7", "r0", "w", "s"]


def test_hint_is_the_clients_own_word() -> None:
    from clients.python.notation import parse

    assert parse("hint").kind == "hint"


@pytest.mark.parametrize("word", ["q", "quit"])
def test_quitting_leaves_the_game_as_it_stands(word: str) -> None:
    """A player typing 'quit' to leave the terminal must not lose the game: resigning
    cannot be taken back, so only 'resign' resigns."""
    assert parse(word) == Action("leave")


def test_resign_is_the_one_word_that_resigns_and_the_help_says_which_leaves() -> None:
    assert parse("resign") == Action("command", {"type": "resign"})
    help_words = HELP.replace(",", " ").split()
    assert {"q", "quit", "resign"} <= set(help_words) and "Ctrl-D" in HELP


def test_a_message_of_the_service_names_piles_in_this_notation() -> None:
    text = ("Gilbert has no pile 'tableau/99'; its piles are stock, waste, foundation/0, "
            "foundation/7, tableau/0, reserve/12")
    assert in_notation(text) == ("Gilbert has no pile 't99'; its piles are stock, waste, f0, "
                                 "f7, t0, r12")
