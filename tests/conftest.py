"""Shared test configuration: Hypothesis profiles, service fixtures and the
property tests' tally of games (gathered from pytest-xdist workers too)."""

from __future__ import annotations

import os
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from tests.property.budget import GAMES_PLAYED, SCALE
from tests.services import require_service

# ---------------------------------------------------------------- Hypothesis
# "ci" (the default) is bounded and derandomized, so a CI run is reproducible;
# "long" (`make test-long`) searches much harder. Choose with HYPOTHESIS_PROFILE.
settings.register_profile(
    "ci",
    max_examples=50,
    deadline=None,
    derandomize=True,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "long",
    max_examples=2000,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


# ---------------------------------------------------------------- services
@pytest.fixture(scope="session")
def redis_url() -> str:
    """URL of a reachable Redis (REDIS_URL); skips, or fails under MMK_REQUIRE_SERVICES=1."""
    return require_service("REDIS_URL")


@pytest.fixture(scope="session")
def database_url() -> str:
    """URL of a reachable database (DATABASE_URL); skips, or fails under MMK_REQUIRE_SERVICES=1."""
    return require_service("DATABASE_URL")


# ---------------------------------------------------------------- games played
# Each process counts the games its property tests play (tests/property/budget.py).
# An xdist worker hands its tally to the controller, which reports the sum.
GAMES_KEY = "mmk_games_played"


def pytest_sessionfinish(session: pytest.Session) -> None:
    workeroutput: dict[str, Any] | None = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput[GAMES_KEY] = dict(GAMES_PLAYED)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """xdist (controller): a worker finished; add its tally to ours."""
    GAMES_PLAYED.update(getattr(node, "workeroutput", {}).get(GAMES_KEY, {}))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not GAMES_PLAYED:
        return
    total = sum(GAMES_PLAYED.values())
    terminalreporter.write_sep("-", f"property tests: {total} games played (scale x{SCALE})")
    for test, games in sorted(GAMES_PLAYED.items()):
        terminalreporter.write_line(f"  {games:6d}  {test}")
