"""Repository contract: what is written is read back equal, on every backend."""

from __future__ import annotations

import importlib
import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from domain.errors import ErrorCode
from domain.game.cards import Card, House
from domain.game.commands import Gift, GiveCards, PlayCard, ReorderTop, SendMessage
from domain.game.events import (
    CardGiven,
    CardPlayed,
    DealtSeat,
    GameStarted,
    MessageSent,
    TrickWon,
    WonPlay,
)
from domain.game.state import MessageStatus
from domain.log import GameStart, SeatCommand
from domain.ports import WriteConflict
from domain.records import GameRecord, GameStatus, Player, Refused, SessionRecord
from infra import codec
from infra.db.mappers import CorruptRow
from infra.db.state_codec import encode
from infra.db.tables import game_events, games, idempotency_keys
from infra.db.uow import SqlUnitOfWorkFactory
from tests.integration import records as r

GOLDEN = sorted((Path(__file__).parent.parent / "golden").glob("*.jsonl"))


def _with_player(uow: SqlUnitOfWorkFactory) -> Player:
    p = r.player()
    with uow() as u:
        u.players.add(p)
        u.players.add_session(_session(p), "hash-" + p.id)
        u.commit()
    return p


def _session(p: Player, at: datetime = r.T0, label: str | None = None) -> SessionRecord:
    return SessionRecord(r.new_id(), p.id, label, at, at)


def _store_game(uow: SqlUnitOfWorkFactory, game: GameRecord) -> None:
    with uow() as u:
        u.games.add(game)
        u.commit()


def test_player_round_trip(uow: SqlUnitOfWorkFactory) -> None:
    p = r.player(r.T0.astimezone(r.PLUS_TWO))
    session = _session(p, r.T0.astimezone(r.PLUS_TWO), "phone")
    with uow() as u:
        u.players.add(p)
        u.players.add_session(session, "token-hash-" + p.id)
        u.commit()
    with uow() as u:
        got = u.players.get(p.id)
        assert got == p
        assert got is not None and got.created_at.tzinfo is UTC
        assert u.players.by_token_hash("token-hash-" + p.id) == (p, session, "token-hash-" + p.id)
        assert u.players.by_token_hash("other") is None
        assert u.players.get("nobody") is None


def test_duplicate_player_id_session_id_or_token_hash_conflicts(
    uow: SqlUnitOfWorkFactory,
) -> None:
    p = _with_player(uow)
    with uow() as u, pytest.raises(WriteConflict):
        u.players.add(Player(p.id, "x", r.T0))
        u.commit()  # PostgreSQL: raised when the batch is sent
    with uow() as u, pytest.raises(WriteConflict):
        u.players.add_session(_session(p), "hash-" + p.id)
        u.commit()  # PostgreSQL: raised when the batch is sent
    session = _session(p)
    with uow() as u:
        u.players.add_session(session, "other-" + p.id)
        u.commit()
    with uow() as u, pytest.raises(WriteConflict):
        u.players.add_session(session, "third-" + p.id)
        u.commit()  # PostgreSQL: raised when the batch is sent


def test_a_players_sessions_most_recently_used_first_and_ended_one_by_one(
    uow: SqlUnitOfWorkFactory,
) -> None:
    """Issue #24: several live tokens; ending one leaves the others, and
    another player's session id ends nothing."""
    p, q = _with_player(uow), _with_player(uow)
    later = _session(p, r.T0 + timedelta(hours=1), "tablet")
    with uow() as u:
        u.players.add_session(later, "tablet-" + p.id)
        u.commit()
    with uow() as u:
        first = u.players.sessions_of(p.id)
        assert [s.label for s in first] == ["tablet", None]
        assert u.players.end_session(q.id, later.id) is None
        u.players.touch_sessions([first[1].id, "ended-or-never"], r.T0 + timedelta(hours=2))
        u.commit()
    with uow() as u:
        assert [s.id for s in u.players.sessions_of(p.id)] == [first[1].id, later.id]
        assert u.players.end_session(p.id, later.id) == "tablet-" + p.id
        u.commit()
    with uow() as u:
        assert [s.id for s in u.players.sessions_of(p.id)] == [first[1].id]
        assert u.players.by_token_hash("tablet-" + p.id) is None
        assert len(u.players.sessions_of(q.id)) == 1


