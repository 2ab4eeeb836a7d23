"""Resolving a trick (R8.1-R8.3)."""

from __future__ import annotations

from domain.game.cards import sorted_cards
from domain.game.events import CardsDrawn, Event, TrickWon, WonPlay
from domain.game.options import HAND_SIZE
from domain.game.scoring import scores
from domain.game.state import GameState, Play, Trick


def play_value(play: Play) -> int:
    """R7.1: a play's value is its card's, plus a Crazy second card's."""
    v = play.card.value
    return v + play.second.value if play.second else v


def winning_play(trick: Trick) -> Play:
    """R8.1: highest trump play, else highest lead-suit play; ties: earliest."""
    trump = trick.prize.house
    lead = trick.plays[0].card.house
    best: Play | None = None
    best_key = (-1, -1)
    for p in trick.plays:
        house = p.card.house
        rank = 1 if house is trump else 0 if house is lead else -1
        if rank < 0:
            continue
        key = (rank, play_value(p))
        if key > best_key:  # strictly greater: the earlier play keeps a tie
            best, best_key = p, key
    assert best is not None  # the lead play always qualifies
    return best


def collect(state: GameState, events: list[Event]) -> int:
    """R8.2: the winner takes the plays and the prize; Crazy second cards go to
    the bottom of the Rat Deck (R7.1). Returns the winner."""
    trick = state.trick
    assert trick is not None
    win = winning_play(trick)
    winner = state.seats[win.seat]
    plays = trick.plays
    winner.won.extend([p.card for p in plays])
    seconds = [p.second for p in plays if p.second]
    if seconds:
        state.rat_deck.extend(seconds)
    winner.prizes.append(trick.prize)
    shown = tuple([WonPlay(p.seat, p.card, p.second, play_value(p)) for p in plays])
    events.append(
        TrickWon(trick.number, win.seat, trick.prize, shown, tuple(trick.passes), scores(state))
    )
    state.trick = None
    return win.seat


def refill(state: GameState, winner: int, events: list[Event]) -> None:
    """R8.3: from the winner clockwise, draw up to 10 while the deck lasts.
    [decision] It runs after the last trick too, before the end check (R9.1):
    hands do not score, so it changes no outcome."""
    deck = state.rat_deck
    if not state.options.refill_hands or not deck:  # an empty deck: nobody draws
        return
    seats = state.seats
    n = len(seats)
    for k in range(n):
        seat = (winner + k) % n
        hand = seats[seat].hand
        want = min(HAND_SIZE - len(hand), len(deck))
        if want <= 0:
            continue
        drawn = deck[:want]
        del deck[:want]
        hand.extend(drawn)
        cards = tuple(drawn) if want == 1 else tuple(sorted_cards(drawn))  # one needs no sort
        events.append(CardsDrawn(seat, want, len(deck), cards))
