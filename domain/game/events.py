"""Events: what happened in a game, one frozen dataclass per kind (past tense).

Each field's description is its annotation's (``Annotated[int, "..."]``):
the API's event types are made from these classes (their names, types and
descriptions; api/graphql/types/event_kinds.py), as their JSON is
(infra/codec.py). An event holds the whole truth; :meth:`Event.seen_by` is what one audience
may see of it (R11): a seat, or (None) a spectator. Fields marked
:data:`PRIVATE` exist only in the projections of the seats that may see
them (None, and left out, in the others); fields marked :data:`WHOLE` are
never in any projection.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from datetime import datetime
from typing import Annotated, Self

from domain.game.boosters import BoosterPack
from domain.game.cards import Card, House
from domain.game.choice import OFFERS, Choice, Takeover
from domain.game.fastinit import fast_init
from domain.game.options import GameOptions
from domain.game.state import DecisionKind, MessageStatus, Phase, Termination
from domain.rating_pools import RatingPool

SEAT = "A seat (0 is the first)"
TRICK = "The trick's number (1 is the first)"

PRIVATE = {"private": True}
"""Metadata of a field only some seats see: absent from the other projections."""
WHOLE = {"whole": True}
"""Metadata of a field only the whole event holds: never in a projection."""
SET_ONLY = {"set_only": True}
"""Metadata of a public field written only when set (not its default): absent
from logs written before it existed and from engine-only logs (no server)."""


@dataclass(frozen=True, slots=True)
class Event:
    """The base of every event kind."""

    def seen_by(self, seat: int | None) -> Self:
        """What ``seat`` (None: a spectator) may see of this event (R11)."""
        return self

    def private_to(self) -> tuple[int, ...]:
        """The seats with a projection of their own (the others see the
        public one, ``seen_by(None)``)."""
        return ()

    def _without_private(self) -> Self:
        """This event with its :data:`PRIVATE` fields emptied."""
        return replace(self, **dict.fromkeys(_private_fields(type(self))))


_PRIVATE_FIELDS: dict[type[Event], tuple[str, ...]] = {}


def _private_fields(kind: type[Event]) -> tuple[str, ...]:
    found = _PRIVATE_FIELDS.get(kind)
    if found is None:
        found = tuple(f.name for f in fields(kind) if f.metadata.get("private"))
        _PRIVATE_FIELDS[kind] = found
    return found


@dataclass(frozen=True, slots=True)
class _SeatsOwn(Event):
    """An event whose :data:`PRIVATE` fields only its ``seat`` sees."""

    seat: Annotated[int, "The seat it concerns: the one seat that sees its cards"]

    def seen_by(self, seat: int | None) -> Self:
        return self if seat == self.seat else self._without_private()

    def private_to(self) -> tuple[int, ...]:
        return (self.seat,)


@dataclass(frozen=True, slots=True)
class DealtSeat:
    """A seat as dealt: its house, or the Rat (R4.1, R4.3)."""

    seat: Annotated[int, SEAT]
    house: Annotated[House | None, "Its house; null for the Rat"]
    rat: Annotated[bool, "Whether it is the Rat"]


@dataclass(frozen=True, slots=True)
class GameStarted(Event):
    """R4: the deal. Houses, the Rat and the sizes are public; each seat sees
    its own hand and, sealed, its own pack (R3.2). Everyone sees the seed's
    commitment and whether the host chose the seed (``practice``).

    The server sets both (domain/fairness.py; None/False from the engine
    alone)."""

    seats: Annotated[tuple[DealtSeat, ...], "Every seat's house, or the Rat"]
    rat_seat: Annotated[int, "The Rat's seat"]
    hand_sizes: Annotated[tuple[int, ...], "Cards in each seat's hand"]
    rat_deck_size: Annotated[int, "Cards in the Rat Deck"]
    # after the first reveal, as TrickStarted
    prize_pool_size: Annotated[int, "Prize cards left after the first"]
    options: Annotated[GameOptions, "The game's rule variants"]
    seed_commitment: Annotated[
        str | None,
        "SHA-256 (hex) of the secret seed and salt that `GameEnded` reveals "
        '(docs/clients.md "Fair deals"); null for a game started before fair deals',
    ] = field(default=None, metadata=SET_ONLY)
    practice: Annotated[bool, "A practice game: the host chose the seed (not secret from them)"] = (
        field(default=False, metadata=SET_ONLY)
    )
    hand: Annotated[tuple[Card, ...] | None, "Your hand; null but for your seat"] = field(
        default=None, metadata=PRIVATE
    )
    pack: Annotated[BoosterPack | None, "Your sealed pack; else null"] = field(
        default=None, metadata=PRIVATE
    )
    hands: tuple[tuple[Card, ...], ...] = field(default=(), metadata=WHOLE)
    packs: tuple[BoosterPack | None, ...] = field(default=(), metadata=WHOLE)

    def seen_by(self, seat: int | None) -> Self:
        if seat is None or not 0 <= seat < len(self.hands):  # a projection has no hands
            return replace(self, hand=None, pack=None, hands=(), packs=())
        pack = self.packs[seat] if self.packs else None
        return replace(self, hand=self.hands[seat], pack=pack, hands=(), packs=())

    def private_to(self) -> tuple[int, ...]:
        return tuple(range(len(self.seats)))


@dataclass(frozen=True, slots=True)
class TrickStarted(Event):
    """R4.5/R8.4: the Rat reveals the prize; the message window opens."""

    trick: Annotated[int, TRICK]
    prize: Annotated[Card, "The prize card"]
    trump: Annotated[House, "The prize's house: trump (R6.1)"]
    leader: Annotated[int, "The seat that leads"]
    prize_pool_size: Annotated[int, "Prize cards left"]


@dataclass(frozen=True, slots=True)
class _MessageEvent(Event):
    """R5.4: that a message went A to B, and its status, are public."""

    message_id: Annotated[str, "The message"]
    trick: Annotated[int, TRICK]
    from_seat: Annotated[int, "The sender"]
    to_seat: Annotated[int, "The recipient"]
    status: Annotated[MessageStatus, "Its status then"]


@dataclass(frozen=True, slots=True)
class _ReadMessage(_MessageEvent):
    """R5.4: a message event with its text, for ``readers`` only."""

    text: Annotated[str | None, "The text; null unless you read it (R5.4)"] = field(
        default=None, metadata=PRIVATE
    )
    readers: tuple[int, ...] = field(default=(), metadata=WHOLE)

    def seen_by(self, seat: int | None) -> Self:
        if seat in self.readers:
            return replace(self, readers=())
        if self.text is None and not self.readers:
            return self  # nothing to hide
        return replace(self, text=None, readers=())  # a projection has no readers

    def private_to(self) -> tuple[int, ...]:
        return self.readers


@dataclass(frozen=True, slots=True)
class MessageSent(_ReadMessage):
    """R5.1: the sender and the Rat read it."""


@dataclass(frozen=True, slots=True)
class MessageDelivered(_ReadMessage):
    """R5.2: now the recipient reads it too."""


@dataclass(frozen=True, slots=True)
class MessageDeclined(_MessageEvent):
    """R5.2: the Rat declined it."""


@dataclass(frozen=True, slots=True)
class MessageExpired(_MessageEvent):
    """R5.3: the lead card closed the window."""


@dataclass(frozen=True, slots=True)
class CardPlayed(Event):
    """R6: a play; a face-down card (R7.3) is its player's to see only."""

    seat: Annotated[int, "The seat that played"]
    trick: Annotated[int, TRICK]
    lead: Annotated[bool, "Whether it led the trick"]
    card: Annotated[Card | None, "The card; null when face down to you"]
    face_down: Annotated[bool, "R7.3: played face down"]

    def seen_by(self, seat: int | None) -> Self:
        return self if not self.face_down or seat == self.seat else replace(self, card=None)

    def private_to(self) -> tuple[int, ...]:
        return (self.seat,) if self.face_down else ()


