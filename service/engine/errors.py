"""What the engine refuses, as ``ValueError`` subclasses carrying a reason a person can read."""

from __future__ import annotations

from .refusals import Rule


class EngineError(ValueError):
    """Base of every error the engine raises for bad input."""


class UnknownVariant(EngineError):
    def __init__(self, variant_id: object, known: list[str]) -> None:
        super().__init__(f"unknown variant {variant_id!r}; known variants: {', '.join(known)}")
        self.variant_id = variant_id


class BadOptions(EngineError):
    """Options that the variant does not define, or of the wrong type; ``option``: the
    first option to blame."""

    def __init__(self, message: str, option: str) -> None:
        super().__init__(message)
        self.option = option

    def __reduce__(self) -> tuple[type[BadOptions], tuple[str, str]]:
        # As raised in a solver's process and re-raised in the service's: both arguments.
        return type(self), (str(self), self.option)


class BadCommand(EngineError):
    """Input no game can take: a seed out of range, a move of fewer than one card (the
    engine parses no JSON: the wire's decoder refuses malformed commands first)."""


class IllegalCommand(EngineError):
    """A well-formed command that the rules forbid now.

    ``rule`` is the name of the rule, one of :class:`~.refusals.Rule` (``"empty_tableau"``),
    the message says it in words. Neither ever names a face-down card.
    """

    def __init__(self, rule: Rule, message: str) -> None:
        super().__init__(message)
        self.rule: str = rule.value  # the name as sent, a plain str
        self.message = message
