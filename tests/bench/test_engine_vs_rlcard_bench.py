"""The engine against RLCard's bridge (issue #13), run by ``make bench``.

Three ways of playing whole games, measured in the same run, in turns (one
slice of each per round, several rounds), as decisions per CPU second:

- ``rlcard``: RLCard's bridge environment (``rlcard.make("bridge")``) with
  its random agents (``RandomAgent.step``), stepping until the game is over;
  RLCard builds every step's observation (``env.step`` extracts the next
  player's state), as it always does. One decision is one ``env.step``.
- ``views``: what ``mmk simulate`` does (:func:`domain.simulation.play_game`)
  at 5 seats with RANDOM bots: each decision is the seat's legal actions,
  its :func:`~domain.game.views.player_view` (R11), the bot's pick, and
  ``apply`` with its events.
- ``engine``: the engine alone, as ``test_engine_bench.py``: legal actions
  and ``apply``, no view.
- ``greedy`` (shown, no target): GREEDY bots, which read their views (the
  trick, the seats' prizes and hand sizes), so their views are built;
  views are built lazily, field by field on first read (docs/decisions/0037),
  and a RANDOM bot reads none.

A game's set-up (``env.reset`` / ``new_game``) is part of its time on both
sides. Targets: ``views`` at >= 1.5x RLCard's decisions/s and ``engine`` at
>= 3x, each the median of the rounds' ratios (a ratio compares two slices
of the same round, so it holds while the machine's speed drifts). RLCard
comes with the bench-only extra (``pip install -e '.[bench]'``, which
``make bench`` installs); without it this benchmark fails, it never skips.

Run alone: ``python -m tests.bench.test_engine_vs_rlcard_bench`` prints the
figures (this is how the code before a change is measured beside it).
"""

from __future__ import annotations

import importlib
import statistics
import sys
import time
from collections.abc import Callable
from itertools import count
from typing import Any

import pytest

from domain.bots.strategy import Strategy
from domain.game.engine import apply, to_act
from domain.game.legal import legal_actions
from domain.game.rng import Rng
from domain.game.setup import new_game
from domain.simulation import play_game

SEATS = 5
ROUNDS = 7
SLICE = 0.4  # CPU seconds of whole games per slice (at least)
VIEWS_TARGET = 1.5
ENGINE_TARGET = 3.0
KINDS = ("rlcard", "views", "engine", "greedy")

Game = Callable[[], int]
"""Plays one whole game; returns its decisions."""


class MissingExtra(RuntimeError):
    """The bench extra (RLCard) is not installed."""


def _import(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError as e:
        raise MissingExtra(
            f"{name} is not installed: this benchmark needs the bench-only extra. "
            "Run it with `make bench` (which installs it), or install it with "
            "`.venv/bin/pip install -c constraints.txt -e '.[bench]'`."
        ) from e


def rlcard_games(seed: int = 0) -> Game:
    """Random agents in RLCard's bridge environment, an observation per step."""
    rlcard = _import("rlcard")
    agents_module = _import("rlcard.agents")
    _import("numpy").random.seed(seed)  # RandomAgent draws from numpy's global generator
    env = rlcard.make("bridge", config={"seed": seed})
    agents = [agents_module.RandomAgent(env.num_actions) for _ in range(env.num_players)]

    def game() -> int:
        state, player = env.reset()
        decisions = 0
        while not env.is_over():
            state, player = env.step(agents[player].step(state))
            decisions += 1
        return decisions

    return game


def views_games(seats: int = SEATS, strategy: Strategy = Strategy.RANDOM) -> Game:
    """Bots deciding from their views, as ``mmk simulate`` plays."""
    seeds = count()

    def game() -> int:
        return play_game(seats, f"bench/{next(seeds)}", [strategy])[1].decisions

    return game


def engine_games(seats: int = SEATS) -> Game:
    """Legal actions and apply, no view (as ``test_engine_bench.py``)."""
    seeds = count()
    rng = Rng(seats)

    def game() -> int:
        state = new_game(seats, next(seeds)).state
        decisions = 0
        while (seat := to_act(state)) is not None:
            legal = legal_actions(state, seat)
            apply(state, seat, legal[rng.below(len(legal))])
            decisions += 1
        return decisions

    return game


def _slice(game: Game) -> float:
    """Decisions per CPU second over whole games lasting at least ``SLICE``."""
    decisions = 0
    start = time.process_time()
    while (elapsed := time.process_time() - start) < SLICE:
        decisions += game()
    return decisions / elapsed


def measure(rounds: int = ROUNDS) -> dict[str, list[float]]:
    """Each kind's decisions/s per round, the kinds in turns within a round."""
    games = {
        "rlcard": rlcard_games(),
        "views": views_games(),
        "engine": engine_games(),
        "greedy": views_games(strategy=Strategy.GREEDY),
    }
    for game in games.values():  # warm-up: imports, caches
        game()
    rates: dict[str, list[float]] = {kind: [] for kind in KINDS}
    for _ in range(rounds):
        for kind in KINDS:
            rates[kind].append(_slice(games[kind]))
    return rates


def ratios(rates: dict[str, list[float]], kind: str) -> list[float]:
    """``kind`` over RLCard, round by round."""
    return [ours / theirs for ours, theirs in zip(rates[kind], rates["rlcard"], strict=True)]


def report(rates: dict[str, list[float]]) -> str:
    lines = [f"engine vs RLCard's bridge, {SEATS} seats, {len(rates['rlcard'])} rounds in turns:"]
    for kind in KINDS:
        r = rates[kind]
        lines.append(
            f"  {kind:7} median {statistics.median(r):9,.0f} decisions/s "
            f"(min {min(r):,.0f}, max {max(r):,.0f})"
        )
    for kind in KINDS[1:]:
        x = ratios(rates, kind)
        lines.append(
            f"  {kind} / rlcard: median {statistics.median(x):.2f}x "
            f"(rounds {', '.join(f'{v:.2f}' for v in x)})"
        )
    return "\n".join(lines)


def test_views_and_engine_against_rlcard_bridge() -> None:
    missing = None
    try:
        rates = measure()
    except MissingExtra as e:
        missing = str(e)
    if missing is not None:  # a failure, not a skip: the extra belongs to make bench
        pytest.fail(missing, pytrace=False)
    print("\n" + report(rates))
    views = statistics.median(ratios(rates, "views"))
    engine = statistics.median(ratios(rates, "engine"))
    assert views >= VIEWS_TARGET, f"views at {views:.2f}x RLCard, target {VIEWS_TARGET}x"
    assert engine >= ENGINE_TARGET, f"engine at {engine:.2f}x RLCard, target {ENGINE_TARGET}x"


if __name__ == "__main__":
    print(report(measure(int(sys.argv[1]) if len(sys.argv) > 1 else ROUNDS)))
