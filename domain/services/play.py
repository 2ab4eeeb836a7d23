"""Use cases: everything a seat does during a game (R5-R7)."""

from __future__ import annotations

from domain.errors import Forbidden, GameNotStarted
from domain.game.commands import Command
from domain.game.errors import GameFinished, IllegalAction
from domain.records import GameRecord, GameStatus, MutationResult
from domain.services.deps import Deps
from domain.services.engine_change import engine_change
from domain.services.transaction import Change, Request, Tx, change_game


def seat_command(game: GameRecord, player_id: str, cmd: Command) -> Change:
    """Apply ``cmd`` for the caller's seat; the seat comes from the caller,
    never from the request."""
    if game.status is GameStatus.LOBBY or game.state is None:
        raise GameNotStarted("the game has not started yet")
    if game.status is GameStatus.FINISHED:
        raise GameFinished("the game is over (R9.3)")
    if game.status is GameStatus.ABANDONED:
        raise GameFinished("the game was abandoned: nobody played it any more")
    seat = game.seat_of(player_id)
    if seat is None:
        raise Forbidden("you hold no seat in this game")
    occupant = game.seats[seat]
    if occupant is not None and occupant.is_bot:
        raise IllegalAction("a bot plays your seat now: reclaimSeat first (docs/decisions/0046)")
    return engine_change(game, seat, cmd)


async def act(deps: Deps, req: Request, game_id: str, cmd: Command) -> MutationResult:
    """Any game command: play, pass, discard and play, decisions, messages."""

    def command(tx: Tx, game: GameRecord) -> Change:
        return seat_command(game, req.player_id, cmd)

    return await change_game(deps, req, game_id, command)
