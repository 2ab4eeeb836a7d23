"""Players and their booster collections."""

from __future__ import annotations

from datetime import datetime

import strawberry

from api.graphql.types.cards import Card, cards
from domain.game.cards import House
from domain.records import BoosterRecord
from domain.records import Player as DomainPlayer
from domain.services.players import Me as DomainMe


@strawberry.type(description="A guest player (public facts). Cache key: `id`.")
class Player:
    id: strawberry.ID = strawberry.field(description="The player's id, stable for good")
    name: str = strawberry.field(description="The name given at `createPlayer`")
    created_at: datetime = strawberry.field(description="When the account was created")

    @classmethod
    def from_domain(cls, p: DomainPlayer) -> Player:
        return cls(id=strawberry.ID(p.id), name=p.name, created_at=p.created_at)


@strawberry.type(
    description="R1.6: a booster pack, 15 commons, 2 rares and a house card; seen by its "
    "owner only. Cache key: `id`."
)
class BoosterPack:
    id: strawberry.ID = strawberry.field(description="The pack's id, unique across players")
    opened_at: datetime = strawberry.field(description="When it was opened")
    game_id: strawberry.ID | None = strawberry.field(
        description="The Sealed game it was opened for (R3.2); null when opened with "
        "`openBoosterPack`"
    )
    commons: list[Card] = strawberry.field(description="Its 15 common cards (no design twice)")
    rares: list[Card] = strawberry.field(description="Its 2 rare cards")
    house: House = strawberry.field(description="Its house card's house")

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


@strawberry.type(
    description="The caller and their collection. Cache key: `id` (the player's id); "
    "only that player ever gets it."
)
class Me:
    id: strawberry.ID = strawberry.field(description="Your player id (the same as `player.id`)")
    player: Player = strawberry.field(description="Your public facts")
    collection: list[BoosterPack] = strawberry.field(
        description="Every booster pack you opened, oldest first"
    )

    @classmethod
    def from_domain(cls, m: DomainMe) -> Me:
        return cls(
            id=strawberry.ID(m.player.id),
            player=Player.from_domain(m.player),
            collection=[BoosterPack.from_domain(r) for r in m.collection],
        )


@strawberry.type(
    description="A new guest account. Keep the token: it is shown only here. No cache "
    "key: a mutation result, not cached on its own."
)
class NewPlayer:
    player: Player = strawberry.field(description="The new player")
    token: str = strawberry.field(
        description="Send as `Authorization: Bearer <token>`; only its hash is stored, so it "
        "cannot be shown again (a repeat with the same `idempotencyKey` within the replay "
        "window, 24 hours by default, returns it)"
    )


@strawberry.type(
    description="Your new token (`rotateToken`); the one you sent no longer works. No cache "
    "key: an answer, not an object."
)
class NewToken:
    player: Player = strawberry.field(description="You")
    token: str = strawberry.field(
        description="Send as `Authorization: Bearer <token>` from now on; only its hash is "
        "stored, so it cannot be shown again"
    )


@strawberry.type(
    description="Signed out (`revokeToken`): the token you sent no longer works. No cache "
    "key: an answer, not an object."
)
class TokenRevoked:
    player: Player = strawberry.field(description="The player the token was for")
