"""Scripted game states for unit tests.

:func:`make_state` builds a :class:`GameState` directly from the cards a test
cares about (hands, Rat Deck, prize of the trick, prize rows, won piles) and
puts every other card somewhere valid (the prize pool or the box), then runs
:func:`domain.game.invariants.check` so a test never starts from a broken state.

:func:`refused` applies a command that must be refused and checks that the
state did not change (``encode`` before == after).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TypeVar

import pytest

from domain.game.cards import (
    DESIGN_CARDS,
    HOUSES,
    PRIZE_CARDS,
    THE_RAT,
    Card,
    CardKind,
    House,
    assignment_card,
)
from domain.game.commands import Command
from domain.game.engine import apply
from domain.game.errors import GameError
from domain.game.events import Event
from domain.game.invariants import card_counts, check
from domain.game.options import AbilityTrigger, Format, GameOptions
from domain.game.state import GameState, Phase, SeatState, Trick
from infra.db.state_codec import encode


def make_state(
    hands: Sequence[Sequence[str]],
    *,
    rat: int = 0,
    leader: int | None = None,
    prize: str = "crazy-prize-1",
    rat_deck: Sequence[str] = (),
    prize_pool: Sequence[str] | None = None,
    prizes: Sequence[Sequence[str]] | None = None,
    won: Sequence[Sequence[str]] | None = None,
    discard: Sequence[str] = (),
    houses: Sequence[House | None] | None = None,
    trick_number: int = 1,
    trigger: AbilityTrigger = AbilityTrigger.LEAD_AND_RARE,
    refill: bool = True,
    fmt: Format = Format.SINGLETON,
) -> GameState:
    """A game waiting for ``leader`` (default: the Rat) to lead a trick.

    ``hands[i]`` is seat i's hand (its order is kept); ``rat_deck`` index 0 is
    the top. House players get the houses in canonical order unless ``houses``
    says otherwise. ``prize_pool`` defaults to every prize card not placed
    elsewhere (canonical order); numbered cards not placed anywhere go to the
    box, so the default Rat Deck is empty.
    """
    n = len(hands)
    if houses is None:
        it = iter(HOUSES)
        houses = [None if s == rat else next(it) for s in range(n)]
    seats = [
        SeatState(
            house=h,
            identity=THE_RAT if h is None else assignment_card(h),
            hand=cards(hands[s]),
            won=cards(won[s]) if won else [],
            prizes=cards(prizes[s]) if prizes else [],
        )
        for s, h in enumerate(houses)
    ]
    placed: set[str] = {c for s in seats for c in (*s.hand, *s.won, *s.prizes)}
    placed |= {prize, *rat_deck, *discard}
    pool = [p for p in PRIZE_CARDS if p not in placed] if prize_pool is None else cards(prize_pool)
    placed |= set(pool)
    used_houses = {h for h in houses if h is not None}
    box = [assignment_card(h) for h in HOUSES if h not in used_houses]
    box += [p for p in PRIZE_CARDS if p not in placed]
    box += [d for d in DESIGN_CARDS if d not in placed]
    lead = rat if leader is None else leader
    state = GameState(
        options=GameOptions(format=fmt, ability_trigger=trigger, refill_hands=refill),
        seats=seats,
        rat=rat,
        rat_deck=cards(rat_deck),
        prize_pool=pool,
        discard=cards(discard),
        box=box,
        trick=Trick(number=trick_number, prize=Card(prize), leader=lead),
        phase=Phase.LEAD,
        turn=lead,
        rng=12345,
    )
    state.deck_size = sum(1 for c in card_counts(state) if c.kind is CardKind.NUMBERED)
    check(state)
    return state


def cards(ids: Iterable[str]) -> list[Card]:
    """The cards of these ids, in order."""
    return [Card(i) for i in ids]


def run(state: GameState, *steps: tuple[int, Command]) -> list[Event]:
    """Apply ``(seat, command)`` steps in order; return all their events."""
    events: list[Event] = []
    for seat, cmd in steps:
        events += apply(state, seat, cmd)
        check(state)
    return events


def refused(state: GameState, seat: int, cmd: Command, code: str) -> GameError:
    """``cmd`` by ``seat`` is refused with ``code`` and changes nothing."""
    before = encode(state)
    with pytest.raises(GameError) as info:
        apply(state, seat, cmd)
    assert info.value.code == code, info.value.message
    assert encode(state) == before
    return info.value


E = TypeVar("E", bound=Event)


def of_type(events: Iterable[Event], kind: type[E]) -> list[E]:
    """The events of one kind, in order."""
    return [e for e in events if isinstance(e, kind)]


def one(events: Iterable[Event], kind: type[E]) -> E:
    """The single event of a kind."""
    found = of_type(events, kind)
    assert len(found) == 1, f"{len(found)} {kind.__name__} events"
    return found[0]
