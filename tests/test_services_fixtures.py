"""The service-URL helpers behind the redis_url / database_url fixtures (no network)."""

from __future__ import annotations

import pytest

from tests.services import ServiceAddress, require_service, service_address


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("redis://127.0.0.1:6379/0", ServiceAddress("127.0.0.1", 6379)),
        ("redis://localhost/0", ServiceAddress("localhost", 6379)),
        ("rediss://:secret@cache.example:6380", ServiceAddress("cache.example", 6380)),
        (
            "postgresql+psycopg://postgres@127.0.0.1:5432/test",
            ServiceAddress("127.0.0.1", 5432),
        ),
        ("postgresql://user:pw@db/mmk", ServiceAddress("db", 5432)),
        ("postgresql+psycopg://u@[::1]:5433/x", ServiceAddress("::1", 5433)),
    ],
)
def test_service_address_parses_host_and_port(url: str, expected: ServiceAddress) -> None:
    assert service_address(url) == expected


@pytest.mark.parametrize(
    "url", ["sqlite:///var/mmk.db", "sqlite+aiosqlite:///:memory:", "sqlite://"]
)
def test_sqlite_urls_need_no_server(url: str) -> None:
    assert service_address(url) is None


@pytest.mark.parametrize(
    "url",
    [
        "127.0.0.1:6379",  # no scheme
        "redis:///0",  # no host
        "amqp://guest@127.0.0.1/",  # no port and no default for the scheme
        "redis://127.0.0.1:notaport/0",
    ],
)
def test_unusable_urls_are_rejected(url: str) -> None:
    with pytest.raises(ValueError):
        service_address(url)


def test_unset_service_is_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MMK_TEST_NO_SUCH_URL", raising=False)
    monkeypatch.delenv("MMK_REQUIRE_SERVICES", raising=False)
    with pytest.raises(pytest.skip.Exception, match="MMK_TEST_NO_SUCH_URL is not set"):
        require_service("MMK_TEST_NO_SUCH_URL")


def test_unset_service_fails_when_services_are_required(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MMK_TEST_NO_SUCH_URL", raising=False)
    monkeypatch.setenv("MMK_REQUIRE_SERVICES", "1")
    with pytest.raises(pytest.fail.Exception, match="MMK_TEST_NO_SUCH_URL is not set"):
        require_service("MMK_TEST_NO_SUCH_URL")


def test_sqlite_url_is_returned_without_a_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MMK_TEST_DB_URL", "sqlite+aiosqlite:///:memory:")
    assert require_service("MMK_TEST_DB_URL") == "sqlite+aiosqlite:///:memory:"
