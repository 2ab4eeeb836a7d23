"""Two worlds one observer cannot tell apart (R11 as non-interference).

World 1 is a seeded game played through the schema (``schema.execute`` /
``schema.subscribe`` over the fakes): random legal moves, messenger traffic,
and "probes", commands an observing seat sends naming a card not in its hand
(refused; their messages must not say where that card is). Every response an
observer gets is recorded as JSON bytes: the ``game`` query (table, viewer,
legal actions) after every step, the results of its own mutations and probes,
the ``gameEvents`` query and the ``gameEvents`` subscription from afterSeq 0,
through ``schema.subscribe`` (the WebSocket protocols) and through the HTTP
view's streams, Apollo's multipart protocol and GraphQL over SSE
(tests/api/http_view.py), which must also carry the same frames.

World 2 is the same game for one observer, re-dealt: a permutation sigma of the
card instances the observer is never entitled to see (tests/property/harness.py
``Facts``, written from R11, not from the views) is applied to the dealt
state, which is injected into the fake store right after the deal, and every
command of the script is replayed with its card ids mapped through sigma. sigma
exchanges whole identities (a Sealed instance keeps its ``#n`` id), never
positions, so whatever later draws by position (refills, Curious, Hungry)
commutes with it. Texts of messages the observer may never read (R5.4) are
replaced too. A non-leaking server gives the observer byte-identical
responses in both worlds.

Sigma must keep world 2 consistent with what the observer may infer from the
rules: a seat that did not follow suit holds no lead-suit card (R6.3, R7.7).
So sigma first permutes hidden cards within each house (follow rules look at
houses only; a hidden card's value matters only once played, and every
played card is revealed at resolution, R7.3, R8.2); then transpositions
across houses are added one by one, each kept only if the pure engine
accepts the whole mapped script.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
from collections.abc import AsyncGenerator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from api.graphql.types.actions import mutation_and_arguments
from domain.fairness import commitment, seal
from domain.game.cards import PRIZE_CARDS, Card
from domain.game.commands import Command, Gift, GiveCards, ReorderTop, SendMessage
from domain.game.engine import apply, to_act
from domain.game.errors import GameError
from domain.game.events import Event
from domain.game.legal import legal_actions
from domain.game.messaging import message_targets
from domain.game.options import AbilityTrigger, Format
from domain.game.rng import Rng
from domain.game.setup import _started, new_game
from domain.game.state import DecisionKind, GameState, Phase
from domain.game.turns import trick_started
from infra.db.state_codec import encode
from tests.api.conftest import Client
from tests.api.http_view import HTTP_TRANSPORTS, http_stream, next_result, view_of
from tests.api.support import EVENT, GAME, call, mutation_text
from tests.fakes import harness
from tests.property.harness import Facts, step_allowed

Observer = int | None
"""A seat, or None for a spectator (a signed-in player holding no seat)."""

Frames = list[tuple[str, bytes]]
"""What one observer got: a label (the same in both worlds) and JSON bytes."""

EVENTS_SUB = f"""subscription($id: ID!) {{
  gameEvents(gameId: $id, afterSeq: 0) {{ {EVENT} }} }}"""

EVENTS_LOG = f"""query($id: ID!, $after: Int!) {{
  gameEvents(gameId: $id, afterSeq: $after, first: 50) {{
    __typename ... on Refusal {{ code message }}
    ... on GameEventPage {{ hasMore lastSeq events {{ {EVENT} }} }} }} }}"""

ME = (
    "query { me { player { id name } collection { id gameId house commons { id } rares { id } } } }"
)

NOT_CARDS = ("crazy-99", "sassy-7#9", "needy-prize-4", "rat", "nothing")
"""Ids the probes name besides the game's cards: cards no seat holds in hand
(refused like any card not in hand) and ids of no card (refused as BAD_INPUT)."""

MESSAGE_BUDGET = 4  # messenger commands per trick at most
SUBSCRIPTION_DRAIN_EVERY = 9  # steps between reads of the live subscription


@dataclass(frozen=True)
class Scenario:
    """One seeded game and who watches it."""

    seats: int
    fmt: Format
    seed: str
    driver_seed: int
    trigger: AbilityTrigger = AbilityTrigger.LEAD_AND_RARE
    refill: bool = True
    max_steps: int | None = None  # None: to the end of the game
    chatter: int = 30  # percent: a messenger command at a step of an open window
    probe_percent: int = 25  # percent of steps at which an observing seat probes
    observers: tuple[Observer, ...] = (None, 0)
    rat_seat: int | None = None  # None: the seed chooses (R4.1)
    turn_seconds: int = 0  # a timed game: deadlines in every world's frames (0046)

    @property
    def name(self) -> str:
        cut = "end" if self.max_steps is None else f"{self.max_steps}steps"
        return f"{self.seats}seats-{self.fmt.name.lower()}-{self.seed}-{cut}"


@dataclass(frozen=True)
class Move:
    seat: int
    cmd: Command


@dataclass(frozen=True)
class Probe:
    """A command an observing seat sends that must be refused."""

    seat: int
    mutation: str
    args: dict[str, Any]


@dataclass
class Script:
    """World 1 as played: the dealt state, the moves, the probes after each
    step (index 0: right after the deal) and the state after each move."""

    initial: GameState
    moves: list[Move] = field(default_factory=list)
    probes: dict[int, list[Probe]] = field(default_factory=dict)
    states: list[GameState] = field(default_factory=list)


Sigma = Mapping[Card, Card]
"""A renaming of card instances."""


# ---------------------------------------------------------------- relabelling
def map_cards(cards: Sequence[Card], sigma: Sigma) -> list[Card]:
    return [sigma.get(c, c) for c in cards]


def relabel(state: GameState, sigma: Sigma) -> GameState:
    """A copy of ``state`` with every card instance renamed through ``sigma``."""
    s = state.clone()
    for seat in s.seats:
        seat.hand, seat.won, seat.prizes = (
            map_cards(seat.hand, sigma),
            map_cards(seat.won, sigma),
            map_cards(seat.prizes, sigma),
        )
    s.rat_deck = map_cards(s.rat_deck, sigma)
    s.prize_pool = map_cards(s.prize_pool, sigma)
    s.discard = map_cards(s.discard, sigma)
    if s.trick is not None:
        s.trick.prize = sigma.get(s.trick.prize, s.trick.prize)
        for p in s.trick.plays:
            p.card = sigma.get(p.card, p.card)
            p.second = None if p.second is None else sigma.get(p.second, p.second)
    if s.pending is not None:
        s.pending.cards = map_cards(s.pending.cards, sigma)
    return s


def map_command(cmd: Command, sigma: Sigma, text: str | None = None) -> Command:
    """``cmd`` with its card ids renamed (and, for a message, its text replaced)."""
    if isinstance(cmd, SendMessage):
        return cmd if text is None else SendMessage(cmd.to, text)
    if isinstance(cmd, GiveCards):
        return GiveCards(tuple(Gift(g.to, sigma.get(g.card, g.card)) for g in cmd.gifts))
    if isinstance(cmd, ReorderTop):
        return ReorderTop(tuple(map_cards(cmd.cards, sigma)))
    changes = {
        f: sigma.get(getattr(cmd, f), getattr(cmd, f))
        for f in ("card", "discard")
        if hasattr(cmd, f)
    }
    return dataclasses.replace(cmd, **changes) if changes else cmd


def game_cards(state: GameState) -> set[Card]:
    """The card instances sigma may rename: numbered cards and prize cards."""
    zones = [state.rat_deck, state.prize_pool, state.discard]
    zones += [s.hand for s in state.seats] + [s.won for s in state.seats]
    zones += [s.prizes for s in state.seats]
    out = {c for z in zones for c in z}
    if state.trick is not None:
        out.add(state.trick.prize)
        out |= {c for p in state.trick.plays for c in (p.card, p.second) if c}
    return out


# ---------------------------------------------------------------- entitlement
def entitled(script: Script, observer: Observer) -> tuple[frozenset[Card], frozenset[int]]:
    """Every card ``observer`` may see at some point of world 1, and the
    markers of every message text it may read (R11, R5.4)."""
    before = Facts.of(script.initial)
    cards = set(before.public if observer is None else before.known_to(observer))
    marks: set[int] = set()
    for move, state in zip(script.moves, script.states, strict=True):
        after = Facts.of(state)
        public, per_seat = step_allowed(before, after, move.cmd)
        cards |= public if observer is None else per_seat[observer]
        cards |= after.public if observer is None else after.known_to(observer)
        if observer is not None:
            marks |= before.readable[observer] | after.readable[observer]
        before = after
    return frozenset(cards), frozenset(marks)


def consistent(script: Script, sigma: Sigma) -> bool:
    """The pure engine accepts every mapped command of the script on the
    relabelled deal: world 2 agrees with all the rules let anyone infer."""
    state = relabel(script.initial, sigma)
    try:
        for m in script.moves:
            if to_act(state) is None:
                return False
            apply(state, m.seat, map_command(m.cmd, sigma))
    except GameError:
        return False
    return True


def _group(card: Card) -> str:
    """Hidden cards are first exchanged within a group: a house (numbered
    cards) or the prize cards (an unrevealed prize never leaves the pool)."""
    assert card.house is not None
    return "prize" if card in PRIZE_CARDS else card.house.value


def choose_sigma(
    script: Script, observer: Observer, seed: int, cross_tries: int = 8
) -> tuple[dict[Card, Card], int]:
    """A consistent sigma over the cards ``observer`` never may see: a cyclic
    shift within each group (no hidden card keeps its identity where the
    group has two or more), then cross-house transpositions that keep the
    script legal. Returns sigma and how many cross-house swaps it holds."""
    rng = Rng(seed)
    seen, _ = entitled(script, observer)
    hidden = sorted(game_cards(script.initial) - seen)
    groups: dict[str, list[Card]] = {}
    for c in hidden:
        groups.setdefault(_group(c), []).append(c)
    sigma: dict[Card, Card] = {}
    for members in groups.values():
        rng.shuffle(members)
        for i, c in enumerate(members):
            sigma[c] = members[(i + 1) % len(members)]
    assert consistent(script, sigma), "a within-house re-deal must always be consistent"
    numbered = [c for c in hidden if c.numbered]
    swaps = 0
    for _ in range(cross_tries if len(numbered) > 1 else 0):
        a, b = numbered[rng.below(len(numbered))], numbered[rng.below(len(numbered))]
        if sigma[a].house is sigma[b].house:
            continue
        trial = {**sigma, a: sigma[b], b: sigma[a]}
        if consistent(script, trial):
            sigma, swaps = trial, swaps + 1
    return {k: v for k, v in sigma.items() if k != v}, swaps


def other_texts(script: Script, observer: Observer) -> dict[int, str]:
    """World 2's text for every message ``observer`` may never read."""
    _, marks = entitled(script, observer)
    out: dict[int, str] = {}
    k = 0
    for m in script.moves:
        if isinstance(m.cmd, SendMessage):
            k += 1
            if k not in marks:
                out[k] = f"§{k}§ a whole other secret, {'z' * (k % 7 + 1)}"
    return out


