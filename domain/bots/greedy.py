"""GREEDY: win a trick cheaply when the prize helps, dump low cards otherwise.

It reads only the seat's view (R11): its hand, the public trick, prize rows.
"""

from __future__ import annotations

from collections.abc import Sequence

from domain.game.cards import HOUSES, Card
from domain.game.commands import (
    ChooseNeighbour,
    Command,
    DeclineMessage,
    DeliverMessage,
    DiscardAndPlay,
    GiveCard,
    GiveCards,
    HungryDiscard,
    HungryTake,
    Pass,
    PlayCard,
    PlaySecondCard,
)
from domain.game.rng import Rng
from domain.game.views import PlayerView, TrickView


def _value(card: Card) -> int:
    return card.value


def prize_helps(view: PlayerView) -> bool:
    """Every prize helps, except the 7th house for a house player (R9.2)."""
    trick = view.public.trick
    me = view.public.seats[view.seat]
    if trick is None or me.is_rat:
        return True
    held = {p.house for p in me.prizes}
    return not (len(held) == len(HOUSES) - 1 and trick.prize.house not in held)


def _beats(card: Card, trick: TrickView, best: tuple[int, int]) -> bool:
    """Would ``card`` (rank, value) beat the best visible play? (R8.1)"""
    house = card.house
    lead = trick.lead_suit or house
    rank = 1 if house is trick.trump else 0 if house is lead else -1
    return rank >= 0 and (rank, _value(card)) > best


def _best_visible(trick: TrickView) -> tuple[int, int]:
    """(rank, value) of the strongest face-up play; a face-down play counts as
    a strong lead-suit play, since it may be one."""
    best = (-1, -1)
    lead = trick.lead_suit
    for p in trick.plays:
        if p.card is None:
            best = max(best, (0, 29))
            continue
        house = p.card.house
        rank = 1 if house is trick.trump else 0 if house is lead else -1
        if rank >= 0:
            second = _value(p.second) if p.second else 0
            best = max(best, (rank, _value(p.card) + second))
    return best


def _choose_play(view: PlayerView, cards: list[Card]) -> Card:
    trick = view.public.trick
    assert trick is not None
    by_value = sorted(cards, key=_value)
    if prize_helps(view):
        if not trick.plays:  # leading: strongest trump, else strongest card
            trumps = [c for c in by_value if c.house is trick.trump]
            return (trumps or by_value)[-1]
        best = _best_visible(trick)
        winners = [c for c in by_value if _beats(c, trick, best)]
        if winners:
            return winners[0]  # the cheapest winning card
    return by_value[0]


def greedy_bot(view: PlayerView, legal: Sequence[Command], rng: Rng) -> Command:
    """GREEDY: see the module docstring."""
    first = legal[0]
    messenger = [c for c in legal if isinstance(c, DeliverMessage | DeclineMessage)]
    if messenger:  # the Rat: deliver while it may, else decline (R5.2)
        delivers = [c for c in messenger if isinstance(c, DeliverMessage)]
        return delivers[0] if delivers else messenger[0]
    plays = [c.card for c in legal if isinstance(c, PlayCard)]
    if plays:
        return PlayCard(_choose_play(view, plays))
    if isinstance(first, Pass):
        stuck = [c for c in legal if isinstance(c, DiscardAndPlay)]
        if stuck and prize_helps(view):
            trick = view.public.trick
            assert trick is not None
            best = _best_visible(trick)
            wins = [c for c in stuck if _beats(c.card, trick, best)]
            if wins:
                return min(wins, key=lambda c: (_value(c.card), _value(c.discard)))
        return first
    if isinstance(first, PlaySecondCard):
        pick = max if prize_helps(view) else min
        return pick(legal, key=lambda c: _value(c.card) if isinstance(c, PlaySecondCard) else 0)
    if isinstance(first, HungryDiscard | GiveCard):
        return min(
            legal, key=lambda c: _value(c.card) if isinstance(c, HungryDiscard | GiveCard) else 0
        )
    if isinstance(first, HungryTake):
        return max(legal, key=lambda c: _value(c.card) if isinstance(c, HungryTake) else 0)
    if isinstance(first, GiveCards):
        return min(legal, key=lambda c: sum(_value(g.card) for g in getattr(c, "gifts", ())))
    if isinstance(first, ChooseNeighbour):
        seats = view.public.seats
        return max(legal, key=lambda c: seats[getattr(c, "seat", 0)].hand_size)
    return first  # Curious: keep the order
