"""R1: components — houses, the numbered catalogue, house cards, boosters."""

from __future__ import annotations

import copy
import json
import pickle
from collections import Counter

import pytest

from domain.game.boosters import BoosterPack, open_booster
from domain.game.cards import (
    ASSIGNMENT_CARDS,
    DESIGN_CARDS,
    HOUSES,
    MESSENGER_RATS,
    PRIZE_CARDS,
    RAT_CARD,
    THE_RAT,
    Card,
    CardKind,
    House,
    assignment_card,
    catalogue,
    is_card,
    prize_card,
    sorted_cards,
)
from domain.game.commands import PlayCard
from domain.game.events import AbilityTriggered, Event, TrickWon
from domain.game.legal import legal_actions
from domain.game.rng import Rng
from domain.game.views import player_view
from infra.codec import from_json, to_json
from tests.builders import cards, make_state, of_type, one, run


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
    assert legal_actions(state, 0) == [PlayCard(Card(c)) for c in canonical]


def _trick(cards: list[str]) -> list[Event]:
    """Seat i holds and plays ``cards[i]``; seat 0 leads (a Curious lead with an
    empty Rat Deck does nothing, R7.6); the trick's events."""
    state = make_state([[c] for c in cards], prize="needy-prize-1")
    return run(state, *((s, PlayCard(Card(c))) for s, c in enumerate(cards)))


def test_r1_2_a_card_is_worth_the_number_in_its_id_and_a_rare_beats_every_common() -> None:
    """R1.2: ``curious-10`` is worth 10, more than ``curious-9`` (though it
    sorts before it as text), and the rares 30-32 outrank the commons."""
    won = one(_trick(["curious-9", "curious-10", "curious-2"]), TrickWon).seen_by(None)
    assert [p.value for p in won.plays] == [9, 10, 2]
    assert won.winner == 1
    won = one(_trick(["curious-29", "curious-32", "curious-30"]), TrickWon).seen_by(None)
    assert [p.value for p in won.plays] == [29, 32, 30]
    assert won.winner == 1


@pytest.mark.parametrize(("follow", "rare"), [("curious-29", False), ("curious-30", True)])
def test_r1_2_rarity_follows_from_the_value(follow: str, rare: bool) -> None:
    """R1.2: a value of 30 or more is rare, so under the default trigger
    (R7.0 lead and rare) a followed 30 triggers its ability and a 29 does not."""
    events = _trick(["curious-1", follow, "curious-2"])
    triggered = [e.seen_by(None).card for e in of_type(events, AbilityTriggered)]
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
    d = Card("sassy-31")
    assert (d.house, d.value, d.rare) == (House.SASSY, 31, True)
    assert not Card("sassy-29").rare


def test_r1_3_twenty_eight_house_cards_one_assignment_and_three_prizes_per_house() -> None:
    assignments = [assignment_card(h) for h in HOUSES]
    assert len(set(assignments)) == 7
    assert len(PRIZE_CARDS) == len(set(PRIZE_CARDS)) == 21
    assert len(set(assignments) | set(PRIZE_CARDS)) == 28
    assert Counter(p.house for p in PRIZE_CARDS) == dict.fromkeys(HOUSES, 3)
    assert "crazy-house" in assignments
    assert {"crazy-prize-1", "crazy-prize-2", "crazy-prize-3"} <= set(PRIZE_CARDS)
    assert not any(
        Card(c).kind is CardKind.NUMBERED for c in [*assignments, *PRIZE_CARDS, RAT_CARD]
    )


def test_r1_4_one_rat_card_and_three_messenger_rats() -> None:
    assert RAT_CARD == "rat"
    assert MESSENGER_RATS == 3


def test_r1_5_sealed_instance_ids_share_the_design() -> None:
    assert Card("crazy-7#2").kind is CardKind.NUMBERED
    a, b = Card("crazy-7#2"), Card("crazy-7")
    assert (a.design, a.house, a.value, a.rare) == (b.design, b.house, b.value, b.rare)
    assert a.design == b.design == "crazy-7"
    assert not is_card("crazy-33#1")


