"""A player's own games and record (issue #24): ``Me.games``, ``Me.stats``."""

from __future__ import annotations

from datetime import datetime

import strawberry

from api.graphql.cursors import decode_rank_cursor, rank_cursor
from api.graphql.types.game import GameSummary
from api.graphql.types.pages import PageInfo
from domain.bots.strategy import Strategy
from domain.game.options import Format
from domain.my_games import MyGame as DomainMyGame
from domain.my_games import MyGamesPage, StatLine
from domain.records import GameStatus
from domain.services.deps import Deps
from domain.services.my_games import my_games


@strawberry.type(
    description="Who sits in a seat of one of your games. No cache key: a value inside its "
    "`MyGame`."
)
class MyGameSeat:
    seat: int = strawberry.field(description="The seat number")
    player_id: strawberry.ID | None = strawberry.field(
        description="The seated player's id (also while a bot plays for them); null for a "
        "bot's own seat or a free one"
    )
    player_name: str | None = strawberry.field(description="The seated player's name")
    bot: Strategy | None = strawberry.field(
        description="The bot playing the seat (a bot's seat, or a player's taken over)"
    )


@strawberry.type(
    description="One of your games, as your list of games shows it: your seat, whether it "
    "waits for you and until when, who sits where, and once finished your score and place. "
    "No cache key: a value inside its `MyGameConnection` (its `game` is cached by its `id`)."
)
class MyGame:
    game: GameSummary = strawberry.field(description="The game (open it with `game(id)`)")
    seat: int = strawberry.field(description="Your seat")
    your_turn: bool = strawberry.field(
        description="The game waits for you (not while a bot plays your seat)"
    )
    deadline: datetime | None = strawberry.field(
        description="When your turn times out (a timed game); null otherwise"
    )
    last_change_at: datetime = strawberry.field(
        description="When the game last changed for you: your turn came or went, it started "
        "or ended"
    )
    seats: list[MyGameSeat] = strawberry.field(description="Who sits where")
    score: int | None = strawberry.field(
        description="Your final score (R10; an abandoned game's as it stood); null until the end"
    )
    place: int | None = strawberry.field(
        description="Your final place, 1 the best (R9.2: ties share a place, a house player "
        "with all 7 houses last); null until the end, and for an abandoned game"
    )
    won: bool | None = strawberry.field(
        description="You won or shared the win (R9.2); null until the end, and for an "
        "abandoned game"
    )

    @classmethod
    def from_domain(cls, g: DomainMyGame) -> MyGame:
        e = g.entry
        return cls(
            game=GameSummary.from_domain(g.summary),
            seat=e.seat,
            your_turn=e.your_turn,
            deadline=e.deadline,
            last_change_at=e.updated_at,
            seats=[
                MyGameSeat(
                    seat=s.seat,
                    player_id=None if s.player_id is None else strawberry.ID(s.player_id),
                    player_name=s.name,
                    bot=None if s.bot is None else Strategy(s.bot),
                )
                for s in g.seats
            ],
            score=e.score,
            place=e.place,
            won=e.won,
        )


@strawberry.type(description="One of your games and its cursor. No cache key: a value.")
class MyGameEdge:
    cursor: str = strawberry.field(description="Pass as `after` for the games after this one")
    node: MyGame = strawberry.field(description="The game")


@strawberry.type(
    description="A page of your games: those waiting for you first (the nearest deadline "
    "first), then the others (the most recent change for you first). No cache key: a page; "
    "merge "
    "pages on `Me.games`."
)
class MyGameConnection:
    edges: list[MyGameEdge] = strawberry.field(description="This page's games")
    page_info: PageInfo = strawberry.field(description="Whether and where the list goes on")

    @classmethod
    def from_domain(cls, page: MyGamesPage) -> MyGameConnection:
        edges = [
            MyGameEdge(
                cursor=rank_cursor(g.entry.rank, g.entry.game_id), node=MyGame.from_domain(g)
            )
            for g in page.items
        ]
        return cls(
            edges=edges,
            page_info=PageInfo(
                has_next_page=page.has_next, end_cursor=edges[-1].cursor if edges else None
            ),
        )


@strawberry.input(description="Which of your games to list")
class MyGamesFilter:
    status: GameStatus | None = strawberry.field(
        default=None, description="Only games in this state"
    )
    your_turn: bool | None = strawberry.field(
        default=None, description="true: only those waiting for you; false: the others"
    )


@strawberry.type(
    description="Your finished games of one format and seat count. No cache key: a value."
)
class StatsLine:
    format: Format = strawberry.field(description="The deck's format (R3)")
    seat_count: int = strawberry.field(description="Seats at the table")
    played: int = strawberry.field(description="Games finished (abandoned ones not counted)")
    won: int = strawberry.field(description="Games won, shared wins included (R9.2)")


@strawberry.type(description="Your record. No cache key: a value of `Me`.")
class PlayerStats:
    played: int = strawberry.field(description="Games finished (abandoned ones not counted)")
    won: int = strawberry.field(description="Games won, shared wins included (R9.2)")
    lines: list[StatsLine] = strawberry.field(description="By format and seat count")

    @classmethod
    def from_domain(cls, lines: list[StatLine]) -> PlayerStats:
        return cls(
            played=sum(s.played for s in lines),
            won=sum(s.won for s in lines),
            lines=[
                StatsLine(
                    format=Format(s.format), seat_count=s.seat_count, played=s.played, won=s.won
                )
                for s in lines
            ],
        )


async def games_page(
    deps: Deps, player_id: str, filter: MyGamesFilter | None, first: int, after: str | None
) -> MyGameConnection:
    """A page of a player's games (``Me.games``, ``playerGames``); a bad
    cursor or page size raises ``BAD_INPUT``."""
    chosen = filter or MyGamesFilter()
    start = decode_rank_cursor(after) if after else None
    page = await my_games(deps, player_id, chosen.status, chosen.your_turn, start, first)
    return MyGameConnection.from_domain(page)
