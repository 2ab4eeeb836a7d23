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

Clocks (docs/decisions/0046) and presence (0047): in a scenario with a
:class:`Plan`, a seat's player stops answering (the harness advances the fake
clock past the deadline and runs the deadline sweep: ``TurnTimedOut`` and the
GREEDY fallback; ``timeoutsToTakeover`` in a row, ``SeatTakenOver``, and the
bot plays the seat, driven inline by the fake scheduler's ``drain()`` until
a person must act), comes back (``reclaimSeat``) or leaves the running game
(``leaveGame``); a player nobody observes closes its app meanwhile, and the
observers' look includes ``Table.seats[].connected``. A fallback or bot move
is chosen from its seat's hand: for another seat than the observer's that
choice is part of the hidden world, so world 2's bot plays world 1's moves
through sigma (:class:`ScriptedBots`); the observer's own seat keeps the real
strategy, whose choice may depend on nothing it cannot see.

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
from collections import deque
from collections.abc import AsyncGenerator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import pytest

import domain.services.bots
import domain.services.timeouts
from api.graphql.types.actions import mutation_and_arguments
from domain.bots.strategy import Bot, Strategy, bot_for
from domain.bots.thinking import ThinkJob, think
from domain.errors import DomainError
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
from domain.game.views import PlayerView
from domain.log import SeatCommand
from domain.records import GameRecord
from domain.services import webhooks
from domain.services.clocked import clock_of
from domain.services.seat_presence import review
from domain.services.timeouts import sweep_deadlines
from domain.webhooks import KINDS
from infra.db.state_codec import encode
from infra.presence.memory import InProcessPresence
from tests.api.conftest import Client
from tests.api.http_view import HTTP_TRANSPORTS, http_stream, next_result, view_of
from tests.api.support import EVENT, GAME, GAME_FIELDS, call, mutation_text
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
    "query { me { player { id name } collection(first: 100) { totalCount"
    " edges { node { id gameId house commons { id } rares { id } } } }"
    " notifications(first: 100) { hasMore lastSeq notifications { seq at readAt gameId"
    " notice { __typename ... on YourTurn { seat deadline } ... on YourGameStarted { seat }"
    " ... on YourGameEnded { seat score place won } ... on YourSeatTakenOver { seat }"
    " ... on YourRematch { newGameId } ... on YourInvitation { hostId } } } } } }"
)

NOT_CARDS = ("crazy-99", "sassy-7#9", "needy-prize-4", "rat", "nothing")
"""Ids the probes name besides the game's cards: cards no seat holds in hand
(refused like any card not in hand) and ids of no card (refused as BAD_INPUT)."""

CONNECTED = "presence: table { seats { seat connected } }"
GAME_AND_PRESENCE = (
    "query($id: ID!) { game(id: $id) { __typename ... on Refusal { code message } "
    f"... on Game {{ {GAME_FIELDS} {CONNECTED} }} }} }}"
)
PRESENCE = f"query($id: ID!) {{ game(id: $id) {{ ... on Game {{ {CONNECTED} }} }} }}"
"""The observers' look at the game, with presence: each reading of
``connected`` reads the clock once (the fake clock's readings show in every
time), so a world that records fewer observers still reads it for the
others (:data:`PRESENCE`)."""

MESSAGE_BUDGET = 4  # messenger commands per trick at most
SUBSCRIPTION_DRAIN_EVERY = 9  # steps between reads of the live subscription
PLAN_STEPS = 40  # steps a game may run past max_steps until its plan is done

STALL, RECLAIM, LEAVE = "stall", "reclaim", "leave"


@dataclass(frozen=True)
class Plan:
    """What one seat's player does to the clocks (docs/decisions/0046), from
    step ``step`` on. ``STALL``: it lets its next ``count`` deadlines pass
    (``timeoutsToTakeover`` in a row: a bot takes the seat over); a player
    who is not an observer also closes its app then (0047). ``RECLAIM``: it
    takes its seat back once a bot plays it (reopening its app first).
    ``LEAVE``: it leaves the running game (a bot plays the seat for good)."""

    step: int
    seat: int
    act: str
    count: int = 1


