"""Connection hygiene's parts, without a server (issue #14,
docs/decisions/0044): the connection registry and its caps, the trusted
proxies, the default ceiling, the throttled log line and the event loop's
handler of failed accepts. tests/e2e/test_connection_hygiene.py has them at
work in ``mmk serve``."""

from __future__ import annotations

import asyncio
import errno
import io
import logging
import resource
from collections.abc import Iterator
from typing import Any

import pytest

from api.accept_errors import install, is_accept_after_close, is_accept_failure
from api.connections import (
    DESCRIPTOR_RESERVE,
    MIN_CEILING,
    Limits,
    Proxies,
    Registry,
    default_ceiling,
)
from api.throttled_log import ThrottledLog, ThrottledRecords, add_filter
from infra.settings import Settings, SettingsError
from tests.adapters.test_logs import served_with


def registry(ceiling: int = 100, per_ip: int = 2, ws_per_ip: int = 1) -> Registry:
    return Registry(Limits(ceiling, per_ip, ws_per_ip), Proxies("10.0.0.0/8, ::1"))


# ------------------------------------------------------------ registry


def test_a_connection_over_its_ips_cap_is_refused_and_changes_nothing() -> None:
    r = registry(per_ip=2)
    assert r.open(1, "192.0.2.7") is None and r.open(2, "192.0.2.7") is None
    refusal = r.open(3, "192.0.2.7")
    assert refusal is not None and refusal.status == 429
    assert len(r) == 2
    assert r.open(4, "192.0.2.8") is None  # another address
    r.close(1)
    r.close(1)  # twice is harmless
    assert r.open(5, "192.0.2.7") is None


def test_an_ipv6_client_is_counted_by_its_64() -> None:
    r = registry(per_ip=2)
    assert r.open(1, "2001:db8:1:2::1") is None and r.open(2, "2001:db8:1:2:ffff::9") is None
    refusal = r.open(3, "2001:db8:1:2::3")  # the same subscriber line
    assert refusal is not None and refusal.status == 429
    assert r.open(4, "2001:db8:1:3::1") is None  # another /64


def test_a_websocket_over_its_ips_cap_is_refused_and_released_with_its_connection() -> None:
    r = registry(per_ip=5, ws_per_ip=1)
    for key in (1, 2):
        assert r.open(key, "192.0.2.7") is None
    assert r.upgrade(1) is None
    refusal = r.upgrade(2)
    assert refusal is not None and refusal.status == 429 and "WebSockets" in refusal.message
    r.close(1)
    assert r.upgrade(2) is None


def test_over_the_ceiling_every_address_is_refused_until_one_closes() -> None:
    r = registry(ceiling=3, per_ip=0)  # 0: no per-IP cap
    for key in range(3):
        assert r.open(key, "192.0.2.7") is None
    refusal = r.open(9, "10.1.2.3")  # a proxy's too
    assert refusal is not None and refusal.status == 503
    r.close(0)
    assert r.open(9, "10.1.2.3") is None


def test_a_proxys_connections_count_only_towards_the_ceiling() -> None:
    r = registry(per_ip=1, ws_per_ip=1)
    for key in range(5):
        assert r.open(key, "10.1.2.3") is None
        assert r.upgrade(key) is None
    assert r.open(9, "::1") is None and r.open(10, "::1") is None


def test_a_refusal_is_a_whole_coded_http_response_that_closes() -> None:
    refusal = registry(ceiling=0).open(1, None)
    assert refusal is not None
    head, _, body = refusal.response().partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 503 Service Unavailable")
    assert b"connection: close" in head and b"retry-after: 1" in head
    assert f"content-length: {len(body)}".encode() in head
    assert b'"code":"RATE_LIMITED"' in body


@pytest.mark.parametrize(
    ("allowed", "ip", "trusted"),
    [
        ("*", "203.0.113.9", True),
        ("127.0.0.1,::1", "127.0.0.1", True),
        ("127.0.0.1,::1", "127.0.0.2", False),
        ("10.0.0.0/8", "10.9.8.7", True),
        ("proxy.example, 10.0.0.1", "10.0.0.1", True),
        (None, "127.0.0.1", False),
        ("10.0.0.1", "not an address", False),
    ],
)
def test_the_trusted_proxies_are_uvicorns_forwarded_allow_ips(
    allowed: str | None, ip: str, trusted: bool
) -> None:
    assert (ip in Proxies(allowed)) is trusted


