"""Per-player caps (issue #22 part 7, docs/decisions/0051): lobby games
hosted at once, quick-play games waited in at once, booster packs a day.
Each refusal is coded, says how to get below the cap, and changes nothing;
two creations racing for the last place never both get it."""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import replace
from datetime import timedelta

import pytest

from domain.caps import Caps
from domain.errors import DomainError, ErrorCode, RateLimited
from domain.game.options import Format, GameOptions
from domain.records import GameStatus
from domain.rematch import RematchOffered
from domain.services.boosters import open_booster_pack
from domain.services.games import NewGame, create_game, join_game, leave_game, start_game
from domain.services.quick_play import quick_play
from domain.services.rematch import rematch
from domain.services.transaction import Change, Request, Tx
from tests.fakes import FakeUnitOfWork, Harness, harness
from tests.usecases.conftest import play_first_legal, player, req, started_game

CAPS = Caps(open_games=3, quick_play_waits=2, packs_per_day=4)


@pytest.fixture
def h() -> Harness:
    base = harness()
    return replace(base, deps=replace(base.deps, caps=CAPS))


async def _refused(code: ErrorCode, call: Awaitable[object]) -> DomainError:
    with pytest.raises(DomainError) as e:
        await call
    assert e.value.code is code, e.value.message
    return e.value


async def _lobby(h: Harness, host: str, **spec: object) -> str:
    return (await create_game(h.deps, req(host), NewGame(3, **spec))).game_id  # type: ignore[arg-type]


async def _quick(h: Harness, pid: str, seats: int = 3, fmt: Format = Format.SINGLETON) -> str:
    return (await quick_play(h.deps, req(pid, "quickPlay"), seats, fmt, None)).game_id


def _snapshot(h: Harness) -> tuple[object, ...]:
    """What a refusal must leave as it was."""
    games = {g.id: (g.status, g.version, list(g.seats)) for g in h.store.games.values()}
    return games, len(h.store.events), len(h.store.boosters)


async def test_a_host_keeps_at_most_the_cap_of_lobby_games_open(h: Harness) -> None:
    host = await player(h)
    games = [await _lobby(h, host) for _ in range(CAPS.open_games)]
    before = _snapshot(h)
    e = await _refused(ErrorCode.ILLEGAL_ACTION, _lobby(h, host))
    assert f"you host {CAPS.open_games} lobby games" in e.message and "leave" in e.message
    assert _snapshot(h) == before
    # another player is not held by it
    assert await _lobby(h, await player(h, "bob"))
    # the host's last person out closes a lobby (abandoned): room for one more
    await leave_game(h.deps, req(host), games[0])
    assert h.store.games[games[0]].status is GameStatus.ABANDONED
    await _lobby(h, host)
    await _refused(ErrorCode.ILLEGAL_ACTION, _lobby(h, host))


async def test_a_started_game_and_a_seatless_host_closing_a_lobby_make_room(h: Harness) -> None:
    host = await player(h)
    started = await _lobby(h, host)
    for pid in [await player(h, n) for n in ("bob", "cy")]:
        await join_game(h.deps, req(pid), started, None)
    await start_game(h.deps, req(host), started)
    seatless = await _lobby(h, host, take_seat=False)
    await _lobby(h, host)
    await _lobby(h, host)
    await _refused(ErrorCode.ILLEGAL_ACTION, _lobby(h, host))
    # a host seated nowhere closes a lobby nobody sits in with leaveGame
    closed = await leave_game(h.deps, req(host), seatless)
    assert [e.type for e in closed.events] == ["GameEnded"]
    assert h.store.games[seatless].status is GameStatus.ABANDONED
    await _lobby(h, host)


async def test_quick_play_games_count_as_waits_not_as_hosted_lobbies(h: Harness) -> None:
    ann, bob = await player(h, "ann"), await player(h, "bob")
    for _ in range(CAPS.open_games):
        await _lobby(h, ann)
    first = await _quick(h, ann, 3)  # hosts it, yet it is a wait, not a lobby of hers
    second = await _quick(h, ann, 4)
    assert h.store.games[first].host == ann
    # waiting in a game already: that game back, at the cap too
    assert await _quick(h, ann, 3) == first
    before = _snapshot(h)
    e = await _refused(ErrorCode.ILLEGAL_ACTION, _quick(h, ann, 5))
    assert f"you wait in {CAPS.quick_play_waits} quick-play games" in e.message
    assert _snapshot(h) == before
    # joinGame into someone's quick-play game by its id is a wait too
    theirs = await _quick(h, bob, 6)
    await _refused(ErrorCode.ILLEGAL_ACTION, join_game(h.deps, req(ann), theirs, None))
    assert h.store.games[theirs].seat_of(ann) is None
    # leaving one makes room (the last person out ends it)
    await leave_game(h.deps, req(ann), second)
    await join_game(h.deps, req(ann), theirs, None)


