"""R7.7 Sassy: every later play must be Sassy; without one, discard and play
(2+ cards) or pass."""

from __future__ import annotations

from domain.game.cards import Card
from domain.game.commands import DiscardAndPlay, Pass, PlayCard, PlaySecondCard
from domain.game.engine import to_act
from domain.game.events import CardDiscarded, CardPlayed, Passed, TrickWon
from domain.game.legal import legal_actions
from domain.game.state import DecisionKind
from domain.game.views import spectator_view
from infra.codec import event_to_json
from tests.builders import make_state, one, refused, run


def test_r7_7_after_a_sassy_lead_later_plays_must_be_sassy() -> None:
    state = make_state(
        [["sassy-5"], ["sassy-2", "sassy-9", "crazy-30"], ["sassy-3"]], prize="needy-prize-1"
    )
    run(state, (0, PlayCard(Card("sassy-5"))))
    assert state.trick is not None and state.trick.sassy
    assert legal_actions(state, 1) == [PlayCard(Card("sassy-2")), PlayCard(Card("sassy-9"))]
    refused(state, 1, PlayCard(Card("crazy-30")), "ILLEGAL_ACTION")
    refused(state, 1, Pass(), "ILLEGAL_ACTION")  # holds Sassy: may not pass


def test_r7_7_sassy_replaces_the_follow_rule_for_later_plays() -> None:
    # A rare Sassy follow: seat 2 holds the lead suit (Curious) and a Sassy
    # card and must play the Sassy one.
    state = make_state(
        [["curious-5"], ["sassy-30"], ["curious-9", "sassy-1"]], prize="needy-prize-1"
    )
    run(state, (0, PlayCard(Card("curious-5"))), (1, PlayCard(Card("sassy-30"))))
    assert legal_actions(state, 2) == [PlayCard(Card("sassy-1"))]
    refused(state, 2, PlayCard(Card("curious-9")), "ILLEGAL_ACTION")


def test_r7_7_sassy_does_not_change_plays_made_before_it() -> None:
    state = make_state(
        [["curious-5"], ["crazy-4"], ["sassy-30"], ["curious-1", "crazy-2"]],
        prize="needy-prize-1",
    )
    run(
        state,
        (0, PlayCard(Card("curious-5"))),
        (1, PlayCard(Card("crazy-4"))),
        (2, PlayCard(Card("sassy-30"))),
    )
    assert state.trick is not None
    assert [p.card for p in state.trick.plays] == ["curious-5", "crazy-4", "sassy-30"]
    assert legal_actions(state, 3)[0] == Pass()


def test_r7_7_without_sassy_and_2_or_more_cards_pass_or_discard_and_play() -> None:
    state = make_state(
        [["sassy-5"], ["crazy-1", "needy-2", "hungry-3"], ["sassy-3"]], prize="needy-prize-1"
    )
    run(state, (0, PlayCard(Card("sassy-5"))))
    options = legal_actions(state, 1)
    assert options[0] == Pass()
    assert len(options) == 1 + 3 * 2
    assert DiscardAndPlay(Card("crazy-1"), Card("needy-2")) in options
    assert not any(isinstance(o, PlayCard) for o in options)
    refused(state, 1, PlayCard(Card("crazy-1")), "ILLEGAL_ACTION")


def test_r7_7_discard_goes_face_up_then_any_card_is_played() -> None:
    state = make_state(
        [["sassy-5"], ["crazy-1", "hungry-2", "hungry-3"], ["sassy-3"]], prize="needy-prize-1"
    )
    run(state, (0, PlayCard(Card("sassy-5"))))
    events = run(state, (1, DiscardAndPlay(Card("crazy-1"), Card("hungry-3"))))
    assert event_to_json(one(events, CardDiscarded).seen_by(None)) == {
        "seat": 1,
        "card": "crazy-1",
        "reason": "sassy",
    }
    assert one(events, CardPlayed).seen_by(None).card == "hungry-3"
    assert state.discard == ["crazy-1"]
    assert spectator_view(state).discard == ("crazy-1",)
    assert state.seats[1].hand == ["hungry-2"]
    assert to_act(state) == 2


