"""Rating a rated game as it ends (issue #26, docs/decisions/0065): in the
transaction that records the end, so each game is rated exactly once on
every instance (the game's save is conditional on its version, and each
rating's on its games count: a lost race runs again on fresh ratings)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime

from domain.errors import BadRequest
from domain.game.events import Event, GameEnded, SeatRating
from domain.game.state import Termination
from domain.ports import RatingModel, RatingStore
from domain.rating_pools import pool_of
from domain.ratings import (
    Rating,
    RatingPolicy,
    Skill,
    display,
    finishing_ranks,
    rated_seats,
    subject_of,
)
from domain.records import GameRecord


def seat_subjects(game: GameRecord) -> list[str]:
    """Who each seat's result counts for (domain/ratings.py)."""
    out = []
    for o in game.seats:
        assert o is not None, "a started game has every seat taken"
        out.append(subject_of(o.player_id, o.bot))
    return out


def rate(
    model: RatingModel, subjects: Sequence[str], known: Mapping[str, Skill], places: Sequence[int]
) -> tuple[list[Skill], dict[str, Skill]]:
    """Each seat's skill before a game (``known``, or a new subject's) and
    each subject's after it: the one step of a game's ending and of the
    rebuild (domain/services/rating_rebuild.py), so the two agree."""
    before = [known[s] if s in known else model.initial() for s in subjects]
    return before, rated_seats(subjects, before, model.rate(before, places))


def rated_end(
    store: RatingStore,
    model: RatingModel | None,
    policy: RatingPolicy,
    game: GameRecord,
    events: Sequence[Event],
    now: datetime,
) -> Sequence[Event]:
    """``events``; if they end a rated game by the rules (R9), its seats'
    new ratings are stored and its ``GameEnded`` carries them. An abandoned
    game is not rated. [decision]"""
    if not game.rated:
        return events
    ended = next((e for e in events if isinstance(e, GameEnded)), None)
    if ended is None or ended.termination is Termination.ABANDONED:
        return events
    if model is None:
        raise BadRequest("this server rates no games")
    assert game.state is not None and game.state.outcome is not None
    pool = pool_of(game.seat_count, game.options.format)
    subjects = seat_subjects(game)
    stored = store.get(pool, set(subjects), lock=True)
    known = {s: r.skill for s, r in stored.items()}
    before, after = rate(model, subjects, known, finishing_ranks(game.state.outcome))
    games = {s: (stored[s].games if s in stored else 0) + 1 for s in after}
    store.put([Rating(s, pool, skill, games[s], now) for s, skill in after.items()])
    seats = tuple(
        SeatRating(
            seat,
            pool,
            display(before[seat].mu),
            display(after[s].mu),
            display(after[s].mu) - display(before[seat].mu),
            display(after[s].sigma),
            games[s],
            policy.provisional(games[s]),
        )
        for seat, s in enumerate(subjects)
    )
    return [replace(e, ratings=seats) if e is ended else e for e in events]
