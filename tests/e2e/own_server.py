"""A server process of a test's own: ``mmk serve`` (as in ``conftest.py``)
with the database and extra environment the test chooses, for fault tests
that need settings (or a database link) the shared session server has not."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.e2e.client import ISSUED_TOKENS
from tests.e2e.conftest import MEASURED_NOT_REFUSED, Server, _stop, launch


@contextmanager
def own_server(
    directory: Path, database_url: str, redis_url: str | None = None, **extra_env: str
) -> Iterator[tuple[Server, subprocess.Popen[bytes]]]:
    """``mmk serve`` on a free port (the in-process bus unless ``redis_url``);
    stopped on exit."""
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "MMK_WORKERS": "1",
        "MMK_LOG_LEVEL": "info",
        **MEASURED_NOT_REFUSED,
        "MMK_RATE_QUERY_COST_IP": str(10**12),
        **extra_env,
    }
    env.pop("REDIS_URL", None)
    proc, srv = launch(directory, env, database_url, redis_url)
    try:
        yield srv, proc
    finally:
        _stop(proc)


def log_records(server: Server) -> list[dict[str, Any]]:
    """The server's JSON log lines (other lines, e.g. the banner, skipped)."""
    out = []
    for line in server.log.read_text(errors="replace").splitlines():
        if line.startswith("{"):
            out.append(json.loads(line))
    return out


def assert_no_leak(server: Server) -> None:
    """No token the tests were given appears in the log, and no ASGI crash."""
    text = server.log.read_text(errors="replace")
    for sign in ("Exception in ASGI", *ISSUED_TOKENS):
        assert sign not in text, f"the server log shows {sign!r}"
