"""R7.3 Sleepy: every later play of the trick is face down, follow rules
still apply, nothing face down triggers, all is revealed at resolution."""

from __future__ import annotations

from domain.game.cards import Card
from domain.game.commands import PlayCard
from domain.game.events import AbilityTriggered, CardPlayed, TrickWon
from domain.game.legal import legal_actions
from domain.game.state import GameState
from domain.game.views import player_view, spectator_view
from infra.codec import event_to_json
from tests.builders import make_state, of_type, one, refused, run


def sleepy_lead() -> GameState:
    """Seat 0 leads Sleepy in a 4-seat game; trump is Needy."""
    state = make_state(
        [
            ["sleepy-5", "crazy-1"],
            ["sleepy-20", "crazy-9"],
            ["needy-2", "crazy-8"],
            ["sleepy-7", "crazy-7"],
        ],
        prize="needy-prize-1",
    )
    run(state, (0, PlayCard(Card("sleepy-5"))))
    return state


def test_r7_3_later_plays_are_face_down_the_lead_is_not() -> None:
    state = sleepy_lead()
    events = run(state, (1, PlayCard(Card("sleepy-20"))))
    played = one(events, CardPlayed)
    assert event_to_json(played.seen_by(None)) == {
        "seat": 1,
        "trick": 1,
        "lead": False,
        "card": None,
        "faceDown": True,
    }
    assert state.trick is not None
    assert [p.face_down for p in state.trick.plays] == [False, True]


def test_r7_3_only_the_owner_sees_a_face_down_card_in_events() -> None:
    state = sleepy_lead()
    played = one(run(state, (1, PlayCard(Card("sleepy-20")))), CardPlayed)
    assert played.seen_by(1).card == "sleepy-20"
    for viewer in (0, 2, 3, None):  # the Rat (seat 0) included
        assert played.seen_by(viewer).card is None


def test_r7_3_only_the_owner_sees_a_face_down_card_in_views() -> None:
    state = sleepy_lead()
    run(state, (1, PlayCard(Card("sleepy-20"))))
    own = player_view(state, 1).public.trick
    assert own is not None and own.plays[1].card == "sleepy-20"
    for view in (player_view(state, 0).public, player_view(state, 2).public, spectator_view(state)):
        assert view.trick is not None
        assert view.trick.plays[0].card == "sleepy-5"
        assert view.trick.plays[1].card is None
        assert view.trick.plays[1].face_down
        assert "sleepy-20" not in repr(view)


def test_r7_3_follow_rules_still_apply_to_face_down_plays() -> None:
    state = sleepy_lead()
    refused(state, 1, PlayCard(Card("crazy-9")), "ILLEGAL_ACTION")  # holds sleepy-20
    assert legal_actions(state, 1) == [PlayCard(Card("sleepy-20"))]
    run(state, (1, PlayCard(Card("sleepy-20"))))
    assert legal_actions(state, 2) == [PlayCard(Card("crazy-8")), PlayCard(Card("needy-2"))]


def test_r7_3_a_face_down_card_triggers_nothing() -> None:
    state = make_state(
        [["sleepy-5", "crazy-1"], ["crazy-30", "crazy-9"], ["sassy-31"]], prize="needy-prize-1"
    )
    events = run(state, (0, PlayCard(Card("sleepy-5"))), (1, PlayCard(Card("crazy-30"))))
    assert state.pending is None  # no Crazy second card
    events += run(state, (2, PlayCard(Card("sassy-31"))))
    assert len(of_type(events, AbilityTriggered)) == 1


def test_r7_3_at_resolution_all_cards_are_revealed_and_compared_normally() -> None:
    state = sleepy_lead()
    events = run(
        state,
        (1, PlayCard(Card("sleepy-20"))),
        (2, PlayCard(Card("needy-2"))),  # a face-down trump
        (3, PlayCard(Card("sleepy-7"))),
    )
    won = one(events, TrickWon)
    assert won.private_to() == ()  # no seat has a projection of its own
    assert won.seen_by(None) == won  # a spectator sees every card
    assert [p.card for p in won.seen_by(None).plays] == [
        "sleepy-5",
        "sleepy-20",
        "needy-2",
        "sleepy-7",
    ]
    assert won.seen_by(None).winner == 2  # the trump wins
    assert sorted(state.seats[2].won) == ["needy-2", "sleepy-20", "sleepy-5", "sleepy-7"]


def test_r7_3_face_down_lead_suit_highest_wins_without_trump() -> None:
    state = sleepy_lead()
    events = run(
        state,
        (1, PlayCard(Card("sleepy-20"))),
        (2, PlayCard(Card("crazy-8"))),
        (3, PlayCard(Card("sleepy-7"))),
    )
    assert one(events, TrickWon).seen_by(None).winner == 1


def test_r7_3_a_rare_sleepy_follow_turns_only_later_plays_face_down() -> None:
    state = make_state(
        [["crazy-5"], ["sleepy-30"], ["crazy-6"], ["crazy-7"]], prize="needy-prize-1"
    )
    # crazy-5 was the leader's only card: no second card (R7.1)
    events = run(
        state,
        (0, PlayCard(Card("crazy-5"))),
        (1, PlayCard(Card("sleepy-30"))),
        (2, PlayCard(Card("crazy-6"))),
        (3, PlayCard(Card("crazy-7"))),
    )
    assert [e.seen_by(None).face_down for e in of_type(events, CardPlayed)] == [
        False,
        False,
        True,
        True,
    ]


def test_r7_3_face_down_lasts_only_for_this_trick() -> None:
    state = make_state(
        [["sleepy-5", "crazy-1"], ["sleepy-20", "crazy-9"], ["sleepy-2", "crazy-8"]],
        prize="needy-prize-1",
    )
    run(
        state,
        (0, PlayCard(Card("sleepy-5"))),
        (1, PlayCard(Card("sleepy-20"))),
        (2, PlayCard(Card("sleepy-2"))),
    )
    assert state.turn == 1  # sleepy-20 won
    events = run(state, (1, PlayCard(Card("crazy-9"))))  # seat 1 has one card: no second card
    events += run(state, (2, PlayCard(Card("crazy-8"))))
    assert [e.seen_by(None).face_down for e in of_type(events, CardPlayed)] == [False, False]
