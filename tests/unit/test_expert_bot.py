"""EXPERT (ISMCTS, domain/bots/expert.py): legal, deterministic, sees only
its seat's view and events (R11), determinizations agree with the view."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from domain.bots.determinize import Sampler
from domain.bots.expert import Budget, expert_bot
from domain.bots.greedy import greedy_bot
from domain.bots.ismcts import Params
from domain.bots.knowledge import knowledge
from domain.bots.playout import policy
from domain.bots.sim import step
from domain.bots.strategy import random_bot
from domain.game.commands import COMMAND_KINDS, Command, DeclineMessage, DeliverMessage, SendMessage
from domain.game.engine import apply, to_act
from domain.game.events import CardsDrawn, Event, GameStarted
from domain.game.invariants import check
from domain.game.legal import legal_actions
from domain.game.options import AbilityTrigger, Format, GameOptions
from domain.game.rng import Rng
from domain.game.setup import new_game
from domain.game.state import DecisionKind, GameState
from domain.game.views import PlayerView, player_view

TINY = Budget(iterations=8, cpu_seconds=None)
PUBLIC = ("seats", "trick", "pending", "rat_deck_size", "prize_pool_size", "discard", "phase")


def _positions(
    seats: int, seed: int, options: GameOptions | None = None, every: int = 1
) -> list[tuple[GameState, list[Event]]]:
    """Positions of a game between RANDOM and GREEDY bots: (state, events so far)."""
    setup = new_game(seats, seed, options)
    state, events = setup.state, list(setup.events)
    rng = Rng(seed)
    out = []
    k = 0
    while (seat := to_act(state)) is not None:
        if k % every == 0:
            out.append((state.clone(), list(events)))
        k += 1
        bot = greedy_bot if seat % 2 else random_bot
        events += apply(state, seat, bot(player_view(state, seat), legal_actions(state, seat), rng))
    return out


def _seen(events: Sequence[Event], seat: int) -> list[Event]:
    return [e.seen_by(seat) for e in events]


OPTIONS = [
    GameOptions(),
    GameOptions(ability_trigger=AbilityTrigger.EVERY_CARD),
    GameOptions(format=Format.SEALED, ability_trigger=AbilityTrigger.EVERY_CARD),
    GameOptions(refill_hands=False),
]


@pytest.mark.parametrize("params", [Params(), Params(flat=False)], ids=["flat", "tree"])
@pytest.mark.parametrize("options", OPTIONS, ids=["singleton", "every", "sealed", "no-refill"])
def test_expert_move_is_legal_on_assorted_states(options: GameOptions, params: Params) -> None:
    """R6.5, R7.0b: every move EXPERT picks is one of the legal commands, by
    either search (the flat default and the ISMCTS tree)."""
    for seats, seed in ((3, 1), (5, 2), (8, 3)):
        for state, events in _positions(seats, seed, options, every=7):
            seat = to_act(state)
            assert seat is not None
            legal = legal_actions(state, seat)
            view, seen = player_view(state, seat), _seen(events, seat)
            cmd = expert_bot(view, legal, Rng(seed), seen=seen, budget=TINY, params=params)
            assert cmd in legal


def test_expert_is_deterministic_for_a_seed() -> None:
    """R3.5: with an iteration budget and no CPU cap, the same inputs and rng
    seed give the same move."""
    for state, events in _positions(4, 11, every=9):
        seat = to_act(state)
        assert seat is not None
        view, legal = player_view(state, seat), legal_actions(state, seat)
        seen = _seen(events, seat)
        budget = Budget(iterations=30, cpu_seconds=None)
        a = expert_bot(view, legal, Rng(7), seen=seen, budget=budget)
        b = expert_bot(view, legal, Rng(7), seen=seen, budget=budget)
        assert a == b


def test_expert_returns_a_single_legal_move_at_once() -> None:
    """One legal move: returned without searching (no rng draw)."""
    state = new_game(4, 5).state
    seat = to_act(state)
    assert seat is not None
    only = legal_actions(state, seat)[:1]
    rng = Rng(3)
    assert expert_bot(player_view(state, seat), only, rng) == only[0]
    assert rng.state == Rng(3).state


def test_expert_delivers_messages_as_the_rat() -> None:
    """R5.2: with messages pending the Rat delivers (as GREEDY does)."""
    state = new_game(4, 5).state
    rat = state.rat
    other = (rat + 1) % 4
    apply(state, other, SendMessage(rat, "hello"))
    legal = legal_actions(state, rat)
    cmd = expert_bot(player_view(state, rat), legal, Rng(1), budget=TINY)
    assert isinstance(cmd, DeliverMessage | DeclineMessage)
    assert isinstance(cmd, DeliverMessage)


class _Recorder:
    """Wraps EXPERT and keeps every game-derived argument it receives."""

    def __init__(self) -> None:
        self.calls: list[tuple[PlayerView, Sequence[Command], Sequence[Event]]] = []

    def __call__(
        self, view: PlayerView, legal: Sequence[Command], rng: Rng, *, seen: Sequence[Event]
    ) -> Command:
        self.calls.append((view, legal, seen))
        return expert_bot(view, legal, rng, seen=seen, budget=TINY)


def test_expert_receives_only_its_view_and_its_projected_events() -> None:
    """R11: the only game-derived inputs are its seat's PlayerView, the legal
    commands and events that are ``seen_by(seat)`` projections."""
    setup = new_game(5, 21)
    state, events = setup.state, list(setup.events)
    expert_seat, bot, rng = 2, _Recorder(), Rng(4)
    projections: list[list[Event]] = []
    while (seat := to_act(state)) is not None:
        legal = legal_actions(state, seat)
        view = player_view(state, seat)
        if seat == expert_seat:
            projections.append(_seen(events, seat))
            cmd = bot(view, legal, rng, seen=_seen(events, seat))
        else:
            cmd = greedy_bot(view, legal, rng)
        events += apply(state, seat, cmd)
    assert len(bot.calls) == len(projections)
    for (got, offered, seen), expected in zip(bot.calls, projections, strict=True):
        assert type(got) is PlayerView and got.seat == expert_seat
        assert all(type(c) in COMMAND_KINDS.values() for c in offered)  # commands only
        assert list(seen) == expected  # exactly the seat's projections
        for e in seen:
            assert not isinstance(e, GameStarted) or not e.hands  # no other hand
            if isinstance(e, CardsDrawn) and e.seat != expert_seat:
                assert e.cards is None
        assert not any(isinstance(x, GameState) for x in (got, offered, seen, *seen))


@pytest.mark.parametrize("options", OPTIONS, ids=["singleton", "every", "sealed", "no-refill"])
def test_determinizations_agree_with_the_view_and_knowledge(options: GameOptions) -> None:
    """R11: a determinization is a sound state whose view for the seat shows
    the same hand and public facts (hand sizes, piles, trick, sizes); known
    cards stay where the seat knows they are, voids hold (R6.3, R7.7), and
    the seat's legal moves are the same."""
    rng = Rng(99)
    for seats, seed in ((4, 31), (6, 32)):
        for state, events in _positions(seats, seed, options, every=3):
            seat = to_act(state)
            assert seat is not None
            view = player_view(state, seat)
            know = knowledge(view, _seen(events, seat))
            _knowledge_is_true(state, know, seat)
            sampler = Sampler(view, know)
            for _ in range(2):
                sample = sampler.sample(rng)
                check(sample)
                mine = player_view(sample, seat)
                assert mine.hand == view.hand
                for name in PUBLIC:
                    assert getattr(mine.public, name) == getattr(view.public, name), name
                _sample_keeps_knowledge(sample, know)
                pending = view.public.pending
                if pending is None or pending.kind is not DecisionKind.HUNGRY_TAKE:
                    real = [c for c in legal_actions(state, seat) if not _messenger(c)]
                    assert legal_actions(sample, seat) == real


