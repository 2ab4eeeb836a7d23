"""Independent readings of docs/rules.md, for the property tests to compare the
engine against: the setup (R3, R4), the options a seat has (R5, R6, R7),
trick resolution (R8), scoring (R10) and the end of the game (R9).

Written from the rules, not from the engine's code; they read the state only.
"""

from __future__ import annotations

from collections import Counter
from itertools import permutations

from domain.game.boosters import BoosterPack
from domain.game.cards import (
    HOUSES,
    PRIZE_CARDS,
    RAT_CARD,
    Card,
    CardKind,
    House,
    assignment_card,
    catalogue,
)
from domain.game.commands import (
    ChooseNeighbour,
    Command,
    DeclineMessage,
    DeliverMessage,
    DiscardAndPlay,
    Gift,
    GiveCard,
    GiveCards,
    HungryDiscard,
    HungryTake,
    Pass,
    PlayCard,
    PlaySecondCard,
    ReorderTop,
)
from domain.game.events import WonPlay
from domain.game.options import HAND_SIZE, Format
from domain.game.setup import MAX_DECK
from domain.game.state import DecisionKind, GameState, MessageStatus, Phase, SeatState
from tests.property.harness import GameSpec, canon


def neighbours(n: int, seat: int) -> tuple[int, int]:
    """R2.2."""
    return ((seat - 1) % n, (seat + 1) % n)


def house(card: Card) -> House:
    """The house (suit) of a numbered or prize card."""
    assert card.house is not None, f"{card!r} has no house"
    return card.house


def is_numbered(card: Card) -> bool:
    return card.kind is CardKind.NUMBERED


def value(card: Card) -> int:
    """R1.2: a numbered card's value."""
    assert is_numbered(card), f"{card!r} is not a numbered card"
    return card.value


# ---------------------------------------------------------------- setup
def check_setup(spec: GameSpec, state: GameState, packs: dict[int, BoosterPack]) -> None:
    """R3.1-R3.3 (the deck), R4.1-R4.5 (the deal), R1.3/R1.4 (house cards)."""
    n = spec.seats
    every = [c for cards in _all_zones(state) for c in cards]
    numbered = [c for c in every if is_numbered(c)]
    others = Counter(c for c in every if not is_numbered(c))
    # R1.3, R1.4: 21 prize cards, 7 assignment cards, the Rat card, once each
    assert others == Counter([*PRIZE_CARDS, *(assignment_card(h) for h in HOUSES), RAT_CARD])
    fmt = spec.options.format
    if fmt is Format.SINGLETON:  # R3.1
        expected = Counter(d.id for d in catalogue())
        assert sorted(numbered) == sorted(expected)
    else:
        if fmt is Format.SEALED:  # R3.2: one pack per seat, bots too
            assert sorted(packs) == list(range(n))
            designs = [d for p in packs.values() for d in p.numbered]
            for p in packs.values():  # R1.6
                assert len(p.commons) == 15 and len(p.rares) == 2
                assert len(set(p.numbered)) == 17
                assert not any(d.rare for d in p.commons)
                assert all(d.rare for d in p.rares)
        else:  # R3.3
            assert not packs
            assert spec.collections is not None
            designs = [Card(d) for c in spec.collections for d in c]
        expected = Counter(designs)
        # R1.5: instance ids <design>#<k>, k = 1..copies
        ids = {f"{d}#{k}" for d, m in expected.items() for k in range(1, m + 1)}
        if len(designs) > MAX_DECK:  # R3.3 [decision]: a seeded 224 of them
            assert len(numbered) == MAX_DECK and set(numbered) <= ids
        else:
            assert Counter(c.design for c in numbered) == expected
            assert sorted(numbered) == sorted(ids)
    assert len(numbered) == len(set(numbered))
    # R4.1, R4.2, R4.3
    if spec.rat is not None:
        assert state.rat == spec.rat
    assert all(len(s.hand) == HAND_SIZE for s in state.seats)
    assert len(state.rat_deck) == len(numbered) - HAND_SIZE * n
    houses = [s.house for i, s in enumerate(state.seats) if i != state.rat]
    assert state.seats[state.rat].house is None and state.seats[state.rat].identity == RAT_CARD
    assert None not in houses and len(set(houses)) == n - 1
    for s in state.seats:
        if s.house is not None:
            assert s.identity == assignment_card(s.house)
    if fmt is Format.SEALED:  # R3.2: the pack's house unless an earlier seat took it
        taken: set[House] = set()
        for i, s in enumerate(state.seats):
            if i == state.rat:
                continue
            if packs[i].house not in taken:
                assert s.house is packs[i].house
            assert s.house is not None
            taken.add(s.house)
    # R4.4, R4.5: 21 prizes, the first revealed; the Rat leads
    assert state.trick is not None and state.trick.number == 1
    assert len(state.prize_pool) == len(PRIZE_CARDS) - 1
    assert state.trick.leader == state.rat == state.turn and state.phase is Phase.LEAD
    assert not any(s.won or s.prizes for s in state.seats) and not state.discard


def _all_zones(state: GameState) -> list[list[Card]]:
    zones = [state.rat_deck, state.prize_pool, state.discard, state.box]
    for s in state.seats:
        zones += [s.hand, s.won, s.prizes, [s.identity]]
    if state.trick is not None:
        zones.append([state.trick.prize])
    return zones


