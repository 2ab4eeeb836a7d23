"""R6: playing a trick — trump, lead, follow rules, skipping, turn order.

Curious leads with an empty Rat Deck do nothing (R7.6), so these tricks run
on the follow rules alone.
"""

from __future__ import annotations

import pytest

from domain.game.cards import PRIZE_CARDS, Card, House
from domain.game.commands import DiscardAndPlay, Pass, PlayCard
from domain.game.engine import to_act
from domain.game.events import CardPlayed, SeatSkipped, TrickWon
from domain.game.legal import legal_actions
from domain.game.views import spectator_view
from infra.codec import event_to_json
from tests.builders import make_state, of_type, one, refused, run


def test_r6_1_trump_is_the_house_of_the_prize_card() -> None:
    state = make_state([["curious-1"], ["curious-2"], ["curious-3"]], prize="needy-prize-2")
    trick = spectator_view(state).trick
    assert trick is not None
    assert trick.trump is House.NEEDY


@pytest.mark.parametrize(
    ("prize", "winner"), [("needy-prize-1", 1), ("sassy-prize-3", 2), ("crazy-prize-2", 0)]
)
def test_r6_1_the_prize_decides_which_off_suit_card_trumps(prize: str, winner: int) -> None:
    """R6.1: the same plays; only the prize differs. Its house is trump: the
    Needy or the Sassy card wins over the lead (R8.1); with a Crazy prize
    nobody trumps and the leader wins."""
    state = make_state([["curious-20"], ["needy-3"], ["sassy-2"]], prize=prize)
    events = run(
        state,
        (0, PlayCard(Card("curious-20"))),
        (1, PlayCard(Card("needy-3"))),
        (2, PlayCard(Card("sassy-2"))),
    )
    assert one(events, TrickWon).seen_by(None).winner == winner


def test_r6_1_each_trick_takes_its_trump_from_its_own_prize() -> None:
    """R6.1: trick 1's prize is Crazy (nobody trumps, the leader wins); trick
    2 reveals a Sassy prize (R8.4), and the same kind of plays now lose to
    the Sassy card."""
    first, second = "crazy-prize-1", "sassy-prize-1"
    pool = [second, *(p for p in PRIZE_CARDS if p not in (first, second))]
    hands = [["curious-20", "curious-21"], ["needy-3", "needy-4"], ["sassy-2", "sassy-5"]]
    state = make_state(hands, prize=first, prize_pool=pool)
    events = run(state, *((s, PlayCard(Card(h[0]))) for s, h in enumerate(hands)))
    assert one(events, TrickWon).seen_by(None).winner == 0
    trick = spectator_view(state).trick
    assert trick is not None and (trick.prize, trick.trump) == (second, House.SASSY)
    events = run(state, *((s, PlayCard(Card(h[1]))) for s, h in enumerate(hands)))
    assert one(events, TrickWon).seen_by(None).winner == 2


def test_r6_2_the_leader_may_lead_any_card_and_its_house_is_the_lead_suit() -> None:
    hand = ["curious-1", "crazy-9", "sassy-4"]
    state = make_state([hand, ["curious-2"], ["curious-3"]], prize="needy-prize-1")
    assert sorted(legal_actions(state, 0), key=str) == sorted(
        (PlayCard(Card(c)) for c in hand), key=str
    )
    events = run(state, (0, PlayCard(Card("curious-1"))))
    assert one(events, CardPlayed).seen_by(None).lead is True
    trick = spectator_view(state).trick
    assert trick is not None
    assert trick.lead_suit is House.CURIOUS


def test_r6_3_holding_the_lead_suit_you_must_play_it() -> None:
    state = make_state(
        [["curious-10"], ["crazy-9", "curious-5", "curious-7"], ["curious-3"]],
        prize="needy-prize-1",
    )
    run(state, (0, PlayCard(Card("curious-10"))))
    assert legal_actions(state, 1) == [PlayCard(Card("curious-5")), PlayCard(Card("curious-7"))]
    err = refused(state, 1, PlayCard(Card("crazy-9")), "ILLEGAL_ACTION")
    assert "curious" in err.message
    run(state, (1, PlayCard(Card("curious-7"))))


def test_r6_3_holding_no_lead_suit_any_card_may_be_played_trump_or_not() -> None:
    state = make_state(
        [["curious-10"], ["crazy-9", "needy-4", "sassy-2"], ["curious-3"]],
        prize="needy-prize-1",
    )
    run(state, (0, PlayCard(Card("curious-10"))))
    assert legal_actions(state, 1) == [
        PlayCard(Card("crazy-9")),
        PlayCard(Card("needy-4")),
        PlayCard(Card("sassy-2")),
    ]
    run(state, (1, PlayCard(Card("crazy-9"))))  # neither lead suit nor trump: allowed


def test_r6_3_holding_no_lead_suit_a_trump_may_be_played() -> None:
    state = make_state(
        [["curious-10"], ["crazy-9", "needy-4"], ["curious-3"]], prize="needy-prize-1"
    )
    run(state, (0, PlayCard(Card("curious-10"))), (1, PlayCard(Card("needy-4"))))
    assert to_act(state) == 2


