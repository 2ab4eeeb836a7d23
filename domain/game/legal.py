"""``legal_actions``: exactly the commands a seat may send now (R5-R7),
the commands its choices stand for (:func:`domain.game.choices.choices`,
the one place what a seat may do is worked out).

Cards are listed in canonical order, never in deal or deck order (R11).
The one exception: sending a message takes free text, so it is offered as a
choice (who may be messaged now), not as commands. [decision]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from itertools import permutations

from domain.game.cards import Card
from domain.game.choice import Choice, ChoiceKind
from domain.game.choices import choices
from domain.game.commands import (
    ChooseNeighbour,
    Command,
    DeclineMessage,
    DeliverMessage,
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
from domain.game.state import GameState

_KEPT = 8192  # commands kept per kind: a game names at most a few hundred cards


class _ByCard:
    """One command per card, kept: commands are immutable values, so the
    same one may be listed again (a Hungry take lists the whole Rat Deck, R7.4).
    Keyed by the card, never by a state, so nothing kept goes stale
    (docs/decisions/0037); emptied when it holds :data:`_KEPT`. A listing
    looks each card up in a dict, ~2x cheaper than an ``lru_cache`` hit."""

    __slots__ = ("_made", "_make")

    def __init__(self, make: Callable[[Card], Command]) -> None:
        self._make = make
        self._made: dict[Card, Command] = {}

    def listing(self, cards: Sequence[Card]) -> list[Command]:
        """The command of each of ``cards``, in their order."""
        made = self._made
        try:
            return list(map(made.__getitem__, cards))
        except KeyError:  # a card not seen yet: make what is missing, once
            if len(made) >= _KEPT:
                made.clear()
            for card in cards:
                if card not in made:
                    made[card] = self._make(card)
            return list(map(made.__getitem__, cards))


_play_cards = _ByCard(PlayCard)
_second_cards = _ByCard(PlaySecondCard)
_hungry_discards = _ByCard(HungryDiscard)
_hungry_takes = _ByCard(HungryTake)
_give_cards = _ByCard(GiveCard)
_gift: Callable[[int, Card], Gift] = lru_cache(maxsize=_KEPT)(Gift)
"""One Gift instance per (seat, card), kept as the commands above."""


def legal_actions(state: GameState, seat: int) -> list[Command]:
    """Every command ``seat`` may send now; anything else is refused."""
    listed = choices(state, seat, False)  # SEND_MESSAGE stands for no command
    if len(listed) == 1:  # the common case: one kind of command
        return commands(listed[0])
    out: list[Command] = []
    for choice in listed:
        out.extend(commands(choice))
    return out


# Enum members bound once: Python 3.11 reads ``ChoiceKind.PASS`` through
# EnumType's __getattr__ hook, and hashes a member in Python, so a kind is
# told by identity, not looked up in a dict (docs/decisions/0037).
_PLAY_CARD = ChoiceKind.PLAY_CARD
_PASS = ChoiceKind.PASS
_DISCARD_AND_PLAY = ChoiceKind.DISCARD_AND_PLAY
_DELIVER_MESSAGE = ChoiceKind.DELIVER_MESSAGE
_DECLINE_MESSAGE = ChoiceKind.DECLINE_MESSAGE
_CRAZY_SECOND_CARD = ChoiceKind.CRAZY_SECOND_CARD
_STINKY_GIFTS = ChoiceKind.STINKY_GIFTS
_HUNGRY_DISCARD = ChoiceKind.HUNGRY_DISCARD
_HUNGRY_TAKE = ChoiceKind.HUNGRY_TAKE
_NEEDY_NEIGHBOUR = ChoiceKind.NEEDY_NEIGHBOUR
_NEEDY_GIFT = ChoiceKind.NEEDY_GIFT
_CURIOUS_ORDER = ChoiceKind.CURIOUS_ORDER


def commands(choice: Choice) -> list[Command]:
    """The commands ``choice`` stands for, in its cards' order (a message:
    none, its text is free; RECLAIM_SEAT: none, it is the server's
    ``reclaimSeat``, not the engine's)."""
    k = choice.kind
    if k is _PLAY_CARD:  # the common kind first
        return _play_cards.listing(choice.cards)
    if k is _PASS:
        return [Pass()]
    if k is _DISCARD_AND_PLAY:
        return [DiscardAndPlay(d, c) for d in choice.discards for c in choice.cards if d != c]
    if k is _DELIVER_MESSAGE:
        return [DeliverMessage(i) for i in choice.message_ids]
    if k is _DECLINE_MESSAGE:
        return [DeclineMessage(i) for i in choice.message_ids]
    if k is _CRAZY_SECOND_CARD:
        return _second_cards.listing(choice.cards)
    if k is _STINKY_GIFTS:
        return _gift_commands(choice)
    if k is _HUNGRY_DISCARD:
        return _hungry_discards.listing(choice.cards)
    if k is _HUNGRY_TAKE:
        return _hungry_takes.listing(choice.cards)
    if k is _NEEDY_NEIGHBOUR:
        return [ChooseNeighbour(s) for s in choice.seats]
    if k is _NEEDY_GIFT:
        return _give_cards.listing(choice.cards)
    if k is _CURIOUS_ORDER:
        return [ReorderTop(p) for p in permutations(choice.cards)]
    return []  # SEND_MESSAGE, RECLAIM_SEAT


def _gift_commands(choice: Choice) -> list[Command]:
    """R7.2: a card for each neighbour, gifts listed by receiving seat."""
    if choice.gift_count == 1:
        return [GiveCards((_gift(o.to, c),)) for o in choice.gifts for c in o.cards]
    first, second = choice.gifts
    to_first = [_gift(first.to, x) for x in first.cards]
    to_second = [_gift(second.to, y) for y in second.cards]
    return [
        GiveCards((gx, gy))
        for x, gx in zip(first.cards, to_first, strict=True)
        for y, gy in zip(second.cards, to_second, strict=True)
        if x != y
    ]
