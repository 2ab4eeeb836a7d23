"""A writer racing others on one game: read, append 3 events, conditional
save, commit; a lost race is retried. Importable by spawned processes."""

from __future__ import annotations

import time
from collections.abc import Callable

from domain.game.events import MessageSent
from domain.game.state import MessageStatus
from domain.log import LoggedEvent
from domain.ports import UnitOfWork, WriteConflict
from infra.db.engine import make_engine
from infra.db.uow import SqlUnitOfWorkFactory
from tests.integration.records import T0

EVENTS_PER_WRITE = 3


def tick(game_id: str, seq: int, who: str, version: int) -> LoggedEvent:
    """An event that says which writer logged it (its id) and the version its
    write made (its trick)."""
    return LoggedEvent(game_id, seq, T0, MessageSent(who, version, 0, 1, MessageStatus.PENDING))


def tick_of(e: LoggedEvent) -> tuple[str, int]:
    """(writer, version) of an event :func:`tick` made."""
    assert isinstance(e.event, MessageSent), e
    return e.event.message_id, e.event.trick


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
                    tick(game_id, game.last_seq + k, who, read_version + 1)
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
