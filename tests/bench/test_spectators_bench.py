"""Spectators at scale (issue #28 part 2), run by ``make bench``: one game,
a move a second, watched by 10,000 spectators over two instances on
PostgreSQL and Redis, against the bare broadcaster of #13 fanning out the
same frames to as many clients in the same run
(:mod:`tests.bench.capacity.spectators`). Targets: every frame delivered,
and MMK within 1.5x of the bare broadcaster on delivery p99 (the last
spectator of each move) and on server CPU per delivered frame.

``SPECTATORS`` and ``SPECTATOR_MOVES`` shorten a run by hand.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.bench.capacity.ramp import percentile
from tests.bench.capacity.spectators import run

RATIO = 1.5


@pytest.mark.timeout(3600)
def test_ten_thousand_spectators_against_the_bare_broadcaster(
    tmp_path: Path, scale_out: None
) -> None:
    spectators = int(os.environ.get("SPECTATORS", "10000"))
    moves = int(os.environ.get("SPECTATOR_MOVES", "60"))
    results = run(spectators, moves, directory=tmp_path)
    mmk, bare = results["mmk"], results["bare"]
    for f in (mmk, bare):
        assert f.missing == 0 and not f.lost, (f.target, f.missing, f.lost[:3])
        assert f.frames == mmk.frames, "the same frames, move by move"
    last = percentile(mmk.last_from_at, 99) / percentile(bare.last_from_at, 99)
    cpu = mmk.cpu_per_frame_us / bare.cpu_per_frame_us
    assert last <= RATIO, f"the last spectator's p99: {last:.2f}x the bare broadcaster's"
    assert cpu <= RATIO, f"CPU per frame: {cpu:.2f}x the bare broadcaster's"
