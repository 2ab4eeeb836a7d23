"""The rating model (issue #26): OpenSkill's Plackett-Luce as the
``RatingModel`` port, checked against the Weng-Lin update written out
independently here (Weng & Lin 2011, Algorithm 4, with the package's
dynamics ``tau`` added to sigma first); the finishing order of R9.2."""

from __future__ import annotations

import math

import pytest

from domain.game.state import Outcome, Termination
from domain.ratings import Skill, finishing_ranks, rated_seats
from infra.rating_model import OpenSkillModel

MU, SIGMA = 25.0, 25.0 / 3
BETA, TAU, KAPPA = 25.0 / 6, 25.0 / 300, 0.0001


def weng_lin_plackett_luce(skills: list[Skill], places: list[int]) -> list[Skill]:
    """Algorithm 4 of Weng & Lin, one player a team, ties sharing a place."""
    sig2 = [s.sigma**2 + TAU**2 for s in skills]
    c = math.sqrt(sum(v + BETA**2 for v in sig2))
    e = [math.exp(s.mu / c) for s in skills]
    n = len(skills)
    sum_q = [sum(e[i] for i in range(n) if places[i] >= places[q]) for q in range(n)]
    a = [sum(1 for i in range(n) if places[i] == places[q]) for q in range(n)]
    out = []
    for i in range(n):
        omega = delta = 0.0
        for q in range(n):
            if places[q] > places[i]:
                continue
            share = e[i] / sum_q[q]
            delta += share * (1 - share) / a[q]
            omega += ((1 - share) if q == i else -share) / a[q]
        gamma = math.sqrt(sig2[i]) / c
        mu = skills[i].mu + sig2[i] / c * omega
        sigma = math.sqrt(sig2[i]) * math.sqrt(max(1 - gamma * sig2[i] / c**2 * delta, KAPPA))
        out.append(Skill(mu, sigma))
    return out


@pytest.mark.parametrize(
    "skills, places",
    [
        ([Skill(MU, SIGMA)] * 4, [1, 2, 3, 4]),
        ([Skill(MU, SIGMA)] * 4, [1, 2, 2, 4]),
        ([Skill(30.0, 5.0), Skill(22.0, 7.5), Skill(25.0, 2.0)], [3, 1, 2]),
        (
            [Skill(28.0, 3.0), Skill(20.0, 8.0), Skill(26.0, 4.0), Skill(24.0, 6.0), Skill(25, 1)],
            [1, 1, 3, 5, 4],
        ),
    ],
)
def test_one_game_matches_the_algorithm_computed_independently(
    skills: list[Skill], places: list[int]
) -> None:
    got = OpenSkillModel().rate(skills, places)
    want = weng_lin_plackett_luce(skills, places)
    for g, w in zip(got, want, strict=True):
        assert g.mu == pytest.approx(w.mu, abs=1e-9)
        assert g.sigma == pytest.approx(w.sigma, abs=1e-9)


def test_r9_2_winners_share_first_then_scores_then_the_disqualified() -> None:
    rat_all_houses = Outcome(Termination.RAT_ALL_HOUSES, (2,), (), (40, 55, 10, 55))
    assert finishing_ranks(rat_all_houses) == (4, 2, 1, 2)
    disqualified = Outcome(Termination.HOUSE_PLAYER_ALL_HOUSES, (1,), (0,), (90, 50, 20, 50))
    assert finishing_ranks(disqualified) == (4, 1, 3, 2)
    shared = Outcome(Termination.PRIZE_POOL_EMPTY, (0, 3), (), (60, 10, 30, 60, 30))
    assert finishing_ranks(shared) == (1, 5, 3, 1, 3)


def test_a_strategy_in_two_seats_moves_by_the_mean_of_its_seats_in_any_order() -> None:
    before = [Skill(25.0, 8.0), Skill(25.0, 8.0), Skill(30.0, 4.0)]
    after = [Skill(27.0, 7.0), Skill(23.0, 7.5), Skill(29.0, 3.9)]
    moved = rated_seats(["bot:GREEDY", "bot:GREEDY", "ann"], before, after)
    assert moved == {"bot:GREEDY": Skill(25.0, 7.5), "ann": Skill(29.0, 3.9)}
    swapped = rated_seats(
        ["bot:GREEDY", "ann", "bot:GREEDY"],
        [before[i] for i in (1, 2, 0)],
        [after[i] for i in (1, 2, 0)],
    )
    assert swapped == moved
