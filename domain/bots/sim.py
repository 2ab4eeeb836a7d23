"""A lean copy of the engine for EXPERT's playouts: :func:`step` changes a
(determinized) :class:`GameState` exactly as :func:`domain.game.engine.apply`
does for a legal command, but checks nothing and builds no events, no
``ActionRequired`` and no choice lists.

It follows R6-R9 move for move: a play (R6, face down under Sleepy R7.3),
its trigger (R7.0) and ability decisions (R7.1-R7.7), passing the turn
(R6.4), resolving and refilling (R8), the end check and the outcome (R9),
and the R5.3 message expiry. tests/unit/test_expert_bot.py compares it with
``apply`` on many random games, every option (R7.0 trigger, R8.3 refill).

[decision] Only legal commands may be given: an illegal one leaves the
state corrupt instead of raising (the engine stays the referee).
"""

from __future__ import annotations

from domain.game.abilities import CURIOUS_LOOK
from domain.game.cards import HOUSES, Card, House
from domain.game.commands import (
    ChooseNeighbour,
    Command,
    DiscardAndPlay,
    GiveCard,
    GiveCards,
    HungryDiscard,
    HungryTake,
    PlayCard,
    PlaySecondCard,
    ReorderTop,
)
from domain.game.options import HAND_SIZE, AbilityTrigger
from domain.game.scoring import end_of_game
from domain.game.state import Decision, DecisionKind, GameState, MessageStatus, Phase, Play, Trick

_EVERY_CARD = AbilityTrigger.EVERY_CARD
_LEAD_ONLY = AbilityTrigger.LEAD_ONLY
_CRAZY = House.CRAZY
_STINKY = House.STINKY
_SLEEPY = House.SLEEPY
_HUNGRY = House.HUNGRY
_NEEDY = House.NEEDY
_CURIOUS = House.CURIOUS
_SASSY = House.SASSY
_PLAY = Phase.PLAY
_LEAD = Phase.LEAD
_DECISION = Phase.DECISION
_FINISHED = Phase.FINISHED
_PENDING = MessageStatus.PENDING
_EXPIRED = MessageStatus.EXPIRED
_CRAZY_SECOND_CARD = DecisionKind.CRAZY_SECOND_CARD
_STINKY_GIFTS = DecisionKind.STINKY_GIFTS
_HUNGRY_DISCARD = DecisionKind.HUNGRY_DISCARD
_HUNGRY_TAKE = DecisionKind.HUNGRY_TAKE
_NEEDY_NEIGHBOUR = DecisionKind.NEEDY_NEIGHBOUR
_NEEDY_GIFT = DecisionKind.NEEDY_GIFT
_CURIOUS_ORDER = DecisionKind.CURIOUS_ORDER
_HOUSES = len(HOUSES)


def step(state: GameState, seat: int, cmd: Command) -> None:
    """Apply the legal ``cmd`` of ``seat`` (module docstring)."""
    if isinstance(cmd, PlayCard):  # the common command first
        _play(state, seat, cmd.card)
    elif state.pending is not None:
        d = state.pending
        state.pending = None
        _answer(state, d, cmd)
        if state.pending is None:
            _advance(state)
    elif isinstance(cmd, DiscardAndPlay):
        state.seats[seat].hand.remove(cmd.discard)
        state.discard.append(cmd.discard)
        _play(state, seat, cmd.card)
    else:  # R7.7: Pass
        trick = state.trick
        assert trick is not None
        trick.passes.append(seat)
        _advance(state)
    state.version += 1


def _play(state: GameState, seat: int, card: Card) -> None:
    trick = state.trick
    assert trick is not None
    led = not trick.plays
    if led and state.messages:  # R5.3
        for m in state.messages:
            if m.status is _PENDING:
                m.status = _EXPIRED
    hand = state.seats[seat].hand
    hand.remove(card)
    face_down = trick.sleepy
    trick.plays.append(Play(seat, card, face_down))
    if not face_down:  # R7.0
        mode = state.options.ability_trigger
        if mode is _EVERY_CARD or led or (mode is not _LEAD_ONLY and card.value >= 30):
            house = card.house
            kind: DecisionKind | None = None
            if house is _CRAZY:
                if hand:
                    kind = _CRAZY_SECOND_CARD
            elif house is _STINKY:
                if hand:
                    kind = _STINKY_GIFTS
            elif house is _SLEEPY:
                trick.sleepy = True
            elif house is _HUNGRY:
                if hand and state.rat_deck:
                    kind = _HUNGRY_DISCARD
            elif house is _NEEDY:
                n = len(state.seats)
                if state.seats[(seat - 1) % n].hand or state.seats[(seat + 1) % n].hand:
                    kind = _NEEDY_NEIGHBOUR
            elif house is _CURIOUS:
                if state.rat_deck:
                    state.pending = Decision(
                        _CURIOUS_ORDER, seat, seat, state.rat_deck[:CURIOUS_LOOK]
                    )
                    state.phase = _DECISION
                    return
            elif house is _SASSY:
                trick.sassy = True
            if kind is not None:
                state.pending = Decision(kind, seat, seat)
                state.phase = _DECISION
                return
    _advance(state)


