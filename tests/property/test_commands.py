"""Property 3: a command is accepted iff it is legal; a refusal changes nothing.

At sampled steps of many seeded games:

- a sample of every seat's listed legal actions is applied to copies of the
  state (``decode(encode(state))``) and none is refused;
- random other commands (card ids from the catalogue, from every hand, from
  the Rat Deck and the piles; wrong seats, out-of-range seats; every command
  type whatever the decision; Stinky gifts in any order; messages with bad
  text or targets; unknown or settled message ids) are refused exactly when
  they are not legal: ``legal_actions`` decides, compared in canonical form
  (gifts sorted by ``to``), and SendMessage is judged by ``message_targets``
  and R5.1's text rule (1-280 characters, [decision] not only white space).
  A refused command raises a GameError with a fitting code, leaves
  ``encode(state)`` unchanged, and its message names no card the caller
  cannot see (R11);
- commands with a field of the wrong type (a seat given as "1", 1.0 or True,
  a card as bytes, gifts as a list, not a command at all) get BAD_INPUT.

After the game ends, every command gets GAME_FINISHED (R9.3).
"""

from __future__ import annotations

from collections.abc import Sequence
from copy import deepcopy
from itertools import permutations
from typing import Any, TypeVar

import pytest
from hypothesis import given, settings

from domain.game.cards import Card
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
    SendMessage,
)
from domain.game.engine import apply, to_act
from domain.game.errors import GameError
from domain.game.invariants import check
from domain.game.legal import legal_actions
from domain.game.messaging import MAX_TEXT, message_targets
from domain.game.rng import Rng
from domain.game.state import GameState, Phase
from infra.db.state_codec import decode, encode
from tests.jsonable import to_jsonable
from tests.property.budget import count_game, examples, shards
from tests.property.harness import (
    DESIGN_IDS,
    Driver,
    Facts,
    GameSpec,
    canon,
    game_specs,
    random_text,
    scan,
    show,
)

PROBE_PERCENT = 30  # share of steps probed
RANDOM_COMMANDS = 12  # random commands tried per probed step
MALFORMED_COMMANDS = 2  # commands with a field of the wrong type, per probed step
LEGAL_SAMPLE = 2  # legal actions tried per seat and probed step
CODES = {"ILLEGAL_ACTION", "NOT_YOUR_TURN", "GAME_FINISHED", "BAD_INPUT", "NOT_FOUND"}
TRICK_COMMANDS = (PlayCard, Pass, DiscardAndPlay)
DECISION_COMMANDS = (
    PlaySecondCard,
    GiveCards,
    HungryDiscard,
    HungryTake,
    ChooseNeighbour,
    GiveCard,
    ReorderTop,
)
BAD_TEXTS = ("", " ", "\n\t ", "\u3000", "x" * (MAX_TEXT + 1), "é" * (MAX_TEXT + 1))


T = TypeVar("T")

# Cards that are never in a hand: house cards, prizes, an instance no deck has
NO_HAND_CARDS = tuple(map(Card, ("rat", "sassy-prize-1", "crazy-house", "crazy-7#99")))
# Ids of no card at all: a command cannot carry one but as a plain string (BAD_INPUT)
NOT_CARDS = ("", "crazy-0", "crazy-33", "x#1", "CRAZY-7", "crazy-7#0", "needy-prize-4")


def _pick(rng: Rng, items: Sequence[T]) -> T:
    return items[rng.below(len(items))]


