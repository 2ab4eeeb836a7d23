"""A writer racing others on one game: read, append 3 events, conditional
save, commit; a lost race is retried. Importable by spawned processes."""

from __future__ import annotations

import time
from collections.abc import Callable

from domain.ports import UnitOfWork, WriteConflict
from domain.records import StoredEvent
from infra.db.engine import make_engine
from infra.db.uow import SqlUnitOfWorkFactory
from tests.integration.records import T0

EVENTS_PER_WRITE = 3


def hammer(uow: Callable[[], UnitOfWork], game_id: str, writes: int, who: str) -> tuple[int, int]:
    """Commit ``writes`` changes; returns (committed, conflicts)."""
    committed = conflicts = 0
    while committed < writes:
        try:
            with uow() as u:
                game = u.games.get(game_id)
                assert game is not None
                read_version = game.version
                if committed % 2:
                    time.sleep(0.001)  # widen the race window
                events = [
                    StoredEvent(
                        game_id,
                        game.last_seq + k,
                        "Tick",
                        {"by": who, "v": read_version + 1},
                        {},
                        T0,
                    )
                    for k in range(1, EVENTS_PER_WRITE + 1)
                ]
                game.last_seq += EVENTS_PER_WRITE
                game.version += 1
                u.events.append(events)
                u.games.save(game, read_version)
                u.commit()
            committed += 1
        except WriteConflict:
            conflicts += 1
    return committed, conflicts


def hammer_in_process(url: str, game_id: str, writes: int, who: str) -> tuple[int, int]:
    engine = make_engine(url, pool_size=2)
    try:
        return hammer(SqlUnitOfWorkFactory(engine), game_id, writes, who)
    finally:
        engine.dispose()