def test_key_digest_finds_its_player_once(uow: SqlUnitOfWorkFactory) -> None:
    p, q = r.player(), r.player()
    with uow() as u:
        u.players.add(p, "digest-1")
        u.players.add(r.player())  # no key: many players have no digest
        u.players.add(r.player())
        u.commit()
    with uow() as u:
        assert u.players.by_key_digest("digest-1") == p
        assert u.players.by_key_digest("digest-2") is None
    with uow() as u, pytest.raises(WriteConflict):
        u.players.add(q, "digest-1")
        u.commit()  # PostgreSQL: raised when the batch is sent


def test_an_identity_finds_its_player_and_ties_to_one_only(uow: SqlUnitOfWorkFactory) -> None:
    """Issue #24: ``iss`` + ``sub`` name one player; a subject is unique
    only at its issuer."""
    p, q = _with_player(uow), _with_player(uow)
    sub = "sub-" + p.id  # the session's database is shared: subjects of this test
    with uow() as u:
        u.players.add_identity(p.id, "https://a/", sub, r.T0)
        u.players.add_identity(q.id, "https://b/", sub, r.T0)
        u.commit()
    with uow() as u:
        assert u.players.by_identity("https://a/", sub) == p
        assert u.players.by_identity("https://b/", sub) == q
        assert u.players.by_identity("https://c/", sub) is None
    with uow() as u, pytest.raises(WriteConflict):
        u.players.add_identity(q.id, "https://a/", sub, r.T0)
        u.commit()  # PostgreSQL: raised when the batch is sent


def test_a_token_hash_is_replaced_only_from_the_current_one(uow: SqlUnitOfWorkFactory) -> None:
    p = _with_player(uow)
    with uow() as u:
        assert not u.players.replace_token_hash(p.id, "stale", "new")
        assert not u.players.replace_token_hash("nobody", "hash-" + p.id, "new")
        assert u.players.replace_token_hash(p.id, "hash-" + p.id, "new")
        u.commit()
    with uow() as u:
        found = u.players.by_token_hash("new")
        assert found is not None and found[0] == p and found[2] == "new"
        assert u.players.by_token_hash("hash-" + p.id) is None


def test_live_token_hashes_are_those_a_player_holds(uow: SqlUnitOfWorkFactory) -> None:
    """What an instance checks when it may have missed a revocation (0053)."""
    p = _with_player(uow)
    with uow() as u:
        assert u.players.live_token_hashes([]) == set()
        asked = ["hash-" + p.id, "stale"]
        assert u.players.live_token_hashes(asked) == {"hash-" + p.id}
        (session,) = u.players.sessions_of(p.id)
        assert u.players.end_session(p.id, session.id) == "hash-" + p.id
        u.commit()
    with uow() as u:
        assert u.players.live_token_hashes(["hash-" + p.id]) == set()


def test_expired_idempotency_records_are_deleted_a_batch_at_a_time(
    uow: SqlUnitOfWorkFactory,
) -> None:
    p = _with_player(uow)
    due = r.T0 + timedelta(hours=1)
    with uow() as u:
        for i in range(5):
            u.idempotency.put(r.idempotency(p.id, f"k{i}", due))
        u.commit()
    with uow() as u:
        assert [u.idempotency.delete_expired(due, 2) for _ in range(4)] == [2, 2, 1, 0]
        u.commit()


