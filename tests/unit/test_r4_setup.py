"""R4: setup — Rat seat, deal, assignment cards, prize pool, trick 1."""

from __future__ import annotations

from collections import Counter

import pytest

from domain.game.cards import HOUSES, PRIZE_CARDS, RAT_CARD, assignment_card
from domain.game.engine import to_act
from domain.game.errors import BadInput
from domain.game.events import ActionRequired, GameStarted, TrickStarted
from domain.game.invariants import check
from domain.game.legal import legal_actions
from domain.game.setup import new_game
from domain.game.state import Phase
from infra.codec import event_to_json


@pytest.mark.parametrize("rat", [0, 2, 4])
def test_r4_1_the_rat_is_the_seat_the_host_chose(rat: int) -> None:
    state = new_game(5, seed=1, rat=rat).state
    assert state.rat == rat
    assert state.seats[rat].identity == RAT_CARD


def test_r4_1_without_a_choice_the_rat_is_a_random_seat_from_the_seed() -> None:
    rats = {new_game(4, seed=s).state.rat for s in range(40)}
    assert rats == {0, 1, 2, 3}
    assert new_game(4, seed=17).state.rat == new_game(4, seed=17).state.rat


def test_r4_1_a_rat_seat_outside_the_game_is_refused() -> None:
    with pytest.raises(BadInput) as info:
        new_game(3, seed=1, rat=3)
    assert info.value.code == "BAD_INPUT"


@pytest.mark.parametrize("seats", range(3, 9))
def test_r4_2_every_seat_is_dealt_10_cards_the_rest_is_the_rat_deck(seats: int) -> None:
    state = new_game(seats, seed=seats).state
    assert [len(s.hand) for s in state.seats] == [10] * seats
    assert len(state.rat_deck) == 224 - 10 * seats
    check(state)


def test_r4_2_the_deck_is_shuffled() -> None:
    a = new_game(3, seed=1).state
    b = new_game(3, seed=2).state
    assert a.seats[0].hand != b.seats[0].hand
    assert a.rat_deck != sorted(a.rat_deck)


@pytest.mark.parametrize("seed", range(10))
def test_r4_3_house_players_get_different_assignment_cards_the_rat_the_rat_card(
    seed: int,
) -> None:
    state = new_game(6, seed=seed).state
    ids = [s.identity for s in state.seats]
    assert ids[state.rat] == RAT_CARD
    players = [s for i, s in enumerate(state.seats) if i != state.rat]
    assert all(s.identity == assignment_card(s.house) for s in players if s.house)
    assert len({s.identity for s in players}) == 5
    # the two unused assignment cards stay in the box
    unused = {assignment_card(h) for h in HOUSES} - {s.identity for s in players}
    assert unused == set(state.box)


def test_r4_3_house_assignment_is_random() -> None:
    seen = {new_game(3, seed=s, rat=0).state.seats[1].house for s in range(60)}
    assert seen == set(HOUSES)


def test_r4_4_r4_5_21_prizes_one_revealed_20_in_the_pool() -> None:
    state = new_game(4, seed=2).state
    assert state.trick is not None
    assert len(state.prize_pool) == 20
    assert sorted([state.trick.prize, *state.prize_pool]) == sorted(PRIZE_CARDS)
    assert state.trick.prize not in state.prize_pool


def test_r4_4_prize_pool_is_shuffled() -> None:
    firsts = set()
    for seed in range(30):
        trick = new_game(3, seed=seed).state.trick
        assert trick is not None
        firsts.add(trick.prize)
    assert len(firsts) > 5


def test_r4_5_trick_1_the_rat_leads_after_the_prize_is_revealed() -> None:
    setup = new_game(5, seed=9, rat=3)
    state = setup.state
    assert state.trick is not None
    assert state.trick.number == 1
    assert state.trick.leader == 3
    assert state.phase is Phase.LEAD
    assert to_act(state) == 3
    assert [type(e) for e in setup.events] == [GameStarted, TrickStarted, ActionRequired]
    started = setup.events[1].seen_by(None)
    assert isinstance(started, TrickStarted)
    assert started.prize == state.trick.prize
    assert started.trump is state.trick.prize.house
    assert started.leader == 3
    for seat in (0, 1, 2, 4):  # only the Rat may play
        assert legal_actions(state, seat) == []


def test_r4_2_r11_game_started_shows_each_seat_only_its_own_hand() -> None:
    setup = new_game(3, seed=9)
    started = setup.events[0]
    assert isinstance(started, GameStarted)
    public = started.seen_by(None)
    assert public.hand is None and public.hands == ()
    assert "hand" not in event_to_json(public)
    assert public.hand_sizes == (10, 10, 10)
    for seat, s in enumerate(setup.state.seats):
        own = started.seen_by(seat)
        assert own.hand is not None
        assert Counter(own.hand) == Counter(s.hand)
        assert own.hands == ()  # never another seat's hand
        assert event_to_json(own) == {**event_to_json(public), "hand": list(own.hand)}
