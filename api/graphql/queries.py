"""Queries: the caller, a game, the lobby listing, the catalogue, the log."""

from __future__ import annotations

from typing import Annotated

import strawberry

from api.graphql.context import Info
from api.graphql.cursors import decode_cursor, encode_cursor
from api.graphql.types.cards import CardDesign, catalogue_designs
from api.graphql.types.events import GameEvent, GameEventPage
from api.graphql.types.game import Game, GameSummaryType
from api.graphql.types.players import Me
from api.graphql.types.refusal import Refusal
from domain.errors import DomainError
from domain.records import GameStatus
from domain.services import players, queries

GameResult = Annotated[Game | Refusal, strawberry.union("GameResult")]
EventsResult = Annotated[GameEventPage | Refusal, strawberry.union("GameEventsResult")]


@strawberry.type
class GameEdge:
    cursor: str
    node: GameSummaryType


@strawberry.type
class PageInfo:
    has_next_page: bool
    end_cursor: str | None


@strawberry.type(description="Games, newest first (Relay-style connection).")
class GameConnection:
    edges: list[GameEdge]
    page_info: PageInfo


GamesResult = Annotated[GameConnection | Refusal, strawberry.union("GamesResult")]


@strawberry.type
class Query:
    @strawberry.field(description="The caller and their booster collection.")
    async def me(self, info: Info) -> Me:
        player = await info.context.require_player()
        return Me.from_domain(await players.me(info.context.deps, player.id))

    @strawberry.field(description="A game as the caller may see it; ``viewer`` when seated.")
    async def game(self, info: Info, id: strawberry.ID) -> GameResult:
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
        status: GameStatus | None = None,
        first: int = 20,
        after: str | None = None,
    ) -> GamesResult:
        await info.context.player()  # a bad token is refused on every operation
        try:
            before = decode_cursor(after) if after else None
            items, more = await queries.list_games(info.context.deps, status, before, first)
        except DomainError as e:
            return Refusal.of(e)
        edges = [
            GameEdge(cursor=encode_cursor(g), node=GameSummaryType.from_domain(g)) for g in items
        ]
        return GameConnection(
            edges=edges,
            page_info=PageInfo(has_next_page=more, end_cursor=edges[-1].cursor if edges else None),
        )

    @strawberry.field(description="Every numbered design with house, value, rarity (R1.2).")
    async def card_catalog(self, info: Info) -> list[CardDesign]:
        await info.context.player()  # a bad token is refused on every operation
        return catalogue_designs()

    @strawberry.field(description="The event log as the caller may see it, after ``afterSeq``.")
    async def game_events(
        self, info: Info, game_id: strawberry.ID, after_seq: int = 0, first: int = 50
    ) -> EventsResult:
        player = await info.context.player()
        try:
            events, more = await queries.read_events(
                info.context.deps, game_id, player.id if player else None, after_seq, first
            )
        except DomainError as e:
            return Refusal.of(e)
        return GameEventPage(
            events=[GameEvent.from_domain(e) for e in events],
            has_more=more,
            last_seq=events[-1].seq if events else after_seq,
        )
