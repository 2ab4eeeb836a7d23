"""Private games and invitations on SQLite and PostgreSQL (issue #24,
docs/decisions/0062): the ``invitations`` table mirrors each game's pending
invitations (through the game cache too), each player's list and each
host's count read it for games not yet started; the lobby listing holds
public games only; an invite code finds its game and is unique; migration
0013 goes down and up with private games in place."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from alembic import command

from domain.bots.strategy import Strategy
from domain.caps import Caps
from domain.errors import DomainError, ErrorCode
from domain.ports import WriteConflict
from domain.records import GameRecord, GameStatus, GameSummary, Invitation, Visibility
from domain.services.deps import Deps
from domain.services.games import NewGame, add_bot, create_game, start_game
from domain.services.invitations import (
    accept_invitation,
    cancel_invitation,
    clear_invite_code,
    decline_invitation,
    invite_players,
    join_by_invite_code,
    my_invitations,
    rotate_invite_code,
)
from domain.services.players import create_player
from domain.services.queries import list_games
from domain.services.transaction import Request
from infra.bus.memory import InProcessBus
from infra.db import migrate
from infra.db.engine import make_engine
from infra.db.game_cache import GameCache
from infra.db.migrate import upgrade
from infra.db.tables import invitations
from infra.db.uow import SqlUnitOfWorkFactory
from tests.fakes import FakeClock, FakeIds
from tests.integration import records as r
from tests.integration.databases import sqlite_url

PRIVATE = NewGame(3, visibility=Visibility.PRIVATE)
UNLISTED = NewGame(3, visibility=Visibility.UNLISTED)


def _deps(uow: SqlUnitOfWorkFactory, caps: Caps | None = None) -> Deps:
    deps = Deps(
        uow, asyncio.to_thread, InProcessBus(100_000), FakeClock(), FakeIds(), lambda _: None
    )
    return deps if caps is None else replace(deps, caps=caps)


def _req(pid: str, op: str = "op") -> Request:
    return Request(pid, op, {})


async def _people(deps: Deps, n: int) -> list[str]:
    return [(await create_player(deps, f"p{i}")).player.id for i in range(n)]


def _game(uow: SqlUnitOfWorkFactory, game_id: str) -> GameRecord:
    with uow() as u:
        game = u.games.get(game_id)
    assert game is not None
    return game


def _mirrored(uow: SqlUnitOfWorkFactory, game_id: str) -> set[str]:
    """The game's rows in ``invitations``, checked against the game's own
    pending invitations; the players invited."""
    with uow.engine.connect() as c:
        rows = c.execute(sa.select(invitations).where(invitations.c.game_id == game_id)).all()
    mirror = {x.player_id: Invitation(x.player_id, x.invited_by, x.created_at) for x in rows}
    assert mirror == {i.player_id: i for i in _game(uow, game_id).invitations}
    return set(mirror)


async def _started(deps: Deps, host: str, spec: NewGame) -> str:
    """A game of ``host``'s, filled with bots and started."""
    gid = (await create_game(deps, _req(host), spec)).game_id
    for _ in range(spec.seat_count - 1):
        await add_bot(deps, _req(host), gid, Strategy.RANDOM, None)
    await start_game(deps, _req(host), gid)
    return gid


