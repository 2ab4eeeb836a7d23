"""Rebuild a game's engine state from its log (the causes of its changes,
and an abandoned game's end, which has none: docs/decisions/0051): a check
that the log and the stored state tell the same story."""

from __future__ import annotations

from collections.abc import Iterable

from domain.abandonment import is_abandonment
from domain.game import abandoned
from domain.game.engine import apply
from domain.game.setup import new_game
from domain.game.state import GameState
from domain.log import GameStart, LoggedEvent, SeatCommand
from domain.records import GameRecord


class CorruptLog(ValueError):
    """A logged cause that the engine refuses: the log does not replay."""


def replay_state(game: GameRecord, events: Iterable[LoggedEvent]) -> GameState | None:
    """The engine state after every logged cause; None before the start.
    Raises :class:`CorruptLog` (never another error) when a cause does not
    replay."""
    state: GameState | None = None
    for e in events:
        cause = e.cause
        try:
            if isinstance(cause, GameStart):
                setup = new_game(
                    game.seat_count, game.seed, game.options, game.rat_choice, cause.collections
                )
                state = setup.state
            elif isinstance(cause, SeatCommand) and state is not None:
                apply(state, cause.seat, cause.command)
            elif state is not None and is_abandonment(e.event):
                abandoned.abandon(state)
        except (KeyError, TypeError, ValueError, AttributeError) as err:  # GameError included
            raise CorruptLog(f"event {e.seq} of game {game.id} does not replay: {err}") from err
    return state
