"""One GraphQL object type per kind of event, implementing ``GameEvent``,
with typed fields (schema enums, ``Card`` objects, seats as ``Int``). A
field that only some audiences see (a hand, a face-down card, a message's
text) is null for the others: it comes from the domain event's projection
for the audience (``Event.seen_by``, R11), never decided here.

Each type's fields are read from the domain event of the same name (or the
name :data:`_FROM` gives); :func:`typed` builds the object for an event.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Any

import strawberry

from api.graphql.types.actions import ActionChoice, GiftOption
from api.graphql.types.cards import Card
from api.graphql.types.game import GameOptions
from api.graphql.types.game_event import GameEvent, event_type
from domain import clocks, lobby, rematch
from domain.bots.strategy import Strategy
from domain.game import cards
from domain.game import events as kinds
from domain.game.boosters import BoosterPack
from domain.game.cards import House
from domain.game.choice import Choice
from domain.game.choice import GiftOption as DomainGift
from domain.game.events import Event
from domain.game.options import AbilityTrigger, Format
from domain.game.options import GameOptions as DomainOptions
from domain.game.state import DecisionKind, MessageStatus, Phase, Termination
from domain.log import LoggedEvent

SEAT = "A seat (0 is the first)"
TRICK = "The trick's number (1 is the first)"


# ---------------------------------------------------------------- the lobby
@event_type("A new game in the lobby, with its options (R2.1, R3, R7.0, R8.3).")
class GameCreated(GameEvent):
    host_id: strawberry.ID = strawberry.field(description="The player who created it")
    seat_count: int = strawberry.field(description="Seats at the table (R2.1: 3 to 8)")
    format: Format = strawberry.field(description="Where the deck comes from (R3)")
    ability_trigger: AbilityTrigger = strawberry.field(description="Which plays trigger (R7.0)")
    refill_hands: bool = strawberry.field(description="Hands refill after a trick (R8.3)")
    chosen_rat_seat: int | None = strawberry.field(
        description="The Rat's seat the host chose; null: drawn at the start (R4.1)"
    )


@event_type("A player took a seat.")
class SeatTaken(GameEvent):
    seat: int = strawberry.field(description=SEAT)
    player_id: strawberry.ID = strawberry.field(description="The player")
    name: str = strawberry.field(description="The player's name")


@event_type("A player gave up a seat.")
class SeatLeft(GameEvent):
    seat: int = strawberry.field(description=SEAT)
    player_id: strawberry.ID = strawberry.field(description="The player")


@event_type("The host seated a bot.")
class BotSeated(GameEvent):
    seat: int = strawberry.field(description=SEAT)
    strategy: Strategy = strawberry.field(description="How the bot plays")


@event_type(
    "A finished game's rematch (logged after `GameEnded`, for everyone): the new lobby game, "
    "where each player of this one has their old seat kept for them until they take it or the "
    "game starts (docs/decisions/0048)."
)
class RematchOffered(GameEvent):
    new_game_id: strawberry.ID = strawberry.field(
        description="The new game (`gameId` is this, finished one): join it (`joinGame`) to "
        "take your kept seat"
    )


# ---------------------------------------------------------------- the deal
@strawberry.type(
    description="A seat as dealt: its house, or the Rat (R4.1, R4.3)."
    " No cache key: a value inside its parent."
)
class DealtSeat:
    seat: int = strawberry.field(description=SEAT)
    house: House | None = strawberry.field(description="Its house; null for the Rat")
    rat: bool = strawberry.field(description="Whether it is the Rat")


@strawberry.type(
    description="R3.2: a sealed seat's booster pack, as opened for the game."
    " No cache key: a value inside its parent."
)
class DealtPack:
    commons: list[Card] = strawberry.field(description="Its 15 commons")
    rares: list[Card] = strawberry.field(description="Its 2 rares")
    house: House = strawberry.field(description="Its house card")


@event_type(
    "R4: the deal. Houses, the Rat and the sizes are public; each seat sees "
    "its own hand and, sealed, its own pack (R3.2)."
)
class GameStarted(GameEvent):
    seats: list[DealtSeat] = strawberry.field(description="Every seat's house, or the Rat")
    rat_seat: int = strawberry.field(description="The Rat's seat")
    hand_sizes: list[int] = strawberry.field(description="Cards in each seat's hand")
    rat_deck_size: int = strawberry.field(description="Cards in the Rat Deck")
    prize_pool_size: int = strawberry.field(description="Prize cards left after the first")
    options: GameOptions = strawberry.field(description="The game's rule variants")
    hand: list[Card] | None = strawberry.field(description="Your hand; null but for your seat")
    pack: DealtPack | None = strawberry.field(description="Your sealed pack; else null")
    seed_commitment: str | None = strawberry.field(
        description="SHA-256 (hex) of the secret seed and salt that `GameEnded` reveals "
        '(README "Fair deals"); null for a game started before fair deals'
    )
    practice: bool = strawberry.field(
        description="A practice game: the host chose the seed (not secret from them)"
    )


@event_type("R4.5/R8.4: the Rat reveals the prize; the message window opens.")
class TrickStarted(GameEvent):
    trick: int = strawberry.field(description=TRICK)
    prize: Card = strawberry.field(description="The prize card")
    trump: House = strawberry.field(description="The prize's house: trump (R6.1)")
    leader: int = strawberry.field(description="The seat that leads")
    prize_pool_size: int = strawberry.field(description="Prize cards left")


# ---------------------------------------------------------------- messages
@strawberry.type
class _MessageEvent(GameEvent):
    """The fields every message event has (R5); not in the schema itself (no
    field returns it, and it is not among the schema's types)."""

    message_id: strawberry.ID = strawberry.field(description="The message")
    trick: int = strawberry.field(description=TRICK)
    from_seat: int = strawberry.field(description="The sender")
    to_seat: int = strawberry.field(description="The recipient")
    status: MessageStatus = strawberry.field(description="Its status then")


@event_type("R5.1: a message was sent; the sender and the Rat read it.")
class MessageSent(_MessageEvent):
    text: str | None = strawberry.field(description="The text; null unless you read it (R5.4)")


@event_type("R5.2: the Rat delivered a message; now its recipient reads it.")
class MessageDelivered(_MessageEvent):
    text: str | None = strawberry.field(description="The text; null unless you read it (R5.4)")


@event_type("R5.2: the Rat declined a message.")
class MessageDeclined(_MessageEvent):
    pass


@event_type("R5.3: the lead card closed the window; the message expired.")
class MessageExpired(_MessageEvent):
    pass


# ---------------------------------------------------------------- tricks
@event_type("R6: a play; a face-down card (R7.3) shows only to its player.")
class CardPlayed(GameEvent):
    seat: int = strawberry.field(description="The seat that played")
    trick: int = strawberry.field(description=TRICK)
    lead: bool = strawberry.field(description="Whether it led the trick")
    card: Card | None = strawberry.field(description="The card; null when face down to you")
    face_down: bool = strawberry.field(description="R7.3: played face down")


@event_type("R7.1: Crazy's second card, face down if the first was.")
class SecondCardPlayed(GameEvent):
    seat: int = strawberry.field(description="The seat that played it")
    card: Card | None = strawberry.field(description="The card; null when face down to you")
    face_down: bool = strawberry.field(description="R7.3: played face down")


@event_type("R7.7: a seat with no Sassy card passed.")
class Passed(GameEvent):
    seat: int = strawberry.field(description="The seat that passed")
    trick: int = strawberry.field(description=TRICK)


@event_type("R6.4: a seat with an empty hand was skipped.")
class SeatSkipped(GameEvent):
    seat: int = strawberry.field(description="The seat skipped")
    trick: int = strawberry.field(description=TRICK)


@event_type("R7.4 / R7.7: a card went to the discard pile, face up.")
class CardDiscarded(GameEvent):
    seat: int = strawberry.field(description="The seat that discarded")
    card: Card | None = strawberry.field(description="The card (never null)")
    reason: House = strawberry.field(description="The ability: SASSY (R7.7) or HUNGRY (R7.4)")


@event_type("R7.0: a play triggered its house's ability.")
class AbilityTriggered(GameEvent):
    seat: int = strawberry.field(description="The seat whose play triggered")
    house: House = strawberry.field(description="The ability's house")
    card: Card | None = strawberry.field(description="The card that triggered (never null)")


@event_type(
    "R7.0b: the game waits for a seat's decision; it alone sees the cards the "
    "decision is about (Curious: the top cards; Hungry: the deck's contents)."
)
class DecisionRequired(GameEvent):
    seat: int = strawberry.field(description="The seat that decides")
    kind: DecisionKind = strawberry.field(description="What it decides")
    source: int = strawberry.field(description="The seat whose ability asks")
    cards: list[Card] | None = strawberry.field(description="The cards; null but for the seat")


@event_type("R7.2 / R7.5: a card moved hand to hand; only both seats see it.")
class CardGiven(GameEvent):
    from_seat: int = strawberry.field(description="The giver")
    to_seat: int = strawberry.field(description="The receiver")
    reason: House = strawberry.field(description="The ability: STINKY (R7.2) or NEEDY (R7.5)")
    card: Card | None = strawberry.field(description="The card; null unless you gave or got it")


@event_type("R7.4: Hungry took a card from the Rat Deck.")
class CardTaken(GameEvent):
    seat: int = strawberry.field(description="The seat that took")
    rat_deck_size: int = strawberry.field(description="Cards left in the Rat Deck")
    card: Card | None = strawberry.field(description="The card; null but for the taker")


@event_type("R7.5: Needy chose the neighbour who gives.")
class NeighbourChosen(GameEvent):
    seat: int = strawberry.field(description="The Needy seat")
    neighbour: int = strawberry.field(description="The neighbour chosen")


@event_type("R7.6: Curious put the top cards back in a new order.")
class TopReordered(GameEvent):
    seat: int = strawberry.field(description="The Curious seat")
    count: int = strawberry.field(description="How many cards")
    cards: list[Card] | None = strawberry.field(description="The new order; null but for it")


@strawberry.type(
    description="A play as the trick is won: every card shows (R8.2)."
    " No cache key: a value inside its parent."
)
class WonPlay:
    seat: int = strawberry.field(description="The seat that played")
    card: Card = strawberry.field(description="The card")
    second_card: Card | None = strawberry.field(description="R7.1: Crazy's second card")
    value: int = strawberry.field(description="The play's value (R7.1, R8.1)")


@event_type("R8.1-R8.2: who won the trick, every play, the scores after it.")
class TrickWon(GameEvent):
    trick: int = strawberry.field(description=TRICK)
    winner: int = strawberry.field(description="The winning seat")
    prize: Card = strawberry.field(description="The prize card it takes")
    plays: list[WonPlay] = strawberry.field(description="Every play, in order")
    passes: list[int] = strawberry.field(description="R7.7: the seats that passed")
    scores: list[int] = strawberry.field(description="Every seat's score now (R10)")


@event_type("R8.3: a seat drew up to 10.")
class CardsDrawn(GameEvent):
    seat: int = strawberry.field(description="The seat that drew")
    count: int = strawberry.field(description="How many cards")
    rat_deck_size: int = strawberry.field(description="Cards left in the Rat Deck")
    cards: list[Card] | None = strawberry.field(description="The cards; null but for the seat")


@event_type(
    "The game waits for a seat: to lead or play (R6), or to decide (R7.0b). "
    "That seat alone sees its hand and its choices, so it plays from its own stream."
)
class ActionRequired(GameEvent):
    seat: int = strawberry.field(description="The seat to act")
    phase: Phase = strawberry.field(description="What it must do")
    hand: list[Card] | None = strawberry.field(description="Its hand; null but for that seat")
    choices: list[ActionChoice] | None = strawberry.field(
        description="What it may send now; null but for that seat. A seat a bot took over "
        "is offered only RECLAIM_SEAT (nothing once its player left): the bot acts"
    )
    deadline: datetime | None = strawberry.field(
        description="When the wait times out (server time, ISO 8601; compare with "
        "`serverTime`); null in an untimed game or when a bot plays the seat"
    )


# ---------------------------------------------------------------- clocks
@event_type("A seat's deadline passed: the server moved for it (GREEDY, its own view only).")
class TurnTimedOut(GameEvent):
    seat: int = strawberry.field(description=SEAT)


@event_type("A bot plays this seat from now on: its player timed out too often in a row, or left.")
class SeatTakenOver(GameEvent):
    seat: int = strawberry.field(description=SEAT)
    strategy: Strategy = strawberry.field(description="How the bot plays")
    left: bool = strawberry.field(description="Its player left the running game (for good)")


@event_type("The seat's player plays it again (`reclaimSeat`), from the next action.")
class SeatReclaimed(GameEvent):
    seat: int = strawberry.field(description=SEAT)


@event_type(
    "R9: how the game ended, who won, who is out, the scores; the seed and salt, revealed. "
    "The last event of every game that ends, an abandoned one's too (termination `ABANDONED`)."
)
class GameEnded(GameEvent):
    termination: Termination = strawberry.field(
        description="Why it ended (R9.1; `ABANDONED`: nobody was left to play it)"
    )
    winners: list[int] = strawberry.field(
        description="The winning seats (R9.2); none when abandoned"
    )
    disqualified: list[int] = strawberry.field(description="Seats out of the ranking (R9.2)")
    scores: list[int] = strawberry.field(
        description="Every seat's final score (R10); empty for a game abandoned in the lobby"
    )
    seed: str | None = strawberry.field(
        description="The game's seed, revealed: check it against `GameStarted.seedCommitment` "
        'and re-deal (README "Fair deals"); null for a game that ended before fair deals, '
        "or was abandoned in the lobby (never dealt)"
    )
    salt: str | None = strawberry.field(
        description='The commitment\'s salt, revealed ("" for a game created before fair '
        "deals); null for a game that ended before fair deals, or was abandoned in the lobby"
    )


KINDS: dict[type[Event], type[GameEvent]] = {
    lobby.GameCreated: GameCreated,
    lobby.SeatTaken: SeatTaken,
    lobby.SeatLeft: SeatLeft,
    lobby.BotSeated: BotSeated,
    kinds.GameStarted: GameStarted,
    kinds.TrickStarted: TrickStarted,
    kinds.MessageSent: MessageSent,
    kinds.MessageDelivered: MessageDelivered,
    kinds.MessageDeclined: MessageDeclined,
    kinds.MessageExpired: MessageExpired,
    kinds.CardPlayed: CardPlayed,
    kinds.SecondCardPlayed: SecondCardPlayed,
    kinds.Passed: Passed,
    kinds.SeatSkipped: SeatSkipped,
    kinds.CardDiscarded: CardDiscarded,
    kinds.AbilityTriggered: AbilityTriggered,
    kinds.DecisionRequired: DecisionRequired,
    kinds.CardGiven: CardGiven,
    kinds.CardTaken: CardTaken,
    kinds.NeighbourChosen: NeighbourChosen,
    kinds.TopReordered: TopReordered,
    kinds.TrickWon: TrickWon,
    kinds.CardsDrawn: CardsDrawn,
    kinds.ActionRequired: ActionRequired,
    kinds.GameEnded: GameEnded,
    clocks.TurnTimedOut: TurnTimedOut,
    clocks.SeatTakenOver: SeatTakenOver,
    clocks.SeatReclaimed: SeatReclaimed,
    rematch.RematchOffered: RematchOffered,
}
"""The GraphQL type of each domain event kind (every kind has one)."""

_FROM: dict[tuple[type, str], str] = {
    (GameCreated, "host_id"): "host",
    (GameCreated, "chosen_rat_seat"): "rat_seat",
    (GameStarted, "rat_seat"): "rat",
    (CardGiven, "from_seat"): "giver",
    (CardGiven, "to_seat"): "to",
    (WonPlay, "second_card"): "second",
    **{
        (kind, name): source
        for kind in (MessageSent, MessageDelivered, MessageDeclined, MessageExpired)
        for name, source in (
            ("message_id", "id"),
            ("from_seat", "sender"),
            ("to_seat", "recipient"),
        )
    },
}
"""GraphQL field -> domain attribute, where the names differ."""


_NESTED: dict[type, type] = {
    kinds.DealtSeat: DealtSeat,
    kinds.WonPlay: WonPlay,
    DomainOptions: GameOptions,
    BoosterPack: DealtPack,
    Choice: ActionChoice,
    DomainGift: GiftOption,
}
"""The GraphQL type of each value class an event holds."""

_FIELDS: dict[type, list[str]] = {}
_INTERFACE = frozenset({"game_id", "seq", "at", "event", "frame_key"})


def _fields(kind: type) -> list[str]:
    """The data fields of a GraphQL type (not resolvers, not the interface's)."""
    found = _FIELDS.get(kind)
    if found is None:
        definition = kind.__strawberry_definition__  # type: ignore[attr-defined]
        found = _FIELDS[kind] = [
            f.python_name
            for f in definition.fields
            if f.base_resolver is None and f.python_name not in _INTERFACE
        ]
    return found


def _values(kind: type, source: Any) -> dict[str, Any]:
    return {name: _value(getattr(source, _FROM.get((kind, name), name))) for name in _fields(kind)}


def _value(value: Any) -> Any:
    if isinstance(value, cards.Card):
        return Card.of(value)
    if isinstance(value, tuple | list):
        return [_value(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        kind = _NESTED[type(value)]
        return kind(**_values(kind, value))
    return value


def typed(e: LoggedEvent, frame_key: tuple[str, int] | None = None) -> GameEvent:
    """The GraphQL object of one logged event, as one audience sees it;
    ``frame_key`` (its audience's channel and seq) when it is a stream's.
    Its own fields are read from the domain event when first asked for
    (:func:`_read_field`): a selection of ``seq`` converts no card."""
    kind = KINDS[type(e.event)]
    made = object.__new__(kind)
    made.__dict__.update(
        game_id=strawberry.ID(e.game_id), seq=e.seq, at=e.at, event=e.event, frame_key=frame_key
    )
    return made


def _read_field(self: GameEvent, name: str) -> Any:
    """``__getattr__`` of the event types: a field :func:`typed` left unread,
    converted from the domain event, then kept."""
    event = self.__dict__.get("event")
    kind = type(self)
    if event is None or name not in _fields(kind):
        raise AttributeError(f"{kind.__name__!r} object has no attribute {name!r}")
    value = self.__dict__[name] = _value(getattr(event, _FROM.get((kind, name), name)))
    return value


for _kind in KINDS.values():
    _kind.__getattr__ = _read_field  # type: ignore[attr-defined]


ALL_TYPES: tuple[type, ...] = (*KINDS.values(), DealtSeat, DealtPack, WonPlay)
"""Every type of this module, for the schema (an interface's types are not
reachable from its fields)."""
