"""EXPERT (domain/bots/expert.py) in seeded games of every kind: each of its
decisions is a legal action (R5-R7) and every game finishes (R9.1).

Games come from the shared ``game_specs`` (3-8 seats, every format and
``abilityTrigger``, refill on and off, messenger traffic); EXPERT, on a tiny
iteration budget with no CPU cap, plays one or two seats and sees only its
view and its projection of the events (R11).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from domain.bots.expert import Budget, expert_bot
from domain.game.engine import apply, to_act
from domain.game.events import Event
from domain.game.legal import legal_actions
from domain.game.rng import Rng
from domain.game.views import player_view
from tests.property.budget import count_game, examples
from tests.property.harness import Driver, GameSpec, game_specs, show

TINY = Budget(iterations=8, cpu_seconds=None)
MAX_COMMANDS = 5_000  # far above any game (21 tricks, R9.1), messages included


@settings(max_examples=examples(40))
@given(spec=game_specs(), picks=st.lists(st.integers(0, 7), min_size=1, max_size=2))
def test_expert_moves_are_legal_and_games_finish(spec: GameSpec, picks: list[int]) -> None:
    """R6.5, R7.0b, R9.1: EXPERT's every move is in ``legal_actions``."""
    show(spec)
    setup = spec.new()
    state = setup.state
    experts = {p % spec.seats for p in picks}
    seen: dict[int, list[Event]] = {s: [e.seen_by(s) for e in setup.events] for s in experts}
    driver, rng = Driver(spec), Rng(spec.driver_seed)
    for _ in range(MAX_COMMANDS):
        actor = to_act(state)
        if actor is None:
            break
        if actor in experts:
            legal = legal_actions(state, actor)
            view = player_view(state, actor)
            cmd = expert_bot(view, legal, rng, seen=seen[actor], budget=TINY)
            assert cmd in legal
            seat = actor
        else:
            move = driver.next(state)
            assert move is not None
            seat, cmd = move
        for e in apply(state, seat, cmd):
            for s in experts:
                seen[s].append(e.seen_by(s))
    assert state.outcome is not None, "the game did not finish"
    count_game()