@dataclass(frozen=True)
class Scenario:
    """One seeded game and who watches it."""

    seats: int
    fmt: Format
    seed: str
    driver_seed: int
    trigger: AbilityTrigger = AbilityTrigger.LEAD_AND_RARE
    refill: bool = True
    max_steps: int | None = None  # None: to the end of the game (a plan may add steps)
    chatter: int = 30  # percent: a messenger command at a step of an open window
    probe_percent: int = 25  # percent of steps at which an observing seat probes
    observers: tuple[Observer, ...] = (None, 0)
    rat_seat: int | None = None  # None: the seed chooses (R4.1)
    turn_seconds: int = 0  # a timed game: deadlines in every world's frames (0046)
    plan: tuple[Plan, ...] = ()  # timeouts, takeovers, reclaims, leaves (needs turn_seconds)
    takeover_after: int = 2  # timeoutsToTakeover
    presence: bool = False  # seat presence tracked; every observer reads it each step

    @property
    def name(self) -> str:
        cut = "end" if self.max_steps is None else f"{self.max_steps}steps"
        return f"{self.seats}seats-{self.fmt.name.lower()}-{self.seed}-{cut}"

    @property
    def bank_seconds(self) -> int:
        return 60 if self.turn_seconds else 0

    @property
    def apps(self) -> list[int]:
        """The seats whose player keeps an app open (a subscription nobody
        records) until it stalls: stalling players that are not observers."""
        if not self.presence:
            return []
        return sorted({p.seat for p in self.plan if p.act == STALL} - set(self.observers))


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


MOVE, TIMEOUT, AWAY, BACK = "move", "timeout", "away", "back"
RECLAIM_SEAT, LEAVE_GAME = "reclaimSeat", "leaveGame"


@dataclass(frozen=True)
class Step:
    """One thing world 1 did, each followed by a look: ``MOVE`` (the seat's
    command ``cmd``), ``TIMEOUT`` (the seat's deadline passed and the sweep
    fired it), ``RECLAIM_SEAT`` / ``LEAVE_GAME`` (the player's mutation),
    ``AWAY`` / ``BACK`` (the player's app closes / opens its subscription).
    ``moves``: the engine moves it made (its own, the fallback, then the
    bots' until a person must act)."""

    kind: str
    seat: int
    cmd: Command | None = None
    moves: int = 0