async def test_invitations_are_mirrored_listed_and_counted_until_the_game_starts(
    uow: SqlUnitOfWorkFactory,
) -> None:
    deps = _deps(uow, Caps(pending_invitations=5))
    host, ann, bob, cy, dan, eve = await _people(deps, 6)
    first = (await create_game(deps, _req(host), PRIVATE)).game_id
    await invite_players(deps, _req(host), first, [ann, bob, cy, dan])
    second = (await create_game(deps, _req(host), UNLISTED)).game_id
    await invite_players(deps, _req(host), second, [ann])
    assert _mirrored(uow, first) == {ann, bob, cy, dan} and _mirrored(uow, second) == {ann}

    g1, g2 = _game(uow, first), _game(uow, second)
    with uow() as u:
        listed = u.games.invitations_of(ann, None, 10)
        assert u.games.invitations_sent(host) == 5 and u.games.invitations_sent(ann) == 0
        assert u.games.invitations_of(ann, None, 1) == listed[:1]
        assert u.games.invitations_of(ann, (listed[0][0].at, second), 10) == listed[1:]
        assert u.games.invitations_of(ann, (listed[1][0].at, first), 10) == []
        assert u.games.invitations_of(host, None, 10) == []
    assert listed == [  # newest first, each with its game's summary
        (g2.invitations[0], GameSummary.of(g2)),
        (g1.invitations[0], GameSummary.of(g1)),
    ]
    page = await my_invitations(deps, ann, None, 1)
    assert page.items == listed[:1] and page.has_next
    with pytest.raises(DomainError) as refused:  # the cap counts the SQL rows
        await invite_players(deps, _req(host), second, [bob])
    assert refused.value.code is ErrorCode.ILLEGAL_ACTION

    await accept_invitation(deps, _req(ann), first, None)
    assert _game(uow, first).seat_of(ann) == 1
    assert _mirrored(uow, first) == {bob, cy, dan}
    await decline_invitation(deps, _req(bob), first)
    assert _mirrored(uow, first) == {cy, dan}
    await cancel_invitation(deps, _req(host), first, cy)
    assert _mirrored(uow, first) == {dan}
    with uow() as u:
        assert [s.id for _, s in u.games.invitations_of(ann, None, 10)] == [second]
        assert u.games.invitations_of(bob, None, 10) == []
        assert u.games.invitations_of(cy, None, 10) == []
        assert [s.id for _, s in u.games.invitations_of(dan, None, 10)] == [first]
        assert u.games.invitations_sent(host) == 2

    await add_bot(deps, _req(host), first, Strategy.RANDOM, None)
    await start_game(deps, _req(host), first)
    assert _game(uow, first).status is GameStatus.RUNNING
    _mirrored(uow, first)
    with uow() as u:
        assert u.games.invitations_of(dan, None, 10) == []
        assert u.games.invitations_sent(host) == 1
    # room again for 4: the started game's invitation is no longer counted
    await invite_players(deps, _req(host), second, [bob, cy, dan, eve])
    assert _mirrored(uow, second) == {ann, bob, cy, dan, eve}


async def test_the_lobby_listing_holds_public_games_only(uow: SqlUnitOfWorkFactory) -> None:
    deps = _deps(uow)
    ann, bob = await _people(deps, 2)
    await _started(deps, bob, PRIVATE)  # the oldest
    public_running = await _started(deps, ann, NewGame(3))
    await _started(deps, bob, UNLISTED)
    public_lobby = (await create_game(deps, _req(ann), NewGame(3))).game_id
    await create_game(deps, _req(bob), UNLISTED)
    await create_game(deps, _req(bob), PRIVATE)  # the newest
    expected = [GameSummary.of(_game(uow, g)) for g in (public_lobby, public_running)]

    def ids(items: list[GameSummary]) -> list[str]:
        return [s.id for s in items]

    with uow() as u:
        everything = u.games.page(None, None, 10)
        assert everything.items == expected and not everything.has_next
        assert u.games.page(None, None, 2).has_next is False
        first = u.games.page(None, None, 1)
        assert ids(first.items) == [public_lobby] and first.has_next
        after = (first.items[0].created_at, public_lobby)
        rest = u.games.page(None, after, 1)
        assert ids(rest.items) == [public_running] and not rest.has_next
        assert u.games.page(None, (expected[1].created_at, public_running), 10).items == []
        lobbies = u.games.page(GameStatus.LOBBY, None, 10)
        assert ids(lobbies.items) == [public_lobby] and not lobbies.has_next
        assert ids(u.games.page(GameStatus.LOBBY, None, 1).items) == [public_lobby]
        assert u.games.page(GameStatus.LOBBY, None, 1).has_next is False
        running = u.games.page(GameStatus.RUNNING, None, 10)
        assert ids(running.items) == [public_running] and not running.has_next
        assert u.games.page(GameStatus.FINISHED, None, 10).items == []
    assert await list_games(deps, None, None, 10) == (expected, False)
    assert await list_games(deps, GameStatus.LOBBY, None, 10) == (expected[:1], False)
    assert await list_games(deps, GameStatus.RUNNING, None, 10) == (expected[1:], False)


