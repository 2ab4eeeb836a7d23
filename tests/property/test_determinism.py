"""Properties 5 and 6: determinism (R3.5) and lossless serialisation.

5. The same seed and the same actions give the same game: a recorded game is
   replayed from a fresh ``new_game`` and every state (``encode``) and every
   event (whole, and every projection as stored and sent) is equal at every
   step; the setup (packs too) is the same for the same seed.
6. At every step the state survives ``json.dumps`` / ``json.loads`` /
   ``decode`` unchanged, and the game goes on from the decoded copy (the
   driver switches to it at random steps) exactly as from the original.
   Events, views and legal actions are JSON-able. Damaged data is refused
   with StateDecodeError, never another exception.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings

from domain.game.commands import Command
from domain.game.engine import apply
from domain.game.events import Event
from domain.game.invariants import check
from domain.game.legal import legal_actions
from domain.game.rng import Rng
from domain.game.views import player_view, spectator_view
from infra.codec import event_to_json, to_json
from infra.db.state_codec import StateDecodeError, decode, encode
from tests.jsonable import to_jsonable
from tests.property.budget import count_game, examples, shards
from tests.property.harness import Driver, GameSpec, game_specs, show

SWAP_PERCENT = 30  # steps after which the game continues from the decoded copy
VIEW_PERCENT = 10  # steps at which encode(copy), views and legal actions are dumped
DAMAGE_PERCENT = 5  # steps at which damaged copies of the state are decoded


def _events(events: list[Event]) -> list[Any]:
    """Each event whole, and every projection of it as stored and sent (JSON)."""
    out = [
        [
            type(e).__name__,
            event_to_json(e.seen_by(None)),
            {str(s): event_to_json(e.seen_by(s)) for s in e.private_to()},
        ]
        for e in events
    ]
    json.dumps(out)  # JSON-able
    return [[e, *projections] for e, projections in zip(events, out, strict=True)]


def _damage(data: Any, rng: Rng) -> Any:
    """A copy of ``data`` with one random node removed or replaced."""
    data = json.loads(json.dumps(data))
    node: Any = data
    path: list[tuple[Any, Any]] = []
    while isinstance(node, dict | list) and node and (not path or rng.below(4)):
        key: Any = (
            rng.below(len(node)) if isinstance(node, list) else sorted(node)[rng.below(len(node))]
        )
        path.append((node, key))
        node = node[key]
    if not path:
        return None
    parent, key = path[-1]
    junk: tuple[Any, ...] = (None, "x", -1, 10**30, [], {}, True, 2.5, ["x"], {"v": 1})
    if isinstance(parent, dict) and rng.below(3) == 0:
        del parent[key]
    else:
        parent[key] = junk[rng.below(len(junk))]
    return data


def _check_decode_refuses_damage(data: Any, rng: Rng) -> None:
    for _ in range(3):
        try:
            state = decode(_damage(data, rng))
        except StateDecodeError:
            continue
        check(state)  # whatever decode accepts is structurally sound
        encode(state)


Trace = list[tuple[int, Command | None, str, list[Any]]]  # seat, command, repr(state), events


def play_recorded(spec: GameSpec) -> tuple[Trace, dict[str, Any]]:
    """Play with the round-trip checks; return the trace and the final state."""
    setup = spec.new()
    state = setup.state
    rng = Rng(spec.driver_seed ^ 0xD1CE)
    driver = Driver(spec)
    trace: Trace = [(-1, None, repr(state), _events(setup.events))]
    while (move := driver.next(state)) is not None:
        seat, cmd = move
        events = _events(apply(state, seat, cmd))
        data = encode(state)
        copy = decode(json.loads(json.dumps(data, allow_nan=False)))
        assert copy == state, "the state does not survive the JSON round trip"
        if rng.below(100) < VIEW_PERCENT:
            assert encode(copy) == data
            json.dumps(to_jsonable(spectator_view(copy)))
            for s in range(state.n):
                json.dumps(to_jsonable(player_view(copy, s)))
                json.dumps(to_jsonable(legal_actions(copy, s)))
        if rng.below(100) < DAMAGE_PERCENT:
            _check_decode_refuses_damage(data, rng)
        if rng.below(100) < SWAP_PERCENT:
            state = copy  # and play on from the decoded copy
        # ``repr`` shows every field of the state: equal reprs, equal states
        trace.append((seat, cmd, repr(state), events))
    count_game()
    return trace, encode(state)


def replay(spec: GameSpec, trace: Trace, final: dict[str, Any]) -> None:
    """Property 5: the same seed and commands give the same states and events."""
    setup = spec.new()
    state = setup.state
    _, _, first, first_events = trace[0]
    assert repr(state) == first
    assert _events(setup.events) == first_events
    for i, (seat, cmd, shown, events) in enumerate(trace[1:], 1):
        assert cmd is not None
        assert _events(apply(state, seat, cmd)) == events, f"events differ at step {i}"
        assert repr(state) == shown, f"state differs at step {i}"
    assert encode(state) == final


SHARDS = 2


@shards(SHARDS)
@settings(max_examples=examples(120, SHARDS))
@given(game_specs())
def test_games_are_deterministic_and_round_trip(shard: int, spec: GameSpec) -> None:
    show(spec)
    trace, final = play_recorded(spec)
    replay(spec, trace, final)
    again = spec.new()  # R3.5: the setup itself, packs included
    first = spec.new()
    assert encode(again.state) == encode(first.state)
    assert again.packs == first.packs
    assert {s: to_json(p) for s, p in again.packs.items()} == {
        s: to_json(p) for s, p in first.packs.items()
    }