def _messenger(c: Command) -> bool:
    return isinstance(c, DeliverMessage | DeclineMessage)


def _knowledge_is_true(state: GameState, know: object, seat: int) -> None:
    """What the seat believes is so in the real state."""
    from domain.bots.knowledge import Knowledge

    assert isinstance(know, Knowledge)
    trick_cards = {p.card for p in state.trick.plays} if state.trick else set()
    for other, cards in know.held.items():
        assert cards <= set(state.seats[other].hand) | trick_cards
    for other, houses in know.voids.items():
        unknown = [c for c in state.seats[other].hand if c not in know.held.get(other, set())]
        assert not [c for c in unknown if c.house in houses]
    assert state.rat_deck[: len(know.top)] == know.top
    if know.deck is not None:
        assert set(state.rat_deck) == know.deck


def _sample_keeps_knowledge(sample: GameState, know: object) -> None:
    """Known cards are placed where the seat knows them; voids respected."""
    from domain.bots.knowledge import Knowledge

    assert isinstance(know, Knowledge)
    trick_cards = {p.card for p in sample.trick.plays} if sample.trick else set()
    for other, cards in know.held.items():
        assert cards <= set(sample.seats[other].hand) | trick_cards
    assert sample.rat_deck[: len(know.top)] == know.top
    if know.deck is not None:
        assert set(sample.rat_deck) == know.deck


