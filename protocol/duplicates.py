"""A key given twice in one JSON object of a request: refused, naming it.

JSON leaves open what ``{"type": "move", "type": "draw"}`` means (RFC 8259: "the
names within an object SHOULD be unique"); msgspec keeps the last value, another
parser the first. A client that sent it meant one of the two, and which one is a
guess: the request is refused (400 ``bad_request``; on a socket, an ``error``) with
``details.field`` naming the key, as for an unknown field.

msgspec cannot tell (it has no hook per key), so :func:`repeated_key` parses the
text again with the standard library's C scanner, which hands each object's pairs
over before they become a dict. That costs about as much as the decode itself; on
the socket's path :func:`may_repeat_a_key` first proves most messages free of
repeats by counting bytes, and spares it.
"""

from __future__ import annotations

import functools
import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

import msgspec


class DuplicateField(msgspec.ValidationError):
    """A key given twice in one object; its message says which, as msgspec names fields."""

    def __init__(self, path: str) -> None:
        parent, _, name = path.rpartition(".")
        where = f" - at `$.{parent}`" if parent else ""
        super().__init__(f"Object contains duplicate field `{name}`: a key may appear once "
                         f"in an object, or which value is meant is a guess{where}")
        self.path = path


class _Repeated:
    """What an object with a repeated key parses to: the key's path from that object."""

    __slots__ = ("path",)

    def __init__(self, path: str) -> None:
        self.path = path


def _repeat_in(value: Any) -> _Repeated | None:
    if isinstance(value, _Repeated):
        return value
    if isinstance(value, list):  # an array's items are named by the array (as msgspec does)
        for item in value:
            found = _repeat_in(item)
            if found is not None:
                return found
    return None


def _pairs(pairs: Sequence[tuple[str, Any]]) -> dict[str, Any] | _Repeated:
    # Called for each object once its values are parsed, the innermost first: a repeat
    # inside a value comes up as that value, and gets the key that holds it in front.
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            return _Repeated(key)
        inner = _repeat_in(value)
        if inner is not None:
            return _Repeated(f"{key}.{inner.path}")
        seen[key] = value
    return seen


def repeated_key(data: bytes | str) -> str | None:
    """The dotted path of a key that an object of ``data`` gives twice (``command.type``),
    or None: none does, or ``data`` is not JSON the standard library reads."""
    try:
        parsed = json.loads(data, object_pairs_hook=_pairs)
    except (ValueError, RecursionError):  # not JSON after all (msgspec says why)
        return None
    found = _repeat_in(parsed)
    return found.path if found is not None else None


def refuse_repeated_keys(data: bytes | str) -> None:
    """Raise :class:`DuplicateField` when an object of ``data`` gives a key twice."""
    path = repeated_key(data)
    if path is not None:
        raise DuplicateField(path)


@functools.cache
def key_limits(structs: tuple[type[msgspec.Struct], ...]) -> tuple[tuple[bytes, int], ...]:
    """For a message made of one object of each of ``structs`` (a command message and its
    command): each key of them as JSON spells it unescaped (``"type"``), and how many
    times it may appear in the text of such a message that gives no key twice in one
    object, at most: see :func:`may_repeat_a_key`."""
    held: Counter[str] = Counter()  # by how many of the objects, necessarily
    values: Counter[str] = Counter()  # tag values, which are spelled like keys too
    names: set[str] = set()
    for struct in structs:
        config = struct.__struct_config__
        if isinstance(config.tag_field, str):
            names.add(config.tag_field)
            held[config.tag_field] += 1  # a tagged struct is decoded from its tag only
            values[str(config.tag)] += 1
        for field in msgspec.structs.fields(struct):
            names.add(field.encode_name)
            held[field.encode_name] += field.required
    # A key given twice in one object appears once more than the objects that must hold it
    # (at least once more than none) and the tag values spelled like it.
    return tuple((f'"{name}"'.encode(), max(1, held[name]) + values[name])
                 for name in sorted(names))


def may_repeat_a_key(data: bytes, limits: tuple[tuple[bytes, int], ...]) -> bool:
    """False when ``data``, a message decoded already into the structs of ``limits``
    (:func:`key_limits`), cannot give a key twice in one object; True when it may, and
    :func:`repeated_key` must look.

    Decoded, the message holds no key but those (unknown fields are refused), and a key
    given twice appears twice in the text, spelled as ``limits`` has it unless it is
    escaped (``"t\\u0079pe"``: a backslash). So no backslash and no key more often than
    its limit prove no repeat. A value spelled like a key (``"command_id": "type"``)
    makes it look, and find none."""
    if b"\\" in data:
        return True
    for key, limit in limits:  # a loop: any() over a generator costs twice as much
        if data.count(key) > limit:
            return True
    return False
