"""The registry of variants, found by id. A new variant is a module here and one line below."""

from __future__ import annotations

from ..errors import UnknownVariant
from ..variant import Variant
from .caprice import Caprice
from .gate import Gate
from .gilbert import Gilbert
from .shamrocks import Shamrocks

VARIANTS: dict[str, type[Variant]] = {v.id: v for v in (Gilbert, Shamrocks, Gate, Caprice)}


def get_variant(variant_id: object) -> type[Variant]:
    """The variant class registered as ``variant_id``, or :class:`UnknownVariant`."""
    if isinstance(variant_id, str) and variant_id in VARIANTS:
        return VARIANTS[variant_id]
    raise UnknownVariant(variant_id, list(VARIANTS))


__all__ = ["VARIANTS", "get_variant", "Gilbert", "Shamrocks", "Gate", "Caprice"]