# ---------------------------------------------------------------- options
def expected_options(state: GameState, seat: int) -> set[Command]:
    """Every command (but SendMessage) ``seat`` may send now, canonical."""
    if state.phase is Phase.FINISHED:  # R9.3
        return set()
    n = state.n
    out: set[Command] = set()
    d = state.pending
    if d is not None:  # R7.0b: the game waits for the decision
        if d.seat == seat:
            out |= _decision_options(state, seat, d.kind, d.cards)
    elif seat == state.turn:
        out |= _trick_options(state, seat)
    if state.phase is Phase.LEAD and seat == state.rat:  # R5.2
        trick = state.trick
        assert trick is not None
        delivered = sum(
            1
            for m in state.messages
            if m.trick == trick.number and m.status is MessageStatus.DELIVERED
        )
        for m in state.messages:
            if m.status is MessageStatus.PENDING:
                out.add(DeclineMessage(m.id))
                if delivered < 3:
                    out.add(DeliverMessage(m.id))
    assert 0 <= seat < n
    return out


def _trick_options(state: GameState, seat: int) -> set[Command]:
    trick = state.trick
    assert trick is not None
    hand = state.seats[seat].hand
    assert hand, "R6.4: a seat with an empty hand is skipped"
    if not trick.plays:  # R6.2: lead any card
        return {PlayCard(c) for c in hand}
    if trick.sassy:  # R7.7
        sassy = [c for c in hand if house(c) is House.SASSY]
        if sassy:
            return {PlayCard(c) for c in sassy}
        out: set[Command] = {Pass()}
        out |= {DiscardAndPlay(x, y) for x in hand for y in hand if x != y}
        return out
    lead = house(trick.plays[0].card)  # R6.3
    follow = [c for c in hand if house(c) is lead]
    return {PlayCard(c) for c in (follow or hand)}


def _decision_options(
    state: GameState, seat: int, kind: DecisionKind, cards: list[Card]
) -> set[Command]:
    hand = state.seats[seat].hand
    left, right = neighbours(state.n, seat)
    if kind is DecisionKind.CRAZY_SECOND_CARD:  # R7.1: any card
        return {PlaySecondCard(c) for c in hand}
    if kind is DecisionKind.STINKY_GIFTS:  # R7.2
        if len(hand) == 1:
            return {GiveCards((Gift(s, hand[0]),)) for s in (left, right)}
        return {
            canon(GiveCards((Gift(left, x), Gift(right, y)))) for x in hand for y in hand if x != y
        }
    if kind is DecisionKind.HUNGRY_DISCARD:  # R7.4
        return {HungryDiscard(c) for c in hand}
    if kind is DecisionKind.HUNGRY_TAKE:
        return {HungryTake(c) for c in state.rat_deck}
    if kind is DecisionKind.NEEDY_NEIGHBOUR:  # R7.5
        return {ChooseNeighbour(left), ChooseNeighbour(right)}
    if kind is DecisionKind.NEEDY_GIFT:
        return {GiveCard(c) for c in hand}
    assert kind is DecisionKind.CURIOUS_ORDER  # R7.6: the top 3 (fewer), any order
    assert cards == state.rat_deck[: len(cards)] and 1 <= len(cards) <= 3
    assert len(cards) == min(3, len(state.rat_deck))
    return {ReorderTop(p) for p in permutations(cards)}


def can_message(state: GameState, seat: int) -> bool:
    """R5.1, R5.2, R5.5: who may send a message now."""
    if state.phase is not Phase.LEAD:
        return False
    trick = state.trick
    assert trick is not None
    if seat == state.rat:  # its messages are delivered at once: under 3 deliveries
        delivered = sum(
            1
            for m in state.messages
            if m.trick == trick.number and m.status is MessageStatus.DELIVERED
        )
        return delivered < 3
    pending = sum(
        1 for m in state.messages if m.sender == seat and m.status is MessageStatus.PENDING
    )
    return pending < 3


# ---------------------------------------------------------------- resolution
def play_value(p: WonPlay) -> int:
    """R7.1: a play's value includes a Crazy second card."""
    return value(p.card) + (value(p.second_card) if p.second_card else 0)


def trick_winner(plays: tuple[WonPlay, ...], prize: Card) -> int:
    """R8.1 over TrickWon's plays: highest trump play, else highest lead-suit
    play, earliest on a tie; a play's value includes a Crazy second card."""
    trump = house(prize)
    lead = house(plays[0].card)
    for suit in (trump, lead):
        candidates = [p for p in plays if house(p.card) is suit]
        if candidates:
            best = max(play_value(p) for p in candidates)
            return next(p.seat for p in candidates if play_value(p) == best)
    raise AssertionError("the lead play is always a candidate")


def score(seat: SeatState) -> int:
    """R10.1: 10 / 5 / 1 per won numbered card by prizes held of its house."""
    held = Counter(house(p) for p in seat.prizes)
    total = 0
    for card in seat.won:
        assert is_numbered(card), "only numbered cards are won (R8.2)"
        k = held[house(card)]
        total += 10 if k >= 3 else 5 if k >= 1 else 1
    return total


def all_houses(seat: SeatState) -> bool:
    return {house(p) for p in seat.prizes} == set(HOUSES)


def game_over(state: GameState, prize_pool_size: int) -> bool:
    """R9.1, after a trick (its collection and refill), with the prize pool
    as it is before the next prize is revealed."""
    return (
        any(all_houses(s) for s in state.seats)
        or not prize_pool_size
        or not any(s.hand for s in state.seats)
    )


def winners(state: GameState) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """R9.2: (winners, disqualified)."""
    complete = [i for i, s in enumerate(state.seats) if all_houses(s)]
    if state.rat in complete:
        return (state.rat,), ()
    pts = [score(s) for s in state.seats]
    ranked = [i for i in range(state.n) if i not in complete]
    best = max(pts[i] for i in ranked)
    return tuple(i for i in ranked if pts[i] == best), tuple(complete)
