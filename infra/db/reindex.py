"""``mmk games reindex``: every game's "my games" rows (``game_seats``,
issue #24) written again from the game itself, in batches, each batch one
transaction. Migration 0012 makes them from the games' columns only; this
adds the scores, places and wins of games finished before it."""

from __future__ import annotations

import sqlalchemy as sa

from infra.db.tables import games
from infra.db.uow import SqlUnitOfWorkFactory

BATCH = 500


def reindex_game_seats(engine: sa.Engine, batch: int = BATCH) -> int:
    """How many games were reindexed."""
    factory = SqlUnitOfWorkFactory(engine)
    done, after = 0, ""
    while True:
        page = sa.select(games.c.id).where(games.c.id > after).order_by(games.c.id).limit(batch)
        with engine.connect() as c:
            ids = [r[0] for r in c.execute(page)]
        if not ids:
            return done
        with factory() as uow:
            for game_id in ids:
                uow.games.rewrite_entries(game_id)  # type: ignore[attr-defined]
            uow.commit()
        done, after = done + len(ids), ids[-1]
