"""Connection hygiene against a real ``mmk serve`` (issues #14 and #22,
docs/decisions/0044 and 0052): read timeouts, ``connection_init`` timeouts,
the per-IP caps, the WebSocket message rate, the process ceiling, the bound
on a request's line and headers, and no proxy trusted unless named, with the
limits lowered by settings so that each shows within a second or two.

Loopback is all of 127.0.0.0/8: each test connects from addresses of its
own (``127.0.0.N``), so the per-IP counts of one test never touch another's.
A socket that a limit does not close would stay open: each check waits a
few seconds at most, then fails."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import resource
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.typing import Subprotocol

from tests.e2e.client import metric
from tests.e2e.conftest import Server, _stop, launch
from tests.e2e.own_server import assert_no_leak, log_records, own_server
from tests.e2e.wsclient import LEGACY_WS, TRANSPORT_WS

pytestmark = pytest.mark.timeout(60)

TIMEOUT = 1  # MMK_HEADER_TIMEOUT, MMK_BODY_TIMEOUT, MMK_WS_INIT_TIMEOUT
PER_IP, WS_PER_IP, CEILING, RATE = 3, 2, 8, 20
HEAD_LIMIT = 4096  # MMK_MAX_HEADER_BYTES
MUTATIONS_PER_IP = 3  # MMK_RATE_MUTATIONS_IP, a minute
WAIT = 4.0  # seconds a check waits for the server to close a socket
LIMITS = {
    "MMK_HEADER_TIMEOUT": str(TIMEOUT),
    "MMK_BODY_TIMEOUT": str(TIMEOUT),
    "MMK_WS_INIT_TIMEOUT": str(TIMEOUT),
    "MMK_MAX_CONNECTIONS_PER_IP": str(PER_IP),
    "MMK_MAX_WS_PER_IP": str(WS_PER_IP),
    "MMK_MAX_CONNECTIONS": str(CEILING),
    "MMK_WS_MESSAGE_RATE": str(RATE),
    "MMK_MAX_HEADER_BYTES": str(HEAD_LIMIT),
    "MMK_RATE_MUTATIONS_IP": str(MUTATIONS_PER_IP),
    "MMK_CONNECTION_LOG_INTERVAL": "60",  # one line of each kind in the module
    # No MMK_FORWARDED_ALLOW_IPS: loopback is no trusted proxy (the default),
    # its connections are counted per IP.
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("hygiene")
    with own_server(tmp, f"sqlite:///{tmp}/hygiene.sqlite3", **LIMITS) as (srv, _):
        yield srv
    assert_no_leak(srv)
    records = log_records(srv)
    assert not [r for r in records if r["level"] in ("ERROR", "CRITICAL")], records[-5:]
    assert not [r for r in records if "exception" in r], "no traceback"


def port_of(server: Server) -> int:
    return int(server.base_url.rsplit(":", 1)[1])


def raw(server: Server, source: str) -> socket.socket:
    """A TCP connection to the server from the loopback address ``source``."""
    sock = socket.create_connection(("127.0.0.1", port_of(server)), 5, (source, 0))
    sock.settimeout(WAIT)
    return sock


def closed_within(sock: socket.socket, low: float, high: float) -> bytes:
    """What the server sent before closing ``sock``, which it must do
    between ``low`` and ``high`` seconds from now."""
    start, got = time.monotonic(), b""
    sock.settimeout(high)
    try:
        while chunk := sock.recv(4096):
            got += chunk
    except TimeoutError:
        pytest.fail(f"still open after {high} s (got {got!r})")
    except ConnectionResetError:
        pass
    took = time.monotonic() - start
    assert low <= took <= high, f"closed after {took:.2f} s"
    return got


def held(server: Server, source: str) -> socket.socket:
    """A kept-alive connection after one whole request: open until the
    keep-alive timeout (75 s)."""
    sock = raw(server, source)
    sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    response = b""
    while b"\r\n\r\n" not in response or not response.endswith(b"}"):  # all of it
        chunk = sock.recv(4096)
        assert chunk, f"closed after {response!r}"
        response += chunk
    assert response.startswith(b"HTTP/1.1 200"), "the request was not served"
    return sock


async def served(server: Server, source: str) -> int:
    transport = httpx.AsyncHTTPTransport(local_address=source)
    async with httpx.AsyncClient(transport=transport, trust_env=False, timeout=5) as client:
        return (await client.get(f"{server.base_url}/healthz")).status_code


async def served_again(server: Server, source: str, within: float = 30.0) -> int:
    """The status of a request that is answered within ``within`` seconds,
    tried again while it times out: a server out of descriptors accepts
    again once it has closed what its clients closed, and asyncio retries
    ``accept()`` a second after each failure, so on a busy machine the first
    try may wait longer than one request's timeout."""
    deadline = time.monotonic() + within
    while True:
        try:
            return await served(server, source)
        except httpx.TimeoutException:
            if time.monotonic() > deadline:
                raise


