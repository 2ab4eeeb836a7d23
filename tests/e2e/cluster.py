"""Several ``mmk serve`` processes on one PostgreSQL database and one Redis:
the scale-out set-up of ``tests/e2e/test_scale_out.py`` and of the scale
benchmark (``tests/bench/test_scale_bench.py``).

Each instance is ``python -m api.cli serve`` (the production entry point, as
in ``tests/e2e/conftest.py``) on its own free port, with the same
``DATABASE_URL``, ``REDIS_URL`` and ``MMK_CHANNEL_PREFIX``. An instance is
ready once ``/healthz`` and ``/readyz`` (database and bus reachable) answer
200. :func:`cluster` always stops what it started, then checks every log for
signs of failure (a traceback, a token, a private message's text).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from tests.e2e.client import ISSUED_TOKENS
from tests.e2e.conftest import (
    ROOT,
    SIGNS_OF_FAILURE,
    START_ATTEMPTS,
    START_TIMEOUT,
    Server,
    _free_port,
    _stop,
    _wait_healthy,
)
from tests.integration.databases import fresh_postgres

KILL_TIMEOUT = 10.0  # seconds for a SIGKILLed process to be reaped


def channel_prefix(tag: str) -> str:
    """A bus channel prefix no other run shares (runs on one Redis never collide)."""
    return f"mmk-test-{tag}-{uuid.uuid4().hex[:12]}:"


@dataclass
class Instance:
    """One server process (uvicorn; with ``workers`` > 1 the supervisor)."""

    name: str
    server: Server
    proc: subprocess.Popen[bytes]
    killed: bool = False

    @property
    def base_url(self) -> str:
        return self.server.base_url

    @property
    def ws_url(self) -> str:
        return self.server.ws_url

    @property
    def pid(self) -> int:
        return self.proc.pid

    def kill(self) -> None:
        """SIGKILL, by pid: the process dies on the spot, mid-whatever."""
        self.killed = True
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(KILL_TIMEOUT)

    def stop(self) -> None:
        """SIGTERM (uvicorn shuts down cleanly), SIGKILL after a while."""
        _stop(self.proc)

    def check(self) -> None:
        """It ended cleanly (unless killed) and its log shows no failure."""
        if not self.killed:
            assert self.proc.returncode in (0, -signal.SIGTERM), (
                f"instance {self.name} ended with {self.proc.returncode}:\n{self.server.log_tail()}"
            )
        text = self.server.log.read_text(errors="replace")
        for sign in (*SIGNS_OF_FAILURE, *ISSUED_TOKENS):
            if sign in text:
                at = text.index(sign)
                raise AssertionError(
                    f"the log of instance {self.name} shows {sign!r}:\n"
                    f"{text[max(0, at - 2000) : at + 2000]}"
                )


@dataclass(frozen=True)
class Backend:
    """What every instance of a cluster shares."""

    database_url: str
    redis_url: str
    prefix: str
    extra_env: dict[str, str] = field(default_factory=dict)

    def env(self, workers: int) -> dict[str, str]:
        return {
            **os.environ,
            "DATABASE_URL": self.database_url,
            "REDIS_URL": self.redis_url,
            "MMK_CHANNEL_PREFIX": self.prefix,
            "MMK_WORKERS": str(workers),
            "MMK_LOG_LEVEL": "info",
            "MMK_GRAPHIQL": "false",
            # measured and charged, never refused: the tests play fast from
            # one address (tests/e2e/test_abuse.py tests the budgets)
            "MMK_RATE_QUERY_COST_TOKEN": str(10**12),
            "MMK_RATE_QUERY_COST_IP": str(10**12),
            **self.extra_env,
        }


def _launch(
    name: str, backend: Backend, directory: Path, workers: int
) -> tuple[subprocess.Popen[bytes], Server]:
    port = _free_port()
    log = directory / f"{name}.log"
    srv = Server(f"http://127.0.0.1:{port}", f"ws://127.0.0.1:{port}/graphql", log)
    cmd = [sys.executable, "-m", "api.cli", "serve", "--host", "127.0.0.1", "--port", str(port)]
    cmd += ["--database", backend.database_url, "--redis", backend.redis_url]
    cmd += ["--workers", str(workers)]
    with log.open("ab") as out:
        proc = subprocess.Popen(
            cmd, cwd=ROOT, env=backend.env(workers), stdout=out, stderr=subprocess.STDOUT
        )
    return proc, srv


def wait_ready(
    proc: subprocess.Popen[bytes], server: Server, timeout: float = START_TIMEOUT
) -> None:
    """``/healthz`` then ``/readyz`` answer 200 (the database and the bus are up)."""
    _wait_healthy(proc, server.base_url, server)
    deadline = time.monotonic() + timeout
    last = ""
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with {proc.returncode}:\n{server.log_tail()}")
        try:
            r = httpx.get(f"{server.base_url}/readyz", timeout=2.0, trust_env=False)
            if r.status_code == 200:
                return
            last = r.text
        except httpx.HTTPError as e:
            last = str(e)
        time.sleep(0.05)
    raise RuntimeError(f"/readyz is not 200 after {timeout} s ({last}):\n{server.log_tail()}")


def start_instances(
    names: Sequence[str], backend: Backend, directory: Path, workers: int = 1
) -> list[Instance]:
    """Start every instance at once (they migrate the database together: the
    migration's advisory lock makes that safe), then wait until each is
    ready. A port taken in between by someone else means another try."""
    launched = [_launch(n, backend, directory, workers) for n in names]
    started = [proc for proc, _ in launched]
    out: list[Instance] = []
    try:
        for name, (proc, srv) in zip(names, launched, strict=True):
            for attempt in range(1, START_ATTEMPTS + 1):
                try:
                    wait_ready(proc, srv)
                    break
                except RuntimeError:
                    _stop(proc)
                    if attempt == START_ATTEMPTS:
                        raise
                    proc, srv = _launch(name, backend, directory, workers)
                    started.append(proc)
            out.append(Instance(name, srv, proc))
    except BaseException:
        for proc in started:
            _stop(proc)
        raise
    return out


@contextmanager
def fresh_backend(
    database_url: str, redis_url: str, tag: str, **extra_env: str
) -> Iterator[Backend]:
    """A throw-away PostgreSQL database and a channel prefix of this run."""
    with fresh_postgres(database_url) as url:
        yield Backend(url, redis_url, channel_prefix(tag), dict(extra_env))


@contextmanager
def cluster(
    backend: Backend, directory: Path, names: Sequence[str] = ("A", "B"), workers: int = 1
) -> Iterator[list[Instance]]:
    """Instances ``names`` on ``backend``; stopped and checked on exit."""
    instances = start_instances(names, backend, directory, workers)
    with ExitStack() as stack:
        for inst in instances:
            stack.callback(inst.stop)
        yield instances
    for inst in instances:
        inst.check()