class Fuzzer:
    """Random commands for a state: mostly near-misses of legal ones."""

    def __init__(self, rng: Rng) -> None:
        self.rng = rng
        self.sent = 100_000  # markers apart from the driver's

    def seat(self, state: GameState) -> int:
        r = self.rng.below(10)
        actor = to_act(state)
        if actor is not None and r < 5:
            return actor
        if r < 7:
            return state.rat
        return self.rng.below(state.n + 2) - 1  # -1 .. n: out of range at both ends

    def card(self, state: GameState, seat: int) -> Card:
        rng = self.rng
        hand = state.seats[seat].hand if 0 <= seat < state.n else []
        r = rng.below(12)
        if r < 5 and hand:
            return _pick(rng, hand)
        if r < 7:
            other = state.seats[rng.below(state.n)].hand
            if other:
                return _pick(rng, other)
        if r == 7 and state.rat_deck:
            return _pick(rng, state.rat_deck)
        if r == 8:
            piles = [c for s in state.seats for c in s.won] + state.discard
            if piles:
                return _pick(rng, piles)
        if r == 9:
            return Card(_pick(rng, DESIGN_IDS) + _pick(rng, ("", "#1", "#2")))
        if r == 10:
            return _pick(rng, NO_HAND_CARDS)
        return _pick(rng, DESIGN_IDS)

    def target(self, state: GameState, seat: int) -> int:
        r = self.rng.below(6)
        if r < 4 and 0 <= seat < state.n:
            return ((seat - 1) % state.n, (seat + 1) % state.n)[r % 2]
        return self.rng.below(state.n + 2) - 1

    def command(self, state: GameState, seat: int) -> Command:
        rng = self.rng
        kind = rng.below(14)
        if kind == 0:
            return PlayCard(self.card(state, seat))
        if kind == 1:
            return Pass()
        if kind == 2:
            a = self.card(state, seat)
            return DiscardAndPlay(a, a if rng.below(4) == 0 else self.card(state, seat))
        if kind == 3:
            return PlaySecondCard(self.card(state, seat))
        if kind == 4:
            gifts = tuple(
                Gift(self.target(state, seat), self.card(state, seat)) for _ in range(rng.below(4))
            )
            return GiveCards(gifts)
        if kind == 5:
            return HungryDiscard(self.card(state, seat))
        if kind == 6:
            if state.rat_deck and rng.below(2):
                return HungryTake(_pick(rng, state.rat_deck))
            return HungryTake(self.card(state, seat))
        if kind == 7:
            return ChooseNeighbour(self.target(state, seat))
        if kind == 8:
            return GiveCard(self.card(state, seat))
        if kind == 9:
            return self._reorder(state, seat)
        if kind in (10, 11):
            ids = [m.id for m in state.messages] + ["m0", "m999", ""]
            cls = DeliverMessage if kind == 10 else DeclineMessage
            return cls(_pick(rng, ids))
        to = self.target(state, seat) if rng.below(2) else rng.below(state.n + 2) - 1
        if rng.below(3) == 0:
            return SendMessage(to, _pick(rng, BAD_TEXTS))
        self.sent += 1
        return SendMessage(to, random_text(rng, self.sent))

    def malformed(self, state: GameState) -> Any:
        """A command with a field of the wrong type (or not a command at all)."""
        card = self.card(state, state.rat)
        plain = _pick(self.rng, [str(card), *NOT_CARDS])  # a string, not a Card
        options: list[Any] = [
            PlayCard(plain),  # type: ignore[arg-type]
            DiscardAndPlay(card, plain),  # type: ignore[arg-type]
            HungryTake(plain),  # type: ignore[arg-type]
            GiveCards((Gift(1, plain),)),  # type: ignore[arg-type]
            ReorderTop((plain,)),  # type: ignore[arg-type]
            PlayCard(7),  # type: ignore[arg-type]
            PlayCard(None),  # type: ignore[arg-type]
            PlayCard([card]),  # type: ignore[arg-type]
            PlaySecondCard(card.encode()),  # type: ignore[arg-type]
            DiscardAndPlay(card, 1),  # type: ignore[arg-type]
            ChooseNeighbour("1"),  # type: ignore[arg-type]
            ChooseNeighbour(True),
            ChooseNeighbour(1.0),  # type: ignore[arg-type]
            SendMessage("1", "hello"),  # type: ignore[arg-type]
            SendMessage(1, 5),  # type: ignore[arg-type]
            SendMessage(False, "hello"),
            GiveCards([Gift(1, card)]),  # type: ignore[arg-type]
            GiveCards(((1, card),)),  # type: ignore[arg-type]
            GiveCards((Gift("1", card),)),  # type: ignore[arg-type]
            ReorderTop([card]),  # type: ignore[arg-type]
            ReorderTop((card, 1)),  # type: ignore[arg-type]
            DeliverMessage(1),  # type: ignore[arg-type]
            HungryTake(None),  # type: ignore[arg-type]
            GiveCard(card.encode()),  # type: ignore[arg-type]
            object(),
            "PlayCard",
            {"kind": "Pass"},
        ]
        return options[self.rng.below(len(options))]

    def _reorder(self, state: GameState, seat: int) -> ReorderTop:
        rng = self.rng
        d = state.pending
        top = list(d.cards) if d is not None and d.cards else state.rat_deck[:3]
        orders = list(permutations(top))
        cards = list(orders[rng.below(len(orders))]) if orders else []
        r = rng.below(5)
        if r == 1 and cards:
            cards[rng.below(len(cards))] = self.card(state, seat)
        elif r == 2 and cards:
            cards.pop()
        elif r == 3 and cards:
            cards.append(cards[0])
        elif r == 4:
            cards = [self.card(state, seat) for _ in range(rng.below(4))]
        return ReorderTop(tuple(cards))


