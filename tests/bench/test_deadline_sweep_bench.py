"""The deadline sweep's cost on PostgreSQL (issue #15, "Speed"), run by
``make bench``: 10,000 running timed games, none due, and as many games
without a deadline; one sweep round is the repository's ``due_deadlines``
and ``next_deadline`` queries (the games due, and when to wake up next).
Their database time comes from ``EXPLAIN (ANALYZE)``; both plans must use
the partial index ``ix_games_deadline`` (no scan of ``games``). Reference in
the same run: ``SELECT 1``. Target: under 5 ms of database time a round.
Needs ``DATABASE_URL`` on PostgreSQL."""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import time
from datetime import UTC, datetime

import pytest
import sqlalchemy as sa

from infra.db import migrate
from infra.db.engine import make_engine
from infra.db.tables import games
from infra.db.uow import SqlUnitOfWorkFactory
from tests.integration.databases import fresh_postgres
from tests.integration.test_fair_deals_on_sql import bots_game

TIMED = 10_000
ROUNDS = 200


def _explain_ms(conn: sa.Connection, sql: str, params: dict[str, object]) -> tuple[float, str]:
    row = conn.execute(sa.text(f"EXPLAIN (ANALYZE, FORMAT JSON) {sql}"), params).scalar_one()
    plan = row if isinstance(row, list) else json.loads(row)
    return float(plan[0]["Execution Time"]), json.dumps(plan[0]["Plan"])


def test_a_sweep_over_ten_thousand_timed_games_uses_the_index() -> None:
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("postgresql"):
        pytest.fail("DATABASE_URL must name a PostgreSQL server")
    with fresh_postgres(url) as db:
        migrate.upgrade(db)
        engine = make_engine(db)
        try:
            asyncio.run(bots_game(SqlUnitOfWorkFactory(engine), 3, play=False))
            columns = [c.name for c in games.columns]
            later = "now() + (1 + random() * 600) * interval '1 second'"
            with engine.begin() as conn:
                for deadline in (later, "NULL"):  # timed games, then games without one
                    made = {"id": "md5(random()::text || n)", "deadline": deadline}
                    picked = ", ".join(made.get(c, c) for c in columns)
                    conn.execute(
                        sa.text(
                            f"INSERT INTO games ({', '.join(columns)}) SELECT {picked} "
                            f"FROM (SELECT * FROM games LIMIT 1) g, generate_series(1, {TIMED}) n"
                        )
                    )
                conn.execute(sa.text("ANALYZE games"))
            uow = SqlUnitOfWorkFactory(engine)
            now = datetime.now(UTC)
            sweep_ms, select_ms = [], []
            for _ in range(ROUNDS):
                start = time.perf_counter()
                with uow() as u:
                    assert u.games.due_deadlines(now, 100) == []
                    assert u.games.next_deadline(now) is not None
                sweep_ms.append((time.perf_counter() - start) * 1e3)
                start = time.perf_counter()
                with engine.connect() as conn:
                    conn.execute(sa.text("SELECT 1"))
                select_ms.append((time.perf_counter() - start) * 1e3)
            with engine.connect() as conn:
                count = conn.execute(sa.text("SELECT count(*) FROM games")).scalar_one()
                due_ms, plan = _explain_ms(
                    conn,
                    "SELECT id FROM games WHERE deadline IS NOT NULL AND deadline <= :now "
                    "ORDER BY deadline LIMIT 100",
                    {"now": now},
                )
                next_ms, next_plan = _explain_ms(
                    conn,
                    "SELECT deadline FROM games WHERE deadline IS NOT NULL AND deadline > :now "
                    "ORDER BY deadline LIMIT 1",
                    {"now": now},
                )
                db_ms = due_ms + next_ms
        finally:
            engine.dispose()
    sweep, select = statistics.median(sweep_ms), statistics.median(select_ms)
    print(
        f"\n  {count:,} games ({TIMED:,} timed, none due): a sweep round {sweep:.3f} ms"
        f" (median of {ROUNDS}, the repository through a unit of work), SELECT 1 {select:.3f} ms"
        f" ({sweep / select:.1f}x); database time (EXPLAIN ANALYZE) {db_ms:.3f} ms"
        f" (due {due_ms:.3f}, next {next_ms:.3f})"
        f"\n  plans: {plan[:160]}\n         {next_plan[:160]}"
    )
    for p in (plan, next_plan):
        assert "ix_games_deadline" in p and "Seq Scan" not in p
    assert db_ms < 5.0