def test_a_given_card_is_known_in_the_receivers_hand() -> None:
    """R7.2 / R7.5: a card the seat gave is known to be in the receiver's hand,
    and determinizations put it there, never elsewhere."""
    found = 0
    for seed in range(40):
        for state, events in _positions(
            4, seed, GameOptions(ability_trigger=AbilityTrigger.EVERY_CARD), every=2
        ):
            seat = to_act(state)
            assert seat is not None
            view = player_view(state, seat)
            know = knowledge(view, _seen(events, seat))
            if not any(know.held.values()):
                continue
            found += 1
            sample = Sampler(view, know).sample(Rng(seed))
            for other, cards in know.held.items():
                for card in cards:
                    holders = [i for i, s in enumerate(sample.seats) if card in s.hand]
                    in_trick = sample.trick is not None and any(
                        p.card == card for p in sample.trick.plays
                    )
                    assert holders == [other] or (in_trick and not holders)
        if found >= 20:
            break
    assert found


def test_a_sealed_game_with_expert_seats_finishes() -> None:
    """R3.2: in a sealed game (unknown deck, invented hidden cards) EXPERT
    plays legal moves to the end."""
    options = GameOptions(format=Format.SEALED)
    setup = new_game(4, 77, options)
    state, events = setup.state, list(setup.events)
    rng = Rng(1)
    while (seat := to_act(state)) is not None:
        legal = legal_actions(state, seat)
        view = player_view(state, seat)
        if seat in (0, 2):
            cmd = expert_bot(view, legal, rng, seen=_seen(events, seat), budget=TINY)
        else:
            cmd = greedy_bot(view, legal, rng)
        assert cmd in legal
        events += apply(state, seat, cmd)
    assert state.outcome is not None


@pytest.mark.parametrize(
    "options",
    [*OPTIONS, GameOptions(ability_trigger=AbilityTrigger.LEAD_ONLY)],
    ids=["singleton", "every", "sealed", "no-refill", "lead-only"],
)
def test_lean_step_matches_the_engine(options: GameOptions) -> None:
    """domain/bots/sim.step changes a state exactly as engine.apply does (R6-R9),
    on every legal command of many random positions, 3 to 8 seats."""
    checked = 0
    for seed in range(12):
        seats = 3 + seed % 6
        setup = new_game(seats, 7000 + seed, options)
        state = setup.state
        rng = Rng(seed)
        while (seat := to_act(state)) is not None:
            legal = [c for c in legal_actions(state, seat) if not _messenger(c)]
            for cmd in legal[:: max(1, len(legal) // 4)]:  # a few of each position's moves
                ours, theirs = state.clone(), state.clone()
                step(ours, seat, cmd)
                apply(theirs, seat, cmd)
                assert ours == theirs, cmd
                checked += 1
            bot = greedy_bot if rng.below(2) else random_bot
            cmd = bot(player_view(state, seat), legal_actions(state, seat), rng)
            apply(state, seat, cmd)
    assert checked > 1000


def test_playout_policy_is_greedy() -> None:
    """The playout policy (domain/bots/playout.policy, on the state) makes
    GREEDY's exact move (domain/bots/greedy, on the view and legal list)."""
    checked = 0
    for seed in range(24):
        seats = 3 + seed % 6
        state = new_game(seats, 900 + seed, OPTIONS[seed % len(OPTIONS)]).state
        rng = Rng(seed)
        while (seat := to_act(state)) is not None:
            legal = legal_actions(state, seat)
            view = player_view(state, seat)
            if not any(isinstance(c, DeliverMessage | DeclineMessage) for c in legal):
                moves = [c for c in legal if not isinstance(c, SendMessage)]
                assert policy(state, seat) == greedy_bot(view, moves, rng)
                checked += 1
            bot = greedy_bot if rng.below(3) else random_bot
            apply(state, seat, bot(view, legal, rng))
    assert checked > 2000
