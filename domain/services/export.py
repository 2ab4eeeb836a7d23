"""Use case: a finished game's whole log for ``mmk export`` (every
audience's projection of each event, and the causes), which ``mmk verify``
checks (domain/verify.py, docs/decisions/0040)."""

from __future__ import annotations

from domain.errors import BadRequest
from domain.log import ExportedEvent
from domain.ports import UnitOfWork
from domain.records import GameStatus
from domain.services.queries import load_game


def export_log(uow: UnitOfWork, game_id: str) -> list[ExportedEvent]:
    """The log of a finished game; refuses a game that has not ended (its
    seed is secret until then, and an export of it would not verify)."""
    game = load_game(uow, game_id)
    if game.status is GameStatus.ABANDONED:
        raise BadRequest(f"game {game_id} was abandoned: only a game the rules ended is exported")
    if game.status is not GameStatus.FINISHED:
        raise BadRequest(f"game {game_id} has not ended: it is exported once it has")
    return uow.events.read_audiences(game_id, 0, game.last_seq, game.seat_count, causes=True)
