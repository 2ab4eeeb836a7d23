"""A seat's choice: one kind of command with its options (R5-R7), as
:func:`domain.game.choices.choices` lists them and events carry them."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from domain.game.cards import Card
from domain.game.fastinit import fast_init


class ChoiceKind(Enum):
    """A kind of command; decisions are named as the decision they answer
    (:class:`~domain.game.state.DecisionKind`). The engine offers all but
    RECLAIM_SEAT, the server's: the one offer to a seat a bot took over
    from its player (docs/decisions/0050)."""

    PLAY_CARD = "play_card"  # R6.2, R6.3
    PASS = "pass"  # R7.7
    DISCARD_AND_PLAY = "discard_and_play"  # R7.7
    SEND_MESSAGE = "send_message"  # R5.1
    DELIVER_MESSAGE = "deliver_message"  # R5.2
    DECLINE_MESSAGE = "decline_message"  # R5.2
    CRAZY_SECOND_CARD = "crazy_second_card"  # R7.1
    STINKY_GIFTS = "stinky_gifts"  # R7.2
    HUNGRY_DISCARD = "hungry_discard"  # R7.4
    HUNGRY_TAKE = "hungry_take"  # R7.4
    NEEDY_NEIGHBOUR = "needy_neighbour"  # R7.5
    NEEDY_GIFT = "needy_gift"  # R7.5
    CURIOUS_ORDER = "curious_order"  # R7.6
    RECLAIM_SEAT = "reclaim_seat"  # docs/decisions/0046, 0050: not the engine's


@dataclass(frozen=True, slots=True)
class GiftOption:
    """R7.2: a neighbour, and the cards it may be given."""

    to: int
    cards: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class Choice:
    """One kind of command and its options (cards in canonical order, R11):

    - ``cards``: the card to name (PLAY_CARD, CRAZY_SECOND_CARD,
      HUNGRY_DISCARD, HUNGRY_TAKE, NEEDY_GIFT); for DISCARD_AND_PLAY the card
      to play; for CURIOUS_ORDER the cards to put back, in any order.
    - ``discards``: DISCARD_AND_PLAY's card to discard (then play another).
    - ``seats``: NEEDY_NEIGHBOUR's neighbour; SEND_MESSAGE's recipient.
    - ``gifts`` and ``gift_count``: STINKY_GIFTS gives ``gift_count``
      distinct cards, one to each of that many of the listed neighbours.
    - ``message_ids``: the message to deliver or decline.
    """

    kind: ChoiceKind
    cards: tuple[Card, ...] = ()
    discards: tuple[Card, ...] = ()
    seats: tuple[int, ...] = ()
    gifts: tuple[GiftOption, ...] = ()
    gift_count: int = 0
    message_ids: tuple[str, ...] = ()


class Takeover(Enum):
    """A seat a bot took over from its player (docs/decisions/0046): what
    its player may still do there (docs/decisions/0050)."""

    RECLAIMABLE = "reclaimable"  # take it back with reclaimSeat
    LEFT = "left"  # its player left the running game: the bot keeps it


fast_init(GiftOption)  # every change's ActionRequired carries choices (docs/decisions/0037)
fast_init(Choice)

OFFERS: dict[Takeover, tuple[Choice, ...]] = {
    Takeover.RECLAIMABLE: (Choice(ChoiceKind.RECLAIM_SEAT),),
    Takeover.LEFT: (),
}
"""What a seat a bot took over offers its player instead of the engine's
choices: to take it back, or nothing once the player left (docs/decisions/0050)."""
