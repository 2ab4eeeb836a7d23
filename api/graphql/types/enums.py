"""GraphQL enums, mirrored from the domain's enums (names are the values).

The domain enums stay as they are: :func:`described` registers one with
``strawberry.enum`` and gives each of its values a description through the
definition's ``EnumValue`` entries, the same field ``strawberry.enum_value``
fills for enums declared in the API."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from enum import Enum
from typing import TypeVar

import strawberry
from strawberry.types.enum import has_enum_definition

from domain.bots.strategy import Strategy
from domain.errors import ErrorCode
from domain.game.cards import CardKind, House
from domain.game.choice import ChoiceKind, Takeover
from domain.game.options import AbilityTrigger, Format, Pace
from domain.game.state import DecisionKind, MessageStatus, Phase, Termination
from domain.rating_pools import RatingPool
from domain.records import GameStatus, Visibility

E = TypeVar("E", bound=Enum)


def described(cls: type[E], name: str, description: str, values: Mapping[E, str]) -> type[E]:
    """``cls`` as the GraphQL enum ``name``, every value described (a value
    missing from ``values`` is an error at import, not a blank in the schema)."""
    missing = [m.name for m in cls if m not in values]
    if missing:
        raise ValueError(f"{name}: no description for {', '.join(missing)}")
    registered: object = strawberry.enum(cls, name=name, description=description)
    assert has_enum_definition(registered)
    definition = registered.__strawberry_definition__
    definition.values = [
        dataclasses.replace(v, description=values[cls(v.value)]) for v in definition.values
    ]
    return cls


ErrorCodeEnum = described(
    ErrorCode,
    "ErrorCode",
    'Why a request was refused (docs/clients.md "Errors"): the code of a `Refusal`, or '
    "the `extensions.code` of a GraphQL error.",
    {
        ErrorCode.UNAUTHENTICATED: "The operation needs a player, or the token sent is not valid.",
        ErrorCode.FORBIDDEN: "Your role does not allow it (not the host, not seated in the game).",
        ErrorCode.NOT_FOUND: "No such game (a private game you may not see is none), player, "
        "message, invitation or invite code.",
        ErrorCode.BAD_INPUT: "An argument is malformed or out of range, or the document is "
        "invalid (syntax, validation, query limits).",
        ErrorCode.ILLEGAL_ACTION: "The rules do not allow this move now, or a per-player cap "
        "is reached (open lobby games, quick-play waits: close one first).",
        ErrorCode.NOT_YOUR_TURN: "Another seat must act first.",
        ErrorCode.GAME_NOT_STARTED: "The game is still in the lobby.",
        ErrorCode.GAME_FINISHED: "The game is over; it accepts no more moves (R9.3).",
        ErrorCode.STALE_STATE: "`expectedVersion` is not the game's version: reload the game.",
        ErrorCode.CONFLICT: "Another change to the same game came first; reload and retry.",
        ErrorCode.IDEMPOTENCY_KEY_REUSED: "This `idempotencyKey` was used before with "
        "different input.",
        ErrorCode.RATE_LIMITED: "Too many requests: wait `extensions.retryAfter` seconds "
        "(a `Refusal`'s `retryAfter`: an allowance a day, such as booster packs).",
        ErrorCode.INTERNAL: "A server failure, detail not shown; retry with the same "
        "`idempotencyKey` when `extensions.retryable` is true.",
    },
)
HouseEnum = described(
    House,
    "House",
    "R1.1: the seven houses, also the suits, in canonical order.",
    {
        House.CRAZY: "Crazy: the player adds a second card to the play (R7.1).",
        House.STINKY: "Stinky: the player gives a card to each neighbour (R7.2).",
        House.SLEEPY: "Sleepy: later plays of the trick are face down (R7.3).",
        House.HUNGRY: "Hungry: discard a card, take one from the Rat Deck (R7.4).",
        House.NEEDY: "Needy: a chosen neighbour gives the player a card (R7.5).",
        House.CURIOUS: "Curious: look at and reorder the Rat Deck's top 3 cards (R7.6).",
        House.SASSY: "Sassy: later plays of the trick must be Sassy (R7.7).",
    },
)
CardKindEnum = described(
    CardKind,
    "CardKind",
    "R1: what kind of card an id names.",
    {
        CardKind.NUMBERED: "A numbered suit card, played in tricks (R1.2).",
        CardKind.PRIZE: "A prize card, won with a trick into a prize row (R1.3).",
        CardKind.ASSIGNMENT: "An assignment card: a house player's identity (R1.3).",
        CardKind.RAT: "The Rat card, the dealer's (R1.4).",
    },
)
FormatEnum = described(
    Format,
    "GameFormat",
    "R3: where the deck comes from.",
    {
        Format.SINGLETON: "Every numbered design once (R3.1).",
        Format.SEALED: "The packs each seated person opens at the start (R3.2).",
        Format.FORMER_SEALED: "The collections the seated persons opened before (R3.3).",
    },
)
TriggerEnum = described(
    AbilityTrigger,
    "AbilityTrigger",
    "R7.0: which plays trigger their house's ability.",
    {
        AbilityTrigger.LEAD_AND_RARE: "The lead card, and a rare card however played (default).",
        AbilityTrigger.LEAD_ONLY: "The lead card only.",
        AbilityTrigger.EVERY_CARD: "Every face-up numbered card played.",
    },
)
StrategyEnum = described(
    Strategy,
    "BotStrategy",
    "How a bot chooses its moves; bots decide from their seat's view only.",
    {
        Strategy.RANDOM: "Any legal action, uniformly at random.",
        Strategy.GREEDY: "Wins a trick cheaply when the prize helps, dumps low cards otherwise.",
        Strategy.EXPERT: "Searches ahead (Monte Carlo) over deals consistent with what its "
        "seat has seen; plays seats taken over by default.",
    },
)
RatingPoolEnum = described(
    RatingPool,
    "RatingPool",
    "Where a rated game counts (docs/ratings.md): its deck kind (Singleton, or the "
    "sealed formats) by its seat-count band; a rating is per pool.",
    {
        RatingPool.SINGLETON_3_4: "Singleton games of 3 or 4 seats.",
        RatingPool.SINGLETON_5_6: "Singleton games of 5 or 6 seats.",
        RatingPool.SINGLETON_7_8: "Singleton games of 7 or 8 seats.",
        RatingPool.SEALED_3_4: "Sealed and Former Sealed games of 3 or 4 seats.",
        RatingPool.SEALED_5_6: "Sealed and Former Sealed games of 5 or 6 seats.",
        RatingPool.SEALED_7_8: "Sealed and Former Sealed games of 7 or 8 seats.",
    },
)
PhaseEnum = described(
    Phase,
    "Phase",
    "What a started game waits for.",
    {
        Phase.LEAD: "The leader must lead; the message window is open (R5.1, R6.2).",
        Phase.PLAY: "The seat `toAct` must play or pass (R6.3, R7.7).",
        Phase.DECISION: "The seat of the pending decision must answer it (R7.0b).",
        Phase.FINISHED: "The game is over (R9).",
    },
)
DecisionKindEnum = described(
    DecisionKind,
    "DecisionKind",
    "R7: the choices an ability asks for, each answered by `resolveDecision`.",
    {
        DecisionKind.CRAZY_SECOND_CARD: "Crazy: the second card to play (R7.1); send `card`.",
        DecisionKind.STINKY_GIFTS: "Stinky: a card for each neighbour (R7.2); send `gifts`.",
        DecisionKind.HUNGRY_DISCARD: "Hungry, step 1: the card to discard (R7.4); send `card`.",
        DecisionKind.HUNGRY_TAKE: "Hungry, step 2: the Rat Deck card to take (R7.4); send `card`.",
        DecisionKind.NEEDY_NEIGHBOUR: "Needy: the neighbour who must give (R7.5); send `seat`.",
        DecisionKind.NEEDY_GIFT: "Needy, the chosen neighbour: the card to give (R7.5); "
        "send `card`.",
        DecisionKind.CURIOUS_ORDER: "Curious: the new order of the Rat Deck's top cards, "
        "top first (R7.6); send `cards`.",
    },
)
MessageStatusEnum = described(
    MessageStatus,
    "MessageStatus",
    "R5: where a message is in its life.",
    {
        MessageStatus.PENDING: "Waiting for the Rat to deliver or decline it (R5.2).",
        MessageStatus.DELIVERED: "Delivered: the recipient may read it (R5.2, R5.4).",
        MessageStatus.DECLINED: "The Rat declined it; the recipient never reads it (R5.2).",
        MessageStatus.EXPIRED: "Still pending when the lead card was played (R5.3).",
    },
)
TerminationEnum = described(
    Termination,
    "Termination",
    "R9.1: why the game ended.",
    {
        Termination.RAT_ALL_HOUSES: "The Rat holds prize cards of all 7 houses and wins (R9.2).",
        Termination.HOUSE_PLAYER_ALL_HOUSES: "A house player holds prize cards of all 7 houses "
        "and is out of the ranking (R9.2).",
        Termination.PRIZE_POOL_EMPTY: "The prize pool is empty.",
        Termination.NO_CARDS_LEFT: "No seat holds a card.",
        Termination.ABANDONED: "Not a rule's end: nobody was left to play it (every person "
        "left, or bots played every person's seat and nobody reclaimed one in time, or "
        'nothing changed it for long: docs/clients.md "Abandoned games"). No winner.',
    },
)
GameStatusEnum = described(
    GameStatus,
    "GameStatus",
    "A game's life.",
    {
        GameStatus.LOBBY: "Filling its seats; not started.",
        GameStatus.RUNNING: "Started and being played.",
        GameStatus.FINISHED: "Over: see `Table.outcome`.",
        GameStatus.ABANDONED: "Over without a result: nobody was left to play it "
        '(`GameEnded` with termination `ABANDONED`; docs/clients.md "Abandoned games").',
    },
)
VisibilityEnum = described(
    Visibility,
    "Visibility",
    "Who may find, watch and join a game, chosen at `createGame` (docs/decisions/0062).",
    {
        Visibility.PUBLIC: "Listed in `games` and on `lobby`; anyone may watch it and sit.",
        Visibility.UNLISTED: "In no listing; anyone with its id may watch it; a seat is "
        "taken with its invite code (`joinByInviteCode`) or by invitation.",
        Visibility.PRIVATE: "In no listing; only its host, its players and its invited "
        "players may see it (to anyone else it is NOT_FOUND); a seat is taken by invitation "
        "or with its invite code.",
    },
)
ActionKindEnum = described(
    ChoiceKind,
    "ActionKind",
    "A kind of command a seat may send; a decision's is named as the decision (`DecisionKind`).",
    {
        ChoiceKind.PLAY_CARD: "Lead or follow with a card (R6.2, R6.3): `playCard`.",
        ChoiceKind.PASS: "Pass instead of following a Sassy lead (R7.7): `pass`.",
        ChoiceKind.DISCARD_AND_PLAY: "Discard a card, then play another, to follow a Sassy "
        "lead without a Sassy card (R7.7): `discardAndPlay`.",
        ChoiceKind.SEND_MESSAGE: "Send a message through the Rat (R5.1): `sendMessage`.",
        ChoiceKind.DELIVER_MESSAGE: "The Rat delivers a message (R5.2): `deliverMessage`.",
        ChoiceKind.DECLINE_MESSAGE: "The Rat declines a message (R5.2): `declineMessage`.",
        ChoiceKind.CRAZY_SECOND_CARD: "Crazy: the second card to play (R7.1); "
        "`resolveDecision` with `card`.",
        ChoiceKind.STINKY_GIFTS: "Stinky: a card for each neighbour (R7.2); "
        "`resolveDecision` with `gifts`.",
        ChoiceKind.HUNGRY_DISCARD: "Hungry, step 1: the card to discard (R7.4); "
        "`resolveDecision` with `card`.",
        ChoiceKind.HUNGRY_TAKE: "Hungry, step 2: the Rat Deck card to take (R7.4); "
        "`resolveDecision` with `card`.",
        ChoiceKind.NEEDY_NEIGHBOUR: "Needy: the neighbour who must give (R7.5); "
        "`resolveDecision` with `seat`.",
        ChoiceKind.NEEDY_GIFT: "Needy, the chosen neighbour: the card to give (R7.5); "
        "`resolveDecision` with `card`.",
        ChoiceKind.CURIOUS_ORDER: "Curious: the new order of the Rat Deck's top cards "
        "(R7.6); `resolveDecision` with `cards`.",
        ChoiceKind.RECLAIM_SEAT: "A bot plays your seat (you timed out too often): take it "
        "back with `reclaimSeat`; until then it is your only choice (docs/decisions/0050).",
    },
)
TakeoverEnum = described(
    Takeover,
    "Takeover",
    "A seat a bot plays for its player (docs/decisions/0046, 0050).",
    {
        Takeover.RECLAIMABLE: "Its player may play it again (`reclaimSeat`).",
        Takeover.LEFT: "Its player left the running game: the bot keeps it.",
    },
)
PaceEnum = described(
    Pace,
    "Pace",
    "How a game is played: at the table, or over days (issue #25).",
    {
        Pace.LIVE: "Turns of under an hour (or untimed): its players sit at the table.",
        Pace.CORRESPONDENCE: "Turns of an hour or more: played over days; each turn is told "
        "by a notification (`YourTurn`, `YourDeadlineSoon`).",
    },
)