async def test_a_rematch_is_one_of_its_hosts_lobby_games(h: Harness) -> None:
    gid, ids = await started_game(h, people=3, seats=3)
    await play_first_legal(h, gid, dict(enumerate(ids)))
    asker = ids[1]
    for _ in range(CAPS.open_games):
        await _lobby(h, asker)
    before = _snapshot(h)
    await _refused(ErrorCode.ILLEGAL_ACTION, rematch(h.deps, req(asker), gid))
    assert _snapshot(h) == before and h.store.games[gid].rematch_id is None
    made = await rematch(h.deps, req(ids[2]), gid)  # another player has room
    assert any(isinstance(e.event, RematchOffered) for e in h.store.log(gid))
    # once made, the rematch is anyone's to get back, whatever they host
    again = await rematch(h.deps, req(asker), gid)
    assert again.game_id == made.game_id and not again.events


async def test_booster_packs_are_an_allowance_a_day(h: Harness) -> None:
    ann = await player(h)
    first = await open_booster_pack(h.deps, req(ann, "openBoosterPack"))
    h.clock.advance(timedelta(hours=1))
    for _ in range(CAPS.packs_per_day - 1):
        await open_booster_pack(h.deps, req(ann, "openBoosterPack"))
    before = _snapshot(h)
    e = await _refused(
        ErrorCode.RATE_LIMITED, open_booster_pack(h.deps, req(ann, "openBoosterPack"))
    )
    assert isinstance(e, RateLimited)
    # the oldest pack leaves the last 24 hours in about 23 hours
    assert 23 * 3600 - 5 <= e.retry_after <= 23 * 3600 + 1, e.retry_after
    assert _snapshot(h) == before
    assert await open_booster_pack(h.deps, req(await player(h, "bob"), "openBoosterPack"))
    h.clock.advance(first.opened_at + timedelta(days=1) - h.clock.now())
    await open_booster_pack(h.deps, req(ann, "openBoosterPack"))  # the first one's place
    await _refused(ErrorCode.RATE_LIMITED, open_booster_pack(h.deps, req(ann, "openBoosterPack")))


async def test_a_refused_pack_is_decided_anew_under_its_key(h: Harness) -> None:
    """RATE_LIMITED is not kept under an idempotency key (decision 0042):
    the same key once the allowance refilled opens the pack."""
    ann = await player(h)
    for _ in range(CAPS.packs_per_day):
        await open_booster_pack(h.deps, req(ann, "openBoosterPack"))
    keyed = Request(ann, "openBoosterPack", {}, "pack-key-0123456789")
    await _refused(ErrorCode.RATE_LIMITED, open_booster_pack(h.deps, keyed))
    h.clock.advance(timedelta(days=1))
    pack = await open_booster_pack(h.deps, keyed)
    assert await open_booster_pack(h.deps, keyed) == pack


async def test_the_packs_of_sealed_games_are_not_counted(h: Harness) -> None:
    _, ids = await started_game(h, people=3, seats=3, options=GameOptions(format=Format.SEALED))
    assert all(sum(r.player_id == p for r in h.store.boosters) == 1 for p in ids)
    for _ in range(CAPS.packs_per_day):
        await open_booster_pack(h.deps, req(ids[0], "openBoosterPack"))


async def test_a_cap_of_zero_is_no_cap() -> None:
    base = harness()
    h = replace(base, deps=replace(base.deps, caps=Caps(0, 0, 0)))
    ann = await player(h)
    for _ in range(12):
        await _lobby(h, ann)
        await open_booster_pack(h.deps, req(ann, "openBoosterPack"))
    for seats in range(3, 9):
        await _quick(h, ann, seats)
    assert not h.store.claims  # no claim, no count


async def test_two_creations_racing_for_the_last_place_never_both_get_it(h: Harness) -> None:
    """Another transaction (another instance) creates the host's last lobby
    game after this one counted and before it commits: this one's commit
    conflicts on the claimed player, runs again, counts anew and is refused."""
    host = await player(h)
    games = [await _lobby(h, host) for _ in range(CAPS.open_games - 1)]
    template = h.store.games[games[0]]

    def rival() -> None:
        h.store.fail_before_commit = None
        with FakeUnitOfWork(h.store) as uow:
            tx = Tx(h.deps, uow, None)
            tx.claim(host)
            game = replace(template.clone(), id="rival", version=0, last_seq=0)
            tx.record(game, Change([]))
            tx.commit()

    h.store.fail_before_commit = rival
    await _refused(ErrorCode.ILLEGAL_ACTION, _lobby(h, host))
    hosted = [g for g in h.store.games.values() if g.host == host]
    assert len(hosted) == CAPS.open_games and "rival" in h.store.games