@dataclass(frozen=True, slots=True)
class SecondCardPlayed(Event):
    """R7.1: Crazy's second card, face down if the first was."""

    seat: Annotated[int, "The seat that played it"]
    card: Annotated[Card | None, "The card; null when face down to you"]
    face_down: Annotated[bool, "R7.3: played face down"]

    def seen_by(self, seat: int | None) -> Self:
        return self if not self.face_down or seat == self.seat else replace(self, card=None)

    def private_to(self) -> tuple[int, ...]:
        return (self.seat,) if self.face_down else ()


@dataclass(frozen=True, slots=True)
class Passed(Event):
    """R7.7: a seat with no Sassy card passed."""

    seat: Annotated[int, "The seat that passed"]
    trick: Annotated[int, TRICK]


@dataclass(frozen=True, slots=True)
class SeatSkipped(Event):
    """R6.4: a seat with an empty hand is skipped."""

    seat: Annotated[int, "The seat skipped"]
    trick: Annotated[int, TRICK]


@dataclass(frozen=True, slots=True)
class CardDiscarded(Event):
    """R7.4 / R7.7: a card went to the discard pile, face up."""

    seat: Annotated[int, "The seat that discarded"]
    card: Annotated[Card, "The card"]
    reason: Annotated[House, "The ability: SASSY (R7.7) or HUNGRY (R7.4)"]


