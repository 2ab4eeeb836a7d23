"""Drives bots in background tasks, one task per game at most: a request
that leaves a bot to act returns at once, and the bots move after it."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from infra.db.errors import is_unavailable
from infra.periodic import Periodic
from infra.work_meter import detached

log = logging.getLogger(__name__)

Drive = Callable[[str], Awaitable[int]]


class BotScheduler:
    """``schedule(game_id)`` starts (or re-arms) that game's bot task."""

    def __init__(self) -> None:
        self._drive: Drive | None = None
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._again: set[str] = set()

    def bind(self, drive: Drive) -> None:
        self._drive = drive

    def __call__(self, game_id: str) -> None:
        if game_id in self._tasks:
            self._again.add(game_id)
            return
        self._tasks[game_id] = detached(self._run(game_id))

    async def _run(self, game_id: str) -> None:
        assert self._drive is not None, "BotScheduler.bind() first"
        try:
            while True:
                self._again.discard(game_id)
                await self._drive(game_id)
                if game_id not in self._again:
                    break
        except Exception as e:
            if is_unavailable(e):  # the sweeper resumes them once it is back
                log.warning("bots of game %s paused: database unavailable", game_id)
            else:
                log.exception("bots of game %s stopped on an error", game_id)
        finally:
            self._tasks.pop(game_id, None)

    async def idle(self) -> None:
        """Wait until no bot task runs (tests, shutdown)."""
        while self._tasks:
            await asyncio.gather(*self._tasks.values(), return_exceptions=True)

    async def aclose(self) -> None:
        for task in self._tasks.values():
            task.cancel()
        await asyncio.gather(*self._tasks.values(), return_exceptions=True)
        self._tasks.clear()


class StalledBotSweeper(Periodic):
    """Every ``interval`` seconds, wakes the bots of games where a bot should
    have moved ``idle`` seconds ago: so a game whose instance died goes on;
    and (``sweep`` permitting) does the other due work, such as quick play's
    bot fills (docs/decisions/0048)."""

    def __init__(
        self, sweep: Callable[[float], Awaitable[int]], interval: float = 2.0, idle: float = 3.0
    ) -> None:
        super().__init__(
            "stalled-bot sweep",
            lambda: sweep(idle),
            interval,
            "resumed the bots of %d game(s) with due work (stalled bots, bot fills)",
        )
