"""Notifications on SQLite and PostgreSQL (issue #25, docs/decisions/0063):
every kind is stored and read back exactly; each player's seqs are 1, 2,
3... without a gap, in the order given, also when transactions race for
them (numbered at the commit from the player's ``notice_counters`` row, held
to the end, players in id order: no deadlock among counters nor with the
claims of ``players``); pages, unread only, marking read and the expiry of
read ones; the real use cases write them in their own transaction (nothing
of a rolled-back one), as the fakes do; migration 0014 goes down and up with
notifications in place."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import sqlalchemy as sa
from alembic import command

from domain.bots.strategy import Strategy
from domain.errors import DomainError, ErrorCode
from domain.game.engine import to_act
from domain.game.legal import legal_actions
from domain.game.options import GameOptions
from domain.my_games import entries_of
from domain.notifications import (
    NOTICE_KINDS,
    Notice,
    Notification,
    YourDeadlineSoon,
    YourGameEnded,
    YourGameStarted,
    YourInvitation,
    YourRematch,
    YourSeatTakenOver,
    YourTurn,
    YourTurnTimedOut,
)
from domain.ports import NotificationStore, UnitOfWorkFactory, WriteConflict
from domain.records import GameRecord, GameStatus, Player
from domain.services.bots import drive_bots
from domain.services.deps import Deps
from domain.services.games import NewGame, add_bot, create_game, join_game, start_game
from domain.services.notifications import mark_read, my_notifications
from domain.services.play import act
from domain.services.players import create_player
from domain.services.timeouts import sweep_deadlines
from domain.services.transaction import Request
from infra.bus.memory import InProcessBus
from infra.db import migrate, repositories
from infra.db.engine import make_engine
from infra.db.tables import notice_counters, notifications, players
from infra.db.uow import SqlUnitOfWork, SqlUnitOfWorkFactory
from tests.fakes import FakeClock, FakeIds, FakeUnitOfWork, Store
from tests.integration.records import PLUS_TWO, T0

AT = datetime(2026, 12, 6, 9, 30, 15, 123456, tzinfo=UTC)
DEADLINE = datetime(2026, 12, 6, 11, 31, 45, 654321, tzinfo=PLUS_TWO)
EVERY_KIND: list[Notice] = [
    YourTurn("g1", 2, DEADLINE),
    YourTurn("g1", 0),  # untimed: no deadline
    YourInvitation("g2", "host-1"),
    YourGameStarted("g3", 1),
    YourGameEnded("g4", 3, 17, 1, True),
    YourGameEnded("g4", 1, 0, 4, False),
    YourGameEnded("g5", 2, None, None, None),  # abandoned
    YourRematch("g6", "g7"),
    YourSeatTakenOver("g8", 2),
    YourTurnTimedOut("g9", 1),
    YourDeadlineSoon("g9", 1, DEADLINE),
]


def _deps(uow: UnitOfWorkFactory) -> Deps:
    return Deps(
        uow, asyncio.to_thread, InProcessBus(100_000), FakeClock(), FakeIds(), lambda _: None
    )


def _req(pid: str, op: str = "op", key: str | None = None) -> Request:
    return Request(pid, op, {}, idempotency_key=key)


def _players(uow: SqlUnitOfWorkFactory, *ids: str) -> list[str]:
    with uow() as u:
        for pid in ids:
            u.players.add(Player(pid, f"name of {pid}", T0))
        u.commit()
    return list(ids)


def _add(uow: SqlUnitOfWorkFactory, at: datetime, told: Sequence[tuple[str, Notice]]) -> None:
    with uow() as u:
        u.notifications.add(at, told)
        u.commit()


def _all(uow: SqlUnitOfWorkFactory, pid: str, unread_only: bool = False) -> list[Notification]:
    with uow() as u:
        return u.notifications.page(pid, 0, 1_000, unread_only)


def _counter(engine: sa.Engine, pid: str) -> int | None:
    """The player's last seq taken (None: no counter yet)."""
    with engine.connect() as c:
        found: int | None = c.execute(
            sa.select(notice_counters.c.last_seq).where(notice_counters.c.player_id == pid)
        ).scalar()
    return found


def _stored(engine: sa.Engine) -> int:
    with engine.connect() as c:
        return _stored_in(c)


