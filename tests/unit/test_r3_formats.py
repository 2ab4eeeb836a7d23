"""R3: formats (Singleton, Sealed, Former Sealed), deck too small, determinism."""

from __future__ import annotations

from collections import Counter

import pytest

from domain.game.cards import Card, catalogue
from domain.game.commands import SendMessage
from domain.game.engine import apply
from domain.game.errors import BadInput, DeckTooSmall
from domain.game.legal import legal_actions
from domain.game.options import Format, GameOptions
from domain.game.setup import MAX_DECK, instance_ids, new_game
from domain.game.state import GameState
from infra.db.state_codec import decode, encode
from tests.builders import cards as cards_of

SEALED = GameOptions(format=Format.SEALED)
FORMER = GameOptions(format=Format.FORMER_SEALED)


def numbered_in_game(state: GameState) -> list[Card]:
    found = list(state.rat_deck)
    for s in state.seats:
        found += s.hand
    return found


# ---------------------------------------------------------------- R3.1
def test_r3_1_singleton_deck_is_all_224_designs_once_with_design_ids() -> None:
    state = new_game(4, seed=1).state
    cards = numbered_in_game(state)
    assert sorted(cards) == sorted(d.id for d in catalogue())
    assert not any("#" in c for c in cards)


# ---------------------------------------------------------------- R3.2
@pytest.mark.parametrize("seats", [3, 5, 8])
def test_r3_2_sealed_every_seat_opens_a_pack_and_the_deck_is_their_cards(seats: int) -> None:
    setup = new_game(seats, seed=11, options=SEALED)
    assert sorted(setup.packs) == list(range(seats))  # the Rat and bots too
    opened = Counter(d for p in setup.packs.values() for d in p.numbered)
    cards = numbered_in_game(setup.state)
    assert len(cards) == 17 * seats
    assert Counter(c.partition("#")[0] for c in cards) == opened


def test_r3_2_r1_5_sealed_instance_ids_carry_a_running_suffix_per_design() -> None:
    assert instance_ids(cards_of(["crazy-7", "sassy-1", "crazy-7"])) == [
        "crazy-7#1",
        "crazy-7#2",
        "sassy-1#1",
    ]
    setup = new_game(8, seed=3, options=SEALED)
    cards = numbered_in_game(setup.state)
    assert len(set(cards)) == len(cards)  # instance ids are unique
    by_design = Counter(c.partition("#")[0] for c in cards)
    for design, k in by_design.items():
        assert {c for c in cards if c.partition("#")[0] == design} == {
            f"{design}#{i}" for i in range(1, k + 1)
        }
    assert max(by_design.values()) > 1  # 8 packs: 16 rares from 21 designs repeat here


@pytest.mark.parametrize("seed", range(20))
def test_r3_2_pack_house_becomes_the_seat_house_unless_an_earlier_seat_took_it(
    seed: int,
) -> None:
    setup = new_game(5, seed=seed, options=SEALED)
    state = setup.state
    taken: set[object] = set()
    for seat in range(state.n):
        house = state.seats[seat].house
        if seat == state.rat:
            assert house is None
            continue
        wanted = setup.packs[seat].house
        if wanted not in taken:
            assert house is wanted
        else:
            assert house not in taken
        taken.add(house)


def test_r3_2_sealed_house_conflict_gives_a_random_untaken_house() -> None:
    # Find a seed where two house players open the same house: the later one
    # gets another house.
    for seed in range(200):
        setup = new_game(8, seed=seed, options=SEALED)
        state = setup.state
        players = [s for s in range(8) if s != state.rat]
        pack_houses = [setup.packs[s].house for s in players]
        if len(set(pack_houses)) < len(pack_houses):
            houses = [state.seats[s].house for s in players]
            assert len(set(houses)) == 7
            return
    pytest.fail("no seed with a house conflict")


# ---------------------------------------------------------------- R3.3
def test_r3_3_former_sealed_deck_is_the_seated_collections_bots_bring_none() -> None:
    person_a = [d.id for d in catalogue()[:20]]
    person_b = [d.id for d in catalogue()[10:30]]  # overlaps person_a on 10 designs
    bot: list[str] = []
    setup = new_game(3, seed=5, options=FORMER, collections=[person_a, bot, person_b])
    cards = numbered_in_game(setup.state)
    assert len(cards) == 40
    assert Counter(c.partition("#")[0] for c in cards) == Counter(person_a + person_b)
    assert set(cards) == set(instance_ids(cards_of(person_a + person_b)))
    assert setup.packs == {}


