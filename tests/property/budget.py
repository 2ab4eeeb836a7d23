"""How many games the property tests play, split how, and how many they played.

- :data:`SCALE` and :func:`examples`: `make test` (profile "ci") runs each
  property over the example counts given in the tests;
  HYPOTHESIS_PROFILE=long (`make test-long`) multiplies them.
  MMK_PROPERTY_SCALE overrides the factor.
- :func:`shards`: a long property runs as several pytest items, each with its
  share of the examples, so that pytest-xdist can spread its games over the
  workers.
- :data:`GAMES_PLAYED` / :func:`count_game`: the tally reported at the end of
  the run (tests/conftest.py gathers it from the xdist workers too).

No domain import here: tests/conftest.py imports this module in every run.
"""

from __future__ import annotations

import os
from collections import Counter

import pytest

_PROFILE_SCALE = {"ci": 1, "long": 10}
SCALE = int(
    os.environ.get(
        "MMK_PROPERTY_SCALE", _PROFILE_SCALE.get(os.environ.get("HYPOTHESIS_PROFILE", "ci"), 1)
    )
)


def examples(ci: int, shards: int = 1) -> int:
    """The Hypothesis examples (= games) per run of a test: ``ci`` x SCALE,
    split over ``shards`` items.

    Every run of a test first tries the simplest example (Hypothesis does), so
    the shards share that one: each gets ``ceil((total - 1) / shards) + 1``,
    which keeps at least ``total`` distinct examples in all.
    """
    total = max(1, ci * SCALE)
    if shards == 1:
        return total
    return -(-(total - 1) // shards) + 1


def shards(count: int) -> pytest.MarkDecorator:
    """Run a ``@given`` test as ``count`` items, ``shard`` = 0 .. count - 1.

    The items draw different games: Hypothesis's pytest plugin adds a
    parametrized item's node id to the test's digest, from which the "ci"
    profile (``derandomize=True``) derives the seed; so every shard is
    reproducible and none repeats another's search.
    """
    return pytest.mark.parametrize("shard", range(count), ids=[f"shard{i}" for i in range(count)])


GAMES_PLAYED: Counter[str] = Counter()  # per test (all its shards), this process


def count_game() -> None:
    """Record one finished game for the run's summary."""
    test = os.environ.get("PYTEST_CURRENT_TEST", "?").split(" ")[0].rsplit("::", 1)[-1]
    GAMES_PLAYED[test.split("[", 1)[0]] += 1
