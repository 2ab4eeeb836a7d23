"""Event projections (domain/game/events.py, infra/codec.py): for every event
of many seeded games, and for every audience (each seat, None for a
spectator):

- a seat without a projection of its own (not in ``private_to()``) sees
  exactly what a spectator sees: ``seen_by(s) == seen_by(None)``;
  ``private_to()`` names seats of the game only;
- a projection never shows more when projected again: for ``p =
  e.seen_by(a)``, ``p.seen_by(b)`` is ``e.seen_by(b)`` or the public
  ``e.seen_by(None)``, for every pair of audiences (a projection holds no
  whole-event fields, so it fails safe);
- a projection's JSON (``event_to_json``, exactly what is stored and sent)
  reads back as the projection: ``event_from_json(kind, json) == p``;
- that JSON shows no card and no message text the audience may not know
  (the R11 references of tests/property/harness.py: :class:`Facts` and
  :func:`step_allowed`), and a Sealed pack (R3.2) only to its owner.

``test_every_event_kind_is_checked`` and ``test_a_projection_is_final`` play
fixed seeds until every kind the engine emits has been checked, so none goes
untested.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from hypothesis import given, settings

from domain.game.boosters import BoosterPack
from domain.game.commands import Command
from domain.game.engine import apply
from domain.game.events import GAME_EVENTS, Event, GameStarted
from domain.game.options import AbilityTrigger, Format, GameOptions
from domain.game.rng import Rng
from domain.game.state import GameState
from infra.codec import event_from_json, event_to_json
from tests.property.budget import count_game, examples, shards
from tests.property.harness import (
    BOTS,
    Driver,
    Facts,
    GameSpec,
    game_specs,
    scan,
    show,
    step_allowed,
)

Kinds = Counter[type[Event]]
Check = Callable[[Event, int, "Known", dict[int, BoosterPack]], None]


class Known:
    """The card ids and message markers each audience (None: a spectator)
    may know after a step."""

    def __init__(
        self, cards: dict[int | None, frozenset[str]], marks: dict[int | None, frozenset[int]]
    ) -> None:
        self.cards = cards
        self.marks = marks


def check_projections(e: Event, n: int, known: Known, packs: dict[int, BoosterPack]) -> None:
    """Public, JSON and R11 promises for one event."""
    _check_projections(e, n, known.cards, known.marks, packs)


def check_final(e: Event, n: int, known: Known, packs: dict[int, BoosterPack]) -> None:
    """Projecting a projection again, for any audience, never shows more than
    that audience may see: its own projection, or the public one."""
    audiences = (None, *range(n))
    public = e.seen_by(None)
    for a in audiences:
        p = e.seen_by(a)
        for b in audiences:
            again = p.seen_by(b)
            assert again in (e.seen_by(b), public), (
                f"{type(e).__name__}: seen by {a}, then by {b}: {again!r} shows more than "
                f"{b} may see"
            )


def _check_projections(
    e: Event,
    n: int,
    cards: dict[int | None, frozenset[str]],
    marks: dict[int | None, frozenset[int]],
    packs: dict[int, BoosterPack],
) -> None:
    """``cards`` and ``marks``: the card ids and message markers each
    audience may know."""
    name = type(e).__name__
    own = e.private_to()
    assert set(own) <= set(range(n)), f"{name}: projections for unknown seats {own}"
    public = e.seen_by(None)
    assert type(public) is type(e)
    for audience in (None, *range(n)):
        p = e.seen_by(audience)
        assert type(p) is type(e), f"{name} for {audience}: another kind"
        if audience is not None and audience not in own:
            assert p == public, f"{name}: seat {audience} sees more than a spectator"
        data = event_to_json(p)
        assert event_from_json(name, data) == p, f"{name} for {audience}: JSON does not read back"
        found, found_marks = scan(data)
        hidden = found - cards[audience]
        assert not hidden, f"{name} for {audience} shows hidden cards {sorted(hidden)}"
        unread = found_marks - marks[audience]
        assert not unread, f"{name} for {audience} shows message texts {sorted(unread)}"
        if isinstance(p, GameStarted):  # R3.2: the pack goes to its owner only
            assert p.pack == (packs[audience] if packs and audience is not None else None)
            assert ("pack" in data) == (p.pack is not None)
            assert not p.hands and not p.packs


def check_step(
    events: list[Event],
    state: GameState,
    before: Facts | None,
    cmd: Command | None,
    packs: dict[int, BoosterPack],
    kinds: Kinds,
    check: Check,
) -> None:
    """Every event of one step (or, without ``before``, of the setup)."""
    after = Facts.of(state)
    if before is None or cmd is None:
        public, per_seat = after.public, [after.known_to(s) for s in range(state.n)]
    else:
        public, per_seat = step_allowed(before, after, cmd)
    cards: dict[int | None, frozenset[str]] = {None: public, **dict(enumerate(per_seat))}
    marks: dict[int | None, frozenset[int]] = {None: frozenset(), **dict(enumerate(after.readable))}
    for e in events:
        check(e, state.n, Known(cards, marks), packs)
        kinds[type(e)] += 1


def play_projected(spec: GameSpec, kinds: Kinds, check: Check) -> None:
    setup = spec.new()
    state = setup.state
    check_step(setup.events, state, None, None, setup.packs, kinds, check)
    driver = Driver(spec)
    while (move := driver.next(state)) is not None:
        seat, cmd = move
        before = Facts.of(state)
        events = apply(state, seat, cmd)
        check_step(events, state, before, cmd, setup.packs, kinds, check)
    count_game()


SHARDS = 2


@shards(SHARDS)
@settings(max_examples=examples(100, SHARDS))
@given(game_specs(chatter=(0, 25, 50, 80)))
def test_projections_are_public_json_and_hide_what_r11_hides(shard: int, spec: GameSpec) -> None:
    show(spec)
    play_projected(spec, Counter(), check_projections)


COVERAGE_GAMES = 60  # at most, to see every kind


def _fixed_spec(i: int) -> GameSpec:
    """The i-th fixed game: seats, formats, triggers, refill and bots vary."""
    rng = Rng(0x9E0 + i)
    seats = 3 + rng.below(6)
    fmt = (Format.SINGLETON, Format.SEALED)[i % 2]
    options = GameOptions(fmt, tuple(AbilityTrigger)[i % len(AbilityTrigger)], i % 3 != 0)
    bots = tuple(sorted(BOTS)[rng.below(len(BOTS))] for _ in range(seats))
    return GameSpec(seats, f"projections-{i}", options, None, bots, (25, 50, 80)[i % 3], i)


def _every_kind(check: Check) -> None:
    """Fixed games until every kind the engine emits has been checked."""
    kinds: Kinds = Counter()
    for i in range(COVERAGE_GAMES):
        play_projected(_fixed_spec(i), kinds, check)
        if set(GAME_EVENTS) <= set(kinds):
            break
    missing = sorted(k.__name__ for k in GAME_EVENTS if k not in kinds)
    assert not missing, f"no game of {COVERAGE_GAMES} emitted {missing}"


def test_every_event_kind_is_checked() -> None:
    _every_kind(check_projections)


def test_a_projection_is_final() -> None:
    _every_kind(check_final)
