"""R7.4 Hungry: discard a card face up, then take any card of the Rat Deck,
seeing its contents sorted, never its order."""

from __future__ import annotations

from domain.game.cards import Card
from domain.game.commands import HungryDiscard, HungryTake, PlayCard
from domain.game.engine import to_act
from domain.game.events import CardDiscarded, CardTaken, DecisionRequired
from domain.game.legal import legal_actions
from domain.game.state import DecisionKind, GameState
from domain.game.views import player_view, spectator_view
from infra.codec import event_to_json
from tests.builders import make_state, of_type, one, refused, run

DECK = ["sassy-2", "crazy-10", "stinky-1", "crazy-9"]


def hungry_lead(hand: list[str], deck: list[str]) -> GameState:
    state = make_state(
        [hand, ["hungry-2"], ["hungry-3"], ["hungry-4"]], prize="needy-prize-1", rat_deck=deck
    )
    run(state, (0, PlayCard(Card(hand[0]))))
    return state


def test_r7_4_hungry_lead_first_asks_for_a_discard() -> None:
    state = hungry_lead(["hungry-10", "crazy-1", "sassy-5"], DECK)
    assert state.pending is not None
    assert (state.pending.kind, state.pending.seat) == (DecisionKind.HUNGRY_DISCARD, 0)
    assert legal_actions(state, 0) == [
        HungryDiscard(Card("crazy-1")),
        HungryDiscard(Card("sassy-5")),
    ]


def test_r7_4_the_discard_goes_face_up_to_the_discard_pile() -> None:
    state = hungry_lead(["hungry-10", "crazy-1", "sassy-5"], DECK)
    events = run(state, (0, HungryDiscard(Card("crazy-1"))))
    assert state.discard == ["crazy-1"]
    assert state.seats[0].hand == ["sassy-5"]
    discarded = one(events, CardDiscarded)
    assert event_to_json(discarded.seen_by(None)) == {
        "seat": 0,
        "card": "crazy-1",
        "reason": "hungry",
    }
    assert spectator_view(state).discard == ("crazy-1",)


def test_r7_4_then_the_player_sees_the_rat_deck_sorted_by_house_and_value() -> None:
    state = hungry_lead(["hungry-10", "crazy-1"], DECK)
    events = run(state, (0, HungryDiscard(Card("crazy-1"))))
    required = one(events, DecisionRequired)
    assert required.seen_by(None).kind is DecisionKind.HUNGRY_TAKE
    listing = ["crazy-9", "crazy-10", "stinky-1", "sassy-2"]
    assert required.seen_by(0).cards == tuple(listing)
    assert player_view(state, 0).decision_cards == tuple(listing)
    assert legal_actions(state, 0) == [HungryTake(Card(c)) for c in listing]


def test_r7_4_r11_only_the_chooser_sees_the_rat_deck_list() -> None:
    state = hungry_lead(["hungry-10", "crazy-1"], DECK)
    required = one(run(state, (0, HungryDiscard(Card("crazy-1")))), DecisionRequired)
    for viewer in (1, 2, 3, None):
        assert required.seen_by(viewer).cards is None
    for seat in (1, 2, 3):
        assert player_view(state, seat).decision_cards == ()
    for view in (spectator_view(state), player_view(state, 1)):
        assert not any(card in repr(view) for card in DECK)


def test_r7_4_take_any_card_the_rest_of_the_rat_deck_keeps_its_order() -> None:
    state = hungry_lead(["hungry-10", "crazy-1"], DECK)
    events = run(state, (0, HungryDiscard(Card("crazy-1"))), (0, HungryTake(Card("stinky-1"))))
    assert state.seats[0].hand == ["stinky-1"]
    assert state.rat_deck == ["sassy-2", "crazy-10", "crazy-9"]
    taken = one(events, CardTaken)
    assert event_to_json(taken.seen_by(None)) == {"seat": 0, "ratDeckSize": 3}
    assert taken.seen_by(0).card == "stinky-1"
    assert taken.seen_by(1).card is None
    assert state.pending is None
    assert to_act(state) == 1


def test_r7_4_the_bottom_card_may_be_taken() -> None:
    state = hungry_lead(["hungry-10", "crazy-1"], DECK)
    run(state, (0, HungryDiscard(Card("crazy-1"))), (0, HungryTake(Card("crazy-9"))))
    assert state.rat_deck == DECK[:3]


def test_r7_4_a_card_not_in_the_rat_deck_cannot_be_taken() -> None:
    state = hungry_lead(["hungry-10", "crazy-1"], DECK)
    run(state, (0, HungryDiscard(Card("crazy-1"))))
    refused(state, 0, HungryTake(Card("crazy-1")), "ILLEGAL_ACTION")  # now in the discard pile
    refused(state, 0, HungryTake(Card("hungry-2")), "ILLEGAL_ACTION")  # in a hand


def test_r7_4_the_discard_must_come_from_the_hand() -> None:
    state = hungry_lead(["hungry-10", "crazy-1"], DECK)
    refused(state, 0, HungryDiscard(Card("hungry-10")), "ILLEGAL_ACTION")  # already played
    refused(state, 0, HungryDiscard(Card("sassy-2")), "ILLEGAL_ACTION")  # in the Rat Deck
    refused(state, 0, HungryTake(Card("sassy-2")), "ILLEGAL_ACTION")  # discard comes first


def test_r7_4_with_an_empty_hand_nothing_happens() -> None:
    state = hungry_lead(["hungry-10"], DECK)
    assert state.pending is None
    assert state.rat_deck == DECK
    assert state.discard == []
    assert to_act(state) == 1


def test_r7_4_with_an_empty_rat_deck_nothing_happens() -> None:
    state = hungry_lead(["hungry-10", "crazy-1"], [])
    assert state.pending is None
    assert state.seats[0].hand == ["crazy-1"]
    assert state.discard == []
    assert to_act(state) == 1


def test_r7_4_the_discarded_card_may_not_come_back_it_is_not_in_the_deck() -> None:
    state = hungry_lead(["hungry-10", "crazy-1"], ["sassy-2"])
    events = run(state, (0, HungryDiscard(Card("crazy-1"))))
    assert one(events, DecisionRequired).seen_by(0).cards == ("sassy-2",)
    events = run(state, (0, HungryTake(Card("sassy-2"))))
    assert state.rat_deck == []
    assert of_type(events, DecisionRequired) == []
