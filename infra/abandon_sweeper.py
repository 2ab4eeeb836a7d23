"""Every instance's abandonment sweep (docs/decisions/0051): a round ends
the games whose abandon time has come, then sleeps ``interval`` seconds (at
once again after a full batch that ended some). A game is ended once, by
whichever instance commits first (domain/services/abandonment.py)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from domain.services.abandonment import AbandonRound
from infra.periodic import Periodic


class AbandonSweeper(Periodic):
    def __init__(self, sweep: Callable[[], Awaitable[AbandonRound]], interval: float) -> None:
        super().__init__("abandonment sweep", self._round, interval, "abandoned %d game(s)")
        self._sweep = sweep
        self._again = False

    async def _round(self) -> int:
        done = await self._sweep()
        self._again = done.again
        return done.ended

    def pause(self) -> float:
        return 0.0 if self._again else super().pause()
