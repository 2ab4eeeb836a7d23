"""Spectators of one process (the embedded default): the local count is
the answer."""

from __future__ import annotations

from infra.spectators.local import LocalSpectators


class InProcessSpectators:
    def __init__(self, local: LocalSpectators) -> None:
        self._local = local

    async def count(self, game_id: str) -> int:
        return self._local.count(game_id)

    def start(self) -> None:
        """Nothing to publish in one process."""

    async def aclose(self) -> None:
        """Nothing held."""
