"""Applying a command (R5-R9): check everything, then change the state.

:func:`apply` is the only way a game moves on. A refused command raises a
:class:`GameError` before any change, so the state is left exactly as it was.
"""

from __future__ import annotations

from typing import get_args

from domain.game import messaging
from domain.game.abilities import trigger, triggers
from domain.game.cards import Card, House, sorted_pile
from domain.game.choices import choices_with_hand
from domain.game.command_check import check_command
from domain.game.commands import (
    Command,
    DecisionCommand,
    DeclineMessage,
    DeliverMessage,
    DiscardAndPlay,
    Pass,
    PlayCard,
    SendMessage,
)
from domain.game.decisions import answer
from domain.game.errors import BadInput, GameFinished, IllegalAction, NotYourTurn
from domain.game.events import (
    ActionRequired,
    CardDiscarded,
    CardPlayed,
    Event,
    Passed,
)
from domain.game.follow import playable
from domain.game.state import GameState, Phase, Play
from domain.game.turns import advance

# Enum members read on every decision, bound once: Python 3.11 reads ``Phase.LEAD``
# through EnumType's __getattr__ hook, ~70 ns each time (docs/decisions/0037).
_FINISHED = Phase.FINISHED
_DECISION = Phase.DECISION
_SASSY = House.SASSY

DECISION_COMMANDS = get_args(DecisionCommand)


def apply(state: GameState, seat: int, cmd: Command) -> list[Event]:
    """Apply ``cmd`` for ``seat``; return the events, or raise and change nothing."""
    if type(seat) is not int or not 0 <= seat < len(state.seats):  # is_seat_number
        raise BadInput("not a seat of this game")
    check_command(cmd)
    if state.phase is _FINISHED:
        raise GameFinished("the game is over (R9.3)")
    events: list[Event] = []
    if type(cmd) is PlayCard:  # the common command first (a subclass takes the long way)
        _check_turn(state, seat)
        _play_card(state, seat, cmd.card, events)
    elif isinstance(cmd, SendMessage):
        messaging.send(state, seat, cmd.to, cmd.text, events)
    elif isinstance(cmd, DeliverMessage):
        messaging.deliver(state, seat, cmd.message_id, events)
    elif isinstance(cmd, DeclineMessage):
        messaging.decline(state, seat, cmd.message_id, events)
    elif isinstance(cmd, DECISION_COMMANDS):
        d = state.pending
        if d is None:
            raise IllegalAction("no decision is pending")
        if d.seat != seat:
            raise NotYourTurn(f"seat {d.seat} must decide first (R7.0b)")
        answer(state, d, cmd, events)
        if state.pending is None:
            advance(state, events)
    elif isinstance(cmd, PlayCard | Pass | DiscardAndPlay):
        _check_turn(state, seat)
        _trick_command(state, seat, cmd, events)
    else:
        raise BadInput(f"unknown command {type(cmd).__name__}")
    state.version += 1
    if (waiting := awaiting(state)) is not None:
        events.append(waiting)
    return events


def _check_turn(state: GameState, seat: int) -> None:
    if state.phase is _DECISION:
        assert state.pending is not None
        if state.pending.seat == seat:
            raise IllegalAction("answer your pending decision first (R7.0b)")
        raise NotYourTurn(f"seat {state.pending.seat} must decide first (R7.0b)")
    if seat != state.turn:
        raise NotYourTurn(f"it is seat {state.turn}'s turn (R6.5)")


def _play_card(state: GameState, seat: int, card: Card, events: list[Event]) -> None:
    """A PlayCard's checks (R6.3, R6.5, R7.7), the one place they are made,
    without listing the playable cards."""
    trick = state.trick
    assert trick is not None
    hand = state.seats[seat].hand
    if card not in hand:
        raise IllegalAction("that card is not in your hand (R6.5)")
    if trick.plays:
        house = card.house
        if trick.sassy:  # R7.7: a Sassy card if the seat holds one
            if house is not _SASSY:
                if any(c.house is _SASSY for c in hand):
                    raise IllegalAction("you must play a Sassy card (R7.7)")
                raise IllegalAction("you hold no Sassy card: pass, or discard and play (R7.7)")
        else:  # R6.3: follow the lead suit if the seat can
            suit = trick.plays[0].card.house
            if house is not suit and any(c.house is suit for c in hand):
                raise IllegalAction(
                    f"you must follow the lead suit {suit.value if suit else ''} (R6.3)"
                )
    _play(state, seat, card, events)


def _trick_command(
    state: GameState, seat: int, cmd: PlayCard | Pass | DiscardAndPlay, events: list[Event]
) -> None:
    if isinstance(cmd, PlayCard):  # a subclass of PlayCard: the one check of a play
        _play_card(state, seat, cmd.card, events)
        return
    trick = state.trick
    assert trick is not None
    hand = state.seats[seat].hand
    stuck = bool(trick.plays) and trick.sassy and not playable(hand, trick)  # R7.7
    if not stuck:
        raise IllegalAction(
            "only a seat under Sassy with no Sassy card may pass or discard to play (R7.7)"
        )
    if isinstance(cmd, Pass):
        trick.passes.append(seat)
        events.append(Passed(seat, trick.number))
        advance(state, events)
        return
    if cmd.discard not in hand or cmd.card not in hand:
        raise IllegalAction("both cards must be in your hand (R7.7)")
    if cmd.discard == cmd.card:
        raise IllegalAction("discard one card and play another (R7.7)")
    hand.remove(cmd.discard)
    state.discard.append(cmd.discard)
    events.append(CardDiscarded(seat, cmd.discard, House.SASSY))
    _play(state, seat, cmd.card, events)


def _play(state: GameState, seat: int, card: Card, events: list[Event]) -> None:
    """Put ``card`` into the trick (R6), then trigger its ability (R7.0)."""
    trick = state.trick
    assert trick is not None
    led = not trick.plays
    if led:
        messaging.expire(state, events)  # R5.3
    state.seats[seat].hand.remove(card)
    face_down = trick.sleepy  # R7.3
    play = Play(seat, card, face_down)
    trick.plays.append(play)
    events.append(CardPlayed(seat, trick.number, led, card, face_down))
    if triggers(state, play, led):
        trigger(state, play, events)
    if state.pending is None:
        advance(state, events)


def awaiting(state: GameState) -> ActionRequired | None:
    """What the game waits for now: the seat to act, with its hand and
    choices (None once finished)."""
    phase = state.phase
    if phase is _FINISHED:
        return None
    d = state.pending
    seat = state.turn if d is None else d.seat  # to_act
    hand = sorted_pile(tuple(state.seats[seat].hand))
    return ActionRequired(seat, phase, hand, choices_with_hand(state, seat, hand))


def to_act(state: GameState) -> int | None:
    """The seat the game waits for (None once finished)."""
    if state.phase is _FINISHED:
        return None
    if state.pending is not None:
        return state.pending.seat
    return state.turn
