"""Rebuild a game's engine state from its log (the causes of its batches):
a check that the log and the stored state tell the same story."""

from __future__ import annotations

from collections.abc import Iterable

from domain.game.command_codec import command_from_dict
from domain.game.engine import apply
from domain.game.setup import new_game
from domain.game.state import GameState
from domain.records import GameRecord, StoredEvent


class CorruptLog(ValueError):
    """A logged cause that is malformed or that the engine refuses: the log
    does not replay."""


def replay_state(game: GameRecord, events: Iterable[StoredEvent]) -> GameState | None:
    """The engine state after every logged cause; None before the start.
    Raises :class:`CorruptLog` (never another error) when a cause does not
    replay."""
    state: GameState | None = None
    for e in events:
        cause = e.cause
        if cause is None:
            continue
        try:
            if "start" in cause:
                state = new_game(
                    game.seat_count,
                    game.seed,
                    game.options,
                    game.rat_choice,
                    cause["start"]["collections"],
                ).state
            elif "command" in cause and state is not None:
                seat = cause["seat"]
                if not isinstance(seat, int) or isinstance(seat, bool):
                    raise TypeError("the seat is not an integer")
                apply(state, seat, command_from_dict(cause["command"]))
        except (KeyError, TypeError, ValueError, AttributeError) as err:  # GameError included
            raise CorruptLog(f"event {e.seq} of game {game.id} does not replay: {err}") from err
    return state
