"""The idempotency records' expiry sweep, run every ``interval`` seconds on
every instance (docs/decisions/0041): each run deletes what expired by then,
so two instances sweeping at once only find less to delete."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from infra.db.errors import is_unavailable

log = logging.getLogger(__name__)

SWEEP_INTERVAL = 600.0  # seconds; a record outlives its expiry by at most this


class RecordSweeper:
    """Calls ``sweep`` at start and then every ``interval`` seconds."""

    def __init__(
        self, sweep: Callable[[], Awaitable[int]], interval: float = SWEEP_INTERVAL
    ) -> None:
        self._sweep, self._interval = sweep, interval
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._loop())

    async def _loop(self) -> None:
        while True:
            try:
                deleted = await self._sweep()
                if deleted:
                    log.info("deleted %d expired idempotency record(s)", deleted)
            except Exception as e:
                if is_unavailable(e):
                    log.warning("idempotency sweep: database unavailable; trying again later")
                else:
                    log.exception("idempotency sweep failed; trying again later")
            await asyncio.sleep(self._interval)

    async def aclose(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
