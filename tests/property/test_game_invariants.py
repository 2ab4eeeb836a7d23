"""Whole seeded games keep the structural promises and follow the rules.

Over many games (3-8 seats, every format, every abilityTrigger, refill on and
off, RANDOM and GREEDY bots mixed, random messenger traffic):

1. every card instance is in exactly one place at every step
   (``invariants.check``) and the card multiset never changes (R1.5, R4);
2. the seat to act always has a legal action, ``to_act`` is None exactly when
   the game is finished, and nobody else has any action but the Rat's
   deliver / decline in the message window (R5.2, R6.5, R7.0b);
4. every game ends within a bound (21 tricks, 3 commands per seat per trick,
   R9.1);

and, against independent readings of docs/rules.md (``oracles``): the deal (R3,
R4), the exact set of legal actions (R5.2, R6.2, R6.3, R7.1-R7.7) and message
targets (R5.1, R5.5), when abilities trigger (R7.0) and Sleepy hides plays
(R7.3), trick winners (R8.1), collection (R8.2), refill (R8.3), the next
leader (R8.4), scores (R10) and the end of the game (R9).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from hypothesis import given, settings

from domain.game.cards import PRIZE_CARDS
from domain.game.commands import DeclineMessage, DeliverMessage, SendMessage
from domain.game.engine import apply, to_act
from domain.game.events import (
    AbilityTriggered,
    CardPlayed,
    CardsDrawn,
    Event,
    GameEnded,
    TrickStarted,
    TrickWon,
)
from domain.game.invariants import card_counts, check
from domain.game.legal import legal_actions
from domain.game.messaging import message_targets
from domain.game.options import HAND_SIZE, AbilityTrigger
from domain.game.state import GameState, Phase
from domain.game.views import spectator_view
from tests.property import oracles
from tests.property.budget import count_game, examples, shards
from tests.property.harness import (
    MESSAGE_BUDGET,
    Driver,
    GameSpec,
    canon,
    game_specs,
    show,
)

MAX_TRICKS = len(PRIZE_CARDS)  # R4.4/R8.4: a prize per trick


def _check_actions(state: GameState) -> None:
    """Property 2 and the legal-action oracle, for every seat."""
    actor = to_act(state)
    assert (actor is None) == (state.phase is Phase.FINISHED)
    for seat in range(state.n):
        legal = legal_actions(state, seat)
        canonical = [canon(c) for c in legal]
        assert len(set(canonical)) == len(canonical), "an action is listed twice"
        assert set(canonical) == oracles.expected_options(state, seat), f"seat {seat}"
        if seat == actor:
            assert legal, f"seat {seat} must act but has no legal action"
        else:
            assert all(isinstance(c, DeliverMessage | DeclineMessage) for c in legal)
            assert not legal or (seat == state.rat and state.phase is Phase.LEAD)
        targets = message_targets(state, seat)
        expected = (
            [s for s in range(state.n) if s != seat] if oracles.can_message(state, seat) else []
        )
        assert targets == expected, f"message targets of seat {seat}"
    assert legal_actions(state, -1) == [] and legal_actions(state, state.n) == []


def _check_step(state: GameState, before: dict[str, Any], events: list[Event]) -> int:
    """The events of one step (as everybody sees them) against the rules;
    returns the tricks won."""
    public = [e.seen_by(None) for e in events]
    won = 0
    for i, p in enumerate(public):
        if isinstance(p, CardPlayed):
            # R7.3: face down exactly when Sleepy was active before this play
            assert p.face_down == before["sleepy"]
            assert p.face_down or p.card is not None, "a face-up play shows its card"
            # R7.0: which plays trigger their ability
            mode = state.options.ability_trigger
            fires = not p.face_down and (
                mode is AbilityTrigger.EVERY_CARD
                or p.lead
                or (mode is AbilityTrigger.LEAD_AND_RARE and p.card is not None and p.card.rare)
            )
            nxt = public[i + 1] if i + 1 < len(public) else None
            triggered = isinstance(nxt, AbilityTriggered)
            assert triggered == fires, f"trigger of {p}"
            if isinstance(nxt, AbilityTriggered):
                assert nxt.seat == p.seat
                assert nxt.card == p.card
        elif isinstance(p, TrickWon):
            won += 1
            _check_trick_won(state, before, p, public[i + 1 :])
        elif isinstance(p, CardsDrawn):
            assert state.options.refill_hands, "R8.3: no refill when refillHands is off"
    return won


def _check_trick_won(
    state: GameState, before: dict[str, Any], p: TrickWon, later: list[Event]
) -> None:
    winner = p.winner
    # R8.1
    assert oracles.trick_winner(p.plays, p.prize) == winner
    assert p.prize == before["prize"]
    for play in p.plays:
        assert play.value == oracles.play_value(play)
    # every play of the trick, in order, revealed (R7.3); passes are not plays
    cards = [play.card for play in p.plays]
    assert cards[: len(before["plays"])] == before["plays"]
    # R8.2: the winner takes the played cards and the prize, not second cards
    gained = Counter(state.seats[winner].won) - Counter(before["won"][winner])
    assert gained == Counter(cards)
    assert state.seats[winner].prizes[-1] == p.prize
    seconds = [play.second_card for play in p.plays if play.second_card]
    elsewhere = {c for s in state.seats for c in s.hand} | set(state.rat_deck)
    assert all(c in elsewhere for c in seconds), "R7.1: second cards go to the Rat Deck"
    # R10.1, R10.2
    assert list(p.scores) == [oracles.score(s) for s in state.seats]
    # R8.3: refill from the winner clockwise up to 10 while the deck lasts
    draws = [q.seat for q in later if isinstance(q, CardsDrawn)]
    if state.options.refill_hands:
        order = [(winner + k) % state.n for k in range(state.n)]
        assert draws == [s for s in order if s in draws]
        if state.rat_deck:
            assert all(len(s.hand) >= HAND_SIZE for s in state.seats)
    # R9.1, R9.2
    finished = oracles.game_over(state, before["prize_pool_size"])
    assert finished == (state.phase is Phase.FINISHED)
    if state.phase is Phase.FINISHED:
        assert state.outcome is not None
        assert (state.outcome.winners, state.outcome.disqualified) == oracles.winners(state)
        assert list(state.outcome.scores) == list(p.scores)
        ended = [q for q in later if isinstance(q, GameEnded)]
        assert len(ended) == 1 and list(ended[0].winners) == list(state.outcome.winners)
    else:  # R8.4: the winner leads (or the next seat clockwise with a card)
        started = [q for q in later if isinstance(q, TrickStarted)]
        assert len(started) == 1
        assert state.trick is not None and state.trick.prize == started[0].prize
        leader = next(
            (winner + k) % state.n
            for k in range(state.n)
            if state.seats[(winner + k) % state.n].hand
        )
        assert started[0].leader == leader == state.turn


def _before(state: GameState) -> dict[str, Any]:
    t = state.trick
    assert t is not None
    return {
        "sleepy": t.sleepy,
        "prize": t.prize,
        "prize_pool_size": len(state.prize_pool),
        "plays": [p.card for p in t.plays],
        "won": [list(s.won) for s in state.seats],
    }


def play_checked(spec: GameSpec) -> GameState:
    """Play one game, checking properties 1, 2, 4 and the oracles at every step."""
    setup = spec.new()
    state = setup.state
    oracles.check_setup(spec, state, setup.packs)
    initial = card_counts(state)
    assert set(initial.values()) == {1}
    driver = Driver(spec)
    commands = tricks = messenger = 0
    bound = 3 * spec.seats * MAX_TRICKS
    while True:
        check(state)  # property 1
        assert card_counts(state) == initial
        _check_actions(state)  # property 2
        move = driver.next(state)
        if move is None:
            break
        seat, cmd = move
        before = _before(state)
        events = apply(state, seat, cmd)
        assert events, "an accepted command always tells what happened"
        if isinstance(cmd, SendMessage | DeliverMessage | DeclineMessage):
            messenger += 1
        else:
            commands += 1
        tricks += _check_step(state, before, events)
        # property 4: bounded
        assert tricks <= MAX_TRICKS
        assert commands <= bound, "the game does not end"
        assert messenger <= 2 * MESSAGE_BUDGET * MAX_TRICKS
    assert state.phase is Phase.FINISHED and state.outcome is not None
    assert spectator_view(state).to_act is None
    count_game()
    return state


SHARDS = 4


@shards(SHARDS)
@settings(max_examples=examples(600, SHARDS))
@given(game_specs())
def test_every_game_is_sound_live_and_ends(shard: int, spec: GameSpec) -> None:
    show(spec)
    play_checked(spec)
