"""EXPERT's search over determinizations (:mod:`domain.bots.determinize`)
of what its seat knows: flat Monte Carlo with common random numbers
(:class:`Flat`, the default), or single-observer information-set Monte
Carlo tree search (:class:`Search`, after OpenSpiel's ``ismcts``).

[decision] Flat by default (``Params.flat``): each determinization is
sampled once and every candidate move is played out on it (its own copy),
so moves are compared on the same hidden cards (common random numbers,
"PIMC"); the move of the best mean value wins. The playouts are
deterministic (GREEDY's play for every seat, our own later moves too), so
a determinization is the only noise. Measured against GREEDY at 50 ms of
CPU a decision (200 games): 4 seats, tree 38.9 %, flat 58.8 %; 6 seats
flat 40.8 % (the tree ~17 %, a 12-game smoke run). With few playouts a
tree spreads them over nodes that are rarely revisited; flat spends every
one on the root choice, which is the one that counts.

[decision] Other seats are not searched: their moves are chance, drawn from
the playout policy (GREEDY's exact play, :func:`~domain.bots.playout.policy`)
in the determinized state. In the tree, a node is the observer's
information set when it decides: the trick number, the trick's plays as it
sees them (R7.3), the pending decision, its hand and every seat's prize
row count.

[decision] Playouts are truncated: they stop once ``tricks`` tricks have
ended (the one under way counts; 3 by default), or at the end of the game,
and the stop is scored by :func:`~domain.bots.playout.value`. Measured
with the tree against GREEDY at 4 seats, 60 iterations: 1 trick 20.5 %,
2 tricks ~25 %, 3 tricks 30.7 %, 6 tricks 26.5 % (40 iterations), whole
games 8.5 % (16 iterations): a longer playout costs iterations faster than
it helps. Flat, 50 ms, 4 seats (200 games): 2 tricks 53.5 %, 3 tricks
55.5 %, 5 tricks 47.2 %. Playouts run on :func:`domain.bots.sim.step`, the engine's rules
without its events and checks (~3x cheaper than ``apply``).

[decision] Candidate moves are pruned where the legal list is long
(:func:`candidates`): Stinky gifts (R7.2) from the 4 cheapest cards, a
Sassy discard (R7.7) of one of the 2 cheapest, a Hungry take (R7.4) among
the 8 highest values. Messages are never sent, nor searched (R5).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from domain.bots.determinize import Sampler
from domain.bots.playout import policy, value
from domain.bots.sim import step
from domain.game.cards import Card
from domain.game.commands import (
    Command,
    DeclineMessage,
    DeliverMessage,
    DiscardAndPlay,
    GiveCards,
    HungryTake,
    SendMessage,
)
from domain.game.engine import to_act
from domain.game.legal import legal_actions
from domain.game.rng import Rng
from domain.game.state import GameState

_GIFT_FROM = 4  # Stinky gifts: from the 4 cheapest cards
_DISCARD_FROM = 2  # a Sassy discard: one of the 2 cheapest
_TAKE_FROM = 8  # a Hungry take: among the 8 highest values


@dataclass(frozen=True, slots=True)
class Params:
    """Search parameters, tuned against GREEDY (see the module docstring):
    playout length in tricks, the UCT constant (rewards are in [0, 1]), the
    leaf estimate's weights (:func:`~domain.bots.playout.value`), how
    many Rat Deck cards a determinization orders at random, and flat
    search (:class:`Flat`) or the tree (:class:`Search`)."""

    tricks: int = 3
    exploration: float = 0.7
    per_trick: float = 1.0
    temperature: float = 20.0
    shuffled: int = 24
    hand: float = 0.5
    flat: bool = True


@dataclass(slots=True)
class _Edge:
    visits: int = 0
    total: float = 0.0
    available: int = 0


@dataclass(slots=True)
class _Node:
    edges: dict[Command, _Edge] = field(default_factory=dict)
    kids: dict[tuple[Command, object], _Node] = field(default_factory=dict)


def _cheap(cards: Sequence[Card], k: int) -> set[Card]:
    return set(sorted(cards, key=lambda c: c.value)[:k])


def candidates(legal: Sequence[Command], hand: Sequence[Card]) -> list[Command]:
    """The legal moves EXPERT considers (module docstring, [decision])."""
    moves: list[Command] = [
        c for c in legal if not isinstance(c, SendMessage | DeliverMessage | DeclineMessage)
    ]
    if len(moves) <= 12:
        return moves
    first = moves[0]
    if isinstance(first, GiveCards):
        low = _cheap(hand, _GIFT_FROM)
        moves = [
            c for c in moves if isinstance(c, GiveCards) and all(g.card in low for g in c.gifts)
        ]
    elif isinstance(first, HungryTake):
        best = sorted(moves, key=lambda c: -c.card.value if isinstance(c, HungryTake) else 0)
        moves = best[:_TAKE_FROM]
    elif any(isinstance(c, DiscardAndPlay) for c in moves):
        low = _cheap(hand, _DISCARD_FROM)
        moves = [c for c in moves if not isinstance(c, DiscardAndPlay) or c.discard in low]
    return moves


def _info_key(state: GameState, seat: int) -> object:
    """The observer's information set at its decision (module docstring)."""
    t = state.trick
    plays = (
        ()
        if t is None
        else tuple(
            (p.seat, None if p.face_down and p.seat != seat else p.card, p.second) for p in t.plays
        )
    )
    d = state.pending
    return (
        t.number if t else 0,
        plays,
        None if d is None else d.kind,
        frozenset(state.seats[seat].hand),
        tuple(len(s.prizes) for s in state.seats),
    )


