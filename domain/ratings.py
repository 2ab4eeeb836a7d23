"""Ratings of rated games (issue #26, docs/decisions/0065): pools, who a
seat's result counts for, the finishing order a rating model reads (R9.2),
and what a rating shows.

The model itself (OpenSkill's Plackett-Luce) is a port
(:class:`domain.ports.RatingModel`): no rating maths is written here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from domain.bots.strategy import Strategy
from domain.game.state import Outcome
from domain.rating_pools import RatingPool

DISPLAY_SCALE = 60
"""A rating shows as ``round(mu * 60)``: a new player (mu 25) shows 1500."""
BOT_PREFIX = "bot:"


def bot_subject(strategy: Strategy) -> str:
    """The rated subject a bot plays as: each strategy is one player."""
    return BOT_PREFIX + strategy.name


def subject_of(player_id: str | None, bot: Strategy | None) -> str:
    """Who a seat's result counts for: its player, even when a bot took the
    seat over (timeouts, a leave); a seat a bot was given, the bot."""
    if player_id is not None:
        return player_id
    assert bot is not None, "an empty seat has no result"
    return bot_subject(bot)


def finishing_ranks(outcome: Outcome) -> tuple[int, ...]:
    """Each seat's place, 1 the best (R9.2, R10): the winners share 1; the
    others follow by score, equal scores sharing a place; a disqualified
    house player is last, whatever its score. Places are competition ranks
    (1, 1, 3): only their order matters to the model."""
    n = len(outcome.scores)
    winners, out = set(outcome.winners), set(outcome.disqualified)

    def key(seat: int) -> tuple[int, int]:
        group = 0 if seat in winners else 2 if seat in out else 1
        return (group, -outcome.scores[seat] if group == 1 else 0)

    keys = [key(s) for s in range(n)]
    return tuple(1 + sum(k < keys[s] for k in keys) for s in range(n))


@dataclass(frozen=True, slots=True)
class Skill:
    """A model's belief about a subject: ``mu`` and its uncertainty ``sigma``."""

    mu: float
    sigma: float


@dataclass(frozen=True, slots=True)
class Rating:
    """A subject's rating in one pool after ``games`` rated games, the last
    at ``last_at``."""

    subject: str
    pool: RatingPool
    skill: Skill
    games: int
    last_at: datetime

    @property
    def display(self) -> int:
        return display(self.skill.mu)


def display(mu: float) -> int:
    """The number a rating shows (:data:`DISPLAY_SCALE`)."""
    return round(mu * DISPLAY_SCALE)


@dataclass(frozen=True, slots=True)
class RatingPolicy:
    """A rating is provisional until ``provisional_games`` rated games;
    leaderboards list only players rated in the last ``active_for``."""

    provisional_games: int = 10
    active_for: timedelta = timedelta(days=30)

    def provisional(self, games: int) -> bool:
        return games < self.provisional_games


def rated_seats(
    subjects: Sequence[str], before: Sequence[Skill], after: Sequence[Skill]
) -> dict[str, Skill]:
    """Each subject's new skill. [decision] A subject in several seats of
    one game (a bot strategy seated twice) moves by the mean of its seats'
    changes and keeps the largest of their new uncertainties: the same for
    every order of the seats."""
    moved: dict[str, list[int]] = {}
    for i, s in enumerate(subjects):
        moved.setdefault(s, []).append(i)
    out: dict[str, Skill] = {}
    for s, seats in moved.items():
        mu0 = before[seats[0]].mu
        mu = mu0 + sum(after[i].mu - mu0 for i in seats) / len(seats)
        out[s] = Skill(mu, max(after[i].sigma for i in seats))
    return out
