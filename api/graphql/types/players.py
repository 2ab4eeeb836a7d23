"""Players and their booster collections."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import strawberry

from api.graphql.cursors import cursor_of, decode_cursor
from api.graphql.in_turns import in_turns
from api.graphql.types.cards import Card, cards
from api.graphql.types.invitations import InvitationConnection, invitations_page
from api.graphql.types.my_games import MyGameConnection, MyGamesFilter, PlayerStats, games_page
from api.graphql.types.notifications import NotificationPage
from api.graphql.types.pages import PageInfo
from api.graphql.types.ratings import Rating
from api.graphql.types.sessions import Session
from api.graphql.types.webhooks import NotificationSettings, kinds_of
from domain.game.cards import House
from domain.rating_pools import RatingPool
from domain.records import BoosterRecord, PackPage
from domain.records import Player as DomainPlayer
from domain.services import leaderboards, my_games, notifications, players, sessions, webhooks
from domain.services.queries import MAX_PAGE


@strawberry.type(description="A guest player (public facts). Cache key: `id`.")
class Player:
    id: strawberry.ID = strawberry.field(description="The player's id, stable for good")
    name: str = strawberry.field(description="The name given at `createPlayer`")
    created_at: datetime = strawberry.field(description="When the account was created")

    @strawberry.field(description="The player's rating in `pool`; null until rated there")
    async def rating(
        self,
        info: strawberry.Info,
        pool: Annotated[RatingPool, strawberry.argument(description="The pool")],
    ) -> Rating | None:
        deps = info.context.deps
        found = await leaderboards.ratings_of(deps, str(self.id))
        return next((Rating.from_domain(r, deps.ratings) for r in found if r.pool is pool), None)

    @strawberry.field(description="The player's ratings, one per pool they played rated games in")
    async def ratings(self, info: strawberry.Info) -> list[Rating]:
        deps = info.context.deps
        found = await leaderboards.ratings_of(deps, str(self.id))
        return [Rating.from_domain(r, deps.ratings) for r in found]

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
    description="One pack of a collection and its cursor. No cache key: a value inside its "
    "`BoosterPackConnection` (the node is cached by its own `id`)."
)
class BoosterPackEdge:
    cursor: str = strawberry.field(description="Pass as `after` for the packs after this one")
    node: BoosterPack = strawberry.field(description="The pack")


@strawberry.type(
    description="A page of a collection, oldest pack first (Relay-style connection). No "
    "cache key: a page; merge pages on `Me.collection`."
)
class BoosterPackConnection:
    packs: strawberry.Private[list[BoosterPackEdge]]
    edges: list[BoosterPackEdge] = strawberry.field(
        resolver=lambda root: in_turns(root.packs),  # a pack at a time: ~1 ms with every card
        description="This page's packs",
    )
    page_info: PageInfo = strawberry.field(description="Whether and where the collection goes on")
    total_count: int = strawberry.field(description="Packs in the whole collection")

    @classmethod
    def from_domain(cls, page: PackPage) -> BoosterPackConnection:
        edges = [
            BoosterPackEdge(cursor=cursor_of(r.opened_at, r.id), node=BoosterPack.from_domain(r))
            for r in page.items
        ]
        return cls(
            packs=edges,
            page_info=PageInfo(
                has_next_page=page.has_next, end_cursor=edges[-1].cursor if edges else None
            ),
            total_count=page.total,
        )


@strawberry.type(
    description="The caller and their collection. Cache key: `id` (the player's id); "
    "only that player ever gets it."
)
class Me:
    id: strawberry.ID = strawberry.field(description="Your player id (the same as `player.id`)")
    player: Player = strawberry.field(description="Your public facts")

    @strawberry.field(
        description=f"The booster packs you opened, oldest first, a page at a time (1 to "
        f"{MAX_PAGE} a page)"
    )
    async def collection(
        self,
        info: strawberry.Info,
        first: Annotated[int, strawberry.argument(description=f"Page size, 1 to {MAX_PAGE}")] = 20,
        after: Annotated[
            str | None,
            strawberry.argument(description="A cursor (`endCursor`): the packs after it"),
        ] = None,
    ) -> BoosterPackConnection:
        start = decode_cursor(after) if after else None
        page = await players.collection(info.context.deps, str(self.id), start, first)
        return BoosterPackConnection.from_domain(page)

    @strawberry.field(
        description="Your rank on `pool`'s leaderboard (1 the best); null while you are not on "
        "it: unrated there, provisional, or not rated lately"
    )
    async def rank(
        self,
        info: strawberry.Info,
        pool: Annotated[RatingPool, strawberry.argument(description="The pool")],
    ) -> int | None:
        return await leaderboards.rank_of(info.context.deps, str(self.id), pool)

    @strawberry.field(
        description="Your live MMK tokens, the most recently used first (a provider's JWT is "
        "none of them: it ends at its expiry)"
    )
    async def sessions(self, info: strawberry.Info) -> list[Session]:
        found = await sessions.list_sessions(info.context.deps, str(self.id), info.context.token())
        return [Session.from_domain(s, found.current) for s in found.items]

    @strawberry.field(
        description=f"The games you sit in: those waiting for you first (the nearest deadline "
        f"first), then the others (the most recent change for you first); 1 to {MAX_PAGE} a "
        f"page"
    )
    async def games(
        self,
        info: strawberry.Info,
        filter: Annotated[
            MyGamesFilter | None, strawberry.argument(description="Which games; null: all")
        ] = None,
        first: Annotated[int, strawberry.argument(description=f"Page size, 1 to {MAX_PAGE}")] = 20,
        after: Annotated[
            str | None,
            strawberry.argument(description="A cursor (`endCursor`): the games after it"),
        ] = None,
    ) -> MyGameConnection:
        return await games_page(info.context.deps, str(self.id), filter, first, after)

    @strawberry.field(
        description=f"Your invitations to games not yet started, newest first; 1 to "
        f"{MAX_PAGE} a page (docs/decisions/0062)"
    )
    async def invitations(
        self,
        info: strawberry.Info,
        first: Annotated[int, strawberry.argument(description=f"Page size, 1 to {MAX_PAGE}")] = 20,
        after: Annotated[
            str | None,
            strawberry.argument(description="A cursor (`endCursor`): the invitations after it"),
        ] = None,
    ) -> InvitationConnection:
        return await invitations_page(info.context.deps, str(self.id), first, after)

    @strawberry.field(
        description=f"What happened in your games while you may have been away (issue #25), "
        f"after `afterSeq`, oldest first; 1 to {MAX_PAGE} a page"
    )
    async def notifications(
        self,
        info: strawberry.Info,
        after_seq: Annotated[
            int, strawberry.argument(description="The last seq you have (0: from the first)")
        ] = 0,
        first: Annotated[int, strawberry.argument(description=f"Page size, 1 to {MAX_PAGE}")] = 20,
        unread_only: Annotated[
            bool, strawberry.argument(description="Only those not marked read")
        ] = False,
    ) -> NotificationPage:
        page = await notifications.my_notifications(
            info.context.deps, str(self.id), after_seq, first, unread_only
        )
        return NotificationPage.from_domain(page, after_seq)

    @strawberry.field(
        description="Which kinds of your notifications your app's backend is sent "
        "(`updateNotificationSettings`)"
    )
    async def notification_settings(self, info: strawberry.Info) -> NotificationSettings:
        chosen = await webhooks.push_kinds(info.context.deps, str(self.id))
        return NotificationSettings(push=kinds_of(chosen))

    @strawberry.field(description="Your record: games finished and won, by format and seats")
    async def stats(self, info: strawberry.Info) -> PlayerStats:
        return PlayerStats.from_domain(await my_games.my_stats(info.context.deps, str(self.id)))

    @classmethod
    def from_domain(cls, p: DomainPlayer) -> Me:
        return cls(id=strawberry.ID(p.id), player=Player.from_domain(p))


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