def ws(server: Server, protocol: str, source: str) -> connect:
    return connect(
        server.ws_url,
        subprotocols=[Subprotocol(protocol)],
        local_addr=(source, 0),
        open_timeout=5,
        ping_interval=None,
    )


async def close_code(conn: ClientConnection, within: float) -> int | None:
    """The code the server closes ``conn`` with within ``within`` seconds."""
    try:
        async with asyncio.timeout(within):
            while True:
                await conn.recv()
    except ConnectionClosed as e:
        return e.rcvd.code if e.rcvd else None
    except TimeoutError:
        pytest.fail(f"the WebSocket is still open after {within} s")


async def initialised(conn: ClientConnection) -> ClientConnection:
    await conn.send(json.dumps({"type": "connection_init"}))
    ack = json.loads(await asyncio.wait_for(conn.recv(), 5))
    assert ack["type"] == "connection_ack", ack
    return conn


# ------------------------------------------------------------ read timeouts


def test_a_connection_without_complete_headers_is_closed_at_the_timeout(server: Server) -> None:
    silent, slow = raw(server, "127.0.0.11"), raw(server, "127.0.0.11")
    slow.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")  # never the blank line
    assert closed_within(silent, TIMEOUT / 2, TIMEOUT + 2) == b""
    assert closed_within(slow, 0, 2) == b""
    # a kept-alive connection's next request is timed from its first byte
    kept = held(server, "127.0.0.11")
    time.sleep(TIMEOUT + 0.2)  # idle between requests: the keep-alive timeout's
    kept.sendall(b"GET /heal")
    assert closed_within(kept, TIMEOUT / 2, TIMEOUT + 2) == b""


def test_a_request_whose_body_trickles_is_closed_at_the_timeout(server: Server) -> None:
    sock = raw(server, "127.0.0.12")
    sock.sendall(
        b"POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: 100\r\n\r\n{"
    )
    assert closed_within(sock, TIMEOUT / 2, TIMEOUT + 2) == b""


# ------------------------------------------------------ connection_init


@pytest.mark.parametrize("protocol", [LEGACY_WS, TRANSPORT_WS])
async def test_a_websocket_without_connection_init_is_closed_at_the_timeout(
    server: Server, protocol: str
) -> None:
    async with (
        ws(server, protocol, "127.0.0.13") as quiet,
        ws(server, protocol, "127.0.0.13") as ok,
    ):
        await initialised(ok)
        start = time.monotonic()
        assert await close_code(quiet, TIMEOUT + 3) == 4408
        assert time.monotonic() - start >= TIMEOUT - 0.5
        await asyncio.wait_for(await ok.ping(), 5)  # an initialised one stays open


# ------------------------------------------------------------ per-IP caps


async def test_a_connection_over_the_per_ip_cap_is_refused_while_others_are_served(
    server: Server,
) -> None:
    holders = [held(server, "127.0.0.21") for _ in range(PER_IP)]
    try:
        extra = raw(server, "127.0.0.21")
        refusal = closed_within(extra, 0, 2)
        head, _, body = refusal.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 429"), refusal
        assert json.loads(body)["errors"][0]["extensions"]["code"] == "RATE_LIMITED"
        assert await served(server, "127.0.0.22") == 200  # another client
    finally:
        for sock in holders:
            sock.close()
    await asyncio.sleep(0.3)
    assert await served(server, "127.0.0.21") == 200  # its place is free again


async def test_a_websocket_over_the_per_ip_cap_is_refused(server: Server) -> None:
    async with ws(server, TRANSPORT_WS, "127.0.0.23") as a, ws(server, TRANSPORT_WS, "127.0.0.23"):
        with pytest.raises(InvalidStatus) as refused:
            async with ws(server, TRANSPORT_WS, "127.0.0.23"):
                pass
        assert refused.value.response.status_code == 429
        assert b"RATE_LIMITED" in refused.value.response.body
        async with ws(server, TRANSPORT_WS, "127.0.0.24") as other:  # another client
            await initialised(other)
        await initialised(a)


# ------------------------------------------------------------ message rate