class Search:
    """One decision's search tree, from ``seat``'s root information set."""

    def __init__(self, sampler: Sampler, seat: int, root: list[Command], params: Params) -> None:
        self.sampler, self.seat, self.params = sampler, seat, params
        self.root_moves = root
        self.root = _Node()

    def run(
        self, rng: Rng, iterations: int, cpu_seconds: float | None, start: float | None = None
    ) -> Command:
        """Search for ``iterations``, or until two more iterations (at the
        mean cost so far: a margin for a slow one) would pass the CPU cap
        counted from ``start`` (``time.process_time``); the most visited move."""
        begun = time.process_time() if start is None else start
        clock = time.process_time()
        for done in range(iterations):
            if cpu_seconds is not None and done:
                now = time.process_time()
                if now - begun + 2 * (now - clock) / done >= cpu_seconds:
                    break
            self._iterate(rng)
        edges = self.root.edges
        return max(
            self.root_moves,
            key=lambda m: (edges[m].visits, edges[m].total) if m in edges else (-1, 0.0),
        )

    def _iterate(self, rng: Rng) -> None:
        p = self.params
        state = self.sampler.sample(rng, p.shuffled)
        assert state.trick is not None
        stop = state.trick.number + p.tricks
        node: _Node | None = self.root
        parent: _Node | None = None  # after our move: the node it left, and the move
        via: Command = self.root_moves[0]
        path: list[_Edge] = []
        me = self.seat
        while (seat := to_act(state)) is not None:
            t = state.trick
            if t is None or t.number >= stop:
                break
            if seat == me and parent is not None:  # our next information set
                node = parent.kids.setdefault((via, _info_key(state, me)), _Node())
                parent = None
            if seat != me or node is None:
                cmd = policy(state, seat)
            else:
                moves = (
                    self.root_moves
                    if node is self.root
                    else candidates(legal_actions(state, me), state.seats[me].hand)
                )
                cmd, fresh = self._select(node, moves, state, rng)
                path.append(node.edges[cmd])
                if not fresh:
                    parent, via = node, cmd
                node = None
            step(state, seat, cmd)
        reward = value(state, me, p.per_trick, p.temperature, p.hand)
        for e in path:
            e.visits += 1
            e.total += reward

    def _select(
        self, node: _Node, moves: list[Command], state: GameState, rng: Rng
    ) -> tuple[Command, bool]:
        """UCT over the available moves; an untried one first (the policy's,
        if untried). Returns the move and whether it was untried."""
        edges = node.edges
        untried = []
        for m in moves:
            e = edges.get(m)
            if e is None:
                e = edges[m] = _Edge()
            e.available += 1
            if e.visits == 0:
                untried.append(m)
        if untried:
            if len(untried) > 1:
                greedy = policy(state, self.seat)
                if greedy in untried:
                    return greedy, True
            return untried[rng.below(len(untried))], True
        c = self.params.exploration
        best, best_score = moves[0], -1.0
        for m in moves:
            e = edges[m]
            score = e.total / e.visits + c * math.sqrt(math.log(e.available) / e.visits)
            if score > best_score:
                best, best_score = m, score
        return best, False


class Flat:
    """Flat Monte Carlo with common random numbers: every candidate move is
    played out on the same determinizations (module docstring)."""

    def __init__(self, sampler: Sampler, seat: int, root: list[Command], params: Params) -> None:
        self.sampler, self.seat, self.params = sampler, seat, params
        self.root_moves = root
        self.totals = [0.0] * len(root)
        self.counts = [0] * len(root)

    def run(
        self, rng: Rng, iterations: int, cpu_seconds: float | None, start: float | None = None
    ) -> Command:
        """Playouts (``iterations`` in all: one per move on each
        determinization, the last round maybe cut short), or until two more
        (at the mean cost so far) would pass the CPU cap counted from
        ``start`` (``time.process_time``); the move of the best mean value."""
        begun = time.process_time() if start is None else start
        clock = time.process_time()
        moves = self.root_moves
        k = len(moves)
        totals, counts = self.totals, self.counts
        done = 0
        while done < iterations:
            base = self.sampler.sample(rng, self.params.shuffled)
            for i in range(min(k, iterations - done)):
                if cpu_seconds is not None and done:
                    now = time.process_time()
                    if now - begun + 2 * (now - clock) / done >= cpu_seconds:
                        return self._best()
                state = base.clone() if i < k - 1 else base
                totals[i] += self._playout(state, moves[i])
                counts[i] += 1
                done += 1
        return self._best()

    def _best(self) -> Command:
        """The best mean among the moves played out on the most
        determinizations (a cut round leaves some one short)."""
        counts, totals = self.counts, self.totals
        most = max(counts)
        if not most:
            return self.root_moves[0]
        best = max(
            (i for i, c in enumerate(counts) if c >= most - 1 and c),
            key=lambda i: totals[i] / counts[i],
        )
        return self.root_moves[best]

    def _playout(self, state: GameState, move: Command) -> float:
        p = self.params
        me = self.seat
        assert state.trick is not None
        stop = state.trick.number + p.tricks
        step(state, me, move)
        while state.outcome is None:
            t = state.trick
            if t is None or t.number >= stop:
                break
            d = state.pending
            seat = state.turn if d is None else d.seat  # to_act
            step(state, seat, policy(state, seat))
        return value(state, me, p.per_trick, p.temperature, p.hand)
