"""PostgreSQL's reads without a worker thread (issue #28,
docs/decisions/0073): a game read in the event loop is the game a unit of
work reads, served from the game cache only at the stored version (another
process's change is always seen); a connection lost while idle, or a read
cancelled mid-statement, costs no later read; the database away is an
error the API counts as unavailable."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.exc import DBAPIError, DisconnectionError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from domain.records import GameRecord, SessionRecord
from infra.db import async_reads
from infra.db.async_reads import READERS, AsyncReads
from infra.db.committed_reads import AsyncCommittedReads
from infra.db.direct import DirectStatement
from infra.db.engine import make_engine
from infra.db.errors import is_unavailable
from infra.db.game_cache import GameCache
from infra.db.migrate import upgrade
from infra.db.uow import SqlUnitOfWorkFactory
from tests.integration import records as r
from tests.integration.databases import empty_tables, fresh_postgres

_BACKENDS = (
    "SELECT pid FROM pg_stat_activity"
    " WHERE datname = current_database() AND pid <> pg_backend_pid()"
)


@pytest.fixture(scope="module")
def pg_url(database_url: str) -> Iterator[str]:
    with fresh_postgres(database_url) as url:
        upgrade(url)
        yield url


@pytest.fixture
def engine(pg_url: str) -> Iterator[sa.Engine]:
    eng = make_engine(pg_url)
    empty_tables(eng)
    yield eng
    eng.dispose()


@pytest.fixture
async def reads(engine: sa.Engine) -> AsyncReads:
    return AsyncReads(engine)


def _saved_moved(uow: SqlUnitOfWorkFactory, game: GameRecord) -> GameRecord:
    """``game`` one version later, committed through ``uow``."""
    moved = game.clone()
    moved.version += 1
    assert moved.state is not None
    moved.state.seats[1].hand.append(moved.state.seats[0].hand.pop())
    with uow() as u:
        u.games.save(moved.clone(), game.version)
        u.commit()
    return moved


async def test_a_game_read_in_the_loop_is_the_game_a_unit_of_work_reads(
    engine: sa.Engine, reads: AsyncReads
) -> None:
    cache = GameCache()
    committed = AsyncCommittedReads(reads, cache)
    plain = SqlUnitOfWorkFactory(engine)
    game = r.committed_game(plain)
    for _ in range(3):  # the miss (row read and decoded), then the cached copies
        found = await committed.game(game.id)
        with plain() as u:
            assert found == u.games.get(game.id) == game
    assert cache.hits == 2
    assert await committed.game("no-such-game") is None
    try:
        assert reads.opened == 1  # one connection, reused
    finally:
        await reads.aclose()


async def test_a_session_read_in_the_loop_is_the_one_a_unit_of_work_reads(
    engine: sa.Engine, reads: AsyncReads
) -> None:
    plain = SqlUnitOfWorkFactory(engine)
    ann = r.player()
    session = SessionRecord("s1", ann.id, "phone", r.T0, r.T0)
    with plain() as u:
        u.players.add(ann)
        u.players.add_session(session, "h1")
        u.commit()
    committed = AsyncCommittedReads(reads, None)
    try:
        found = await committed.session("h1")
        with plain() as u:
            assert found == u.players.by_token_hash("h1") == (ann, session, "h1")
        assert await committed.session("h2") is None
    finally:
        await reads.aclose()


async def test_another_process_s_change_is_seen_and_copies_are_the_caller_s(
    engine: sa.Engine, reads: AsyncReads
) -> None:
    cache = GameCache()
    committed = AsyncCommittedReads(reads, cache)
    other = SqlUnitOfWorkFactory(make_engine(engine.url), GameCache())  # another process
    try:
        game = r.committed_game(other)
        first = await committed.game(game.id)
        assert first is not None
        assert first.state is not None
        first.state.seats[0].hand.clear()  # the caller's own copy
        assert await committed.game(game.id) == game
        moved = _saved_moved(other, game)
        assert await committed.game(game.id) == moved  # not the cached version
    finally:
        other.engine.dispose()
        await reads.aclose()


class CountingReads(AsyncReads):
    """The reads, and how many statements they sent."""

    sent = 0

    async def first(self, statement: DirectStatement, values: Any) -> dict[str, Any] | None:
        self.sent += 1
        return await super().first(statement, values)


async def test_a_cached_game_costs_one_round_trip_changed_or_not(engine: sa.Engine) -> None:
    """The cache's check and its miss in one statement (issue #28): the
    version, and the row only when it is not the cached one's."""
    reads = CountingReads(engine)
    cache = GameCache()
    committed = AsyncCommittedReads(reads, cache)
    other = SqlUnitOfWorkFactory(make_engine(engine.url), GameCache())  # another process
    try:
        game = r.committed_game(other)
        assert await committed.game(game.id) == game
        assert reads.sent == 1  # nothing cached: the row
        assert await committed.game(game.id) == game
        assert (reads.sent, cache.hits) == (2, 1)  # the version only, the copy served
        moved = _saved_moved(other, game)
        assert await committed.game(game.id) == moved
        assert (reads.sent, cache.hits) == (3, 1)  # changed: the row came with it
        assert await committed.game(game.id) == moved
        assert (reads.sent, cache.hits) == (4, 2)
        assert await committed.game("no-such-game") is None
        assert reads.sent == 5
        with engine.begin() as c:  # gone (a record sweep): not the cached copy
            c.execute(sa.text("DELETE FROM game_seats WHERE game_id = :id"), {"id": game.id})
            c.execute(sa.text("DELETE FROM games WHERE id = :id"), {"id": game.id})
        assert await committed.game(game.id) is None
        assert reads.sent == 6
    finally:
        other.engine.dispose()
        await reads.aclose()


