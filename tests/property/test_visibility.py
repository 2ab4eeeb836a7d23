"""Property 7: no view and no event projection shows what R11 hides.

At every step of many seeded games with messenger traffic, for every seat:

- every card id in its ``player_view`` (as ``to_jsonable``), its legal
  actions and its projection of every event (``event_to_json(e.seen_by(seat))``,
  exactly what is stored and sent; the whole event holds the truth) is public (won piles, prize
  rows, discard, the trick's prize and face-up plays, a resolved trick's
  cards) or its own (its hand before or after the step, its own face-down
  plays, what its own Curious / Hungry decision shows it): never another
  seat's hand, another seat's face-down play before resolution, the Rat Deck
  or the prize pool;
- its view shows exactly its hand, and exactly the decision cards of its own
  Curious (top cards) or Hungry (the Rat Deck's contents) decision, in
  canonical order;
- the public part of its view equals the spectator view, but for its own
  face-down plays;
- it reads exactly the message texts R5.4 allows (sender, Rat, recipient once
  delivered), in views and in projections; every sent text carries a unique
  marker, so a text is found under any key;

a number that is not a seat (-1, n, True, ...) gets no view, no message
target and no legal action;

the spectator view and the public projections show no hand card, no
face-down card, no Rat Deck or prize pool card and no message text; a
Sealed pack (R3.2) goes to its owner only.

At sampled steps, hidden orders are shuffled (every hand, the Rat Deck, the
prize pool, the Curious top cards with their decision): no view, legal action
list or message target list changes, so none reveals an order (R7.4, R7.6,
R11: "Rat Deck order: nobody").
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings

from domain.game.boosters import BoosterPack
from domain.game.cards import sorted_cards
from domain.game.commands import Command
from domain.game.engine import apply
from domain.game.errors import GameError
from domain.game.events import Event, GameStarted, MessageDelivered, MessageSent
from domain.game.legal import legal_actions
from domain.game.messaging import message_targets
from domain.game.rng import Rng
from domain.game.state import DecisionKind, GameState
from domain.game.views import player_view, spectator_view
from infra.codec import event_to_json, to_json
from infra.db.state_codec import decode, encode
from tests.jsonable import to_jsonable
from tests.property.budget import count_game, examples, shards
from tests.property.harness import (
    Driver,
    Facts,
    GameSpec,
    command_cards,
    game_specs,
    scan,
    show,
    step_allowed,
    text_marker,
)

VIEW_PERCENT = 40  # steps at which every view is checked (events: at every step)
SHUFFLE_PERCENT = 15  # steps at which hidden orders are shuffled


def _shows_only(obj: Any, cards: frozenset[str], marks: frozenset[int], where: str) -> None:
    found, found_marks = scan(obj)
    assert found <= cards, f"{where} shows hidden cards {sorted(found - cards)}"
    assert found_marks <= marks, f"{where} shows message texts {sorted(found_marks - marks)}"


def check_events(
    events: list[Event],
    n: int,
    rat: int,
    before: Facts | None,
    after: Facts,
    cmd: Command | None,
    packs: dict[int, BoosterPack],
) -> None:
    """Every projection of the step's events, as an audience receives it
    (``event_to_json(e.seen_by(audience))``, exactly what is stored and sent),
    shows only what that audience may know."""
    if before is None or cmd is None:  # the setup's events
        public, per_seat = after.public, [after.known_to(s) for s in range(n)]
    else:
        public, per_seat = step_allowed(before, after, cmd)
    none: frozenset[int] = frozenset()
    for e in events:
        name = type(e).__name__
        assert set(e.private_to()) <= set(range(n)), f"{name} has projections for unknown seats"
        seen = event_to_json(e.seen_by(None))
        _shows_only(seen, public, none, f"public {name}")
        assert not {"hand", "pack", "hands", "packs", "readers"} & set(seen)
        for s in range(n):
            p = event_to_json(e.seen_by(s))
            _shows_only(p, per_seat[s], after.readable[s], f"{name} for seat {s}")
            assert "hands" not in p and "packs" not in p and "readers" not in p
            if isinstance(e, GameStarted):
                assert sorted(p["hand"]) == sorted(after.hands[s])
                if packs:
                    assert p["pack"] == to_json(packs[s]), "R3.2: a seat sees its own pack"
                else:
                    assert "pack" not in p
        if isinstance(e, MessageSent | MessageDelivered):
            readers = [e.from_seat, rat]
            if isinstance(e, MessageDelivered):
                readers.append(e.to_seat)
            for s in readers:  # R5.4: they do get the text
                assert event_to_json(e.seen_by(s)).get("text"), f"{name}: seat {s} must read it"


def check_views(state: GameState, facts: Facts) -> None:
    spectator = to_jsonable(spectator_view(state))
    _shows_only(spectator, facts.public, frozenset(), "spectator view")
    for s in range(state.n):
        view = player_view(state, s)
        data = to_jsonable(view)
        known = facts.known_to(s)
        _shows_only(data, known, facts.readable[s], f"view of seat {s}")
        named = {c for cmd in legal_actions(state, s) for c in command_cards(cmd)}
        assert named <= known, f"legal actions of seat {s} name hidden cards {named - known}"
        assert list(view.hand) == sorted_cards(state.seats[s].hand)
        shown = facts.chooser_cards if facts.chooser == s else frozenset()
        assert list(view.decision_cards) == sorted_cards(list(shown))
        assert {text_marker(m.text) for m in view.messages} == facts.readable[s]
        # the public part is the spectator's, but for this seat's own face-down plays
        public = data["public"]
        trick = public["trick"]
        for p in trick["plays"] if trick else []:
            if p["face_down"] and p["seat"] == s:
                assert p["card"] is not None
                p["card"] = p["second"] = None
        assert public == spectator, f"the public part of seat {s}'s view is not public"


def check_non_seats(state: GameState) -> None:
    """A number that is not a seat sees nothing private and may do nothing."""
    for seat in (-1, -state.n, state.n, state.n + 1, True):
        with pytest.raises(GameError):
            player_view(state, seat)
        assert message_targets(state, seat) == []
        assert legal_actions(state, seat) == []


def shuffled_hidden(state: GameState, rng: Rng) -> GameState:
    """A copy with every hidden order shuffled (what nobody may know, R11)."""
    copy = decode(encode(state))
    for seat in copy.seats:
        rng.shuffle(seat.hand)
    d = copy.pending
    top = len(d.cards) if d is not None and d.kind is DecisionKind.CURIOUS_ORDER else 0
    if top:
        assert d is not None
        rng.shuffle(d.cards)
        copy.rat_deck[:top] = d.cards
    rest = copy.rat_deck[top:]
    rng.shuffle(rest)
    copy.rat_deck[top:] = rest
    rng.shuffle(copy.prize_pool)
    return copy


def check_order_blind(state: GameState, rng: Rng) -> None:
    other = shuffled_hidden(state, rng)
    assert to_jsonable(spectator_view(other)) == to_jsonable(spectator_view(state))
    for s in range(state.n):
        assert to_jsonable(player_view(other, s)) == to_jsonable(player_view(state, s)), (
            f"seat {s}'s view depends on a hidden order"
        )
        assert legal_actions(other, s) == legal_actions(state, s), (
            f"seat {s}'s legal actions depend on a hidden order"
        )
        assert message_targets(other, s) == message_targets(state, s)


def play_watched(spec: GameSpec) -> None:
    setup = spec.new()
    state = setup.state
    rng = Rng(spec.driver_seed ^ 0x5CA1AB1E)
    facts = Facts.of(state)
    check_events(setup.events, state.n, state.rat, None, facts, None, setup.packs)
    check_views(state, facts)
    driver = Driver(spec)
    while (move := driver.next(state)) is not None:
        seat, cmd = move
        before = facts
        events = apply(state, seat, cmd)
        facts = Facts.of(state)
        check_events(events, state.n, state.rat, before, facts, cmd, setup.packs)
        if rng.below(100) < VIEW_PERCENT:
            check_views(state, facts)
            check_non_seats(state)
        if rng.below(100) < SHUFFLE_PERCENT:
            check_order_blind(state, rng)
    count_game()


SHARDS = 4


@shards(SHARDS)
@settings(max_examples=examples(120, SHARDS))
@given(game_specs(chatter=(25, 50, 80)))
def test_nobody_sees_what_r11_hides(shard: int, spec: GameSpec) -> None:
    show(spec)
    play_watched(spec)
