"""EXPERT seats on the fake ports (issue #26): its moves are planned off the
transaction by the ``Thinker`` port from exactly its seat's view, legal
commands and projection of the log (R11), and played only on the version
they were planned for; a seat taken over is played by EXPERT."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from functools import partial

from domain.bots.strategy import Strategy
from domain.bots.thinking import ThinkJob, think
from domain.game.commands import Command, SendMessage
from domain.game.engine import to_act
from domain.game.legal import legal_actions
from domain.game.state import Phase
from domain.game.views import player_view
from domain.records import GameStatus
from domain.services.games import NewGame, add_bot, create_game, join_game, start_game
from domain.services.play import act
from tests.fakes import Harness
from tests.usecases.conftest import play_first_legal, player, req


@dataclass
class Watching:
    """A ``Thinker`` that checks each job against the game it was made from
    (the store's, as committed when the plan was made), then thinks inline."""

    h: Harness
    game_id: str
    jobs: list[ThinkJob] = field(default_factory=list)
    meddle: list[Callable[[], Awaitable[object]]] = field(default_factory=list)  # once

    async def think(self, job: ThinkJob) -> Command:
        game = self.h.store.games[self.game_id]
        assert game.state is not None
        seat = job.view.seat
        assert game.seats[seat] is not None and game.seats[seat].bot is Strategy.EXPERT  # type: ignore[union-attr]
        assert job.view == player_view(game.state, seat)
        assert job.legal == tuple(legal_actions(game.state, seat))
        log = self.h.store.log(self.game_id)
        assert job.seen == tuple(e.event.seen_by(seat) for e in log)
        self.jobs.append(job)
        if self.meddle:  # a person moves meanwhile
            await self.meddle.pop()()
        return think(job)


async def test_an_expert_plays_from_its_seats_view_and_log_only(h: Harness) -> None:
    ann, bob = await player(h, "ann"), await player(h, "bob")
    gid = (await create_game(h.deps, req(ann), NewGame(4))).game_id
    await join_game(h.deps, req(bob), gid, None)
    for _ in range(2):
        await add_bot(h.deps, req(ann), gid, Strategy.EXPERT, None)
    watching = Watching(h, gid)
    h.deps = replace(h.deps, thinker=watching)
    await start_game(h.deps, req(ann), gid)
    await play_first_legal(h, gid, {0: ann, 1: bob})
    assert h.store.games[gid].status is GameStatus.FINISHED
    assert {j.view.seat for j in watching.jobs} == {2, 3}
    assert all(j.budget == h.deps.expert_budget for j in watching.jobs)


async def test_a_move_planned_for_an_older_version_is_thought_again(h: Harness) -> None:
    """While EXPERT thinks, a person sends a message (R5.1): the plan is
    for the version before it, so it is dropped and EXPERT thinks anew."""
    ann, bob = await player(h, "ann"), await player(h, "bob")
    for seed in range(50):  # a game whose first lead is an EXPERT's
        gid = (
            await create_game(h.deps, req(ann), NewGame(3, seed=f"s{seed}", practice=True))
        ).game_id
        await join_game(h.deps, req(bob), gid, None)
        await add_bot(h.deps, req(ann), gid, Strategy.EXPERT, None)
        watching = Watching(h, gid)
        h.deps = replace(h.deps, thinker=watching)
        watching.meddle.append(partial(act, h.deps, req(ann), gid, SendMessage(1, "hello")))
        await start_game(h.deps, req(ann), gid)
        state = h.store.games[gid].state
        assert state is not None
        state_seat = to_act(state)
        if state_seat != 2 or state.phase is not Phase.LEAD:
            watching.meddle.clear()
            continue
        before = h.store.games[gid].version
        await h.drain()
        versions = [j.view.public.version for j in watching.jobs]
        assert len(versions) >= 2 and versions[1] > versions[0]  # thought again after it
        assert h.store.games[gid].version > before + 1
        return
    raise AssertionError("no seed lets the EXPERT lead first")
