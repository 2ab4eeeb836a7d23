"""Bots-only games and their statistics (for balancing the rules)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from domain.bots.strategy import Strategy, bot_for
from domain.game.engine import apply, to_act
from domain.game.events import Event, TrickWon
from domain.game.legal import legal_actions
from domain.game.options import GameOptions
from domain.game.rng import Rng, seed_state
from domain.game.setup import new_game
from domain.game.state import GameState, Outcome
from domain.game.views import player_view

MAX_DECISIONS = 100_000  # far above any real game; a guard against a rules bug


@dataclass(frozen=True, slots=True)
class GameResult:
    """One finished game."""

    outcome: Outcome
    rat: int
    tricks: int
    decisions: int


def play_game(
    seats: int,
    seed: int | str,
    strategies: Sequence[Strategy],
    options: GameOptions | None = None,
    on_event: Callable[[Event], object] | None = None,
) -> tuple[GameState, GameResult]:
    """Play a whole game; each bot sees only its own view (R11)."""
    setup = new_game(seats, seed, options)
    state = setup.state
    if on_event:
        for e in setup.events:
            on_event(e)
    bots = [bot_for(strategies[i % len(strategies)]) for i in range(seats)]
    rng = Rng(seed_state(f"{seed}/bots"))
    decisions = tricks = 0
    while (seat := to_act(state)) is not None:
        if decisions >= MAX_DECISIONS:
            raise RuntimeError("a game did not end")
        legal = legal_actions(state, seat)
        cmd = bots[seat](player_view(state, seat), legal, rng)
        for e in apply(state, seat, cmd):
            tricks += isinstance(e, TrickWon)
            if on_event:
                on_event(e)
        decisions += 1
    assert state.outcome is not None
    return state, GameResult(state.outcome, state.rat, tricks, decisions)


@dataclass
class Stats:
    """Outcome statistics over many games."""

    games: int = 0
    decisions: int = 0
    tricks: int = 0
    rat_wins: int = 0
    house_wins: int = 0
    shared_wins: int = 0
    rat_score: int = 0
    house_score: int = 0
    house_seats: int = 0
    terminations: Counter[str] = field(default_factory=Counter)

    def add(self, r: GameResult) -> None:
        o = r.outcome
        self.games += 1
        self.decisions += r.decisions
        self.tricks += r.tricks
        self.terminations[o.termination.value] += 1
        self.shared_wins += len(o.winners) > 1
        self.rat_wins += r.rat in o.winners
        self.house_wins += sum(1 for w in o.winners if w != r.rat)
        self.rat_score += o.scores[r.rat]
        self.house_score += sum(o.scores) - o.scores[r.rat]
        self.house_seats += len(o.scores) - 1

    def summary(self) -> dict[str, float]:
        g = max(self.games, 1)
        return {
            "games": self.games,
            "rat win rate": self.rat_wins / g,
            "house player wins per game": self.house_wins / g,
            "shared wins rate": self.shared_wins / g,
            "average tricks": self.tricks / g,
            "average decisions": self.decisions / g,
            "average Rat score": self.rat_score / g,
            "average house player score": self.house_score / max(self.house_seats, 1),
        }