# ---------------------------------------------------------------- the store
def test_every_kind_is_stored_and_read_back_exactly(uow: SqlUnitOfWorkFactory) -> None:
    assert {type(n) for n in EVERY_KIND} == set(NOTICE_KINDS)  # a new kind joins the list
    (ann,) = _players(uow, "ann")
    _add(uow, AT, [(ann, n) for n in EVERY_KIND])
    expected = [Notification(ann, i, AT, n) for i, n in enumerate(EVERY_KIND, 1)]
    read = _all(uow, ann)
    assert read == expected
    assert all(n.at.tzinfo is not None for n in read)
    with uow.engine.connect() as c:
        rows = c.execute(
            sa.select(notifications.c.seq, notifications.c.game_id, notifications.c.kind)
            .where(notifications.c.player_id == ann)
            .order_by(notifications.c.seq)
        ).all()
    assert [tuple(r) for r in rows] == [
        (i, n.game_id, type(n).__name__) for i, n in enumerate(EVERY_KIND, 1)
    ]

    read_at = AT + timedelta(minutes=3, microseconds=7)
    with uow() as u:
        assert u.notifications.mark_read(ann, 4, read_at) == 4
        u.commit()
    assert _all(uow, ann) == [
        Notification(ann, n.seq, AT, n.notice, read_at if n.seq <= 4 else None) for n in expected
    ]


def test_seqs_count_per_player_in_the_order_given_and_pages_read_them(
    uow: SqlUnitOfWorkFactory,
) -> None:
    ann, bob, cy = _players(uow, "ann", "bob", "cy")
    t1, t2, t3 = (AT + timedelta(seconds=s) for s in (1, 2, 3))
    n = [YourTurn(f"g{i}", i % 4) for i in range(12)]
    _add(uow, t1, [(bob, n[0]), (ann, n[1]), (bob, n[2])])
    _add(uow, t2, [(ann, n[3]), (bob, n[5]), (ann, n[6])])
    with uow() as u:  # a notice for no player: the whole commit refused (a foreign key)
        u.notifications.add(t2, [(ann, n[4]), ("ghost", n[4]), (bob, n[7])])
        with pytest.raises(sa.exc.IntegrityError):
            u.commit()
    with uow() as u:  # two adds in one transaction go on counting
        u.notifications.add(t3, [(ann, n[8])])
        u.notifications.add(t3, [(ann, n[9])])
        u.commit()
    with uow() as u:  # rolled back: neither stored nor counted
        u.notifications.add(t3, [(ann, n[10]), (cy, n[10])])
    _add(uow, t3, [(ann, n[11])])

    mine = _all(uow, ann)
    expected = [(n[1], t1), (n[3], t2), (n[6], t2), (n[8], t3), (n[9], t3), (n[11], t3)]
    assert mine == [Notification(ann, i, at, x) for i, (x, at) in enumerate(expected, 1)]
    bobs = [(n[0], t1), (n[2], t1), (n[5], t2)]
    assert _all(uow, bob) == [Notification(bob, i, at, x) for i, (x, at) in enumerate(bobs, 1)]
    assert _all(uow, cy) == [] and _all(uow, "ghost") == []
    assert [_counter(uow.engine, p) for p in (ann, bob, cy, "ghost")] == [6, 3, None, None]
    with uow.engine.connect() as c:
        assert c.execute(sa.select(sa.func.count()).select_from(players)).scalar_one() == 3

    with uow() as u:
        page = u.notifications.page
        assert page(ann, 0, 2, False) == mine[:2]
        assert page(ann, 2, 3, False) == mine[2:5]
        assert page(ann, 5, 3, False) == mine[5:]
        assert page(ann, 6, 3, False) == []
        assert page(ann, 0, 1_000, True) == mine  # none read yet

    r1, r2, r3 = (AT + timedelta(hours=h) for h in (1, 2, 3))
    with uow() as u:
        assert u.notifications.mark_read(ann, 2, r1) == 2
        assert u.notifications.mark_read(ann, 2, r2) == 0  # read already
        assert u.notifications.mark_read(ann, 0, r2) == 0
        assert u.notifications.mark_read("ghost", 10, r2) == 0
        u.commit()
    with uow() as u:
        assert u.notifications.page(ann, 0, 1, True) == mine[2:3]
        assert u.notifications.page(ann, 3, 2, True) == mine[3:5]
        assert u.notifications.page(ann, 0, 1_000, True) == mine[2:]
    with uow() as u:  # not committed: still unread
        assert u.notifications.mark_read(ann, 6, r2) == 4
    with uow() as u:
        assert u.notifications.mark_read(ann, 4, r2) == 2  # 3 and 4 only
        u.commit()
    with uow() as u:
        assert u.notifications.mark_read(ann, 100, r3) == 2
        u.commit()
    read = [r1, r1, r2, r2, r3, r3]
    assert _all(uow, ann) == [
        Notification(ann, x.seq, x.at, x.notice, at) for x, at in zip(mine, read, strict=True)
    ]
    assert _all(uow, ann, unread_only=True) == []
    assert all(x.read_at is None for x in _all(uow, bob))  # another player's untouched
    assert _all(uow, bob, unread_only=True) == _all(uow, bob)


