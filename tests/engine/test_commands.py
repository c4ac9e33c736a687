"""Commands (service/engine/commands.py): plain values, which the engine still checks.

Their JSON form is the protocol's (tests/protocol/test_commands.py), turned into these by
service/domain/wire.py (tests/service/domain/test_wire.py).
"""

from __future__ import annotations

import pytest

from service.engine import BadCommand, Game, Move


@pytest.mark.parametrize("count", [0, -1, -5, True, 1.0])
def test_a_move_of_no_whole_number_of_cards_is_a_bad_command(count):
    # Built directly, not decoded from the wire: the engine still refuses it.
    game = Game.deal("caprice", 0)
    with pytest.raises(BadCommand):
        game.apply(Move("tableau/0", "tableau/5", count))
