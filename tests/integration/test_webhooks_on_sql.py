"""Webhooks on SQLite and PostgreSQL (issue #25, docs/decisions/0064): the
outbox is written in its notifications' own transaction (nothing of a
rolled-back one), one message per live endpoint taking the kind, as each
player's push settings allow, its body carrying the app's id for the
player; deliverers lease due messages (PostgreSQL: ``FOR UPDATE SKIP
LOCKED``, two leases never share a row nor wait for each other), a stale
lease cannot finish, the log is paged newest first; replays, the sweep of
done messages, the endpoints and their secrets; migration 0015 goes down
and up with rows in place; the use cases on SQL do what they do on the
fakes."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa
from alembic import command

from api.graphql.scalars import serialize_date_time
from domain.bots.strategy import Strategy
from domain.errors import BadRequest, NotFound
from domain.notifications import Notice, YourGameEnded, YourGameStarted, YourInvitation, YourTurn
from domain.ports import UnitOfWorkFactory, WriteConflict
from domain.records import Player
from domain.services import webhooks as hooks
from domain.services.deps import Deps
from domain.services.games import NewGame, add_bot, create_game, join_game, start_game
from domain.services.players import create_player
from domain.services.service_keys import EXTERNAL, issue_player_token
from domain.services.transaction import Request
from domain.webhooks import (
    ALL_KINDS,
    KINDS,
    Attempt,
    Disabled,
    Endpoint,
    Message,
    Outcome,
    Secrets,
    Status,
    message_id,
)
from infra.bus.memory import InProcessBus
from infra.db import migrate
from infra.db.engine import make_engine
from infra.db.tables import (
    notifications,
    push_settings,
    webhook_attempts,
    webhook_endpoints,
    webhook_messages,
)
from infra.db.uow import SqlUnitOfWorkFactory
from tests.fakes import TEST_KEYS, FakeClock, FakeIds, FakeUnitOfWork, Store
from tests.integration.records import PLUS_TWO, T0

AT = datetime(2026, 12, 6, 9, 30, 15, 123456, tzinfo=UTC)
DEADLINE = datetime(2026, 12, 6, 11, 31, 45, 654321, tzinfo=PLUS_TWO)
URL = "https://hooks.example.com/mmk"
LEASE = timedelta(seconds=30)


def _s(seconds: float) -> datetime:
    return AT + timedelta(seconds=seconds)


def _players(uow: SqlUnitOfWorkFactory, *ids: str) -> list[str]:
    with uow() as u:
        for pid in ids:
            u.players.add(Player(pid, f"name of {pid}", T0))
        u.commit()
    return list(ids)


def _endpoint(
    eid: str,
    kinds: Sequence[str] = tuple(KINDS),
    created_at: datetime = T0,
    description: str | None = None,
) -> Endpoint:
    text = f"the {eid}" if description is None else description
    return Endpoint(eid, f"{URL}/{eid}", frozenset(kinds), text, created_at)


def _add_endpoints(uow: SqlUnitOfWorkFactory, *endpoints: Endpoint) -> None:
    with uow() as u:
        for e in endpoints:
            u.webhooks.add_endpoint(e, Secrets(f"sealed-{e.id}"))
        u.commit()


def _notify(uow: SqlUnitOfWorkFactory, at: datetime, told: Sequence[tuple[str, Notice]]) -> None:
    with uow() as u:
        u.notifications.add(at, told)
        u.commit()


def _msg(
    mid: str,
    endpoint_id: str,
    created_at: datetime,
    *,
    next_at: datetime | None = None,
    status: Status = Status.PENDING,
    player_id: str = "ann",
    seq: int = 1,
) -> Message:
    """A message made by hand (its endpoint must exist; its player need not)."""
    due = created_at if next_at is None and status is Status.PENDING else next_at
    return Message(
        mid,
        endpoint_id,
        player_id,
        seq,
        "YOUR_TURN",
        "g1",
        created_at,
        json.dumps({"mid": mid}),
        status,
        due,
    )


def _enqueue(uow: SqlUnitOfWorkFactory, messages: Sequence[Message]) -> None:
    with uow() as u:
        u.webhooks.enqueue(messages)
        u.commit()


def _lease(
    uow: SqlUnitOfWorkFactory, eid: str, now: datetime, limit: int = 100, commit: bool = True
) -> list[Message]:
    with uow() as u:
        got = u.webhooks.lease(eid, now, now + LEASE, limit)
        if commit:
            u.commit()
    return got


def _message(uow: SqlUnitOfWorkFactory, mid: str) -> Message:
    with uow() as u:
        found = u.webhooks.message(mid)
    assert found is not None
    return found


def _log(
    uow: SqlUnitOfWorkFactory,
    eid: str,
    status: Status | None = None,
    before: tuple[datetime, str] | None = None,
    limit: int = 1_000,
) -> list[Message]:
    with uow() as u:
        return u.webhooks.messages(eid, status, before, limit)


def _count(engine: sa.Engine, table: sa.Table) -> int:
    with engine.connect() as c:
        return int(c.execute(sa.select(sa.func.count()).select_from(table)).scalar_one())


def _ids(messages: Sequence[Message]) -> list[str]:
    return [m.id for m in messages]


# ---------------------------------------------------------------- the outbox
def test_the_outbox_is_written_with_its_notifications_per_endpoint_and_settings(
    uow: SqlUnitOfWorkFactory,
) -> None:
    ann, bob, cy = _players(uow, "ann", "bob", "cy")
    _notify(uow, AT, [(ann, YourTurn("g0", 0))])  # no endpoint yet: no message
    assert _count(uow.engine, webhook_messages) == 0

    turns = _endpoint("e1", ["YOUR_TURN", "YOUR_GAME_STARTED"], T0)
    ends = _endpoint("e2", ["YOUR_TURN", "YOUR_GAME_ENDED"], T0 + timedelta(seconds=1))
    off = _endpoint("e3", list(KINDS), T0 + timedelta(seconds=2))
    _add_endpoints(uow, turns, ends, off)
    with uow() as u:
        assert u.webhooks.disable("e3", AT, Disabled.BY_APP)
        u.players.add_identity(ann, EXTERNAL, "app-ann ✨", AT)
        u.players.add_identity(bob, "https://issuer.example.com", "bob-at-the-issuer", AT)
        u.webhooks.set_push_kinds(bob, frozenset({"YOUR_GAME_STARTED"}))
        u.webhooks.set_push_kinds(bob, frozenset({"YOUR_TURN", "YOUR_GAME_ENDED"}))  # replaces
        u.webhooks.set_push_kinds(cy, frozenset({"YOUR_GAME_ENDED"}))
        u.commit()

    told: list[tuple[str, Notice]] = [
        (ann, YourTurn("g1", 2, DEADLINE)),  # ann's 2
        (bob, YourTurn("g1", 1)),  # bob's 1
        (cy, YourTurn("g1", 0)),  # cy's 1: not pushed
        (ann, YourGameStarted("g1", 2)),  # ann's 3
        (bob, YourGameStarted("g1", 1)),  # bob's 2: not pushed
        (ann, YourGameEnded("g1", 2, 17, 1, True)),  # ann's 4
        (cy, YourGameEnded("g1", 0, 3, 3, False)),  # cy's 2
        (bob, YourInvitation("g2", ann)),  # no endpoint takes it
    ]
    with uow() as u:  # rolled back: neither notifications nor messages
        u.notifications.add(AT, told)
    with uow() as u:  # refused at the commit (a notice for no player): nothing either
        u.notifications.add(AT, [*told, ("ghost", YourTurn("g1", 3))])
        with pytest.raises(sa.exc.IntegrityError):
            u.commit()
    written: list[int] = []

    def fail(c: sa.Connection) -> None:  # the COMMIT fails once all is written
        written.append(int(c.execute(sa.select(sa.func.count(webhook_messages.c.id))).scalar_one()))
        c.connection.rollback()
        raise RuntimeError("power cut at the commit")

    sa.event.listen(uow.engine, "commit", fail)
    try:
        with uow() as u, pytest.raises(RuntimeError):
            u.notifications.add(AT, told)
            u.commit()
    finally:
        sa.event.remove(uow.engine, "commit", fail)
    assert written == [7]  # the outbox was in the transaction, and went with it
    assert _count(uow.engine, webhook_messages) == 0
    assert _count(uow.engine, notifications) == 1

    at = _s(1)
    _notify(uow, at, told)
    expected = {  # (endpoint, player, seq): kind
        ("e1", ann, 2): "YOUR_TURN",
        ("e2", ann, 2): "YOUR_TURN",
        ("e1", bob, 1): "YOUR_TURN",
        ("e2", bob, 1): "YOUR_TURN",
        ("e1", ann, 3): "YOUR_GAME_STARTED",
        ("e2", ann, 4): "YOUR_GAME_ENDED",
        ("e2", cy, 2): "YOUR_GAME_ENDED",
    }
    assert _count(uow.engine, webhook_messages) == len(expected)
    assert _log(uow, "e3") == []
    found = {m.id: m for e in ("e1", "e2") for m in _log(uow, e)}
    assert set(found) == {message_id(e, p, seq) for e, p, seq in expected}
    for (e, p, seq), kind in expected.items():
        m = found[message_id(e, p, seq)]
        assert (m.endpoint_id, m.player_id, m.seq, m.kind, m.game_id) == (e, p, seq, kind, "g1")
        assert (m.created_at, m.next_at, m.status, m.tries) == (at, at, Status.PENDING, 0)
        assert (m.retry_from, m.attempts) == (None, ())
        assert m == _message(uow, m.id)

    body = found[message_id("e2", ann, 2)].payload
    assert body == found[message_id("e1", ann, 2)].payload  # one body for every endpoint
    assert json.loads(body) == {
        "type": "notification.your_turn",
        "timestamp": serialize_date_time(at),  # written as the API writes a DateTime
        "data": {
            "playerId": ann,
            "externalId": "app-ann ✨",
            "seq": 2,
            "at": serialize_date_time(at),
            "kind": "YOUR_TURN",
            "notice": {
                "__typename": "YourTurn",
                "gameId": "g1",
                "seat": 2,
                "deadline": serialize_date_time(DEADLINE),
            },
        },
    }
    assert body == json.dumps(json.loads(body), separators=(",", ":"))  # compact, as signed
    ended = json.loads(found[message_id("e2", cy, 2)].payload)
    assert ended["type"] == "notification.your_game_ended"
    assert ended["data"]["externalId"] is None  # no external id
    assert ended["data"]["notice"] == {
        "__typename": "YourGameEnded",
        "gameId": "g1",
        "seat": 0,
        "score": 3,
        "place": 3,
        "won": False,
    }
    bobs = json.loads(found[message_id("e1", bob, 1)].payload)
    assert bobs["data"]["externalId"] is None  # another issuer's identity is not the app's
    assert bobs["data"]["notice"] == {
        "__typename": "YourTurn",
        "gameId": "g1",
        "seat": 1,
        "deadline": None,
    }

    with uow() as u:  # enabled again: new notifications reach it, the past ones do not
        u.webhooks.save_endpoint(off)
        u.commit()
    _notify(uow, _s(2), [(cy, YourGameEnded("g3", 1)), (cy, YourTurn("g3", 1))])
    assert [(m.player_id, m.seq) for m in _log(uow, "e3")] == [(cy, 3)]
    assert _ids(_log(uow, "e3")) == [message_id("e3", cy, 3)]


def test_push_settings_and_external_ids_round_trip(uow: SqlUnitOfWorkFactory) -> None:
    ann, bob, cy = _players(uow, "ann", "bob", "cy")
    with uow() as u:
        u.webhooks.set_push_kinds(ann, frozenset({"YOUR_TURN", "YOUR_REMATCH"}))
        u.webhooks.set_push_kinds(bob, frozenset())  # nothing pushed
        u.players.add_identity(ann, EXTERNAL, "A-1", AT)
        u.players.add_identity(cy, EXTERNAL, "C-3", AT)
        u.players.add_identity(bob, "https://issuer.example.com", "B-2", AT)
        u.commit()
    with uow() as u:
        w = u.webhooks
        assert w.push_kinds([ann, bob, cy, "ghost"]) == {
            ann: frozenset({"YOUR_TURN", "YOUR_REMATCH"}),
            bob: frozenset(),
        }
        assert w.push_kinds([]) == {} and w.external_ids([]) == {}
        assert w.external_ids([ann, bob, cy, "ghost"]) == {ann: "A-1", cy: "C-3"}
        w.set_push_kinds(ann, ALL_KINDS)
        u.commit()
    with uow() as u:
        assert u.webhooks.push_kinds([ann]) == {ann: ALL_KINDS}
        u.webhooks.set_push_kinds(cy, frozenset({"YOUR_TURN"}))  # rolled back
    assert _count(uow.engine, push_settings) == 2

    _add_endpoints(uow, _endpoint("e1"))
    _notify(uow, AT, [(p, YourTurn("g1", 0)) for p in (ann, bob, cy)])
    assert sorted(m.player_id for m in _log(uow, "e1")) == [ann, cy]


# ---------------------------------------------------------------- leases
def test_a_lease_takes_due_pending_messages_by_when_due_and_moves_them_on(
    uow: SqlUnitOfWorkFactory,
) -> None:
    _add_endpoints(uow, _endpoint("e1"), _endpoint("e2"))
    _enqueue(
        uow,
        [
            _msg("m1", "e1", _s(1), next_at=_s(4)),
            _msg("m2", "e1", _s(2), next_at=_s(2)),
            _msg("m3", "e1", _s(3), next_at=_s(3)),
            _msg("m4", "e1", _s(0), next_at=_s(10)),  # not due at 5
            _msg("m5", "e1", _s(0), status=Status.DELIVERED),
            _msg("m6", "e1", _s(0), status=Status.FAILED),
            _msg("m7", "e1", _s(0), next_at=_s(0), status=Status.SKIPPED),
            _msg("m8", "e2", _s(0)),  # another endpoint's
        ],
    )
    now = _s(5)
    first = _lease(uow, "e1", now, limit=2)  # the two due first (2, 3), oldest first
    assert [(m.id, m.tries, m.next_at) for m in first] == [
        ("m2", 1, now + LEASE),
        ("m3", 1, now + LEASE),
    ]
    assert first[0] == _message(uow, "m2")
    assert _ids(_lease(uow, "e1", now)) == ["m1"]  # the rest that is due
    assert _lease(uow, "e1", _s(9)) == []  # leased
    with uow() as u:  # the leased ones are not due again before the lease's end
        almost = now + LEASE - timedelta(microseconds=1)
        assert _ids(u.webhooks.lease("e1", almost, almost + LEASE, 10)) == ["m4"]
    assert _message(uow, "m4").tries == 0  # not committed: not leased

    again = _lease(uow, "e1", now + LEASE)  # never reported back: due again, to anyone
    assert [(m.id, m.tries) for m in again] == [("m4", 1), ("m1", 2), ("m2", 2), ("m3", 2)]
    assert {m.next_at for m in again} == {now + 2 * LEASE}
    for mid in ("m5", "m6", "m7"):  # done ones untouched
        done = _message(uow, mid)
        assert done.tries == 0 and done.status is not Status.PENDING
    assert [(m.id, m.tries) for m in _lease(uow, "e2", now)] == [("m8", 1)]
    assert _lease(uow, "nope", now) == []


def test_a_disabled_endpoints_messages_are_not_leased(uow: SqlUnitOfWorkFactory) -> None:
    _add_endpoints(uow, _endpoint("e1"))
    _enqueue(uow, [_msg("m1", "e1", _s(0))])
    with uow() as u:
        assert u.webhooks.disable("e1", _s(1), Disabled.FAILING)
        u.commit()
    assert _lease(uow, "e1", _s(5)) == []


def test_two_leases_at_once_take_distinct_messages_without_waiting(
    uow: SqlUnitOfWorkFactory,
) -> None:
    """PostgreSQL: the first lease holds its rows to its commit; the second,
    meanwhile, passes over them (``SKIP LOCKED``) and takes the others; a
    plain ``SELECT`` would take the same rows, a plain ``FOR UPDATE`` would
    wait (the deadline fails the test then, and rolling back the first
    frees the second)."""
    if uow.engine.dialect.name != "postgresql":
        pytest.skip("SQLite has one writer at a time")
    _add_endpoints(uow, _endpoint("e1"))
    _enqueue(uow, [_msg(f"m{i}", "e1", _s(i)) for i in range(6)])
    now = _s(10)

    def lease_apart(limit: int, at: datetime = now) -> list[Message]:
        with uow() as b:
            got = b.webhooks.lease("e1", at, at + LEASE, limit)
            b.commit()
        return got

    with ThreadPoolExecutor(1) as pool:
        with uow() as a:
            mine = a.webhooks.lease("e1", now, now + LEASE, 3)
            assert _ids(mine) == ["m0", "m1", "m2"]
            others = pool.submit(lease_apart, 10).result(timeout=5)
            assert _ids(others) == ["m3", "m4", "m5"]
            assert pool.submit(lease_apart, 10).result(timeout=5) == []
            a.commit()
        assert _lease(uow, "e1", now) == []
        assert {_message(uow, f"m{i}").tries for i in range(6)} == {1}

        later = now + LEASE
        with uow() as a:  # rolled back: its rows are due again at once
            assert _ids(a.webhooks.lease("e1", later, later + LEASE, 2)) == ["m0", "m1"]
            assert _ids(pool.submit(lease_apart, 1, later).result(timeout=5)) == ["m2"]
        assert [(m.id, m.tries) for m in _lease(uow, "e1", later)] == [
            ("m0", 2),
            ("m1", 2),
            ("m3", 2),
            ("m4", 2),
            ("m5", 2),
        ]


# ---------------------------------------------------------------- finish, the log
def test_a_stale_lease_cannot_finish_and_a_current_one_logs_its_attempt(
    uow: SqlUnitOfWorkFactory,
) -> None:
    _add_endpoints(uow, _endpoint("e1"))
    _enqueue(uow, [_msg("m1", "e1", _s(0))])
    (stale,) = _lease(uow, "e1", _s(1))
    (current,) = _lease(uow, "e1", _s(1) + LEASE)  # the first lease ran out
    assert (stale.tries, current.tries) == (1, 2)
    before = _message(uow, "m1")

    failed = Attempt(_s(40), 503, 12.5)
    retry = Outcome(Status.PENDING, _s(45))
    with uow() as u:
        assert not u.webhooks.finish(
            stale, Attempt(_s(39), 200, 1.0), Outcome(Status.DELIVERED, None)
        )
        assert u.webhooks.finish(current, failed, retry)
        u.commit()
    assert before.attempts == () and before.next_at == _s(1) + 2 * LEASE
    m = _message(uow, "m1")
    assert (m.status, m.next_at, m.tries, m.attempts) == (Status.PENDING, _s(45), 2, (failed,))
    assert _lease(uow, "e1", _s(44)) == []

    (third,) = _lease(uow, "e1", _s(45))
    timeout = Attempt(_s(46), None, 10_000.25, "no answer within 10 s")
    with uow() as u:  # not committed: nothing logged
        assert u.webhooks.finish(third, Attempt(_s(46), 200, 3.0), Outcome(Status.DELIVERED, None))
    with uow() as u:
        assert u.webhooks.finish(third, timeout, Outcome(Status.FAILED, None))
        assert not u.webhooks.finish(third, timeout, Outcome(Status.FAILED, None))  # done
        u.commit()
    m = _message(uow, "m1")
    assert (m.status, m.next_at, m.tries) == (Status.FAILED, None, 3)
    assert m.attempts == (failed, timeout)
    with uow.engine.connect() as c:
        rows = c.execute(sa.select(webhook_attempts.c.n).order_by(webhook_attempts.c.n)).all()
    assert [r.n for r in rows] == [2, 3]  # numbered by the lease that made them
    assert _lease(uow, "e1", _s(99_999)) == []
    with uow() as u:
        assert not u.webhooks.finish(stale, failed, retry)
    assert _message(uow, "m1") == m


def test_the_log_is_newest_first_filtered_and_paged(uow: SqlUnitOfWorkFactory) -> None:
    _add_endpoints(uow, _endpoint("e1"), _endpoint("e2"))
    made = [
        _msg("a", "e1", _s(1)),
        _msg("b", "e1", _s(2)),
        _msg("c", "e1", _s(2)),  # a tie on the time: by id
        _msg("d", "e1", _s(3)),
        _msg("e", "e1", _s(4), status=Status.DELIVERED),
        _msg("f", "e1", _s(5)),
        _msg("x", "e2", _s(6)),
    ]
    _enqueue(uow, made)
    leased = {m.id: m for m in _lease(uow, "e1", _s(10), limit=3)}  # a, b, c
    attempts = {
        "a": Attempt(_s(11), 500, 1.5),
        "c": Attempt(_s(12), 200, 2.5),
    }
    with uow() as u:
        assert u.webhooks.finish(leased["a"], attempts["a"], Outcome(Status.PENDING, _s(20)))
        assert u.webhooks.finish(leased["c"], attempts["c"], Outcome(Status.DELIVERED, None))
        u.commit()
    again = {m.id: m for m in _lease(uow, "e1", _s(20))}  # due: a again, d, f
    assert sorted(again) == ["a", "d", "f"]
    late = Attempt(_s(21), 410, 0.5, None)
    with uow() as u:
        assert u.webhooks.finish(again["a"], late, Outcome(Status.FAILED, None))
        u.commit()

    log = _log(uow, "e1")
    assert _ids(log) == ["f", "e", "d", "c", "b", "a"]
    by_id = {m.id: m for m in log}
    assert by_id["a"].attempts == (attempts["a"], late)
    assert by_id["c"].attempts == (attempts["c"],)
    assert all(by_id[i].attempts == () for i in "bdef")
    assert [by_id[i].status for i in "abcdef"] == [
        Status.FAILED,
        Status.PENDING,
        Status.DELIVERED,
        Status.PENDING,
        Status.DELIVERED,
        Status.PENDING,
    ]
    assert _ids(_log(uow, "e1", Status.PENDING)) == ["f", "d", "b"]
    assert _ids(_log(uow, "e1", Status.DELIVERED)) == ["e", "c"]
    assert _ids(_log(uow, "e1", Status.FAILED)) == ["a"]
    assert _log(uow, "e1", Status.SKIPPED) == []
    assert _ids(_log(uow, "e2")) == ["x"]
    assert _log(uow, "nope") == []

    pages: list[list[str]] = []
    before: tuple[datetime, str] | None = None
    while page := _log(uow, "e1", None, before, 2):
        pages.append(_ids(page))
        before = (page[-1].created_at, page[-1].id)
    assert pages == [["f", "e"], ["d", "c"], ["b", "a"]]
    assert _ids(_log(uow, "e1", None, (_s(2), "c"), 10)) == ["b", "a"]  # within the tie
    assert _ids(_log(uow, "e1", Status.PENDING, (_s(3), "d"), 10)) == ["b"]
    with uow() as u:
        assert u.webhooks.message("nope") is None


def test_the_logs_cursor_may_be_in_any_time_zone(uow: SqlUnitOfWorkFactory) -> None:
    _add_endpoints(uow, _endpoint("e1"))
    _enqueue(uow, [_msg(m, "e1", _s(i)) for i, m in enumerate("abcd")])
    cursor = _s(2).astimezone(PLUS_TWO)
    assert _ids(_log(uow, "e1", None, (cursor, "c"), 10)) == ["b", "a"]


# ---------------------------------------------------------------- replays, sweeps
def test_replays_failed_since_and_the_sweep_of_done_messages(uow: SqlUnitOfWorkFactory) -> None:
    _add_endpoints(uow, _endpoint("e1"), _endpoint("e2"))
    _enqueue(
        uow,
        [
            _msg("f1", "e1", _s(1), status=Status.FAILED),
            _msg("d1", "e1", _s(2), status=Status.DELIVERED),
            _msg("f2", "e1", _s(3), status=Status.FAILED),
            _msg("f3", "e2", _s(3), status=Status.FAILED),
            _msg("s1", "e1", _s(4), status=Status.SKIPPED),
            _msg("p1", "e1", _s(0), next_at=_s(99)),  # old, but pending: kept
            _msg("f4", "e1", _s(50), status=Status.FAILED),
        ],
    )
    with uow() as u:
        w = u.webhooks
        assert w.failed_since("e1", _s(0), 10) == ["f1", "f2", "f4"]
        assert w.failed_since("e1", _s(1), 2) == ["f1", "f2"]
        assert w.failed_since("e1", _s(1) + timedelta(microseconds=1), 10) == ["f2", "f4"]
        assert w.failed_since("e2", _s(0), 10) == ["f3"]
        assert w.failed_since("e1", _s(51), 10) == []
        assert w.replay([], _s(60)) == 0
        assert w.replay(["f1", "d1", "nope"], _s(60)) == 2
        u.commit()
    for mid in ("f1", "d1"):
        m = _message(uow, mid)
        assert (m.status, m.next_at, m.retry_from, m.tries) == (Status.PENDING, _s(60), _s(60), 0)
    assert _ids(_lease(uow, "e1", _s(59))) == []
    assert _ids(_lease(uow, "e1", _s(60))) == ["f1", "d1"]

    # attempts on two done ones: leased back (a replay), then finished
    _enqueue(uow, [_msg("g1", "e2", _s(5)), _msg("g2", "e2", _s(6))])
    leased = _lease(uow, "e2", _s(7))
    assert _ids(leased) == ["g1", "g2"]
    with uow() as u:
        for m in leased:
            assert u.webhooks.finish(m, Attempt(_s(8), 500, 1.0), Outcome(Status.FAILED, None))
        u.commit()
    assert _count(uow.engine, webhook_attempts) == 2

    with uow() as u:  # done before 5.5, oldest first: f2 and f3 (f1, d1 pending again)
        assert u.webhooks.delete_done(_s(5.5), 1) == 1
        u.commit()
    remaining = {m.id for e in ("e1", "e2") for m in _log(uow, e)}
    assert remaining & {"f2", "f3"} in ({"f2"}, {"f3"})
    with uow() as u:
        assert u.webhooks.delete_done(_s(5.5), 10) == 3  # the other, s1, g1 (with its attempt)
        assert u.webhooks.delete_done(_s(5.5), 10) == 0
        u.commit()
    assert {m.id for e in ("e1", "e2") for m in _log(uow, e)} == {"f1", "d1", "p1", "f4", "g2"}
    with uow.engine.connect() as c:
        assert c.execute(sa.select(webhook_attempts.c.message_id)).scalars().all() == ["g2"]
    with uow() as u:
        assert u.webhooks.delete_done(_s(999), 10) == 2  # f4, g2; pending ones stay
        u.commit()
    assert _count(uow.engine, webhook_attempts) == 0
    assert sorted(_ids(_log(uow, "e1"))) == ["d1", "f1", "p1"]


# ---------------------------------------------------------------- endpoints
def test_endpoints_secrets_disable_and_delete(uow: SqlUnitOfWorkFactory) -> None:
    e1 = _endpoint("e1", ["YOUR_TURN"], T0 + timedelta(seconds=2))
    e2 = _endpoint("e2", ["YOUR_TURN", "YOUR_REMATCH"], T0.astimezone(PLUS_TWO))
    e0 = _endpoint("e0", list(KINDS), T0 + timedelta(seconds=2), description="")
    _add_endpoints(uow, e1, e2, e0)
    with uow() as u, pytest.raises(WriteConflict):
        u.webhooks.add_endpoint(_endpoint("e1"), Secrets("again"))
        u.commit()
    with uow() as u:
        assert u.webhooks.endpoints() == [e2, e0, e1]  # oldest first, then by id
        assert u.webhooks.secrets("e1") == Secrets("sealed-e1")
        assert u.webhooks.secrets("nope") is None

    until = AT.astimezone(PLUS_TWO) + timedelta(hours=24)
    rotated = Secrets("sealed-new", "sealed-e1", until)
    with uow() as u:
        u.webhooks.save_secrets("e1", rotated)
        u.commit()
    with uow() as u:
        assert u.webhooks.secrets("e1") == rotated
        assert u.webhooks.secrets("e2") == Secrets("sealed-e2")
        assert u.webhooks.endpoints()[2].previous_until == until
        u.webhooks.save_secrets("e1", Secrets("sealed-newer"))
        u.commit()
    with uow() as u:
        assert u.webhooks.secrets("e1") == Secrets("sealed-newer")

    changed = Endpoint("e2", URL + "/v2", frozenset({"YOUR_GAME_ENDED"}), "renamed", T0)
    with uow() as u:
        u.webhooks.save_endpoint(changed)
        u.webhooks.save_endpoint(_endpoint("ghost"))  # no such endpoint: nothing
        u.commit()
    with uow() as u:
        assert u.webhooks.endpoints()[0] == changed
        assert u.webhooks.disable("e2", _s(1), Disabled.FAILING)
        assert not u.webhooks.disable("e2", _s(2), Disabled.BY_APP)  # once
        assert not u.webhooks.disable("nope", _s(2), Disabled.BY_APP)
        u.commit()
    with uow() as u:
        off = u.webhooks.endpoints()[0]
        assert (off.disabled_at, off.disabled_reason) == (_s(1), Disabled.FAILING)
        assert [x.disabled_at is None for x in u.webhooks.endpoints()] == [False, True, True]
        assert u.webhooks.secrets("e2") == Secrets("sealed-e2")  # its secrets kept
    assert _count(uow.engine, webhook_endpoints) == 3

    # deleted with its messages and their attempts; the others' stay
    _enqueue(uow, [_msg("m1", "e1", _s(0)), _msg("m2", "e1", _s(1)), _msg("o1", "e0", _s(0))])
    for eid in ("e1", "e0"):
        with uow() as u:
            for m in u.webhooks.lease(eid, _s(5), _s(50), 10):
                u.webhooks.finish(m, Attempt(_s(6), 500, 1.0), Outcome(Status.PENDING, _s(60)))
            u.commit()
    assert _count(uow.engine, webhook_attempts) == 3
    with uow() as u:
        assert u.webhooks.delete_endpoint("e1")
        assert not u.webhooks.delete_endpoint("e1")
        assert not u.webhooks.delete_endpoint("nope")
        u.commit()
    with uow() as u:
        assert [x.id for x in u.webhooks.endpoints()] == ["e2", "e0"]
        assert u.webhooks.secrets("e1") is None
        assert u.webhooks.message("m1") is None and u.webhooks.message("m2") is None
        assert u.webhooks.messages("e1", None, None, 10) == []
        assert [len(m.attempts) for m in u.webhooks.messages("e0", None, None, 10)] == [1]
    assert _count(uow.engine, webhook_attempts) == 1
    assert _count(uow.engine, webhook_messages) == 1


# ---------------------------------------------------------------- migration
def test_0015_down_and_up_with_webhooks_in_place(empty_db_url: str) -> None:
    """Down to 0014 drops the endpoints, the outbox, its log and the push
    settings with their rows (players and notifications stay); up again,
    all is empty, and a notification reaches a new endpoint."""
    engine = make_engine(empty_db_url)
    config = migrate.alembic_config(engine)
    gone = {"webhook_endpoints", "webhook_messages", "webhook_attempts", "push_settings"}
    try:
        migrate.upgrade(engine)
        uow = SqlUnitOfWorkFactory(engine)
        ann, bob = _players(uow, "ann", "bob")
        _add_endpoints(uow, _endpoint("e1"))
        with uow() as u:
            u.webhooks.set_push_kinds(bob, frozenset({"YOUR_GAME_ENDED"}))
            u.commit()
        _notify(uow, AT, [(ann, YourTurn("g1", 0)), (bob, YourTurn("g1", 1))])
        (leased,) = _lease(uow, "e1", AT)
        with uow() as u:
            assert u.webhooks.finish(leased, Attempt(AT, 200, 1.0), Outcome(Status.DELIVERED, None))
            u.commit()
        counts = [_count(engine, t) for t in (webhook_messages, webhook_attempts, push_settings)]
        assert counts == [1, 1, 1]

        command.downgrade(config, "0014")
        assert migrate.current(engine) == "0014"
        with engine.begin() as c:
            assert not gone & set(sa.inspect(c).get_table_names())
        assert _count(engine, notifications) == 2
        with uow() as u:  # the store of notifications at 0014 (no endpoint read)
            assert u.players.get(ann) == Player(ann, "name of ann", T0)
            assert [n.seq for n in u.notifications.page(ann, 0, 10, False)] == [1]

        command.upgrade(config, "head")
        assert migrate.current(engine) == migrate.head()
        with engine.connect() as c:
            assert gone <= set(sa.inspect(c).get_table_names())
            indexes = {str(i["name"]) for i in sa.inspect(c).get_indexes("webhook_messages")}
        assert {
            "ix_webhook_messages_due",
            "ix_webhook_messages_log",
            "ix_webhook_messages_done",
        } <= indexes
        tables = (webhook_endpoints, webhook_messages, webhook_attempts, push_settings)
        assert [_count(engine, t) for t in tables] == [0, 0, 0, 0]
        _add_endpoints(uow, _endpoint("e2", ["YOUR_TURN"]))
        _notify(uow, _s(1), [(ann, YourTurn("g2", 0)), (bob, YourTurn("g2", 1))])
        assert _ids(_log(uow, "e2")) == sorted(
            [message_id("e2", ann, 2), message_id("e2", bob, 2)], reverse=True
        )
    finally:
        engine.dispose()


# ---------------------------------------------------------------- use cases
def _deps(uow: UnitOfWorkFactory) -> Deps:
    return Deps(
        uow,
        asyncio.to_thread,
        InProcessBus(100_000),
        FakeClock(),
        FakeIds(),
        lambda _: None,
        keys=TEST_KEYS,
    )


async def _set_up(deps: Deps) -> tuple[hooks.NewSecret, list[str]]:
    """An endpoint for every kind, then a game of two people of the app
    (ann by her external id) and a bot, started by ann."""
    made = await hooks.create_endpoint(deps, URL, list(KINDS), "  phones ")
    ann = (await issue_player_token(deps, "app-ann", "ann", None)).player.id
    bob = (await create_player(deps, "bob")).player.id
    gid = (await create_game(deps, Request(ann, "op", {}), NewGame(3))).game_id
    await join_game(deps, Request(bob, "op", {}), gid, None)
    await add_bot(deps, Request(ann, "op", {}), gid, Strategy.RANDOM, None)
    await start_game(deps, Request(ann, "op", {}), gid)
    return made, [ann, bob]


async def test_the_use_cases_on_sql_do_as_on_the_fakes(uow: SqlUnitOfWorkFactory) -> None:
    deps = _deps(uow)
    made, (ann, bob) = await _set_up(deps)
    fakes = Store()
    fake_deps = _deps(lambda: FakeUnitOfWork(fakes))
    assert await _set_up(fake_deps) == (made, [ann, bob])  # the same, id for id

    eid = made.endpoint.id
    assert made.endpoint.description == "phones"
    assert await hooks.list_endpoints(deps) == [made.endpoint]
    log = await hooks.deliveries(deps, eid, None, None, 100)
    assert log == await hooks.deliveries(fake_deps, eid, None, None, 100)
    assert log and {m.player_id for m in log} <= {ann, bob}
    assert message_id(eid, bob, 1) in _ids(log)  # bob's YourGameStarted
    external = {ann: "app-ann", bob: None}  # ann came by her external id
    assert all(json.loads(m.payload)["data"]["externalId"] == external[m.player_id] for m in log)
    assert [m.id for m in log] == [message_id(eid, m.player_id, m.seq) for m in log]

    with uow() as u:
        sealed = u.webhooks.secrets(eid)
    assert sealed is not None and made.secret not in sealed.current
    assert hooks.signing_secrets(deps, eid, sealed, AT) == [made.secret]

    rotated = await hooks.rotate_secret(deps, eid, timedelta(hours=1))
    assert rotated.secret != made.secret and rotated.endpoint.previous_until is not None
    with uow() as u:
        now_sealed = u.webhooks.secrets(eid)
        assert u.webhooks.endpoints() == [rotated.endpoint]
    assert now_sealed is not None
    until = rotated.endpoint.previous_until
    assert now_sealed.previous_until == until
    both = [rotated.secret, made.secret]
    assert hooks.signing_secrets(deps, eid, now_sealed, until - timedelta(seconds=1)) == both
    assert hooks.signing_secrets(deps, eid, now_sealed, until) == [rotated.secret]
    ended = await hooks.rotate_secret(deps, eid, timedelta(0))  # the old one stops now
    with uow() as u:
        last = u.webhooks.secrets(eid)
    assert last is not None and (last.previous, last.previous_until) == (None, None)
    assert hooks.signing_secrets(deps, eid, last, AT) == [ended.secret]

    first = log[-1]  # the oldest
    with pytest.raises(BadRequest):  # still being delivered
        await hooks.replay(deps, first.id)
    with uow() as u:
        leased = u.webhooks.lease(eid, first.created_at, first.created_at + LEASE, 1)
        assert _ids(leased) == [first.id]
        failed = Attempt(first.created_at, 500, 1.0)
        assert u.webhooks.finish(leased[0], failed, Outcome(Status.FAILED, None))
        u.commit()
    assert _ids(await hooks.deliveries(deps, eid, Status.FAILED, None, 10)) == [first.id]
    again = await hooks.replay(deps, first.id)
    assert again.status is Status.PENDING and again.attempts == (failed,)
    assert await hooks.deliveries(deps, eid, Status.FAILED, None, 10) == []
    assert await hooks.replay_failed(deps, eid, first.created_at) == 0
    with pytest.raises(NotFound):
        await hooks.replay(deps, "msg_nope")

    assert await hooks.push_kinds(deps, bob) == ALL_KINDS
    assert await hooks.set_push_kinds(deps, bob, []) == frozenset()
    assert await hooks.push_kinds(deps, bob) == frozenset()

    off = await hooks.set_enabled(deps, eid, False)
    assert off.disabled_reason is Disabled.BY_APP
    assert (await hooks.set_enabled(deps, eid, True)).disabled_at is None
    await hooks.delete_endpoint(deps, eid)
    with pytest.raises(NotFound):
        await hooks.deliveries(deps, eid, None, None, 10)
    with pytest.raises(NotFound):
        await hooks.delete_endpoint(deps, eid)
    assert _count(uow.engine, webhook_messages) == 0
    assert _count(uow.engine, webhook_attempts) == 0


def test_a_message_for_an_endpoint_deleted_meanwhile_is_a_write_conflict(
    uow: SqlUnitOfWorkFactory,
) -> None:
    """The commit read the endpoint live, then another deleted it: the
    foreign key refuses the message, and the change is tried again (the
    retry reads the endpoints without it), never an INTERNAL error."""
    with uow() as u, pytest.raises(WriteConflict):
        u.webhooks.enqueue([_msg("m1", "gone", _s(0))])


def test_a_replay_starts_its_backoff_afresh(uow: SqlUnitOfWorkFactory) -> None:
    _add_endpoints(uow, _endpoint("e1"))
    _enqueue(uow, [_msg("m1", "e1", _s(0))])
    for i in range(3):  # three tries failed
        (m,) = _lease(uow, "e1", _s(100 * (i + 1)))
        with uow() as u:
            assert u.webhooks.finish(
                m,
                Attempt(_s(100 * (i + 1)), 500, 1.0),
                Outcome(
                    Status.FAILED if i == 2 else Status.PENDING,
                    None if i == 2 else _s(100 * (i + 1) + 1),
                ),
            )
            u.commit()
    with uow() as u:
        assert u.webhooks.replay(["m1"], _s(1000)) == 1
        u.commit()
    (again,) = _lease(uow, "e1", _s(1000))
    assert (again.tries, again.retry_tries, again.retry_from) == (4, 3, _s(1000))
    assert again.status is Status.PENDING