# ---------------------------------------------------------------- expiry
def test_read_ones_expire_oldest_first_and_seqs_are_never_reused(
    uow: SqlUnitOfWorkFactory,
) -> None:
    ann, bob = _players(uow, "ann", "bob")
    _add(uow, AT, [(p, YourTurn(f"g{i}", 0)) for i in range(4) for p in (ann, bob)])
    r1, r2, r3 = (AT + timedelta(days=d) for d in (1, 2, 3))
    with uow() as u:
        u.notifications.mark_read(bob, 1, r1)  # the oldest read
        u.notifications.mark_read(ann, 2, r2)
        u.notifications.mark_read(bob, 3, r3)
        u.commit()
    with uow() as u:
        assert u.notifications.delete_read(r2, 10) == 1  # read before r2: bob's 1
        assert u.notifications.delete_read(r3 + timedelta(seconds=1), 2) == 2  # ann's 1, 2
        u.commit()
    assert [x.seq for x in _all(uow, ann)] == [3, 4]
    assert [x.seq for x in _all(uow, bob)] == [2, 3, 4]
    with uow() as u:
        assert u.notifications.delete_read(r3 + timedelta(seconds=1), 10) == 2  # bob's 2, 3
        assert u.notifications.delete_read(r3 + timedelta(days=99), 10) == 0  # unread kept
        u.commit()
    assert [x.seq for x in _all(uow, bob)] == [4]
    _add(uow, r3, [(bob, YourTurn("g9", 1))])
    assert [(x.seq, x.notice) for x in _all(uow, bob)] == [
        (4, YourTurn("g3", 0)),
        (5, YourTurn("g9", 1)),
    ]


# ---------------------------------------------------------------- races
SEQS_TAKEN = "notice_counters"  # in the statement that takes a player's seqs


def _lock_waits(engine: sa.Engine) -> int:
    """PostgreSQL: the backends of this database waiting for a lock to take
    seqs."""
    with engine.connect() as c:
        return int(
            c.execute(
                sa.text(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                    " AND wait_event_type = 'Lock' AND query LIKE :q"
                ),
                {"q": f"%{SEQS_TAKEN}%"},
            ).scalar_one()
        )


