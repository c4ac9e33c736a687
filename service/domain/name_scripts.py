"""Which scripts (Latin, Cyrillic, Greek, Han...) a player name's letters are written in.

A name that mixes scripts is how one name is passed off as another: Cyrillic ``і``
in ``admіn`` looks like Latin ``i``. :func:`mixed_scripts` finds such a name. The
combinations people write in stay allowed, as Unicode's "highly restrictive" level
(UTS #39) has them: one script, or Latin with Han, Hiragana and Katakana (Japanese),
with Han and Bopomofo, or with Han and Hangul (Korean).

Python has no table of Unicode's Script property; a letter's script is the first word
of its Unicode name (``CYRILLIC SMALL LETTER ...``), which for letters names the
script (``CJK`` and ``IDEOGRAPHIC`` are Han). Only letters count: digits,
punctuation, spaces and marks belong to no script here. Names are folded (NFKC)
before this is asked, so fullwidth and mathematical letters are already plain ones.
"""

from __future__ import annotations

import unicodedata

# First words of letters' names that say nothing of a script (modifier letters such as
# the prolonged sound mark of Japanese, which both kana use).
_NO_SCRIPT = frozenset({"MODIFIER", "KATAKANA-HIRAGANA"})
_SAME = {"CJK": "HAN", "IDEOGRAPHIC": "HAN"}
# Scripts that may be written together (UTS #39, "highly restrictive").
ALLOWED_TOGETHER = (
    frozenset({"LATIN", "HAN", "HIRAGANA", "KATAKANA"}),
    frozenset({"LATIN", "HAN", "BOPOMOFO"}),
    frozenset({"LATIN", "HAN", "HANGUL"}),
)


def script_of(char: str) -> str | None:
    """The script of a letter (``"LATIN"``, ``"CYRILLIC"``, ``"HAN"``), None for any other
    character."""
    if not unicodedata.category(char).startswith("L"):
        return None
    word = unicodedata.name(char, "").split(" ", 1)[0]
    if not word or word in _NO_SCRIPT:
        return None
    return _SAME.get(word, word)


def mixed_scripts(text: str) -> tuple[str, str, str] | None:
    """None when ``text``'s letters are of one script, or of scripts allowed together;
    else ``(first script, other script, first letter of the other)``."""
    seen: dict[str, str] = {}
    for char in text:
        script = script_of(char)
        if script is not None and script not in seen:
            seen[script] = char
    if len(seen) <= 1 or any(seen.keys() <= allowed for allowed in ALLOWED_TOGETHER):
        return None
    first, *others = seen
    other = next((s for s in others
                  if not any({first, s} <= allowed for allowed in ALLOWED_TOGETHER)),
                 others[0])
    return first, other, seen[other]
