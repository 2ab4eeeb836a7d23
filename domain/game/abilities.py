"""House abilities (R7): when a play triggers, and what each house does."""

from __future__ import annotations

from domain.game.cards import Card, House, sorted_cards, sorted_pile
from domain.game.events import AbilityTriggered, DecisionRequired, Event
from domain.game.options import AbilityTrigger
from domain.game.state import Decision, DecisionKind, GameState, Phase, Play

# Enum members read on every decision, bound once: Python 3.11 reads ``Phase.LEAD``
# through EnumType's __getattr__ hook, ~70 ns each time (docs/decisions/0037).
_EVERY_CARD = AbilityTrigger.EVERY_CARD
_LEAD_ONLY = AbilityTrigger.LEAD_ONLY
_CRAZY = House.CRAZY
_STINKY = House.STINKY
_SLEEPY = House.SLEEPY
_HUNGRY = House.HUNGRY
_NEEDY = House.NEEDY
_CURIOUS = House.CURIOUS
_SASSY = House.SASSY
_DECISION = Phase.DECISION
_CRAZY_SECOND_CARD = DecisionKind.CRAZY_SECOND_CARD
_STINKY_GIFTS = DecisionKind.STINKY_GIFTS
_HUNGRY_DISCARD = DecisionKind.HUNGRY_DISCARD
_NEEDY_NEIGHBOUR = DecisionKind.NEEDY_NEIGHBOUR
_CURIOUS_ORDER = DecisionKind.CURIOUS_ORDER
_HUNGRY_TAKE = DecisionKind.HUNGRY_TAKE

CURIOUS_LOOK = 3  # R7.6


def triggers(state: GameState, play: Play, led: bool) -> bool:
    """R7.0: face-down plays never trigger; otherwise by ``abilityTrigger``."""
    if play.face_down:
        return False
    mode = state.options.ability_trigger
    if mode is _EVERY_CARD:
        return True
    if mode is _LEAD_ONLY:
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
    if house is _CRAZY and hand:  # R7.1
        kind = _CRAZY_SECOND_CARD
    elif house is _STINKY and hand:  # R7.2
        kind = _STINKY_GIFTS
    elif house is _SLEEPY:  # R7.3
        trick.sleepy = True
    elif house is _HUNGRY and hand and state.rat_deck:  # R7.4
        kind = _HUNGRY_DISCARD
    elif house is _NEEDY and any(state.seats[s].hand for s in state.neighbours(seat)):
        # R7.5 [decision] with no card on either side there is nothing to choose
        kind = _NEEDY_NEIGHBOUR
    elif house is _CURIOUS and state.rat_deck:  # R7.6
        kind = _CURIOUS_ORDER
        cards = state.rat_deck[:CURIOUS_LOOK]
    elif house is _SASSY:  # R7.7
        trick.sassy = True
    if kind is not None:
        require(state, Decision(kind, seat, seat, cards), events)


def require(state: GameState, decision: Decision, events: list[Event]) -> None:
    """R7.0b: the game waits for ``decision.seat``."""
    state.pending, state.phase = decision, _DECISION
    cards: tuple[Card, ...] | None = None
    if decision.kind is _CURIOUS_ORDER:  # R11: the chooser sees them, not their order
        cards = tuple(sorted_cards(decision.cards))
    elif decision.kind is _HUNGRY_TAKE:  # R7.4: contents, never order
        cards = sorted_pile(tuple(state.rat_deck))
    events.append(DecisionRequired(decision.seat, decision.kind, decision.source, cards))