@dataclass(frozen=True, slots=True)
class AbilityTriggered(Event):
    """R7.0: a play triggered its house's ability."""

    seat: Annotated[int, "The seat whose play triggered"]
    house: Annotated[House, "The ability's house"]
    card: Annotated[Card, "The card that triggered"]


@dataclass(frozen=True, slots=True)
class DecisionRequired(_SeatsOwn):
    """R7.0b: the game waits for ``seat``; it alone sees the cards the
    decision is about (Curious: the top cards; Hungry: the deck's contents;
    in canonical order, R11)."""

    kind: Annotated[DecisionKind, "What it decides"]
    source: Annotated[int, "The seat whose ability asks"]
    cards: Annotated[tuple[Card, ...] | None, "The cards; null but for the seat"] = field(
        default=None, metadata=PRIVATE
    )


@dataclass(frozen=True, slots=True)
class CardGiven(Event):
    """R7.2 / R7.5: a card moved hand to hand; only giver and receiver see
    which (R11)."""

    from_seat: Annotated[int, "The giver"]
    to_seat: Annotated[int, "The receiver"]
    reason: Annotated[House, "The ability: STINKY (R7.2) or NEEDY (R7.5)"]
    card: Annotated[Card | None, "The card; null unless you gave or got it"] = field(
        default=None, metadata=PRIVATE
    )

    def seen_by(self, seat: int | None) -> Self:
        return self if seat in (self.from_seat, self.to_seat) else replace(self, card=None)

    def private_to(self) -> tuple[int, ...]:
        return (self.from_seat, self.to_seat)


@dataclass(frozen=True, slots=True)
class CardTaken(_SeatsOwn):
    """R7.4: Hungry took a card from the Rat Deck; only its taker sees which."""

    rat_deck_size: Annotated[int, "Cards left in the Rat Deck"]
    card: Annotated[Card | None, "The card; null but for the taker"] = field(
        default=None, metadata=PRIVATE
    )


@dataclass(frozen=True, slots=True)
class NeighbourChosen(Event):
    """R7.5: Needy chose the neighbour who gives."""

    seat: Annotated[int, "The Needy seat"]
    neighbour: Annotated[int, "The neighbour chosen"]


@dataclass(frozen=True, slots=True)
class TopReordered(_SeatsOwn):
    """R7.6: Curious put the top cards back; only it sees their new order."""

    count: Annotated[int, "How many cards"]
    cards: Annotated[tuple[Card, ...] | None, "The new order; null but for it"] = field(
        default=None, metadata=PRIVATE
    )


@dataclass(frozen=True, slots=True)
class WonPlay:
    """A play as the trick is won: every card shows (R8.2)."""

    seat: Annotated[int, "The seat that played"]
    card: Annotated[Card, "The card"]
    second_card: Annotated[Card | None, "R7.1: Crazy's second card"]
    value: Annotated[int, "The play's value (R7.1, R8.1)"]


@dataclass(frozen=True, slots=True)
class TrickWon(Event):
    """R8.1-R8.2: who won the trick, with every play; the scores after it."""

    trick: Annotated[int, TRICK]
    winner: Annotated[int, "The winning seat"]
    prize: Annotated[Card, "The prize card it takes"]
    plays: Annotated[tuple[WonPlay, ...], "Every play, in order"]
    passes: Annotated[tuple[int, ...], "R7.7: the seats that passed"]
    scores: Annotated[tuple[int, ...], "Every seat's score now (R10)"]


@dataclass(frozen=True, slots=True)
class CardsDrawn(_SeatsOwn):
    """R8.3: a seat drew up to 10; only it sees which cards."""

    count: Annotated[int, "How many cards"]
    rat_deck_size: Annotated[int, "Cards left in the Rat Deck"]
    cards: Annotated[tuple[Card, ...] | None, "The cards; null but for the seat"] = field(
        default=None, metadata=PRIVATE
    )


