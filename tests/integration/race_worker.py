"""A process that races moves on one game through the real use cases (used
by test_races.py on PostgreSQL): it plays whatever the game waits for, as
that seat's player, ``moves`` times, and counts what came back."""

from __future__ import annotations

import asyncio
from collections import Counter

from domain.errors import DomainError
from domain.game.commands import Command
from domain.game.engine import to_act
from domain.game.legal import legal_actions
from domain.services.deps import Deps
from domain.services.play import act
from domain.services.transaction import Request
from infra.bus.memory import InProcessBus
from infra.clock import SystemClock
from infra.db.engine import make_engine
from infra.db.uow import SqlUnitOfWorkFactory
from infra.ids import RandomIds


async def race(deps: Deps, game_id: str, players: list[str], moves: int) -> Counter[str]:
    outcomes: Counter[str] = Counter()
    for _ in range(moves):

        def load() -> tuple[int, Command] | None:
            with deps.uow() as uow:
                game = uow.games.get(game_id)
                assert game is not None and game.state is not None
                seat = to_act(game.state)
                if seat is None:
                    return None
                return seat, legal_actions(game.state, seat)[0]

        found = await deps.run(load)
        if found is None:
            break
        seat, cmd = found
        try:
            await act(deps, Request(players[seat], "act", {}), game_id, cmd)
            outcomes["ok"] += 1
        except DomainError as e:
            outcomes[e.code.value] += 1
    return outcomes


def run_process(url: str, game_id: str, players: list[str], moves: int) -> dict[str, int]:
    engine = make_engine(url)
    deps = Deps(
        SqlUnitOfWorkFactory(engine),
        asyncio.to_thread,
        InProcessBus(),
        SystemClock(),
        RandomIds(),
        lambda _: None,
    )
    try:
        return dict(asyncio.run(race(deps, game_id, players, moves)))
    finally:
        engine.dispose()
