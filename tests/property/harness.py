"""Shared machinery of the property tests.

- :class:`GameSpec` and :func:`game_specs`: a seeded game (3-8 seats, every
  format, every ``abilityTrigger``, refill on/off, a mix of RANDOM and GREEDY
  bots, messenger traffic) as a Hypothesis strategy.
- :class:`Driver`: picks each next command. The seat to act moves with its
  bot; while the message window is open (R5.1) random seats send messages
  with random text to random targets and the Rat delivers or declines
  (a per-trick budget keeps every game finite).
- :class:`Facts`: what is public in a state and what each seat may know
  (R11), the reference for the no-leak checks.
- :func:`scan`: the card ids and message markers inside any JSON-able value.

Every sent message text carries a unique marker ``§<k>§`` so that a leak of
its text can be found anywhere in a view or projection.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hypothesis import note
from hypothesis import strategies as st

from domain.bots.greedy import greedy_bot
from domain.bots.strategy import Bot, random_bot
from domain.game.cards import DESIGN_CARDS, Card, CardKind
from domain.game.cards import is_card as names_a_card
from domain.game.commands import (
    Command,
    DeclineMessage,
    DeliverMessage,
    DiscardAndPlay,
    GiveCards,
    PlayCard,
    PlaySecondCard,
    ReorderTop,
    SendMessage,
)
from domain.game.engine import to_act
from domain.game.legal import legal_actions
from domain.game.messaging import MAX_TEXT, message_targets
from domain.game.options import HAND_SIZE, AbilityTrigger, Format, GameOptions
from domain.game.rng import Rng
from domain.game.setup import Setup, new_game
from domain.game.state import DecisionKind, GameState, MessageStatus, Phase
from domain.game.views import player_view

# ---------------------------------------------------------------- games
DESIGN_IDS: tuple[Card, ...] = DESIGN_CARDS  # every numbered design, as a Singleton card
BOTS: dict[str, Bot] = {"random": random_bot, "greedy": greedy_bot}
MESSAGE_BUDGET = 8  # messenger commands the driver issues per trick at most


@dataclass(frozen=True)
class GameSpec:
    """Everything that determines one test game."""

    seats: int
    seed: int | str
    options: GameOptions
    rat: int | None
    bots: tuple[str, ...]
    chatter: int  # percent: chance of a messenger command at a step of an open window
    driver_seed: int
    collections: tuple[tuple[str, ...], ...] | None = None

    def new(self) -> Setup:
        return new_game(
            self.seats, self.seed, self.options, rat=self.rat, collections=self.collections
        )

    def source(self) -> str:
        """Python that rebuilds this spec (shown with a failing example)."""
        o = self.options
        return (
            f"GameSpec(seats={self.seats}, seed={self.seed!r}, options=GameOptions("
            f"Format.{o.format.name}, AbilityTrigger.{o.ability_trigger.name}, "
            f"{o.refill_hands}), rat={self.rat}, bots={self.bots!r}, chatter={self.chatter}, "
            f"driver_seed={self.driver_seed}, collections={self.collections!r})"
        )


def show(spec: GameSpec) -> None:
    """Print the spec with a failing example (Hypothesis shows it as ``spec=,``)."""
    note(f"game: {spec.source()}")


def build_collection(size: int, seed: int) -> tuple[str, ...]:
    """``size`` numbered designs (repeats allowed, as in a real collection)."""
    rng = Rng(seed)
    pool: Sequence[str] = DESIGN_IDS
    if rng.below(2):  # a narrow pool: many duplicate designs
        pool = [DESIGN_IDS[rng.below(len(DESIGN_IDS))] for _ in range(1 + rng.below(20))]
    return tuple(pool[rng.below(len(pool))] for _ in range(size))


@st.composite
def collections(draw: st.DrawFn, seats: int, enough: bool) -> tuple[tuple[str, ...], ...]:
    """Former Sealed collections (R3.3) totalling at least (``enough``) or
    fewer than (not ``enough``) 10 x seats designs (R3.4). Bot seats (size 0)
    bring none."""
    need = HAND_SIZE * seats
    if enough:
        sizes = draw(st.lists(st.integers(0, 70), min_size=seats, max_size=seats))
        short = need - sum(sizes)
        if short > 0:
            sizes[draw(st.integers(0, seats - 1))] += short + draw(st.integers(0, 30))
    else:
        total = draw(st.integers(0, need - 1))
        cuts = sorted(draw(st.lists(st.integers(0, total), min_size=seats - 1, max_size=seats - 1)))
        sizes = [b - a for a, b in zip([0, *cuts], [*cuts, total], strict=True)]
    seed = draw(st.integers(0, 2**32))
    return tuple(build_collection(size, seed + i) for i, size in enumerate(sizes))


@st.composite
def game_specs(
    draw: st.DrawFn,
    formats: Sequence[Format] = tuple(Format),
    chatter: Sequence[int] = (0, 25, 50, 80),
) -> GameSpec:
    seats = draw(st.sampled_from(range(3, 9)))
    fmt = draw(st.sampled_from(formats))
    options = GameOptions(
        format=fmt,
        ability_trigger=draw(st.sampled_from(AbilityTrigger)),
        refill_hands=draw(st.booleans()),
    )
    seed = draw(st.integers(0, 2**64 - 1) | st.text(max_size=6))
    rat = draw(st.none() | st.integers(0, seats - 1))
    bots = tuple(draw(st.lists(st.sampled_from(sorted(BOTS)), min_size=seats, max_size=seats)))
    cols = draw(collections(seats, enough=True)) if fmt is Format.FORMER_SEALED else None
    return GameSpec(
        seats=seats,
        seed=seed,
        options=options,
        rat=rat,
        bots=bots,
        chatter=draw(st.sampled_from(chatter)),
        driver_seed=draw(st.integers(0, 2**32)),
        collections=cols,
    )


# ---------------------------------------------------------------- messages
MARKER = re.compile(r"§(\d+)§")
_ALPHABET = "abcdefghijklmnopqrstuvwxyz ABCXYZ0123456789.,!?-#'\"\\/<>{}[]\n\té€😀中\x00"
_WORDS = ("crazy-7", "sassy-31#2", "needy-prize-1", "rat", "m1", "null", '{"card": 1}')


def marker(k: int) -> str:
    return f"§{k}§"


def random_text(rng: Rng, k: int) -> str:
    """A valid message text (R5.1: 1-280 characters) that carries marker ``k``."""
    tag = marker(k)
    room = MAX_TEXT - len(tag)
    roll = rng.below(10)
    if roll == 0:
        return "x" * room + tag  # exactly 280 characters
    parts: list[str] = []
    for _ in range(rng.below(6)):
        if rng.below(3) == 0:
            parts.append(_WORDS[rng.below(len(_WORDS))])
        else:
            parts.append("".join(_ALPHABET[rng.below(len(_ALPHABET))] for _ in range(rng.below(9))))
    return (" ".join(parts)[:room] + tag) if roll > 1 else tag


def text_marker(text: str) -> int | None:
    m = MARKER.search(text)
    return int(m.group(1)) if m else None


# ---------------------------------------------------------------- driver
class Driver:
    """Chooses each next ``(seat, command)`` of a game, deterministically."""

    def __init__(self, spec: GameSpec) -> None:
        self.spec = spec
        self.rng = Rng(spec.driver_seed)
        self.bots = [BOTS[b] for b in spec.bots]
        self._trick = -1
        self._budget = 0
        self.sent = 0

    def next(self, state: GameState) -> tuple[int, Command] | None:
        actor = to_act(state)
        if actor is None:
            return None
        if state.phase is Phase.LEAD and self.spec.chatter:
            assert state.trick is not None
            if state.trick.number != self._trick:
                self._trick, self._budget = state.trick.number, MESSAGE_BUDGET
            if self._budget > 0 and self.rng.below(100) < self.spec.chatter:
                move = self._messenger(state)
                if move is not None:
                    self._budget -= 1
                    return move
        legal = legal_actions(state, actor)
        return actor, self.bots[actor](player_view(state, actor), legal, self.rng)

    def _messenger(self, state: GameState) -> tuple[int, Command] | None:
        rat = state.rat
        verdicts = [
            c for c in legal_actions(state, rat) if isinstance(c, DeliverMessage | DeclineMessage)
        ]
        if verdicts and self.rng.below(5) < 2:
            return rat, verdicts[self.rng.below(len(verdicts))]
        senders = [s for s in range(state.n) if message_targets(state, s)]
        if not senders:
            return None
        seat = senders[self.rng.below(len(senders))]
        targets = message_targets(state, seat)
        self.sent += 1
        return seat, SendMessage(targets[self.rng.below(len(targets))], self.text())

    def text(self) -> str:
        return random_text(self.rng, self.sent)


# ---------------------------------------------------------------- commands
def canon(cmd: Command) -> Command:
    """Equivalent commands compare equal: Stinky gifts in any order (R7.2)."""
    if isinstance(cmd, GiveCards):
        return GiveCards(tuple(sorted(cmd.gifts, key=lambda g: (g.to, g.card))))
    return cmd


def command_cards(cmd: Command) -> list[Card]:
    """Every card id a command names."""
    out: list[Card] = [getattr(cmd, f) for f in ("card", "discard") if hasattr(cmd, f)]
    if isinstance(cmd, ReorderTop):
        out += cmd.cards
    if isinstance(cmd, GiveCards):
        out += [g.card for g in cmd.gifts]
    return out


def played_card(cmd: Command) -> Card | None:
    """The card a command puts into the trick, if any."""
    if isinstance(cmd, PlayCard | DiscardAndPlay | PlaySecondCard):
        return cmd.card
    return None


# ---------------------------------------------------------------- scanning
_HIDEABLE = frozenset({CardKind.NUMBERED, CardKind.PRIZE})


def is_card(s: str) -> bool:
    """A numbered card or a prize card: the ids R11 may hide. (Assignment
    cards and the Rat card only say who is which house, which is public.)"""
    return names_a_card(s) and Card(s).kind in _HIDEABLE


# A JSON string token that is exactly a card id. A message text always holds
# its marker, so it is never such a token, whatever card names it mentions.
_CARD_TOKEN = re.compile(r'"([a-z]+-(?:\d+|prize-\d+)(?:#\d+)?)"')


def scan(obj: Any) -> tuple[set[str], set[int]]:
    """The card ids and the message markers in a JSON-able value. The
    ``pack`` of a GameStarted projection (design ids the seat opened, R3.2)
    is left out: the caller checks it."""
    if isinstance(obj, dict) and "pack" in obj:
        obj = {k: v for k, v in obj.items() if k != "pack"}
    dump = json.dumps(obj, ensure_ascii=False)
    cards = {c for c in _CARD_TOKEN.findall(dump) if is_card(c)}
    marks = {int(m) for m in MARKER.findall(dump)} if "§" in dump else set()
    return cards, marks


# ---------------------------------------------------------------- facts
@dataclass(frozen=True)
class Facts:
    """What a state shows to everybody, and what each seat holds (R11)."""

    public: frozenset[Card]  # won piles, prize rows, discard, trick prize, face-up plays
    hands: tuple[frozenset[Card], ...]
    face_down: tuple[frozenset[Card], ...]  # each seat's own face-down plays
    trick_cards: frozenset[Card]  # every card in the trick, face down or not
    trick_number: int | None
    chooser: int | None  # the seat of a Curious / Hungry-take decision
    chooser_cards: frozenset[Card]  # what that decision shows its chooser
    readable: tuple[frozenset[int], ...]  # message markers each seat may read (R5.4)

    @classmethod
    def of(cls, state: GameState) -> Facts:
        public: set[Card] = set(state.discard)
        for s in state.seats:
            public.update(s.won)
            public.update(s.prizes)
        face_down: list[set[Card]] = [set() for _ in state.seats]
        trick_cards: set[Card] = set()
        t = state.trick
        if t is not None:
            public.add(t.prize)
            for p in t.plays:
                cards = {p.card} | ({p.second} if p.second else set())
                trick_cards |= cards
                (face_down[p.seat] if p.face_down else public).update(cards)
        chooser, shown = None, frozenset[Card]()
        d = state.pending
        if d is not None and d.kind is DecisionKind.CURIOUS_ORDER:
            chooser, shown = d.seat, frozenset(d.cards)
        elif d is not None and d.kind is DecisionKind.HUNGRY_TAKE:
            chooser, shown = d.seat, frozenset(state.rat_deck)
        readable: list[set[int]] = [set() for _ in state.seats]
        for m in state.messages:
            k = text_marker(m.text)
            if k is None:
                continue
            for seat in range(state.n):
                if seat in (m.sender, state.rat) or (
                    seat == m.recipient and m.status is MessageStatus.DELIVERED
                ):
                    readable[seat].add(k)
        return cls(
            public=frozenset(public),
            hands=tuple(frozenset(s.hand) for s in state.seats),
            face_down=tuple(frozenset(f) for f in face_down),
            trick_cards=frozenset(trick_cards),
            trick_number=None if t is None else t.number,
            chooser=chooser,
            chooser_cards=shown,
            readable=tuple(frozenset(r) for r in readable),
        )

    def known_to(self, seat: int) -> frozenset[Card]:
        """The cards ``seat`` may see in a view of this state."""
        own = self.public | self.hands[seat] | self.face_down[seat]
        return own | self.chooser_cards if self.chooser == seat else own


def step_allowed(
    before: Facts, after: Facts, cmd: Command
) -> tuple[frozenset[Card], list[frozenset[Card]]]:
    """The cards the events of one step may show: to everybody, and to each seat.

    Public: what was public before or is public after, and, when the step
    resolved the trick, every card of that trick (R7.3, R8.2: all plays and
    Crazy second cards are revealed; a second card then goes to the Rat Deck).
    A seat also sees its own hand before and after (cards it played, gave,
    received, drew or took), its own face-down plays, and what its Curious /
    Hungry decision shows it before or after.
    """
    public = before.public | after.public
    if after.trick_number != before.trick_number:
        card = played_card(cmd)
        public |= before.trick_cards | ({card} if card else set())
    per_seat = []
    for seat in range(len(after.hands)):
        own = public | before.hands[seat] | after.hands[seat]
        own |= before.face_down[seat] | after.face_down[seat]
        for f in (before, after):
            if f.chooser == seat:
                own |= f.chooser_cards
        per_seat.append(own)
    return public, per_seat
