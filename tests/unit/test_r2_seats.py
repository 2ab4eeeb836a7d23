"""R2: seats, clockwise order, neighbours, one house per house player."""

from __future__ import annotations

import pytest

from domain.game.cards import RAT_CARD, Card, assignment_card
from domain.game.commands import PlayCard
from domain.game.engine import to_act
from domain.game.errors import BadInput
from domain.game.options import Format, GameOptions
from domain.game.setup import new_game
from domain.game.views import spectator_view
from tests.builders import make_state, run


@pytest.mark.parametrize("seats", [2, 9, 0])
def test_r2_1_fewer_than_3_or_more_than_8_seats_is_refused(seats: int) -> None:
    with pytest.raises(BadInput) as info:
        new_game(seats, seed=1)
    assert info.value.code == "BAD_INPUT"


@pytest.mark.parametrize("seats", range(3, 9))
def test_r2_1_one_rat_and_2_to_7_house_players(seats: int) -> None:
    state = new_game(seats, seed=seats).state
    assert state.n == seats
    assert sum(1 for s in state.seats if s.house is None) == 1
    assert state.seats[state.rat].house is None


def test_r2_2_neighbours_in_a_3_seat_game_are_the_two_others() -> None:
    state = new_game(3, seed=1).state
    assert set(state.neighbours(0)) == {1, 2}
    assert set(state.neighbours(1)) == {0, 2}
    assert set(state.neighbours(2)) == {0, 1}


def test_r2_2_neighbours_are_seat_before_and_after_wrapping_around() -> None:
    state = new_game(5, seed=1).state
    assert state.neighbours(0) == (4, 1)
    assert state.neighbours(2) == (1, 3)
    assert state.neighbours(4) == (3, 0)


def test_r2_2_play_goes_clockwise_from_the_leader_wrapping_around() -> None:
    state = make_state(
        [["crazy-1"], ["crazy-2"], ["crazy-3"], ["crazy-4"]], rat=2, prize="sassy-prize-1"
    )
    assert to_act(state) == 2
    run(state, (2, PlayCard(Card("crazy-3"))))
    assert to_act(state) == 3
    run(state, (3, PlayCard(Card("crazy-4"))))
    assert to_act(state) == 0
    run(state, (0, PlayCard(Card("crazy-1"))))
    assert to_act(state) == 1


@pytest.mark.parametrize("seed", range(10))
def test_r2_3_each_house_player_has_a_different_house(seed: int) -> None:
    state = new_game(8, seed=seed).state
    houses = [s.house for s in state.seats if s.house is not None]
    assert len(houses) == len(set(houses)) == 7


@pytest.mark.parametrize("fmt", [Format.SINGLETON, Format.SEALED])
@pytest.mark.parametrize("seats", range(3, 9))
def test_r2_3_every_seat_is_shown_as_a_house_of_its_own_or_as_the_rat(
    fmt: Format, seats: int
) -> None:
    """R2.3: the public view names each house player's house (no two alike)
    and marks the Rat, who has none; each holds the matching identity card
    (R4.3). Sealed packs often open the same house (R3.2): still no repeat."""
    for seed in range(3):
        state = new_game(seats, seed=seed, options=GameOptions(format=fmt)).state
        shown = spectator_view(state).seats
        assert [s.seat for s in shown if s.is_rat] == [state.rat]
        assert shown[state.rat].house is None
        houses = [s.house for s in shown if not s.is_rat]
        assert None not in houses and len(set(houses)) == seats - 1
        for view, seat in zip(shown, state.seats, strict=True):
            assert view.house is seat.house
            held = RAT_CARD if view.house is None else assignment_card(view.house)
            assert seat.identity == held
