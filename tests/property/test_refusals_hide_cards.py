"""Property: a refusal never says where a card is (R11; domain/game/errors.py
"Messages never name a card the caller cannot see").

At sampled steps of many seeded games, for the seat to act and one other
seat, every command that names a card the seat does not hold is sent once
for every such card id of the game — in another hand, in the Rat Deck or
the prize pool, discarded, won, in the trick, a house card — and for cards
this game's deck does not hold (another format's id of a design, an instance
no deck has): every one is refused, with one code and one message per
command shape, whatever the card. A card field given a plain string (any
id, of a card or of none) is refused as BAD_INPUT, with one message per
command shape, whatever the string. The state does not change.

A card the seat may see where it is does not count as hidden here only when
naming it could be accepted: the Rat Deck for its own Hungry take, the
looked-at cards for its own Curious order.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import cast

import pytest
from hypothesis import given, settings

from domain.game.cards import HOUSES, THE_RAT, Card, assignment_card
from domain.game.commands import (
    Command,
    DiscardAndPlay,
    Gift,
    GiveCard,
    GiveCards,
    HungryDiscard,
    HungryTake,
    PlayCard,
    PlaySecondCard,
    ReorderTop,
)
from domain.game.engine import apply, to_act
from domain.game.errors import GameError, IllegalAction
from domain.game.events import Event
from domain.game.rng import Rng
from domain.game.setup import new_game
from domain.game.state import DecisionKind, GameState
from infra.db.state_codec import encode
from tests.property.budget import count_game, examples
from tests.property.harness import Driver, GameSpec, game_specs, show

SAMPLE_PERCENT = 8  # steps at which the refusals are checked
NOT_IN_GAME = (Card("sassy-7#99"), Card("crazy-32#40"))  # instances no deck holds (R1.5)
NOT_CARDS = ("crazy-99", "sassy-7#0", "needy-prize-4", "nothing", "", "CRAZY-7")  # ids of no card
OTHER_FORM_STEP = 9  # one design in so many is also named in the other id form


def game_cards(state: GameState) -> set[Card]:
    """Every numbered and prize card instance of the game, wherever it is."""
    zones = [state.rat_deck, state.prize_pool, state.discard]
    zones += [z for s in state.seats for z in (s.hand, s.won, s.prizes)]
    out = {c for z in zones for c in z}
    if state.trick is not None:
        out.add(state.trick.prize)
        out |= {c for p in state.trick.plays for c in (p.card, p.second) if c}
    return out


Shape = Callable[[Card], Command]


def shapes(state: GameState, seat: int) -> dict[str, tuple[Shape, frozenset[Card]]]:
    """Each command shape naming one card ``x``, with the cards ``x`` may not
    be (those that could make it legal, all of which the seat sees)."""
    hand = sorted(state.seats[seat].hand)
    mine = frozenset(hand)
    h = hand[0] if hand else NOT_IN_GAME[0]
    lo, hi = sorted(state.neighbours(seat))
    d = state.pending if state.pending is not None and state.pending.seat == seat else None
    kind = None if d is None else d.kind
    deck = frozenset(state.rat_deck) if kind is DecisionKind.HUNGRY_TAKE else frozenset()
    looked = tuple(d.cards) if d is not None and kind is DecisionKind.CURIOUS_ORDER else ()
    return {
        "play": (PlayCard, mine),
        "discard x, play h": (lambda x: DiscardAndPlay(x, h), mine),
        "discard h, play x": (lambda x: DiscardAndPlay(h, x), mine),
        "discard x, play x": (lambda x: DiscardAndPlay(x, x), mine),
        "second card": (PlaySecondCard, mine),
        "hungry discard": (HungryDiscard, mine),
        "hungry take": (HungryTake, deck),
        "needy gift": (GiveCard, mine),
        "stinky x, h": (lambda x: GiveCards((Gift(lo, x), Gift(hi, h))), mine),
        "stinky h, x": (lambda x: GiveCards((Gift(lo, h), Gift(hi, x))), mine),
        "stinky x": (lambda x: GiveCards((Gift(lo, x),)), mine),
        "curious": (lambda x: ReorderTop((x, *looked[1:])), frozenset(looked)),
    }


def every_id(state: GameState) -> list[Card]:
    """Every card of this game and some cards its deck does not hold: designs
    under the id form of another format (``crazy-7`` in a sealed game,
    ``crazy-7#1`` in a singleton one) and instances no deck has."""
    cards = game_cards(state)
    house_cards = [assignment_card(h) for h in HOUSES] + [THE_RAT]
    other_form = {Card(c.design) if "#" in c else Card(f"{c}#1") for c in cards if c.numbered}
    absent = sorted(other_form - cards)[::OTHER_FORM_STEP]
    return sorted(cards) + house_cards + absent + list(NOT_IN_GAME)


def check_refusals(state: GameState, seat: int) -> None:
    ids = every_id(state)
    strings = [*NOT_CARDS, *(str(c) for c in ids)]  # plain strings, not cards
    for name, (shape, barred) in shapes(state, seat).items():
        answers: dict[tuple[str, str], str] = {}
        for x in ids:
            if x in barred:
                continue
            try:
                apply(state, seat, shape(x))
            except GameError as e:
                answers.setdefault((e.code.value, e.message), x)
            else:
                raise AssertionError(f"seat {seat}: {name} with {x} was accepted")
        assert len(answers) == 1, f"seat {seat}, {name}: the refusal depends on the card: {answers}"
        refusals: dict[tuple[str, str], str] = {}
        for plain in strings:
            try:
                apply(state, seat, shape(cast(Card, plain)))  # a str where a Card goes
            except GameError as e:
                refusals.setdefault((e.code.value, e.message), plain)
            else:
                raise AssertionError(f"seat {seat}: {name} with the string {plain!r} was accepted")
        assert len(refusals) == 1, f"seat {seat}, {name}: the refusal depends on the id: {refusals}"
        assert {code for code, _ in refusals} == {"BAD_INPUT"}, f"seat {seat}, {name}: {refusals}"


@settings(max_examples=examples(16))
@given(game_specs(chatter=(0, 25)))
def test_a_refusal_is_the_same_for_every_card_not_in_hand(spec: GameSpec) -> None:
    show(spec)
    setup = spec.new()
    state = setup.state
    rng = Rng(spec.driver_seed ^ 0x0E770125)
    driver = Driver(spec)
    while (move := driver.next(state)) is not None:
        if rng.below(100) < SAMPLE_PERCENT:
            before = encode(state)
            actor = to_act(state)
            assert actor is not None
            check_refusals(state, actor)
            check_refusals(state, (actor + 1 + rng.below(state.n - 1)) % state.n)
            assert encode(state) == before, "a refused command changed the game"
        apply(state, *move)
    count_game()


def test_a_refusal_that_depends_on_the_card_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check can fail: an engine whose message differs for a card held by
    another seat is caught."""
    real = apply

    def leaky(state: GameState, seat: int, cmd: Command) -> list[Event]:
        card = getattr(cmd, "card", None)
        if any(card in s.hand for i, s in enumerate(state.seats) if i != seat):
            raise IllegalAction("another seat holds that card")
        return real(state, seat, cmd)

    monkeypatch.setattr(sys.modules[__name__], "apply", leaky)
    state = new_game(3, "refusal-leak", rat=0).state
    with pytest.raises(AssertionError, match="depends on the card"):
        check_refusals(state, 0)
