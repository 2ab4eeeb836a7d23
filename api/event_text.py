"""One line of text per public event projection, for the terminal demo."""

from __future__ import annotations

from typing import Any


def _seat(p: dict[str, Any], key: str = "seat") -> str:
    return f"seat {p[key]}"


def describe(p: dict[str, Any], kind: str) -> str:
    """A human sentence for a public projection (never more than it holds)."""
    if kind == "GameStarted":
        seats = ", ".join(f"{s['seat']}={'Rat' if s['rat'] else s['house']}" for s in p["seats"])
        return f"Game started ({p['options']['format']}): {seats}"
    if kind == "TrickStarted":
        leader = _seat(p, "leader")
        return f"\nTrick {p['trick']}: prize {p['prize']} (trump {p['trump']}), {leader} leads"
    if kind == "CardPlayed":
        card = "a face-down card" if p["faceDown"] else p["card"]
        return f"  {_seat(p)} {'leads' if p['lead'] else 'plays'} {card}"
    if kind == "SecondCardPlayed":
        return f"  {_seat(p)} adds {'a face-down card' if p['faceDown'] else p['card']} (Crazy)"
    if kind == "TrickWon":
        return f"  -> {_seat(p, 'winner')} wins {p['prize']}; scores {p['scores']}"
    if kind == "GameEnded":
        return f"\nGame over ({p['termination']}): winners {p['winners']}, scores {p['scores']}"
    if kind == "CardGiven":
        return f"  a card moved seat {p['from']} -> seat {p['to']} ({p['reason']})"
    if kind == "CardsDrawn":
        return f"  {_seat(p)} draws {p['count']}"
    if kind == "AbilityTriggered":
        return f"  {p['house'].capitalize()} ability of {_seat(p)}"
    if kind == "CardDiscarded":
        return f"  {_seat(p)} discards {p['card']} ({p['reason']})"
    fields = ", ".join(f"{k}={v}" for k, v in p.items())
    return f"  {kind}: {fields}"
