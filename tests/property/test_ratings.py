"""Properties of a rated game's rating changes (issue #26): on games the
engine plays to their end, and on arbitrary finishing orders.

- Order-independence: the seats' order in a game changes nobody's result.
- Ties (R9.2 shared wins, equal scores): tied seats of equal ratings move
  alike.
- A disqualified house player (R9.2) never gains.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from domain.bots.strategy import Strategy
from domain.game.state import Outcome, Termination
from domain.ratings import Skill, finishing_ranks, rated_seats
from domain.simulation import play_game
from infra.rating_model import OpenSkillModel
from tests.property.budget import examples

MODEL = OpenSkillModel()
skills = st.builds(
    Skill, st.floats(min_value=5, max_value=45), st.floats(min_value=0.5, max_value=25 / 3)
)


@st.composite
def outcomes(draw: st.DrawFn) -> Outcome:
    """A finishing state R9.2 allows: scores, the winners among the best, at
    most one disqualified house player (not the winner)."""
    n = draw(st.integers(3, 8))
    scores = tuple(draw(st.lists(st.integers(0, 60), min_size=n, max_size=n)))
    out: tuple[int, ...] = ()
    if draw(st.booleans()):
        out = (draw(st.integers(0, n - 1)),)
    rest = [s for s in range(n) if s not in out]
    best = max(scores[s] for s in rest)
    winners = tuple(s for s in rest if scores[s] == best)
    return Outcome(Termination.PRIZE_POOL_EMPTY, winners, out, scores)


def rate(outcome: Outcome, before: list[Skill]) -> list[Skill]:
    subjects = [f"p{i}" for i in range(len(before))]
    moved = rated_seats(subjects, before, MODEL.rate(before, finishing_ranks(outcome)))
    return [moved[s] for s in subjects]


@settings(max_examples=examples(60))
@given(outcomes(), st.data())
def test_the_seats_order_changes_no_result(outcome: Outcome, data: st.DataObject) -> None:
    n = len(outcome.scores)
    before = data.draw(st.lists(skills, min_size=n, max_size=n))
    order = data.draw(st.permutations(range(n)))
    where = {old: new for new, old in enumerate(order)}
    permuted = Outcome(
        outcome.termination,
        tuple(where[s] for s in outcome.winners),
        tuple(where[s] for s in outcome.disqualified),
        tuple(outcome.scores[s] for s in order),
    )
    plain = rate(outcome, before)
    moved = rate(permuted, [before[s] for s in order])
    for new, old in enumerate(order):
        assert abs(moved[new].mu - plain[old].mu) < 1e-9
        assert abs(moved[new].sigma - plain[old].sigma) < 1e-9


@settings(max_examples=examples(60))
@given(outcomes(), skills)
def test_tied_seats_of_equal_ratings_move_alike(outcome: Outcome, skill: Skill) -> None:
    n = len(outcome.scores)
    after = rate(outcome, [skill] * n)
    places = finishing_ranks(outcome)
    for i in range(n):
        for j in range(n):
            if places[i] == places[j]:
                assert after[i] == after[j]


@settings(max_examples=examples(60))
@given(outcomes(), st.data())
def test_a_disqualified_seat_never_gains(outcome: Outcome, data: st.DataObject) -> None:
    n = len(outcome.scores)
    before = data.draw(st.lists(skills, min_size=n, max_size=n))
    after = rate(outcome, before)
    for s in outcome.disqualified:
        assert after[s].mu < before[s].mu


@settings(max_examples=examples(12))
@given(st.integers(3, 8), st.integers(0, 10**6))
def test_games_the_engine_plays_rate_winners_up_and_the_last_down(seats: int, seed: int) -> None:
    """R9.2 on real ends: from equal ratings a sole winner gains the most,
    and whoever finished last loses."""
    _, result = play_game(seats, seed, [Strategy.GREEDY, Strategy.RANDOM])
    outcome = result.outcome
    after = rate(outcome, [MODEL.initial()] * seats)
    places = finishing_ranks(outcome)
    best = max(a.mu for a in after)
    for w in outcome.winners:
        assert after[w].mu == best
    last = max(places)
    for s in range(seats):
        if places[s] == last and last > 1:
            assert after[s].mu < MODEL.initial().mu