async def test_a_connection_lost_while_idle_costs_no_read(
    engine: sa.Engine, reads: AsyncReads
) -> None:
    committed = AsyncCommittedReads(reads, GameCache())
    game = r.committed_game(SqlUnitOfWorkFactory(engine))
    try:
        assert await committed.game(game.id) == game
        with engine.connect() as c:  # a restart, an administrator's pg_terminate_backend
            for (pid,) in c.execute(sa.text(_BACKENDS)).all():
                c.execute(sa.text("SELECT pg_terminate_backend(:p)"), {"p": pid})
        assert await committed.game(game.id) == game
        assert reads.opened == 2
    finally:
        await reads.aclose()


async def test_a_read_cancelled_mid_statement_leaves_no_connection_behind(
    engine: sa.Engine, reads: AsyncReads
) -> None:
    slow = DirectStatement(sa.select(sa.func.pg_sleep(30).label("slept")))
    game = r.committed_game(SqlUnitOfWorkFactory(engine))
    committed = AsyncCommittedReads(reads, GameCache())
    try:
        read = asyncio.ensure_future(reads.first(slow, {}))
        deadline = asyncio.get_running_loop().time() + 10
        while not _sleeping(engine):  # the statement runs on the server
            assert asyncio.get_running_loop().time() < deadline, "the read never started"
            await asyncio.sleep(0.02)
        read.cancel()
        with pytest.raises(asyncio.CancelledError):
            await read
        assert await committed.game(game.id) == game  # on a new connection
        assert reads.opened == 2
    finally:
        await reads.aclose()
    deadline = asyncio.get_running_loop().time() + 10
    while _sleeping(engine):  # the cancelled statement's backend went with its connection
        assert asyncio.get_running_loop().time() < deadline, "the cancelled read still runs"
        await asyncio.sleep(0.05)


def _sleeping(engine: sa.Engine) -> bool:
    with engine.connect() as c:
        found = c.execute(
            sa.text(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                " AND state = 'active' AND query LIKE '%pg_sleep%' AND pid <> pg_backend_pid()"
            )
        ).scalar_one()
    return bool(found)


