"""A seat plays from its own events: every change that leaves the game
waiting ends with ``ActionRequired``, whose projection for the seat to act
carries its hand and its choices (R6, R7.0b, R11); choices are structured,
never cross products, and stand for exactly the legal commands."""

from __future__ import annotations

from domain.game.cards import Card, sorted_cards
from domain.game.choice import Choice, ChoiceKind, GiftOption
from domain.game.choices import choices
from domain.game.commands import PlayCard, SendMessage
from domain.game.engine import apply, to_act
from domain.game.events import ActionRequired, Event
from domain.game.legal import commands, legal_actions
from domain.game.rng import Rng
from domain.game.setup import new_game
from domain.game.state import Phase
from infra.codec import event_to_json
from tests.builders import make_state, run

HAND_OF_TEN = [
    "crazy-1",
    "crazy-2",
    "stinky-3",
    "sleepy-4",
    "hungry-5",
    "needy-6",
    "curious-7",
    "curious-8",
    "crazy-9",
    "stinky-10",
]


def _last(events: list[Event]) -> ActionRequired:
    last = events[-1]
    assert isinstance(last, ActionRequired), last
    return last


def test_r6_the_deal_ends_with_the_leader_asked_to_lead() -> None:
    setup = new_game(4, "ar/1", rat=2)
    waiting = _last(setup.events)
    state = setup.state
    assert (waiting.seat, waiting.phase) == (2, Phase.LEAD)
    public = waiting.seen_by(None)
    assert (public.hand, public.choices) == (None, None)
    assert event_to_json(public) == {"seat": 2, "phase": "lead"}
    own = waiting.seen_by(2)
    assert own.hand == tuple(sorted_cards(state.seats[2].hand))
    assert own.choices == choices(state, 2)
    for other in (0, 1, 3):
        assert waiting.seen_by(other) == public  # R11: nobody else sees the hand


def test_r6_every_change_ends_with_the_seat_to_act_until_the_end() -> None:
    state = new_game(5, "ar/2").state
    rng = Rng(5)
    moves = 0
    while (seat := to_act(state)) is not None:
        legal = legal_actions(state, seat)
        events = apply(state, seat, legal[rng.below(len(legal))])
        moves += 1
        waiting = [e for e in events if isinstance(e, ActionRequired)]
        if to_act(state) is None:
            assert waiting == []  # R9.3: over, nobody is asked
            break
        assert waiting == [events[-1]]
        assert (waiting[0].seat, waiting[0].phase) == (to_act(state), state.phase)
        assert waiting[0].choices == choices(state, waiting[0].seat)
    assert moves > 50


def test_r5_1_sending_a_message_is_a_choice_too() -> None:
    state = make_state([["crazy-1"], ["crazy-2"], ["crazy-3"]])
    (send,) = [c for c in choices(state, 1) if c.kind is ChoiceKind.SEND_MESSAGE]
    assert send.seats == (0, 2)  # R5.5: never oneself
    events = run(state, (1, SendMessage(0, "hi")))
    assert _last(events).seat == 0  # the leader is asked again, its choices fresh


def test_r7_7_discard_and_play_is_one_choice_not_ninety_pairs() -> None:
    state = make_state(
        [["sassy-1"], HAND_OF_TEN, ["sassy-2"]], rat=0, prize="needy-prize-1", leader=0
    )
    events = run(state, (0, PlayCard(Card("sassy-1"))))  # R7.7: Sassy led
    waiting = _last(events).seen_by(1)
    assert waiting.choices is not None
    kinds = [c.kind for c in waiting.choices]
    assert kinds == [ChoiceKind.PASS, ChoiceKind.DISCARD_AND_PLAY]
    stuck = waiting.choices[1]
    hand = tuple(sorted_cards([Card(c) for c in HAND_OF_TEN]))
    assert (stuck.cards, stuck.discards) == (hand, hand)
    assert len(list(commands(stuck))) == 90  # what it stands for, checked exactly


def test_r7_2_stinky_gifts_are_listed_per_neighbour() -> None:
    state = make_state(
        [["stinky-30", "crazy-1", "crazy-2", "crazy-3"], ["sassy-5"], ["sassy-6"]],
        prize="needy-prize-1",
    )
    events = run(state, (0, PlayCard(Card("stinky-30"))))  # R7.2: a Stinky lead
    (gifts,) = _last(events).seen_by(0).choices or ()
    hand = (Card("crazy-1"), Card("crazy-2"), Card("crazy-3"))
    assert gifts == Choice(
        ChoiceKind.STINKY_GIFTS, gifts=(GiftOption(1, hand), GiftOption(2, hand)), gift_count=2
    )
    assert sorted(map(repr, commands(gifts))) == sorted(map(repr, legal_actions(state, 0)))


def test_choices_stand_for_exactly_the_legal_commands_all_game_long() -> None:
    for seed in range(4):
        state = new_game(3 + seed, f"ar/choices/{seed}").state
        rng = Rng(seed)
        while (seat := to_act(state)) is not None:
            for s in range(state.n):
                expanded = [c for ch in choices(state, s) for c in commands(ch)]
                assert sorted(map(repr, expanded)) == sorted(map(repr, legal_actions(state, s)))
            legal = legal_actions(state, seat)
            apply(state, seat, legal[rng.below(len(legal))])
