"""Reading back in order: game pages (newest first, cursor) and event ranges."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
import sqlalchemy as sa

from domain.records import GameRecord, GameStatus, GameSummary, Visibility
from infra.db.mappers import CorruptRow
from infra.db.uow import SqlUnitOfWorkFactory
from tests.integration import records as r


@pytest.fixture
def seven_games(uow: SqlUnitOfWorkFactory) -> list[GameRecord]:
    """Newest first; two pairs share a ``created_at`` (ties broken by id)."""
    host = r.player()
    offsets = [0, 1, 1, 2, 3, 3, 4]
    statuses = [GameStatus.LOBBY, GameStatus.RUNNING, GameStatus.FINISHED]
    games = [
        r.lobby_game(host.id, r.T0 + timedelta(minutes=m), status=statuses[i % 3])
        for i, m in enumerate(offsets)
    ]
    with uow() as u:
        u.players.add(host)
        for g in games:
            u.games.add(g)
        u.commit()
    return sorted(games, key=lambda g: (g.created_at, g.id), reverse=True)


def _listed(games: list[GameRecord]) -> list[GameSummary]:
    """What the listing shows of ``games``."""
    return [GameSummary.of(g) for g in games]


def _walk(
    uow: SqlUnitOfWorkFactory, status: GameStatus | None, limit: int
) -> tuple[list[GameSummary], list[bool]]:
    items: list[GameSummary] = []
    flags: list[bool] = []
    cursor = None
    with uow() as u:
        while True:
            page = u.games.page(status, cursor, limit)
            items += page.items
            flags.append(page.has_next)
            if not page.has_next:
                return items, flags
            last = page.items[-1]
            cursor = (last.created_at, last.id)


def test_pages_are_newest_first_and_cursor_is_strictly_before(
    uow: SqlUnitOfWorkFactory, seven_games: list[GameRecord]
) -> None:
    with uow() as u:
        first = u.games.page(None, None, 3)
        assert first.items == _listed(seven_games[:3]) and first.has_next
        g = seven_games[2]
        after = u.games.page(None, (g.created_at, g.id), 100)
        assert after.items == _listed(seven_games[3:]) and not after.has_next
        # A cursor in another time zone means the same instant.
        tz_cursor = (g.created_at.astimezone(r.PLUS_TWO), g.id)
        assert u.games.page(None, tz_cursor, 100).items == _listed(seven_games[3:])
        exact = u.games.page(None, None, 7)
        assert exact.items == _listed(seven_games) and not exact.has_next
    items, flags = _walk(uow, None, 2)
    assert items == _listed(seven_games)
    assert flags == [True, True, True, False]


@pytest.mark.parametrize("status", list(GameStatus))
def test_status_filter(
    uow: SqlUnitOfWorkFactory, seven_games: list[GameRecord], status: GameStatus
) -> None:
    items, _ = _walk(uow, status, 1)
    assert items == _listed([g for g in seven_games if g.status is status])


def test_empty_and_zero_limit_pages(
    uow: SqlUnitOfWorkFactory, seven_games: list[GameRecord]
) -> None:
    oldest = seven_games[-1]
    with uow() as u:
        assert u.games.page(None, None, 0).items == []
        assert u.games.page(None, None, 0).has_next
        end = u.games.page(None, (oldest.created_at, oldest.id), 5)
        assert end.items == [] and not end.has_next
        with pytest.raises(ValueError):
            u.games.page(None, None, -1)


def test_event_reads_are_ranged_and_ordered(uow: SqlUnitOfWorkFactory) -> None:
    host = r.player()
    a, b = r.lobby_game(host.id), r.lobby_game(host.id)
    with uow() as u:
        u.players.add(host)
        u.games.add(a)
        u.games.add(b)
        u.events.append([r.event(a.id, s) for s in (3, 1, 2)])
        u.events.append([r.event(b.id, s) for s in range(1, 12)])
        u.events.append([r.event(a.id, s) for s in range(4, 11)])
        u.commit()
    with uow() as u:
        assert [e.seq for e in u.events.read(a.id, 0, 100, None)] == list(range(1, 11))
        assert [e.seq for e in u.events.read(a.id, 4, 3, None)] == [5, 6, 7]
        assert [e.seq for e in u.events.read(a.id, 9, 3, None)] == [10]
        assert u.events.read(a.id, 10, 3, None) == []
        assert u.events.read(a.id, 0, 0, None) == []
        assert u.events.read("nope", 0, 5, None) == []
        assert {e.game_id for e in u.events.read(b.id, 0, 100, None)} == {b.id}


def test_stalled_bot_games_are_found_by_bot_turn_and_age(uow: SqlUnitOfWorkFactory) -> None:
    """Running games where a bot must act and nothing moved since ``before``."""
    from dataclasses import replace

    from domain.bots.strategy import Strategy
    from domain.game.setup import new_game
    from domain.records import Occupant

    host = r.player()
    bots: list[Occupant | None] = [Occupant(bot=Strategy.RANDOM)] * 4
    people: list[Occupant | None] = [Occupant(player_id=host.id)] * 4
    state = new_game(4, "stall", rat=0).state  # seat 0 leads trick 1

    def running(minute: int, seats: list[Occupant | None]) -> GameRecord:
        base = r.lobby_game(host.id, r.T0)
        at = r.T0 + timedelta(minutes=minute)
        return replace(
            base,
            id=f"g{minute}",
            seats=seats,
            status=GameStatus.RUNNING,
            state=state,
            updated_at=at,
        )

    old_bots, new_bots, old_people = running(1, bots), running(9, bots), running(2, people)
    with uow() as u:
        u.players.add(host)
        for g in (old_bots, new_bots, old_people):
            u.games.add(g)
        u.commit()
    with uow() as u:
        assert u.games.stalled_bot_games(r.T0 + timedelta(minutes=5), 10) == [old_bots.id]
        assert u.games.stalled_bot_games(r.T0 + timedelta(minutes=10), 1) == [old_bots.id]
        assert u.games.stalled_bot_games(r.T0, 10) == []


def test_the_listing_never_reads_a_state(
    uow: SqlUnitOfWorkFactory, seven_games: list[GameRecord]
) -> None:
    """A game whose stored state is garbage still lists (the listing shows no
    state, so it reads none): one bad row cannot take the lobby down."""
    bad = seven_games[1]
    with uow.engine.begin() as conn:
        garbage = {"s": '"not a state"', "id": bad.id}  # JSON, as PostgreSQL's json type wants
        conn.execute(sa.text("UPDATE games SET state = :s WHERE id = :id"), garbage)
    with uow() as u, pytest.raises(CorruptRow):
        u.games.get(bad.id)  # the state is garbage indeed
    items, _ = _walk(uow, None, 3)
    assert items == _listed(seven_games)


def test_live_games_are_the_running_public_ones_newest_first_with_their_people(
    uow: SqlUnitOfWorkFactory, seven_games: list[GameRecord]
) -> None:
    """Featured games' candidates (domain/featured.py, 0067): a private or
    unlisted running game is never among them; people are seats not bots."""
    host = seven_games[0].host
    hidden = [
        replace(
            r.lobby_game(host, r.T0 + timedelta(hours=1), status=GameStatus.RUNNING), visibility=v
        )
        for v in (Visibility.PRIVATE, Visibility.UNLISTED)
    ]
    with uow() as u:
        for g in hidden:
            u.games.add(g)
        u.commit()
    running = [g for g in seven_games if g.status is GameStatus.RUNNING]
    assert len(running) == 2
    with uow() as u:
        live = u.games.live(10)
        assert [x.summary for x in live] == _listed(running)
        assert [(x.people, x.changed_at) for x in live] == [(1, g.updated_at) for g in running]
        assert [x.summary.id for x in u.games.live(1)] == [running[0].id]


def test_one_read_gives_every_audience_what_its_own_read_gives(uow: SqlUnitOfWorkFactory) -> None:
    """``read_audiences`` (a replay, an export: 0067) decodes each row once
    for all audiences: each seat's projection equals its own ``read``, the
    public one the spectators', causes only when asked for."""
    host = r.player()
    game = r.lobby_game(host.id)
    with uow() as u:
        u.players.add(host)
        u.games.add(game)
        u.events.append([r.event(game.id, s) for s in range(1, 9)])
        u.commit()
    with uow() as u:
        for causes in (False, True):
            got = u.events.read_audiences(game.id, 2, 4, 4, causes=causes)
            public = u.events.read(game.id, 2, 4, None, causes=causes)
            seats = [u.events.read(game.id, 2, 4, s) for s in range(4)]
            assert [(e.seq, e.at, e.public, e.cause) for e in got] == [
                (e.seq, e.at, e.event, e.cause) for e in public
            ]
            assert [e.seats for e in got] == [tuple(s[i].event for s in seats) for i in range(4)]
        assert any(e.seats[3] != e.public for e in got) and any(e.cause for e in got)
        assert u.events.read_audiences(game.id, 8, 5, 4) == []
