"""Use case: a finished game step by step, every seat's hand shown (R11:
what each seat saw is revealed once the game has ended, and only then; the
same log as ``mmk export``, docs/decisions/0067)."""

from __future__ import annotations

from dataclasses import dataclass

from domain.errors import BadRequest, GameNotStarted
from domain.log import ExportedEvent
from domain.records import GameStatus
from domain.services.deps import Deps
from domain.services.queries import check_limit, load_seen


@dataclass(frozen=True, slots=True)
class ReplayPage:
    """Steps of a finished game's log: each event as the public and each
    seat saw it (a seat's own projection, or the public one)."""

    game_id: str
    steps: list[ExportedEvent]
    has_more: bool
    seat_count: int


async def read_replay(
    deps: Deps, game_id: str, player_id: str | None, after_seq: int, limit: int
) -> ReplayPage:
    """The steps after ``after_seq`` of a game the rules ended, as each
    audience saw them, in one read of the log. A game still in its lobby is
    ``GAME_NOT_STARTED``; a running one, and an abandoned one (its hands
    were never played out, as ``mmk export`` refuses it), are
    ``BAD_INPUT``; a private game is ``NOT_FOUND`` to those who may not see
    it (0062)."""
    check_limit(limit)
    if after_seq < 0:
        raise BadRequest("afterSeq is 0 or more")

    def tx() -> ReplayPage:
        with deps.uow() as uow:
            game = load_seen(uow, game_id, player_id)
            if game.status is GameStatus.LOBBY:
                raise GameNotStarted(f"game {game_id} has not started: nothing to replay")
            if game.status is GameStatus.RUNNING:
                raise BadRequest(f"game {game_id} is running: its replay opens once it has ended")
            if game.status is GameStatus.ABANDONED:
                raise BadRequest(
                    f"game {game_id} was abandoned: only a game the rules ended is replayed"
                )
            steps = uow.events.read_audiences(game_id, after_seq, limit + 1, game.seat_count)
            return ReplayPage(game_id, steps[:limit], len(steps) > limit, game.seat_count)

    return await deps.run(tx)
