"""The public state of a started game (R11 "trick plays, won piles, prize
rows, discards, scores": everyone). No type here has a path to a hand, a
face-down card, a peek or a message text."""

from __future__ import annotations

from typing import Annotated

import strawberry

from api.graphql.types.cards import Card, cards
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


@strawberry.type(description="A face-up play; its value includes a Crazy second card (R7.1).")
class FaceUpPlay:
    seat: int
    card: Card
    second_card: Card | None
    value: int


@strawberry.type(description="R7.3: a face-down play; its card shows at resolution.")
class FaceDownPlay:
    seat: int
    has_second_card: bool


PlayEntry = Annotated[FaceUpPlay | FaceDownPlay, strawberry.union("PlayEntry")]


def play_entry(p: PlayView) -> FaceUpPlay | FaceDownPlay:
    if p.card is None:
        return FaceDownPlay(seat=p.seat, has_second_card=p.has_second)
    value = play_value(Play(p.seat, p.card, p.face_down, p.second))
    second = Card.of(p.second) if p.second else None
    return FaceUpPlay(seat=p.seat, card=Card.of(p.card), second_card=second, value=value)


@strawberry.type(description="The trick under way (R6-R8).")
class Trick:
    number: int
    prize: Card
    trump: House
    leader: int
    lead_suit: House | None
    plays: list[PlayEntry]
    passes: list[int]
    skipped: list[int]
    sleepy: bool = strawberry.field(description="R7.3: later plays are face down")
    sassy: bool = strawberry.field(description="R7.7: later plays must be Sassy")

    @classmethod
    def from_domain(cls, t: TrickView) -> Trick:
        return cls(
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


@strawberry.type(description="A seat as everyone sees it: its hand's size only (R11).")
class TableSeat:
    seat: int
    house: House | None
    is_rat: bool
    hand_size: int
    won: list[Card]
    prizes: list[Card]
    score: int

    @classmethod
    def from_domain(cls, s: SeatView) -> TableSeat:
        return cls(
            seat=s.seat,
            house=s.house,
            is_rat=s.is_rat,
            hand_size=s.hand_size,
            won=cards(s.won),
            prizes=cards(s.prizes),
            score=s.score,
        )


@strawberry.type(description="R5.4: that a message went from one seat to another is public.")
class MessageRoute:
    id: strawberry.ID
    trick: int
    from_seat: int
    to_seat: int
    status: MessageStatus

    @classmethod
    def from_domain(cls, m: DomainRoute) -> MessageRoute:
        return cls(
            id=strawberry.ID(m.id),
            trick=m.trick,
            from_seat=m.sender,
            to_seat=m.recipient,
            status=m.status,
        )


@strawberry.type(description="Who must decide what (R7.0b).")
class PendingDecision:
    kind: DecisionKind
    seat: int
    source: int


@strawberry.type(description="R9: how the game ended.")
class Outcome:
    termination: Termination
    winners: list[int]
    disqualified: list[int]
    scores: list[int]


@strawberry.type(description="The public state of a started game.")
class Table:
    phase: Phase
    to_act: int | None
    rat_seat: int
    seats: list[TableSeat]
    trick: Trick | None
    pending: PendingDecision | None
    rat_deck_size: int
    prize_pool_size: int
    discard: list[Card]
    messages: list[MessageRoute]
    outcome: Outcome | None

    @classmethod
    def from_domain(cls, v: PublicView) -> Table:
        o, d = v.outcome, v.pending
        return cls(
            phase=v.phase,
            to_act=v.to_act,
            rat_seat=v.rat,
            seats=[TableSeat.from_domain(s) for s in v.seats],
            trick=Trick.from_domain(v.trick) if v.trick else None,
            pending=PendingDecision(kind=d.kind, seat=d.seat, source=d.source) if d else None,
            rat_deck_size=v.rat_deck_size,
            prize_pool_size=v.prize_pool_size,
            discard=cards(v.discard),
            messages=[MessageRoute.from_domain(m) for m in v.messages],
            outcome=None
            if o is None
            else Outcome(
                termination=o.termination,
                winners=list(o.winners),
                disqualified=list(o.disqualified),
                scores=list(o.scores),
            ),
        )
