"""Queries: the caller, a game, the lobby listing, the catalogue, the log."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import strawberry

from api.graphql import service_ops, webhook_ops
from api.graphql.context import Info
from api.graphql.cursors import decode_cursor, encode_cursor
from api.graphql.types.cards import CardDesign, catalogue_designs
from api.graphql.types.events import GameEventPage, typed
from api.graphql.types.game import Game, GameSummary
from api.graphql.types.pages import PageInfo
from api.graphql.types.players import Me, Player
from api.graphql.types.ratings import Leaderboard, decode_board_cursor
from api.graphql.types.refusal import Refusal
from api.graphql.types.replay import ReplayPage
from domain.errors import DomainError
from domain.featured import LIVE_FOR
from domain.rating_pools import RatingPool
from domain.records import GameStatus
from domain.services import featured_games, game_replay, leaderboards, players, queries

GameResult = Annotated[
    Game | Refusal,
    strawberry.union("GameResult", description="The game, or why it cannot be shown."),
]
EventsResult = Annotated[
    GameEventPage | Refusal,
    strawberry.union("GameEventsResult", description="A page of the log, or why not."),
]


@strawberry.type(
    description="One game of the listing and its cursor. No cache key: a value inside its "
    "`GameConnection` (the node is cached by its own `id`)."
)
class GameEdge:
    cursor: str = strawberry.field(description="Pass as `after` to list the games after this one")
    node: GameSummary = strawberry.field(description="The game")


@strawberry.type(
    description="Games, newest first (Relay-style connection). No cache key: a page; merge "
    "pages on `Query.games` (e.g. Apollo's `relayStylePagination`)."
)
class GameConnection:
    edges: list[GameEdge] = strawberry.field(description="This page's games, newest first")
    page_info: PageInfo = strawberry.field(description="Whether and where the listing goes on")


GamesResult = Annotated[
    GameConnection | Refusal,
    strawberry.union("GamesResult", description="A page of the listing, or why not."),
]

ReplayResult = Annotated[
    ReplayPage | Refusal,
    strawberry.union("ReplayResult", description="A page of a finished game's replay, or why not."),
]

GameId = Annotated[strawberry.ID, strawberry.argument(description="The game's id")]
First = Annotated[int, strawberry.argument(description="Page size, 1 to 100")]
AfterSeq = Annotated[
    int, strawberry.argument(description="Start after this seq (0: from the first)")
]


@strawberry.type(
    description="Reads: the caller, games, the lobby listing, cards, event logs. Rule ids "
    "in the schema's descriptions (`R7.2`) are the game's rules, each with an anchor in "
    "docs/rules.md of the server's repository (`docs/rules.md#r7-2`)."
)
class Query:
    @strawberry.field(
        description="The caller and their booster collection; null for an anonymous "
        "caller (no token). A bad token is refused with UNAUTHENTICATED, as everywhere."
    )
    async def me(self, info: Info) -> Me | None:
        # Nullable so that an anonymous query asking for ``me`` beside other
        # fields (``{ me {...} cardCatalog {...} }``) still gets its siblings.
        player = await info.context.player()
        if player is None:
            return None
        return Me.from_domain(player)

    @strawberry.field(description="A game as the caller may see it; `viewer` when seated.")
    async def game(self, info: Info, id: GameId) -> GameResult:
        player = await info.context.player()
        try:
            snap = await queries.get_game(info.context.deps, id, player.id if player else None)
        except DomainError as e:
            return Refusal.of(e)
        return Game.from_domain(snap)

    @strawberry.field(description="The lobby listing, newest first.")
    async def games(
        self,
        info: Info,
        status: Annotated[
            GameStatus | None, strawberry.argument(description="Only games in this state")
        ] = None,
        first: First = 20,
        after: Annotated[
            str | None,
            strawberry.argument(description="A cursor (`endCursor`): list the games after it"),
        ] = None,
    ) -> GamesResult:
        await info.context.player()  # a bad token is refused on every operation
        try:
            before = decode_cursor(after) if after else None
            items, more = await queries.list_games(info.context.deps, status, before, first)
        except DomainError as e:
            return Refusal.of(e)
        edges = [GameEdge(cursor=encode_cursor(g), node=GameSummary.from_domain(g)) for g in items]
        return GameConnection(
            edges=edges,
            page_info=PageInfo(has_next_page=more, end_cursor=edges[-1].cursor if edges else None),
        )

    @strawberry.field(
        description="The server's time now (ISO 8601): compare with a `deadline` to correct "
        "the client's clock (docs/decisions/0046)"
    )
    async def server_time(self, info: Info) -> datetime:
        await info.context.player()  # a bad token is refused on every operation
        return info.context.deps.clock.now()

    @strawberry.field(description="A player's public facts and ratings; null: no such player.")
    async def player(
        self, info: Info, id: Annotated[strawberry.ID, strawberry.argument(description="Its id")]
    ) -> Player | None:
        await info.context.player()  # a bad token is refused on every operation
        found = await players.public_player(info.context.deps, str(id))
        return None if found is None else Player.from_domain(found)

    @strawberry.field(
        description="A pool's leaderboard, best first (docs/ratings.md): settled ratings "
        "(not provisional) of players rated lately, bots' strategies among them"
    )
    async def leaderboard(
        self,
        info: Info,
        pool: Annotated[RatingPool, strawberry.argument(description="The pool")],
        first: Annotated[
            int, strawberry.argument(description=f"Page size, 1 to {queries.MAX_PAGE}")
        ] = 20,
        after: Annotated[
            str | None,
            strawberry.argument(description="A cursor (`endCursor`): the lines after it"),
        ] = None,
    ) -> Leaderboard:
        await info.context.player()  # a bad token is refused on every operation
        deps = info.context.deps
        start = decode_board_cursor(after) if after else None
        board = await leaderboards.leaderboard(deps, pool, first, start)
        return Leaderboard.from_domain(board, deps.ratings)

    @strawberry.field(description="Every numbered design with house, value, rarity (R1.2).")
    async def card_catalog(self, info: Info) -> list[CardDesign]:
        await info.context.player()  # a bad token is refused on every operation
        return catalogue_designs()

    @strawberry.field(description="The event log as the caller may see it, after `afterSeq`.")
    async def game_events(
        self,
        info: Info,
        game_id: GameId,
        after_seq: AfterSeq = 0,
        first: First = 50,
    ) -> EventsResult:
        player = await info.context.player()
        try:
            events, more = await queries.read_events(
                info.context.deps, game_id, player.id if player else None, after_seq, first
            )
        except DomainError as e:
            return Refusal.of(e)
        return GameEventPage(
            events=[typed(e) for e in events],
            has_more=more,
            last_seq=events[-1].seq if events else after_seq,
        )

    @strawberry.field(
        description="A finished game step by step, every seat's view shown (R11): once the "
        "rules ended it (and only then), what each seat saw is revealed, practice and fair "
        "games alike. A private game only to those who may see it."
    )
    async def game_replay(
        self,
        info: Info,
        game_id: GameId,
        after_seq: AfterSeq = 0,
        first: Annotated[
            int,
            strawberry.argument(
                description="Page size, 1 to 100; a step is priced for every seat of the largest "
                "table, so about 12 steps with a few fields each fit the cost limit"
            ),
        ] = 12,
    ) -> ReplayResult:
        player = await info.context.player()
        try:
            page = await game_replay.read_replay(
                info.context.deps, game_id, player.id if player else None, after_seq, first
            )
        except DomainError as e:
            return Refusal.of(e)
        return ReplayPage.from_domain(page, after_seq)

    @strawberry.field(
        description="Live public games worth watching, busiest first: most people playing, "
        "then rated games, then the latest move; only games that moved in the last "
        f"{LIVE_FOR.total_seconds() / 60:g} minutes."
    )
    async def featured_games(
        self,
        info: Info,
        first: Annotated[
            int, strawberry.argument(description=f"How many, 1 to {featured_games.MAX_FEATURED}")
        ] = 10,
    ) -> list[GameSummary]:
        await info.context.player()  # a bad token is refused on every operation
        found = await featured_games.featured_games(info.context.deps, first)
        return [GameSummary.from_domain(g) for g in found]

    player_by_external_id = service_ops.PLAYER_BY_EXTERNAL_ID
    player_games = service_ops.PLAYER_GAMES
    webhook_endpoints = webhook_ops.WEBHOOK_ENDPOINTS
    webhook_messages = webhook_ops.WEBHOOK_MESSAGES
