"""The search's rules for each variant, found by the engine's variant id."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from service.engine import UnknownVariant

from .caprice import Caprice
from .gate import Gate
from .gilbert import Gilbert
from .rules import Rules
from .shamrocks import Shamrocks

RULES: dict[str, type[Rules]] = {r.variant_id: r for r in (Gilbert, Shamrocks, Gate, Caprice)}


def rules_for(variant_id: str, options: Mapping[str, Any] | None = None) -> Rules:
    """The search's rules of ``variant_id`` with ``options`` (checked as the engine does)."""
    try:
        cls = RULES[variant_id]
    except KeyError:
        raise UnknownVariant(variant_id, list(RULES)) from None
    return cls(options)
