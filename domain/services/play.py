"""Use cases: everything a seat does during a game (R5-R7)."""

from __future__ import annotations

from domain.errors import Forbidden, GameNotStarted
from domain.game.command_codec import command_to_dict
from domain.game.commands import Command
from domain.game.engine import apply
from domain.game.errors import GameFinished
from domain.lobby import Batch, Draft
from domain.ports import UnitOfWork
from domain.records import GameRecord, GameStatus
from domain.services.deps import Deps
from domain.services.mutation import Request, mutate
from domain.services.results import MutationResult


def seat_command(game: GameRecord, player_id: str, cmd: Command) -> Batch:
    """Apply ``cmd`` for the caller's seat; the seat comes from the caller,
    never from the request."""
    if game.status is GameStatus.LOBBY or game.state is None:
        raise GameNotStarted("the game has not started yet")
    if game.status is GameStatus.FINISHED:
        raise GameFinished("the game is over (R9.3)")
    seat = game.seat_of(player_id)
    if seat is None:
        raise Forbidden("you hold no seat in this game")
    return engine_batch(game, seat, cmd)


def engine_batch(game: GameRecord, seat: int, cmd: Command) -> Batch:
    """Apply a seat's command to the engine; the command is the cause."""
    assert game.state is not None
    drafts: list[Draft] = [
        (e.type.value, e.public, e.private) for e in apply(game.state, seat, cmd)
    ]
    return Batch(drafts, {"seat": seat, "command": command_to_dict(cmd)})


async def act(deps: Deps, req: Request, game_id: str, cmd: Command) -> MutationResult:
    """Any game command: play, pass, discard and play, decisions, messages."""

    def change(uow: UnitOfWork, game: GameRecord) -> Batch:
        return seat_command(game, req.player_id, cmd)

    return await mutate(deps, req, game_id, change)
