"""Helpers for tests that need the real backing services (Redis, PostgreSQL).

The services are named by environment variables:

- ``REDIS_URL``, e.g. ``redis://127.0.0.1:6379/0``
- ``DATABASE_URL``, e.g. ``postgresql+psycopg://postgres@127.0.0.1:5432/test``

A test asks for them through the ``redis_url`` / ``database_url`` fixtures
(``tests/conftest.py``). When a variable is unset or its server does not answer,
the test is skipped, unless ``MMK_REQUIRE_SERVICES=1`` (CI), where it fails.
"""

from __future__ import annotations

import os
import socket
from typing import NamedTuple, NoReturn
from urllib.parse import urlsplit

import pytest

REQUIRE_SERVICES_ENV = "MMK_REQUIRE_SERVICES"
CONNECT_TIMEOUT_S = 2.0

# Default port per URL scheme (the part before any "+driver").
_DEFAULT_PORTS = {
    "redis": 6379,
    "rediss": 6379,
    "postgresql": 5432,
    "postgres": 5432,
    "mysql": 3306,
    "mariadb": 3306,
}


class ServiceAddress(NamedTuple):
    host: str
    port: int


def service_address(url: str) -> ServiceAddress | None:
    """Return the TCP address a service URL points at.

    ``None`` for URLs that need no network server (``sqlite:///...``).
    Raises ``ValueError`` when the URL names no host or no known port.
    """
    parts = urlsplit(url)
    scheme = parts.scheme.split("+", 1)[0].lower()
    if not scheme:
        raise ValueError(f"not a service URL (no scheme): {url!r}")
    if scheme == "sqlite":
        return None
    host = parts.hostname
    if not host:
        raise ValueError(f"service URL names no host: {url!r}")
    port = parts.port  # raises ValueError for a malformed port
    if port is None:
        if scheme not in _DEFAULT_PORTS:
            raise ValueError(f"no port in {url!r} and no default port for {scheme!r}")
        port = _DEFAULT_PORTS[scheme]
    return ServiceAddress(host, port)


def is_reachable(address: ServiceAddress, timeout: float = CONNECT_TIMEOUT_S) -> bool:
    """Whether a TCP connection to ``address`` succeeds within ``timeout`` seconds."""
    try:
        with socket.create_connection(address, timeout=timeout):
            return True
    except OSError:
        return False


def services_required() -> bool:
    return os.environ.get(REQUIRE_SERVICES_ENV, "") == "1"


def require_service(env_var: str) -> str:
    """Return the URL in ``env_var`` if its server answers; else skip (or fail)."""
    url = os.environ.get(env_var, "").strip()
    problem: str | None = None
    if not url:
        problem = f"{env_var} is not set"
    else:
        try:
            address = service_address(url)
        except ValueError as exc:
            problem = f"{env_var} is not usable: {exc}"
        else:
            if address is not None and not is_reachable(address):
                problem = (
                    f"{env_var}: nothing answers on {address.host}:{address.port} "
                    f"(within {CONNECT_TIMEOUT_S:g} s)"
                )
    if problem is None:
        return url
    unavailable(problem)


def unavailable(problem: str) -> NoReturn:
    """Skip the test for want of ``problem``'s service or tool; under
    ``MMK_REQUIRE_SERVICES=1`` (CI) fail it instead."""
    if services_required():
        pytest.fail(f"{problem}, and {REQUIRE_SERVICES_ENV}=1 requires it", pytrace=False)
    pytest.skip(f"{problem} (set {REQUIRE_SERVICES_ENV}=1 to make this an error)")