def test_r11_card_listings_are_in_canonical_order() -> None:
    assert sorted_cards(cards(["sassy-1", "crazy-9", "crazy-10", "stinky-2"])) == [
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
    assert all(not c.rare for c in pack.commons)
    assert all(r.rare for r in pack.rares)
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
    back = from_json(json.loads(json.dumps(to_json(pack))), BoosterPack)
    assert back == pack
    assert all(type(c) is Card for c in back.numbered)


def test_r3_5_same_rng_state_opens_the_same_booster() -> None:
    assert open_booster(Rng(99)) == open_booster(Rng(99))
    assert open_booster(Rng(99)) != open_booster(Rng(100))


# ------------------------------------------------- the Card value object (R1)
def test_r1_2_r1_5_every_design_and_sealed_instance_parses_as_a_numbered_card() -> None:
    for d in catalogue():
        for card_id in (d.id, f"{d.id}#1", f"{d.id}#2", f"{d.id}#17"):
            card = Card(card_id)
            assert card == card_id
            assert card.kind is CardKind.NUMBERED
            assert card.numbered
            assert (card.house, card.value, card.design, card.rare) == (
                d.house,
                d.value,
                d.id,
                d.rare,
            )
    assert tuple(d.id for d in catalogue()) == DESIGN_CARDS
    assert all(type(c) is Card for c in DESIGN_CARDS)


def test_r1_3_every_prize_and_assignment_card_parses_with_its_house() -> None:
    for house in HOUSES:
        for k in (1, 2, 3):
            prize = Card(f"{house.value}-prize-{k}")
            assert prize == prize_card(house, k)
            assert (prize.kind, prize.house, prize.value, prize.design) == (
                CardKind.PRIZE,
                house,
                0,
                f"{house.value}-prize-{k}",
            )
            assert not prize.numbered and not prize.rare
        assignment = Card(f"{house.value}-house")
        assert assignment == assignment_card(house)
        assert (assignment.kind, assignment.house, assignment.value, assignment.design) == (
            CardKind.ASSIGNMENT,
            house,
            0,
            f"{house.value}-house",
        )
        assert not assignment.numbered and not assignment.rare
    assert tuple(assignment_card(h) for h in HOUSES) == ASSIGNMENT_CARDS
    assert all(type(c) is Card for c in (*PRIZE_CARDS, *ASSIGNMENT_CARDS))


def test_r1_4_the_rat_card_parses_without_a_house() -> None:
    rat = Card(RAT_CARD)
    assert rat == THE_RAT == "rat"
    assert (rat.kind, rat.house, rat.value, rat.design) == (CardKind.RAT, None, 0, "rat")
    assert not rat.numbered and not rat.rare


@pytest.mark.parametrize(
    "card_id",
    [
        "",
        "crazy-0",  # R1.2: values are 1-32
        "crazy-33",
        "crazy-07",
        "Crazy-7",
        "crazy-7 ",
        "crazy",
        "crazy-7#0",  # R1.5: instances count from 1
        "crazy-7#01",
        "crazy-7#-1",
        "crazy-7#x",
        "crazy-7#",
        "crazy-7#1#2",
        "crazy-7#\u00b2",  # a digit, but not an ASCII one
        "crazy-33#1",
        "crazy-prize-0",  # R1.3: prizes 1-3
        "crazy-prize-4",
        "crazy-prize-1#1",  # only numbered cards have instances
        "crazy-house#1",
        "plain-house",
        "rat#1",  # R1.4: one Rat card
        "RAT",
        "rats",
    ],
)
def test_r1_an_id_that_names_no_card_is_refused(card_id: str) -> None:
    with pytest.raises(ValueError):
        Card(card_id)
    assert not is_card(card_id)


def test_r1_a_card_is_made_from_a_string_only() -> None:
    for not_a_string in (7, None, b"crazy-7", ["crazy-7"]):
        with pytest.raises(TypeError):
            Card(not_a_string)  # type: ignore[arg-type]
        assert not is_card(not_a_string)
    assert is_card("crazy-7#2") and is_card(Card("rat"))


def test_r1_a_card_is_immutable() -> None:
    card = Card("crazy-7#2")
    for name, value in (("house", House.SASSY), ("value", 8), ("design", "crazy-8")):
        with pytest.raises(AttributeError):
            setattr(card, name, value)
    with pytest.raises(AttributeError):
        card.kind = CardKind.PRIZE
    with pytest.raises(AttributeError):
        card.extra = 1
    assert (card.kind, card.house, card.value, card.design) == (
        CardKind.NUMBERED,
        House.CRAZY,
        7,
        "crazy-7",
    )
    assert Card("crazy-7#2").house is House.CRAZY  # a new parse is unchanged too


def test_r1_a_card_attribute_cannot_be_deleted() -> None:
    card = Card("sassy-32#7")
    try:
        with pytest.raises(AttributeError):
            del card.house
    finally:  # cards are shared: repair the instance for the other tests
        if not hasattr(card, "house"):
            object.__setattr__(card, "house", House.SASSY)
    assert card.house is House.SASSY


def test_r1_a_card_reads_as_card_of_its_id() -> None:
    assert repr(Card("crazy-7")) == "Card('crazy-7')"
    assert repr(Card("crazy-7#2")) == "Card('crazy-7#2')"
    assert repr(THE_RAT) == "Card('rat')"
    assert repr([Card("sassy-prize-1")]) == "[Card('sassy-prize-1')]"
    assert str(Card("crazy-7#2")) == f"{Card('crazy-7#2')}" == "crazy-7#2"
    assert type(str(Card("crazy-7"))) is str
    assert json.dumps([Card("crazy-7"), THE_RAT]) == '["crazy-7", "rat"]'


def test_r1_a_card_equals_and_hashes_as_its_id() -> None:
    card = Card("crazy-7#2")
    assert card == "crazy-7#2" and "crazy-7#2" == card  # noqa: SIM300
    assert hash(card) == hash("crazy-7#2")
    assert card in {"crazy-7#2"} and "crazy-7#2" in {card}
    by_id: dict[str, int] = {card: 1}
    assert by_id["crazy-7#2"] == 1
    assert card != "crazy-7" and card != Card("crazy-7") and card != Card("crazy-7#1")
    assert Card("crazy-7") != "crazy-7#1"
    assert Card(card) is card  # a Card is parsed once
    assert Card("crazy-7#2") is card  # and interned
    assert isinstance(card, str)


def test_r1_copy_deepcopy_and_pickle_keep_a_card() -> None:
    for card in (Card("crazy-7#2"), Card("sassy-31"), Card("needy-prize-3"), THE_RAT):
        copies = [copy.copy(card), copy.deepcopy(card)]
        copies += [
            pickle.loads(pickle.dumps(card, protocol))
            for protocol in range(pickle.HIGHEST_PROTOCOL + 1)
        ]
        in_list, in_tuple = copy.deepcopy((card, (card,)))
        copies += [in_list, *in_tuple]
        for c in copies:
            assert type(c) is Card
            assert c == card
            assert (c.kind, c.house, c.value, c.design) == (
                card.kind,
                card.house,
                card.value,
                card.design,
            )
        held = copy.deepcopy({card: [card]})
        ((key, [value]),) = held.items()
        assert type(key) is Card and type(value) is Card


def test_r1_1_r1_5_canonical_order_is_house_then_value_then_instance() -> None:
    mixed = cards(
        ["sassy-1", "crazy-7#2", "stinky-2", "crazy-10#1", "crazy-7#1", "crazy-9", "crazy-32"]
    )
    assert sorted_cards(mixed) == [
        "crazy-7#1",
        "crazy-7#2",
        "crazy-9",
        "crazy-10#1",
        "crazy-32",
        "stinky-2",
        "sassy-1",
    ]
    assert sorted_cards(tuple(reversed(DESIGN_CARDS))) == list(DESIGN_CARDS)
    order = [(HOUSES.index(c.house), c.value) for c in DESIGN_CARDS if c.house is not None]
    assert order == sorted(order)
    assert all(type(c) is Card for c in sorted_cards(mixed))


def test_r1_1_r1_5_order_text_sorts_every_card_as_its_order() -> None:
    """R1.1/R1.5: ``sorted_cards`` sorts by ``order_text``, a str that must
    sort exactly as the ``(house, value, id)`` tuple, for every kind of card
    and instance numbers whose text order is not their number order (#10 <
    #2), and the house index the scoring counts by is the tuple's first part."""
    instances = [Card(f"{d}#{n}") for d in DESIGN_CARDS[::7] for n in (1, 2, 9, 10, 11, 100)]
    every = [*DESIGN_CARDS, *instances, *PRIZE_CARDS, *ASSIGNMENT_CARDS, THE_RAT]
    rng = Rng(13)
    for _ in range(20):
        rng.shuffle(every)
        assert sorted_cards(every) == sorted(every, key=lambda c: c.order)
    assert all(c.house_index == c.order[0] for c in every)
    assert THE_RAT.house_index == -1
