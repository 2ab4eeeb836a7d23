"""R7.1 Crazy: a second card, value summed, suit of the first, to the bottom
of the Rat Deck at the end of the trick, triggering nothing."""

from __future__ import annotations

import pytest

from domain.game.cards import Card, House
from domain.game.commands import PlayCard, PlaySecondCard
from domain.game.engine import to_act
from domain.game.events import (
    AbilityTriggered,
    DecisionRequired,
    SecondCardPlayed,
    TrickWon,
    WonPlay,
)
from domain.game.legal import legal_actions
from domain.game.options import AbilityTrigger
from domain.game.state import DecisionKind
from infra.codec import event_to_json
from tests.builders import make_state, of_type, one, refused, run


def test_r7_1_crazy_lead_asks_its_player_for_a_second_card_any_card() -> None:
    state = make_state(
        [["crazy-10", "sassy-20", "needy-3"], ["crazy-2"], ["crazy-3"]], prize="stinky-prize-1"
    )
    events = run(state, (0, PlayCard(Card("crazy-10"))))
    required = one(events, DecisionRequired)
    assert required.seen_by(None).kind is DecisionKind.CRAZY_SECOND_CARD
    assert required.seen_by(None).seat == 0
    # ignoring follow rules: not only Crazy cards
    assert legal_actions(state, 0) == [
        PlaySecondCard(Card("needy-3")),
        PlaySecondCard(Card("sassy-20")),
    ]


def test_r7_1_the_play_is_worth_the_sum_of_both_cards() -> None:
    state = make_state(
        [["crazy-10", "sassy-20"], ["crazy-29"], ["crazy-3"]], prize="stinky-prize-1"
    )
    events = run(
        state,
        (0, PlayCard(Card("crazy-10"))),
        (0, PlaySecondCard(Card("sassy-20"))),
        (1, PlayCard(Card("crazy-29"))),
        (2, PlayCard(Card("crazy-3"))),
    )
    won = one(events, TrickWon)
    assert won.seen_by(None).plays[0] == WonPlay(
        seat=0, card=Card("crazy-10"), second_card=Card("sassy-20"), value=30
    )
    assert won.seen_by(None).winner == 0  # 30 beats crazy-29


def test_r7_1_the_suit_stays_the_first_cards_a_trump_second_card_is_not_trump() -> None:
    # Trump is Stinky. 10 + stinky-20 is still a Crazy play, so a stinky-2
    # trump beats it.
    state = make_state(
        [["crazy-10", "stinky-20"], ["crazy-29"], ["stinky-2"]], prize="stinky-prize-1"
    )
    events = run(
        state,
        (0, PlayCard(Card("crazy-10"))),
        (0, PlaySecondCard(Card("stinky-20"))),
        (1, PlayCard(Card("crazy-29"))),
        (2, PlayCard(Card("stinky-2"))),
    )
    assert one(events, TrickWon).seen_by(None).winner == 2


def test_r7_1_the_second_card_goes_to_the_bottom_of_the_rat_deck_not_to_the_winner() -> None:
    state = make_state(
        [["crazy-10", "sassy-20"], ["crazy-29"], ["crazy-3"]],
        prize="stinky-prize-1",
        rat_deck=["hungry-1", "hungry-2"],
        refill=False,
    )
    run(
        state,
        (0, PlayCard(Card("crazy-10"))),
        (0, PlaySecondCard(Card("sassy-20"))),
        (1, PlayCard(Card("crazy-29"))),
        (2, PlayCard(Card("crazy-3"))),
    )
    assert state.rat_deck == ["hungry-1", "hungry-2", "sassy-20"]
    assert sorted(state.seats[0].won) == ["crazy-10", "crazy-29", "crazy-3"]
    assert all("sassy-20" not in s.won for s in state.seats)


