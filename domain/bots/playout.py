"""EXPERT's playouts: a fast GREEDY on a determinized state, and the value
of a position where a playout stops.

:func:`policy` makes :mod:`domain.bots.greedy`'s exact move (ties broken
as GREEDY's canonically listed legal moves break them; a unit test compares
the two), but reads the sampled state directly (no view, no legal-action
list): a playout only ever runs inside one of EXPERT's own
determinizations. It looks at a seat's own hand and the trick as that seat
sees it (a face-down play counts as a strong lead-suit play, R7.3), as
GREEDY does.

:func:`value` is in [0, 1]: a finished game pays 1/k to each of k winners
(R9.2); otherwise each seat's final score is estimated (R10: its score now, plus,
at what a won card is worth to it given its prize row, the tricks left and
the tricks its hand may still win) and the seat's share of a softmax over
the estimates is its value. A house player holding all 7 houses is out of
the ranking (R9.2) once the game ends; the playout policy avoids the 7th.
"""

from __future__ import annotations

import math

from domain.game.cards import HOUSES, PRIZES_PER_HOUSE, Card, House, sorted_cards
from domain.game.commands import (
    ChooseNeighbour,
    Command,
    DiscardAndPlay,
    Gift,
    GiveCard,
    GiveCards,
    HungryDiscard,
    HungryTake,
    Pass,
    PlayCard,
    PlaySecondCard,
    ReorderTop,
)
from domain.game.follow import playable
from domain.game.resolution import play_value
from domain.game.scoring import pile_score
from domain.game.state import DecisionKind, GameState, Trick

_HOUSES = len(HOUSES)
_SASSY = House.SASSY
_FACE_DOWN = (0, 29)  # GREEDY's guess at a face-down play: a strong lead-suit card
_STRENGTH = [(v / 32) ** 3 for v in range(64)]  # a card's chance to win a trick, roughly
_RANKS_KEPT = 20_000


def _value(card: Card) -> int:
    return card.value


class _Ranks(dict[Card, str]):
    """A card's place by value, ties in canonical order (R1.1): GREEDY's
    order, which sorts its legal moves (listed canonically) by value,
    stably. Kept per card as one string (``chr`` of the value, then the
    canonical ``order_text``): compared in C. Forgotten when it holds
    ``_RANKS_KEPT`` cards (sealed games bring new instance ids)."""

    def __missing__(self, card: Card) -> str:
        if len(self) >= _RANKS_KEPT:
            self.clear()
        key = self[card] = chr(0x41 + card.value) + card.order_text
        return key


_RANKS = _Ranks()
_rank = _RANKS.__getitem__


def prize_helps(state: GameState, seat: int) -> bool:
    """GREEDY's test: every prize helps but a house player's 7th house (R9.2)."""
    trick = state.trick
    prizes = state.seats[seat].prizes
    if trick is None or seat == state.rat or len(prizes) < _HOUSES - 1:
        return True
    held = {p.house_index for p in prizes}
    return not (len(held) == _HOUSES - 1 and trick.prize.house_index not in held)


def _best(trick: Trick, seat: int) -> tuple[int, int]:
    """(rank, value) of the strongest play ``seat`` can see (R8.1)."""
    best = (-1, -1)
    trump = trick.prize.house
    lead = trick.plays[0].card.house
    for p in trick.plays:
        if p.face_down and p.seat != seat:
            best = max(best, _FACE_DOWN)
            continue
        house = p.card.house
        rank = 1 if house is trump else 0 if house is lead else -1
        if rank >= 0:
            best = max(best, (rank, play_value(p)))
    return best


def _beats(card: Card, trick: Trick, best: tuple[int, int]) -> bool:
    house = card.house
    lead = trick.plays[0].card.house if trick.plays else house
    rank = 1 if house is trick.prize.house else 0 if house is lead else -1
    return rank >= 0 and (rank, card.value) > best


def _play(state: GameState, seat: int, trick: Trick, cards: list[Card]) -> Card:
    if prize_helps(state, seat):
        if not trick.plays:  # leading: the strongest trump, else the strongest card
            trump = trick.prize.house
            trumps = [c for c in cards if c.house is trump]
            return max(trumps or cards, key=_rank)
        best = _best(trick, seat)
        wins = [c for c in cards if _beats(c, trick, best)]
        if wins:
            return min(wins, key=_rank)  # the cheapest winning card
    return min(cards, key=_rank)


