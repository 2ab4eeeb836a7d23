"""Every instance's deadline sweep (docs/decisions/0046): a round fires the
turn deadlines due, then sleeps until the next deadline it read, at most
``interval`` seconds, so a timeout fires as soon as its deadline passes
(not up to a whole interval later) while deadlines set elsewhere since the
round are seen within ``interval``."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from domain.ports import Clock
from domain.services.timeouts import DeadlineRound
from infra.periodic import Periodic


class DeadlineSweeper(Periodic):
    # A round per deadline: a line per timeout would flood the log under
    # load (each timeout is in its game's event log).
    done_level = logging.DEBUG

    def __init__(
        self, sweep: Callable[[], Awaitable[DeadlineRound]], clock: Clock, interval: float = 1.0
    ) -> None:
        super().__init__("deadline sweep", self._round, interval, "%d turn deadline(s) timed out")
        self._sweep, self._clock = sweep, clock
        self._last = DeadlineRound(0, False, None)

    async def _round(self) -> int:
        self._last = await self._sweep()
        return self._last.fired

    def pause(self) -> float:
        last, interval = self._last, super().pause()
        if last.again:
            return 0.0
        if last.next_due is None:
            return interval
        wait = (last.next_due - self._clock.now()).total_seconds()
        return min(max(wait, 0.0), interval)