@pytest.mark.parametrize(
    ("soft", "ceiling"),
    [
        (1024, 1024 - DESCRIPTOR_RESERVE),
        (65536, 65536 - DESCRIPTOR_RESERVE),
        (64, MIN_CEILING),
        (resource.RLIM_INFINITY, 1_000_000 - DESCRIPTOR_RESERVE),
    ],
)
def test_the_default_ceiling_stays_below_the_descriptor_limit(soft: int, ceiling: int) -> None:
    assert default_ceiling(soft) == ceiling


def test_the_default_ceiling_reads_this_process_limit() -> None:
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    assert default_ceiling() == default_ceiling(soft)


# ------------------------------------------------------------ throttled log


@pytest.fixture
def captured() -> Iterator[tuple[logging.Logger, io.StringIO]]:
    logger = logging.getLogger("mmk.test.throttled")
    buf = io.StringIO()
    handler = logging.StreamHandler(buf)
    handler.setFormatter(logging.Formatter("%(levelname)s %(message)s|%(exc_info)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    try:
        yield logger, buf
    finally:
        logger.removeHandler(handler)


def test_a_throttled_line_is_written_once_an_interval_with_a_count(
    captured: tuple[logging.Logger, io.StringIO],
) -> None:
    logger, buf = captured
    now = [100.0]
    line = ThrottledLog(logger, logging.WARNING, 10, clock=lambda: now[0])
    assert line("refused %d", 1)
    for t in range(1, 1000):
        now[0] = 100 + t * 0.009  # ~1000 in 9 s
        assert not line("refused %d", t)
    now[0] = 110.5
    assert line("refused %d", 1000)
    lines = buf.getvalue().splitlines()
    assert lines == [
        "WARNING refused 1|None",
        "WARNING refused 1000 (999 more like it since the last such line)|None",
    ]


def test_a_librarys_own_lines_go_through_the_throttled_line(
    captured: tuple[logging.Logger, io.StringIO],
) -> None:
    """uvicorn's "Invalid HTTP request received." for each request that does
    not parse (docs/decisions/0052)."""
    logger, buf = captured
    library = logging.getLogger("mmk.test.library")
    line = ThrottledLog(logger, logging.WARNING, 60)
    add_filter(library, ThrottledRecords(frozenset({"Invalid HTTP request received."}), line))
    add_filter(library, ThrottledRecords(frozenset({"Invalid HTTP request received."}), line))
    try:
        for _ in range(200):
            library.warning("Invalid HTTP request received.")
        library.warning("something else")
    finally:
        for f in list(library.filters):
            library.removeFilter(f)
    assert buf.getvalue().splitlines() == ["WARNING Invalid HTTP request received.|None"]
    assert len(library.filters) == 0


# ------------------------------------------------------------ failed accepts


def accept_failure(code: int = errno.EMFILE) -> dict[str, Any]:
    """What asyncio's ``_accept_connection`` hands the exception handler."""
    return {
        "message": "socket.accept() out of system resource",
        "exception": OSError(code, "Too many open files"),
        "socket": object(),
    }


def test_an_accept_retried_after_shutdown_is_not_an_error() -> None:
    """asyncio retries a failed accept a second later; at shutdown the retry
    may run on the closed socket (EBADF): seen once in CI as an ERROR."""
    message = (
        "Exception in callback BaseSelectorEventLoop._start_serving(<function Server>, "
        "<socket.socket fd=-1>, None, <Server sockets=()>, 2048, None, None)"
    )
    retry = {"message": message, "exception": ValueError("Invalid file descriptor: -1")}
    assert is_accept_after_close(retry)
    assert is_accept_after_close(
        {
            "message": message.replace("_start_serving", "_accept_connection"),
            "exception": OSError(errno.EBADF, "Bad file descriptor"),
        }
    )
    open_server = message.replace("<Server sockets=()>", "<Server sockets=(<s>,)>")
    assert not is_accept_after_close({**retry, "message": open_server})
    assert not is_accept_after_close({**retry, "message": "Exception in callback other()"})
    assert not is_accept_after_close({**retry, "exception": OSError(errno.EMFILE, "x")})


def test_failed_accepts_are_recognised_and_nothing_else() -> None:
    assert is_accept_failure(accept_failure())
    assert is_accept_failure({"exception": OSError(errno.ENFILE, "x"), "socket": object()})
    assert not is_accept_failure({"message": "Task exception was never retrieved"})
    assert not is_accept_failure({"exception": OSError(errno.ECONNRESET, "x"), "socket": 1})


async def test_a_flood_of_failed_accepts_logs_one_line_without_a_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    loop = asyncio.get_running_loop()
    previous = loop.get_exception_handler()
    loop.set_exception_handler(None)
    try:
        install(loop, 10)
        caplog.set_level(logging.INFO)
        for _ in range(80_000):
            loop.call_exception_handler(accept_failure())
        mine = [r for r in caplog.records if r.name == "mmk.connections"]
        assert len(mine) == 1 and mine[0].levelno == logging.WARNING
        assert mine[0].exc_info is None and "Too many open files" in mine[0].getMessage()
        # anything else still reaches asyncio's default handler, as an error
        loop.call_exception_handler({"message": "something else broke"})
        assert [r.getMessage() for r in caplog.records if r.name == "asyncio"] == [
            "something else broke"
        ]
    finally:
        loop.set_exception_handler(previous)


async def test_installing_keeps_a_handler_already_set() -> None:
    loop = asyncio.get_running_loop()
    previous = loop.get_exception_handler()

    def theirs(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        pass

    loop.set_exception_handler(theirs)
    try:
        install(loop, 10)
        assert loop.get_exception_handler() is theirs
    finally:
        loop.set_exception_handler(previous)


# ------------------------------------------------------------ mmk serve


def test_serve_hands_uvicorn_the_protocols_with_the_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    kwargs = served_with(monkeypatch, "MMK_MAX_CONNECTIONS", None)
    assert kwargs["http"] == "api.fast.http_protocol:HttpProtocol"
    assert kwargs["ws"] == "api.fast.ws_protocol:WebSocketProtocol"
    # the ceiling is ours, at accept: uvicorn's refuses only after the headers
    assert kwargs.get("limit_concurrency") is None


def test_serve_trusts_no_proxy_unless_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """uvicorn's own default trusts loopback's X-Forwarded-For; `mmk serve`
    reads no proxy header unless MMK_FORWARDED_ALLOW_IPS names the proxies
    (docs/decisions/0052)."""
    kwargs = served_with(monkeypatch, "MMK_FORWARDED_ALLOW_IPS", None)
    assert kwargs["proxy_headers"] is False
    assert kwargs["forwarded_allow_ips"] == ""
    kwargs = served_with(monkeypatch, "MMK_FORWARDED_ALLOW_IPS", " 172.31.240.0/24, ::1 ")
    assert kwargs["proxy_headers"] is True
    assert kwargs["forwarded_allow_ips"] == "172.31.240.0/24,::1"


@pytest.mark.parametrize(
    ("raw", "kept"),
    [
        (None, None),
        ("", None),
        (" , ", None),
        ("*", "*"),
        ("10.0.0.2", "10.0.0.2"),
        ("172.31.240.0/24, 2001:db8::/64", "172.31.240.0/24,2001:db8::/64"),
    ],
)
def test_the_trusted_proxies_setting(raw: str | None, kept: str | None) -> None:
    env = {} if raw is None else {"MMK_FORWARDED_ALLOW_IPS": raw}
    assert Settings.from_env(env).forwarded_allow_ips == kept


@pytest.mark.parametrize("raw", ["proxy.example", "10.0.0.5/24", "10.0.0.0/33", "unix:/tmp/x"])
def test_a_trusted_proxy_that_is_no_address_stops_the_server(raw: str) -> None:
    """uvicorn keeps such an item as a literal no TCP peer ever matches, or
    (a network with host bits) as a literal too: a silent misconfiguration."""
    with pytest.raises(SettingsError, match="MMK_FORWARDED_ALLOW_IPS"):
        Settings.from_env({"MMK_FORWARDED_ALLOW_IPS": f"10.0.0.1,{raw}"})


@pytest.mark.parametrize(("raw", "ok"), [(None, True), ("1024", True), ("1023", False)])
def test_the_header_bound_setting(raw: str | None, ok: bool) -> None:
    env = {} if raw is None else {"MMK_MAX_HEADER_BYTES": raw}
    if ok:
        assert Settings.from_env(env).max_header_bytes == int(raw or 16_384)
    else:
        with pytest.raises(SettingsError, match="MMK_MAX_HEADER_BYTES"):
            Settings.from_env(env)
