"""The sessions' ``lastUsedAt``, written in one batch every ``interval``
seconds on every instance (issue #24): a sign-in only notes its session."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from infra.periodic import Periodic


class SessionUseWriter(Periodic):
    """Calls ``write`` at start and then every ``interval`` seconds."""

    done_level = logging.DEBUG  # every minute on a busy server: not news

    def __init__(self, write: Callable[[], Awaitable[int]], interval: float) -> None:
        super().__init__("session use", write, interval, "marked %d session(s) used")