def test_expired_idempotency_records_are_deleted_and_only_they(
    uow: SqlUnitOfWorkFactory,
) -> None:
    p = _with_player(uow)
    soon, later = r.T0 + timedelta(hours=1), r.T0 + timedelta(days=7)
    with uow() as u:
        u.idempotency.put(r.idempotency(p.id, "soon", soon))
        u.idempotency.put(r.idempotency(p.id, "later", later))
        u.commit()
    with uow() as u:
        assert u.idempotency.delete_expired(soon - timedelta(seconds=1), 10) == 0
        assert u.idempotency.delete_expired(soon, 10) == 1
        u.commit()
    with uow() as u:
        assert u.idempotency.get(p.id, "soon") is None
        assert u.idempotency.get(p.id, "later") == r.idempotency(p.id, "later", later)
        u.idempotency.discard(p.id, "later")
        u.idempotency.put(r.idempotency(p.id, "later", later + timedelta(days=1)))
        u.commit()
    with uow() as u:
        got = u.idempotency.get(p.id, "later")
        assert got is not None and got.expires_at == later + timedelta(days=1)


@pytest.mark.parametrize("build", [r.lobby_game, r.started_game], ids=["lobby", "started"])
def test_game_round_trip(uow: SqlUnitOfWorkFactory, build: object) -> None:
    host = _with_player(uow)
    game: GameRecord = build(host.id)  # type: ignore[operator]
    _store_game(uow, game)
    with uow() as u:
        got = u.games.get(game.id)
        assert got == game
        assert got is not None and got.created_at.tzinfo is UTC
        assert u.games.get("no-such-game") is None


def test_save_stores_every_change(uow: SqlUnitOfWorkFactory) -> None:
    host = _with_player(uow)
    game = r.lobby_game(host.id)
    _store_game(uow, game)
    started = r.started_game(host.id)
    game.status, game.state, game.seats = GameStatus.RUNNING, started.state, started.seats
    game.version, game.last_seq = 4, 9
    game.updated_at = datetime(2027, 1, 1, tzinfo=UTC)
    with uow() as u:
        u.games.save(game, expected_version=3)
        u.commit()
    with uow() as u:
        assert u.games.get(game.id) == game


def test_save_leaves_the_creation_settings_alone(uow: SqlUnitOfWorkFactory) -> None:
    """Host, seat count, options, seed and Rat choice never change after
    creation, so a move's UPDATE does not write them."""
    host = _with_player(uow)
    game = r.lobby_game(host.id)
    _store_game(uow, game)
    changed = game.clone()
    changed.seed, changed.rat_choice, changed.version = "other", 2, 4
    with uow() as u:
        u.games.save(changed, expected_version=3)
        u.commit()
    with uow() as u:
        stored = u.games.get(game.id)
    assert stored is not None and stored.version == 4
    assert (stored.seed, stored.rat_choice) == (game.seed, game.rat_choice)


def test_save_on_a_stale_version_conflicts(uow: SqlUnitOfWorkFactory) -> None:
    host = _with_player(uow)
    game = r.lobby_game(host.id)
    _store_game(uow, game)
    game.version += 1
    with uow() as u:
        u.games.save(game, expected_version=3)
        u.commit()
    game.version += 1
    with uow() as u, pytest.raises(WriteConflict):
        u.games.save(game, expected_version=3)
        u.commit()  # PostgreSQL: raised when the batch is sent
    with uow() as u, pytest.raises(WriteConflict):
        u.games.save(r.lobby_game(host.id), expected_version=3)  # never added
        u.commit()  # PostgreSQL: raised when the batch is sent


def test_duplicate_game_id_conflicts(uow: SqlUnitOfWorkFactory) -> None:
    host = _with_player(uow)
    game = r.lobby_game(host.id)
    _store_game(uow, game)
    with uow() as u, pytest.raises(WriteConflict):
        u.games.add(game)
        u.commit()  # PostgreSQL: raised when the batch is sent