async def test_a_ping_flood_closes_the_websocket_and_spares_the_others(server: Server) -> None:
    async with (
        ws(server, TRANSPORT_WS, "127.0.0.31") as flood,
        ws(server, TRANSPORT_WS, "127.0.0.32") as calm,
    ):
        await initialised(flood)
        await initialised(calm)
        try:
            for _ in range(RATE * 5):
                await flood.ping()
        except (ConnectionClosed, OSError):
            pass  # the server closed it mid-flood: a later ping met a closed socket
        code = await close_code(flood, WAIT)
        # 1008 as sent; None when the client's own failed write ended the
        # connection before it read the close frame (the log below says why)
        assert code in (1008, None), code
        for _ in range(RATE // 2):  # a calm client's pace stays under the rate
            await asyncio.wait_for(await calm.ping(), 5)
    assert any("frames a second" in r["message"] for r in log_records(server))


# ------------------------------------------------------------ request heads


def head(size: int, *extra: bytes, path: bytes = b"/healthz") -> bytes:
    """A GET whose request line and headers (``extra`` header lines
    included) are ``size`` bytes, blank line included."""
    start = b"GET " + path + b" HTTP/1.1\r\nHost: x\r\n" + b"".join(h + b"\r\n" for h in extra)
    start += b"X-Pad: "
    return start + b"a" * (size - len(start) - 4) + b"\r\n\r\n"


UPGRADE = (
    b"Upgrade: websocket",
    b"Connection: Upgrade",
    b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
    b"Sec-WebSocket-Version: 13",
)


def assert_431(got: bytes) -> None:
    status, _, body = got.partition(b"\r\n\r\n")
    assert status.startswith(b"HTTP/1.1 431 "), got[:300]
    (error,) = json.loads(body)["errors"]
    assert error["extensions"]["code"] == "BAD_INPUT" and f"{HEAD_LIMIT:,}" in error["message"]


def flood(server: Server, source: str, size: int) -> bytes:
    """Sends a request with a ``size``-byte header; what came back (the
    server may reset the connection while the header is still going out)."""
    sock = raw(server, source)
    got = b""
    with contextlib.suppress(OSError):
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Pad: " + b"a" * size + b"\r\n\r\n")
    with contextlib.suppress(OSError):
        while chunk := sock.recv(4096):
            got += chunk
    sock.close()
    return got


async def rss(server: Server) -> float:
    async with httpx.AsyncClient(base_url=server.base_url, trust_env=False, timeout=5) as http:
        return float(await metric(http, "process_resident_memory_bytes"))


async def test_a_request_head_over_the_limit_is_refused_with_431(server: Server) -> None:
    """Counted as the bytes arrive: on a new connection, on a kept-alive
    one's next request, on a WebSocket upgrade; a head of exactly the limit
    is served."""
    exact = raw(server, "127.0.0.51")
    exact.sendall(head(HEAD_LIMIT, b"Connection: close"))
    assert closed_within(exact, 0, 2).startswith(b"HTTP/1.1 200 ")
    over = raw(server, "127.0.0.51")
    over.sendall(head(HEAD_LIMIT + 1))
    assert_431(closed_within(over, 0, 2))
    kept = held(server, "127.0.0.51")
    kept.sendall(head(HEAD_LIMIT + 1))
    assert_431(closed_within(kept, 0, 2))
    upgrade = raw(server, "127.0.0.51")
    upgrade.sendall(head(HEAD_LIMIT + 1, *UPGRADE, path=b"/graphql"))
    assert_431(closed_within(upgrade, 0, 2))

    # The trial's: 16 MB of header was read whole and answered 200; 45 MB on
    # each of 4 connections took ~80 MB of the server's memory. Now each is
    # refused after HEAD_LIMIT bytes (a reset may come before the 431).
    before = await rss(server)
    sources = [f"127.0.0.{52 + i}" for i in range(4)]
    answers = await asyncio.gather(
        *(asyncio.to_thread(flood, server, source, 16 << 20) for source in sources)
    )
    for got in answers:
        assert not got.startswith(b"HTTP/1.1 200"), got[:100]
        if got:
            assert_431(got)
    assert await rss(server) - before < 16 << 20, "the server kept the headers"
    assert await served(server, "127.0.0.56") == 200
    lines = [r for r in log_records(server) if "request refused (431)" in r["message"]]
    assert len(lines) == 1, lines  # one line an interval (MMK_CONNECTION_LOG_INTERVAL)


def test_requests_that_do_not_parse_get_coded_400s_and_one_log_line(server: Server) -> None:
    """uvicorn answered each in plain text and logged a warning each time."""
    for _ in range(20):
        sock = raw(server, "127.0.0.57")
        sock.sendall(b"NOT HTTP\r\n\r\n")
        status, _, body = closed_within(sock, 0, 2).partition(b"\r\n\r\n")
        assert status.startswith(b"HTTP/1.1 400 "), status
        assert json.loads(body)["errors"][0]["extensions"]["code"] == "BAD_INPUT"
    lines = [r for r in log_records(server) if "Invalid HTTP request" in r["message"]]
    assert [(r["logger"], r["level"]) for r in lines] == [("mmk.connections", "WARNING")]


# ------------------------------------------------------------ proxy trust


async def test_x_forwarded_for_from_a_peer_not_named_is_ignored(server: Server) -> None:
    """Without MMK_FORWARDED_ALLOW_IPS no peer is a proxy, loopback
    included (uvicorn's default trusted it): a client rotating
    X-Forwarded-For is still one address, and its per-IP budget holds."""
    transport = httpx.AsyncHTTPTransport(local_address="127.0.0.71")
    async with httpx.AsyncClient(
        base_url=server.base_url, transport=transport, trust_env=False, timeout=5
    ) as http:
        codes = []
        for i in range(MUTATIONS_PER_IP + 1):
            r = await http.post(
                "/graphql",
                json={"query": 'mutation { createPlayer(name: "xff") { __typename } }'},
                headers={"x-forwarded-for": f"198.51.100.{i + 1}"},
            )
            errors = r.json().get("errors") or [{"extensions": {"code": None}}]
            codes.append(errors[0]["extensions"]["code"])
    assert codes == [None] * MUTATIONS_PER_IP + ["RATE_LIMITED"], codes


# ------------------------------------------------------------ ceiling


async def test_over_the_process_ceiling_a_connection_is_refused_until_one_closes(
    server: Server,
) -> None:
    await asyncio.sleep(0.5)  # earlier tests' connections are gone
    sources = [f"127.0.0.{41 + i // PER_IP}" for i in range(CEILING)]
    holders = [held(server, source) for source in sources]
    try:
        refusal = closed_within(raw(server, "127.0.0.49"), 0, 2)
        assert refusal.startswith(b"HTTP/1.1 503"), refusal
        assert b"RATE_LIMITED" in refusal
        holders.pop().close()
        await asyncio.sleep(0.3)
        assert await served(server, "127.0.0.49") == 200
    finally:
        for sock in holders:
            sock.close()


# ------------------------------------------------------------ out of descriptors

DESCRIPTORS = 64  # the server's soft RLIMIT_NOFILE in the test below


def fewer_descriptors() -> None:
    """In the server's process, before it starts."""
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (DESCRIPTORS, hard))


