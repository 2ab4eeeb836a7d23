"""The game cache behind the SQL game repository: a game is served from
memory only while the stored version is the cached one, always as a copy of
the caller's own; a change committed by another process (another engine on
the same database, without the cache or with its own) is always seen; a
rolled-back change is never served; and the work after a commit uses the
game as committed, whatever the next change does with it."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from domain.channels import LOBBY, game_channel
from domain.errors import DomainError, ErrorCode
from domain.game.commands import Command, PlayCard, SendMessage
from domain.game.engine import to_act
from domain.game.legal import legal_actions
from domain.lobby import SeatTaken
from domain.log import LoggedEvent
from domain.ports import UnitOfWorkFactory, WriteConflict
from domain.records import GameRecord, GameStatus, LobbyUpdate, Occupant
from domain.services.bot_turn import bot_to_act
from domain.services.deps import Deps
from domain.services.games import NewGame, create_game, join_game, start_game
from domain.services.play import act
from domain.services.players import create_player
from domain.services.publisher import messages
from domain.services.transaction import Request
from infra.bus.memory import InProcessBus
from infra.clock import SystemClock
from infra.db.engine import make_engine
from infra.db.game_cache import GameCache
from infra.db.uow import SqlUnitOfWorkFactory
from infra.ids import RandomIds
from tests.integration import records as r
from tests.integration.databases import empty_tables


@pytest.fixture
def cached(engine: sa.Engine) -> SqlUnitOfWorkFactory:
    """Units of work over empty tables and a new game cache."""
    empty_tables(engine)
    return SqlUnitOfWorkFactory(engine, GameCache())


@pytest.fixture
def other_engine(db_url: str) -> Iterator[sa.Engine]:
    """Another process's engine on the same database (the same SQLite file)."""
    eng = make_engine(db_url)
    yield eng
    eng.dispose()


def _cache(uow: SqlUnitOfWorkFactory) -> GameCache:
    assert uow.cache is not None
    return uow.cache


def _moved(game: GameRecord, seqs: int = 2) -> GameRecord:
    """``game`` one change later (a new version, new events, a changed hand)."""
    moved = game.clone()
    moved.version += 1
    moved.last_seq += seqs
    assert moved.state is not None
    moved.state.seats[1].hand.append(moved.state.seats[0].hand.pop())
    return moved


def _save(uow: SqlUnitOfWorkFactory, game: GameRecord, expected_version: int) -> None:
    with uow() as u:
        u.games.save(game.clone(), expected_version)
        u.commit()


def _get(uow: UnitOfWorkFactory, game_id: str) -> GameRecord | None:
    with uow() as u:
        return u.games.get(game_id)


# ---------------------------------------------------------------- served as a copy
def test_a_committed_game_is_served_from_memory_at_its_version(
    cached: SqlUnitOfWorkFactory,
) -> None:
    game = r.committed_game(cached)
    first = _get(cached, game.id)
    assert first == game and _cache(cached).hits == 1
    assert first is not None and first.state is not None
    first.state.seats[0].hand.clear()  # a copy: the cache is not changed through it
    assert _get(cached, game.id) == game
    assert _cache(cached).hits == 2


def test_each_reader_gets_a_copy_of_its_own(cached: SqlUnitOfWorkFactory) -> None:
    game = r.committed_game(cached)
    a, b = _get(cached, game.id), _get(cached, game.id)
    assert a is not None and b is not None and a is not b
    assert a.state is not None and b.state is not None and a.state is not b.state
    a.version, a.status, a.seats[1] = 99, GameStatus.FINISHED, None
    a.state.seats[0].hand.clear()
    a.state.rat_deck.clear()
    assert b == game, "another reader's copy is not changed"
    assert _get(cached, game.id) == game, "nor is the cached game"
    assert _cache(cached).hits == 3


def test_a_game_not_stored_is_not_found(cached: SqlUnitOfWorkFactory) -> None:
    assert _get(cached, "no-such-game") is None
    assert _cache(cached).hits == 0


# ---------------------------------------------------------------- never a rolled-back change
def test_an_uncommitted_write_is_never_served(cached: SqlUnitOfWorkFactory) -> None:
    game = r.committed_game(cached)
    with cached() as u:
        changed = u.games.get(game.id)
        assert changed is not None and changed.state is not None
        changed.state.seats[0].hand.clear()
        changed.version += 1
        changed.last_seq += 5
        u.games.save(changed, expected_version=game.version)  # then rolled back
    assert _get(cached, game.id) == game
    with pytest.raises(RuntimeError), cached() as u:
        again = u.games.get(game.id)
        assert again is not None
        again.version += 1
        u.games.save(again, expected_version=game.version)
        raise RuntimeError("the change fails before its commit")
    assert _get(cached, game.id) == game


