"""R11: what each viewer may see — views and event projections."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import fields

from domain.game.cards import HOUSE_INDEX, Card
from domain.game.commands import PlayCard, SendMessage
from domain.game.events import PRIVATE, WHOLE, Event
from domain.game.legal import legal_actions
from domain.game.setup import new_game
from domain.game.state import GameState
from domain.game.views import player_view, spectator_view
from infra.codec import event_to_json
from tests.builders import make_state, run
from tests.jsonable import to_jsonable


def text(obj: object) -> str:
    return json.dumps(to_jsonable(obj))


def cards_in(obj: object, cards: Iterable[str]) -> set[str]:
    """The cards of ``cards`` that appear (as whole ids) in ``obj``."""
    blob = text(obj)
    return {c for c in cards if f'"{c}"' in blob}


def game() -> GameState:
    return new_game(4, seed=21, rat=0).state


def test_r11_spectator_view_has_no_hand_card() -> None:
    state = game()
    view = spectator_view(state)
    hidden = [c for s in state.seats for c in s.hand] + state.rat_deck + state.prize_pool
    assert cards_in(view, hidden) == set()
    assert [s.hand_size for s in view.seats] == [10, 10, 10, 10]


def test_r11_a_players_view_has_its_own_hand_only() -> None:
    state = game()
    for seat in range(4):
        view = player_view(state, seat)
        own = state.seats[seat].hand
        others = [c for i, s in enumerate(state.seats) if i != seat for c in s.hand]
        assert sorted(view.hand) == sorted(own)
        assert cards_in(view, others + state.rat_deck) == set()
        assert [s.hand_size for s in view.public.seats] == [10, 10, 10, 10]


def test_r11_the_rat_sees_no_hand_but_its_own() -> None:
    state = game()
    view = player_view(state, state.rat)
    others = [c for i, s in enumerate(state.seats) if i != state.rat for c in s.hand]
    assert cards_in(view, others) == set()


def test_r11_hands_are_listed_in_canonical_order_not_deal_order() -> None:
    state = game()
    for seat in range(4):
        hand = list(player_view(state, seat).hand)
        keys = []
        for c in hand:
            assert c.house is not None
            keys.append((HOUSE_INDEX[c.house], c.value))
        assert keys == sorted(keys)
        assert sorted(hand) == sorted(state.seats[seat].hand)


def test_r11_rat_deck_and_prize_pool_only_as_sizes() -> None:
    state = game()
    view = spectator_view(state)
    assert view.rat_deck_size == len(state.rat_deck) == 184
    assert view.prize_pool_size == len(state.prize_pool) == 20
    for seat in range(4):
        assert cards_in(player_view(state, seat), state.rat_deck + state.prize_pool) == set()


def test_r11_trick_plays_won_piles_prize_rows_discards_scores_are_public() -> None:
    state = make_state(
        [["curious-5", "crazy-1"], ["curious-20", "crazy-2"], ["curious-3", "crazy-3"]],
        prize="needy-prize-1",
        won=[[], ["sassy-7"], []],
        prizes=[[], ["sassy-prize-2"], []],
        discard=["hungry-4"],
    )
    run(state, (0, PlayCard(Card("curious-5"))))
    views = [spectator_view(state), *(player_view(state, s).public for s in range(3))]
    for view in views:
        assert view.trick is not None
        assert view.trick.plays[0].card == "curious-5"
        assert view.seats[1].won == ("sassy-7",)
        assert view.seats[1].prizes == ("sassy-prize-2",)
        assert view.seats[1].score == 5
        assert view.discard == ("hungry-4",)
    assert len({text(v) for v in views[1:]}) == 1  # no seat sees more public data


def test_r11_spectator_view_has_no_face_down_card_and_no_message_text() -> None:
    state = make_state(
        [["sleepy-5", "crazy-1"], ["sleepy-20", "crazy-2"], ["sleepy-3", "crazy-3"]],
        prize="needy-prize-1",
    )
    run(state, (1, SendMessage(2, "a very private note")), (0, SendMessage(1, "rat note")))
    run(state, (0, PlayCard(Card("sleepy-5"))), (1, PlayCard(Card("sleepy-20"))))
    blob = text(spectator_view(state))
    assert "sleepy-20" not in blob
    assert "private note" not in blob and "rat note" not in blob
    assert "sleepy-5" in blob  # the face-up lead is public


def played_events() -> list[Event]:
    """The events of a 3-seat game, from the deal through up to 60 actions."""
    setup = new_game(3, seed=5)
    state = setup.state
    events: list[Event] = list(setup.events)

    for _ in range(60):
        if state.outcome:
            break
        seat = state.pending.seat if state.pending else state.turn
        events += run(state, (seat, legal_actions(state, seat)[0]))
    return events


def test_r11_event_projections_never_give_a_spectator_more_than_public() -> None:
    events = played_events()
    assert {s for e in events for s in e.private_to()} == {0, 1, 2}
    for e in events:
        public = e.seen_by(None)
        assert type(public) is type(e)
        for f in fields(public):  # no private or whole-event field is set
            if f.metadata in (PRIVATE, WHOLE):
                assert getattr(public, f.name) in (None, ()), (type(e).__name__, f.name)
        for seat in range(3):  # a seat with no projection of its own gets public
            if seat not in e.private_to():
                assert e.seen_by(seat) == public
                assert event_to_json(e.seen_by(seat)) == event_to_json(public)


def test_r11_a_seat_outside_the_game_gets_the_public_projection() -> None:
    for e in played_events():
        for seat in (99, -1):  # a seat with no projection gets public
            assert e.seen_by(seat) == e.seen_by(None), (type(e).__name__, seat)
