"""Golden playthroughs: a few seeded games, every step written down.

Regenerate (only when a behaviour change is intended, then review the diff):

    python -m tests.golden.regenerate

Each game of :data:`GAMES` is played by deterministic bots (RANDOM and GREEDY
with a seeded Rng) with scripted messenger traffic, and written to
``tests/golden/<name>.jsonl``: one compact JSON object per line, keys sorted.

- Line 1, the header: the format version and the game's setup arguments.
- Then one line per step (step 0 is the setup): the acting ``seat``, the
  ``command``, the ``events`` with every projection (``public`` and the
  per-seat ``private`` ones), and what every audience sees after the step:
  the ``spectator`` view, and per seat its ``player_view`` and legal actions
  (all through ``to_jsonable``). To keep files small, what the audiences see
  is stored flattened (``path -> value``, e.g. ``seat2/hand/0``) and only
  as the change since the previous step: ``set`` (new or changed paths) and
  ``unset`` (removed paths). A seat's view stores its public part only where
  it differs from the spectator view (``seatN/publicDelta/...``).

Commands are written compactly as ``[kind, field, ...]``
(``["GiveCards", [[to, card], ...]]``). ``tests/golden/test_golden.py``
replays the recorded commands and compares every line exactly.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from domain.bots.greedy import greedy_bot
from domain.bots.strategy import Bot, random_bot
from domain.game import commands as c
from domain.game.cards import Card, catalogue
from domain.game.engine import apply, to_act
from domain.game.events import Event
from domain.game.legal import legal_actions
from domain.game.messaging import message_targets
from domain.game.options import AbilityTrigger, Format, GameOptions
from domain.game.rng import Rng, seed_state
from domain.game.setup import new_game
from domain.game.state import GameState, MessageStatus, Phase
from domain.game.views import player_view, spectator_view
from infra.codec import event_to_json
from tests.jsonable import to_jsonable

GOLDEN_DIR = Path(__file__).resolve().parent
FORMAT_VERSION = 1
REGENERATE = "python -m tests.golden.regenerate"
BOTS: dict[str, Bot] = {"random": random_bot, "greedy": greedy_bot}
MESSENGER_ACTIONS_PER_TRICK = 4


@dataclass(frozen=True)
class GoldenGame:
    """One golden game: its setup arguments and its bots."""

    name: str
    seats: int
    seed: str
    options: GameOptions
    rat: int | None
    bots: tuple[str, ...]
    collections: tuple[tuple[str, ...], ...] | None = None

    @property
    def path(self) -> Path:
        return GOLDEN_DIR / f"{self.name}.jsonl"

    def header(self) -> dict[str, Any]:
        return {
            "golden": FORMAT_VERSION,
            "name": self.name,
            "seats": self.seats,
            "seed": self.seed,
            "options": to_jsonable(self.options),
            "rat": self.rat,
            "bots": list(self.bots),
            "collections": None
            if self.collections is None
            else [list(x) for x in self.collections],
        }


def _collections() -> tuple[tuple[str, ...], ...]:
    """Former Sealed collections for 8 seats: six people, two bots (none)."""
    rng = Rng(seed_state("golden/collections"))
    designs = [d.id for d in catalogue()]
    out = []
    for seat in range(8):
        size = 0 if seat in (3, 6) else 12 + rng.below(12)
        picks = [designs[rng.below(len(designs))] for _ in range(size)]
        out.append(tuple(picks + picks[:2]))  # some designs twice: instances #1, #2
    return tuple(out)


GAMES: tuple[GoldenGame, ...] = (
    GoldenGame(
        "singleton-3-seats",
        3,
        "golden/singleton-3",
        GameOptions(),
        None,
        ("greedy", "random", "greedy"),
    ),
    GoldenGame(
        "sealed-5-seats-every-card",
        5,
        "golden/sealed-5",
        GameOptions(Format.SEALED, AbilityTrigger.EVERY_CARD),
        2,
        ("random", "greedy", "random", "greedy", "random"),
    ),
    GoldenGame(
        "former-sealed-8-seats-lead-only",
        8,
        "golden/former-sealed-8",
        GameOptions(Format.FORMER_SEALED, AbilityTrigger.LEAD_ONLY, refill_hands=False),
        None,
        ("greedy", "random") * 4,
        _collections(),
    ),
)


# ---------------------------------------------------------------- commands
_KINDS = c.COMMAND_KINDS


def command_out(cmd: c.Command) -> list[Any]:
    """``[kind, field, ...]``; gifts as ``[to, card]`` pairs."""
    out: list[Any] = [type(cmd).__name__]
    for f in fields(cmd):
        value = getattr(cmd, f.name)
        if isinstance(cmd, c.GiveCards):
            value = [[g.to, g.card] for g in value]
        elif isinstance(value, tuple):
            value = list(value)
        out.append(value)
    return out


_CARD_FIELDS = ("card", "discard")


def command_in(data: list[Any]) -> c.Command:
    cls = _KINDS[data[0]]
    args = list(data[1:])
    if cls is c.GiveCards:
        args = [tuple(c.Gift(to, Card(card)) for to, card in args[0])]
    elif cls is c.ReorderTop:
        args = [tuple(Card(x) for x in args[0])]
    else:
        args = [
            Card(a) if f.name in _CARD_FIELDS else a for f, a in zip(fields(cls), args, strict=True)
        ]
    cmd: c.Command = cls(*args)
    return cmd


# ---------------------------------------------------------------- lines
def flatten(obj: Any, prefix: str = "", out: dict[str, Any] | None = None) -> dict[str, Any]:
    """``{"a": {"b": [{"c": 1}]}, "d": [1, 2]}`` -> ``{"a/b/0/c": 1, "d": [1, 2]}``:
    dicts and lists of dicts are flattened, anything else is a leaf."""
    out = {} if out is None else out
    if isinstance(obj, dict) and obj:
        items: Any = obj.items()
    elif isinstance(obj, list) and obj and all(isinstance(x, dict) for x in obj):
        items = enumerate(obj)
    else:
        out[prefix] = obj
        return out
    for k, v in items:
        flatten(v, f"{prefix}/{k}" if prefix else str(k), out)
    return out


def audiences(state: GameState) -> dict[str, Any]:
    """Everything every audience sees now, flattened."""
    spectator = to_jsonable(spectator_view(state))
    flat = flatten(spectator, "spectator")
    public = flatten(spectator)
    for s in range(state.n):
        view = to_jsonable(player_view(state, s))
        own = flatten(view.pop("public"))
        view["publicDelta"] = {k: v for k, v in own.items() if public.get(k, own) != v}
        view["publicDelta"].update({k: None for k in public if k not in own})
        view["legal"] = [command_out(x) for x in legal_actions(state, s)]
        flatten(view, f"seat{s}", flat)
    return flat


def event_out(e: Event) -> dict[str, Any]:
    """The event as every audience sees it, as the log stores it."""
    return {
        "type": type(e).__name__,
        "public": event_to_json(e.seen_by(None)),
        "private": {str(s): event_to_json(e.seen_by(s)) for s in sorted(set(e.private_to()))},
    }


def step_line(
    step: int,
    seat: int | None,
    cmd: c.Command | None,
    events: list[Event],
    seen: dict[str, Any],
    before: dict[str, Any],
) -> dict[str, Any]:
    """One step; ``seen`` and ``before`` are the audiences after and before it."""
    return {
        "step": step,
        "seat": seat,
        "command": None if cmd is None else command_out(cmd),
        "events": [event_out(e) for e in events],
        "set": {k: v for k, v in seen.items() if k not in before or before[k] != v},
        "unset": sorted(k for k in before if k not in seen),
    }


def dumps(line: dict[str, Any]) -> str:
    return json.dumps(line, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


# ---------------------------------------------------------------- playing
class GoldenDriver:
    """Deterministic choices: bots for the seat to act; in the message window,
    a few messages (seats to seats, the Rat's own) and the Rat's verdicts."""

    def __init__(self, game: GoldenGame) -> None:
        self.game = game
        self.rng = Rng(seed_state(f"{game.seed}/driver"))
        self.trick = -1
        self.left = 0
        self.sent = 0

    def next(self, state: GameState) -> tuple[int, c.Command] | None:
        actor = to_act(state)
        if actor is None:
            return None
        if state.phase is Phase.LEAD and state.trick is not None:
            if state.trick.number != self.trick:
                self.trick, self.left = state.trick.number, MESSENGER_ACTIONS_PER_TRICK
            if self.left > 0 and self.rng.below(3) < 2:
                self.left -= 1
                move = self._messenger(state)
                if move is not None:
                    return move
        bot = BOTS[self.game.bots[actor]]
        return actor, bot(player_view(state, actor), legal_actions(state, actor), self.rng)

    def _messenger(self, state: GameState) -> tuple[int, c.Command] | None:
        pending = [m.id for m in state.messages if m.status is MessageStatus.PENDING]
        if pending and self.rng.below(2):
            mid = pending[self.rng.below(len(pending))]
            legal = legal_actions(state, state.rat)
            verdict = c.DeliverMessage(mid) if self.rng.below(3) else c.DeclineMessage(mid)
            return state.rat, verdict if verdict in legal else c.DeclineMessage(mid)
        senders = [s for s in range(state.n) if message_targets(state, s)]
        if not senders:
            return None
        seat = senders[self.rng.below(len(senders))]
        targets = message_targets(state, seat)
        to = targets[self.rng.below(len(targets))]
        self.sent += 1
        assert state.trick is not None
        text = f"#{self.sent} trick {state.trick.number}: seat {seat} to seat {to}, héllo"
        return seat, c.SendMessage(to, text)


def new(game: GoldenGame) -> Any:
    return new_game(game.seats, game.seed, game.options, rat=game.rat, collections=game.collections)


def record(game: GoldenGame) -> Iterator[dict[str, Any]]:
    """The game's lines: the header, then one per step."""
    yield game.header()
    setup = new(game)
    state = setup.state
    seen = audiences(state)
    yield step_line(0, None, None, setup.events, seen, {})
    driver = GoldenDriver(game)
    step = 0
    while (move := driver.next(state)) is not None:
        step += 1
        seat, cmd = move
        events = apply(state, seat, cmd)
        before, seen = seen, audiences(state)
        yield step_line(step, seat, cmd, events, seen, before)


def main() -> None:
    for game in GAMES:
        text = "".join(dumps(line) + "\n" for line in record(game))
        game.path.write_text(text, encoding="utf-8")
        steps = text.count("\n") - 2
        print(f"{game.path.relative_to(Path.cwd())}: {steps} steps, {len(text) // 1024} KB")
    stale = {p.name for p in GOLDEN_DIR.glob("*.jsonl")} - {g.path.name for g in GAMES}
    for name in sorted(stale):
        print(f"stale golden file (not in GAMES): {name}", file=sys.stderr)


if __name__ == "__main__":
    main()