def test_a_second_transaction_waits_for_the_first_then_takes_the_next_seqs(
    uow: SqlUnitOfWorkFactory,
) -> None:
    """The first transaction is held at its commit, its notifications
    written: the second cannot take ann's seqs (PostgreSQL: it waits for the
    counter's row lock, held to the commit; SQLite: for the write lock),
    then takes the next."""
    ann, bob = _players(uow, "ann", "bob")
    _add(uow, AT, [(ann, YourGameStarted("g0", 0))])  # ann's counter exists
    first = [YourTurn("g1", 0), YourGameStarted("g1", 0), YourSeatTakenOver("g1", 0)]
    second = [YourInvitation("g2", bob), YourRematch("g2", "g3")]
    t1, t2 = AT + timedelta(seconds=1), AT + timedelta(seconds=2)
    took, release, second_done = threading.Event(), threading.Event(), threading.Event()
    main: list[sa.Connection] = []  # the first's unit of work's connection

    def seen(conn: sa.Connection, *_: Any) -> None:
        if threading.current_thread().name == "first" and not main:
            main.append(conn)

    def hold(conn: sa.Connection) -> None:  # before it commits
        if threading.current_thread().name == "first" and main and conn is main[0]:
            took.set()
            assert release.wait(10)

    def one() -> None:
        threading.current_thread().name = "first"
        with uow() as u:
            u.notifications.page(ann, 0, 1, False)  # its transaction begins
            u.notifications.add(t1, [(ann, x) for x in first])
            u.commit()

    def two() -> None:
        assert took.wait(10)
        with uow() as u:
            u.notifications.add(t2, [(bob, second[0]), (ann, second[0]), (ann, second[1])])
            u.commit()
        second_done.set()

    sa.event.listen(uow.engine, "after_cursor_execute", seen)
    sa.event.listen(uow.engine, "commit", hold)
    try:
        with ThreadPoolExecutor(2) as pool:
            futures = [pool.submit(one), pool.submit(two)]
            try:
                assert took.wait(10)
                if uow.engine.dialect.name == "postgresql":  # seen waiting on the lock
                    deadline = time.monotonic() + 10
                    while _lock_waits(uow.engine) == 0:
                        assert time.monotonic() < deadline, "the second never waited"
                        time.sleep(0.01)
                assert not second_done.wait(0.3), "the second took seqs the first holds"
            finally:
                release.set()
            for f in futures:
                f.result(timeout=20)
    finally:
        sa.event.remove(uow.engine, "after_cursor_execute", seen)
        sa.event.remove(uow.engine, "commit", hold)
    assert _all(uow, ann)[1:] == [
        *(Notification(ann, i, t1, x) for i, x in enumerate(first, 2)),
        *(Notification(ann, i, t2, x) for i, x in enumerate(second, 5)),
    ]
    assert _all(uow, bob) == [Notification(bob, 1, t2, second[0])]
    assert (_counter(uow.engine, ann), _counter(uow.engine, bob)) == (6, 1)


def test_racing_transactions_take_distinct_gapless_seqs(uow: SqlUnitOfWorkFactory) -> None:
    """Four threads commit at once, round after round, each telling ann
    twice (and its own player once): ann's seqs are 1..n, each transaction's
    two in a row and in its order; the first round makes ann's counter."""
    threads, rounds = 4, 5
    (ann, *own) = _players(uow, "ann", *(f"p{i}" for i in range(threads)))
    barrier = threading.Barrier(threads)

    def tell(i: int) -> None:
        for r in range(rounds):
            with uow() as u:
                at = AT + timedelta(seconds=r, milliseconds=i)
                told = [
                    (ann, YourTurn(f"t{i}r{r}", 0)),
                    (own[i], YourGameStarted(f"t{i}r{r}", 1)),
                    (ann, YourGameStarted(f"t{i}r{r}", 0)),
                ]
                u.notifications.add(at, told)
                barrier.wait(timeout=10)  # every transaction takes its seqs at once
                u.commit()

    with ThreadPoolExecutor(threads) as pool:
        for f in [pool.submit(tell, i) for i in range(threads)]:
            f.result(timeout=60)
    mine = _all(uow, ann)
    assert [x.seq for x in mine] == list(range(1, 2 * threads * rounds + 1))
    for a, b in zip(mine[::2], mine[1::2], strict=True):  # one transaction's pair
        assert (type(a.notice), type(b.notice)) == (YourTurn, YourGameStarted)
        assert a.notice.game_id == b.notice.game_id and a.at == b.at
    assert len({x.notice.game_id for x in mine}) == threads * rounds
    for i, pid in enumerate(own):
        assert [(x.seq, x.notice.game_id) for x in _all(uow, pid)] == [
            (r + 1, f"t{i}r{r}") for r in range(rounds)
        ]
        assert _counter(uow.engine, pid) == rounds
    assert _counter(uow.engine, ann) == 2 * threads * rounds