@dataclass
class Script:
    """World 1 as played: the dealt state, its steps, every engine move (the
    players', the fallbacks' and the bots', in order), the probes before each
    step (index 0: right after the deal), the state after each move and
    the whole log."""

    initial: GameState
    steps: list[Step] = field(default_factory=list)
    moves: list[Move] = field(default_factory=list)
    probes: dict[int, list[Probe]] = field(default_factory=dict)
    states: list[GameState] = field(default_factory=list)
    log: list[Event] = field(default_factory=list)  # every event world 1 logged

    def record(self, made: Sequence[Move]) -> None:
        """Add the moves of a step and the state after each (the pure engine)."""
        for m in made:
            state = (self.states[-1] if self.states else self.initial).clone()
            apply(state, m.seat, m.cmd)
            self.moves.append(m)
            self.states.append(state)


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
    """One world on fresh fakes: the same players, ids and clock as any other.

    ``recorded``: the observers whose responses are kept. ``present``, with
    presence tracked: the callers subscribed to the game, the same in both
    worlds (``connected`` and the fake clock's readings count them): world 2
    records one observer, the others attend unread."""

    def __init__(
        self, sc: Scenario, recorded: Sequence[Observer], present: Sequence[Observer] = ()
    ) -> None:
        self.sc = sc
        h = harness()
        if sc.presence:
            h.deps = dataclasses.replace(h.deps, presence=InProcessPresence())
        self.client = Client(h)
        self.present = list(dict.fromkeys([*present, *recorded] if sc.presence else recorded))
        self.frames: dict[Observer, Frames] = {o: [] for o in recorded}
        self.streams: dict[Observer, AsyncGenerator[Any, None]] = {}
        self.http_streams: dict[tuple[Observer, str], AsyncGenerator[Any, None]] = {}
        self.apps: dict[int, AsyncGenerator[Any, None]] = {}
        self.unread: list[AsyncGenerator[Any, None]] = []
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
    def game(self) -> GameRecord:
        return self.client.h.store.games[self.game_id]

    @property
    def store_state(self) -> GameState:
        state = self.game.state
        assert state is not None
        return state

    @property
    def last_seq(self) -> int:
        return self.game.last_seq

    def token(self, o: Observer) -> str:
        return self.spectator if o is None else self.tokens[o]

    def record(self, o: Observer, label: str, value: Any) -> None:
        if o in self.frames:
            self.frames[o].append((label, _dump(value)))

    def webhook_bodies(self, player_id: str) -> list[str]:
        """The bodies posted to the app's backend for the player (issue #25),
        in the player's seq order."""
        mine = [m for m in self.client.h.store.messages.values() if m.player_id == player_id]
        return [m.payload for m in sorted(mine, key=lambda m: m.seq)]

    async def start(self) -> None:
        c = self.client
        # the app's backend takes every kind of notification (issue #25)
        await webhooks.create_endpoint(c.h.deps, "https://hooks.example.com/", sorted(KINDS), "")
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
            "bankSeconds": self.sc.bank_seconds,
            "timeoutsToTakeover": self.sc.takeover_after,
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

    async def _subscribe(self, o: Observer) -> AsyncGenerator[Any, None]:
        """A ``gameEvents`` subscription, live once its first frame is read."""
        context = self.client.context(self.token(o), websocket=True)
        stream: Any = await self.view.schema.subscribe(
            EVENTS_SUB, variable_values={"id": self.game_id}, context_value=context
        )
        assert not hasattr(stream, "errors"), stream
        return stream  # type: ignore[no-any-return]

    async def subscribe_all(self) -> None:
        for o in self.present:
            if o not in self.frames:
                # Attending as in the world that records it (0047: a
                # subscription per transport), unread: presence and the
                # clock see it, nothing computes its frames.
                self.unread += [await self._live(o) for _ in range(1 + len(HTTP_TRANSPORTS))]
                continue
            self.streams[o] = await self._subscribe(o)
            for transport in HTTP_TRANSPORTS:
                self.http_streams[o, transport] = await self.closing.enter_async_context(
                    http_stream(
                        self.view,
                        transport,
                        EVENTS_SUB,
                        {"id": self.game_id},
                        f"Bearer {self.token(o)}",
                    )
                )
            self.seen_seq[o] = 0
            await self.drain(o, upto=1)  # subscribed now: later events arrive live
        for seat in self.sc.apps:
            await self.open_app(seat)

    async def _live(self, o: Observer) -> AsyncGenerator[Any, None]:
        """A subscription that attends the game (its first frame read), unread."""
        stream = await self._subscribe(o)
        await asyncio.wait_for(stream.__anext__(), 5)
        return stream

    async def open_app(self, seat: int) -> None:
        """The seat's player opens its app: a live subscription (0047)."""
        self.apps[seat] = await self._live(seat)

    async def close_app(self, seat: int) -> None:
        await self.apps.pop(seat).aclose()

    async def drain(self, o: Observer, upto: int | None = None) -> None:
        last = self.last_seq if upto is None else upto
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

    async def drain_recorded(self) -> None:
        for o in self.frames:
            await self.drain(o)

    async def look(self, label: str) -> None:
        """Each observer reads the game (with presence: ``connected`` too, and
        every present caller reads that, so both worlds read the clock alike)."""
        for o in self.present:
            if o in self.frames:
                query = GAME_AND_PRESENCE if self.sc.presence else GAME
                data = await self.client.run(query, self.token(o), id=self.game_id)
                self.record(o, f"{label} game", data)
            elif self.sc.presence:
                await self.client.run(PRESENCE, self.token(o), id=self.game_id)

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

    async def time_out(self) -> None:
        """Time passes beyond any deadline (the turn time and a whole bank),
        the deadline sweep runs, then the presence keeper's review."""
        passed = self.sc.turn_seconds + self.sc.bank_seconds + 1
        self.client.h.clock.advance(timedelta(seconds=passed))
        await sweep_deadlines(self.client.h.deps)
        await review(self.client.h.deps, self.game_id)

    async def take(self, step: Step, cmd: Command | None, label: str) -> list[Move]:
        """Do ``step`` (``cmd``: the command of a ``MOVE``), then let the bots
        move until a person must act (the fake scheduler, driven inline);
        the engine moves made, read from the causes in the log."""
        seq = self.last_seq
        if step.kind == MOVE:
            assert cmd is not None
            await self.send(step.seat, cmd, label)
        elif step.kind == TIMEOUT:
            await self.time_out()
        elif step.kind in (RECLAIM_SEAT, LEAVE_GAME):
            r = await call(self.client, self.tokens[step.seat], step.kind, gameId=self.game_id)
            assert r["__typename"] == "GameChange", (label, step, r)
            self.record(step.seat, f"{label} {step.kind}", r)
        elif step.kind == AWAY:
            await self.close_app(step.seat)
        else:
            assert step.kind == BACK, step
            await self.open_app(step.seat)
        await self.client.h.drain()
        return [
            Move(e.cause.seat, e.cause.command)
            for e in self.client.h.store.log(self.game_id)
            if e.seq > seq and isinstance(e.cause, SeatCommand)
        ]

    async def finish(self) -> None:
        for o in self.frames:
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
            me = await self.client.run(ME, self.token(o))
            self.record(o, "me", me)
            self.record(o, "webhooks", self.webhook_bodies(me["me"]["player"]["id"]))
            await self.drain(o)
        for stream in [*self.streams.values(), *self.unread, *self.apps.values()]:
            await stream.aclose()
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
    """World 1's steps: random legal commands, messenger traffic while the
    window is open (bounded per trick, so every game ends), and the
    scenario's :class:`Plan`: stalling players' deadlines let pass, seats
    reclaimed, games left."""

    def __init__(self, sc: Scenario) -> None:
        self.sc = sc
        self.rng = Rng(sc.driver_seed)
        self.trick = -1
        self.budget = 0
        self.sent = 0
        self.plan = list(sc.plan)
        self.stalling: dict[int, int] = {}  # seat -> deadlines it still lets pass
        self.away: set[int] = set()  # players whose app is closed

    @property
    def planning(self) -> bool:
        """Whether some of the plan is still to happen."""
        return bool(self.plan) or any(self.stalling.values())

    def _planned(self, game: GameRecord, step: int) -> Step | None:
        """The plan's next step now, if any."""
        for p in list(self.plan):
            if p.step > step:
                continue
            occupant = game.seats[p.seat]
            assert occupant is not None
            if p.act == STALL:
                self.plan.remove(p)
                self.stalling[p.seat] = p.count
                if p.seat in self.sc.apps:
                    self.away.add(p.seat)
                    return Step(AWAY, p.seat)
            elif p.act == LEAVE:
                self.plan.remove(p)
                return Step(LEAVE_GAME, p.seat)
            elif occupant.is_bot and p.seat not in clock_of(game).left:
                if p.seat in self.away:
                    self.away.remove(p.seat)
                    return Step(BACK, p.seat)
                self.plan.remove(p)
                self.stalling.pop(p.seat, None)
                return Step(RECLAIM_SEAT, p.seat)
        return None

    def next(self, game: GameRecord, step: int) -> Step | None:
        state = game.state
        assert state is not None
        actor = to_act(state)
        if actor is None:
            return None
        planned = self._planned(game, step)
        if planned is not None:
            return planned
        if self.stalling.get(actor, 0) > 0:  # a person must act (the bots have moved)
            self.stalling[actor] -= 1
            return Step(TIMEOUT, actor)
        if state.phase is Phase.LEAD and state.trick is not None:
            if state.trick.number != self.trick:
                self.trick, self.budget = state.trick.number, MESSAGE_BUDGET
            if self.budget > 0 and self.rng.below(100) < self.sc.chatter:
                senders = [
                    s
                    for s in range(state.n)
                    if message_targets(state, s) and self._answers(game, s)
                ]
                if senders:
                    self.budget -= 1
                    seat = senders[self.rng.below(len(senders))]
                    targets = message_targets(state, seat)
                    self.sent += 1
                    to = targets[self.rng.below(len(targets))]
                    cmd: Command = SendMessage(to, world_one_text(self.sent, self.rng))
                    return Step(MOVE, seat, cmd)
        legal = legal_actions(state, actor)
        return Step(MOVE, actor, legal[self.rng.below(len(legal))])

    def _answers(self, game: GameRecord, seat: int) -> bool:
        """Whether the seat's player plays now: no bot plays it, and it does
        not stall."""
        occupant = game.seats[seat]
        return occupant is not None and not occupant.is_bot and not self.stalling.get(seat, 0)

    def probes(self, state: GameState, observers: Sequence[Observer]) -> list[Probe]:
        out = []
        for o in observers:
            chance = 60 if o == to_act(state) else self.sc.probe_percent
            if o is not None and self.rng.below(100) < chance:
                out.append(_probe(state, o, self.rng))
        return out


