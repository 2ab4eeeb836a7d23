"""Ratings and leaderboards (issue #26, docs/ratings.md)."""

from __future__ import annotations

import base64
from datetime import datetime

import strawberry

from api.graphql.types.pages import PageInfo
from domain.bots.strategy import Strategy
from domain.errors import BadRequest
from domain.rating_pools import RatingPool
from domain.ratings import Rating as DomainRating
from domain.ratings import RatingPolicy, display
from domain.services.leaderboards import Board, Cursor


@strawberry.type(
    description="A rating in one pool (docs/ratings.md). No cache key: a value inside its parent."
)
class Rating:
    pool: RatingPool = strawberry.field(description="The pool it counts in")
    rating: int = strawberry.field(
        description="The number shown: mu * 60 (a new player shows 1500)"
    )
    deviation: int = strawberry.field(description="Its uncertainty, sigma * 60")
    mu: float = strawberry.field(description="The model's skill estimate (OpenSkill)")
    sigma: float = strawberry.field(description="The model's uncertainty of it")
    games: int = strawberry.field(description="Rated games played in the pool")
    provisional: bool = strawberry.field(
        description="Too few rated games yet: not on the leaderboard"
    )
    last_played_at: datetime = strawberry.field(description="When its last rated game ended")

    @classmethod
    def from_domain(cls, r: DomainRating, policy: RatingPolicy) -> Rating:
        return cls(
            pool=r.pool,
            rating=r.display,
            deviation=display(r.skill.sigma),
            mu=r.skill.mu,
            sigma=r.skill.sigma,
            games=r.games,
            provisional=policy.provisional(r.games),
            last_played_at=r.last_at,
        )


@strawberry.type(
    description="A line of a leaderboard: a rank, whose rating it is (a player, or a bot "
    "strategy rated as its own player) and the rating. No cache key: a value inside its "
    "`Leaderboard`."
)
class Standing:
    rank: int = strawberry.field(description="1 is the best; equal ratings never share one")
    player_id: strawberry.ID | None = strawberry.field(
        description="The player's id; null for a bot"
    )
    bot: Strategy | None = strawberry.field(description="The bot strategy; null for a player")
    name: str = strawberry.field(description="The player's name, or the bot's")
    rating: Rating = strawberry.field(description="The rating")
    cursor: str = strawberry.field(description="Pass as `after` for the lines after this one")


@strawberry.type(
    description="A page of a pool's leaderboard, best first: settled ratings of players "
    "rated lately. No cache key: a page."
)
class Leaderboard:
    pool: RatingPool = strawberry.field(description="The pool")
    standings: list[Standing] = strawberry.field(description="This page's lines")
    page_info: PageInfo = strawberry.field(description="Whether and where the board goes on")

    @classmethod
    def from_domain(cls, board: Board, policy: RatingPolicy) -> Leaderboard:
        lines = [
            Standing(
                rank=s.rank,
                player_id=None if s.player_id is None else strawberry.ID(s.player_id),
                bot=s.bot,
                name=s.name,
                rating=Rating.from_domain(s.rating, policy),
                cursor=board_cursor((s.rating.skill.mu, s.rating.subject, s.rank)),
            )
            for s in board.standings
        ]
        return cls(
            pool=board.pool,
            standings=lines,
            page_info=PageInfo(
                has_next_page=board.has_next, end_cursor=lines[-1].cursor if lines else None
            ),
        )


def board_cursor(at: Cursor) -> str:
    mu, subject, rank = at
    return base64.urlsafe_b64encode(f"{rank}|{mu!r}|{subject}".encode()).decode()


def decode_board_cursor(cursor: str) -> Cursor:
    try:
        raw = base64.urlsafe_b64decode(cursor.encode()).decode()
        rank, mu, subject = raw.split("|", 2)
        if not rank.isdigit() or not subject:
            raise ValueError(raw)
        return float(mu), subject, int(rank)
    except (ValueError, UnicodeError) as e:
        raise BadRequest("not a cursor of this list") from e
