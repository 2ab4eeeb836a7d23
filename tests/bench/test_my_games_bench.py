"""``me.games`` at scale (issue #24), run by ``make bench``: 100,000 games of
10,000 players (3 to 6 people each, ~45 games a player, a tenth waiting for
their player), on SQLite and PostgreSQL in process; the first page, the
"waiting for you" page and a second page of random players, through the use
case (one transaction, the names read too).

Target: p99 under 10 ms on both. Reference, in the same run: the lobby
listing's first page (``games``), an indexed page of the same size.
"""

from __future__ import annotations

import asyncio
import random
import statistics
import time
from collections.abc import Awaitable, Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from domain.game.options import GameOptions
from domain.my_games import rank_of
from domain.records import GameRecord, GameStatus, Occupant
from domain.services.deps import Deps
from domain.services.my_games import my_games
from domain.services.queries import list_games
from infra.bootstrap import run_inline
from infra.bus.memory import InProcessBus
from infra.clock import SystemClock
from infra.db import mappers as m
from infra.db.engine import make_engine
from infra.db.migrate import upgrade
from infra.db.tables import game_seats, games, players
from infra.db.uow import SqlUnitOfWorkFactory
from infra.ids import RandomIds
from tests.integration.databases import fresh_postgres, sqlite_url

PLAYERS = 10_000
GAMES = 100_000
SAMPLES = 2_000
T0 = datetime(2026, 1, 1, tzinfo=UTC)
BATCH = 5_000


def _fill(engine: sa.Engine, rng: random.Random) -> list[str]:
    """The players and games, written in batches; the player ids."""
    ids = [f"p{i:05d}" for i in range(PLAYERS)]
    with engine.begin() as c:
        for at in range(0, PLAYERS, BATCH):
            c.execute(
                sa.insert(players),
                [
                    {"id": p, "name": f"n{p}", "created_at": T0, "key_digest": None}
                    for p in ids[at : at + BATCH]
                ],
            )
    statuses = [GameStatus.RUNNING] * 3 + [GameStatus.FINISHED] * 6 + [GameStatus.LOBBY]
    for at in range(0, GAMES, BATCH):
        rows, seat_rows = [], []
        for n in range(at, min(at + BATCH, GAMES)):
            people = rng.sample(ids, rng.randint(3, 6))
            updated = T0 + timedelta(seconds=n * 7)
            status = rng.choice(statuses)
            game = GameRecord(
                f"g{n:06d}",
                people[0],
                len(people),
                GameOptions(),
                "seed",
                None,
                [Occupant(player_id=p) for p in people],
                updated,
                updated,
                status,
            )
            rows.append(m.game_to_row(game))
            waiting = rng.randrange(len(people)) if status is GameStatus.RUNNING else None
            for seat, p in enumerate(people):
                mine = seat == waiting
                deadline = updated + timedelta(hours=1) if mine else None
                done = status is GameStatus.FINISHED
                seat_rows.append(
                    {
                        "player_id": p,
                        "game_id": game.id,
                        "seat": seat,
                        "status": status.value,
                        "your_turn": mine,
                        "deadline": deadline,
                        "rank": rank_of(mine, deadline, updated),
                        "format": "singleton",
                        "seat_count": len(people),
                        "created_at": updated,
                        "updated_at": updated,
                        "score": rng.randint(0, 90) if done else None,
                        "place": rng.randint(1, len(people)) if done else None,
                        "won": rng.random() < 0.3 if done else None,
                    }
                )
        with engine.begin() as c:
            c.execute(sa.insert(games), rows)
            c.execute(sa.insert(game_seats), seat_rows)
    with engine.begin() as c:
        if engine.dialect.name == "postgresql":
            c.exec_driver_sql("ANALYZE")
        else:
            c.exec_driver_sql("ANALYZE")
    return ids


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[sa.Engine]:
    if request.param == "sqlite":
        url = sqlite_url(tmp_path)
        upgrade(url)
        e = make_engine(url)
        yield e
        e.dispose()
        return
    with fresh_postgres(request.getfixturevalue("database_url")) as url:
        upgrade(url)
        e = make_engine(url)
        yield e
        e.dispose()


def _timed(samples: int, call: Callable[[int], Awaitable[Any]]) -> list[float]:
    async def go() -> list[float]:
        out = []
        for i in range(samples):
            t = time.perf_counter()
            await call(i)
            out.append((time.perf_counter() - t) * 1000)
        return out

    return asyncio.run(go())


def _line(name: str, ms: list[float], reference: float | None = None) -> str:
    p50 = statistics.median(ms)
    p99 = statistics.quantiles(ms, n=100)[98]
    ratio = "" if reference is None else f"  ({p99 / reference:.1f}x the lobby page's p99)"
    return f"  {name:<28} p50 {p50:6.2f} ms  p99 {p99:6.2f} ms{ratio}"


def test_my_games_pages_at_100k_games(engine: sa.Engine) -> None:
    rng = random.Random(24)
    t = time.perf_counter()
    ids = _fill(engine, rng)
    filled = time.perf_counter() - t
    deps = Deps(
        SqlUnitOfWorkFactory(engine),
        run_inline,
        InProcessBus(1_000),
        SystemClock(),
        RandomIds(),
        lambda _: None,
    )
    picks = [rng.choice(ids) for _ in range(SAMPLES)]
    seconds: list[tuple[str, str] | None] = []
    for p in picks:
        page = asyncio.run(my_games(deps, p, None, None, None, 20))
        seconds.append(
            (page.items[-1].entry.rank, page.items[-1].entry.game_id) if page.has_next else None
        )

    lobby = _timed(SAMPLES, lambda i: list_games(deps, None, None, 20))
    first = _timed(SAMPLES, lambda i: my_games(deps, picks[i], None, None, None, 20))
    turn = _timed(SAMPLES, lambda i: my_games(deps, picks[i], None, True, None, 20))
    status = _timed(
        SAMPLES, lambda i: my_games(deps, picks[i], GameStatus.FINISHED, None, None, 20)
    )
    after = [s for s in seconds if s is not None]
    second = _timed(len(after), lambda i: my_games(deps, picks[i], None, None, after[i], 20))
    ref = statistics.quantiles(lobby, n=100)[98]
    print(
        f"\nme.games on {engine.dialect.name}: {GAMES:,} games, {PLAYERS:,} players "
        f"(filled in {filled:.0f} s), pages of 20, {SAMPLES:,} random players"
    )
    print(_line("lobby listing (reference)", lobby))
    for name, ms in (
        ("me.games first page", first),
        ("me.games yourTurn", turn),
        ("me.games status FINISHED", status),
        ("me.games second page", second),
    ):
        print(_line(name, ms, ref))
        assert statistics.quantiles(ms, n=100)[98] < 10.0, f"{name}: p99 over 10 ms"