def test_corrupt_state_is_refused_whole(uow: SqlUnitOfWorkFactory) -> None:
    host = _with_player(uow)
    game = r.started_game(host.id)
    _store_game(uow, game)
    assert game.state is not None
    broken = encode(game.state) | {"rat": 99}
    with uow.engine.begin() as conn:
        conn.execute(sa.update(games).where(games.c.id == game.id).values(state=broken))
    with uow() as u, pytest.raises(CorruptRow, match=game.id):
        u.games.get(game.id)


def test_naive_datetimes_are_refused(uow: SqlUnitOfWorkFactory) -> None:
    with uow() as u, pytest.raises(ValueError, match="naive"):
        u.players.add(Player(r.new_id(), "n", datetime(2026, 1, 1)))


def test_event_round_trip(uow: SqlUnitOfWorkFactory) -> None:
    """Each audience reads back its own projection of each event, with the
    cause (R11): seats 0 and 3 read the message, seats 1 and 2 the card."""
    host = _with_player(uow)
    game = r.lobby_game(host.id)
    _store_game(uow, game)
    events = [r.event(game.id, seq, r.T0.astimezone(r.PLUS_TWO)) for seq in (1, 2, 3)]
    with uow() as u:
        u.events.append(events)
        u.events.append([])
        u.commit()
    with uow() as u:
        for seat in (None, 0, 1, 2, 3):
            read = u.events.read(game.id, 0, 10, seat, causes=True)
            assert read == [r.as_seen(e, seat) for e in events]
            assert u.events.read(game.id, 0, 10, seat) == [
                replace(r.as_seen(e, seat), cause=None) for e in events
            ]  # causes are read only when asked for (replays), never for a client
        message = u.events.read(game.id, 1, 1, 3)[0].event
        assert isinstance(message, MessageSent) and message.text == "Muffin ✨ «é» 猫"
        hidden = u.events.read(game.id, 1, 1, 1)[0].event
        assert isinstance(hidden, MessageSent) and hidden.text is None
        gift = u.events.read(game.id, 0, 1, None, causes=True)[0]
        assert isinstance(gift.event, CardGiven) and gift.event.card is None
        assert gift.cause == SeatCommand(1, PlayCard(Card("stinky-7")))
        assert gift.at.tzinfo is UTC


def test_duplicate_seq_conflicts(uow: SqlUnitOfWorkFactory) -> None:
    host = _with_player(uow)
    game = r.lobby_game(host.id)
    _store_game(uow, game)
    with uow() as u:
        u.events.append([r.event(game.id, 1), r.event(game.id, 2)])
        u.commit()
    with uow() as u, pytest.raises(WriteConflict):
        u.events.append([r.event(game.id, 3), r.event(game.id, 2)])
        u.commit()  # PostgreSQL: raised when the batch is sent
    with uow() as u, pytest.raises(WriteConflict):
        u.events.append([r.event(game.id, 3), r.event(game.id, 3)])
        u.commit()  # PostgreSQL: raised when the batch is sent
    with uow() as u:
        assert [e.seq for e in u.events.read(game.id, 0, 10, None)] == [1, 2]


def test_idempotency_round_trip_and_duplicate(uow: SqlUnitOfWorkFactory) -> None:
    p = _with_player(uow)
    rec = r.idempotency(p.id)
    with uow() as u:
        u.idempotency.put(rec)
        u.commit()
    with uow() as u:
        assert u.idempotency.get(p.id, rec.key) == rec
        assert u.idempotency.get(p.id, "other") is None
    with uow() as u, pytest.raises(WriteConflict):
        u.idempotency.put(r.idempotency(p.id, rec.key))
        u.commit()  # PostgreSQL: raised when the batch is sent


