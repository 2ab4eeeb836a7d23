"""What the work after a commit needs is taken before the commit: the record
is the repository's then, and may be handed to the next change."""

from __future__ import annotations

from domain.records import GameStatus
from domain.services.bot_turn import bot_to_act
from domain.services.mutation import Committed, lobby_message
from tests.integration import records as r


def test_a_committed_change_keeps_nothing_of_the_live_record() -> None:
    game = r.started_game("host")
    done = Committed.of(game, [r.event(game.id, 3)], lobby_changed=True)
    lobby, bot_turn = lobby_message(game), bot_to_act(game) is not None
    # the next change, handed the same record by the game cache
    game.version += 1
    game.status = GameStatus.FINISHED
    game.state = None
    assert (done.game_id, done.seat_count, done.lobby, done.bot_turn) == (
        game.id,
        4,
        lobby,
        bot_turn,
    )
    assert done.lobby is not None and done.lobby["status"] == "running"


def test_a_change_that_leaves_the_listing_alone_sends_the_lobby_nothing() -> None:
    game = r.started_game("host")
    assert Committed.of(game, [], lobby_changed=False).lobby is None
