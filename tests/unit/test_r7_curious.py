"""R7.6 Curious: look at the top 3 of the Rat Deck (fewer if it holds fewer)
and put them back in any order; only the chooser sees them."""

from __future__ import annotations

from itertools import permutations

from domain.game.cards import Card, sorted_cards
from domain.game.commands import PlayCard, ReorderTop
from domain.game.engine import to_act
from domain.game.events import DecisionRequired, Event, TopReordered
from domain.game.legal import legal_actions
from domain.game.state import DecisionKind, GameState
from domain.game.views import player_view, spectator_view
from infra.codec import event_to_json
from tests.builders import cards, make_state, of_type, one, refused, run

DECK = ["sassy-2", "crazy-10", "stinky-1", "crazy-9", "hungry-7"]


def curious_lead(deck: list[str]) -> tuple[GameState, list[Event]]:
    state = make_state(
        [["curious-10", "crazy-1"], ["curious-2"], ["curious-3"]],
        prize="needy-prize-1",
        rat_deck=deck,
    )
    events = run(state, (0, PlayCard(Card("curious-10"))))
    return state, events


def test_r7_6_the_player_looks_at_the_top_3_cards() -> None:
    state, events = curious_lead(DECK)
    assert state.pending is not None
    assert (state.pending.kind, state.pending.seat) == (DecisionKind.CURIOUS_ORDER, 0)
    required = one(events, DecisionRequired)
    top = sorted_cards(cards(DECK[:3]))  # R11: the chooser sees the cards, not the deck's order
    assert required.seen_by(0).cards == tuple(top)
    assert player_view(state, 0).decision_cards == tuple(top)
    assert legal_actions(state, 0) == [ReorderTop(p) for p in permutations(top)]


def test_r7_6_r11_only_the_chooser_sees_those_cards() -> None:
    state, events = curious_lead(DECK)
    required = one(events, DecisionRequired)
    for viewer in (1, 2, None):
        assert required.seen_by(viewer).cards is None
    assert player_view(state, 1).decision_cards == ()
    for view in (spectator_view(state), player_view(state, 2)):
        assert not any(card in repr(view) for card in DECK)
    reordered = one(
        run(state, (0, ReorderTop((Card("crazy-10"), Card("stinky-1"), Card("sassy-2"))))),
        TopReordered,
    )
    assert event_to_json(reordered.seen_by(None)) == {"seat": 0, "count": 3}
    assert reordered.seen_by(0).cards == ("crazy-10", "stinky-1", "sassy-2")
    assert reordered.seen_by(1).cards is None


def test_r7_6_the_cards_go_back_in_the_chosen_order_the_rest_untouched() -> None:
    state, _ = curious_lead(DECK)
    run(state, (0, ReorderTop((Card("stinky-1"), Card("sassy-2"), Card("crazy-10")))))
    assert state.rat_deck == ["stinky-1", "sassy-2", "crazy-10", "crazy-9", "hungry-7"]
    assert state.pending is None
    assert to_act(state) == 1


def test_r7_6_the_same_order_may_be_kept() -> None:
    state, _ = curious_lead(DECK)
    run(state, (0, ReorderTop(tuple(cards(DECK[:3])))))
    assert state.rat_deck == DECK


def test_r7_6_fewer_cards_if_the_rat_deck_holds_fewer() -> None:
    state, _ = curious_lead(["sassy-2", "crazy-10"])
    assert state.pending is not None
    assert state.pending.cards == ["sassy-2", "crazy-10"]
    assert len(legal_actions(state, 0)) == 2
    run(state, (0, ReorderTop((Card("crazy-10"), Card("sassy-2")))))
    assert state.rat_deck == ["crazy-10", "sassy-2"]


def test_r7_6_with_an_empty_rat_deck_nothing_happens() -> None:
    state, events = curious_lead([])
    assert state.pending is None
    assert of_type(events, DecisionRequired) == []
    assert to_act(state) == 1


def test_r7_6_only_exactly_the_looked_at_cards_may_be_put_back() -> None:
    state, _ = curious_lead(DECK)
    refused(state, 0, ReorderTop((Card("sassy-2"), Card("crazy-10"))), "ILLEGAL_ACTION")
    refused(
        state, 0, ReorderTop((Card("sassy-2"), Card("crazy-10"), Card("crazy-9"))), "ILLEGAL_ACTION"
    )
    refused(
        state, 0, ReorderTop((Card("sassy-2"), Card("sassy-2"), Card("crazy-10"))), "ILLEGAL_ACTION"
    )
    refused(
        state,
        0,
        ReorderTop((Card("sassy-2"), Card("crazy-10"), Card("stinky-1"), Card("crazy-9"))),
        "ILLEGAL_ACTION",
    )
