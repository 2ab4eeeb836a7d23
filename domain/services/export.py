"""Use case: a finished game's whole log for ``mmk export`` (every
audience's projection of each event, and the causes), which ``mmk verify``
checks (domain/verify.py, docs/decisions/0040)."""

from __future__ import annotations

from domain.log import ExportedEvent
from domain.ports import UnitOfWork
from domain.services.queries import check_ended_by_rules, load_game


def export_log(uow: UnitOfWork, game_id: str) -> list[ExportedEvent]:
    """The log of a finished game; refuses a game that has not ended (its
    seed is secret until then, and an export of it would not verify)."""
    game = load_game(uow, game_id)
    check_ended_by_rules(game, "an export")
    return uow.events.read_audiences(game_id, 0, game.last_seq, game.seat_count, causes=True)