def policy(state: GameState, seat: int) -> Command:
    """GREEDY's move for ``seat`` (the seat to act) in ``state``."""
    d = state.pending
    hand = state.seats[seat].hand
    if d is None:
        trick = state.trick
        assert trick is not None
        cards = playable(hand, trick)
        if cards:
            return PlayCard(_play(state, seat, trick, cards))
        if len(hand) >= 2 and prize_helps(state, seat):  # R7.7: stuck under Sassy
            best = _best(trick, seat)
            ordered = sorted_cards(hand)
            pick: tuple[int, int] | None = None
            move: DiscardAndPlay | None = None
            for x in ordered:  # GREEDY's min over its listing (discard, then card)
                for c in ordered:
                    if x != c and _beats(c, trick, best):
                        key = (c.value, x.value)
                        if pick is None or key < pick:
                            pick, move = key, DiscardAndPlay(x, c)
            if move is not None:
                return move
        return Pass()
    return _decide(state, seat, d.kind, hand)


def _first_max(cards: list[Card]) -> Card:
    """The highest value, the first in canonical order of equals."""
    top = max([c.value for c in cards])
    return min([c for c in cards if c.value == top], key=_rank)


def _decide(state: GameState, seat: int, kind: DecisionKind, hand: list[Card]) -> Command:
    """GREEDY's answer: its max / min over its legal listing (canonical order,
    the first of equals)."""
    if kind is DecisionKind.CRAZY_SECOND_CARD:
        if prize_helps(state, seat):
            return PlaySecondCard(_first_max(hand))
        return PlaySecondCard(min(hand, key=_rank))
    if kind is DecisionKind.HUNGRY_DISCARD:
        return HungryDiscard(min(hand, key=_rank))
    if kind is DecisionKind.HUNGRY_TAKE:
        return HungryTake(_first_max(state.rat_deck))
    if kind is DecisionKind.NEEDY_GIFT:
        return GiveCard(min(hand, key=_rank))
    if kind is DecisionKind.NEEDY_NEIGHBOUR:
        seats = sorted(set(state.neighbours(seat)))
        return ChooseNeighbour(max(seats, key=lambda s: len(state.seats[s].hand)))
    if kind is DecisionKind.STINKY_GIFTS:
        to = sorted(set(state.neighbours(seat)))
        if len(hand) == 1:
            return GiveCards((Gift(to[0], hand[0]),))
        ordered = sorted_cards(hand)
        low = sorted(c.value for c in hand)
        least = low[0] + low[1]
        x, y = next(
            (x, y)
            for x in ordered
            for y in ordered
            if x != y and x.value + y.value == least  # GREEDY's first cheapest pair
        )
        return GiveCards((Gift(to[0], x), Gift(to[1], y)))
    assert state.pending is not None
    return ReorderTop(tuple(sorted_cards(state.pending.cards)))  # Curious: keep the order


def estimates(state: GameState, per_trick: float, hand: float) -> list[float]:
    """Each seat's estimated final score (R10): now, plus the mean worth of
    a won card given its prize row times ``per_trick`` x the tricks left
    and ``hand`` x the tricks its hand may win (a card of value v: (v/32)^3)
    x the cards a trick brings."""
    left = len(state.prize_pool) + (state.trick is not None)
    n = len(state.seats)
    out = []
    for s in state.seats:
        held = [0] * _HOUSES
        for p in s.prizes:
            held[p.house_index] += 1
        worth = sum(10 if k >= PRIZES_PER_HOUSE else 5 if k else 1 for k in held) / _HOUSES
        strength = sum([_STRENGTH[c.value] for c in s.hand]) * n if hand else 0.0
        future = per_trick * left + hand * strength
        out.append(pile_score(tuple(s.won), tuple(s.prizes)) + future * worth)
    return out


def value(
    state: GameState, seat: int, per_trick: float, temperature: float, hand: float = 0.0
) -> float:
    """``seat``'s value of ``state`` in [0, 1] (module docstring)."""
    o = state.outcome
    if o is not None:
        return 1 / len(o.winners) if seat in o.winners else 0.0
    est = estimates(state, per_trick, hand)
    top = max(est)
    weights = [math.exp((e - top) / temperature) for e in est]
    return weights[seat] / sum(weights)