def test_a_kept_refusal_round_trips(uow: SqlUnitOfWorkFactory) -> None:
    """Decision 0042: a refusal is kept under its key like any first result."""
    p = _with_player(uow)
    rec = replace(r.idempotency(p.id), result=Refused(ErrorCode.NOT_YOUR_TURN, "it is seat 2's"))
    with uow() as u:
        u.idempotency.put(rec)
        u.commit()
    with uow() as u:
        assert u.idempotency.get(p.id, rec.key) == rec
    unknown = {"refusal": {"code": "NO_SUCH_CODE", "message": "m"}}
    with uow.engine.begin() as conn:
        conn.execute(sa.update(idempotency_keys).values(result=unknown))
    with uow() as u, pytest.raises(CorruptRow, match="idempotency_keys"):
        u.idempotency.get(p.id, rec.key)


def test_booster_round_trip(uow: SqlUnitOfWorkFactory) -> None:
    p, other = _with_player(uow), _with_player(uow)
    game = r.lobby_game(p.id)
    _store_game(uow, game)
    first = r.booster(p.id, None, r.T0)
    second = r.booster(p.id, game.id, r.T0.replace(hour=13))
    with uow() as u:
        u.boosters.add(second)
        u.boosters.add(first)
        u.boosters.add(r.booster(other.id))
        u.commit()
    with uow() as u:
        assert u.boosters.of_player(p.id) == [first, second]
        assert u.boosters.of_player("nobody") == []


def test_a_collection_is_read_a_page_at_a_time(uow: SqlUnitOfWorkFactory) -> None:
    """Issue #22: the page after a cursor, oldest first; packs opened at the
    same time are ordered by id; the total counts every pack."""
    p, other = _with_player(uow), _with_player(uow)
    times = [r.T0, r.T0, r.T0.replace(hour=13), r.T0.replace(hour=14), r.T0.replace(hour=15)]
    packs = [r.booster(p.id, None, at) for at in times]
    with uow() as u:
        for pack in reversed(packs):
            u.boosters.add(pack)
        u.boosters.add(r.booster(other.id))
        u.commit()
    order = sorted(packs, key=lambda b: (b.opened_at, b.id))
    with uow() as u:
        first = u.boosters.page_of_player(p.id, None, 2)
        assert (first.items, first.has_next, first.total) == (order[:2], True, 5)
        last = first.items[-1]
        second = u.boosters.page_of_player(p.id, (last.opened_at, last.id), 2)
        assert (second.items, second.has_next) == (order[2:4], True)
        last = second.items[-1]
        third = u.boosters.page_of_player(p.id, (last.opened_at, last.id), 2)
        assert (third.items, third.has_next, third.total) == (order[4:], False, 5)
        assert u.boosters.page_of_player("nobody", None, 2).total == 0


