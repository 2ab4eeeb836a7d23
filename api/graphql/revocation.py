"""Open WebSockets and HTTP streams by token, ended when their token is
rotated or revoked, on every instance (docs/decisions/0053).

Each instance keeps a :class:`Ticket` per open WebSocket (from its
``connection_init``) and per HTTP subscription stream of a token, filed by
the token's digest (:func:`~domain.services.auth.token_hash`, never the
token). :class:`OpenTokens` listens to the revocation notices
(``domain.ports.Revocations``): a notice forgets the token in the player
cache and ends each of its tickets. A WebSocket stops its operations and
closes with 4401 and :data:`REVOKED_REASON` (an operation that revoked the
token over that very socket first sends its result); an HTTP stream sends
``UNAUTHENTICATED`` (:data:`REVOKED_MESSAGE`), then completes. When notices
may have been missed, every token with a ticket is checked against the
database and the dead ones are ended likewise.

A ticket is opened before its caller is authenticated, so a revocation
heard between the two still ends it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterable
from contextlib import aclosing

from api.graphql.player_cache import PlayerCache
from domain.services.auth import token_hash
from infra.db.errors import is_unavailable

log = logging.getLogger("mmk.api")

REVOKED_CLOSE = 4401  # graphql-transport-ws's "Unauthorized"; both protocols here
REVOKED_REASON = "token rotated or revoked"
EXPIRED_REASON = "token expired"
REVOKED_MESSAGE = "this token was rotated or revoked: sign in again with a current token"
EXPIRED_MESSAGE = "this token expired: sign in again with a fresh one"
ORIGIN_WAIT = 5.0  # seconds a socket's close waits for the operation that revoked over it

DeadTokens = Callable[[set[str]], Awaitable[set[str]]]
"""Of these digests, those no player holds any more (the database's answer)."""


class Ticket:
    """One open connection or stream of a token; ``end`` ends it (once)."""

    __slots__ = ("_end", "_owner", "digest", "expired", "revoked")

    def __init__(self, owner: OpenTokens, digest: str, end: Callable[[], None]) -> None:
        self._owner, self.digest, self._end = owner, digest, end
        self.revoked = self.expired = False

    def revoke(self) -> None:
        if not self.revoked:
            self.revoked = True
            self._end()

    def expire(self) -> None:
        """The token (a JWT) expired: it ends as a revoked one does."""
        if not self.revoked:
            self.expired = True
            self.revoke()

    @property
    def reason(self) -> str:
        """Why it ended, for a close frame."""
        return EXPIRED_REASON if self.expired else REVOKED_REASON

    def release(self) -> None:
        """The connection or stream ended: forget it."""
        self._owner.drop(self)


def close_reason(ticket: Ticket | None) -> str:
    """The close frame's reason of a connection its token ended."""
    return REVOKED_REASON if ticket is None else ticket.reason


class OpenTokens:
    """This instance's tickets by token digest; a ``RevocationListener``."""

    def __init__(
        self,
        players: PlayerCache,
        dead: DeadTokens,
        foreign: Callable[[str], bool] | None = None,
    ) -> None:
        """``foreign``: a token of the app's identity provider (a JWT: it
        ends at its expiry, and the database has no hash of it to check)."""
        self._players, self._dead, self._foreign = players, dead, foreign
        self._open: dict[str, dict[Ticket, None]] = {}  # digest -> tickets, in order
        self._unchecked: set[str] = set()  # digests of foreign tokens
        self._check: asyncio.Task[None] | None = None
        self._again = False

    def open(self, token: str, end: Callable[[], None]) -> Ticket:
        ticket = Ticket(self, token_hash(token), end)
        self._open.setdefault(ticket.digest, {})[ticket] = None
        if self._foreign is not None and self._foreign(token):
            self._unchecked.add(ticket.digest)
        return ticket

    def drop(self, ticket: Ticket) -> None:
        tickets = self._open.get(ticket.digest)
        if tickets is not None:
            tickets.pop(ticket, None)
            if not tickets:
                del self._open[ticket.digest]
                self._unchecked.discard(ticket.digest)

    def __len__(self) -> int:
        return sum(len(tickets) for tickets in self._open.values())

    # ------------------------------------------------------------ the listener
    def revoked(self, digest: str) -> None:
        """The token stopped working: it leaves the cache, its tickets end."""
        self._players.forget_digest(digest)
        tickets = self._open.pop(digest, None)
        self._unchecked.discard(digest)
        if not tickets:
            return
        for ticket in tickets:
            try:
                ticket.revoke()
            except Exception:
                log.exception("ending a connection of a revoked token failed")
        log.info("a token was rotated or revoked: %d connection(s) or stream(s) end", len(tickets))

    def missed(self) -> None:
        """Notices may have been missed: every token with a ticket is checked
        again (one check at a time); a dead one is then forgotten in the
        cache too. Other cached tokens expire within the cache's TTL."""
        if not set(self._open) - self._unchecked:
            return
        if self._check is not None and not self._check.done():
            self._again = True
            return
        self._check = asyncio.get_running_loop().create_task(self._recheck())

    async def _recheck(self) -> None:
        while True:
            self._again = False
            try:
                dead = await self._dead(set(self._open) - self._unchecked)
            except Exception as e:  # the next missed() tries again
                if is_unavailable(e):
                    log.warning("tokens in use: database unavailable; checked again later")
                else:
                    log.exception("checking the tokens in use failed; checked again later")
                return
            for digest in dead:
                self.revoked(digest)
            if not self._again:
                return

    async def aclose(self) -> None:
        if self._check is not None:
            self._check.cancel()
            await asyncio.gather(self._check, return_exceptions=True)


def hang_up_soon(
    hang_up: Callable[[asyncio.Task[object] | None], Awaitable[None]],
    operations: Iterable[asyncio.Task[object] | None],
    keep: set[asyncio.Task[None]],
) -> None:
    """Run ``hang_up(origin)`` in a task of its own (kept in ``keep`` while
    it runs); ``origin`` is the running task when it is one of the
    connection's ``operations`` (the operation that revoked the token over
    this socket: its result goes out first), else None."""
    current = asyncio.current_task()
    origin = current if current is not None and current in set(operations) else None

    async def run() -> None:
        await hang_up(origin)

    task = asyncio.get_running_loop().create_task(run())
    keep.add(task)
    task.add_done_callback(keep.discard)


async def ended_when_revoked(
    chunks: AsyncGenerator[str, None],
    tokens: OpenTokens,
    token: str,
    farewell: Callable[[bool, Ticket], str],
    expiry: Callable[[], Awaitable[float | None]] | None = None,
) -> AsyncGenerator[str, None]:
    """An HTTP stream's ``chunks`` until its token is rotated or revoked, or
    expires (``expiry``: the seconds a JWT has left, None for an MMK token);
    then ``farewell(started, ticket)`` (the coded error and the stream's
    end; ``started``: whether a chunk went out before). A wait for the next
    chunk is cut short by moving a timeout to now: asyncio's own
    cancellation, with no task per chunk."""
    waiting: asyncio.Timeout | None = None

    def end() -> None:
        if waiting is not None:
            waiting.reschedule(asyncio.get_running_loop().time())

    ticket = tokens.open(token, end)
    started = False
    timer: asyncio.TimerHandle | None = None
    try:
        left = None if expiry is None else await expiry()
        if left is not None:
            timer = asyncio.get_running_loop().call_later(max(0.0, left), ticket.expire)
        async with aclosing(chunks):
            while not ticket.revoked:
                try:
                    async with asyncio.timeout(None) as waiting:
                        chunk = await anext(chunks)
                except StopAsyncIteration:
                    return
                except TimeoutError:
                    if waiting is not None and waiting.expired():  # ended by the revocation
                        break
                    raise
                finally:
                    waiting = None
                yield chunk
                started = True
        yield farewell(started, ticket)
    finally:
        if timer is not None:
            timer.cancel()
        ticket.release()
