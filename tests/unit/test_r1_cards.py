"""R1: components — houses, the numbered catalogue, house cards, boosters."""

from __future__ import annotations

from collections import Counter

import pytest

from domain.game.boosters import BoosterPack, open_booster
from domain.game.cards import (
    HOUSES,
    MESSENGER_RATS,
    PRIZE_CARDS,
    RAT_CARD,
    House,
    assignment_card,
    catalogue,
    design_of,
    is_numbered,
    prize_house,
    sorted_cards,
)
from domain.game.rng import Rng


def test_r1_1_seven_houses_in_canonical_order() -> None:
    assert [h.value for h in HOUSES] == [
        "crazy",
        "stinky",
        "sleepy",
        "hungry",
        "needy",
        "curious",
        "sassy",
    ]


def test_r1_2_catalogue_has_224_designs_203_commons_21_rares() -> None:
    designs = catalogue()
    assert len(designs) == 224
    assert len({d.id for d in designs}) == 224
    assert sum(1 for d in designs if not d.rare) == 203
    assert sum(1 for d in designs if d.rare) == 21


def test_r1_2_each_house_has_commons_1_to_29_and_rares_30_to_32() -> None:
    for house in HOUSES:
        values = sorted(d.value for d in catalogue() if d.house is house)
        assert values == list(range(1, 33))
        rares = [d.value for d in catalogue() if d.house is house and d.rare]
        assert rares == [30, 31, 32]


def test_r1_2_design_ids_are_house_dash_value_lower_case() -> None:
    ids = {d.id for d in catalogue()}
    assert "crazy-7" in ids
    assert "sassy-31" in ids
    assert "crazy-0" not in ids
    assert "crazy-33" not in ids
    assert all(i == i.lower() for i in ids)
    d = design_of("sassy-31")
    assert (d.house, d.value, d.rare) == (House.SASSY, 31, True)
    assert not design_of("sassy-29").rare


def test_r1_3_twenty_eight_house_cards_one_assignment_and_three_prizes_per_house() -> None:
    assignments = [assignment_card(h) for h in HOUSES]
    assert len(set(assignments)) == 7
    assert len(PRIZE_CARDS) == len(set(PRIZE_CARDS)) == 21
    assert len(set(assignments) | set(PRIZE_CARDS)) == 28
    assert Counter(prize_house(p) for p in PRIZE_CARDS) == dict.fromkeys(HOUSES, 3)
    assert "crazy-house" in assignments
    assert {"crazy-prize-1", "crazy-prize-2", "crazy-prize-3"} <= set(PRIZE_CARDS)
    assert not any(is_numbered(c) for c in [*assignments, *PRIZE_CARDS, RAT_CARD])


def test_r1_4_one_rat_card_and_three_messenger_rats() -> None:
    assert RAT_CARD == "rat"
    assert MESSENGER_RATS == 3


def test_r1_5_sealed_instance_ids_share_the_design() -> None:
    assert is_numbered("crazy-7#2")
    assert design_of("crazy-7#2") == design_of("crazy-7")
    assert not is_numbered("crazy-33#1")


def test_r11_card_listings_are_in_canonical_order() -> None:
    assert sorted_cards(["sassy-1", "crazy-9", "crazy-10", "stinky-2"]) == [
        "crazy-9",
        "crazy-10",
        "stinky-2",
        "sassy-1",
    ]


@pytest.mark.parametrize("seed", range(40))
def test_r1_6_booster_has_15_distinct_commons_2_distinct_rares_1_house(seed: int) -> None:
    pack = open_booster(Rng(seed))
    assert len(pack.commons) == len(set(pack.commons)) == 15
    assert len(pack.rares) == len(set(pack.rares)) == 2
    assert all(not design_of(c).rare for c in pack.commons)
    assert all(design_of(r).rare for r in pack.rares)
    assert pack.house in HOUSES
    assert pack.numbered == pack.commons + pack.rares


def test_r1_6_designs_repeat_across_packs_and_houses_vary() -> None:
    rng = Rng(7)
    packs = [open_booster(rng) for _ in range(60)]
    counts = Counter(d for p in packs for d in p.numbered)
    assert max(counts.values()) > 1  # 60 x 2 rares from 21 designs must repeat
    assert {p.house for p in packs} == set(HOUSES)
    assert len({p.commons for p in packs}) == 60


def test_r1_6_booster_round_trips_through_dict() -> None:
    pack = open_booster(Rng(3))
    assert BoosterPack.from_dict(pack.to_dict()) == pack


def test_r3_5_same_rng_state_opens_the_same_booster() -> None:
    assert open_booster(Rng(99)) == open_booster(Rng(99))
    assert open_booster(Rng(99)) != open_booster(Rng(100))
