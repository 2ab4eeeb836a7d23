"""Refusals through the API never say where a hidden card is (R11).

Naming a card one does not hold — one in another seat's hand, in the Rat
Deck, in the prize pool, discarded, won, in the trick, a seat's house card
or the Rat card, or a card this game's deck does not hold — gives the same
``Refusal`` code and message for each mutation shape, in every state the
games below pass through: the seat to act (often with a pending ability
decision, ``abilityTrigger: EVERY_CARD``) and a seat that is not. An id that
names no card at all is refused as ``BAD_INPUT``, with a message that names
only that id. Nothing changes. The exhaustive version over every card id
runs on the engine in tests/property/test_refusals_hide_cards.py.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import pytest

import domain.game.engine
import domain.services.engine_change
from api.graphql.types.actions import mutation_and_arguments
from domain.game.cards import ASSIGNMENT_CARDS, THE_RAT, Card, is_card
from domain.game.commands import Command, PlayCard
from domain.game.engine import to_act
from domain.game.errors import IllegalAction
from domain.game.events import Event
from domain.game.legal import legal_actions
from domain.game.rng import Rng
from domain.game.state import DecisionKind, GameState
from tests.api.conftest import Client
from tests.api.support import call, mark, start
from tests.api.worlds import game_cards

Args = dict[str, Any]
Shape = tuple[str, Callable[[str], Args]]

CASES = [
    (3, "SINGLETON", "refusals-a"),
    (5, "SEALED", "refusals-b"),
    (4, "SINGLETON", "refusals-c"),
    (8, "SEALED", "refusals-d"),
]
STEPS = 60  # moves per game
CHECK_EVERY = 12  # moves between checks (and every pending decision of a kind not seen yet)
NO_CARDS = ("crazy-99", "needy-prize-4", "nothing", "crazy-0", "crazy-7#0", "", "CRAZY-7")
"""Ids that name no card: refused as BAD_INPUT, whatever the game."""
ABSENT = tuple(Card(c) for c in ("sassy-7#99", "crazy-32#40", "crazy-7", "hungry-12#1"))
"""Cards (valid ids) of which a deck may not hold some: designs under either
format's id form and instances no deck has (R1.5)."""
NO_CARD = "no card"
"""The category of :data:`NO_CARDS`."""


CATEGORIES = (
    "another hand",
    "rat deck",
    "prize pool",
    "discard",
    "won",
    "trick",
    "house card",
    "not in this game",
    NO_CARD,
)


def categories(state: GameState, seat: int) -> dict[str, Sequence[str]]:
    """Where the cards ``seat`` does not hold are; and ids of no card."""
    others = [c for i, s in enumerate(state.seats) if i != seat for c in s.hand]
    t = state.trick
    trick = [] if t is None else [t.prize, *(c for p in t.plays for c in (p.card, p.second) if c)]
    in_game = game_cards(state)
    out: dict[str, Sequence[str]] = {
        "another hand": others,
        "rat deck": list(state.rat_deck),
        "prize pool": list(state.prize_pool),
        "discard": list(state.discard),
        "won": [c for s in state.seats for c in s.won + s.prizes],
        "trick": trick,
        "house card": [*ASSIGNMENT_CARDS, THE_RAT],
        "not in this game": [c for c in ABSENT if c not in in_game],
        NO_CARD: NO_CARDS,
    }
    assert tuple(out) == CATEGORIES
    return out


def decision(kind: str, **fields: Any) -> Args:
    return {"decision": {"kind": kind, **fields}}


def shapes(state: GameState, seat: int) -> list[Shape]:
    """Mutation shapes naming one card ``x`` (``h``: a card in hand)."""
    hand = sorted(state.seats[seat].hand)
    h = hand[0] if hand else ABSENT[0]
    lo, hi = sorted(state.neighbours(seat))
    d = state.pending
    looked = list(d.cards) if d is not None and d.kind is DecisionKind.CURIOUS_ORDER else []
    return [
        ("playCard", lambda x: {"card": x}),
        ("discardAndPlay", lambda x: {"discard": x, "card": h}),
        ("discardAndPlay", lambda x: {"discard": h, "card": x}),
        ("resolveDecision", lambda x: decision("CRAZY_SECOND_CARD", card=x)),
        ("resolveDecision", lambda x: decision("HUNGRY_DISCARD", card=x)),
        ("resolveDecision", lambda x: decision("HUNGRY_TAKE", card=x)),
        ("resolveDecision", lambda x: decision("NEEDY_GIFT", card=x)),
        (
            "resolveDecision",
            lambda x: decision(
                "STINKY_GIFTS", gifts=[{"to": lo, "card": x}, {"to": hi, "card": h}]
            ),
        ),
        ("resolveDecision", lambda x: decision("CURIOUS_ORDER", cards=[x, *looked[1:]])),
    ]


def barred(state: GameState, seat: int) -> set[Card]:
    """Cards whose naming could be legal (all seen by the seat): its hand,
    the Rat Deck in its Hungry take, the looked-at cards in its Curious order."""
    out = set(state.seats[seat].hand)
    d = state.pending
    if d is not None and d.seat == seat:
        if d.kind is DecisionKind.HUNGRY_TAKE:
            out |= set(state.rat_deck)
        if d.kind is DecisionKind.CURIOUS_ORDER:
            out |= set(d.cards)
    return out


