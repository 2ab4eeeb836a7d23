"""A player's own games and record (issue #24), on the fakes: the order
(waiting for you first, by deadline; then by last change), the filters, the
pages, the outcome of a finished game (R9.2), the stats."""

from __future__ import annotations

import pytest

from domain.errors import DomainError, ErrorCode
from domain.game.state import Outcome, Termination
from domain.my_games import entries_of, places, rank_of
from domain.services.my_games import my_games
from tests.fakes import Harness
from tests.my_games_scenario import build, check


async def test_a_players_games_waiting_first_then_by_last_change(h: Harness) -> None:
    built = await build(h.deps)
    await check(h.deps, built)
    done = h.store.games[built.done]
    assert done.state is not None and (outcome := done.state.outcome) is not None
    (entry,) = [e for e in entries_of(done) if e.player_id == built.ann]
    assert entry.score == outcome.scores[entry.seat]
    assert entry.won == (entry.seat in outcome.winners)
    assert entry.place == places(outcome)[entry.seat]


@pytest.mark.parametrize("limit", [0, 101])
async def test_a_page_out_of_bounds_is_refused(h: Harness, limit: int) -> None:
    with pytest.raises(DomainError) as e:
        await my_games(h.deps, "p", None, None, None, limit)
    assert e.value.code is ErrorCode.BAD_INPUT


def test_places_share_ties_and_put_a_house_with_all_houses_last() -> None:
    """R9.2: equal best scores share the win (place 1), the next place
    counts the seats before it; a house player with all 7 houses is out of
    the ranking (last); the Rat with all houses wins outright."""
    tie = Outcome(Termination.PRIZE_POOL_EMPTY, (0, 2), (), (30, 10, 30, 20))
    assert places(tie) == [1, 4, 1, 3]
    out = Outcome(Termination.HOUSE_PLAYER_ALL_HOUSES, (2,), (1,), (5, 90, 40))
    assert places(out) == [2, 3, 1]
    rat = Outcome(Termination.RAT_ALL_HOUSES, (0,), (), (1, 50, 50))
    assert places(rat) == [1, 2, 2]


def test_the_rank_puts_your_turn_first_by_deadline_then_the_rest_newest_first() -> None:
    from datetime import UTC, datetime, timedelta

    t = datetime(2026, 12, 6, tzinfo=UTC)
    soon, later = rank_of(True, t, t), rank_of(True, t + timedelta(hours=1), t)
    untimed = rank_of(True, None, t)
    newest, older = rank_of(False, None, t + timedelta(days=1)), rank_of(False, None, t)
    assert sorted([older, untimed, newest, later, soon]) == [soon, later, untimed, newest, older]


async def test_a_move_rewrites_the_entries_it_changes_only(h: Harness) -> None:
    """The seat that moved and the seat to move next change; a third seat's
    entry keeps its time and place in the list (its last change)."""
    from domain.clocks import fallback_moves
    from domain.game.engine import to_act
    from domain.services.play import act
    from domain.services.transaction import Request

    built = await build(h.deps)
    game = h.store.games[built.mine]
    assert game.state is not None
    before = dict(h.store.entries)
    mover = to_act(game.state)
    assert mover is not None
    o = game.seats[mover]
    assert o is not None and o.player_id is not None
    await act(
        h.deps, Request(o.player_id, "op", {}), built.mine, fallback_moves(game.state, mover)[0]
    )
    after = h.store.entries
    game = h.store.games[built.mine]
    assert game.state is not None
    moved = {o.player_id}
    assert len([k for k in after if k[1] == built.mine]) == 3  # ann, bob, cat
    nxt = to_act(game.state)
    if nxt is not None and (n := game.seats[nxt]) is not None and n.player_id:
        moved.add(n.player_id)
    for (player, gid), entry in after.items():
        if gid != built.mine:
            assert before[player, gid] == entry
        elif player in moved:
            assert entry.updated_at == game.updated_at
        else:
            assert entry == before[player, gid]
