"""In-process presence (the embedded default, one server process): live
subscriptions counted per ``(game, player)``; nothing expires because
nothing outlives the process."""

from __future__ import annotations

from collections import Counter

from domain.presence import Mark


class InProcessPresence:
    def __init__(self) -> None:
        self._live: dict[str, Counter[str]] = {}
        self._marks: dict[str, dict[str, Mark]] = {}

    async def join(self, game_id: str, player_id: str) -> None:
        self._live.setdefault(game_id, Counter())[player_id] += 1

    async def leave(self, game_id: str, player_id: str) -> None:
        live = self._live.get(game_id)
        if live is None or live[player_id] <= 0:
            return
        live[player_id] -= 1
        if live[player_id] == 0:
            del live[player_id]
        if not live:
            del self._live[game_id]

    async def online(self, game_id: str) -> frozenset[str]:
        return frozenset(self._live.get(game_id, ()))

    async def seen(self, game_id: str) -> tuple[frozenset[str], dict[str, Mark]]:
        return await self.online(game_id), dict(self._marks.get(game_id, {}))

    async def swap(self, game_id: str, player_id: str, old: Mark | None, new: Mark) -> bool:
        marks = self._marks.setdefault(game_id, {})
        if marks.get(player_id) != old:
            return False
        marks[player_id] = new
        return True

    def local_games(self) -> set[str]:
        """Games with a live subscription here (the keeper reviews them)."""
        return set(self._live)

    async def heartbeat(self) -> None:
        """Nothing to refresh in one process."""

    def forget(self, game_id: str) -> None:
        """Drop a game's marks (it is over, or nobody is left)."""
        if game_id not in self._live:
            self._marks.pop(game_id, None)

    async def aclose(self) -> None:
        self._live.clear()
        self._marks.clear()