def _crosswise(
    uow: SqlUnitOfWorkFactory,
    first_held: Callable[[str], bool],
    work: Callable[[SqlUnitOfWork, str, str, str], None],
    ann: str,
    bob: str,
) -> None:
    """Two transactions at once, ``one`` on (ann, bob), ``two`` on (bob,
    ann): each, once it holds a first row (``first_held`` says which
    statement takes it), waits a little for the other to hold one too; both
    must commit."""
    holds = {name: threading.Event() for name in ("one", "two")}
    barrier = threading.Barrier(2)

    def taken(_c: Any, _cursor: Any, statement: str, *_: Any) -> None:
        me = threading.current_thread().name
        if me in holds and first_held(statement) and not holds[me].is_set():
            holds[me].set()
            other = next(e for name, e in holds.items() if name != me)
            other.wait(0.5)

    def run(name: str, first: str, then: str) -> None:
        threading.current_thread().name = name
        with uow() as u:
            barrier.wait(timeout=10)
            work(u, name, first, then)
            u.commit()

    take = repositories._TAKE_NOTICE_SEQS
    real = take[uow.engine.dialect.name]

    class Spy:
        """The seq-taking statement (run on the driver's cursor, which
        Core's events do not see), and the hook once it is answered (on
        PostgreSQL with the rest of its batch: infra/db/batch.py)."""

        def later(self, conn: sa.Connection, rows: Any, then: Any = None) -> None:
            def answered(cursor: Any) -> None:
                if then is not None:
                    then(cursor)
                taken(conn, None, str(real.compiled(conn.dialect).sql))

            real.later(conn, rows, answered)

    sa.event.listen(uow.engine, "after_cursor_execute", taken)
    take[uow.engine.dialect.name] = Spy()  # type: ignore[assignment]
    try:
        with ThreadPoolExecutor(2) as pool:
            futures = [pool.submit(run, "one", ann, bob), pool.submit(run, "two", bob, ann)]
            for f in futures:
                f.result(timeout=20)
    finally:
        take[uow.engine.dialect.name] = real
        sa.event.remove(uow.engine, "after_cursor_execute", taken)
    assert all(e.is_set() for e in holds.values())


def test_counters_are_taken_in_id_order_so_crosswise_notices_never_deadlock(
    uow: SqlUnitOfWorkFactory,
) -> None:
    """One transaction tells ann then bob, the other bob then ann. Taken in
    the order given, each would hold one counter and wait for the other's
    (PostgreSQL: a deadlock, one aborted); in id order the second waits for
    the first's ann, and both commit."""
    ann, bob = _players(uow, "ann", "bob")

    def tell(u: SqlUnitOfWork, game: str, first: str, then: str) -> None:
        u.notifications.add(AT, [(first, YourTurn(game, 0)), (then, YourTurn(game, 1))])

    _crosswise(uow, lambda statement: SEQS_TAKEN in statement, tell, ann, bob)
    for pid in (ann, bob):
        mine = _all(uow, pid)
        assert [x.seq for x in mine] == [1, 2]
        assert {x.notice.game_id for x in mine} == {"one", "two"}


def test_a_claim_of_one_player_and_notices_to_the_other_crosswise_never_deadlock(
    uow: SqlUnitOfWorkFactory,
) -> None:
    """Each transaction claims its player's row (the caps, 0051) then tells
    the other player (two rematches of one game, each asker notifying the
    other): taking the seqs waits for no claim of ``players``."""
    ann, bob = _players(uow, "ann", "bob")

    def claim_and_tell(u: SqlUnitOfWork, game: str, mine: str, other: str) -> None:
        u.players.claim(mine)
        u.notifications.add(AT, [(other, YourRematch(game, f"{game}-new"))])

    def claims(statement: str) -> bool:
        return statement.lstrip().upper().startswith("SELECT") and "FROM players" in statement

    _crosswise(uow, claims, claim_and_tell, ann, bob)
    assert [x.notice for x in _all(uow, bob)] == [YourRematch("one", "one-new")]
    assert [x.notice for x in _all(uow, ann)] == [YourRematch("two", "two-new")]