def accepted(state: GameState, seat: int, cmd: Command) -> bool:
    """The reference: may ``seat`` send ``cmd`` now?"""
    if not 0 <= seat < state.n or state.phase is Phase.FINISHED:
        return False
    if isinstance(cmd, SendMessage):  # R5.1, R5.5
        text_ok = 1 <= len(cmd.text) <= MAX_TEXT and bool(cmd.text.strip())
        return text_ok and cmd.to in message_targets(state, seat)
    return canon(cmd) in {canon(c) for c in legal_actions(state, seat)}


def expected_code(state: GameState, seat: int, cmd: Command) -> str | None:
    """The code a refusal must carry, where the API makes it clear."""
    if not 0 <= seat < state.n:
        return "BAD_INPUT"
    if state.phase is Phase.FINISHED:
        return "GAME_FINISHED"
    d = state.pending
    if isinstance(cmd, TRICK_COMMANDS) and seat != to_act(state) and (d is None or d.seat != seat):
        return "NOT_YOUR_TURN"
    if isinstance(cmd, DECISION_COMMANDS) and d is not None and d.seat != seat:
        return "NOT_YOUR_TURN"
    known_ids = {m.id for m in state.messages}
    if isinstance(cmd, DeliverMessage | DeclineMessage) and cmd.message_id not in known_ids:
        return "NOT_FOUND" if seat == state.rat else None
    return None


def probe(state: GameState, fuzz: Fuzzer) -> None:
    """Property 3 at one state (which it leaves unchanged)."""
    snapshot = encode(state)
    rng = fuzz.rng
    # every listed action applies (a sample, on copies)
    for seat in range(state.n):
        legal = legal_actions(state, seat)
        for _ in range(min(LEGAL_SAMPLE, len(legal))):
            cmd = legal[rng.below(len(legal))]
            copy = decode(snapshot)
            assert apply(copy, seat, cmd), f"{cmd} by seat {seat}"
            check(copy)
    # random commands: accepted iff legal, refusals change nothing: the state
    # equals a deep copy of itself, field by field, after each; at the end,
    # its ``repr`` (which tells a Card from a str, 1 from True) and its
    # ``encode`` too
    facts = Facts.of(state)
    before = deepcopy(state)
    for _ in range(RANDOM_COMMANDS):
        seat = fuzz.seat(state)
        cmd = fuzz.command(state, max(0, min(seat, state.n - 1)))
        if accepted(state, seat, cmd):
            copy = decode(snapshot)
            try:
                apply(copy, seat, cmd)
            except GameError as e:  # pragma: no cover - a failure report
                pytest.fail(f"legal {cmd} by seat {seat} refused: {e.code} {e.message}")
            check(copy)
            continue
        code = expected_code(state, seat, cmd)
        try:
            apply(state, seat, cmd)
        except GameError as e:
            assert e.code in CODES
            assert code is None or e.code == code, f"{cmd} by seat {seat}: {e.code}, not {code}"
            named, _ = scan(to_jsonable(cmd))
            known = facts.known_to(seat) if 0 <= seat < state.n else facts.public
            leaked, _ = scan(e.message)
            assert leaked <= known | named, f"refusal names {leaked}"
        else:
            pytest.fail(f"illegal {cmd} by seat {seat} accepted")
        assert state == before, f"refused {cmd} by seat {seat} changed the state"
    # malformed commands: BAD_INPUT, whatever the seat
    for _ in range(MALFORMED_COMMANDS):
        seat = fuzz.seat(state)
        bad = fuzz.malformed(state)
        with pytest.raises(GameError) as info:
            apply(state, seat, bad)
        assert info.value.code == "BAD_INPUT", f"{bad!r} by seat {seat}: {info.value.code}"
        assert state == before, f"refused {bad!r} by seat {seat} changed the state"
    assert repr(state) == repr(before)
    assert encode(state) == snapshot


def play_probed(spec: GameSpec) -> None:
    state = spec.new().state
    driver = Driver(spec)
    fuzz = Fuzzer(Rng(spec.driver_seed ^ 0x5EED))
    while (move := driver.next(state)) is not None:
        if fuzz.rng.below(100) < PROBE_PERCENT:
            probe(state, fuzz)
        apply(state, *move)
    # R9.3: a finished game accepts nothing
    snapshot = encode(state)
    for _ in range(RANDOM_COMMANDS):
        seat = fuzz.rng.below(state.n)
        cmd = fuzz.command(state, seat)
        with pytest.raises(GameError) as info:
            apply(state, seat, cmd)
        assert info.value.code == "GAME_FINISHED"
        assert not legal_actions(state, seat) and not message_targets(state, seat)
    assert encode(state) == snapshot
    count_game()


SHARDS = 2


@shards(SHARDS)
@settings(max_examples=examples(120, SHARDS))
@given(game_specs(chatter=(25, 50, 80)))
def test_commands_are_accepted_iff_legal(shard: int, spec: GameSpec) -> None:
    show(spec)
    play_probed(spec)
