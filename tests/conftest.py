"""Shared test configuration: Hypothesis profiles and service fixtures."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

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
