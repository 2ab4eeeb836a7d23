"""The engine's edge: malformed commands are refused with BAD_INPUT before
any rule runs, and the structural invariants see a lost or doubled card."""

from __future__ import annotations

import pytest

from domain.game.cards import ASSIGNMENT_CARDS, PRIZE_CARDS, THE_RAT, Card
from domain.game.commands import (
    ChooseNeighbour,
    Command,
    Gift,
    GiveCards,
    PlayCard,
    ReorderTop,
    SendMessage,
)
from domain.game.engine import apply, to_act
from domain.game.errors import GameError
from domain.game.invariants import CorruptState, check
from domain.game.legal import legal_actions
from domain.game.setup import new_game
from infra.db.state_codec import encode

MALFORMED: list[Command] = [
    SendMessage(1.0, "hi"),  # type: ignore[arg-type]
    SendMessage(True, "hi"),
    SendMessage("1", "hi"),  # type: ignore[arg-type]
    SendMessage(1, b"hi"),  # type: ignore[arg-type]
    SendMessage(1, None),  # type: ignore[arg-type]
    PlayCard(7),  # type: ignore[arg-type]
    ChooseNeighbour(1.0),  # type: ignore[arg-type]
    ChooseNeighbour(True),
    GiveCards((Gift(1.0, Card("crazy-1")),)),  # type: ignore[arg-type]
    GiveCards(["junk"]),  # type: ignore[arg-type]
    ReorderTop((Card("crazy-1"), 1)),  # type: ignore[arg-type]
    ReorderTop(("crazy-1",)),  # type: ignore[arg-type]
]


@pytest.mark.parametrize("cmd", MALFORMED, ids=repr)
def test_a_malformed_command_is_bad_input_and_changes_nothing(cmd: Command) -> None:
    state = new_game(4, "edges").state
    seat = to_act(state)
    assert seat is not None
    before = encode(state)
    with pytest.raises(GameError) as e:
        apply(state, seat, cmd)
    assert e.value.code == "BAD_INPUT"
    assert encode(state) == before


def test_a_card_id_as_a_plain_string_is_bad_input() -> None:
    state = new_game(4, "edges").state
    seat = to_act(state)
    assert seat is not None
    held = state.seats[seat].hand[0]
    assert type(held) is Card and PlayCard(held) in legal_actions(state, seat)
    before = encode(state)
    with pytest.raises(GameError) as e:
        apply(state, seat, PlayCard(str(held)))  # type: ignore[arg-type]
    assert e.value.code == "BAD_INPUT"
    assert encode(state) == before


@pytest.mark.parametrize("seat", [1.0, True, "0", None, -1, 4])
def test_a_seat_that_is_not_a_seat_number_is_refused(seat: object) -> None:
    state = new_game(4, "edges").state
    before = encode(state)
    with pytest.raises(GameError) as e:
        apply(state, seat, PlayCard(state.seats[0].hand[0]))  # type: ignore[arg-type]
    assert e.value.code == "BAD_INPUT"
    assert encode(state) == before
    assert legal_actions(state, seat) == []  # type: ignore[arg-type]


def test_invariants_see_a_lost_card() -> None:
    state = new_game(4, "edges").state
    state.seats[0].hand.pop()
    with pytest.raises(CorruptState, match="number of numbered cards"):
        check(state)


def test_invariants_see_a_doubled_card() -> None:
    state = new_game(4, "edges").state
    state.rat_deck.append(state.seats[1].hand[0])
    with pytest.raises(CorruptState, match="more than one place"):
        check(state)


def test_invariants_see_a_house_card_in_a_hand() -> None:
    state = new_game(4, "edges").state
    state.seats[0].hand.append(state.prize_pool.pop())
    with pytest.raises(CorruptState):
        check(state)


_OUT_OF_PLAY = [
    c
    for c in (*PRIZE_CARDS, *ASSIGNMENT_CARDS)
    if all(s.identity != c for s in new_game(4, "edges").state.seats)
]


@pytest.mark.parametrize("zone", ["hand", "won", "rat_deck", "discard"])
@pytest.mark.parametrize("card", _OUT_OF_PLAY)
def test_invariants_see_a_house_card_where_only_numbered_ones_go(zone: str, card: Card) -> None:
    """R1.3, R1.5: each prize card and each assignment card no seat holds as
    its identity, moved into a zone of numbered cards, is seen there."""
    state = new_game(4, "edges").state
    for holder in (state.prize_pool, state.box, *(s.prizes for s in state.seats)):
        if card in holder:
            holder.remove(card)
    into = getattr(state.seats[0], zone) if zone in ("hand", "won") else getattr(state, zone)
    into.append(card)
    with pytest.raises(CorruptState, match="holds a card of the wrong kind"):
        check(state)


def test_the_box_never_holds_the_rat() -> None:
    state = new_game(4, "edges").state
    check(state)  # a new game's box: spares and the unassigned assignment cards
    state.box.append(THE_RAT)
    with pytest.raises(CorruptState, match="box holds a card of the wrong kind"):
        check(state)


def test_clone_is_deep_and_equal() -> None:
    from domain.bots.strategy import Strategy
    from domain.simulation import play_game

    state, _ = play_game(5, "clone", [Strategy.RANDOM])
    for s in (new_game(5, "clone").state, state):
        copy = s.clone()
        assert encode(copy) == encode(s) and copy == s
        assert all(type(c) is Card for c in (*copy.seats[0].hand, *copy.rat_deck))
        copy.seats[0].hand.append(Card("crazy-1"))
        copy.rat_deck.clear()
        assert encode(copy) != encode(s)
    mid = new_game(4, "mid").state
    seat = to_act(mid)
    assert seat is not None
    apply(mid, seat, legal_actions(mid, seat)[0])  # a trick with a play in it
    copy = mid.clone()
    assert copy == mid
    assert copy.trick is not None and mid.trick is not None
    copy.trick.plays.clear()
    assert mid.trick.plays
