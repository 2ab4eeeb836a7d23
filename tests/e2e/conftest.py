"""A real server for end-to-end tests: ``mmk serve`` (uvicorn) in a child
process on a free port, with its own SQLite file and the in-process bus."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.e2e.client import ISSUED_TOKENS, SECRET_PREFIX, Api

START_TIMEOUT = 20.0  # seconds for /healthz to answer
STOP_TIMEOUT = 10.0  # seconds between SIGTERM and SIGKILL
START_ATTEMPTS = 3
ROOT = Path(__file__).resolve().parents[2]
# What the server's log must never show, however the tests poked it.
SIGNS_OF_FAILURE = (
    "Traceback",
    "internal error",
    "stopped on an error",
    "Exception in ASGI",
    SECRET_PREFIX,
)


@dataclass(frozen=True)
class Server:
    base_url: str
    ws_url: str
    log: Path

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _listening_inodes(port: int) -> set[str]:
    """The inodes of the sockets listening on loopback ``port`` (Linux)."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                found.add(fields[9])
    return found


def _holds(pid: int, inodes: set[str]) -> bool:
    """Whether process ``pid`` has one of these sockets open."""
    try:
        fds = list(Path(f"/proc/{pid}/fd").iterdir())
    except OSError:
        return False
    wanted = {f"socket:[{inode}]" for inode in inodes}
    for fd in fds:
        try:
            if os.readlink(fd) in wanted:
                return True
        except OSError:
            continue
    return False


def _wait_healthy(proc: subprocess.Popen[bytes], url: str, server: Server) -> None:
    """``/healthz`` answers 200 from this server: when the answer comes from a
    process that holds the port and is not ``proc`` (another test's server
    took the port between ``_free_port`` and the bind), the start failed
    (RuntimeError: the caller tries another port)."""
    deadline = time.monotonic() + START_TIMEOUT
    last: Exception | None = None
    port = int(url.rsplit(":", 1)[1])
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(
                f"the server exited with {proc.returncode} before it was healthy:\n"
                f"{server.log_tail()}"
            )
        try:
            if httpx.get(f"{url}/healthz", timeout=1.0, trust_env=False).status_code == 200:
                if sys.platform != "linux" or _holds(proc.pid, _listening_inodes(port)):
                    return
                raise RuntimeError(f"port {port} answers, but from another process")
        except httpx.HTTPError as e:
            last = e
        time.sleep(0.05)
    raise RuntimeError(
        f"the server is not healthy after {START_TIMEOUT} s ({last}):\n{server.log_tail()}"
    )


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(STOP_TIMEOUT)


def launch(
    directory: Path,
    env: dict[str, str],
    database_url: str,
    redis_url: str | None = None,
    preexec: Callable[[], None] | None = None,
) -> tuple[subprocess.Popen[bytes], Server]:
    """``mmk serve`` (the production entry point, as `make run`: JSON logs,
    uvicorn with the project's WebSocket protocol) on a free port, logging to
    ``directory``/server.log; a port taken in between by someone else just
    means another try. ``preexec`` runs in the child before the server (e.g.
    a lower descriptor limit)."""
    log = directory / "server.log"
    for attempt in range(1, START_ATTEMPTS + 1):
        port = _free_port()
        cmd = [sys.executable, "-m", "api.cli", "serve", "--host", "127.0.0.1"]
        cmd += ["--port", str(port), "--database", database_url]
        cmd += ["--redis", redis_url] if redis_url else []
        srv = Server(f"http://127.0.0.1:{port}", f"ws://127.0.0.1:{port}/graphql", log)
        with log.open("ab") as out:
            proc = subprocess.Popen(
                cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, preexec_fn=preexec
            )
        try:
            _wait_healthy(proc, srv.base_url, srv)
        except RuntimeError:
            _stop(proc)
            if attempt == START_ATTEMPTS:
                raise
            continue
        except BaseException:
            _stop(proc)
            raise
        return proc, srv
    raise AssertionError("unreachable")


MEASURED_NOT_REFUSED = {"MMK_RATE_QUERY_COST_TOKEN": str(10**12)}
"""A test server's work budget per token: on (every request is measured and
charged, docs/decisions/0049) but never refusing, as the tests' players and
bots play far faster than people (tests/e2e/test_abuse.py tests the budgets
at their defaults)."""


def _start(tmp: Path) -> tuple[subprocess.Popen[bytes], Server]:
    """The session's server: the embedded default (SQLite, in-process bus)."""
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp}/e2e.sqlite3",
        "MMK_WORKERS": "1",
        "MMK_LOG_LEVEL": "info",
        "MMK_GRAPHIQL": "true",
        # Every test's clients share one address (loopback): the per-IP cost
        # budget would count the whole session as one client (the budgets
        # have tests of their own: tests/e2e/test_abuse.py).
        "MMK_RATE_QUERY_COST_IP": "0",
        **MEASURED_NOT_REFUSED,
    }
    env.pop("REDIS_URL", None)  # the embedded default: in-process bus
    return launch(tmp, env, env["DATABASE_URL"])


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One server process for the session, stopped afterwards whatever
    happens; every test makes its own players and games, so they do not
    interfere."""
    proc, srv = _start(tmp_path_factory.mktemp("e2e"))
    try:
        yield srv
    finally:
        _stop(proc)
    if proc.returncode not in (0, -signal.SIGTERM):
        pytest.fail(f"the server ended with {proc.returncode}:\n{srv.log_tail()}")
    # Clients got coded errors; the server itself must not have failed, nor
    # written down a secret: a token, a private message's text.
    text = srv.log.read_text(errors="replace")
    for sign in (*SIGNS_OF_FAILURE, *ISSUED_TOKENS):
        if sign in text:
            at = text.index(sign)
            pytest.fail(f"the server log shows {sign!r}:\n{text[max(0, at - 2000) : at + 2000]}")


@pytest.fixture
async def http(server: Server) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=10.0, trust_env=False) as client:
        yield client


@pytest.fixture
def api(http: httpx.AsyncClient) -> Api:
    return Api(http)


# The Node clients' build (tests/node), once per test session and worker.
from tests.e2e.node_build import built, node  # noqa: E402

__all__ = ["api", "built", "http", "node", "server"]
