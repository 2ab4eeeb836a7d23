"""Whose turn it is: skipping empty hands (R6.4), ending a trick and starting
the next (R8.4, R9.1)."""

from __future__ import annotations

from domain.game.events import Event, GameEnded, SeatSkipped, TrickStarted
from domain.game.resolution import collect, refill
from domain.game.scoring import end_of_game
from domain.game.state import GameState, Phase, Trick

# Enum members read on every decision, bound once: Python 3.11 reads ``Phase.LEAD``
# through EnumType's __getattr__ hook, ~70 ns each time (docs/decisions/0037).
_PLAY = Phase.PLAY
_LEAD = Phase.LEAD
_FINISHED = Phase.FINISHED


def trick_started(state: GameState) -> TrickStarted:
    """R4.5/R8.4: the Rat reveals the prize; the message window opens."""
    t = state.trick
    assert t is not None and t.prize.house is not None
    return TrickStarted(t.number, t.prize, t.prize.house, t.leader, len(state.prize_pool))


def advance(state: GameState, events: list[Event]) -> None:
    """Pass the turn clockwise, skipping empty hands (R6.4); after the last
    seat, resolve the trick (R8). [decision] A seat skipped for an empty hand
    does not play in that trick even if it receives a card later (R7.2, R7.5)."""
    trick = state.trick
    assert trick is not None
    n = len(state.seats)
    while True:
        trick.offset += 1
        if trick.offset >= n:
            _finish_trick(state, events)
            return
        seat = (trick.leader + trick.offset) % n
        if state.seats[seat].hand:
            state.phase, state.turn = _PLAY, seat
            return
        trick.skipped.append(seat)
        events.append(SeatSkipped(seat, trick.number))


def _finish_trick(state: GameState, events: list[Event]) -> None:
    """R8.2-R8.4 and R9.1."""
    number = state.trick.number if state.trick else 0
    winner = collect(state, events)
    refill(state, winner, events)
    result = end_of_game(state)
    if result is not None:
        state.outcome, state.phase = result, _FINISHED
        events.append(
            GameEnded(result.termination, result.winners, result.disqualified, result.scores)
        )
        return
    leader = next_leader(state, winner)
    state.trick = Trick(number=number + 1, prize=state.prize_pool.pop(0), leader=leader)
    state.phase, state.turn = _LEAD, leader
    events.append(trick_started(state))


def next_leader(state: GameState, winner: int) -> int:
    """R8.4: the winner leads. [decision] A winner with an empty hand hands
    the lead to the next seat clockwise that holds a card."""
    n = state.n
    for k in range(n):
        seat = (winner + k) % n
        if state.seats[seat].hand:
            return seat
    raise AssertionError("end_of_game ends a game where no seat holds a card")