def test_a_write_that_loses_its_race_is_never_served(
    cached: SqlUnitOfWorkFactory, other_engine: sa.Engine
) -> None:
    game = r.committed_game(cached)
    mine = _get(cached, game.id)  # at the version committed
    assert mine is not None
    theirs = _moved(game)
    _save(SqlUnitOfWorkFactory(other_engine), theirs, game.version)  # another process first
    mine.version += 1
    with cached() as u, pytest.raises(WriteConflict):
        u.games.save(mine, expected_version=game.version)
        u.commit()  # PostgreSQL: raised when the batch is sent
    assert _get(cached, game.id) == theirs


def test_a_game_read_back_after_its_own_uncommitted_save_is_never_served(
    cached: SqlUnitOfWorkFactory, other_engine: sa.Engine
) -> None:
    game = r.committed_game(cached)
    with cached() as u:
        mine = u.games.get(game.id)
        assert mine is not None
        mine.version += 1
        mine.last_seq += 10
        u.games.save(mine, expected_version=game.version)
        assert u.games.get(game.id) == mine  # the transaction reads its own write
    theirs = _moved(game)  # then rolled back; another process commits that version
    _save(SqlUnitOfWorkFactory(other_engine), theirs, game.version)
    assert _get(cached, game.id) == theirs


# ---------------------------------------------------------------- other processes
def test_another_writer_on_the_same_engine_makes_the_cached_copy_stale(
    cached: SqlUnitOfWorkFactory,
) -> None:
    plain = SqlUnitOfWorkFactory(cached.engine)  # this cache never hears of its writes
    game = r.committed_game(cached)
    assert _get(cached, game.id) == game
    other = _moved(game)
    _save(plain, other, game.version)
    assert _get(cached, game.id) == other


@pytest.mark.parametrize("own_cache", [False, True], ids=["no-cache", "own-cache"])
def test_a_change_committed_by_another_process_is_always_seen(
    cached: SqlUnitOfWorkFactory, other_engine: sa.Engine, own_cache: bool
) -> None:
    """Two processes take turns changing one game: each reads the other's
    change, though its cache holds an older version."""
    there = SqlUnitOfWorkFactory(other_engine, GameCache() if own_cache else None)
    game = r.committed_game(cached)
    for uow in (cached, there):
        assert _get(uow, game.id) == game  # both caches warm
    current = game
    for turn in range(4):
        writer, reader = (there, cached) if turn % 2 == 0 else (cached, there)
        before = _get(writer, game.id)
        assert before == current
        current = _moved(current)
        _save(writer, current, before.version)
        assert _get(reader, game.id) == current, f"turn {turn}: the reader saw the change"
        assert _get(writer, game.id) == current
    assert _cache(cached).hits > 0


# ---------------------------------------------------------------- through the use cases
def _deps(uow: SqlUnitOfWorkFactory) -> Deps:
    return Deps(
        uow, asyncio.to_thread, InProcessBus(100_000), SystemClock(), RandomIds(), lambda _: None
    )


async def _two_processes(
    cached: SqlUnitOfWorkFactory, other_engine: sa.Engine
) -> tuple[Deps, Deps, str, list[str]]:
    """This process (with the cache) and another (its own cache), on one
    started 4-seat game whose Rat (seat 0) leads; this process has read it."""
    here = _deps(cached)
    there = _deps(SqlUnitOfWorkFactory(other_engine, GameCache()))
    people = [(await create_player(here, f"p{i}")).player.id for i in range(4)]
    gid = (await create_game(here, Request(people[0], "c", {}), NewGame(4, rat_seat=0))).game_id
    for pid in people[1:]:
        await join_game(here, Request(pid, "j", {}), gid, None)
    await start_game(here, Request(people[0], "s", {}), gid)
    assert _get(cached, gid) is not None  # cached at the current version
    return here, there, gid, people


def _stored(uow: UnitOfWorkFactory, gid: str) -> GameRecord:
    game = _get(uow, gid)
    assert game is not None and game.state is not None
    return game


def _first_legal(game: GameRecord) -> tuple[int, Command]:
    assert game.state is not None
    seat = to_act(game.state)
    assert seat is not None
    return seat, legal_actions(game.state, seat)[0]


async def _refused(code: ErrorCode, deps: Deps, req: Request, gid: str, cmd: Command) -> None:
    with pytest.raises(DomainError) as e:
        await act(deps, req, gid, cmd)
    assert e.value.code is code, e.value.message