def test_r7_7_discard_and_play_needs_two_different_held_cards() -> None:
    state = make_state([["sassy-5"], ["crazy-1", "hungry-2"], ["sassy-3"]], prize="needy-prize-1")
    run(state, (0, PlayCard(Card("sassy-5"))))
    refused(state, 1, DiscardAndPlay(Card("crazy-1"), Card("crazy-1")), "ILLEGAL_ACTION")
    refused(state, 1, DiscardAndPlay(Card("crazy-1"), Card("sassy-3")), "ILLEGAL_ACTION")
    refused(state, 1, DiscardAndPlay(Card("sassy-3"), Card("crazy-1")), "ILLEGAL_ACTION")


def test_r7_7_sassy_discard_with_one_card_only_pass_is_legal() -> None:
    state = make_state([["sassy-5"], ["crazy-1"], ["sassy-3"]], prize="needy-prize-1")
    run(state, (0, PlayCard(Card("sassy-5"))))
    assert legal_actions(state, 1) == [Pass()]
    refused(state, 1, DiscardAndPlay(Card("crazy-1"), Card("crazy-1")), "ILLEGAL_ACTION")
    refused(state, 1, PlayCard(Card("crazy-1")), "ILLEGAL_ACTION")
    events = run(state, (1, Pass()))
    assert event_to_json(one(events, Passed).seen_by(None)) == {"seat": 1, "trick": 1}
    assert state.seats[1].hand == ["crazy-1"]  # a pass keeps the card
    assert to_act(state) == 2


def test_r7_7_r8_1_a_pass_is_not_a_play() -> None:
    state = make_state([["sassy-5"], ["crazy-1"], ["sassy-3"]], prize="needy-prize-1", refill=False)
    events = run(state, (0, PlayCard(Card("sassy-5"))), (1, Pass()), (2, PlayCard(Card("sassy-3"))))
    won = one(events, TrickWon)
    assert [p.seat for p in won.seen_by(None).plays] == [0, 2]
    assert won.seen_by(None).passes == (1,)
    assert won.seen_by(None).winner == 0


def test_r7_7_r8_1_if_everybody_passes_the_leader_wins() -> None:
    state = make_state([["sassy-5"], ["crazy-1"], ["crazy-2"]], prize="needy-prize-1", refill=False)
    events = run(state, (0, PlayCard(Card("sassy-5"))), (1, Pass()), (2, Pass()))
    won = one(events, TrickWon)
    assert won.seen_by(None).winner == 0
    assert state.seats[0].won == ["sassy-5"]
    assert state.seats[0].prizes == ["needy-prize-1"]


def test_r7_7_a_card_played_after_a_discard_can_win_as_trump() -> None:
    state = make_state([["sassy-5"], ["crazy-1", "needy-2"], ["sassy-30"]], prize="needy-prize-1")
    events = run(
        state,
        (0, PlayCard(Card("sassy-5"))),
        (1, DiscardAndPlay(Card("crazy-1"), Card("needy-2"))),
        (2, PlayCard(Card("sassy-30"))),
    )
    assert one(events, TrickWon).seen_by(None).winner == 1


def test_r7_7_r7_0_a_rare_played_after_a_discard_triggers() -> None:
    # [engine reading] the card played after the discard is an ordinary play.
    state = make_state(
        [["sassy-5"], ["hungry-1", "crazy-31", "needy-2"], ["sassy-3"]], prize="needy-prize-1"
    )
    run(
        state,
        (0, PlayCard(Card("sassy-5"))),
        (1, DiscardAndPlay(Card("hungry-1"), Card("crazy-31"))),
    )
    assert state.pending is not None
    assert (state.pending.kind, state.pending.seat) == (DecisionKind.CRAZY_SECOND_CARD, 1)
    run(state, (1, PlaySecondCard(Card("needy-2"))))
    assert to_act(state) == 2


def test_r7_7_sassy_lasts_only_for_this_trick() -> None:
    state = make_state(
        [["sassy-5", "curious-7"], ["crazy-1", "crazy-8"], ["sassy-3", "curious-9"]],
        prize="needy-prize-1",
    )
    run(state, (0, PlayCard(Card("sassy-5"))), (1, Pass()), (2, PlayCard(Card("sassy-3"))))
    assert state.trick is not None and not state.trick.sassy
    assert to_act(state) == 0
    # Trick 2 (Curious lead, empty Rat Deck): seat 1 holds no Curious card and
    # may play any card again (R6.3) instead of passing.
    run(state, (0, PlayCard(Card("curious-7"))))
    assert legal_actions(state, 1) == [PlayCard(Card("crazy-1")), PlayCard(Card("crazy-8"))]