async def test_failed_accepts_are_logged_once_an_interval_without_a_traceback(
    tmp_path: Path,
) -> None:
    """With a ceiling above the descriptor limit (as if misconfigured),
    ``accept()`` fails over and over: one warning line, and the server
    serves again once descriptors are free."""
    limits = {
        "MMK_MAX_CONNECTIONS": "100000",
        "MMK_MAX_CONNECTIONS_PER_IP": "0",
        "MMK_HEADER_TIMEOUT": "60",
        "MMK_CONNECTION_LOG_INTERVAL": "60",
    }
    db = f"sqlite:///{tmp_path}/fds.sqlite3"
    env = {**os.environ, "DATABASE_URL": db, "MMK_WORKERS": "1", **limits}
    env.pop("REDIS_URL", None)
    proc, srv = launch(tmp_path, env, db, preexec=fewer_descriptors)
    try:
        socks = [raw(srv, "127.0.0.61") for _ in range(DESCRIPTORS + 16)]
        deadline = time.monotonic() + 30  # accept() fails, ~2,000 times a try
        while "accept() failed" not in srv.log.read_text(errors="replace"):
            assert time.monotonic() < deadline, "accept() never failed"
            await asyncio.sleep(0.05)
        for sock in socks:
            sock.close()
        assert await served_again(srv, "127.0.0.62") == 200  # asyncio tries again after 1 s
    finally:
        _stop(proc)
    records = log_records(srv)
    failed = [r for r in records if r["message"].startswith("accept() failed")]
    assert len(failed) == 1, [r["message"] for r in records][-5:]
    assert failed[0]["level"] == "WARNING" and "Too many open files" in failed[0]["message"]
    assert not [r for r in records if r["level"] in ("ERROR", "CRITICAL")], records[-3:]
    assert not [r for r in records if "exception" in r], "no traceback"
