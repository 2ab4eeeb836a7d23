"""R8: resolving a trick — who wins, what the winner takes, refill, next lead.

Curious leads with an empty Rat Deck and Sleepy leads do not change who wins,
so they carry these tricks.
"""

from __future__ import annotations

from domain.game.cards import Card
from domain.game.commands import PlayCard, PlaySecondCard, SendMessage
from domain.game.engine import to_act
from domain.game.events import CardsDrawn, Event, TrickStarted, TrickWon
from domain.game.options import Format
from domain.game.state import Phase
from infra.codec import event_to_json
from tests.builders import make_state, of_type, one, run


def winner(
    hands: list[list[str]], prize: str = "needy-prize-1", fmt: Format = Format.SINGLETON
) -> int:
    """Seat 0 leads; every seat plays its first card; the winning seat."""
    state = make_state(hands, prize=prize, fmt=fmt)
    events = run(state, *((s, PlayCard(Card(h[0]))) for s, h in enumerate(hands)))
    return one(events, TrickWon).seen_by(None).winner


# ---------------------------------------------------------------- R8.1
def test_r8_1_a_trump_beats_a_higher_lead_suit_card() -> None:
    assert winner([["curious-29"], ["needy-1"], ["curious-28"]]) == 1


def test_r8_1_the_highest_trump_wins() -> None:
    assert winner([["curious-29"], ["needy-3"], ["needy-12"], ["needy-4"]]) == 2


def test_r8_1_without_trump_the_highest_lead_suit_card_wins() -> None:
    assert winner([["curious-5"], ["curious-20"], ["curious-12"]]) == 1


def test_r8_1_an_off_suit_card_never_wins_however_high() -> None:
    assert winner([["curious-5"], ["sassy-29"], ["curious-6"]]) == 2


def test_r8_1_nobody_follows_leader_wins() -> None:
    assert winner([["curious-1"], ["crazy-29"], ["sassy-32"]]) == 0


def test_r8_1_when_the_lead_suit_is_trump_the_highest_of_it_wins() -> None:
    assert winner([["curious-5"], ["curious-20"], ["crazy-30"]], prize="curious-prize-1") == 1


def test_r8_1_ties_earlier_play_wins_sealed_duplicates() -> None:
    hands = [["curious-1#1"], ["curious-7#1"], ["curious-7#2"]]
    assert winner(hands, fmt=Format.SEALED) == 1
    hands = [["curious-1#1"], ["needy-7#2"], ["needy-7#1"]]
    assert winner(hands, fmt=Format.SEALED) == 1


def test_r8_1_ties_earlier_play_wins_crazy_sum_against_a_single_card() -> None:
    # crazy-10 + stinky-5 = 15 is led before crazy-15: the lead wins.
    state = make_state([["crazy-10", "stinky-5"], ["crazy-15"], ["crazy-2"]], prize="needy-prize-1")
    events = run(
        state,
        (0, PlayCard(Card("crazy-10"))),
        (0, PlaySecondCard(Card("stinky-5"))),
        (1, PlayCard(Card("crazy-15"))),
        (2, PlayCard(Card("crazy-2"))),
    )
    assert one(events, TrickWon).seen_by(None).winner == 0


def test_r8_1_ties_the_earlier_play_wins_even_when_the_leader_is_not_seat_0() -> None:
    state = make_state(
        [["curious-9#2"], ["curious-3#1"], ["curious-9#1"]], leader=2, fmt=Format.SEALED
    )
    events = run(
        state,
        (2, PlayCard(Card("curious-9#1"))),
        (0, PlayCard(Card("curious-9#2"))),
        (1, PlayCard(Card("curious-3#1"))),
    )
    assert one(events, TrickWon).seen_by(None).winner == 2


# ---------------------------------------------------------------- R8.2
def test_r8_2_the_winner_takes_every_played_card_and_the_prize() -> None:
    state = make_state(
        [["curious-5"], ["curious-20"], ["sassy-12"]], prize="needy-prize-2", refill=False
    )
    events = run(
        state,
        (0, PlayCard(Card("curious-5"))),
        (1, PlayCard(Card("curious-20"))),
        (2, PlayCard(Card("sassy-12"))),
    )
    assert sorted(state.seats[1].won) == ["curious-20", "curious-5", "sassy-12"]
    assert state.seats[1].prizes == ["needy-prize-2"]
    assert state.seats[0].won == state.seats[2].won == []
    won = one(events, TrickWon)
    assert won.seen_by(None).prize == "needy-prize-2"
    assert won.seen_by(None).winner == 1


