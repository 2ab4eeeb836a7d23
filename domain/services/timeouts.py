"""Use cases of turn clocks and takeovers (issue #15, docs/decisions/0046):
a deadline that passed fires once (the versioned transaction: of two
instances firing it, one commits and the other finds it no longer due);
after ``timeouts_to_takeover`` in a row a bot plays the seat; its player
reclaims it; a player who leaves a running game hands the seat over."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime

from domain.bots.strategy import Strategy, bot_for
from domain.clocks import (
    FALLBACK_BOT,
    DeadlineNear,
    SeatReclaimed,
    TurnTimedOut,
    fallback_moves,
)
from domain.errors import Forbidden
from domain.fairness import bot_rng_state
from domain.game.errors import IllegalAction
from domain.game.events import Event
from domain.game.rng import Rng
from domain.game.views import player_view
from domain.records import GameRecord, GameStatus, MutationResult, Occupant
from domain.services.clocked import clock_of
from domain.services.deps import Deps
from domain.services.engine_change import engine_change
from domain.services.takeover import take_over
from domain.services.transaction import Change, Request, Tx, change_each, change_game


def _with(values: tuple[int, ...], i: int, value: int) -> tuple[int, ...]:
    return (*values[:i], value, *values[i + 1 :])


def timing_out(bot: Strategy) -> Callable[[Tx, GameRecord], Change]:
    """:func:`time_out`, a seat taken over played by ``bot`` from then on."""
    return lambda tx, game: time_out(tx, game, bot)


def time_out(tx: Tx, game: GameRecord, bot: Strategy) -> Change:
    """If the game's deadline has passed: ``TurnTimedOut``, the fallback move
    (GREEDY from the seat's view only, R11, among :func:`fallback_moves`)
    and, at the N-th timeout in a row, ``SeatTakenOver`` (by ``bot``).
    Before it, once the wait's warning time has come: ``DeadlineNear``, once
    (#25). Nothing when not due (fired already)."""
    clock = game.clock
    if game.status is not GameStatus.RUNNING or game.state is None or clock is None:
        return Change(())
    seat, now = clock.waiting, tx.now()
    if seat is None:
        return Change(())
    if not clock.due(now):
        if clock.warn_at is None or clock.warn_at > now or clock.deadline is None:
            return Change(())
        game.clock = replace(clock, warn_at=None)  # once a wait
        return Change([DeadlineNear(seat, clock.deadline)])
    rng = Rng(bot_rng_state(game.seed, game.salt, game.practice, game.version))
    moves = fallback_moves(game.state, seat)
    cmd = bot_for(FALLBACK_BOT)(player_view(game.state, seat), moves, rng)
    events: list[Event] = [TurnTimedOut(seat)]
    timeouts = clock.timeouts[seat] + 1
    game.clock = replace(clock, timeouts=_with(clock.timeouts, seat, timeouts))
    if timeouts >= game.options.timeouts_to_takeover:
        events.append(take_over(game, seat, bot))
    moved = engine_change(game, seat, cmd)
    return Change([*events, *moved.events], moved.cause)


async def fire_deadline(deps: Deps, game_id: str) -> MutationResult:
    """Fire the game's deadline if it is due (again after a lost race, when
    the winner's change shows it is not due any more)."""
    return await change_game(deps, None, game_id, timing_out(deps.takeover_bot))


@dataclass(frozen=True, slots=True)
class DeadlineRound:
    """One sweep: ``fired`` changes logged (timeouts, and warnings before a
    long deadline: #25); ``again`` when the batch was
    full and fired some (more may be due now: sweep again at once);
    ``next_due``, the earliest deadline after the round's now (None: none),
    for the sweeper to wake up at."""

    fired: int
    again: bool
    next_due: datetime | None


async def deadline_round(deps: Deps, limit: int = 100) -> DeadlineRound:
    """Fire the deadlines due now (every instance sweeps; each firing is one
    versioned transaction) and find when the next one falls due."""
    now = deps.clock.now()

    def due() -> tuple[list[str], datetime | None]:
        with deps.uow() as uow:
            return uow.games.due_deadlines(now, limit), uow.games.next_deadline(now)

    game_ids, next_due = await deps.run(due)
    fired = await change_each(deps, game_ids, timing_out(deps.takeover_bot))
    return DeadlineRound(fired, len(game_ids) == limit and fired > 0, next_due)


async def sweep_deadlines(deps: Deps, limit: int = 100) -> int:
    """Fire the deadlines (and warnings) due now; the changes logged."""
    return (await deadline_round(deps, limit)).fired


async def reclaim_seat(deps: Deps, req: Request, game_id: str) -> MutationResult:
    """The player of a seat a bot took over plays it again (``SeatReclaimed``),
    from the next action; a seat whose player left is not given back. If the
    seat must act now, a new wait starts: the change ends with its
    ``ActionRequired`` and deadline, as every change does (domain/services/clocked.py)."""

    def reclaim(tx: Tx, game: GameRecord) -> Change:
        if game.status is not GameStatus.RUNNING:
            raise IllegalAction("only a running game's seat can be reclaimed")
        seat = game.seat_of(req.player_id)
        if seat is None:
            raise Forbidden("you hold no seat in this game")
        occupant = game.seats[seat]
        assert occupant is not None
        if not occupant.is_bot:
            raise IllegalAction("your seat is not played by a bot")
        if seat in clock_of(game).left:
            raise IllegalAction("you left this game: your seat stays with its bot")
        game.seats[seat] = Occupant(req.player_id)
        clock = clock_of(game)
        game.clock = replace(clock, timeouts=_with(clock.timeouts, seat, 0))
        return Change([SeatReclaimed(seat)])

    return await change_game(deps, req, game_id, reclaim)