def test_r7_1_the_second_card_stays_in_the_trick_until_the_trick_ends() -> None:
    state = make_state(
        [["crazy-10", "sassy-20"], ["crazy-29"], ["crazy-3"]],
        prize="stinky-prize-1",
        rat_deck=["hungry-1"],
    )
    run(state, (0, PlayCard(Card("crazy-10"))), (0, PlaySecondCard(Card("sassy-20"))))
    assert state.trick is not None
    assert state.trick.plays[0].second == "sassy-20"
    assert state.rat_deck == ["hungry-1"]


@pytest.mark.parametrize("mode", list(AbilityTrigger))
def test_r7_1_the_second_card_triggers_nothing(mode: AbilityTrigger) -> None:
    # A rare Sassy second card would otherwise force Sassy plays (R7.7), a
    # rare Crazy another second card.
    state = make_state(
        [["crazy-10", "sassy-30", "crazy-31"], ["crazy-2"], ["crazy-3"]],
        prize="stinky-prize-1",
        trigger=mode,
    )
    events = run(state, (0, PlayCard(Card("crazy-10"))), (0, PlaySecondCard(Card("sassy-30"))))
    assert len(of_type(events, AbilityTriggered)) == 1
    assert state.trick is not None and not state.trick.sassy
    assert to_act(state) == 1
    assert legal_actions(state, 1) == [PlayCard(Card("crazy-2"))]


def test_r7_1_a_rare_crazy_second_card_asks_for_no_third_card() -> None:
    state = make_state(
        [["crazy-10", "crazy-31", "sassy-1"], ["crazy-2"], ["crazy-3"]],
        prize="stinky-prize-1",
    )
    run(state, (0, PlayCard(Card("crazy-10"))), (0, PlaySecondCard(Card("crazy-31"))))
    assert state.pending is None
    assert to_act(state) == 1


def test_r7_1_with_an_empty_hand_there_is_no_second_card() -> None:
    state = make_state([["crazy-10"], ["crazy-2"], ["crazy-3"]], prize="stinky-prize-1")
    events = run(state, (0, PlayCard(Card("crazy-10"))))
    assert one(events, AbilityTriggered).seen_by(None).house is House.CRAZY
    assert of_type(events, DecisionRequired) == []
    assert state.pending is None
    assert to_act(state) == 1


def test_r7_1_a_rare_crazy_follow_asks_the_follower_for_a_second_card() -> None:
    state = make_state([["crazy-1"], ["crazy-30", "needy-4"], ["crazy-3"]], prize="stinky-prize-1")
    run(state, (0, PlayCard(Card("crazy-1"))), (1, PlayCard(Card("crazy-30"))))
    assert state.pending is not None
    assert (state.pending.kind, state.pending.seat) == (DecisionKind.CRAZY_SECOND_CARD, 1)
    events = run(state, (1, PlaySecondCard(Card("needy-4"))), (2, PlayCard(Card("crazy-3"))))
    assert one(events, TrickWon).seen_by(None).plays[1].value == 34


def test_r7_1_a_face_up_second_card_is_public() -> None:
    state = make_state([["crazy-10", "sassy-20"], ["crazy-2"], ["crazy-3"]], prize="stinky-prize-1")
    run(state, (0, PlayCard(Card("crazy-10"))))
    second = one(run(state, (0, PlaySecondCard(Card("sassy-20")))), SecondCardPlayed)
    assert event_to_json(second.seen_by(None)) == {"seat": 0, "card": "sassy-20", "faceDown": False}


def test_r7_1_the_second_card_must_come_from_the_hand() -> None:
    state = make_state([["crazy-10", "sassy-20"], ["crazy-2"], ["crazy-3"]], prize="stinky-prize-1")
    run(state, (0, PlayCard(Card("crazy-10"))))
    refused(state, 0, PlaySecondCard(Card("crazy-2")), "ILLEGAL_ACTION")
    refused(state, 0, PlaySecondCard(Card("crazy-10")), "ILLEGAL_ACTION")  # already played
