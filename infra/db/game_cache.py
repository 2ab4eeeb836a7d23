"""Committed games kept in memory by id and version: a read of a game still
at the cached version skips reading and decoding its state (the version is
still read from the database, so another process's change is never missed);
an optimistic read (``take``) skips even that, for a caller that confirms
what it finds (``GameRepository.get_known``)."""

from __future__ import annotations

import threading
from collections import OrderedDict

from domain.records import GameRecord

DEFAULT_SIZE = 2_048


class GameCache:
    """A bounded, thread-safe LRU of committed game records. In, it keeps the
    record it is given, which its giver no longer touches (a record saved
    and committed is the repository's: ``GameRepository.save``); out, a copy
    (``get``) or the record itself, no longer kept (``take``)."""

    def __init__(self, size: int = DEFAULT_SIZE) -> None:
        self._size = size
        self._games: OrderedDict[str, GameRecord] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0

    def get(self, game_id: str, version: int) -> GameRecord | None:
        with self._lock:
            game = self._games.get(game_id)
            if game is None or game.version != version:
                return None
            self._games.move_to_end(game_id)
            self.hits += 1
            # Under the lock: once released, a ``take`` may hand the record
            # to a change that alters it while it is being copied.
            return game.clone()

    def take(self, game_id: str) -> GameRecord | None:
        """Whatever version is kept (maybe behind the stored one), handed over
        and no longer kept: the taker may change it, and puts it back only
        by committing it. [decision] Taken, not copied: a copy per move cost
        ~2.5% of it; a rolled-back change costs the next read a full one."""
        with self._lock:
            game = self._games.pop(game_id, None)
            if game is not None:
                self.hits += 1
        return game

    def put(self, game: GameRecord) -> None:
        """Only committed records: a rolled-back change must never be served.
        [decision] Kept as given, not copied: a copy per move cost ~3% of it."""
        with self._lock:
            current = self._games.get(game.id)
            if current is not None and current.version > game.version:
                return  # a newer version got here first
            self._games[game.id] = game
            self._games.move_to_end(game.id)
            if len(self._games) > self._size:
                self._games.popitem(last=False)
