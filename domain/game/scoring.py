"""Scoring (R10) and the end of the game (R9)."""

from __future__ import annotations

from functools import lru_cache

from domain.game.cards import HOUSES, PRIZES_PER_HOUSE, Card
from domain.game.state import GameState, Outcome, SeatState, Termination

_SLOTS = len(HOUSES) + 1  # a slot per house, and one for cards of none (index -1)
_PILES_KEPT = 1024  # scored piles kept: 8 seats' piles of 128 games at once


def score(seat: SeatState) -> int:
    """R10.1: 10 / 5 / 1 per won numbered card by prizes held of its house."""
    return pile_score(tuple(seat.won), tuple(seat.prizes))


@lru_cache(maxsize=_PILES_KEPT)
def pile_score(won: tuple[Card, ...], prizes: tuple[Card, ...]) -> int:
    """R10.1 for a won pile and a prize row. A pure function of the cards,
    kept for the last piles seen: a pile changes only when its seat wins a
    trick, and every trick's end and every view score all seats.

    Houses are counted by their index (``Card.house_index``, -1 for no house,
    which lands in the last slot): hashing an Enum member runs Python code."""
    held = [0] * _SLOTS
    for p in prizes:
        held[p.house_index] += 1
    points = [10 if k >= PRIZES_PER_HOUSE else 5 if k else 1 for k in held]
    return sum([points[card.house_index] for card in won])


def scores(state: GameState) -> tuple[int, ...]:
    """R10.2: every seat's current score."""
    return tuple(
        [
            pile_score(tuple(s.won), tuple(s.prizes)) if s.prizes else len(s.won)  # all 1s
            for s in state.seats
        ]
    )


def holds_all_houses(seat: SeatState) -> bool:
    """R9.1: prize cards of all 7 houses (counted by house index, as :func:`score`)."""
    return len({p.house_index for p in seat.prizes}) == len(HOUSES)


def end_of_game(state: GameState) -> Outcome | None:
    """R9.1-R9.2: the outcome if the game ends after this trick, else None."""
    complete = [
        i  # fewer prize cards than houses cannot hold them all
        for i, s in enumerate(state.seats)
        if len(s.prizes) >= len(HOUSES) and holds_all_houses(s)
    ]
    if complete:
        termination = (
            Termination.RAT_ALL_HOUSES
            if state.rat in complete
            else Termination.HOUSE_PLAYER_ALL_HOUSES
        )
    elif not state.prize_pool:
        termination = Termination.PRIZE_POOL_EMPTY
    elif not any(s.hand for s in state.seats):
        termination = Termination.NO_CARDS_LEFT
    else:
        return None
    return outcome(state, termination, complete)


def outcome(state: GameState, termination: Termination, complete: list[int]) -> Outcome:
    """R9.2: the Rat with all houses wins outright; a house player with all
    houses is out of the ranking; otherwise the best score wins, ties share."""
    pts = scores(state)
    if termination is Termination.RAT_ALL_HOUSES:
        return Outcome(termination, (state.rat,), (), pts)
    out = tuple(complete)
    ranked = [i for i in range(len(pts)) if i not in out]
    best = max(pts[i] for i in ranked)
    return Outcome(termination, tuple(i for i in ranked if pts[i] == best), out, pts)