# ---------------------------------------------------------------- the old shape
# Rows of a 3-seat Singleton game as the code before the typed events wrote
# them (tests/golden/singleton-3-seats.jsonl): each audience's JSON, private
# projections under string seat keys, and the cause as a plain dict.
_STARTED = {
    "handSizes": [10, 10, 10],
    "options": {"abilityTrigger": "lead_and_rare", "format": "singleton", "refillHands": True},
    "prizePoolSize": 20,
    "rat": 0,
    "ratDeckSize": 194,
    "seats": [
        {"house": None, "rat": True, "seat": 0},
        {"house": "curious", "rat": False, "seat": 1},
        {"house": "crazy", "rat": False, "seat": 2},
    ],
}
_HANDS = [
    "crazy-7 crazy-26 stinky-5 stinky-29 stinky-32 sleepy-14 hungry-14 needy-10 needy-30 sassy-1",
    "crazy-12 crazy-15 stinky-24 sleepy-7 sleepy-22 sleepy-31 hungry-8 hungry-17 curious-11 "
    "curious-12",
    "crazy-6 crazy-20 stinky-4 stinky-9 sleepy-10 hungry-10 curious-17 curious-22 curious-28 "
    "sassy-6",
]
_TEXT = "#1 trick 1: seat 0 to seat 2, héllo"
_MESSAGE = {"from": 0, "id": "m1", "status": "pending", "to": 2, "trick": 1}
_GIFT = {"from": 0, "reason": "stinky", "to": 1}
_FACE_DOWN = {"faceDown": True, "lead": False, "seat": 0, "trick": 5}
_TRICK_WON = {
    "passes": [],
    "plays": [
        {"card": "stinky-32", "seat": 0, "second": None, "value": 32},
        {"card": "stinky-5", "seat": 1, "second": None, "value": 5},
        {"card": "stinky-4", "seat": 2, "second": None, "value": 4},
    ],
    "prize": "curious-prize-1",
    "scores": [3, 0, 0],
    "trick": 1,
    "winner": 0,
}
OLD_ROWS: list[dict[str, Any]] = [
    {
        "type": "GameStarted",
        "public": _STARTED,
        "private": {str(s): _STARTED | {"hand": _HANDS[s].split()} for s in range(3)},
        "cause": {"start": {"collections": None}},
    },
    {
        "type": "TrickStarted",
        "public": {
            "leader": 0,
            "prize": "curious-prize-1",
            "prizePoolSize": 20,
            "trick": 1,
            "trump": "curious",
        },
        "private": {},
        "cause": None,
    },
    {
        "type": "MessageSent",
        "public": _MESSAGE,
        "private": {"0": _MESSAGE | {"text": _TEXT}},
        "cause": {"seat": 0, "command": {"kind": "SendMessage", "to": 2, "text": _TEXT}},
    },
    {
        "type": "CardGiven",
        "public": _GIFT,
        "private": {"0": _GIFT | {"card": "stinky-5"}, "1": _GIFT | {"card": "stinky-5"}},
        "cause": {
            "seat": 0,
            "command": {
                "kind": "GiveCards",
                "gifts": [{"to": 1, "card": "stinky-5"}, {"to": 2, "card": "sassy-1"}],
            },
        },
    },
    {"type": "TrickWon", "public": _TRICK_WON, "private": {}, "cause": None},
    {
        "type": "CardPlayed",
        "public": _FACE_DOWN | {"card": None},
        "private": {"0": _FACE_DOWN | {"card": "sleepy-19"}},
        "cause": {"seat": 0, "command": {"kind": "PlayCard", "card": "sleepy-19"}},
    },
    {
        "type": "TopReordered",
        "public": {"count": 3, "seat": 0},
        "private": {"0": {"cards": ["stinky-20", "sleepy-4", "hungry-19"], "count": 3, "seat": 0}},
        "cause": {
            "seat": 0,
            "command": {"kind": "ReorderTop", "cards": ["stinky-20", "sleepy-4", "hungry-19"]},
        },
    },
]


KEYS_0008 = importlib.import_module("infra.db.migrations.versions.0008_event_keys_as_named")


def _insert_old_rows(uow: SqlUnitOfWorkFactory, game_id: str, rows: list[dict[str, Any]]) -> None:
    """Written straight into the table, as the old code's mapper wrote them."""
    stored = [
        row | {"game_id": game_id, "seq": seq, "created_at": r.T0}
        for seq, row in enumerate(rows, start=1)
    ]
    with uow.engine.begin() as conn:
        conn.execute(sa.insert(game_events), stored)


def _seen(row: dict[str, Any], seat: int | None) -> dict[str, Any]:
    """The JSON an audience saw of an old row."""
    seen: dict[str, Any] = row["public"] if seat is None else row["private"].get(str(seat))
    return row["public"] if seen is None else seen


