"""Repository contract: what is written is read back equal, on every backend."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
import sqlalchemy as sa

from domain.ports import WriteConflict
from domain.records import GameRecord, GameStatus, Player
from infra.db.mappers import CorruptRow
from infra.db.state_codec import encode
from infra.db.tables import games
from infra.db.uow import SqlUnitOfWorkFactory
from tests.integration import records as r


def _with_player(uow: SqlUnitOfWorkFactory) -> Player:
    p = r.player()
    with uow() as u:
        u.players.add(p, "hash-" + p.id)
        u.commit()
    return p


def _store_game(uow: SqlUnitOfWorkFactory, game: GameRecord) -> None:
    with uow() as u:
        u.games.add(game)
        u.commit()


def test_player_round_trip(uow: SqlUnitOfWorkFactory) -> None:
    p = r.player(r.T0.astimezone(r.PLUS_TWO))
    with uow() as u:
        u.players.add(p, "token-hash")
        u.commit()
    with uow() as u:
        got = u.players.get(p.id)
        assert got == p
        assert got is not None and got.created_at.tzinfo is UTC
        assert u.players.by_token_hash("token-hash") == (p, "token-hash")
        assert u.players.by_token_hash("other") is None
        assert u.players.get("nobody") is None


def test_duplicate_player_id_or_token_hash_conflicts(uow: SqlUnitOfWorkFactory) -> None:
    p = _with_player(uow)
    for clash in (Player(p.id, "x", r.T0), r.player()):
        with uow() as u, pytest.raises(WriteConflict):
            u.players.add(clash, "hash-" + p.id)


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
    with uow() as u, pytest.raises(WriteConflict):
        u.games.save(r.lobby_game(host.id), expected_version=3)  # never added


def test_duplicate_game_id_conflicts(uow: SqlUnitOfWorkFactory) -> None:
    host = _with_player(uow)
    game = r.lobby_game(host.id)
    _store_game(uow, game)
    with uow() as u, pytest.raises(WriteConflict):
        u.games.add(game)


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
        u.players.add(Player(r.new_id(), "n", datetime(2026, 1, 1)), "h")


def test_event_round_trip(uow: SqlUnitOfWorkFactory) -> None:
    host = _with_player(uow)
    game = r.lobby_game(host.id)
    _store_game(uow, game)
    events = [r.event(game.id, seq, r.T0.astimezone(r.PLUS_TWO)) for seq in (1, 2, 3)]
    with uow() as u:
        u.events.append(events)
        u.events.append([])
        u.commit()
    with uow() as u:
        assert u.events.read(game.id, 0, 10) == events
        assert u.events.read(game.id, 0, 10)[0].private[3] == {"hand": []}


def test_duplicate_seq_conflicts(uow: SqlUnitOfWorkFactory) -> None:
    host = _with_player(uow)
    game = r.lobby_game(host.id)
    _store_game(uow, game)
    with uow() as u:
        u.events.append([r.event(game.id, 1), r.event(game.id, 2)])
        u.commit()
    with uow() as u, pytest.raises(WriteConflict):
        u.events.append([r.event(game.id, 3), r.event(game.id, 2)])
    with uow() as u, pytest.raises(WriteConflict):
        u.events.append([r.event(game.id, 3), r.event(game.id, 3)])
    with uow() as u:
        assert [e.seq for e in u.events.read(game.id, 0, 10)] == [1, 2]


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
