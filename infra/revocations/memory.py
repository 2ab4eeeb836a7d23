"""Revocation notices in one process (the embedded default): every listener
hears a notice while it is announced; nothing is ever lost, so nothing is
ever checked again."""

from __future__ import annotations

import logging
from collections.abc import Callable

from domain.ports import RevocationListener

log = logging.getLogger("mmk.revocations")


class InProcessRevocations:
    def __init__(self) -> None:
        self._listeners: list[RevocationListener] = []

    def listen(self, listener: RevocationListener) -> Callable[[], None]:
        self._listeners.append(listener)

        def stop() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return stop

    async def announce(self, digest: str) -> None:
        self._tell(digest)

    def _tell(self, digest: str) -> None:
        """Every listener hears it; one that fails does not keep it from the others."""
        for listener in tuple(self._listeners):
            try:
                listener.revoked(digest)
            except Exception:
                log.exception("revocations: a listener failed on a notice")

    def _missed(self) -> None:
        for listener in tuple(self._listeners):
            try:
                listener.missed()
            except Exception:
                log.exception("revocations: a listener failed to check again")

    def start(self) -> None:
        """Nothing runs in the background here."""

    async def aclose(self) -> None:
        self._listeners.clear()