def test_r6_3_holding_lead_suit_and_trump_you_must_play_lead_suit() -> None:
    state = make_state(
        [["curious-10"], ["needy-20", "curious-1"], ["curious-3"]], prize="needy-prize-1"
    )
    run(state, (0, PlayCard(Card("curious-10"))))
    refused(state, 1, PlayCard(Card("needy-20")), "ILLEGAL_ACTION")
    assert legal_actions(state, 1) == [PlayCard(Card("curious-1"))]


def test_r6_3_the_others_play_once_each_clockwise_from_the_leader() -> None:
    state = make_state(
        [["curious-1", "curious-4"], ["curious-2", "curious-5"], ["curious-3", "curious-6"]],
        leader=1,
        prize="needy-prize-1",
    )
    events = run(
        state,
        (1, PlayCard(Card("curious-2"))),
        (2, PlayCard(Card("curious-3"))),
        (0, PlayCard(Card("curious-1"))),
    )
    assert [e.seen_by(None).seat for e in of_type(events, CardPlayed)] == [1, 2, 0]
    won = one(events, TrickWon)
    assert [p.seat for p in won.seen_by(None).plays] == [1, 2, 0]


def test_r6_4_a_seat_with_an_empty_hand_is_skipped() -> None:
    state = make_state(
        [["curious-1", "curious-9"], [], ["curious-3"], ["curious-4"]], prize="needy-prize-1"
    )
    events = run(state, (0, PlayCard(Card("curious-1"))))
    skipped = one(events, SeatSkipped)
    assert event_to_json(skipped.seen_by(None)) == {"seat": 1, "trick": 1}
    assert to_act(state) == 2
    assert legal_actions(state, 1) == []
    events = run(state, (2, PlayCard(Card("curious-3"))), (3, PlayCard(Card("curious-4"))))
    won = one(events, TrickWon)
    assert [p.seat for p in won.seen_by(None).plays] == [0, 2, 3]


def test_r6_4_several_empty_hands_in_a_row_are_all_skipped() -> None:
    state = make_state([["curious-1", "curious-9"], [], [], ["curious-4"]], prize="needy-prize-1")
    events = run(state, (0, PlayCard(Card("curious-1"))))
    assert [e.seen_by(None).seat for e in of_type(events, SeatSkipped)] == [1, 2]
    assert to_act(state) == 3


def test_r6_5_only_the_leader_may_lead() -> None:
    state = make_state([["curious-1"], ["curious-2"], ["curious-3"]], prize="needy-prize-1")
    refused(state, 1, PlayCard(Card("curious-2")), "NOT_YOUR_TURN")
    refused(state, 2, PlayCard(Card("curious-3")), "NOT_YOUR_TURN")


def test_r6_5_only_the_seat_whose_turn_it_is_may_play() -> None:
    state = make_state([["curious-1"], ["curious-2"], ["curious-3"]], prize="needy-prize-1")
    run(state, (0, PlayCard(Card("curious-1"))))
    refused(state, 2, PlayCard(Card("curious-3")), "NOT_YOUR_TURN")
    refused(state, 0, PlayCard(Card("curious-1")), "NOT_YOUR_TURN")  # already played


def test_r6_5_only_a_card_the_seat_holds() -> None:
    state = make_state(
        [["curious-1"], ["curious-2"], ["curious-3"]], prize="needy-prize-1", rat_deck=["hungry-5"]
    )
    err = refused(state, 0, PlayCard(Card("curious-2")), "ILLEGAL_ACTION")  # another seat's card
    assert "curious-2" not in err.message  # R11: an error names no hidden card
    refused(state, 0, PlayCard(Card("hungry-5")), "ILLEGAL_ACTION")  # in the Rat Deck
    refused(state, 0, PlayCard(Card("sassy-32")), "ILLEGAL_ACTION")  # in the box
    with pytest.raises(ValueError):  # an id that names no card makes no Card (R1)
        Card("no-such-card")
    refused(state, 0, PlayCard("no-such-card"), "BAD_INPUT")  # type: ignore[arg-type]


def test_r6_5_a_seat_out_of_range_is_bad_input() -> None:
    state = make_state([["curious-1"], ["curious-2"], ["curious-3"]], prize="needy-prize-1")
    refused(state, 3, PlayCard(Card("curious-1")), "BAD_INPUT")
    assert legal_actions(state, 3) == []


def test_r6_pass_or_discard_outside_sassy_is_refused() -> None:
    state = make_state(
        [["curious-1"], ["crazy-2", "crazy-3"], ["curious-3"]], prize="needy-prize-1"
    )
    run(state, (0, PlayCard(Card("curious-1"))))
    refused(state, 1, Pass(), "ILLEGAL_ACTION")
    refused(state, 1, DiscardAndPlay(Card("crazy-2"), Card("crazy-3")), "ILLEGAL_ACTION")
