"""One line of text per event as a spectator sees it, for the terminal demo."""

from __future__ import annotations

from domain.game.events import (
    AbilityTriggered,
    CardDiscarded,
    CardGiven,
    CardPlayed,
    CardsDrawn,
    Event,
    GameEnded,
    GameStarted,
    SecondCardPlayed,
    TrickStarted,
    TrickWon,
)
from infra.codec import event_to_json


def _card(card: str | None) -> str:
    return "a face-down card" if card is None else card


def describe(e: Event) -> str:
    """A human sentence for a public projection (never more than it holds)."""
    if isinstance(e, GameStarted):
        seats = ", ".join(
            f"{s.seat}={'Rat' if s.rat else s.house.value if s.house else '?'}" for s in e.seats
        )
        return f"Game started ({e.options.format.value}): {seats}"
    if isinstance(e, TrickStarted):
        return f"\nTrick {e.trick}: prize {e.prize} (trump {e.trump.value}), seat {e.leader} leads"
    if isinstance(e, CardPlayed):
        return f"  seat {e.seat} {'leads' if e.lead else 'plays'} {_card(e.card)}"
    if isinstance(e, SecondCardPlayed):
        return f"  seat {e.seat} adds {_card(e.card)} (Crazy)"
    if isinstance(e, TrickWon):
        return f"  -> seat {e.winner} wins {e.prize}; scores {list(e.scores)}"
    if isinstance(e, GameEnded):
        return (
            f"\nGame over ({e.termination.value}): winners {list(e.winners)}, "
            f"scores {list(e.scores)}"
        )
    if isinstance(e, CardGiven):
        return f"  a card moved seat {e.from_seat} -> seat {e.to_seat} ({e.reason.value})"
    if isinstance(e, CardsDrawn):
        return f"  seat {e.seat} draws {e.count}"
    if isinstance(e, AbilityTriggered):
        return f"  {e.house.value.capitalize()} ability of seat {e.seat}"
    if isinstance(e, CardDiscarded):
        return f"  seat {e.seat} discards {e.card} ({e.reason.value})"
    fields = ", ".join(f"{k}={v}" for k, v in event_to_json(e).items())
    return f"  {type(e).__name__}: {fields}"