def test_r3_3_former_sealed_plays_a_seeded_224_of_larger_collections() -> None:
    """[decision] MAX_DECK: a game's lists stay bounded however large the
    collections grow (issue #22)."""
    designs = [d.id for d in catalogue()]
    huge = [designs * 20, [], designs * 15]  # 7,840 numbered cards
    setup = new_game(3, seed=5, options=FORMER, collections=huge)
    cards = numbered_in_game(setup.state)
    assert len(cards) == setup.state.deck_size == MAX_DECK == 224
    assert set(cards) <= set(instance_ids(cards_of(designs * 35)))
    assert numbered_in_game(new_game(3, 5, FORMER, collections=huge).state) == cards  # R3.5
    other = numbered_in_game(new_game(3, 6, FORMER, collections=huge).state)
    assert sorted(other) != sorted(cards)  # another seed, another sample


def test_r3_3_former_sealed_needs_one_collection_per_seat() -> None:
    with pytest.raises(BadInput) as info:
        new_game(3, seed=5, options=FORMER, collections=[["crazy-1"] * 30])
    assert info.value.code == "BAD_INPUT"


def test_r3_3_former_sealed_collection_must_hold_numbered_designs() -> None:
    with pytest.raises(BadInput) as info:
        new_game(3, seed=5, options=FORMER, collections=[["crazy-prize-1"] * 30, [], []])
    assert info.value.code == "BAD_INPUT"


# ---------------------------------------------------------------- R3.4
def test_r3_4_deck_too_small_is_refused_naming_how_many_cards_are_missing() -> None:
    collection = [d.id for d in catalogue()[:25]]
    collections = [list(collection), [], []]
    with pytest.raises(DeckTooSmall) as info:
        new_game(3, seed=1, options=FORMER, collections=collections)
    assert info.value.code == "BAD_INPUT"
    assert "5 missing" in info.value.message
    assert "25" in info.value.message and "30" in info.value.message
    assert collections == [collection, [], []]  # nothing changes


def test_r3_4_exactly_ten_cards_per_seat_is_enough() -> None:
    collection = [d.id for d in catalogue()[:40]]
    state = new_game(4, seed=1, options=FORMER, collections=[collection, [], [], []]).state
    assert all(len(s.hand) == 10 for s in state.seats)
    assert state.rat_deck == []


def test_r3_4_empty_collections_report_all_cards_missing() -> None:
    with pytest.raises(DeckTooSmall) as info:
        new_game(3, seed=1, options=FORMER, collections=[[], [], []])
    assert "30 missing" in info.value.message


# ---------------------------------------------------------------- R3.5
@pytest.mark.parametrize("options", [GameOptions(), SEALED])
def test_r3_5_same_seed_gives_the_same_game(options: GameOptions) -> None:
    a = new_game(5, seed="same", options=options)
    b = new_game(5, seed="same", options=options)
    assert encode(a.state) == encode(b.state)
    assert a.packs == b.packs
    assert a.events == b.events  # whole events: every seat's projection is the same


def test_r3_5_different_seeds_give_different_games() -> None:
    a = new_game(5, seed=1).state
    b = new_game(5, seed=2).state
    assert encode(a) != encode(b)


def test_r3_5_same_seed_and_same_actions_give_the_same_game() -> None:
    def play(seed: int) -> tuple[dict[str, object], list[object]]:
        state = new_game(4, seed=seed).state
        log: list[object] = []
        apply(state, (state.rat + 1) % 4, SendMessage(state.rat, "hello"))
        for _ in range(40):  # follow the first legal action
            seat = state.pending.seat if state.pending else state.turn
            cmd = legal_actions(state, seat)[0]
            log += [(type(e), e.seen_by(None)) for e in apply(state, seat, cmd)]
            if state.outcome:
                break
        return encode(state), log

    assert play(8) == play(8)


def test_r3_5_a_decoded_game_continues_exactly_like_the_original() -> None:
    state = new_game(3, seed=4).state
    copy = decode(encode(state))
    assert copy.rng == state.rng
    for _ in range(12):
        seat = state.pending.seat if state.pending else state.turn
        cmd = legal_actions(state, seat)[-1]
        assert apply(state, seat, cmd) == apply(copy, seat, cmd)  # whole events
    assert encode(copy) == encode(state)