def test_stored_logs_of_the_old_shape_still_load(uow: SqlUnitOfWorkFactory) -> None:
    host = _with_player(uow)
    game = r.lobby_game(host.id)
    _store_game(uow, game)
    _insert_old_rows(uow, game.id, OLD_ROWS)
    with uow() as u:
        logs = {seat: u.events.read(game.id, 0, 100, seat, causes=True) for seat in (None, 0, 1, 2)}
    for seat, log in logs.items():
        assert [(e.seq, e.type) for e in log] == [
            (i, row["type"]) for i, row in enumerate(OLD_ROWS, start=1)
        ]
        for e, row in zip(log, OLD_ROWS, strict=True):
            # read as written then, written back with the keys of now (0008)
            now = KEYS_0008.event_data(row["type"], _seen(row, seat))
            assert codec.event_to_json(e.event) == now, (seat, e.seq)
            assert e.at == r.T0 and e.game_id == game.id
    # typed: the causes, and what each audience may see
    public, rat, one = logs[None], logs[0], logs[1]
    assert [e.cause for e in public] == [
        GameStart(None),
        None,
        SeatCommand(0, SendMessage(2, _TEXT)),
        SeatCommand(0, GiveCards((Gift(1, Card("stinky-5")), Gift(2, Card("sassy-1"))))),
        None,
        SeatCommand(0, PlayCard(Card("sleepy-19"))),
        SeatCommand(0, ReorderTop((Card("stinky-20"), Card("sleepy-4"), Card("hungry-19")))),
    ]
    assert [e.cause for e in rat] == [e.cause for e in public]
    started = one[0].event
    assert isinstance(started, GameStarted) and started.hand == tuple(map(Card, _HANDS[1].split()))
    assert started.seats[1] == DealtSeat(1, House.CURIOUS, False) and started.rat_seat == 0
    assert isinstance(public[0].event, GameStarted) and public[0].event.hand is None
    assert public[2].event == MessageSent("m1", 1, 0, 2, MessageStatus.PENDING)
    assert rat[2].event == MessageSent("m1", 1, 0, 2, MessageStatus.PENDING, _TEXT)
    assert one[3].event == CardGiven(0, 1, House.STINKY, Card("stinky-5"))
    assert logs[2][3].event == CardGiven(0, 1, House.STINKY)
    won = public[4].event
    assert isinstance(won, TrickWon) and won.plays[1] == WonPlay(1, Card("stinky-5"), None, 5)
    assert rat[5].event == CardPlayed(0, 5, False, Card("sleepy-19"), True)
    assert one[5].event == CardPlayed(0, 5, False, None, True)


def _golden_rows(
    path: Path,
) -> tuple[int, list[dict[str, Any]], tuple[tuple[Card, ...], ...] | None]:
    """A golden playthrough's log as the old code stored it: each change's
    events, the start's cause with the collections (R3.3) as it was written."""
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    header, changes = lines[0], lines[1:]
    collections = header["collections"]
    rows = []
    for change in changes:
        for i, e in enumerate(change["events"]):
            started = e["type"] == "GameStarted"
            cause = {"start": {"collections": collections}} if started else None
            rows.append({"type": e["type"], "public": e["public"], "private": e["private"]})
            rows[-1]["cause"] = cause if i == 0 else None
    typed = None if collections is None else tuple(tuple(map(Card, c)) for c in collections)
    return header["seats"], rows, typed


@pytest.mark.parametrize("path", GOLDEN, ids=[p.stem for p in GOLDEN])
def test_the_golden_logs_of_the_old_shape_load_for_every_audience(
    uow: SqlUnitOfWorkFactory, path: Path
) -> None:
    seats, rows, collections = _golden_rows(path)
    host = _with_player(uow)
    game = r.lobby_game(host.id)
    _store_game(uow, game)
    _insert_old_rows(uow, game.id, rows)
    with uow() as u:
        for seat in (None, *range(seats)):
            log = u.events.read(game.id, 0, len(rows) + 1, seat, causes=True)
            assert len(log) == len(rows)
            for e, row in zip(log, rows, strict=True):
                assert e.type == row["type"]
                # read as written then, written back with the keys of now (0008)
            now = KEYS_0008.event_data(row["type"], _seen(row, seat))
            assert codec.event_to_json(e.event) == now, (seat, e.seq)
            starts = [e.cause for e in log if e.cause is not None]
            assert starts == [GameStart(collections)]
