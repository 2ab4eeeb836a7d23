"""The bot interface and the strategies on offer."""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum
from typing import Protocol

from domain.game.commands import Command
from domain.game.rng import Rng
from domain.game.views import PlayerView


class Strategy(Enum):
    """Bot strategies a host can seat (API ``addBot``)."""

    RANDOM = "random"
    GREEDY = "greedy"
    EXPERT = "expert"  # Monte Carlo search (domain/bots/expert.py, issue #26)


class Bot(Protocol):
    """Chooses one of ``legal`` (non-empty) from ``view`` and its own ``rng``."""

    def __call__(self, view: PlayerView, legal: Sequence[Command], rng: Rng) -> Command: ...


def random_bot(view: PlayerView, legal: Sequence[Command], rng: Rng) -> Command:
    """RANDOM: uniform over the legal actions."""
    return legal[rng.below(len(legal))]


def bot_for(strategy: Strategy) -> Bot:
    """The strategy's bot (EXPERT with its default budget and no memory of
    the past events: the server gives it those, domain/services/bots.py)."""
    from domain.bots.expert import expert_bot
    from domain.bots.greedy import greedy_bot

    bots: dict[Strategy, Bot] = {
        Strategy.RANDOM: random_bot,
        Strategy.GREEDY: greedy_bot,
        Strategy.EXPERT: expert_bot,
    }
    return bots[strategy]
