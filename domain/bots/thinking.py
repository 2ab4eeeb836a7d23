"""A bot's decision as a job that may run in another process (issue #26):
everything it decides from, and nothing more (R11). EXPERT's jobs run in
the server's worker processes, never on its event loop
(:class:`domain.ports.Thinker`)."""

from __future__ import annotations

from dataclasses import dataclass

from domain.bots.expert import Budget, expert_bot
from domain.game.commands import Command
from domain.game.events import Event
from domain.game.rng import Rng
from domain.game.views import PlayerView


@dataclass(frozen=True, slots=True)
class ThinkJob:
    """What a seat's EXPERT decides from: its seat's view, its legal
    commands, its seat's projection of the game's past events (each
    ``e.seen_by(seat)``), its RNG's state and its budget. Never the state,
    never another seat's projection."""

    view: PlayerView
    legal: tuple[Command, ...]
    seen: tuple[Event, ...]
    rng_state: int
    budget: Budget


def think(job: ThinkJob) -> Command:
    """EXPERT's move for ``job`` (a pure function of it, within its budget)."""
    return expert_bot(job.view, job.legal, Rng(job.rng_state), seen=job.seen, budget=job.budget)
