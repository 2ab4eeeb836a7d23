"""`mmk serve` hands uvicorn the settings' event loop (MMK_EVENT_LOOP)."""

from __future__ import annotations

from typing import Any

import pytest

from api import cli
from tests.adapters.test_logs import preserved_logging


@pytest.mark.parametrize(("env", "loop"), [(None, "asyncio"), ("uvloop", "uvloop")])
def test_serve_runs_the_configured_event_loop(
    monkeypatch: pytest.MonkeyPatch, env: str | None, loop: str
) -> None:
    import uvicorn

    seen: dict[str, Any] = {}
    monkeypatch.setattr(uvicorn, "run", lambda *a, **kw: seen.update(kw))
    if env is None:
        monkeypatch.delenv("MMK_EVENT_LOOP", raising=False)
    else:
        monkeypatch.setenv("MMK_EVENT_LOOP", env)
    with preserved_logging():
        assert cli.main(["serve"]) == 0
    assert seen["loop"] == loop
