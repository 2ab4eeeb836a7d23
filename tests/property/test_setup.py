"""Setting up games: formats (R3), refusals (R2.1, R3.3, R3.4), determinism (R3.5).

Games of every format are played through by the other property tests; here:
a Former Sealed deck under 10 x seats cards is refused with an error that
says how many cards are missing, changing nothing (R3.4); a deck of exactly
10 x seats cards is accepted and plays to the end; malformed setups are
refused with BAD_INPUT; the same seed gives the same deal and different
seeds (almost always) different ones.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.game.errors import BadInput, DeckTooSmall
from domain.game.events import Event
from domain.game.options import HAND_SIZE, AbilityTrigger, Format, GameOptions
from domain.game.setup import new_game
from infra.codec import event_to_json
from infra.db.state_codec import encode
from tests.property.budget import examples
from tests.property.harness import (
    BOTS,
    DESIGN_IDS,
    GameSpec,
    build_collection,
    collections,
)
from tests.property.test_game_invariants import play_checked

FORMER = GameOptions(format=Format.FORMER_SEALED)


@settings(max_examples=examples(150))
@given(st.integers(3, 8), st.data())
def test_a_too_small_former_sealed_deck_is_refused(seats: int, data: st.DataObject) -> None:
    cols = [list(c) for c in data.draw(collections(seats, enough=False))]
    kept = [list(c) for c in cols]
    seed = data.draw(st.integers(0, 2**64 - 1))
    missing = HAND_SIZE * seats - sum(len(c) for c in cols)
    assert missing > 0
    with pytest.raises(DeckTooSmall) as info:
        new_game(seats, seed, FORMER, collections=cols)
    assert info.value.code == "BAD_INPUT"
    # R3.4: a clear error that says how many cards are missing
    assert re.search(rf"(?<!\d){missing}(?!\d) missing", info.value.message), info.value.message
    assert cols == kept, "nothing changes"


@settings(max_examples=examples(40))
@given(st.integers(3, 8), st.sampled_from(AbilityTrigger), st.booleans(), st.data())
def test_a_deck_of_exactly_ten_cards_a_seat_plays_to_the_end(
    seats: int, trigger: AbilityTrigger, refill: bool, data: st.DataObject
) -> None:
    need = HAND_SIZE * seats
    cuts = sorted(data.draw(st.lists(st.integers(0, need), min_size=seats - 1, max_size=seats - 1)))
    sizes = [b - a for a, b in zip([0, *cuts], [*cuts, need], strict=True)]
    seed = data.draw(st.integers(0, 2**32))
    cols = tuple(build_collection(size, seed + i) for i, size in enumerate(sizes))
    options = GameOptions(Format.FORMER_SEALED, trigger, refill)
    bots = tuple(data.draw(st.lists(st.sampled_from(sorted(BOTS)), min_size=seats, max_size=seats)))
    spec = GameSpec(seats, seed, options, None, bots, 30, seed, cols)
    assert not spec.new().state.rat_deck  # R3.4 is met exactly: nothing left to draw
    play_checked(spec)


@settings(max_examples=examples(60))
@given(
    st.integers(3, 8),
    st.integers(0, 2**64 - 1) | st.text(max_size=8),
    st.sampled_from(Format),
    st.data(),
)
def test_the_same_seed_deals_the_same_game(
    seats: int, seed: int | str, fmt: Format, data: st.DataObject
) -> None:
    cols = data.draw(collections(seats, enough=True)) if fmt is Format.FORMER_SEALED else None
    rat = data.draw(st.none() | st.integers(0, seats - 1))
    options = GameOptions(format=fmt)
    a = new_game(seats, seed, options, rat=rat, collections=cols)
    b = new_game(seats, seed, options, rat=rat, collections=cols)
    assert encode(a.state) == encode(b.state)
    assert a.events == b.events
    assert _projections(a.events, seats) == _projections(b.events, seats)
    assert a.packs == b.packs
    other = new_game(seats, f"{seed}/other", options, rat=rat, collections=cols)
    if len(a.state.rat_deck) > 5:  # R4.2: the seed shuffles the deck
        assert encode(other.state)["seats"] != encode(a.state)["seats"]


def _projections(events: list[Event], seats: int) -> list[dict[str, Any]]:
    """Every audience's projection of each event, as stored and sent."""
    return [{str(s): event_to_json(e.seen_by(s)) for s in (None, *range(seats))} for e in events]


@pytest.mark.parametrize("seats", [-1, 0, 1, 2, 9, 100])
def test_a_game_has_three_to_eight_seats(seats: int) -> None:
    with pytest.raises(BadInput):
        new_game(seats, 1)


@pytest.mark.parametrize("rat", [-1, 5, 6])
def test_the_rat_is_a_seat(rat: int) -> None:
    with pytest.raises(BadInput):
        new_game(5, 1, rat=rat)


@pytest.mark.parametrize(
    "cols",
    [
        None,
        [list(DESIGN_IDS[:40])] * 3,  # 3 collections for 4 seats
        [list(DESIGN_IDS[:40])] * 5,
        [[*DESIGN_IDS[:40], "crazy-7#1"], [], [], []],
        [[*DESIGN_IDS[:40], "crazy-0"], [], [], []],
        [[*DESIGN_IDS[:40], "crazy-prize-1"], [], [], []],
        [[*DESIGN_IDS[:40], "rat"], [], [], []],
        [[*DESIGN_IDS[:40], "crazy-house"], [], [], []],
    ],
)
def test_malformed_former_sealed_collections_are_refused(cols: list[list[str]] | None) -> None:
    with pytest.raises(BadInput) as info:
        new_game(4, 1, FORMER, collections=cols)
    assert info.value.code == "BAD_INPUT"