async def test_an_invite_code_finds_its_game_until_rotated_or_cleared(
    uow: SqlUnitOfWorkFactory,
) -> None:
    deps = _deps(uow)
    host, ann, bob = await _people(deps, 3)
    gid = (await create_game(deps, _req(host), UNLISTED)).game_id
    public = (await create_game(deps, _req(host), NewGame(3))).game_id
    first = _game(uow, gid).invite_code
    assert first is not None and _game(uow, public).invite_code is None
    with uow() as u:
        assert u.games.by_invite_code(first) == gid

    await rotate_invite_code(deps, _req(host), gid)
    second = _game(uow, gid).invite_code
    assert second is not None and second != first
    with uow() as u:
        assert u.games.by_invite_code(first) is None
        assert u.games.by_invite_code(second) == gid
    with pytest.raises(DomainError) as old:
        await join_by_invite_code(deps, _req(ann), first, None)
    assert old.value.code is ErrorCode.NOT_FOUND
    typed = f"{second[:5].lower()}-{second[5:].lower()}"
    assert (await join_by_invite_code(deps, _req(ann), typed, None)).game_id == gid
    assert _game(uow, gid).seat_of(ann) == 1

    await clear_invite_code(deps, _req(host), gid)
    assert _game(uow, gid).invite_code is None
    with uow() as u:
        assert u.games.by_invite_code(second) is None
    with pytest.raises(DomainError) as cleared:
        await join_by_invite_code(deps, _req(bob), second, None)
    assert cleared.value.code is ErrorCode.NOT_FOUND


async def test_two_games_never_share_an_invite_code(uow: SqlUnitOfWorkFactory) -> None:
    """Added or saved with another game's code: ``WriteConflict`` (the
    unique partial index); games without a code are many."""
    deps = _deps(uow)
    (host,) = await _people(deps, 1)
    taken_by = (await create_game(deps, _req(host), PRIVATE)).game_id
    other = (await create_game(deps, _req(host), UNLISTED)).game_id
    code = _game(uow, taken_by).invite_code
    assert code is not None
    copy = replace(r.lobby_game(host), visibility=Visibility.PRIVATE, invite_code=code)
    with uow() as u, pytest.raises(WriteConflict):
        u.games.add(copy)
        u.commit()  # PostgreSQL: raised when the batch is sent
    with uow() as u:
        game = u.games.get(other)
        assert game is not None
        game.invite_code = code
        with pytest.raises(WriteConflict):
            u.games.save(game, game.version)
            u.commit()  # PostgreSQL: raised when the batch is sent
    with uow() as u:
        for _ in range(2):
            u.games.add(r.lobby_game(host))
        u.commit()
    with uow() as u:
        assert u.games.by_invite_code(code) == taken_by
        assert u.games.get(copy.id) is None
    assert _game(uow, other).invite_code not in (None, code)


async def test_invitations_of_a_game_served_from_the_cache_are_still_mirrored(
    uow: SqlUnitOfWorkFactory,
) -> None:
    cache = GameCache()
    cached = SqlUnitOfWorkFactory(uow.engine, cache)
    deps = _deps(cached)
    host, ann, bob = await _people(deps, 3)
    gid = (await create_game(deps, _req(host), PRIVATE)).game_id
    steps: list[tuple[Callable[[], Awaitable[object]], set[str]]] = [
        (lambda: invite_players(deps, _req(host), gid, [ann]), {ann}),
        (lambda: invite_players(deps, _req(host), gid, [bob]), {ann, bob}),
        (lambda: decline_invitation(deps, _req(ann), gid), {bob}),
        (lambda: accept_invitation(deps, _req(bob), gid, None), set()),
    ]
    for change, pending in steps:
        hits = cache.hits
        await change()
        assert cache.hits > hits  # the change read the game from memory
        assert _mirrored(uow, gid) == pending
    assert _game(uow, gid).seat_of(bob) == 1


def _columns(c: sa.Connection, table: str) -> set[str]:
    return {col["name"] for col in sa.inspect(c).get_columns(table)}


def _indexes(c: sa.Connection) -> set[str]:
    return {str(i["name"]) for i in sa.inspect(c).get_indexes("games")}


