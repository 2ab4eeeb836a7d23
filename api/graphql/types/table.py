"""The public state of a started game (R11 "trick plays, won piles, prize
rows, discards, scores": everyone). No type here has a path to a hand, a
face-down card, a peek or a message text.

Cache identity (docs/clients.md "Cache identity"): everything here is the same for
every caller, so the ids are plain game-scoped keys (``<gameId>``,
``<gameId>:<seat>``, ``<gameId>:<trick number>``, ``<gameId>:<messageId>``)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Annotated, Any, Self

import strawberry

from api.graphql.context import Info
from api.graphql.types.cards import Card, cards
from api.graphql.types.keys import key
from domain.game.cards import House
from domain.game.resolution import play_value
from domain.game.state import (
    DecisionKind,
    MessageStatus,
    Phase,
    Play,
    Termination,
)
from domain.game.views import MessageRoute as DomainRoute
from domain.game.views import PlayView, PublicView, SeatView, TrickView
from domain.services import seat_presence
from domain.services.deps import Deps


@strawberry.type(
    description="A face-up play; its value includes a Crazy second card (R7.1). No cache "
    "key: a value inside its `Trick`."
)
class FaceUpPlay:
    seat: int = strawberry.field(description="The seat that played")
    card: Card = strawberry.field(description="The card played; its house is the play's suit")
    second_card: Card | None = strawberry.field(
        description="A Crazy second card (R7.1), added to the value; it goes to the Rat Deck"
    )
    value: int = strawberry.field(description="The play's value: the card's, plus the second's")


@strawberry.type(
    description="R7.3: a face-down play; its card shows at resolution (its owner sees it in "
    "`Viewer.faceDownPlays`). No cache key: a value inside its `Trick`."
)
class FaceDownPlay:
    seat: int = strawberry.field(description="The seat that played")
    has_second_card: bool = strawberry.field(
        description="Whether a Crazy second card lies face down with it"
    )


PlayEntry = Annotated[
    FaceUpPlay | FaceDownPlay,
    strawberry.union(
        "PlayEntry", description="A play of the trick: face up, or face down (R7.3) to you."
    ),
]


def play_entry(p: PlayView) -> FaceUpPlay | FaceDownPlay:
    if p.card is None:
        return FaceDownPlay(seat=p.seat, has_second_card=p.has_second)
    value = play_value(Play(p.seat, p.card, p.face_down, p.second))
    second = Card.of(p.second) if p.second else None
    return FaceUpPlay(seat=p.seat, card=Card.of(p.card), second_card=second, value=value)


@strawberry.type(description="The trick under way (R6-R8). Cache key: `id`.")
class Trick:
    id: strawberry.ID = strawberry.field(
        description="`<gameId>:<number>`: stable for the trick, unique across games"
    )
    number: int = strawberry.field(description="1 for the first trick, then 2, 3, ...")
    prize: Card = strawberry.field(description="The prize card the winner takes (R8.2)")
    trump: House = strawberry.field(description="The prize card's house (R6.1)")
    leader: int = strawberry.field(description="The seat that leads (or led) it")
    lead_suit: House | None = strawberry.field(
        description="The lead card's house (R6.2); null before the lead"
    )
    plays: list[PlayEntry] = strawberry.field(description="The plays so far, in play order")
    passes: list[int] = strawberry.field(description="Seats that passed under Sassy (R7.7)")
    skipped: list[int] = strawberry.field(description="Seats skipped with an empty hand (R6.4)")
    sleepy: bool = strawberry.field(description="R7.3: later plays are face down")
    sassy: bool = strawberry.field(description="R7.7: later plays must be Sassy")

    @classmethod
    def from_domain(cls, game_id: str, t: TrickView) -> Trick:
        return cls(
            id=key(game_id, t.number),
            number=t.number,
            prize=Card.of(t.prize),
            trump=t.trump,
            leader=t.leader,
            lead_suit=t.lead_suit,
            plays=[play_entry(p) for p in t.plays],
            passes=list(t.passes),
            skipped=list(t.skipped),
            sleepy=t.sleepy,
            sassy=t.sassy,
        )


class SeatPresence:
    """The presence of a game's seats, read once for all of them, when a
    selection first asks (docs/decisions/0047)."""

    def __init__(
        self, game_id: str, players: Sequence[str | None], bots: Sequence[object | None]
    ) -> None:
        self._game_id, self._players, self._bots = game_id, players, bots
        self._read: asyncio.Task[list[bool | None]] | None = None

    async def seat(self, deps: Deps, seat: int) -> bool | None:
        if self._read is None:
            self._read = asyncio.ensure_future(
                seat_presence.connected_seats(deps, self._game_id, self._players, self._bots)
            )
        return (await asyncio.shield(self._read))[seat]


@strawberry.type(
    description="A seat as everyone sees it: its hand's size only (R11). Cache key: `id`."
)
class TableSeat:
    id: strawberry.ID = strawberry.field(description="`<gameId>:<seat>`")
    seat: int = strawberry.field(description="The seat number, 0 to seatCount - 1, clockwise")
    house: House | None = strawberry.field(description="The seat's house; null for the Rat")
    is_rat: bool = strawberry.field(description="Whether this seat is the Rat (the dealer)")
    hand_size: int = strawberry.field(description="How many cards it holds (never which)")
    won: list[Card] = strawberry.field(description="Its won pile: cards of tricks it won (R8.2)")
    prizes: list[Card] = strawberry.field(description="Its prize row: prize cards won (R8.2)")
    score: int = strawberry.field(description="Its score now (R10)")
    presence: strawberry.Private[SeatPresence | None] = None

    @strawberry.field(
        description="Whether its player is connected: a live subscription to the game on any "
        "instance, or gone for less than the grace period (MMK_PRESENCE_GRACE); always true "
        "for a bot (a seat a bot took over from its player: that player's). Null while "
        "presence cannot be read (its store is away); the rest of the answer is served. "
        "Changes come on the `seatPresence` subscription"
    )
    async def connected(self, info: Info) -> bool | None:
        if self.presence is None:
            return False
        return await self.presence.seat(info.context.deps, self.seat)

    @classmethod
    def from_domain(
        cls, game_id: str, s: SeatView, presence: SeatPresence | None = None
    ) -> TableSeat:
        return cls(
            id=key(game_id, s.seat),
            seat=s.seat,
            house=s.house,
            is_rat=s.is_rat,
            hand_size=s.hand_size,
            won=cards(s.won),
            prizes=cards(s.prizes),
            score=s.score,
            presence=presence,
        )


@strawberry.type(
    description="R5.4: that a message went from one seat to another is public; its text is "
    "not (`Viewer.messages`). Cache key: `id`."
)
class MessageRoute:
    id: strawberry.ID = strawberry.field(
        description="`<gameId>:<messageId>`: unique across games (a `messageId` is not)"
    )
    message_id: strawberry.ID = strawberry.field(
        description="The message's id in its game, what `deliverMessage` and `declineMessage` take"
    )
    trick: int = strawberry.field(description="The trick it was sent before")
    from_seat: int = strawberry.field(description="The sender's seat")
    to_seat: int = strawberry.field(description="The recipient's seat")
    status: MessageStatus = strawberry.field(description="Where the message is in its life")

    @classmethod
    def from_domain(cls, game_id: str, m: DomainRoute, **more: Any) -> Self:
        """``more``: the fields a subclass adds (``Message.text``)."""
        return cls(
            id=key(game_id, m.id),
            message_id=strawberry.ID(m.id),
            trick=m.trick,
            from_seat=m.sender,
            to_seat=m.recipient,
            status=m.status,
            **more,
        )


@strawberry.type(
    description="Who must decide what (R7.0b). No cache key: a value inside its `Table`."
)
class PendingDecision:
    kind: DecisionKind = strawberry.field(description="The choice asked for")
    seat: int = strawberry.field(description="The seat that must answer (`resolveDecision`)")
    source: int = strawberry.field(description="The seat whose card's ability asked for it")


@strawberry.type(description="R9: how the game ended. No cache key: a value inside its `Table`.")
class Outcome:
    termination: Termination = strawberry.field(description="Why the game ended (R9.1)")
    winners: list[int] = strawberry.field(description="The winning seats; several on a tie")
    disqualified: list[int] = strawberry.field(
        description="House players who held all 7 houses: out of the ranking (R9.2)"
    )
    scores: list[int] = strawberry.field(description="Final scores, by seat (R10)")


@strawberry.type(
    description="The public state of a started game, the same for everyone (R11). Cache key: `id`."
)
class Table:
    id: strawberry.ID = strawberry.field(description="The game's id")
    phase: Phase = strawberry.field(description="What the game waits for")
    to_act: int | None = strawberry.field(
        description="The seat that must act now (lead, play or decide); null once finished"
    )
    rat_seat: int = strawberry.field(description="The Rat's seat")
    seats: list[TableSeat] = strawberry.field(description="Every seat, by seat number")
    trick: Trick | None = strawberry.field(description="The trick under way; null once finished")
    pending: PendingDecision | None = strawberry.field(
        description="The decision the game waits for, if any"
    )
    rat_deck_size: int = strawberry.field(description="Cards left in the Rat Deck (R4.4)")
    prize_pool_size: int = strawberry.field(description="Prize cards left in the pool (R4.4)")
    discard: list[Card] = strawberry.field(
        description="The discard pile, face up (R7.4, R7.7), oldest first"
    )
    messages: list[MessageRoute] = strawberry.field(
        description="Every message's route and status, oldest first (R5.4)"
    )
    outcome: Outcome | None = strawberry.field(description="How it ended; null while running")

    @classmethod
    def from_domain(
        cls, game_id: str, v: PublicView, presence: SeatPresence | None = None
    ) -> Table:
        """``presence``: the game's seats' presence, read once if asked for."""
        o, d = v.outcome, v.pending
        return cls(
            id=strawberry.ID(game_id),
            phase=v.phase,
            to_act=v.to_act,
            rat_seat=v.rat,
            seats=[TableSeat.from_domain(game_id, s, presence) for s in v.seats],
            trick=Trick.from_domain(game_id, v.trick) if v.trick else None,
            pending=PendingDecision(kind=d.kind, seat=d.seat, source=d.source) if d else None,
            rat_deck_size=v.rat_deck_size,
            prize_pool_size=v.prize_pool_size,
            discard=cards(v.discard),
            messages=[MessageRoute.from_domain(game_id, m) for m in v.messages],
            outcome=None
            if o is None
            else Outcome(
                termination=o.termination,
                winners=list(o.winners),
                disqualified=list(o.disqualified),
                scores=list(o.scores),
            ),
        )