class Diverged(Exception):
    """World 2's server moved otherwise than world 1's script."""


class ScriptedBots:
    """World 2's fallback and takeover bot (``bot_for``, docs/decisions/0046).

    Another seat's fallback or bot move is chosen from that seat's hand,
    which sigma renamed: world 2 plays world 1's move through sigma
    (``expected``, in order), as its own consistent hidden world. The
    observer's own seat keeps the real strategy: its view is the same in
    both worlds, so its choice must be too."""

    def __init__(self, observer: Observer) -> None:
        self.observer = observer
        self.expected: deque[Move] = deque()

    def bot_for(self, strategy: Strategy) -> Bot:
        real = bot_for(strategy)

        def bot(view: PlayerView, legal: Sequence[Command], rng: Rng) -> Command:
            if view.seat == self.observer:
                return real(view, legal, rng)
            if not self.expected or self.expected[0].seat != view.seat:
                raise Diverged(f"seat {view.seat} moves, world 1 expected {list(self.expected)}")
            return self.expected.popleft().cmd

        return bot

    def think(self, job: ThinkJob) -> Command:
        """EXPERT's planned move (domain/services/bots.py): the same rule."""
        if job.view.seat == self.observer:
            return think(job)
        if not self.expected or self.expected[0].seat != job.view.seat:
            raise Diverged(f"seat {job.view.seat} moves, world 1 expected {list(self.expected)}")
        return self.expected.popleft().cmd

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        with pytest.MonkeyPatch.context() as mp:
            for module in (domain.services.timeouts, domain.services.bots):
                mp.setattr(module, "bot_for", self.bot_for)
            mp.setattr(domain.services.bots, "think", self.think)
            yield


