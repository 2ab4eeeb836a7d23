"""GraphQL enums, mirrored from the domain's enums (names are the values)."""

from __future__ import annotations

import strawberry

from domain.bots.strategy import Strategy
from domain.errors import ErrorCode
from domain.game.cards import CardKind, House
from domain.game.options import AbilityTrigger, Format
from domain.game.state import DecisionKind, MessageStatus, Phase, Termination
from domain.records import GameStatus

ErrorCodeEnum = strawberry.enum(
    ErrorCode, name="ErrorCode", description="Why a request was refused (API.md)."
)
HouseEnum = strawberry.enum(House, name="House", description="R1.1: the houses, also suits.")
CardKindEnum = strawberry.enum(
    CardKind, name="CardKind", description="R1: what kind of card an id names."
)
FormatEnum = strawberry.enum(
    Format, name="GameFormat", description="R3: where the deck comes from."
)
TriggerEnum = strawberry.enum(
    AbilityTrigger,
    name="AbilityTrigger",
    description="R7.0: which plays trigger their house's ability.",
)
StrategyEnum = strawberry.enum(Strategy, name="BotStrategy", description="Bot strategies.")
PhaseEnum = strawberry.enum(Phase, name="Phase", description="What the game waits for.")
DecisionKindEnum = strawberry.enum(
    DecisionKind, name="DecisionKind", description="R7: the choices an ability asks for."
)
MessageStatusEnum = strawberry.enum(MessageStatus, name="MessageStatus")
TerminationEnum = strawberry.enum(Termination, name="Termination", description="R9.1")
GameStatusEnum = strawberry.enum(GameStatus, name="GameStatus")