async def test_the_database_away_is_an_unavailable_error() -> None:
    away = make_engine("postgresql+psycopg://postgres@127.0.0.1:1/none")
    reads = AsyncReads(away)
    try:
        with pytest.raises(DBAPIError) as raised:
            await AsyncCommittedReads(reads, GameCache()).game("g1")
        assert is_unavailable(raised.value)
    finally:
        await reads.aclose()
        away.dispose()


def test_reads_in_another_event_loop_open_their_own_connections(
    engine: sa.Engine,
) -> None:
    reads = AsyncReads(engine)
    game = r.committed_game(SqlUnitOfWorkFactory(engine))
    committed = AsyncCommittedReads(reads, None)  # no cache: the row each time
    try:
        assert asyncio.run(committed.game(game.id)) == game
        assert asyncio.run(committed.game(game.id)) == game  # not the first loop's connection
        assert reads.opened == 2
    finally:
        asyncio.run(reads.aclose())


async def test_many_reads_at_once_share_a_few_connections(
    engine: sa.Engine, reads: AsyncReads
) -> None:
    committed = AsyncCommittedReads(reads, GameCache())
    games = [r.committed_game(SqlUnitOfWorkFactory(engine)) for _ in range(3)]
    try:
        found = await asyncio.gather(*(committed.game(games[i % 3].id) for i in range(40)))
        assert found == [games[i % 3] for i in range(40)]
        assert 1 <= reads.opened <= READERS
    finally:
        await reads.aclose()


async def test_a_connection_idle_too_long_is_not_trusted(
    engine: sa.Engine, reads: AsyncReads, monkeypatch: pytest.MonkeyPatch
) -> None:
    committed = AsyncCommittedReads(reads, None)
    game = r.committed_game(SqlUnitOfWorkFactory(engine))
    try:
        assert await committed.game(game.id) == game
        monkeypatch.setattr(async_reads, "PING_AFTER_IDLE_S", -1.0)  # every rest too long
        assert await committed.game(game.id) == game
        assert reads.opened == 2
    finally:
        await reads.aclose()


async def test_a_read_waits_for_a_connection_in_bounded_time(
    engine: sa.Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    slow = DirectStatement(sa.select(sa.func.pg_sleep(5).label("slept")))
    monkeypatch.setattr(async_reads, "SLOT_TIMEOUT_S", 0.2)
    reads = AsyncReads(engine, size=1)
    try:
        held = asyncio.ensure_future(reads.first(slow, {}))
        await asyncio.sleep(0)  # it takes the one slot
        with pytest.raises(PoolTimeout) as raised:
            await reads.first(slow, {})
        assert is_unavailable(raised.value)
        held.cancel()
        with pytest.raises(asyncio.CancelledError):
            await held
    finally:
        await reads.aclose()


async def test_a_read_after_the_close_is_the_database_away(engine: sa.Engine) -> None:
    reads = AsyncReads(engine)
    await reads.aclose()
    with pytest.raises(DisconnectionError) as raised:
        await AsyncCommittedReads(reads, None).game("g1")
    assert is_unavailable(raised.value)


def test_only_postgresql_is_served(tmp_path: object) -> None:
    with pytest.raises(ValueError, match="PostgreSQL only"):
        AsyncReads(make_engine("sqlite://"))


async def test_a_failed_statement_keeps_its_connection(
    engine: sa.Engine, reads: AsyncReads
) -> None:
    bad = DirectStatement(sa.select(sa.func.sqrt(sa.literal(-1.0)).label("root")))
    game = r.committed_game(SqlUnitOfWorkFactory(engine))
    try:
        with pytest.raises(DBAPIError) as raised:
            await reads.first(bad, {})
        assert not is_unavailable(raised.value)  # a bug's error, not the database away
        assert await AsyncCommittedReads(reads, None).game(game.id) == game
        assert reads.opened == 1
    finally:
        await reads.aclose()
