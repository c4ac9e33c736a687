"""The catalogue of refusals: every ``rule`` a 422 ``illegal_move`` can name (its
``details.rule``), each with what it means in one line.

A refusal is named here once and everywhere else by its member (``Rule.GAME_OVER``),
so the engine cannot give a rule the catalogue does not list. docs/protocol.md's table
of rules and the ``rule`` of the protocol's ``ErrorDetails`` are read from (or checked
against) this list. The sentence a player reads is the refusal's own message; the
meaning here says when the rule applies, for a client author.

A ``Rule`` is a ``str``: ``Rule.GAME_OVER == "game_over"``, and it is sent as its name.
"""

from __future__ import annotations

from enum import StrEnum


class Rule(StrEnum):
    """A rule that refuses a well-formed command now, with its meaning."""

    meaning: str

    def __new__(cls, value: str, meaning: str) -> Rule:
        member = str.__new__(cls, value)
        member._value_ = value
        member.meaning = meaning
        return member

    # --- any command
    GAME_OVER = "game_over", "the game is won or resigned: it takes no command"
    GAME_LOST = "game_lost", "the game is lost: only undo or resign are accepted"
    # Applied by the service, not the engine: the number is the operator's setting.
    COMMAND_LIMIT = ("command_limit",
                     "the game has had the most commands one game may have: only resign is "
                     "accepted")
    NOTHING_TO_UNDO = "nothing_to_undo", "there is nothing to undo"
    # --- a draw, or the stock's card
    NO_STOCK = "no_stock", "the game has no stock to draw from"
    STOCK_EMPTY = "stock_empty", "the stock is empty and the game does not redeal"
    STOCK_AND_WASTE_EMPTY = ("stock_and_waste_empty",
                             "the stock and the waste are both empty: nothing to deal or "
                             "turn over")
    STOCK_BY_DRAW_ONLY = "stock_by_draw_only", "cards leave the stock only by a draw"
    ONE_CARD_FROM_STOCK = "one_card_from_stock", "one card at a time comes from the stock"
    SPACE_FROM_WASTE_FIRST = ("space_from_waste_first",
                              "a space is filled from the stock only when the waste is empty")
    STOCK_FILLS_SPACES_ONLY = ("stock_fills_spaces_only",
                               "a card from the stock may only fill a space")
    # --- a move: its piles and the cards it takes
    UNKNOWN_PILE = "unknown_pile", "the game has no such pile (or no foundation)"
    SAME_PILE = "same_pile", "a move never lands on the pile it came from"
    NOTHING_TO_MOVE = "nothing_to_move", "the pile the move comes from has no face-up card"
    TOP_CARD_ONLY = ("top_card_only",
                     "only the top card of a pile other than a tableau pile can be played")
    NOT_ENOUGH_CARDS = ("not_enough_cards",
                        "the pile shows fewer face-up cards than the move's count")
    ONE_CARD_AT_A_TIME = ("one_card_at_a_time",
                          "the game (or its options) moves one card at a time, never a run")
    NOT_A_RUN = "not_a_run", "the cards moved do not form a run under the game's build rule"
    # --- a move: where it goes
    NEVER_ONTO = "never_onto", "nothing is ever placed on the stock, the waste or a reserve"
    FOUNDATION_RETURNS = ("foundation_returns",
                          "a foundation's top card may not go back onto a pile of that kind")
    ONE_CARD_TO_FOUNDATION = ("one_card_to_foundation",
                              "cards go onto a foundation one at a time")
    FOUNDATION_COMPLETE = "foundation_complete", "the foundation is complete"
    FOUNDATION_ORDER = "foundation_order", "the foundation takes another card next"
    NO_FOUNDATION_ACCEPTS = "no_foundation_accepts", "no foundation takes the card now"
    CAPACITY = "capacity", "the tableau pile holds as many cards as it may"
    BUILD = "build", "the card does not build on the tableau pile's top card"
    EMPTY_TABLEAU = ("empty_tableau",
                     "the game does not let that card fill an empty tableau pile (a space)")
