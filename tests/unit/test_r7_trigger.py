"""R7.0 when an ability triggers (abilityTrigger modes, face down) and R7.0b
pending decisions.

The probe: a Sleepy card that triggers turns every later play face down
(R7.3), so whether it triggered shows on the next play. Curious leads with an
empty Rat Deck do nothing (R7.6).
"""

from __future__ import annotations

import pytest

from domain.game.cards import Card
from domain.game.commands import GiveCard, HungryDiscard, PlayCard, PlaySecondCard
from domain.game.engine import to_act
from domain.game.events import AbilityTriggered, CardPlayed, DecisionRequired, Event
from domain.game.options import AbilityTrigger
from domain.game.state import DecisionKind, GameState, Phase
from tests.builders import make_state, of_type, refused, run

LEAD_AND_RARE = AbilityTrigger.LEAD_AND_RARE
LEAD_ONLY = AbilityTrigger.LEAD_ONLY
EVERY_CARD = AbilityTrigger.EVERY_CARD


def sleepy_follow(follow: str, mode: AbilityTrigger) -> tuple[GameState, list[Event]]:
    """Curious lead; seat 1 (no Curious card) follows ``follow``; seat 2 plays."""
    state = make_state(
        [["curious-1"], [follow], ["curious-2"]], prize="crazy-prize-1", trigger=mode
    )
    events = run(state, (0, PlayCard(Card("curious-1"))), (1, PlayCard(Card(follow))))
    events += run(state, (2, PlayCard(Card("curious-2"))))
    return state, events


def triggered(events: list[Event]) -> list[tuple[int, str]]:
    return [(e.seen_by(None).seat, e.seen_by(None).card) for e in of_type(events, AbilityTriggered)]


def face_down(events: list[Event]) -> list[bool]:
    return [e.seen_by(None).face_down for e in of_type(events, CardPlayed)]


@pytest.mark.parametrize("mode", list(AbilityTrigger))
def test_r7_0_the_lead_card_triggers_in_every_mode(mode: AbilityTrigger) -> None:
    _, events = sleepy_follow("sleepy-5", mode)
    assert triggered(events)[0] == (0, "curious-1")


def test_r7_0_lead_and_rare_a_followed_common_does_not_trigger() -> None:
    _, events = sleepy_follow("sleepy-5", LEAD_AND_RARE)
    assert triggered(events) == [(0, "curious-1")]
    assert face_down(events) == [False, False, False]


def test_r7_0_lead_and_rare_a_followed_rare_triggers() -> None:
    _, events = sleepy_follow("sleepy-30", LEAD_AND_RARE)
    assert triggered(events) == [(0, "curious-1"), (1, "sleepy-30")]
    assert face_down(events) == [False, False, True]


def test_r7_0_lead_only_a_followed_rare_does_not_trigger() -> None:
    _, events = sleepy_follow("sleepy-32", LEAD_ONLY)
    assert triggered(events) == [(0, "curious-1")]
    assert face_down(events) == [False, False, False]


def test_r7_0_every_card_a_followed_common_triggers() -> None:
    _, events = sleepy_follow("sleepy-5", EVERY_CARD)
    assert triggered(events) == [(0, "curious-1"), (1, "sleepy-5")]
    assert face_down(events) == [False, False, True]


def test_r7_0_default_mode_is_lead_and_rare() -> None:
    state = make_state([["curious-1"], ["curious-2"], ["curious-3"]])
    assert state.options.ability_trigger is LEAD_AND_RARE


@pytest.mark.parametrize("mode", list(AbilityTrigger))
def test_r7_0_a_face_down_card_never_triggers(mode: AbilityTrigger) -> None:
    # Sleepy lead: seat 1's rare Crazy goes face down and asks for no second
    # card; seat 2's rare Sassy neither, so seat 3 may play a non-Sassy card.
    state = make_state(
        [["sleepy-1"], ["crazy-30", "crazy-2"], ["sassy-31"], ["crazy-3"]],
        prize="needy-prize-1",
        trigger=mode,
    )
    events = run(
        state,
        (0, PlayCard(Card("sleepy-1"))),
        (1, PlayCard(Card("crazy-30"))),
        (2, PlayCard(Card("sassy-31"))),
        (3, PlayCard(Card("crazy-3"))),
    )
    assert triggered(events) == [(0, "sleepy-1")]
    assert of_type(events, DecisionRequired) == []
    assert face_down(events) == [False, True, True, True]


# ---------------------------------------------------------------- R7.0b
def crazy_pending() -> GameState:
    """Seat 0 led Crazy and owes a second card."""
    state = make_state([["crazy-5", "sassy-1"], ["crazy-2"], ["crazy-3"]], prize="needy-prize-1")
    run(state, (0, PlayCard(Card("crazy-5"))))
    return state


def test_r7_0b_an_ability_choice_is_a_pending_decision_for_one_seat() -> None:
    state = crazy_pending()
    assert state.phase is Phase.DECISION
    assert state.pending is not None
    assert (state.pending.kind, state.pending.seat) == (DecisionKind.CRAZY_SECOND_CARD, 0)
    assert to_act(state) == 0


def test_r7_0b_no_other_play_while_a_decision_is_pending() -> None:
    state = crazy_pending()
    refused(state, 1, PlayCard(Card("crazy-2")), "NOT_YOUR_TURN")
    refused(state, 1, PlaySecondCard(Card("crazy-2")), "NOT_YOUR_TURN")
    refused(state, 0, PlayCard(Card("sassy-1")), "ILLEGAL_ACTION")  # answer first


def test_r7_0b_the_wrong_kind_of_answer_is_refused() -> None:
    state = crazy_pending()
    refused(state, 0, HungryDiscard(Card("sassy-1")), "ILLEGAL_ACTION")
    refused(state, 0, GiveCard(Card("sassy-1")), "ILLEGAL_ACTION")


def test_r7_0b_an_answer_with_no_pending_decision_is_refused() -> None:
    state = make_state([["crazy-5"], ["crazy-2"], ["crazy-3"]], prize="needy-prize-1")
    refused(state, 0, PlaySecondCard(Card("crazy-5")), "ILLEGAL_ACTION")


def test_r7_0b_the_ability_resolves_before_the_next_seat_plays() -> None:
    state = crazy_pending()
    run(state, (0, PlaySecondCard(Card("sassy-1"))))
    assert state.pending is None
    assert state.phase is Phase.PLAY
    assert to_act(state) == 1
