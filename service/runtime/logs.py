"""The service's log: one line per record, whatever the record holds.

A logged field may come from a stranger (a request's path, a player's name, an error's
text): a newline in it would start a line of its own (a forged ``WARNING service: ...``),
a terminal escape would repaint the operator's screen, a NUL would cut the line for
some readers. :class:`EscapingFormatter` writes every control character of a record as
an escape: ``\\n``, ``\\r``, ``\\t``, ``\\xNN`` (the other C0 controls, DEL and the C1
controls), ``\\uNNNN`` (Unicode's line and paragraph separators and the bidirectional
controls, which reorder what a terminal shows). It escapes the whole line (message,
logger name and every argument, the access log's included) and the message of an
exception in a traceback, whose own lines stay lines. A backslash is written as it is.
"""

from __future__ import annotations

import logging
import sys
import traceback
from types import TracebackType

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_ESCAPES: dict[int, str] = {}
for _code in [*range(0x00, 0x20), *range(0x7F, 0xA0)]:
    _ESCAPES[_code] = _NAMED.get(chr(_code), f"\\x{_code:02x}")
for _code in [0x2028, 0x2029, *range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F]:
    _ESCAPES[_code] = f"\\u{_code:04x}"


def escape(text: str) -> str:
    """``text`` with every control character written as an escape (see the module)."""
    return text.translate(_ESCAPES)


_ExcInfo = tuple[type[BaseException], BaseException, TracebackType | None]


class EscapingFormatter(logging.Formatter):
    def formatMessage(self, record: logging.LogRecord) -> str:  # noqa: N802 - logging's name
        return escape(super().formatMessage(record))

    def formatException(self, ei: _ExcInfo | tuple[None, None, None]) -> str:  # noqa: N802
        if ei[1] is None:
            return super().formatException(ei)
        te = traceback.TracebackException(type(ei[1]), ei[1], ei[2], compact=True)
        seen: set[int] = set()
        todo = [te]
        while todo:  # the exception and those it was raised from or during (its chain)
            one = todo.pop()
            if id(one) in seen:
                continue
            seen.add(id(one))
            # The exception's own text (str(exc)) and its notes: the parts that may hold
            # what a stranger sent; the frames come from the service's source.
            if isinstance(getattr(one, "_str", None), str):
                one._str = escape(one._str)  # type: ignore[attr-defined]
            notes = getattr(one, "__notes__", None)
            if isinstance(notes, list):
                one.__notes__ = [escape(str(n)) for n in notes]
            todo.extend(t for t in (one.__cause__, one.__context__) if t is not None)
            todo.extend(getattr(one, "exceptions", None) or ())
        text = "".join(te.format())
        return text[:-1] if text.endswith("\n") else text


def configure(level: str) -> None:
    """The process's log: records at ``level`` and above, escaped, one a line, to stderr."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(EscapingFormatter(FORMAT))
    logging.basicConfig(level=level.upper(), handlers=[handler])