# ---------------------------------------------------------------- use cases
async def _play(deps: Deps) -> tuple[str, list[str]]:
    """A 3-seat game of ann (the host, seat 0), bob (seat 1) and a bot,
    played to its end: each person sends their first legal action."""
    ann, bob = [(await create_player(deps, name)).player.id for name in ("ann", "bob")]
    gid = (await create_game(deps, _req(ann), NewGame(3))).game_id
    await join_game(deps, _req(bob), gid, None)
    await add_bot(deps, _req(ann), gid, Strategy.RANDOM, None)
    await start_game(deps, _req(ann), gid)
    people = {0: ann, 1: bob}
    for _ in range(1_000):
        await drive_bots(deps, gid)
        game = await _game(deps, gid)
        assert game.state is not None
        seat = to_act(game.state)
        if seat is None:
            break
        await act(deps, _req(people[seat]), gid, legal_actions(game.state, seat)[0])
    assert (await _game(deps, gid)).status is GameStatus.FINISHED
    return gid, [ann, bob]


async def _game(deps: Deps, gid: str) -> GameRecord:
    def load() -> GameRecord | None:
        with deps.uow() as u:
            return u.games.get(gid)

    game = await deps.run(load)
    assert game is not None
    return game


async def _listed(deps: Deps, pid: str, unread_only: bool = False) -> list[Notification]:
    """All the player's notifications through the use case, 4 a page."""
    found: list[Notification] = []
    while True:
        after = found[-1].seq if found else 0
        page = await my_notifications(deps, pid, after, 4, unread_only)
        found += page.items
        if not page.has_more:
            return found


async def test_a_game_played_on_sql_tells_each_player_as_the_fakes_do(
    uow: SqlUnitOfWorkFactory,
) -> None:
    deps = _deps(uow)
    gid, people = await _play(deps)
    ann, bob = people
    fakes = Store()
    fake_deps = _deps(lambda: FakeUnitOfWork(fakes))
    assert await _play(fake_deps) == (gid, people)  # the same game, move for move

    game = await _game(deps, gid)
    outcome = {e.player_id: e for e in entries_of(game)}
    told = {p: await _listed(deps, p) for p in people}
    for p in people:
        mine = told[p]
        assert mine == fakes.notifications[p]
        with uow() as u:
            assert mine == u.notifications.page(p, 0, 1_000, False)
        assert [x.seq for x in mine] == list(range(1, len(mine) + 1))
        assert _counter(uow.engine, p) == len(mine)
        assert all(x.notice.game_id == gid and x.read_at is None for x in mine)
        turns = [x.notice for x in mine if isinstance(x.notice, YourTurn)]
        assert turns and {(t.seat, t.deadline) for t in turns} == {(game.seat_of(p), None)}
        ended = [x.notice for x in mine if isinstance(x.notice, YourGameEnded)]
        e = outcome[p]
        assert ended in ([], [YourGameEnded(gid, e.seat, e.score, e.place, e.won)])
    assert told[bob][0].notice == YourGameStarted(gid, 1)  # ann started it: she knows
    assert not any(isinstance(x.notice, YourGameStarted) for x in told[ann])
    assert any(isinstance(x.notice, YourGameEnded) for p in people for x in told[p])

    assert await mark_read(deps, bob, 3) == 3
    assert await mark_read(deps, bob, 3) == 0
    assert await _listed(deps, bob, unread_only=True) == told[bob][3:]
    assert all(x.read_at is not None for x in (await _listed(deps, bob))[:3])
    assert await _listed(deps, ann, unread_only=True) == told[ann]


class _Spy:
    """A ``NotificationStore`` that notes what each ``add`` was given."""

    def __init__(self, store: NotificationStore, told: list[tuple[str, Notice]]) -> None:
        self._store, self._told = store, told

    def add(self, at: datetime, notices: Sequence[tuple[str, Notice]]) -> None:
        self._told.extend(notices)
        self._store.add(at, notices)

    def last_seq(self, player_id: str) -> int:
        return self._store.last_seq(player_id)

    def page(
        self, player_id: str, after_seq: int, limit: int, unread_only: bool
    ) -> list[Notification]:
        return self._store.page(player_id, after_seq, limit, unread_only)

    def mark_read(self, player_id: str, upto_seq: int, at: datetime) -> int:
        return self._store.mark_read(player_id, upto_seq, at)

    def delete_read(self, before: datetime, limit: int) -> int:
        return self._store.delete_read(before, limit)


