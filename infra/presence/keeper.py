"""The presence heartbeat (docs/decisions/0047): every ``interval`` seconds,
refreshes this instance's presence entries and reviews the games it has
live subscriptions to, and for a grace period longer those it had: so a
``disconnected`` is announced once the grace is over, and a player whose
instance died is noticed by the instances of the others. With Redis away,
a review that cannot read the marks waits for the next beat."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Protocol

from domain.ports import PresenceUnavailable
from infra.db.errors import is_unavailable
from infra.work_meter import detached

log = logging.getLogger(__name__)


class KeptPresence(Protocol):
    def local_games(self) -> set[str]: ...
    async def heartbeat(self) -> None: ...
    def forget(self, game_id: str) -> None: ...


class PresenceKeeper:
    def __init__(
        self,
        presence: KeptPresence,
        review: Callable[[str], Awaitable[object]],
        interval: float,
        grace: float,
    ) -> None:
        self._presence, self._review = presence, review
        self._interval, self._grace = interval, grace
        self._lingering: dict[str, float] = {}  # game -> loop time to stop reviewing it
        self._seen: set[str] = set()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._task is None:
            self._task = detached(self._loop())

    async def beat(self) -> None:
        """One round: refresh, then review what is (or was lately) live here."""
        await self._presence.heartbeat()
        now = asyncio.get_running_loop().time()
        live = self._presence.local_games()
        for gone in self._seen - live:
            self._lingering[gone] = now + self._grace + 2 * self._interval
        self._seen = live
        for game_id, until in list(self._lingering.items()):
            if game_id in live:
                del self._lingering[game_id]
            elif now > until:
                del self._lingering[game_id]
                self._presence.forget(game_id)
        games = live | set(self._lingering)
        for done, game_id in enumerate(games):
            try:
                await self._review(game_id)
            except PresenceUnavailable as e:  # Redis away: one line, and the rest waits a beat
                log.warning(
                    "presence store unreachable (%s): %d game review(s) put off to the next beat",
                    e,
                    len(games) - done,
                )
                return
            except Exception as e:
                if is_unavailable(e):  # the database away: a line too
                    log.warning("presence review of game %s: database unavailable", game_id)
                else:
                    log.exception("presence review of game %s failed; trying again later", game_id)

    async def _loop(self) -> None:
        while True:
            await asyncio.sleep(self._interval)
            try:
                await self.beat()
            except Exception:
                log.exception("presence heartbeat failed; trying again later")

    async def aclose(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
