"""Players and their booster collections."""

from __future__ import annotations

from datetime import datetime

import strawberry

from api.graphql.types.cards import Card, cards
from domain.game.cards import House
from domain.records import BoosterRecord, Player
from domain.services.players import Me as DomainMe


@strawberry.type(description="A guest player (public facts).")
class PlayerType:
    id: strawberry.ID
    name: str
    created_at: datetime

    @classmethod
    def from_domain(cls, p: Player) -> PlayerType:
        return cls(id=strawberry.ID(p.id), name=p.name, created_at=p.created_at)


@strawberry.type(description="R1.6: 15 commons, 2 rares and a house card.")
class BoosterPack:
    id: strawberry.ID
    opened_at: datetime
    game_id: strawberry.ID | None
    commons: list[Card]
    rares: list[Card]
    house: House

    @classmethod
    def from_domain(cls, r: BoosterRecord) -> BoosterPack:
        return cls(
            id=strawberry.ID(r.id),
            opened_at=r.opened_at,
            game_id=strawberry.ID(r.game_id) if r.game_id else None,
            commons=cards(r.pack.commons),
            rares=cards(r.pack.rares),
            house=r.pack.house,
        )


@strawberry.type(description="The caller and their collection.")
class Me:
    player: PlayerType
    collection: list[BoosterPack]

    @classmethod
    def from_domain(cls, m: DomainMe) -> Me:
        return cls(
            player=PlayerType.from_domain(m.player),
            collection=[BoosterPack.from_domain(r) for r in m.collection],
        )


@strawberry.type(description="A new guest account. Keep the token: it is shown only here.")
class NewPlayer:
    player: PlayerType
    token: str
