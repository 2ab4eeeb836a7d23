"""Bots play through the same transaction as people, seeing only their
seat's view (R11). A game's bots are driven in a bounded loop off the
caller's request, one committed move at a time."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from functools import partial

from domain.bots.expert import Budget
from domain.bots.strategy import Strategy, bot_for
from domain.bots.thinking import ThinkJob, think
from domain.errors import Conflict
from domain.fairness import bot_rng_state
from domain.game.commands import Command
from domain.game.events import Event
from domain.game.legal import legal_actions
from domain.game.rng import Rng
from domain.game.views import player_view
from domain.ports import UnitOfWork
from domain.records import GameRecord
from domain.services.bot_turn import bot_to_act
from domain.services.deps import Deps
from domain.services.engine_change import engine_change
from domain.services.transaction import Change, Tx, change_game

MAX_MOVES_PER_RUN = 5_000  # a whole game is ~150 moves; a guard, not a limit


SEEN_PAGE = 1_000


@dataclass(frozen=True, slots=True)
class Planned:
    """An EXPERT move thought out before its transaction, for ``seat`` at
    game ``version``: played only if the game is still there."""

    version: int
    seat: int
    command: Command


def _rng_state(game: GameRecord) -> int:
    return bot_rng_state(game.seed, game.salt, game.practice, game.version)


def choose(game: GameRecord, seat: int) -> Command:
    """The bot's move from its own view; its RNG comes from the secret seed
    and salt (from the seed alone in a practice game; domain/fairness.py).
    EXPERT here has no memory of the past events: the server plans its
    moves (:func:`plan`)."""
    assert game.state is not None
    occupant = game.seats[seat]
    assert occupant is not None and occupant.bot is not None
    legal = legal_actions(game.state, seat)
    return bot_for(occupant.bot)(player_view(game.state, seat), legal, Rng(_rng_state(game)))


def think_job(game: GameRecord, seat: int, seen: Sequence[Event], budget: Budget) -> ThinkJob:
    """What ``seat``'s EXPERT decides from: its view, its legal commands,
    ``seen`` (its seat's projection of the log) and its RNG (R11)."""
    assert game.state is not None
    legal = tuple(legal_actions(game.state, seat))
    return ThinkJob(player_view(game.state, seat), legal, tuple(seen), _rng_state(game), budget)


def seen_by(uow: UnitOfWork, game: GameRecord, seat: int) -> list[Event]:
    """The game's log as ``seat`` was served it (R11)."""
    out: list[Event] = []
    after = 0
    while after < game.last_seq:
        page = uow.events.read(game.id, after, SEEN_PAGE, seat)
        if not page:
            break
        out += [e.event for e in page]
        after = page[-1].seq
    return out


async def plan(deps: Deps, game_id: str) -> Planned | None:
    """If the bot to act in the game plays EXPERT, its move, thought out
    before the transaction by ``deps.thinker`` (worker processes), never on
    the event loop; None for any other bot (it moves in the transaction)."""

    def read() -> tuple[int, int, ThinkJob] | None:
        with deps.uow() as uow:
            game = uow.games.get(game_id)
            if game is None or (seat := bot_to_act(game)) is None:
                return None
            occupant = game.seats[seat]
            if occupant is None or occupant.bot is not Strategy.EXPERT:
                return None
            seen = seen_by(uow, game, seat)
            return game.version, seat, think_job(game, seat, seen, deps.expert_budget)

    found = await deps.run(read)
    if found is None:
        return None
    version, seat, job = found
    command = think(job) if deps.thinker is None else await deps.thinker.think(job)
    return Planned(version, seat, command)


def bot_move(
    tx: Tx, game: GameRecord, planned: Planned | None = None, unplanned: list[int] | None = None
) -> Change:
    """The move of the bot that must act, if one must: an EXPERT's as
    ``planned`` for this very version; without such a plan, nothing, and
    the EXPERT's seat noted in ``unplanned`` (plan it, then try again)."""
    seat = bot_to_act(game)
    if seat is None:
        return Change(())
    occupant = game.seats[seat]
    assert occupant is not None
    if occupant.bot is Strategy.EXPERT:
        if planned is None or (planned.version, planned.seat) != (game.version, seat):
            if unplanned is not None:
                unplanned.append(seat)
            return Change(())
        return engine_change(game, seat, planned.command)
    return engine_change(game, seat, choose(game, seat))


async def drive_bots(deps: Deps, game_id: str, max_moves: int = MAX_MOVES_PER_RUN) -> int:
    """Let the game's bots move until a person must act; returns the moves made.
    RANDOM and GREEDY move in their transaction; an EXPERT that must act is
    planned first (:func:`plan`), then its move is tried (again, should the
    game have moved on meanwhile). A lost race (another instance moved
    first) just means: look again."""
    moves = tries = 0
    planned: Planned | None = None
    while moves < max_moves and tries < max_moves:
        unplanned: list[int] = []
        decide = partial(bot_move, planned=planned, unplanned=unplanned)
        try:
            moved = await change_game(deps, None, game_id, decide, wakes_bots=False)
        except Conflict:
            tries += 1
            continue
        if moved.events:
            moves += 1
            await asyncio.sleep(0)  # let the caller's response and others go first
            continue
        if not unplanned:
            break  # no bot has anything to do now
        tries += 1
        planned = await plan(deps, game_id)
    return moves


async def resume_stalled_bots(deps: Deps, idle_seconds: float, limit: int = 100) -> int:
    """Wake the bots of games where a bot should have moved ``idle_seconds``
    ago (e.g. the instance driving them died). Safe on every instance at once:
    a move is committed once whoever drives it (optimistic concurrency)."""
    before = deps.clock.now() - timedelta(seconds=idle_seconds)

    def stalled() -> list[str]:
        with deps.uow() as uow:
            return uow.games.stalled_bot_games(before, limit)

    ids = await deps.run(stalled)
    for game_id in ids:
        deps.schedule_bots(game_id)
    return len(ids)
