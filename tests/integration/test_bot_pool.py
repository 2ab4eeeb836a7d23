"""EXPERT's worker processes (infra/bot_pool.py, issue #26): a decision
made in another process is the one made inline (a job is all it needs, and
it crosses the process boundary whole); the event loop keeps running while
the worker thinks."""

from __future__ import annotations

import asyncio
import pickle

from domain.bots.expert import Budget
from domain.bots.greedy import greedy_bot
from domain.bots.thinking import ThinkJob, think
from domain.game.engine import apply, to_act
from domain.game.legal import legal_actions
from domain.game.rng import Rng
from domain.game.setup import new_game
from domain.game.views import player_view
from infra.bot_pool import ProcessThinker


def _jobs(budget: Budget) -> list[ThinkJob]:
    """Jobs of a game part played by GREEDY: each seat's decision at several
    points, with the events its seat saw so far."""
    setup = new_game(4, "pool", None)
    state, seen = setup.state, list(setup.events)
    jobs = []
    rng = Rng(7)
    for step in range(60):
        seat = to_act(state)
        assert seat is not None
        legal = legal_actions(state, seat)
        if step % 12 == 0 and len(legal) > 1:
            projected = tuple(e.seen_by(seat) for e in seen)
            jobs.append(ThinkJob(player_view(state, seat), tuple(legal), projected, step, budget))
        seen += apply(state, seat, greedy_bot(player_view(state, seat), legal, rng))
    return jobs


def test_a_job_crosses_the_process_boundary_whole() -> None:
    for job in _jobs(Budget(8)):
        assert pickle.loads(pickle.dumps(job)) == job


async def test_a_worker_decides_as_inline_and_the_loop_runs_meanwhile() -> None:
    thinker = ProcessThinker(1)
    try:
        jobs = _jobs(Budget(300))
        await thinker.think(jobs[0])  # the worker started
        ticks = 0
        done = asyncio.Event()

        async def tick() -> None:
            nonlocal ticks
            while not done.is_set():
                ticks += 1
                await asyncio.sleep(0.001)

        ticking = asyncio.create_task(tick())
        moves = [await thinker.think(job) for job in jobs]
        done.set()
        await ticking
        assert moves == [think(job) for job in jobs]
        assert all(m in job.legal for m, job in zip(moves, jobs, strict=True))
        assert ticks >= 2 * len(jobs)  # not blocked while the worker thought
    finally:
        await thinker.aclose()