@dataclass
class _Failing:
    """Units of work whose next commits of a game fail with ``errors`` (one
    each, in order) at the database's COMMIT, once all is written (the
    notifications numbered and inserted: how many each time in
    ``written``); any other commit goes through. What their notifications
    were given: ``told``."""

    engine: sa.Engine
    errors: list[Exception]
    told: list[tuple[str, Notice]] = field(default_factory=list)
    written: list[int] = field(default_factory=list)

    def __call__(self) -> SqlUnitOfWork:
        plan = self

        class Failing(SqlUnitOfWork):
            def __enter__(self) -> Failing:
                super().__enter__()
                self.notifications = _Spy(self.notifications, plan.told)
                return self

            def commit(self) -> None:
                if not (plan.errors and self._games is not None and self._games.written):
                    super().commit()
                    return
                error, conn = plan.errors.pop(0), self._live()

                def fail(c: sa.Connection) -> None:
                    plan.written.append(_stored_in(c))
                    c.connection.rollback()  # the COMMIT failed: all undone
                    raise error

                sa.event.listen(conn, "commit", fail)
                try:
                    super().commit()
                finally:
                    sa.event.remove(conn, "commit", fail)

        return Failing(plan.engine)


def _stored_in(c: sa.Connection) -> int:
    return int(c.execute(sa.select(sa.func.count()).select_from(notifications)).scalar_one())


async def test_a_change_rolled_back_or_refused_tells_nobody(uow: SqlUnitOfWorkFactory) -> None:
    deps = _deps(uow)
    ann, bob = [(await create_player(deps, n)).player.id for n in ("ann", "bob")]
    gid = (await create_game(deps, _req(ann), NewGame(3))).game_id
    await join_game(deps, _req(bob), gid, None)
    await add_bot(deps, _req(ann), gid, Strategy.RANDOM, None)
    assert _stored(uow.engine) == 0

    crashing = _Failing(uow.engine, [RuntimeError("power cut before the commit")])
    with pytest.raises(RuntimeError):
        await start_game(replace(deps, uow=crashing), _req(ann), gid)
    assert (bob, YourGameStarted(gid, 1)) in crashing.told
    assert crashing.written == [len(crashing.told)]  # numbered and inserted, then lost
    assert (await _game(deps, gid)).status is GameStatus.LOBBY
    assert _stored(uow.engine) == 0
    assert [_counter(uow.engine, p) for p in (ann, bob)] == [None, None]

    racing = _Failing(uow.engine, [WriteConflict("lost a race"), WriteConflict("again")])
    await start_game(replace(deps, uow=racing), _req(ann), gid)  # the third try commits
    assert crashing.told == racing.told[: len(crashing.told)]
    assert len(racing.told) == 3 * len(crashing.told)
    assert racing.written == [len(crashing.told)] * 2
    for p in (ann, bob):  # told once, though written three times
        expected = [x for q, x in crashing.told if q == p]
        assert [(x.seq, x.notice) for x in _all(uow, p)] == list(enumerate(expected, 1))
    assert _all(uow, bob)[0].notice == YourGameStarted(gid, 1)

    await drive_bots(deps, gid)
    game = await _game(deps, gid)
    assert game.state is not None
    seat = to_act(game.state)
    assert seat in (0, 1)
    waiting = (ann, bob)[seat]
    other = (bob, ann)[seat]
    before = {p: _all(uow, p) for p in (ann, bob)}
    move = legal_actions(game.state, seat)[0]
    with pytest.raises(DomainError) as refused:  # kept under its key: a commit, no notice
        await act(deps, _req(other, "playCard", key="early"), gid, move)
    assert refused.value.code is ErrorCode.NOT_YOUR_TURN
    with uow() as u:
        assert u.idempotency.get(other, "early") is not None
    assert {p: _all(uow, p) for p in (ann, bob)} == before
    await act(deps, _req(waiting), gid, move)
    assert _all(uow, waiting) == before[waiting]  # the mover is told nothing
    assert (_counter(uow.engine, other) or 0) == len(_all(uow, other))


