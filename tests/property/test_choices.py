"""A seat's choices and its ActionRequired, over many seeded games (R5-R7,
R11):

- at every step, for every seat, each choice but SEND_MESSAGE stands for at
  least one command, each of the choice's kind (``Command.KIND``), no command
  twice (the legal actions are these commands:
  tests/property/test_commands.py checks them against the engine), and
  SEND_MESSAGE lists exactly the seats it may write to (R5.5), or is absent;
- every change that leaves the game waiting ends with one ActionRequired for
  the seat to act, in the current phase, whose projection for that seat
  carries its hand (canonical order) and its choices, and for anyone else
  neither; a change that ends the game asks nobody (R9.3).
"""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given, settings

from domain.game.cards import sorted_cards
from domain.game.choice import ChoiceKind
from domain.game.choices import choices
from domain.game.engine import apply, to_act
from domain.game.events import ActionRequired, Event
from domain.game.legal import commands
from domain.game.messaging import message_targets
from domain.game.state import GameState
from tests.property.budget import count_game, examples, shards
from tests.property.harness import Driver, GameSpec, canon, game_specs, show


def _check_choices(state: GameState) -> None:
    for seat in range(state.n):
        listed = choices(state, seat)
        expanded = [repr(canon(c)) for ch in listed for c in commands(ch)]
        assert len(set(expanded)) == len(expanded)  # no command twice
        assert all(commands(ch) for ch in listed if ch.kind is not ChoiceKind.SEND_MESSAGE)
        assert all(c.KIND is ch.kind for ch in listed for c in commands(ch))  # its own kind
        sends = [ch for ch in listed if ch.kind is ChoiceKind.SEND_MESSAGE]
        targets = tuple(message_targets(state, seat))
        assert sends == [] if not targets else [s.seats for s in sends] == [targets]
        assert len({ch.kind for ch in listed}) == len(listed)  # one choice per kind


def _check_asked(events: Sequence[Event], state: GameState) -> None:
    asked = [e for e in events if isinstance(e, ActionRequired)]
    seat = to_act(state)
    if seat is None:
        assert asked == []  # R9.3
        return
    assert asked == [events[-1]]
    (last,) = asked
    assert (last.seat, last.phase) == (seat, state.phase)
    own = last.seen_by(seat)
    assert own.hand == tuple(sorted_cards(state.seats[seat].hand))
    assert own.choices == choices(state, seat)
    for other in [None, *range(state.n)]:
        if other != seat:
            seen = last.seen_by(other)
            assert (seen.hand, seen.choices) == (None, None)  # R11


SHARDS = 2


@shards(SHARDS)
@settings(max_examples=examples(40, SHARDS))
@given(game_specs(chatter=(0, 50, 80)))
def test_choices_stand_for_commands_and_end_every_change(shard: int, spec: GameSpec) -> None:
    show(spec)
    setup = spec.new()
    state = setup.state
    _check_asked(setup.events, state)
    driver = Driver(spec)
    while (move := driver.next(state)) is not None:
        _check_choices(state)
        events = apply(state, *move)
        _check_asked(events, state)
    count_game()
