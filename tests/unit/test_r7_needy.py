"""R7.5 Needy: the player chooses a neighbour, who chooses a card to give."""

from __future__ import annotations

from domain.game.cards import Card, House
from domain.game.commands import ChooseNeighbour, GiveCard, PlayCard
from domain.game.engine import to_act
from domain.game.events import CardGiven, NeighbourChosen
from domain.game.legal import legal_actions
from domain.game.state import DecisionKind, GameState
from domain.game.views import spectator_view
from infra.codec import event_to_json
from tests.builders import make_state, of_type, one, refused, run


def needy_lead(hands: list[list[str]]) -> GameState:
    """Seat 0 leads ``hands[0][0]`` (Needy); in 4 seats its neighbours are 3 and 1."""
    state = make_state(hands, prize="sassy-prize-1")
    run(state, (0, PlayCard(Card(hands[0][0]))))
    return state


FOUR = [["needy-10"], ["needy-2", "crazy-5", "crazy-6"], ["needy-3"], ["needy-4", "stinky-9"]]


def test_r7_5_the_player_chooses_one_of_the_two_neighbours() -> None:
    state = needy_lead(FOUR)
    assert state.pending is not None
    assert (state.pending.kind, state.pending.seat) == (DecisionKind.NEEDY_NEIGHBOUR, 0)
    assert legal_actions(state, 0) == [ChooseNeighbour(1), ChooseNeighbour(3)]
    refused(state, 0, ChooseNeighbour(2), "ILLEGAL_ACTION")
    refused(state, 0, ChooseNeighbour(0), "ILLEGAL_ACTION")


def test_r7_5_the_chosen_neighbour_gets_the_decision_and_chooses_the_card() -> None:
    state = needy_lead(FOUR)
    events = run(state, (0, ChooseNeighbour(1)))
    chosen = one(events, NeighbourChosen).seen_by(None)
    assert event_to_json(chosen) == {"seat": 0, "neighbour": 1}
    assert state.pending is not None
    assert (state.pending.kind, state.pending.seat, state.pending.source) == (
        DecisionKind.NEEDY_GIFT,
        1,
        0,
    )
    assert to_act(state) == 1
    assert legal_actions(state, 1) == [
        GiveCard(Card("crazy-5")),
        GiveCard(Card("crazy-6")),
        GiveCard(Card("needy-2")),
    ]
    assert legal_actions(state, 0) == []
    refused(state, 0, GiveCard(Card("crazy-5")), "NOT_YOUR_TURN")  # the player may not pick
    refused(state, 1, PlayCard(Card("needy-2")), "ILLEGAL_ACTION")  # give first


def test_r7_5_the_given_card_moves_to_the_player() -> None:
    state = needy_lead(FOUR)
    run(state, (0, ChooseNeighbour(1)), (1, GiveCard(Card("crazy-6"))))
    assert state.seats[0].hand == ["crazy-6"]
    assert state.seats[1].hand == ["needy-2", "crazy-5"]
    assert state.pending is None
    assert to_act(state) == 1  # now seat 1 plays its turn


def test_r7_5_the_neighbour_must_give_a_card_it_holds() -> None:
    state = needy_lead(FOUR)
    run(state, (0, ChooseNeighbour(3)))
    refused(state, 3, GiveCard(Card("crazy-5")), "ILLEGAL_ACTION")
    run(state, (3, GiveCard(Card("stinky-9"))))
    assert state.seats[0].hand == ["stinky-9"]


def test_r7_5_r11_the_gift_is_seen_by_giver_and_receiver_only() -> None:
    state = needy_lead(FOUR)
    events = run(state, (0, ChooseNeighbour(1)), (1, GiveCard(Card("crazy-6"))))
    given = one(events, CardGiven)
    assert event_to_json(given.seen_by(None)) == {"fromSeat": 1, "toSeat": 0, "reason": "needy"}
    assert (given.from_seat, given.to_seat, given.reason) == (1, 0, House.NEEDY)
    assert given.seen_by(0).card == given.seen_by(1).card == "crazy-6"
    for viewer in (2, 3, None):
        assert given.seen_by(viewer).card is None
    assert "crazy-6" not in repr(spectator_view(state))


def test_r7_5_a_neighbour_with_no_cards_gives_nothing() -> None:
    state = needy_lead([["needy-10"], [], ["needy-3"], ["needy-4", "stinky-9"]])
    assert legal_actions(state, 0) == [ChooseNeighbour(1), ChooseNeighbour(3)]
    events = run(state, (0, ChooseNeighbour(1)))
    assert state.pending is None
    assert of_type(events, CardGiven) == []
    assert state.seats[0].hand == []
    assert to_act(state) == 2  # seat 1 (empty) is skipped


def test_r7_5_with_no_card_on_either_side_there_is_nothing_to_choose() -> None:
    # [decision] of the engine: no neighbour decision at all
    state = needy_lead([["needy-10"], [], ["needy-3"], []])
    assert state.pending is None
    assert to_act(state) == 2


def test_r7_5_the_needy_player_needs_no_cards_of_its_own() -> None:
    state = needy_lead(FOUR)  # seat 0 led its only card
    assert state.seats[0].hand == []
    assert state.pending is not None


def test_r7_5_a_rare_needy_follow_triggers_for_the_follower() -> None:
    state = make_state(
        [["needy-1", "crazy-1"], ["needy-30", "crazy-2"], ["needy-3", "crazy-3"]],
        prize="sassy-prize-1",
    )
    run(
        state,
        (0, PlayCard(Card("needy-1"))),
        (0, ChooseNeighbour(2)),
        (2, GiveCard(Card("crazy-3"))),
    )
    assert state.seats[0].hand == ["crazy-1", "crazy-3"]
    run(state, (1, PlayCard(Card("needy-30"))))
    assert state.pending is not None
    assert (state.pending.kind, state.pending.seat) == (DecisionKind.NEEDY_NEIGHBOUR, 1)
    run(state, (1, ChooseNeighbour(0)), (0, GiveCard(Card("crazy-1"))))
    assert state.seats[1].hand == ["crazy-2", "crazy-1"]
    assert to_act(state) == 2
