"""House abilities (R7): when a play triggers, and what each house does."""

from __future__ import annotations

from domain.game.cards import Card, House, sorted_cards, sorted_pile
from domain.game.events import AbilityTriggered, DecisionRequired, Event
from domain.game.options import AbilityTrigger
from domain.game.state import Decision, DecisionKind, GameState, Phase, Play

CURIOUS_LOOK = 3  # R7.6


def triggers(state: GameState, play: Play, led: bool) -> bool:
    """R7.0: face-down plays never trigger; otherwise by ``abilityTrigger``."""
    if play.face_down:
        return False
    mode = state.options.ability_trigger
    if mode is AbilityTrigger.EVERY_CARD:
        return True
    if mode is AbilityTrigger.LEAD_ONLY:
        return led
    return led or play.card.rare


def trigger(state: GameState, play: Play, events: list[Event]) -> None:
    """Start the ability of ``play``'s house; may leave a pending decision."""
    house = play.card.house
    assert house is not None  # a played card is numbered
    seat = play.seat
    events.append(AbilityTriggered(seat, house, play.card))
    trick = state.trick
    assert trick is not None
    hand = state.seats[seat].hand
    kind: DecisionKind | None = None
    cards: list[Card] = []
    if house is House.CRAZY and hand:  # R7.1
        kind = DecisionKind.CRAZY_SECOND_CARD
    elif house is House.STINKY and hand:  # R7.2
        kind = DecisionKind.STINKY_GIFTS
    elif house is House.SLEEPY:  # R7.3
        trick.sleepy = True
    elif house is House.HUNGRY and hand and state.rat_deck:  # R7.4
        kind = DecisionKind.HUNGRY_DISCARD
    elif house is House.NEEDY and any(state.seats[s].hand for s in state.neighbours(seat)):
        # R7.5 [decision] with no card on either side there is nothing to choose
        kind = DecisionKind.NEEDY_NEIGHBOUR
    elif house is House.CURIOUS and state.rat_deck:  # R7.6
        kind = DecisionKind.CURIOUS_ORDER
        cards = state.rat_deck[:CURIOUS_LOOK]
    elif house is House.SASSY:  # R7.7
        trick.sassy = True
    if kind is not None:
        require(state, Decision(kind, seat, seat, cards), events)


def require(state: GameState, decision: Decision, events: list[Event]) -> None:
    """R7.0b: the game waits for ``decision.seat``."""
    state.pending, state.phase = decision, Phase.DECISION
    cards: tuple[Card, ...] | None = None
    if decision.kind is DecisionKind.CURIOUS_ORDER:  # R11: the chooser sees them, not their order
        cards = tuple(sorted_cards(decision.cards))
    elif decision.kind is DecisionKind.HUNGRY_TAKE:  # R7.4: contents, never order
        cards = sorted_pile(tuple(state.rat_deck))
    events.append(DecisionRequired(decision.seat, decision.kind, decision.source, cards))