# ---------------------------------------------------------------- driving
def _dump(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def world_one_text(k: int, rng: Rng) -> str:
    return f"§{k}§ meet me at trick {rng.below(20)}, bring {rng.below(1000)}"


class World:
    """One world on fresh fakes: the same players, ids and clock as any other."""

    def __init__(self, sc: Scenario, observers: Sequence[Observer]) -> None:
        self.sc = sc
        self.client = Client(harness())
        self.observers = list(observers)
        self.frames: dict[Observer, Frames] = {o: [] for o in observers}
        self.streams: dict[Observer, AsyncGenerator[Any, None]] = {}
        self.http_streams: dict[tuple[Observer, str], AsyncGenerator[Any, None]] = {}
        self.closing = contextlib.AsyncExitStack()
        # A schema of this world's own (the view's): shared frames are cached
        # per schema by (audience channel, seq), and both worlds' fake ids give
        # the same channels, so the module's schema would serve world 2 the
        # frames world 1 built.
        self.view = view_of(self.client.h)
        self.seen_seq: dict[Observer, int] = {}
        self.tokens: list[str] = []
        self.spectator = ""
        self.game_id = ""

    @property
    def store_state(self) -> GameState:
        state = self.client.h.store.games[self.game_id].state
        assert state is not None
        return state

    def token(self, o: Observer) -> str:
        return self.spectator if o is None else self.tokens[o]

    def record(self, o: Observer, label: str, value: Any) -> None:
        if o in self.frames:
            self.frames[o].append((label, _dump(value)))

    async def start(self) -> None:
        c = self.client
        self.tokens = [(await c.new_player(f"p{i}"))[0] for i in range(self.sc.seats)]
        self.spectator = (await c.new_player("watcher"))[0]
        game_input = {
            "seatCount": self.sc.seats,
            "seed": self.sc.seed,
            "practice": True,
            "format": self.sc.fmt.name,
            "abilityTrigger": self.sc.trigger.name,
            "refillHands": self.sc.refill,
            "ratSeat": self.sc.rat_seat,
            "turnSeconds": self.sc.turn_seconds,
            "bankSeconds": 60 if self.sc.turn_seconds else 0,
        }
        r = await call(c, self.tokens[0], "createGame", input=game_input)
        self.record(0, "createGame", r)
        self.game_id = r["gameId"]
        for seat, t in enumerate(self.tokens[1:], start=1):
            self.record(seat, "joinGame", await call(c, t, "joinGame", gameId=self.game_id))
        r = await call(c, self.tokens[0], "startGame", gameId=self.game_id)
        self.record(0, "startGame", r)
        assert r["__typename"] == "GameChange", r

    def inject(self, sigma: Sigma) -> None:
        """Test set-up: the sigma re-deal replaces the dealt state and the deal's
        events in the fake store (whole events, rebuilt by the engine)."""
        store = self.client.h.store
        rec = store.games[self.game_id]
        assert rec.state is not None
        redo = new_game(rec.seat_count, rec.seed, rec.options, rec.rat_choice, None)
        assert encode(redo.state) == encode(rec.state), "the stored deal is the seed's"
        state = relabel(rec.state, sigma)
        assert (encode(state) != encode(rec.state)) == bool(sigma), "sigma re-deals"
        rec.state = state
        started = seal([_started(state, redo.packs)], commitment(rec.seed, rec.salt), rec.practice)[
            0
        ]  # the commitment to the seed, as the server's start made it
        fresh: dict[str, Event] = {"GameStarted": started, "TrickStarted": trick_started(state)}
        for key, e in list(store.events.items()):
            if key[0] == self.game_id and e.type in fresh:
                store.events[key] = dataclasses.replace(e, event=fresh[e.type])

    async def subscribe_all(self) -> None:
        view = self.view
        for o in self.observers:
            context = self.client.context(self.token(o), websocket=True)
            stream: Any = await view.schema.subscribe(
                EVENTS_SUB, variable_values={"id": self.game_id}, context_value=context
            )
            assert not hasattr(stream, "errors"), stream
            self.streams[o] = stream
            for transport in HTTP_TRANSPORTS:
                self.http_streams[o, transport] = await self.closing.enter_async_context(
                    http_stream(
                        view,
                        transport,
                        EVENTS_SUB,
                        {"id": self.game_id},
                        f"Bearer {self.token(o)}",
                    )
                )
            self.seen_seq[o] = 0
            await self.drain(o, upto=1)  # subscribed now: later events arrive live

    async def drain(self, o: Observer, upto: int | None = None) -> None:
        last = self.client.h.store.games[self.game_id].last_seq if upto is None else upto
        stream = self.streams[o]
        while self.seen_seq[o] < last:
            result = await asyncio.wait_for(stream.__anext__(), 5)
            assert result.errors is None, result.errors
            frame = result.data["gameEvents"]
            seq = frame["seq"]
            assert seq == self.seen_seq[o] + 1, "no gap, no duplicate"
            self.seen_seq[o] = seq
            self.record(o, f"subscription seq {seq}", result.data)
            for transport in HTTP_TRANSPORTS:
                got = await next_result(self.http_streams[o, transport], 5)
                assert got is not None and not got.get("errors"), got
                assert got["data"]["gameEvents"]["seq"] == seq, (transport, got)
                # The same frame as the WebSocket's, recorded as its own response.
                assert got["data"] == result.data, (transport, got, result.data)
                self.record(o, f"{transport} seq {seq}", got["data"])

    async def look(self, label: str) -> None:
        for o in self.observers:
            data = await self.client.run(GAME, self.token(o), id=self.game_id)
            self.record(o, f"{label} game", data)

    async def send(self, seat: int, cmd: Command, label: str) -> None:
        name, args = mutation_and_arguments(cmd)
        r = await self.client.run(
            mutation_text(name, ["gameId", *args]), self.tokens[seat], gameId=self.game_id, **args
        )
        assert r["r"]["__typename"] == "GameChange", (label, cmd, r)
        self.record(seat, f"{label} {name}", r)

    async def probe(self, p: Probe, label: str) -> None:
        r = await self.client.run(
            mutation_text(p.mutation, ["gameId", *p.args]),
            self.tokens[p.seat],
            gameId=self.game_id,
            **p.args,
        )
        assert r["r"]["__typename"] == "Refusal", ("a probe was accepted", p, r)
        self.record(p.seat, f"{label} probe {p.mutation}", r)

    async def finish(self) -> None:
        for o in self.observers:
            after, page = 0, 0
            while True:
                data = await self.client.run(
                    EVENTS_LOG, self.token(o), id=self.game_id, after=after
                )
                self.record(o, f"events page {page}", data)
                log = data["gameEvents"]
                assert log["__typename"] == "GameEventPage", log
                after, page = log["lastSeq"], page + 1
                if not log["hasMore"]:
                    break
            self.record(o, "me", await self.client.run(ME, self.token(o)))
            await self.drain(o)
            await self.streams[o].aclose()
        await self.closing.aclose()


# ---------------------------------------------------------------- choosing
def _probe(state: GameState, seat: int, rng: Rng) -> Probe:
    """A command naming cards ``seat`` does not hold (nor may take or reorder
    now): refused whatever they are, so its refusal may not depend on them."""
    hand = set(state.seats[seat].hand)
    d = state.pending
    barred = set(hand)
    if d is not None and d.seat == seat and d.kind is DecisionKind.HUNGRY_TAKE:
        barred |= set(state.rat_deck)  # it sees the deck: taking one would be legal
    pool = sorted(game_cards(state) - barred) + list(NOT_CARDS)

    def pick() -> str:
        return pool[rng.below(len(pool))]

    roll = rng.below(8)
    if to_act(state) == seat and rng.below(4):  # mostly the shape the seat may send now
        roll = 0 if d is None else _SHAPE_OF[d.kind]
    if roll < 3:
        return Probe(seat, "playCard", {"card": pick()})
    if roll == 3:
        return Probe(seat, "discardAndPlay", {"discard": pick(), "card": pick()})
    if roll == 4:
        lo, hi = sorted(state.neighbours(seat))
        gifts = [{"to": lo, "card": pick()}, {"to": hi, "card": pick()}]
        return Probe(
            seat, "resolveDecision", {"decision": {"kind": "STINKY_GIFTS", "gifts": gifts}}
        )
    if roll == 5:
        cards = [pick(), pick(), pick()]
        if d is not None and d.seat == seat and sorted(cards) == sorted(d.cards):
            cards[0] = NOT_CARDS[0]
        return Probe(
            seat, "resolveDecision", {"decision": {"kind": "CURIOUS_ORDER", "cards": cards}}
        )
    kinds = (
        DecisionKind.CRAZY_SECOND_CARD,
        DecisionKind.HUNGRY_DISCARD,
        DecisionKind.HUNGRY_TAKE,
        DecisionKind.NEEDY_GIFT,
    )
    own = roll == 6 and d is not None and d.seat == seat and d.kind in kinds
    kind = d.kind if own and d is not None else kinds[rng.below(len(kinds))]
    return Probe(seat, "resolveDecision", {"decision": {"kind": kind.name, "card": pick()}})


_SHAPE_OF = {
    DecisionKind.STINKY_GIFTS: 4,
    DecisionKind.CURIOUS_ORDER: 5,
    DecisionKind.CRAZY_SECOND_CARD: 6,
    DecisionKind.HUNGRY_DISCARD: 6,
    DecisionKind.HUNGRY_TAKE: 6,
    DecisionKind.NEEDY_GIFT: 6,
    DecisionKind.NEEDY_NEIGHBOUR: 6,
}
"""The probe shape (see :func:`_probe`) that answers a pending decision."""


class Chooser:
    """World 1's moves: random legal commands, and messenger traffic while the
    window is open (bounded per trick, so every game ends)."""

    def __init__(self, sc: Scenario) -> None:
        self.sc = sc
        self.rng = Rng(sc.driver_seed)
        self.trick = -1
        self.budget = 0
        self.sent = 0

    def next(self, state: GameState) -> Move | None:
        actor = to_act(state)
        if actor is None:
            return None
        if state.phase is Phase.LEAD and state.trick is not None:
            if state.trick.number != self.trick:
                self.trick, self.budget = state.trick.number, MESSAGE_BUDGET
            if self.budget > 0 and self.rng.below(100) < self.sc.chatter:
                senders = [s for s in range(state.n) if message_targets(state, s)]
                if senders:
                    self.budget -= 1
                    seat = senders[self.rng.below(len(senders))]
                    targets = message_targets(state, seat)
                    self.sent += 1
                    to = targets[self.rng.below(len(targets))]
                    return Move(seat, SendMessage(to, world_one_text(self.sent, self.rng)))
        legal = legal_actions(state, actor)
        return Move(actor, legal[self.rng.below(len(legal))])

    def probes(self, state: GameState, observers: Sequence[Observer]) -> list[Probe]:
        out = []
        for o in observers:
            chance = 60 if o == to_act(state) else self.sc.probe_percent
            if o is not None and self.rng.below(100) < chance:
                out.append(_probe(state, o, self.rng))
        return out


async def play_world_one(sc: Scenario) -> tuple[Script, dict[Observer, Frames]]:
    """World 1, watched by every observer of the scenario."""
    w = World(sc, sc.observers)
    await w.start()
    script = Script(initial=w.store_state.clone())
    await w.subscribe_all()
    chooser = Chooser(sc)
    await w.look("dealt")
    step = 0
    while sc.max_steps is None or step < sc.max_steps:
        probes = chooser.probes(w.store_state, sc.observers)
        script.probes[step] = probes
        for p in probes:
            await w.probe(p, f"step {step}")
        move = chooser.next(w.store_state)
        if move is None:
            break
        step += 1
        script.moves.append(move)
        await w.send(move.seat, move.cmd, f"step {step}")
        script.states.append(w.store_state.clone())
        await w.look(f"step {step}")
        if step % SUBSCRIPTION_DRAIN_EVERY == 0:
            for o in sc.observers:
                await w.drain(o)
    await w.finish()
    return script, w.frames


async def play_world_two(
    sc: Scenario,
    script: Script,
    observer: Observer,
    sigma: Sigma,
    texts: Mapping[int, str],
    bystanders: Sequence[Observer] = (),
) -> dict[Observer, Frames]:
    """World 2 for ``observer``: the sigma re-deal, the script mapped through
    sigma. ``bystanders`` are recorded too (their own probes are not sent)."""
    w = World(sc, [observer, *bystanders])
    await w.start()
    w.inject(sigma)
    await w.subscribe_all()
    await w.look("dealt")
    k = 0
    for step, move in enumerate(script.moves):
        for p in script.probes.get(step, []):
            if p.seat == observer:
                await w.probe(p, f"step {step}")
        text = None
        if isinstance(move.cmd, SendMessage):
            k += 1
            text = texts.get(k)
        cmd = map_command(move.cmd, sigma, text)
        if move.seat == observer:
            assert cmd == move.cmd, "sigma renames nothing the observer itself names"
        await w.send(move.seat, cmd, f"step {step + 1}")
        await w.look(f"step {step + 1}")
        if (step + 1) % SUBSCRIPTION_DRAIN_EVERY == 0:
            for o in w.observers:
                await w.drain(o)
    for p in script.probes.get(len(script.moves), []):
        if p.seat == observer:
            await w.probe(p, f"step {len(script.moves)}")
    await w.finish()
    return w.frames


def first_difference(one: Frames, two: Frames) -> str | None:
    """Where two recordings part, or None when they are byte-identical."""
    for i, (a, b) in enumerate(zip(one, two, strict=False)):
        if a != b:
            return f"response {i} ({a[0]!r} / {b[0]!r}) differs:\n{a[1]!r}\n{b[1]!r}"
    if len(one) != len(two):
        return f"{len(one)} responses in world 1, {len(two)} in world 2"
    return None
