"""A stored sequence read a page at a time as a stream takes it: a game's
log (``gameEvents``) and a player's notifications replay this way."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from typing import Protocol, TypeVar

from domain.services.deps import Deps


class Numbered(Protocol):
    @property
    def seq(self) -> int: ...


N = TypeVar("N", bound=Numbered)


async def in_pages(
    deps: Deps,
    read: Callable[[int, int], list[N]],
    after: int,
    size: int,
    upto: int | None = None,
) -> AsyncGenerator[N, None]:
    """The items after ``after`` (through ``upto``), ``read(after, size)``
    a transaction at a time as the caller takes them: a long replay never
    reads everything at once (seqs are dense and only appended, so each page
    goes on from the last)."""
    last = after
    while True:

        def page(after: int = last) -> list[N]:
            return read(after, size)

        rows = await deps.run(page)
        for item in rows:
            if upto is not None and item.seq > upto:
                return
            yield item
            last = item.seq
        if len(rows) < size:
            return
