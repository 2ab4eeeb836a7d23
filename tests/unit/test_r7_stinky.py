"""R7.2 Stinky: one card of the player's choice to each neighbour."""

from __future__ import annotations

from domain.game.cards import Card
from domain.game.commands import Gift, GiveCards, PlayCard
from domain.game.engine import to_act
from domain.game.events import CardGiven, DecisionRequired
from domain.game.legal import legal_actions
from domain.game.state import DecisionKind, GameState
from domain.game.views import player_view, spectator_view
from infra.codec import event_to_json
from tests.builders import make_state, of_type, one, refused, run


def four_seats(leader_hand: list[str]) -> GameState:
    """Seat 0 leads Stinky in a 4-seat game: neighbours 3 and 1, seat 2 watches."""
    state = make_state(
        [leader_hand, ["stinky-2"], ["stinky-3"], ["stinky-4"]], prize="sassy-prize-1"
    )
    run(state, (0, PlayCard(Card(leader_hand[0]))))
    return state


def test_r7_2_stinky_lead_asks_for_a_gift_to_each_neighbour() -> None:
    state = four_seats(["stinky-10", "crazy-1", "crazy-2", "crazy-3"])
    assert state.pending is not None
    assert (state.pending.kind, state.pending.seat) == (DecisionKind.STINKY_GIFTS, 0)
    options = legal_actions(state, 0)
    assert len(options) == 3 * 2  # ordered pairs of distinct cards
    assert GiveCards((Gift(1, Card("crazy-1")), Gift(3, Card("crazy-2")))) in options


def test_r7_2_each_neighbour_gets_the_chosen_card() -> None:
    state = four_seats(["stinky-10", "crazy-1", "crazy-2", "crazy-3"])
    run(state, (0, GiveCards((Gift(1, Card("crazy-1")), Gift(3, Card("crazy-3"))))))
    assert state.seats[0].hand == ["crazy-2"]
    assert state.seats[1].hand == ["stinky-2", "crazy-1"]
    assert state.seats[3].hand == ["stinky-4", "crazy-3"]
    assert state.seats[2].hand == ["stinky-3"]
    assert to_act(state) == 1


def test_r7_2_both_gifts_to_one_neighbour_or_to_a_non_neighbour_are_refused() -> None:
    state = four_seats(["stinky-10", "crazy-1", "crazy-2"])
    refused(
        state, 0, GiveCards((Gift(1, Card("crazy-1")), Gift(1, Card("crazy-2")))), "ILLEGAL_ACTION"
    )
    refused(
        state, 0, GiveCards((Gift(1, Card("crazy-1")), Gift(2, Card("crazy-2")))), "ILLEGAL_ACTION"
    )
    refused(state, 0, GiveCards((Gift(1, Card("crazy-1")),)), "ILLEGAL_ACTION")  # one is missing
    refused(state, 0, GiveCards(()), "ILLEGAL_ACTION")


def test_r7_2_the_same_card_twice_or_a_card_not_held_is_refused() -> None:
    state = four_seats(["stinky-10", "crazy-1", "crazy-2"])
    refused(
        state, 0, GiveCards((Gift(1, Card("crazy-1")), Gift(3, Card("crazy-1")))), "ILLEGAL_ACTION"
    )
    refused(
        state,
        0,
        GiveCards((Gift(1, Card("crazy-1")), Gift(3, Card("stinky-10")))),
        "ILLEGAL_ACTION",
    )
    three = (Gift(1, Card("crazy-1")), Gift(3, Card("crazy-2")), Gift(1, Card("stinky-10")))
    refused(state, 0, GiveCards(three), "ILLEGAL_ACTION")
    refused(
        state, 0, GiveCards((Gift(1, Card("crazy-1")), Gift(3, Card("stinky-3")))), "ILLEGAL_ACTION"
    )


def test_r7_2_stinky_with_one_card_gives_it_to_chosen_neighbour() -> None:
    state = four_seats(["stinky-10", "crazy-1"])
    assert legal_actions(state, 0) == [
        GiveCards((Gift(1, Card("crazy-1")),)),
        GiveCards((Gift(3, Card("crazy-1")),)),
    ]
    refused(state, 0, GiveCards((Gift(2, Card("crazy-1")),)), "ILLEGAL_ACTION")
    run(state, (0, GiveCards((Gift(3, Card("crazy-1")),))))
    assert state.seats[0].hand == []
    assert state.seats[3].hand == ["stinky-4", "crazy-1"]
    assert state.seats[1].hand == ["stinky-2"]


def test_r7_2_stinky_with_one_card_may_not_give_two_or_none() -> None:
    state = four_seats(["stinky-10", "crazy-1"])
    refused(state, 0, GiveCards(()), "ILLEGAL_ACTION")
    refused(
        state, 0, GiveCards((Gift(1, Card("crazy-1")), Gift(3, Card("crazy-1")))), "ILLEGAL_ACTION"
    )


def test_r7_2_stinky_with_no_card_left_does_nothing() -> None:
    state = four_seats(["stinky-10"])
    assert state.pending is None
    assert to_act(state) == 1
    assert [len(s.hand) for s in state.seats] == [0, 1, 1, 1]


def test_r7_2_in_a_3_seat_game_the_neighbours_are_the_two_others() -> None:
    state = make_state(
        [["stinky-2"], ["stinky-10", "crazy-1", "crazy-2"], ["stinky-3"]],
        leader=1,
        prize="sassy-prize-1",
    )
    run(
        state,
        (1, PlayCard(Card("stinky-10"))),
        (1, GiveCards((Gift(0, Card("crazy-2")), Gift(2, Card("crazy-1"))))),
    )
    assert state.seats[0].hand == ["stinky-2", "crazy-2"]
    assert state.seats[2].hand == ["stinky-3", "crazy-1"]


def test_r7_2_r11_only_giver_and_receiver_see_which_card_moved() -> None:
    state = four_seats(["stinky-10", "crazy-1", "crazy-2"])
    events = run(state, (0, GiveCards((Gift(1, Card("crazy-1")), Gift(3, Card("crazy-2"))))))
    gifts = of_type(events, CardGiven)
    assert [event_to_json(g.seen_by(None)) for g in gifts] == [
        {"fromSeat": 0, "toSeat": 1, "reason": "stinky"},
        {"fromSeat": 0, "toSeat": 3, "reason": "stinky"},
    ]
    to_1 = gifts[0]
    assert to_1.seen_by(0).card == to_1.seen_by(1).card == "crazy-1"
    for viewer in (2, 3, None):
        assert to_1.seen_by(viewer).card is None
    assert "crazy-1" not in repr(spectator_view(state))
    assert "crazy-1" not in repr(player_view(state, 2))
    assert "crazy-1" in player_view(state, 1).hand


def test_r7_2_a_rare_stinky_follow_triggers_for_the_follower() -> None:
    state = make_state(
        [["stinky-1"], ["stinky-30", "crazy-5", "crazy-6"], ["stinky-3"]], prize="sassy-prize-1"
    )
    events = run(state, (0, PlayCard(Card("stinky-1"))))
    assert state.pending is None  # the lead had no card left to give
    events = run(state, (1, PlayCard(Card("stinky-30"))))
    assert one(events, DecisionRequired).seen_by(None).seat == 1