# ---------------------------------------------------------------- migration
async def test_0014_down_and_up_with_notifications_in_place(empty_db_url: str) -> None:
    """Down to 0013 drops ``notifications`` and ``notice_counters`` with their
    rows (the players stay, as they were); up again, every player (one added
    at 0013 too) starts at seq 1."""
    engine = make_engine(empty_db_url)
    config = migrate.alembic_config(engine)
    try:
        migrate.upgrade(engine)
        uow = SqlUnitOfWorkFactory(engine)
        ann, bob = _players(uow, "ann", "bob")
        _add(uow, AT, [(ann, x) for x in EVERY_KIND] + [(bob, EVERY_KIND[0])])
        with uow() as u:
            assert u.notifications.mark_read(ann, 2, AT) == 2
            u.commit()
        assert (_counter(engine, ann), _counter(engine, bob)) == (len(EVERY_KIND), 1)
        assert _stored(engine) == len(EVERY_KIND) + 1
        with engine.connect() as c:
            columns = {col["name"] for col in sa.inspect(c).get_columns("players")}

        command.downgrade(config, "0013")
        assert migrate.current(engine) == "0013"
        with engine.begin() as c:
            tables = set(sa.inspect(c).get_table_names())
            assert not {"notifications", "notice_counters"} & tables
            assert {col["name"] for col in sa.inspect(c).get_columns("players")} == columns
            c.execute(sa.insert(players).values(id="cy", name="Cy", created_at=T0))  # at 0013
            ids = c.execute(sa.text("SELECT id FROM players ORDER BY id")).scalars().all()
            assert ids == ["ann", "bob", "cy"]

        command.upgrade(config, "head")
        assert migrate.current(engine) == migrate.head()
        with engine.connect() as c:
            indexes = {str(i["name"]) for i in sa.inspect(c).get_indexes("notifications")}
            assert {"ix_notifications_unread", "ix_notifications_read_at"} <= indexes
        with uow() as u:
            assert u.players.get(ann) == Player(ann, "name of ann", T0)
            assert u.players.get("cy") == Player("cy", "Cy", T0)
        assert _stored(engine) == 0
        assert [_counter(engine, p) for p in (ann, bob, "cy")] == [None, None, None]
        _add(uow, AT, [("cy", EVERY_KIND[1]), (ann, EVERY_KIND[2]), (ann, EVERY_KIND[3])])
        assert _all(uow, ann) == [
            Notification(ann, 1, AT, EVERY_KIND[2]),
            Notification(ann, 2, AT, EVERY_KIND[3]),
        ]
        assert _all(uow, "cy") == [Notification("cy", 1, AT, EVERY_KIND[1])]
        assert _all(uow, bob) == []
    finally:
        engine.dispose()


async def test_a_long_waits_warning_is_swept_once_from_the_stored_time(
    uow: SqlUnitOfWorkFactory,
) -> None:
    """Two days a turn: the stored sweep time is the warning's, an hour
    before the deadline; the sweep logs ``DeadlineNear`` once and stores the
    deadline as the next time; the waiting person gets ``YourDeadlineSoon``."""
    deps = _deps(uow)
    clock = deps.clock
    assert isinstance(clock, FakeClock)
    ann, bob = [(await create_player(deps, name)).player.id for name in ("ann", "bob")]
    options = GameOptions(turn_seconds=2 * 86_400)
    gid = (await create_game(deps, _req(ann), NewGame(3, options=options))).game_id
    await join_game(deps, _req(bob), gid, None)
    await add_bot(deps, _req(ann), gid, Strategy.RANDOM, None)
    await start_game(deps, _req(ann), gid)
    await drive_bots(deps, gid)  # until a person must act
    game = await _game(deps, gid)
    assert game.state is not None and game.deadline is not None
    seat = to_act(game.state)
    assert seat in (0, 1)
    warn = game.deadline - timedelta(hours=1)
    with uow() as u:
        assert u.games.next_deadline(clock.now()) == warn
    clock.advance(warn - clock.now() + timedelta(seconds=1))
    assert await sweep_deadlines(deps) == 1  # one change: the warning, no timeout
    assert await sweep_deadlines(deps) == 0  # once
    with uow() as u:
        assert u.games.next_deadline(clock.now()) == game.deadline
        assert u.games.due_deadlines(clock.now(), 10) == []
    who = (ann, bob)[seat]
    assert [x.notice for x in _all(uow, who) if isinstance(x.notice, YourDeadlineSoon)] == [
        YourDeadlineSoon(gid, seat, game.deadline)
    ]
