"""Golden playthroughs replay exactly (see ``tests/golden/regenerate.py``).

Each ``tests/golden/<name>.jsonl`` is replayed from its setup arguments with
its recorded commands; at every step the events (every projection), the
spectator view and every seat's view and legal actions must be exactly the
recorded ones. A failure names the first differing step and what differs.
When the change of behaviour is intended, regenerate the files with
``python -m tests.golden.regenerate`` and review their diff.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from domain.game.engine import apply, to_act
from domain.game.errors import GameError
from tests.golden.regenerate import (
    GAMES,
    GOLDEN_DIR,
    REGENERATE,
    GoldenGame,
    audiences,
    command_in,
    new,
    step_line,
)

MAX_SHOWN = 12  # differing paths shown in a failure


def _fail(game: GoldenGame, step: Any, what: str) -> None:
    pytest.fail(
        f"{game.path.name}: step {step}: {what}\n\n"
        f"If this change of behaviour is intended, regenerate the golden files with\n"
        f"    {REGENERATE}\nand review their diff (git diff tests/golden).",
        pytrace=False,
    )


def _short(value: Any, limit: int = 300) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit] + "..."


def _describe(expected: dict[str, Any], actual: dict[str, Any]) -> str:
    """What differs between two step lines, most telling first."""
    out = [f"command {_short(expected.get('command'))} by seat {expected.get('seat')}"]
    ev_want, ev_got = expected["events"], actual["events"]
    if ev_want != ev_got:
        for i in range(max(len(ev_want), len(ev_got))):
            want = ev_want[i] if i < len(ev_want) else None
            got = ev_got[i] if i < len(ev_got) else None
            if want != got:
                out.append(
                    f"event {i} differs:\n  expected {_short(want)}\n  actual   {_short(got)}"
                )
                break
        out.append(f"({len(ev_want)} events expected, {len(ev_got)} produced)")
    missing = object()
    changed = []
    for key in ("set", "unset"):
        if expected[key] != actual[key]:
            want = expected[key] if key == "set" else dict.fromkeys(expected[key], "<removed>")
            got = actual[key] if key == "set" else dict.fromkeys(actual[key], "<removed>")
            for path in sorted(set(want) | set(got)):
                if want.get(path, missing) != got.get(path, missing):
                    changed.append(
                        f"  {path}: expected {_short(want.get(path, '<unchanged>'), 120)}, "
                        f"actual {_short(got.get(path, '<unchanged>'), 120)}"
                    )
    if changed:
        out.append(f"what the audiences see differs at {len(changed)} paths:")
        out += changed[:MAX_SHOWN]
        if len(changed) > MAX_SHOWN:
            out.append(f"  ... and {len(changed) - MAX_SHOWN} more")
    return "\n".join(out)


def _load(game: GoldenGame) -> list[dict[str, Any]]:
    if not game.path.exists():
        _fail(game, "-", f"the golden file is missing: run {REGENERATE}")
    return [json.loads(line) for line in game.path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("game", GAMES, ids=[g.name for g in GAMES])
def test_golden_playthrough_replays_exactly(game: GoldenGame) -> None:
    header, *lines = _load(game)
    if header != game.header():
        _fail(game, "header", f"the setup arguments changed: {_short(header)}")
    setup = new(game)
    state = setup.state
    seen = audiences(state)
    actual = step_line(0, None, None, setup.events, seen, {})
    if actual != lines[0]:
        _fail(game, 0, "the setup differs\n" + _describe(lines[0], actual))
    for expected in lines[1:]:
        step, seat = expected["step"], expected["seat"]
        if to_act(state) is None:
            _fail(game, step, "the game ended earlier than recorded")
        cmd = command_in(expected["command"])
        try:
            events = apply(state, seat, cmd)
        except GameError as e:
            _fail(game, step, f"the recorded {cmd} by seat {seat} is refused: {e.code} {e}")
        before, seen = seen, audiences(state)
        actual = step_line(step, seat, cmd, events, seen, before)
        if actual != expected:
            _fail(game, step, _describe(expected, actual))
    if to_act(state) is not None:
        _fail(game, len(lines) - 1, "the game goes on after the last recorded step")


def test_every_golden_file_belongs_to_a_game() -> None:
    files = {p.name for p in Path(GOLDEN_DIR).glob("*.jsonl")}
    assert files == {g.path.name for g in GAMES}, f"stale or missing golden files: run {REGENERATE}"
