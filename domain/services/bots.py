"""Bots play through the same transaction as people, seeing only their
seat's view (R11). A game's bots are driven in a bounded loop off the
caller's request, one committed move at a time."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from domain.bots.strategy import bot_for
from domain.game.commands import Command
from domain.game.legal import legal_actions
from domain.game.rng import Rng, seed_state
from domain.game.views import player_view
from domain.ports import UnitOfWork, WriteConflict
from domain.records import GameRecord, GameStatus
from domain.services.bot_turn import bot_to_act
from domain.services.deps import Deps
from domain.services.mutation import Committed, publish, record_events
from domain.services.play import engine_batch

MAX_MOVES_PER_RUN = 5_000  # a whole game is ~150 moves; a guard, not a limit


def choose(game: GameRecord, seat: int) -> Command:
    """The bot's move from its own view; its RNG comes from the secret seed."""
    assert game.state is not None
    occupant = game.seats[seat]
    assert occupant is not None and occupant.bot is not None
    legal = legal_actions(game.state, seat)
    rng = Rng(seed_state(f"{game.seed}/bot/{game.version}"))
    return bot_for(occupant.bot)(player_view(game.state, seat), legal, rng)


def _step(deps: Deps, game_id: str) -> Committed | None:
    uow: UnitOfWork
    with deps.uow() as uow:
        game = uow.games.get(game_id)
        seat = None if game is None else bot_to_act(game)
        if game is None or seat is None:
            return None
        assert game.state is not None
        read_version = game.version
        events = record_events(deps, game, engine_batch(game, seat, choose(game, seat)))
        uow.events.append(events)
        uow.games.save(game, read_version)
        done = Committed.of(game, events, game.status is GameStatus.FINISHED)
        uow.commit()
    return done


async def drive_bots(deps: Deps, game_id: str, max_moves: int = MAX_MOVES_PER_RUN) -> int:
    """Let the game's bots move until a person must act; returns the moves made.
    A lost race (another instance moved first) just means: look again."""
    moves = conflicts = 0
    while moves < max_moves and conflicts < max_moves:
        try:
            done = await deps.run(lambda: _step(deps, game_id))
        except WriteConflict:
            conflicts += 1
            continue
        if done is None:
            break
        moves += 1
        await publish(deps, done)
        await asyncio.sleep(0)  # let the caller's response and others go first
    return moves


async def resume_stalled_bots(deps: Deps, idle_seconds: float, limit: int = 100) -> int:
    """Wake the bots of games where a bot should have moved ``idle_seconds``
    ago (e.g. the instance driving them died). Safe on every instance at once:
    a move is committed once whoever drives it (optimistic concurrency)."""
    before = deps.clock.now() - timedelta(seconds=idle_seconds)

    def tx() -> list[str]:
        with deps.uow() as uow:
            return uow.games.stalled_bot_games(before, limit)

    ids = await deps.run(tx)
    for game_id in ids:
        deps.schedule_bots(game_id)
    return len(ids)
