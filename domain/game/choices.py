"""What a seat may do now, structured (API.md "legalActions"): one
:class:`Choice` per kind of command, with its options, never a cross
product (Stinky's gifts, discard-and-play and Hungry's take would list up to
~190 commands). Sending a message is a choice too (its text is free).

:func:`choices` and :func:`domain.game.legal.legal_actions` say the same
thing: :func:`commands` expands a choice into exactly the commands it
stands for, and the engine still checks every command it is sent.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import permutations

from domain.game.cards import sorted_cards
from domain.game.choice import Choice, ChoiceKind, GiftOption
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
from domain.game.legal import legal_actions
from domain.game.messaging import message_targets
from domain.game.state import GameState

OneCard = PlayCard | PlaySecondCard | HungryDiscard | HungryTake | GiveCard
_ONE_CARD: dict[type[OneCard], ChoiceKind] = {
    PlayCard: ChoiceKind.PLAY_CARD,
    PlaySecondCard: ChoiceKind.CRAZY_SECOND_CARD,
    HungryDiscard: ChoiceKind.HUNGRY_DISCARD,
    HungryTake: ChoiceKind.HUNGRY_TAKE,
    GiveCard: ChoiceKind.NEEDY_GIFT,
}


def choices(state: GameState, seat: int) -> tuple[Choice, ...]:
    """Every kind of command ``seat`` may send now, with its options."""
    legal = legal_actions(state, seat)
    out: list[Choice] = []
    for command, kind in _ONE_CARD.items():
        cards = tuple(c.card for c in legal if isinstance(c, OneCard) and type(c) is command)
        if cards:
            out.append(Choice(kind, cards=cards))
    if any(isinstance(c, Pass) for c in legal):
        out.append(Choice(ChoiceKind.PASS))
    pairs = [c for c in legal if isinstance(c, DiscardAndPlay)]
    if pairs:
        cards = tuple(sorted_cards(list({c.card for c in pairs})))
        out.append(Choice(ChoiceKind.DISCARD_AND_PLAY, cards=cards, discards=cards))
    gifts = [c for c in legal if isinstance(c, GiveCards)]
    if gifts:
        out.append(_gifts(state, seat, gifts))
    neighbours = tuple(c.seat for c in legal if isinstance(c, ChooseNeighbour))
    if neighbours:
        out.append(Choice(ChoiceKind.NEEDY_NEIGHBOUR, seats=neighbours))
    orders = [c for c in legal if isinstance(c, ReorderTop)]
    if orders:
        out.append(Choice(ChoiceKind.CURIOUS_ORDER, cards=orders[0].cards))
    targets = tuple(message_targets(state, seat))
    if targets:
        out.append(Choice(ChoiceKind.SEND_MESSAGE, seats=targets))
    delivers = tuple(c.message_id for c in legal if isinstance(c, DeliverMessage))
    if delivers:
        out.append(Choice(ChoiceKind.DELIVER_MESSAGE, message_ids=delivers))
    declines = tuple(c.message_id for c in legal if isinstance(c, DeclineMessage))
    if declines:
        out.append(Choice(ChoiceKind.DECLINE_MESSAGE, message_ids=declines))
    return tuple(out)


def _gifts(state: GameState, seat: int, gifts: list[GiveCards]) -> Choice:
    """R7.2: each neighbour may get any card of the hand (distinct cards)."""
    count = len(gifts[0].gifts)
    hand = tuple(sorted_cards(state.seats[seat].hand))
    seats = sorted({g.to for c in gifts for g in c.gifts})
    options = tuple(GiftOption(to, hand) for to in seats)
    return Choice(ChoiceKind.STINKY_GIFTS, gifts=options, gift_count=count)


def commands(choice: Choice) -> Iterator[Command]:
    """The commands ``choice`` stands for (a message: none, its text is free)."""
    k = choice.kind
    if k is ChoiceKind.PASS:
        yield Pass()
    elif k is ChoiceKind.DISCARD_AND_PLAY:
        yield from (DiscardAndPlay(d, c) for d in choice.discards for c in choice.cards if d != c)
    elif k is ChoiceKind.NEEDY_NEIGHBOUR:
        yield from (ChooseNeighbour(s) for s in choice.seats)
    elif k is ChoiceKind.CURIOUS_ORDER:
        yield from (ReorderTop(p) for p in permutations(choice.cards))
    elif k is ChoiceKind.STINKY_GIFTS:
        yield from _gift_commands(choice)
    elif k is ChoiceKind.DELIVER_MESSAGE:
        yield from (DeliverMessage(i) for i in choice.message_ids)
    elif k is ChoiceKind.DECLINE_MESSAGE:
        yield from (DeclineMessage(i) for i in choice.message_ids)
    elif k is not ChoiceKind.SEND_MESSAGE:
        command = next(cls for cls, kind in _ONE_CARD.items() if kind is k)
        yield from (command(c) for c in choice.cards)


def _gift_commands(choice: Choice) -> Iterator[Command]:
    if choice.gift_count == 1:
        for option in choice.gifts:
            yield from (GiveCards((Gift(option.to, c),)) for c in option.cards)
        return
    first, second = choice.gifts
    for x in first.cards:
        for y in second.cards:
            if x != y:
                yield GiveCards((Gift(first.to, x), Gift(second.to, y)))
