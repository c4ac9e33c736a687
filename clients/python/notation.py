"""The terminal client's short notation: text to command dicts and back (pure, no I/O).

``t3 f`` moves the top card of ``tableau/3`` to the first foundation that accepts it,
``t3 t5 2`` the top two cards of ``tableau/3`` onto ``tableau/5``, ``d`` draws.
:func:`parse` and :func:`format_command` round-trip, like python-chess's
``Move.from_uci`` and ``.uci()``. The notation knows pile names, not rules:
whether a move is legal is the server's to say.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

import msgspec

from protocol.commands import Command, Draw, Move, Resign, Undo

HELP: Final = """\
Piles: t0 t1 ... tableau, f0 f1 ... foundations, r0 r1 reserves, w waste, s stock.
  t3 f        top card of t3 to the first foundation that accepts it
  t3 f1       ... to foundation 1
  t3 t5       top card of t3 onto t5;  t3 t5 2  the top two cards
  w t5, w f   the waste's top card
  r0 f        a reserve's top card;  f1 t2  a foundation's top card back into play
  s t4        (Gate) a card from the stock into an empty space
  d  draw     u  undo     m  legal moves     h  this help
  q, quit     leave: the game stays where it is (Ctrl-D too); resume brings it back
  resign      give up: the game ends resigned, for good
  hint        the solver suggests a command (counted in the game's stats)
Long pile ids work too: tableau/3 foundation/1."""

_SHORT: Final = {"t": "tableau", "f": "foundation", "r": "reserve"}
_LONG_TO_SHORT: Final = {long: short for short, long in _SHORT.items()}
Word = Literal["draw", "undo", "resign", "help", "moves", "hint", "leave"]
_WORDS: Final[dict[str, Word]] = {
    "d": "draw",
    "draw": "draw",
    "u": "undo",
    "undo": "undo",
    "q": "leave",
    "quit": "leave",
    "resign": "resign",
    "h": "help",
    "help": "help",
    "?": "help",
    "m": "moves",
    "moves": "moves",
    "hint": "hint",
}
_PILE: Final = re.compile(r"^(?:(t|f|r)(\d{1,3})|(tableau|foundation|reserve)/(\d{1,3}))$")


class ParseError(ValueError):
    """Text that is not a command; the message says what is wrong, for a person."""

    def __init__(self, text: str, reason: str) -> None:
        super().__init__(f"{text.strip()!r}: {reason}" if text.strip() else reason)
        self.text = text
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Action:
    """What a line asks for: a command to send (``command`` its JSON form), or the
    client's own ``help``, ``moves`` (list the legal moves), ``hint`` (ask the solver) or
    ``leave`` (stop playing; the game stays where it is)."""

    kind: Literal["command", "help", "moves", "hint", "leave"]
    command: dict[str, Any] | None = None


def parse(text: str) -> Action:
    """The action a line of input asks for; :class:`ParseError` says why a line is not one."""
    words = text.lower().split()
    if not words:
        raise ParseError(text, "type a command (h for help)")
    head, rest = words[0], words[1:]
    word = _WORDS.get(head)
    if word is not None:
        if rest:
            raise ParseError(text, f"{head!r} takes nothing after it")
        if word in ("help", "moves", "hint", "leave"):
            return Action(word)
        return Action("command", {"type": word})
    if len(words) == 1:
        source = _pile(text, head, target=False)  # names the pile, or says what is wrong
        raise ParseError(
            text,
            f"where to? say '{pile_label(source)} f' or '{pile_label(source)} t5' (h for help)",
        )
    if len(words) > 3:
        raise ParseError(text, "too many words: a move is '<from> <to> [count]'")
    command: dict[str, Any] = {
        "type": "move",
        "from": _pile(text, head, target=False),
        "to": _pile(text, words[1], target=True),
    }
    if len(words) == 3:
        command["count"] = _count(text, words[2])
    try:
        msgspec.convert(command, Command)  # the wire's own checks, as a backstop
    except msgspec.ValidationError as exc:  # pragma: no cover - the checks above are stricter
        raise ParseError(text, f"not a valid command: {exc}") from None
    return Action("command", command)


def _pile(text: str, word: str, target: bool) -> str:
    if word in ("w", "waste"):
        return "waste"
    if word in ("s", "stock"):
        return "stock"
    if word in ("f", "foundation"):
        if target:
            return "foundation"
        raise ParseError(text, "say which foundation to take from: f0, f1, ...")
    match = _PILE.match(word)
    if match is None:
        if word in ("t", "r", "tableau", "reserve"):
            name = _SHORT.get(word, word)
            raise ParseError(text, f"say which {name} pile: {name[0]}0, {name[0]}1, ...")
        raise ParseError(text, f"unknown pile or command {word!r} (h for help)")
    kind = _SHORT[match[1]] if match[1] else match[3]
    return f"{kind}/{int(match[2] or match[4])}"


def _count(text: str, word: str) -> int:
    if not word.isdigit() or int(word) < 1:
        raise ParseError(text, f"the count is how many cards move, a number from 1: got {word!r}")
    return int(word)


def pile_label(pile_id: str) -> str:
    """The short name of a pile: ``tableau/3`` is ``t3``, ``waste`` is ``w``."""
    if pile_id == "waste":
        return "w"
    if pile_id == "stock":
        return "s"
    if pile_id == "foundation":
        return "f"
    kind, _, index = pile_id.partition("/")
    short = _LONG_TO_SHORT.get(kind)
    return f"{short}{index}" if short and index else pile_id


_LONG_PILE: Final = re.compile(r"\b(tableau|foundation|reserve)/(\d{1,3})\b")


def in_notation(text: str) -> str:
    """``text`` (a message of the service) with its long pile ids in this notation:
    ``tableau/3`` is ``t3``, ``foundation/0`` is ``f0``, as the player types them."""
    return _LONG_PILE.sub(lambda m: pile_label(m[0]), text)


def format_command(command: Command | Mapping[str, Any]) -> str:
    """The short notation of a command; ``parse`` reads it back to the same command."""
    if isinstance(command, Mapping):
        command = msgspec.convert(dict(command), Command)
    if isinstance(command, Move):
        text = f"{pile_label(command.from_)} {pile_label(command.to)}"
        return f"{text} {command.count}" if command.count != 1 else text
    if isinstance(command, Draw):
        return "d"
    if isinstance(command, Undo):
        return "u"
    if isinstance(command, Resign):
        return "resign"
    raise TypeError(f"not a command: {command!r}")
