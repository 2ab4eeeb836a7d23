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
from domain.game.commands import PlayCard
from domain.game.events import Event, EventType
from domain.game.legal import legal_actions
from domain.game.rng import Rng
from domain.game.views import player_view
from tests.builders import make_state, of_type, one, run


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


def test_r1_1_a_hand_and_its_legal_plays_are_listed_in_house_order_not_alphabetically() -> None:
    """R1.1: the canonical order (crazy ... sassy), which every listing uses
    (R11), is the rules' order; sorted by name, curious would come second."""
    scrambled = ["sassy-1", "curious-1", "needy-1", "hungry-1", "sleepy-1", "stinky-1", "crazy-1"]
    canonical = ["crazy-1", "stinky-1", "sleepy-1", "hungry-1", "needy-1", "curious-1", "sassy-1"]
    state = make_state([scrambled, ["crazy-2"], ["crazy-3"]])
    assert list(player_view(state, 0).hand) == canonical
    assert legal_actions(state, 0) == [PlayCard(c) for c in canonical]


def _trick(cards: list[str]) -> list[Event]:
    """Seat i holds and plays ``cards[i]``; seat 0 leads (a Curious lead with an
    empty Rat Deck does nothing, R7.6); the trick's events."""
    state = make_state([[c] for c in cards], prize="needy-prize-1")
    return run(state, *((s, PlayCard(c)) for s, c in enumerate(cards)))


def test_r1_2_a_card_is_worth_the_number_in_its_id_and_a_rare_beats_every_common() -> None:
    """R1.2: ``curious-10`` is worth 10, more than ``curious-9`` (though it
    sorts before it as text), and the rares 30-32 outrank the commons."""
    won = one(_trick(["curious-9", "curious-10", "curious-2"]), EventType.TRICK_WON).public
    assert [p["value"] for p in won["plays"]] == [9, 10, 2]
    assert won["winner"] == 1
    won = one(_trick(["curious-29", "curious-32", "curious-30"]), EventType.TRICK_WON).public
    assert [p["value"] for p in won["plays"]] == [29, 32, 30]
    assert won["winner"] == 1


@pytest.mark.parametrize(("follow", "rare"), [("curious-29", False), ("curious-30", True)])
def test_r1_2_rarity_follows_from_the_value(follow: str, rare: bool) -> None:
    """R1.2: a value of 30 or more is rare, so under the default trigger
    (R7.0 lead and rare) a followed 30 triggers its ability and a 29 does not."""
    events = _trick(["curious-1", follow, "curious-2"])
    triggered = [e.public["card"] for e in of_type(events, EventType.ABILITY_TRIGGERED)]
    assert triggered == (["curious-1", follow] if rare else ["curious-1"])


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