async def test_a_move_legal_only_after_another_processs_change_is_accepted(
    cached: SqlUnitOfWorkFactory, other_engine: sa.Engine
) -> None:
    here, there, gid, people = await _two_processes(cached, other_engine)
    seat, lead = _first_legal(_stored(cached, gid))
    await act(there, Request(people[seat], "playCard", {}), gid, lead)
    before = _stored(there.uow, gid)
    nxt, follow = _first_legal(before)
    old = _stored(cached, gid)
    assert old == before, "this process reads the other's move"
    result = await act(here, Request(people[nxt], "playCard", {}), gid, follow)
    assert result.version == before.version + 1
    assert result.events[0].seq == before.last_seq + 1


async def test_a_move_after_another_processs_change_plays_on_the_fresh_state(
    cached: SqlUnitOfWorkFactory, other_engine: sa.Engine
) -> None:
    here, there, gid, people = await _two_processes(cached, other_engine)
    seat, lead = _first_legal(_stored(cached, gid))
    assert seat == 0 and isinstance(lead, PlayCard)  # the Rat leads: messages first
    await act(there, Request(people[0], "sendMessage", {}), gid, SendMessage(1, "hello"))
    before = _stored(there.uow, gid)  # the turn stays; the version moves
    result = await act(here, Request(people[0], "playCard", {}), gid, lead)
    assert result.version == before.version + 1
    assert result.events[0].seq == before.last_seq + 1, "played on the fresh state"
    with cached() as u:
        log = u.events.read(gid, 0, 10_000, None)
    assert [e.seq for e in log] == list(range(1, before.last_seq + len(result.events) + 1))


async def test_expected_version_is_judged_on_the_stored_version(
    cached: SqlUnitOfWorkFactory, other_engine: sa.Engine
) -> None:
    here, there, gid, people = await _two_processes(cached, other_engine)
    cached_version = _stored(cached, gid).version
    seat, lead = _first_legal(_stored(cached, gid))
    await act(there, Request(people[0], "sendMessage", {}), gid, SendMessage(1, "hello"))
    now = _stored(there.uow, gid).version
    assert now == cached_version + 1
    behind = Request(people[seat], "playCard", {"try": 1}, expected_version=cached_version)
    await _refused(ErrorCode.STALE_STATE, here, behind, gid, lead)  # not CONFLICT
    fresh = Request(people[seat], "playCard", {"try": 2}, expected_version=now)
    assert (await act(here, fresh, gid, lead)).version == now + 1


# ---------------------------------------------------------------- after the commit
def test_the_work_after_a_commit_uses_the_game_as_committed(
    cached: SqlUnitOfWorkFactory,
) -> None:
    """The committed game goes to the publisher and the bots after the commit,
    while the next change may already have the game (from the cache): it
    changes its own copy, never the committed one."""
    host, guest = r.player(), r.player()
    lobby = r.lobby_game(host.id)
    with cached() as u:
        u.players.add(host)
        u.players.add(guest)
        u.games.add(lobby.clone())
        u.commit()
    with cached() as u:
        game = u.games.get(lobby.id)
        assert game is not None
        game.seats[1] = Occupant(guest.id)
        logged = game.record([SeatTaken(1, guest.id, "Guest")], None, r.T0)
        u.events.append(logged)
        u.games.save(game, lobby.version)
        u.commit()
        news = u.collect_new_events()
        assert u.collect_new_events() == [], "handed out once"
    assert [(n.game.id, n.events) for n in news] == [(lobby.id, tuple(logged))]
    committed = news[0].game
    expected = messages(committed.clone(), news[0].events)
    bots = bot_to_act(committed)
    # the next change, handed the game by the cache
    with cached() as u:
        nxt = u.games.get(lobby.id)
        assert nxt is not None and _cache(cached).hits >= 1
        nxt.version += 1
        nxt.status = GameStatus.FINISHED
        nxt.seats[1] = None
        nxt.state = None
        u.games.save(nxt, committed.version)
        u.commit()
    assert (committed.version, committed.status) == (lobby.version + 1, GameStatus.LOBBY)
    assert committed.seats[1] == Occupant(guest.id)
    sent = messages(committed, news[0].events)
    assert sent == expected and bot_to_act(committed) == bots
    assert sent[-1] == (LOBBY, LobbyUpdate(lobby.id, GameStatus.LOBBY, 4, 3, lobby.version + 1))
    public = [m for ch, m in sent if ch == game_channel(lobby.id, None)]
    assert public == [e.seen_by(None) for e in logged]
    assert all(isinstance(m, LoggedEvent) for _, m in sent[:-1])


def test_puts_out_of_order_keep_the_newer_game() -> None:
    """Two commits' puts may come in either order (threads): the cache keeps
    the newer version, so a read at the stored version is still served."""
    cache = GameCache()
    newer = r.lobby_game(r.new_id())
    older = newer.clone()
    newer.version, older.version = 6, 5
    cache.put(newer)
    cache.put(older)
    assert cache.get(newer.id, 5) is None
    served = cache.get(newer.id, 6)
    assert served is not None and served.version == 6 and served is not newer
