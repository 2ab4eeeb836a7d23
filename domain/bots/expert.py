"""EXPERT: Monte Carlo search (:mod:`domain.bots.ismcts`: flat, common
random numbers, by default; or information-set MCTS) over determinizations
of what its seat knows (R11).

It reads only its seat's :class:`PlayerView`, the legal commands, its
seat's projection of the past events (``seen``, each ``e.seen_by(seat)``)
and its own ``rng``; never the game state. With no CPU cap reached, the
move is a pure function of those and the budget.

[decision] As the Rat with messages pending (R5.2) it delivers while it may,
then declines, as GREEDY does; it never sends a message (R5.1). A single
legal move is returned at once.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from domain.bots.determinize import Sampler
from domain.bots.ismcts import Flat, Params, Search, candidates
from domain.bots.knowledge import knowledge
from domain.game.commands import Command, DeclineMessage, DeliverMessage
from domain.game.events import Event
from domain.game.rng import Rng
from domain.game.views import PlayerView


@dataclass(frozen=True, slots=True)
class Budget:
    """How long EXPERT may think: ``iterations`` (deterministic), and a cap
    on the CPU seconds (``time.process_time``) spent, or None for no cap."""

    iterations: int
    cpu_seconds: float | None = None


DEFAULT_BUDGET = Budget(iterations=180, cpu_seconds=0.05)
"""~50 ms a decision at p99 on the reference machine at 4 seats (tests/bench);
an iteration is one playout (:class:`~domain.bots.ismcts.Flat`). Larger
tables cost more a playout: there the CPU cap ends the search."""
PARAMS = Params()


def expert_bot(
    view: PlayerView,
    legal: Sequence[Command],
    rng: Rng,
    *,
    seen: Sequence[Event] = (),
    budget: Budget = DEFAULT_BUDGET,
    params: Params = PARAMS,
) -> Command:
    """EXPERT's move: one of ``legal`` (see the module docstring)."""
    start = time.process_time()
    if len(legal) == 1:
        return legal[0]
    messenger = [c for c in legal if isinstance(c, DeliverMessage | DeclineMessage)]
    if messenger:  # R5.2
        delivers = [c for c in messenger if isinstance(c, DeliverMessage)]
        return delivers[0] if delivers else messenger[0]
    moves = candidates(legal, view.hand)
    if len(moves) == 1:
        return moves[0]
    sampler = Sampler(view, knowledge(view, seen))
    search = (Flat if params.flat else Search)(sampler, view.seat, moves, params)
    return search.run(rng, budget.iterations, budget.cpu_seconds, start)
