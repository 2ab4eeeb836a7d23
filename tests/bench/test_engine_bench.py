"""Engine speed and state size (issue #2 targets), run by ``make bench``.

Random play, Singleton: decisions/s counts legal-action generation + apply +
events (what a RANDOM bot costs, without building views); a whole game
includes setup. Targets: >= 25,000 decisions/s and < 5 ms median game at 5
seats; a serialised 8-seat state < 16 KB.
"""

from __future__ import annotations

import json
import statistics
import time

from domain.game.engine import apply, to_act
from domain.game.legal import legal_actions
from domain.game.rng import Rng
from domain.game.setup import new_game
from infra.db.state_codec import encode

GAMES = 400


def _play(seats: int, seed: int, rng: Rng) -> int:
    state = new_game(seats, seed).state
    decisions = 0
    while (seat := to_act(state)) is not None:
        legal = legal_actions(state, seat)
        apply(state, seat, legal[rng.below(len(legal))])
        decisions += 1
    return decisions


def _measure(seats: int) -> tuple[float, float]:
    rng = Rng(seats)
    times, decisions = [], 0
    for g in range(GAMES):
        start = time.perf_counter()
        decisions += _play(seats, g, rng)
        times.append(time.perf_counter() - start)
    return decisions / sum(times), statistics.median(times) * 1000


def test_engine_speed() -> None:
    _measure(5)  # warm-up
    results = {seats: _measure(seats) for seats in (3, 5, 8)}
    print()
    for seats, (rate, median_ms) in results.items():
        print(f"engine, {seats} seats: {rate:,.0f} decisions/s, median game {median_ms:.2f} ms")
    rate, median_ms = results[5]
    assert rate >= 25_000, f"{rate:.0f} decisions/s at 5 seats, target 25,000"
    assert median_ms < 5.0, f"median game {median_ms:.2f} ms at 5 seats, target 5 ms"


def test_state_size_8_seats() -> None:
    largest = 0
    for seed in range(50):
        state = new_game(8, seed).state
        rng = Rng(seed)
        while (seat := to_act(state)) is not None:
            largest = max(largest, len(json.dumps(encode(state), separators=(",", ":"))))
            legal = legal_actions(state, seat)
            apply(state, seat, legal[rng.below(len(legal))])
    print(f"\nlargest serialised 8-seat state over 50 games: {largest:,} bytes")
    assert largest < 16 * 1024
