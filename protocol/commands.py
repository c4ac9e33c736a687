"""The commands a player sends: ``move``, ``draw``, ``undo``, ``resign``."""

from __future__ import annotations

from typing import Annotated, TypeAlias

import msgspec
from msgspec import Meta

from .fields import PileId, PileTarget


class BaseCommand(msgspec.Struct, tag_field="type", forbid_unknown_fields=True):
    """Base of the ``Command`` union, tagged by ``type``."""


class Move(BaseCommand, tag="move"):
    """Move the top `count` cards of pile `from` onto pile `to`."""

    # "from" is a Python keyword: the attribute is from_, the JSON name "from".
    from_: PileId = msgspec.field(name="from")
    to: PileTarget
    count: Annotated[int, Meta(ge=1)] = 1


class Draw(BaseCommand, tag="draw"):
    """A click on the stock: deal, or turn the waste over."""


class Undo(BaseCommand, tag="undo"):
    """Revert the most recent command still in effect."""


class Resign(BaseCommand, tag="resign"):
    """Give the game up."""


Command: TypeAlias = Move | Draw | Undo | Resign
