"""``RatingModel`` by the ``openskill`` package (issue #26,
docs/decisions/0065): Weng-Lin's Plackett-Luce model, each seat a team of
one, with the package's defaults (mu 25, sigma 25/3, beta 25/6, tau 25/300)."""

from __future__ import annotations

from collections.abc import Sequence

from openskill.models import PlackettLuce

from domain.ratings import Skill


class OpenSkillModel:
    def __init__(self) -> None:
        self._model = PlackettLuce()

    def initial(self) -> Skill:
        return Skill(self._model.mu, self._model.sigma)

    def rate(self, skills: Sequence[Skill], places: Sequence[int]) -> list[Skill]:
        m = self._model
        teams = [[m.rating(mu=s.mu, sigma=s.sigma)] for s in skills]
        rated = m.rate(teams, ranks=[float(p) for p in places])
        return [Skill(team[0].mu, team[0].sigma) for team in rated]
