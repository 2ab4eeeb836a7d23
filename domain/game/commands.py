"""Commands: what a seat asks the engine to do (imperative, R5-R7). Each
knows the kind of choice it answers (``KIND``), the one place that is said."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, get_args

from domain.game.cards import Card
from domain.game.choice import ChoiceKind
from domain.game.fastinit import fast_init


@dataclass(frozen=True, slots=True)
class SendMessage:
    """R5.1: a message of 1-280 characters to another seat."""

    KIND: ClassVar[ChoiceKind] = ChoiceKind.SEND_MESSAGE

    to: int
    text: str


@dataclass(frozen=True, slots=True)
class DeliverMessage:
    """R5.2: the Rat delivers a pending message."""

    KIND: ClassVar[ChoiceKind] = ChoiceKind.DELIVER_MESSAGE

    message_id: str


@dataclass(frozen=True, slots=True)
class DeclineMessage:
    """R5.2: the Rat declines a pending message."""

    KIND: ClassVar[ChoiceKind] = ChoiceKind.DECLINE_MESSAGE

    message_id: str


@dataclass(frozen=True, slots=True)
class PlayCard:
    """R6.2/R6.3: lead or follow with a card from hand."""

    KIND: ClassVar[ChoiceKind] = ChoiceKind.PLAY_CARD

    card: Card


@dataclass(frozen=True, slots=True)
class Pass:
    """R7.7: a seat with no Sassy card passes."""

    KIND: ClassVar[ChoiceKind] = ChoiceKind.PASS


@dataclass(frozen=True, slots=True)
class DiscardAndPlay:
    """R7.7: a seat with no Sassy card discards one card, then plays any card."""

    KIND: ClassVar[ChoiceKind] = ChoiceKind.DISCARD_AND_PLAY

    discard: Card
    card: Card


@dataclass(frozen=True, slots=True)
class PlaySecondCard:
    """R7.1 Crazy: the second card."""

    KIND: ClassVar[ChoiceKind] = ChoiceKind.CRAZY_SECOND_CARD

    card: Card


@dataclass(frozen=True, slots=True)
class Gift:
    """One card given to one seat."""

    to: int
    card: Card


@dataclass(frozen=True, slots=True)
class GiveCards:
    """R7.2 Stinky: one card to each neighbour (one gift with one card left)."""

    KIND: ClassVar[ChoiceKind] = ChoiceKind.STINKY_GIFTS

    gifts: tuple[Gift, ...]


@dataclass(frozen=True, slots=True)
class HungryDiscard:
    """R7.4 Hungry, step 1: the card to discard."""

    KIND: ClassVar[ChoiceKind] = ChoiceKind.HUNGRY_DISCARD

    card: Card


@dataclass(frozen=True, slots=True)
class HungryTake:
    """R7.4 Hungry, step 2: the card taken from the Rat Deck."""

    KIND: ClassVar[ChoiceKind] = ChoiceKind.HUNGRY_TAKE

    card: Card


@dataclass(frozen=True, slots=True)
class ChooseNeighbour:
    """R7.5 Needy: the neighbour who must give a card."""

    KIND: ClassVar[ChoiceKind] = ChoiceKind.NEEDY_NEIGHBOUR

    seat: int


@dataclass(frozen=True, slots=True)
class GiveCard:
    """R7.5 Needy: the chosen neighbour gives this card."""

    KIND: ClassVar[ChoiceKind] = ChoiceKind.NEEDY_GIFT

    card: Card


@dataclass(frozen=True, slots=True)
class ReorderTop:
    """R7.6 Curious: the looked-at cards, new top first."""

    KIND: ClassVar[ChoiceKind] = ChoiceKind.CURIOUS_ORDER

    cards: tuple[Card, ...]


MessageCommand = SendMessage | DeliverMessage | DeclineMessage
TrickCommand = PlayCard | Pass | DiscardAndPlay
DecisionCommand = (
    PlaySecondCard
    | GiveCards
    | HungryDiscard
    | HungryTake
    | ChooseNeighbour
    | GiveCard
    | ReorderTop
)
Command = MessageCommand | TrickCommand | DecisionCommand

COMMAND_KINDS: dict[str, type[Command]] = {kind.__name__: kind for kind in get_args(Command)}
"""Every kind of command by its name, the one list of them (the log's
``kind``, the tests'): a new kind is a class and its place in the unions
above."""

for _kind in (*get_args(Command), Gift):
    fast_init(_kind)  # legal_actions lists up to ~190: the faster __init__ (docs/decisions/0037)
del _kind