# ---------------------------------------------------------------- R8.3
def refill_trick(refill: bool) -> tuple[list[list[Card]], list[Card], list[Event]]:
    """Seat 2 wins with a trump; hands end at 8, 7, 8; the deck holds 6."""
    hands = [
        [f"sleepy-{v}" for v in range(1, 10)],
        [f"crazy-{v}" for v in range(1, 9)],
        [f"needy-{v}" for v in range(1, 10)],
    ]
    deck = [f"sassy-{v}" for v in range(1, 7)]
    state = make_state(hands, prize="needy-prize-1", rat_deck=deck, refill=refill)
    events = run(
        state,
        (0, PlayCard(Card("sleepy-9"))),
        (1, PlayCard(Card("crazy-8"))),
        (2, PlayCard(Card("needy-9"))),
    )
    assert one(events, TrickWon).seen_by(None).winner == 2
    return [s.hand for s in state.seats], state.rat_deck, events


def test_r8_3_refill_from_the_winner_clockwise_to_10_while_the_deck_lasts() -> None:
    hands, deck, events = refill_trick(refill=True)
    drawn = of_type(events, CardsDrawn)
    assert [(e.seen_by(None).seat, e.seen_by(None).count) for e in drawn] == [
        (2, 2),
        (0, 2),
        (1, 2),
    ]
    assert hands[2][-2:] == ["sassy-1", "sassy-2"]
    assert hands[0][-2:] == ["sassy-3", "sassy-4"]
    assert hands[1][-2:] == ["sassy-5", "sassy-6"]
    assert [len(h) for h in hands] == [10, 9, 10]
    assert deck == []


def test_r8_3_r11_drawn_cards_are_seen_by_the_drawer_only() -> None:
    _, _, events = refill_trick(refill=True)
    first = of_type(events, CardsDrawn)[0]
    assert event_to_json(first.seen_by(None)) == {"seat": 2, "count": 2, "ratDeckSize": 4}
    assert first.seen_by(2).cards == ("sassy-1", "sassy-2")
    for viewer in (0, 1, None):
        assert first.seen_by(viewer).cards is None


def test_r8_3_refill_hands_false_draws_nothing() -> None:
    hands, deck, events = refill_trick(refill=False)
    assert of_type(events, CardsDrawn) == []
    assert [len(h) for h in hands] == [8, 7, 8]
    assert len(deck) == 6


def test_r8_3_a_seat_holding_10_or_more_draws_nothing() -> None:
    big = [f"hungry-{v}" for v in range(1, 13)]  # 12 cards, 11 after the trick
    state = make_state(
        [[f"sleepy-{v}" for v in range(20, 29)], big, ["sleepy-6"]],
        prize="needy-prize-1",
        rat_deck=["sassy-1", "sassy-2", "sassy-3", "sassy-4"],
    )
    events = run(
        state,
        (0, PlayCard(Card("sleepy-28"))),
        (1, PlayCard(Card("hungry-1"))),
        (2, PlayCard(Card("sleepy-6"))),
    )
    drawn = of_type(events, CardsDrawn)
    assert [(e.seen_by(None).seat, e.seen_by(None).count) for e in drawn] == [(0, 2), (2, 2)]
    assert len(state.seats[1].hand) == 11


# ---------------------------------------------------------------- R8.4
def test_r8_4_the_winner_leads_the_next_trick_after_the_next_prize_is_revealed() -> None:
    state = make_state(
        [["curious-5", "crazy-1"], ["curious-20", "crazy-2"], ["curious-12", "crazy-3"]],
        prize="needy-prize-1",
        prize_pool=["sassy-prize-3", "hungry-prize-1"],
    )
    events = run(
        state,
        (0, PlayCard(Card("curious-5"))),
        (1, PlayCard(Card("curious-20"))),
        (2, PlayCard(Card("curious-12"))),
    )
    started = one(events, TrickStarted)
    assert event_to_json(started.seen_by(None)) == {
        "trick": 2,
        "prize": "sassy-prize-3",
        "trump": "sassy",
        "leader": 1,
        "prizePoolSize": 1,
    }
    assert events.index(started) > events.index(one(events, TrickWon))
    assert state.trick is not None
    assert (state.trick.number, state.trick.prize, state.trick.leader) == (2, "sassy-prize-3", 1)
    assert state.prize_pool == ["hungry-prize-1"]
    assert state.phase is Phase.LEAD
    assert to_act(state) == 1
    run(state, (2, SendMessage(1, "a new message window")))


def test_r8_4_a_winner_with_an_empty_hand_hands_the_lead_clockwise() -> None:
    # [decision] of the engine (turns.next_leader)
    state = make_state(
        [["curious-5", "crazy-1"], ["curious-20"], ["curious-12", "crazy-3"]],
        prize="needy-prize-1",
    )
    run(
        state,
        (0, PlayCard(Card("curious-5"))),
        (1, PlayCard(Card("curious-20"))),
        (2, PlayCard(Card("curious-12"))),
    )
    assert state.seats[1].hand == []
    assert state.trick is not None and state.trick.leader == 2
    assert to_act(state) == 2