async def check_seat(
    client: Client, game_id: str, token: str, state: GameState, seat: int, rng: Rng
) -> Counter[str]:
    """One card per category for every shape: one answer per shape, and for
    the id of no card the BAD_INPUT that names only that id."""
    skip = barred(state, seat)
    picks: dict[str, str] = {}
    for where, cards in categories(state, seat).items():
        cards = [c for c in cards if c not in skip]
        if cards:
            picks[where] = cards[rng.below(len(cards))]
    for name, make in shapes(state, seat):
        answers: dict[tuple[str, str], str] = {}
        for where, card in picks.items():
            r = await call(client, token, name, gameId=game_id, **make(card))
            assert r["__typename"] == "Refusal", (seat, name, where, card, r)
            if where == NO_CARD:
                assert not is_card(card)
                no_card = ("BAD_INPUT", f"no card has the id {card!r}")
                assert (r["code"], r["message"]) == no_card, (seat, name, card, r)
            else:
                answers.setdefault((r["code"], r["message"]), f"{where}: {card!r}")
        assert len(answers) == 1, f"seat {seat}, {name} {make('X')}: {answers}"
    return Counter(picks.keys())


@pytest.mark.parametrize(("seats", "fmt", "seed"), CASES)
async def test_a_refusal_does_not_depend_on_where_the_card_is(
    client: Client, seats: int, fmt: str, seed: str
) -> None:
    tokens = [(await client.new_player(f"p{i}"))[0] for i in range(seats)]
    game_id = await start(client, tokens, seed=seed, format=fmt, abilityTrigger="EVERY_CARD")
    rng = Rng(len(seed) * 7919 + seats)
    covered: Counter[str] = Counter()
    kinds_checked: set[DecisionKind] = set()
    for step in range(STEPS):
        state = client.h.store.games[game_id].state
        assert state is not None
        actor = to_act(state)
        if actor is None:
            break
        d = state.pending
        fresh = d is not None and d.kind not in kinds_checked
        if step % CHECK_EVERY == 0 or fresh:
            if d is not None:
                kinds_checked.add(d.kind)
            before = mark(client, game_id)
            other = (actor + 1 + rng.below(seats - 1)) % seats
            for seat in (actor, other):
                covered += await check_seat(client, game_id, tokens[seat], state, seat, rng)
            assert mark(client, game_id) == before, "a refusal changed the game"
        legal = legal_actions(state, actor)
        name, args = mutation_and_arguments(legal[rng.below(len(legal))])
        r = await call(client, tokens[actor], name, gameId=game_id, **args)
        assert r["__typename"] == "GameChange", r
    for where in CATEGORIES:
        assert covered[where] > 0, f"no check named a card of {where}"
    assert kinds_checked, "no pending decision was checked"


async def test_cards_in_a_hand_the_deck_the_discard_and_nowhere_get_one_refusal(
    client: Client,
) -> None:
    """The issue's example, spelled out: playing a card held by another seat,
    one in the Rat Deck, a discarded one and one no deck holds, on one's turn;
    an id of no card is BAD_INPUT."""
    tokens = [(await client.new_player(f"p{i}"))[0] for i in range(3)]
    game_id = await start(client, tokens, seed="refusal-example", ratSeat=0)
    state = client.h.store.games[game_id].state
    assert state is not None and to_act(state) == 0
    state.discard.append(state.rat_deck.pop())  # test set-up: a discarded card
    client.h.store.games[game_id].state = state
    named = {
        "seat 1's hand": state.seats[1].hand[0],
        "seat 2's hand": state.seats[2].hand[-1],
        "the rat deck": state.rat_deck[0],
        "the discard": state.discard[0],
        "the prize pool": state.prize_pool[0],
        "no deck": Card("sassy-7#99"),
    }
    answers = {
        where: await call(client, tokens[0], "playCard", gameId=game_id, card=card)
        for where, card in named.items()
    }
    assert {(r["code"], r["message"]) for r in answers.values()} == {
        ("ILLEGAL_ACTION", "that card is not in your hand (R6.5)")
    }, answers
    r = await call(client, tokens[0], "playCard", gameId=game_id, card="crazy-99")
    assert (r["code"], r["message"]) == ("BAD_INPUT", "no card has the id 'crazy-99'"), r


async def test_a_refusal_that_names_the_rat_deck_is_caught(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check can fail: an engine that says "in the Rat Deck" is caught."""
    real = domain.game.engine.apply

    def leaky(state: GameState, seat: int, cmd: Command) -> list[Event]:
        if isinstance(cmd, PlayCard) and cmd.card in state.rat_deck:
            raise IllegalAction("that card is still in the Rat Deck")
        return real(state, seat, cmd)

    monkeypatch.setattr(domain.services.engine_change, "apply", leaky)
    tokens = [(await client.new_player(f"p{i}"))[0] for i in range(3)]
    game_id = await start(client, tokens, seed="refusal-leak", ratSeat=0)
    state = client.h.store.games[game_id].state
    assert state is not None
    with pytest.raises(AssertionError, match="playCard"):
        await check_seat(client, game_id, tokens[0], state, 0, Rng(1))
