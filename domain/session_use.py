"""Which sessions signed in lately, noted in memory and written in one batch
now and then (issue #24): ``lastUsedAt`` costs no write per request."""

from __future__ import annotations

from collections.abc import Collection


class SessionUse:
    """The ids of the sessions that signed in since the last :meth:`take`."""

    __slots__ = ("_ids",)

    def __init__(self) -> None:
        self._ids: set[str] = set()

    def note(self, session_id: str) -> None:
        self._ids.add(session_id)

    def take(self) -> Collection[str]:
        """The ids noted so far; from now on, none."""
        ids, self._ids = self._ids, set()
        return ids
