"""A seat's command through the engine as a change to its game (R5-R7):
shared by the seat's own moves, its bot's and a timeout's fallback."""

from __future__ import annotations

from domain.fairness import reveal
from domain.game.commands import Command
from domain.game.engine import apply
from domain.log import SeatCommand
from domain.records import GameRecord
from domain.services.transaction import Change


def engine_change(game: GameRecord, seat: int, cmd: Command) -> Change:
    """A seat's command through the engine; the command is the cause. The
    change that ends the game reveals the seed and salt (domain/fairness.py)."""
    assert game.state is not None
    events = reveal(apply(game.state, seat, cmd), game.seed, game.salt)
    return Change(events, SeatCommand(seat, cmd))
