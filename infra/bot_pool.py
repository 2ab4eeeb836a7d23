"""``Thinker``: bots' decisions in worker processes (issue #26), so EXPERT's
search never runs on the event loop nor holds the GIL the server needs.

The pool's processes are started by ``forkserver`` (never ``fork``: the
server runs threads) at the first decision, not before (a server without
an EXPERT seat runs none), and import the bots once. A job carries only what its seat may
see (:class:`domain.bots.thinking.ThinkJob`)."""

from __future__ import annotations

import asyncio
import multiprocessing
from concurrent.futures import ProcessPoolExecutor

from domain.bots.thinking import ThinkJob, think
from domain.game.commands import Command


def _ready() -> None:
    """A worker's start: the bots imported before its first job."""
    import domain.bots.expert  # noqa: F401


class ProcessThinker:
    def __init__(self, workers: int) -> None:
        self.workers = workers
        self._pool: ProcessPoolExecutor | None = None

    def start(self) -> None:
        if self._pool is not None:
            return
        context = multiprocessing.get_context("forkserver")
        self._pool = ProcessPoolExecutor(self.workers, context, initializer=_ready)

    async def think(self, job: ThinkJob) -> Command:
        if self._pool is None:
            self.start()
        assert self._pool is not None
        return await asyncio.wrap_future(self._pool.submit(think, job))

    async def aclose(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            await asyncio.to_thread(pool.shutdown, wait=True, cancel_futures=True)