async def play_world_one(sc: Scenario) -> tuple[Script, dict[Observer, Frames]]:
    """World 1, watched by every observer of the scenario, for its
    ``max_steps`` or until its plan is done, whichever comes later (the
    seats' turns come at the game's pace)."""
    w = World(sc, sc.observers, sc.observers)
    await w.start()
    script = Script(initial=w.store_state.clone())
    await w.subscribe_all()
    chooser = Chooser(sc)
    await w.look("dealt")
    step = 0
    while (
        sc.max_steps is None
        or step < sc.max_steps
        or (chooser.planning and step < sc.max_steps + PLAN_STEPS)
    ):
        probes = chooser.probes(w.store_state, sc.observers)
        script.probes[step] = probes
        for p in probes:
            await w.probe(p, f"step {step}")
        action = chooser.next(w.game, step)
        if action is None:
            break
        step += 1
        made = await w.take(action, action.cmd, f"step {step}")
        if action.kind == MOVE:
            assert made[0].seat == action.seat and made[0].cmd == action.cmd, (action, made)
        if action.kind == TIMEOUT:
            assert made[:1] and made[0].seat == action.seat, f"step {step}: no fallback move"
        script.steps.append(dataclasses.replace(action, moves=len(made)))
        script.record(made)
        assert encode(script.states[-1] if script.states else script.initial) == encode(
            w.store_state
        ), "the pure engine replays the step's moves"
        await w.look(f"step {step}")
        if step % SUBSCRIPTION_DRAIN_EVERY == 0:
            await w.drain_recorded()
    script.log = [e.event for e in w.client.h.store.log(w.game_id)]
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
    sigma. ``bystanders`` are recorded too (their own probes are not sent).
    If the server moves otherwise than world 1's script (a fallback of the
    observer's own seat that read what it may not see), the replay stops
    after that step's look, with a response world 1 never got."""
    w = World(sc, [observer, *bystanders], sc.observers)
    await w.start()
    w.inject(sigma)
    await w.subscribe_all()
    await w.look("dealt")
    mapped = _mapped_moves(script, sigma, texts)
    bots = ScriptedBots(observer)
    done = 0
    with bots.installed():
        for i, step in enumerate(script.steps):
            for p in script.probes.get(i, []):
                if p.seat == observer:
                    await w.probe(p, f"step {i}")
            expected = mapped[done : done + step.moves]
            done += step.moves
            own = expected[0].cmd if step.kind == MOVE else None
            if step.seat == observer and own is not None:
                assert own == step.cmd, "sigma renames nothing the observer itself names"
            server = expected[1:] if step.kind == MOVE else expected
            bots.expected = deque(m for m in server if m.seat != observer)
            try:
                made: list[Move] | None = await w.take(step, own, f"step {i + 1}")
            except (Diverged, DomainError):
                made = None  # a scripted move the engine refused, or one not scripted
            await w.look(f"step {i + 1}")
            if made != expected or bots.expected:
                w.record(observer, f"step {i + 1} the server's moves", "not world 1's")
                break
            if (i + 1) % SUBSCRIPTION_DRAIN_EVERY == 0:
                await w.drain_recorded()
        else:
            for p in script.probes.get(len(script.steps), []):
                if p.seat == observer:
                    await w.probe(p, f"step {len(script.steps)}")
    await w.finish()
    return w.frames


def _mapped_moves(script: Script, sigma: Sigma, texts: Mapping[int, str]) -> list[Move]:
    """Every engine move of the script in world 2: card ids through sigma,
    the texts ``observer`` may not read replaced (k-th message: ``texts[k]``)."""
    out = []
    k = 0
    for m in script.moves:
        text = None
        if isinstance(m.cmd, SendMessage):
            k += 1
            text = texts.get(k)
        out.append(Move(m.seat, map_command(m.cmd, sigma, text)))
    return out


def first_difference(one: Frames, two: Frames) -> str | None:
    """Where two recordings part, or None when they are byte-identical."""
    for i, (a, b) in enumerate(zip(one, two, strict=False)):
        if a != b:
            return f"response {i} ({a[0]!r} / {b[0]!r}) differs:\n{a[1]!r}\n{b[1]!r}"
    if len(one) != len(two):
        return f"{len(one)} responses in world 1, {len(two)} in world 2"
    return None
