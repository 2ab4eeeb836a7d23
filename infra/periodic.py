"""A piece of work run on every instance at start and then every
``interval`` seconds, or sooner when a subclass's ``pause`` says so (the
due-work sweeps: stalled bots, expired idempotency records, turn
deadlines). Each round's failure is logged and the next round
tries again; a database outage is one warning line, not a traceback."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from infra.db.errors import is_unavailable
from infra.work_meter import detached

log = logging.getLogger(__name__)


class Periodic:
    """``work`` returns how many things it did; a count is logged with
    ``done`` (``%d`` in it) when not zero, at ``done_level``."""

    done_level = logging.INFO

    def __init__(
        self, name: str, work: Callable[[], Awaitable[int]], interval: float, done: str
    ) -> None:
        self._name, self._work, self._interval, self._done = name, work, interval, done
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._task is None:
            self._task = detached(self._loop())

    def pause(self) -> float:
        """Seconds to the next round after one that went well (a subclass
        may wake earlier for work it knows is coming)."""
        return self._interval

    async def _loop(self) -> None:
        while True:
            pause = self._interval
            try:
                count = await self._work()
                if count:
                    log.log(self.done_level, self._done, count)
                pause = self.pause()
            except Exception as e:
                if is_unavailable(e):  # expected while the database is away
                    log.warning("%s: database unavailable; trying again later", self._name)
                else:
                    log.exception("%s failed; trying again later", self._name)
            await asyncio.sleep(pause)

    async def aclose(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