@dataclass(frozen=True, slots=True)
class ActionRequired(_SeatsOwn):
    """The game now waits for ``seat``: to lead or play (R6), or to answer a
    decision (R7.0b). That seat alone sees its hand and its choices (what it
    may send), so a client plays from its own stream without asking for the
    game; it ends every change that leaves the game waiting."""

    phase: Annotated[Phase, "What it must do"]
    hand: Annotated[tuple[Card, ...] | None, "Its hand; null but for that seat"] = field(
        default=None, metadata=PRIVATE
    )
    choices: Annotated[
        tuple[Choice, ...] | None,
        "What it may send now; null but for that seat. A seat a bot took over is offered only"
        " RECLAIM_SEAT (nothing once its player left): the bot acts",
    ] = field(default=None, metadata=PRIVATE)
    deadline: Annotated[
        datetime | None,
        "When the wait times out (server time, ISO 8601; compare with `serverTime`); null in "
        "an untimed game or when a bot plays the seat",
    ] = field(default=None, metadata=SET_ONLY)
    """When a timed game's wait times out (the server sets it, domain/clocks.py)."""
    # the server sets it: the seat's projection offers what the player may do
    # there (OFFERS), not the engine's choices, which the bot answers (0050)
    taken_over: Annotated[
        Takeover | None,
        "A bot plays this seat for its player, who may or may not take it back; null: its "
        "player plays it",
    ] = field(default=None, metadata=SET_ONLY)

    def seen_by(self, seat: int | None) -> Self:
        if seat != self.seat:
            return self._without_private()
        if self.taken_over is None:
            return self
        return replace(self, choices=OFFERS[self.taken_over])


@dataclass(frozen=True, slots=True)
class SeatRating:
    """A seat's rating change in a rated game (issue #26): the rating of the
    player it counts for (a bot's own, for a bot's seat) before and after."""

    seat: Annotated[int, SEAT]
    pool: Annotated[RatingPool, "The pool the game counts in"]
    before: Annotated[int, "The rating shown before the game"]
    after: Annotated[int, "The rating shown after it"]
    change: Annotated[int, "after - before"]
    deviation: Annotated[int, "The rating's uncertainty after it, on the same scale"]
    games: Annotated[int, "Rated games in the pool, this one included"]
    provisional: Annotated[bool, "Too few rated games yet for a settled rating"]


@dataclass(frozen=True, slots=True)
class GameEnded(Event):
    """R9: how the game ended, who won, who is out of the ranking, the
    scores; and, for everyone, the seed and salt that ``GameStarted``
    committed to. The last event of every game that ends, an abandoned one's
    too (termination ``ABANDONED``).

    The server sets the seed and salt (domain/fairness.py; None from the
    engine alone)."""

    termination: Annotated[
        Termination, "Why it ended (R9.1; `ABANDONED`: nobody was left to play it)"
    ]
    winners: Annotated[tuple[int, ...], "The winning seats (R9.2); none when abandoned"]
    disqualified: Annotated[tuple[int, ...], "Seats out of the ranking (R9.2)"]
    scores: Annotated[
        tuple[int, ...], "Every seat's final score (R10); empty for a game abandoned in the lobby"
    ]
    seed: Annotated[
        str | None,
        "The game's seed, revealed: check it against `GameStarted.seedCommitment` and "
        're-deal (docs/clients.md "Fair deals"); null for a game that ended before fair '
        "deals, or was "
        "abandoned in the lobby (never dealt)",
    ] = field(default=None, metadata=SET_ONLY)
    salt: Annotated[
        str | None,
        'The commitment\'s salt, revealed ("" for a game created before fair deals); null for'
        " a game that ended before fair deals, or was abandoned in the lobby",
    ] = field(default=None, metadata=SET_ONLY)
    ratings: Annotated[
        tuple[SeatRating, ...] | None,
        "A rated game's rating changes, seat by seat (docs/ratings.md); null for an"
        " unrated game and an abandoned one",
    ] = field(default=None, metadata=SET_ONLY)


GAME_EVENTS: tuple[type[Event], ...] = (
    GameStarted,
    TrickStarted,
    MessageSent,
    MessageDelivered,
    MessageDeclined,
    MessageExpired,
    CardPlayed,
    SecondCardPlayed,
    Passed,
    SeatSkipped,
    CardDiscarded,
    AbilityTriggered,
    DecisionRequired,
    CardGiven,
    CardTaken,
    NeighbourChosen,
    TopReordered,
    TrickWon,
    CardsDrawn,
    ActionRequired,
    GameEnded,
)
"""Every kind the engine emits."""

for _kind in (*GAME_EVENTS, DealtSeat, WonPlay):
    fast_init(_kind)  # built on every change: the faster __init__ (docs/decisions/0037)
del _kind