def _answer(state: GameState, d: Decision, cmd: Command) -> None:
    seats = state.seats
    hand = seats[d.seat].hand
    kind = d.kind
    if kind is _CRAZY_SECOND_CARD:
        assert isinstance(cmd, PlaySecondCard)
        trick = state.trick
        assert trick is not None
        hand.remove(cmd.card)
        trick.plays[-1].second = cmd.card
    elif kind is _STINKY_GIFTS:
        assert isinstance(cmd, GiveCards)
        for g in sorted(cmd.gifts, key=lambda g: g.to):
            hand.remove(g.card)
            seats[g.to].hand.append(g.card)
    elif kind is _HUNGRY_DISCARD:
        assert isinstance(cmd, HungryDiscard)
        hand.remove(cmd.card)
        state.discard.append(cmd.card)
        state.pending, state.phase = Decision(_HUNGRY_TAKE, d.seat, d.source), _DECISION
    elif kind is _HUNGRY_TAKE:
        assert isinstance(cmd, HungryTake)
        state.rat_deck.remove(cmd.card)
        hand.append(cmd.card)
    elif kind is _NEEDY_NEIGHBOUR:
        assert isinstance(cmd, ChooseNeighbour)
        if seats[cmd.seat].hand:
            state.pending = Decision(_NEEDY_GIFT, cmd.seat, d.seat)
            state.phase = _DECISION
    elif kind is _NEEDY_GIFT:
        assert isinstance(cmd, GiveCard)
        hand.remove(cmd.card)
        seats[d.source].hand.append(cmd.card)
    else:  # R7.6
        assert isinstance(cmd, ReorderTop)
        state.rat_deck[: len(d.cards)] = list(cmd.cards)


def _advance(state: GameState) -> None:
    """R6.4, then R8 and R9 after the last seat (engine's ``turns.advance``)."""
    trick = state.trick
    assert trick is not None
    seats = state.seats
    n = len(seats)
    while True:
        trick.offset += 1
        if trick.offset >= n:
            _finish(state, trick)
            return
        seat = (trick.leader + trick.offset) % n
        if seats[seat].hand:
            state.phase, state.turn = _PLAY, seat
            return
        trick.skipped.append(seat)


def winner_of(trick: Trick) -> int:
    """R8.1: the seat of the highest trump play, else lead-suit play; ties: earliest."""
    plays = trick.plays
    trump = trick.prize.house
    lead = plays[0].card.house
    best_seat, best_rank, best_value = plays[0].seat, -1, -1
    for p in plays:
        house = p.card.house
        if house is trump:
            rank = 1
        elif house is lead:
            rank = 0
        else:
            continue
        v = p.card.value
        if p.second:
            v += p.second.value
        if rank > best_rank or (rank == best_rank and v > best_value):
            best_seat, best_rank, best_value = p.seat, rank, v
    return best_seat


def _finish(state: GameState, trick: Trick) -> None:
    seats = state.seats
    n = len(seats)
    winner = winner_of(trick)
    w = seats[winner]
    plays = trick.plays
    w.won.extend([p.card for p in plays])
    deck = state.rat_deck
    for p in plays:
        if p.second:
            deck.append(p.second)  # R7.1
    w.prizes.append(trick.prize)
    state.trick = None
    if state.options.refill_hands and deck:  # R8.3
        for k in range(n):
            hand = seats[(winner + k) % n].hand
            want = HAND_SIZE - len(hand)
            if want > 0:
                hand.extend(deck[:want])
                del deck[:want]
                if not deck:
                    break
    # R9.1: only the winner's prize row changed (an earlier complete row ended the game)
    leader = -1
    for k in range(n):
        if seats[(winner + k) % n].hand:
            leader = (winner + k) % n  # R8.4
            break
    if len(w.prizes) >= _HOUSES or not state.prize_pool or leader < 0:
        result = end_of_game(state)
        if result is not None:
            state.outcome, state.phase = result, _FINISHED
            return
    state.trick = Trick(number=trick.number + 1, prize=state.prize_pool.pop(0), leader=leader)
    state.phase, state.turn = _LEAD, leader
