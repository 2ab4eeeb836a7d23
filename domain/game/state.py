"""The game state: one source of truth for every card instance (R4-R9).

Every card is in exactly one zone: a seat's ``hand``, ``won`` pile, ``prizes``
row or ``identity`` (assignment / Rat card), the ``rat_deck`` (index 0 is the
top), the ``prize_pool`` (index 0 is the next prize), the ``discard`` pile, the
current trick (its plays, Crazy second cards and prize), or ``box`` (cards the
game does not use: unassigned assignment cards). Nothing else holds a card.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from domain.game.cards import Card, House
from domain.game.options import GameOptions


class Phase(Enum):
    """Where the game waits."""

    LEAD = "lead"  # the leader must lead; the message window is open (R5.1)
    PLAY = "play"  # ``turn`` must play (R6.3, R7.7)
    DECISION = "decision"  # ``pending.seat`` must answer (R7.0b)
    FINISHED = "finished"  # R9.3


class DecisionKind(Enum):
    """R7: the choices an ability asks for."""

    CRAZY_SECOND_CARD = "crazy_second_card"  # R7.1
    STINKY_GIFTS = "stinky_gifts"  # R7.2
    HUNGRY_DISCARD = "hungry_discard"  # R7.4, step 1
    HUNGRY_TAKE = "hungry_take"  # R7.4, step 2
    NEEDY_NEIGHBOUR = "needy_neighbour"  # R7.5, the player
    NEEDY_GIFT = "needy_gift"  # R7.5, the chosen neighbour
    CURIOUS_ORDER = "curious_order"  # R7.6


class MessageStatus(Enum):
    """R5: a message's life."""

    PENDING = "pending"
    DELIVERED = "delivered"
    DECLINED = "declined"
    EXPIRED = "expired"


class Termination(Enum):
    """R9.1: why the game ended."""

    RAT_ALL_HOUSES = "rat_all_houses"
    HOUSE_PLAYER_ALL_HOUSES = "house_player_all_houses"
    PRIZE_POOL_EMPTY = "prize_pool_empty"
    NO_CARDS_LEFT = "no_cards_left"
    ABANDONED = "abandoned"  # not a rule's end: the server's (docs/decisions/0051)


@dataclass(slots=True)
class SeatState:
    """One seat's cards. ``house`` is None for the Rat (R2.1)."""

    house: House | None
    identity: Card
    hand: list[Card] = field(default_factory=list)
    won: list[Card] = field(default_factory=list)
    prizes: list[Card] = field(default_factory=list)


@dataclass(slots=True)
class Play:
    """A play in a trick (R6); ``second`` is a Crazy second card (R7.1)."""

    seat: int
    card: Card
    face_down: bool = False
    second: Card | None = None


@dataclass(slots=True)
class Trick:
    """The trick under way. ``offset`` counts turns taken after the leader."""

    number: int
    prize: Card
    leader: int
    plays: list[Play] = field(default_factory=list)
    passes: list[int] = field(default_factory=list)
    skipped: list[int] = field(default_factory=list)
    offset: int = 0
    sleepy: bool = False  # R7.3 active
    sassy: bool = False  # R7.7 active


@dataclass(slots=True)
class Decision:
    """A pending ability decision (R7.0b): ``seat`` answers for ``source``."""

    kind: DecisionKind
    seat: int
    source: int
    cards: list[Card] = field(default_factory=list)  # Curious: the cards looked at


@dataclass(slots=True)
class Message:
    """A messenger message (R5)."""

    id: str
    trick: int
    sender: int
    recipient: int
    text: str
    status: MessageStatus


@dataclass(frozen=True, slots=True)
class Outcome:
    """R9: how the game ended, who won, who is out of the ranking, scores."""

    termination: Termination
    winners: tuple[int, ...]
    disqualified: tuple[int, ...]
    scores: tuple[int, ...]


@dataclass(slots=True)
class GameState:
    """The whole game. ``version`` counts accepted commands; ``rng`` is R3.5."""

    options: GameOptions
    seats: list[SeatState]
    rat: int
    rat_deck: list[Card]
    prize_pool: list[Card]
    discard: list[Card]
    box: list[Card]
    trick: Trick | None  # None once the game is finished
    phase: Phase
    turn: int
    rng: int
    deck_size: int = 0  # numbered cards in this game: constant (R1.5)
    pending: Decision | None = None
    messages: list[Message] = field(default_factory=list)
    message_counter: int = 0
    version: int = 0
    outcome: Outcome | None = None

    @property
    def n(self) -> int:
        return len(self.seats)

    def clone(self) -> GameState:
        """A deep copy (hand-written: several times faster than ``deepcopy``)."""
        t, d = self.trick, self.pending
        return GameState(
            options=self.options,
            seats=[
                SeatState(s.house, s.identity, list(s.hand), list(s.won), list(s.prizes))
                for s in self.seats
            ],
            rat=self.rat,
            rat_deck=list(self.rat_deck),
            prize_pool=list(self.prize_pool),
            discard=list(self.discard),
            box=list(self.box),
            trick=None
            if t is None
            else Trick(
                t.number,
                t.prize,
                t.leader,
                [Play(p.seat, p.card, p.face_down, p.second) for p in t.plays],
                list(t.passes),
                list(t.skipped),
                t.offset,
                t.sleepy,
                t.sassy,
            ),
            phase=self.phase,
            turn=self.turn,
            rng=self.rng,
            deck_size=self.deck_size,
            pending=None if d is None else Decision(d.kind, d.seat, d.source, list(d.cards)),
            messages=[
                Message(m.id, m.trick, m.sender, m.recipient, m.text, m.status)
                for m in self.messages
            ],
            message_counter=self.message_counter,
            version=self.version,
            outcome=self.outcome,
        )

    def neighbours(self, seat: int) -> tuple[int, int]:
        """R2.2: the seat before and the seat after."""
        n = len(self.seats)
        return ((seat - 1) % n, (seat + 1) % n)
