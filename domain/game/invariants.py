"""Structural checks of a state: every card in exactly one place (R1.5, R4)."""

from __future__ import annotations

from collections import Counter

from domain.game.cards import HOUSES, PRIZE_CARDS, RAT_CARD, Card, assignment_card
from domain.game.options import MAX_SEATS, MIN_SEATS
from domain.game.state import GameState, Phase

_ASSIGNMENT = frozenset(assignment_card(h) for h in HOUSES)
_PRIZES = frozenset(PRIZE_CARDS)
_IDENTITY = _ASSIGNMENT | {RAT_CARD}
_HOUSE_CARDS = _PRIZES | _IDENTITY


class CorruptState(ValueError):
    """A state that breaks a structural invariant."""


def zones(state: GameState) -> dict[str, list[Card]]:
    """Every zone that may hold a card, by name, with its cards."""
    out: dict[str, list[Card]] = {
        "rat_deck": state.rat_deck,
        "prize_pool": state.prize_pool,
        "discard": state.discard,
        "box": state.box,
    }
    for i, s in enumerate(state.seats):
        out[f"seat{i}.hand"] = s.hand
        out[f"seat{i}.won"] = s.won
        out[f"seat{i}.prizes"] = s.prizes
        out[f"seat{i}.identity"] = [s.identity]
    t = state.trick
    if t is not None:
        out["trick.prize"] = [t.prize]
        out["trick.plays"] = [p.card for p in t.plays]
        out["trick.seconds"] = [p.second for p in t.plays if p.second]
    return out


def card_counts(state: GameState) -> Counter[Card]:
    """How many places hold each card id (each must be 1)."""
    return Counter(c for cards in zones(state).values() for c in cards)


def check(state: GameState) -> None:
    """Raise :class:`CorruptState` unless the state is structurally sound.

    One pass over the zones: each zone holds only its kind of card (R1.3,
    R1.4), no card is in two places, and none goes missing (R1.5)."""
    n = len(state.seats)
    if not MIN_SEATS <= n <= MAX_SEATS:
        raise CorruptState(f"{n} seats")
    if not (0 <= state.rat < n and 0 <= state.turn < n):
        raise CorruptState("seat index out of range")
    seen: set[str] = set()
    total = numbered = 0
    for name, cards in zones(state).items():
        if name.endswith(("prizes", "prize_pool", "trick.prize")):
            ok = _PRIZES.issuperset(cards)
        elif name.endswith("identity"):
            ok = _IDENTITY.issuperset(cards)
        elif name == "box":  # out of play: unassigned assignment cards, spares
            ok = RAT_CARD not in cards
            numbered += len(cards) - sum(map(_HOUSE_CARDS.__contains__, cards))
        else:  # a card is numbered or one of the house cards (R1.1): set speed
            ok = _HOUSE_CARDS.isdisjoint(cards)
            numbered += len(cards)
        if not ok:
            raise CorruptState(f"{name} holds a card of the wrong kind")
        seen.update(cards)
        total += len(cards)
    if len(seen) != total:
        raise CorruptState(f"{total - len(seen)} cards are in more than one place")
    if not (seen >= _PRIZES and seen >= _ASSIGNMENT):
        raise CorruptState("a prize or assignment card is missing")
    if numbered != state.deck_size:
        raise CorruptState("the number of numbered cards changed")
    rats = [i for i, s in enumerate(state.seats) if s.identity == RAT_CARD]
    if rats != [state.rat] or any(
        (s.house is None) != (i == state.rat) for i, s in enumerate(state.seats)
    ):
        raise CorruptState("the Rat card and the houses do not match the seats")
    if (state.trick is None) != (state.phase is Phase.FINISHED):
        raise CorruptState("a finished game has no trick, a running game has one")
    if (state.pending is None) == (state.phase is Phase.DECISION):
        raise CorruptState("a pending decision goes with the decision phase")
    if state.pending is not None and not 0 <= state.pending.seat < n:
        raise CorruptState("decision seat out of range")
    _check_flow(state)


def _check_flow(state: GameState) -> None:
    """The phase agrees with the trick and the seat to act (R6, R7.0b)."""
    t = state.trick
    if t is None:
        return
    if (state.phase is Phase.LEAD) != (not t.plays):
        raise CorruptState("the lead phase goes with a trick without plays")
    if state.phase in (Phase.LEAD, Phase.PLAY) and not state.seats[state.turn].hand:
        raise CorruptState("the seat to play holds no card")
    if any(not 0 <= p.seat < len(state.seats) for p in t.plays):
        raise CorruptState("a play's seat is out of range")
