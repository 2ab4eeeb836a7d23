"""Bots play through the same transaction as people, seeing only their
seat's view (R11). A game's bots are driven in a bounded loop off the
caller's request, one committed move at a time."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from domain.bots.strategy import bot_for
from domain.errors import Conflict
from domain.fairness import bot_rng_state
from domain.game.commands import Command
from domain.game.legal import legal_actions
from domain.game.rng import Rng
from domain.game.views import player_view
from domain.records import GameRecord
from domain.services.bot_turn import bot_to_act
from domain.services.deps import Deps
from domain.services.engine_change import engine_change
from domain.services.transaction import Change, Tx, change_game

MAX_MOVES_PER_RUN = 5_000  # a whole game is ~150 moves; a guard, not a limit


def choose(game: GameRecord, seat: int) -> Command:
    """The bot's move from its own view; its RNG comes from the secret seed
    and salt (from the seed alone in a practice game; domain/fairness.py)."""
    assert game.state is not None
    occupant = game.seats[seat]
    assert occupant is not None and occupant.bot is not None
    legal = legal_actions(game.state, seat)
    rng = Rng(bot_rng_state(game.seed, game.salt, game.practice, game.version))
    return bot_for(occupant.bot)(player_view(game.state, seat), legal, rng)


def bot_move(tx: Tx, game: GameRecord) -> Change:
    """The move of the bot that must act, if one must."""
    seat = bot_to_act(game)
    if seat is None:
        return Change(())
    return engine_change(game, seat, choose(game, seat))


async def drive_bots(deps: Deps, game_id: str, max_moves: int = MAX_MOVES_PER_RUN) -> int:
    """Let the game's bots move until a person must act; returns the moves made.
    A lost race (another instance moved first) just means: look again."""
    moves = conflicts = 0
    while moves < max_moves and conflicts < max_moves:
        try:
            moved = await change_game(deps, None, game_id, bot_move, wakes_bots=False)
        except Conflict:
            conflicts += 1
            continue
        if not moved.events:
            break
        moves += 1
        await asyncio.sleep(0)  # let the caller's response and others go first
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