async def test_0013_down_and_up_with_private_games_and_invitations_in_place(
    empty_db_url: str,
) -> None:
    """Down to 0012 drops the table, the columns and the partial indexes
    (the old ones back); up again, every game stored is public, without a
    code or invitations, and new ones work."""
    engine = make_engine(empty_db_url)
    config = migrate.alembic_config(engine)
    try:
        migrate.upgrade(engine)
        uow = SqlUnitOfWorkFactory(engine)
        deps = _deps(uow)
        host, ann, bob = await _people(deps, 3)
        public = (await create_game(deps, _req(host), NewGame(3))).game_id
        private = (await create_game(deps, _req(host), PRIVATE)).game_id
        await invite_players(deps, _req(host), private, [ann, bob])
        await invite_players(deps, _req(host), public, [bob])
        assert _mirrored(uow, private) == {ann, bob}

        command.downgrade(config, "0012")
        assert migrate.current(engine) == "0012"
        with engine.connect() as c:
            assert "invitations" not in sa.inspect(c).get_table_names()
            assert not {"visibility", "invite_code", "invitations"} & _columns(c, "games")
            indexes = _indexes(c)
            assert {"ix_games_created_at", "ix_games_status"} <= indexes
            assert not {"ix_games_public_created_at", "ix_games_public_status"} & indexes
            assert "ix_games_invite_code" not in indexes
            assert c.execute(sa.text("SELECT count(*) FROM games")).scalar_one() == 2

        command.upgrade(config, "head")
        assert migrate.current(engine) == migrate.head()
        for gid in (public, private):
            game = _game(uow, gid)
            assert game.visibility is Visibility.PUBLIC
            assert (game.invite_code, game.invitations) == (None, [])
            assert _mirrored(uow, gid) == set()
        with uow() as u:
            listed = u.games.page(None, None, 10).items
            assert [s.id for s in listed] == [private, public]
            assert u.games.invitations_sent(host) == 0
        with engine.connect() as c:
            indexes = _indexes(c)
            assert {"ix_games_public_created_at", "ix_games_public_status"} <= indexes
            assert not {"ix_games_created_at", "ix_games_status"} & indexes

        again = (await create_game(deps, _req(host), PRIVATE)).game_id
        await invite_players(deps, _req(host), again, [ann])
        assert _mirrored(uow, again) == {ann}
        with uow() as u:
            code = _game(uow, again).invite_code
            assert code is not None and u.games.by_invite_code(code) == again
            assert [s.id for _, s in u.games.invitations_of(ann, None, 10)] == [again]
    finally:
        engine.dispose()


@pytest.mark.parametrize(
    ("status", "index"),
    [(None, "ix_games_public_created_at"), (GameStatus.LOBBY, "ix_games_public_status")],
)
async def test_the_listing_reads_the_public_games_index_on_sqlite(
    tmp_path: Path, status: GameStatus | None, index: str
) -> None:
    """The page statement, with and without a cursor, reads the partial
    index in its order (no sort), as the private games are not in it (a
    SQLite database of its own: the plan is SQLite's)."""
    url = sqlite_url(tmp_path)
    upgrade(url)
    engine = make_engine(url)
    try:
        await _reads_the_index(SqlUnitOfWorkFactory(engine), status, index)
    finally:
        engine.dispose()


async def _reads_the_index(
    uow: SqlUnitOfWorkFactory, status: GameStatus | None, index: str
) -> None:
    engine = uow.engine
    deps = _deps(uow)
    (host,) = await _people(deps, 1)
    for spec in (NewGame(3), PRIVATE, NewGame(3)):
        await create_game(deps, _req(host), spec)
    seen: list[tuple[str, Any]] = []

    def record(_c: Any, _cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        seen.append((statement, parameters))

    with uow() as u:
        sa.event.listen(engine, "before_cursor_execute", record)
        try:
            page = u.games.page(status, None, 1)
            cursor = (page.items[0].created_at, page.items[0].id)
            assert len(u.games.page(status, cursor, 1).items) == 1
        finally:
            sa.event.remove(engine, "before_cursor_execute", record)
    pages = [s for s in seen if "FROM games" in s[0]]
    assert len(pages) == 2
    with engine.connect() as c:
        for statement, parameters in pages:
            plan = c.exec_driver_sql(f"EXPLAIN QUERY PLAN {statement}", parameters).all()
            details = " ".join(str(row[-1]) for row in plan)
            assert f"INDEX {index}" in details, plan
            assert "TEMP B-TREE" not in details, plan  # in the index's order: no sort
