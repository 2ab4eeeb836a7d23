"""Whether a bot has something to do in a game now."""

from __future__ import annotations

from domain.abandonment import room_empty
from domain.game.engine import to_act
from domain.game.legal import legal_actions
from domain.game.state import Phase
from domain.records import GameRecord, GameStatus


def bot_to_act(game: GameRecord) -> int | None:
    """A bot seat with something to do now, if any. None in an empty room
    (a bot plays every person's seat): the bots wait for a player to
    reclaim a seat, or for the game to be abandoned (docs/decisions/0051)."""
    state = game.state
    if game.status is not GameStatus.RUNNING or state is None or room_empty(game):
        return None
    seat = to_act(state)
    if seat is not None and (o := game.seats[seat]) is not None and o.is_bot:
        return seat
    rat = game.seats[state.rat]
    if (
        state.phase is Phase.LEAD
        and rat is not None
        and rat.is_bot
        and legal_actions(state, state.rat)
    ):
        return state.rat  # the Rat's messenger duties (R5.2)
    return None
