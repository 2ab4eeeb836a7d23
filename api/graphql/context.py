"""The per-request (per-connection, for WebSockets) context: the wired use
cases and the caller, authenticated lazily from the bearer token."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.websockets import WebSocket
from strawberry.types import Info as StrawberryInfo

from api.graphql.errors import from_domain, graphql_error
from api.graphql.player_cache import TTL, PlayerCache, monotonic
from api.graphql.revocation import REVOKED_MESSAGE, Ticket
from api.graphql.stream_limits import Pace, Replays, Slots
from domain.errors import DomainError, ErrorCode, Forbidden, Unauthenticated
from domain.records import Player, ServiceKey
from domain.services.auth import bearer_token, is_service_key
from domain.services.deps import Deps
from domain.services.players import sign_in
from domain.services.service_keys import service_for_key
from infra.settings import Settings

# Where a WebSocket client's ``connection_init`` payload (its
# ``connectionParams``) may carry the token, keys in any case: docs/clients.md's
# {"authorization": "Bearer <token>"}, which GraphiQL's Headers pane also
# sends; {"headers": {"Authorization": ...}} (Apollo Client's habit); and the
# bare token as {"token": ...} or {"authToken": ...} ("Bearer " optional).
AUTHORIZATION_KEYS = frozenset({"authorization"})
TOKEN_KEYS = frozenset({"token", "authtoken"})
HEADERS_KEY = "headers"
# A key that looks like a credential (or a "Bearer ..." value) anywhere else
# in the payload is refused, never ignored: ignoring it would downgrade a
# seated player to the spectators' feed without a word.
_CREDENTIAL_WORDS = ("authoriz", "authoris", "token", "bearer", "jwt")
_SEARCH_DEPTH = 4


def connection_authorization(params: Mapping[str, Any] | None) -> str | None:
    """The ``Authorization`` value (``Bearer <token>``) of a WebSocket
    ``connection_init`` payload; None when it carries no credential at all.
    :class:`Unauthenticated` when one is somewhere this does not read, is not
    a string, or when the payload carries two different ones."""
    found: dict[str, str] = {}

    def take(where: str, value: object, bare: bool) -> None:
        if not isinstance(value, str):
            raise Unauthenticated(f"connection_init: {_short(where)} must be a string")
        if bare and value[:7].lower() != "bearer ":
            value = f"Bearer {value}"
        found[where] = value

    for key, value in (params or {}).items():
        name = key.lower()
        if name in AUTHORIZATION_KEYS:
            take(key, value, bare=False)
        elif name in TOKEN_KEYS:
            take(key, value, bare=True)
        elif name == HEADERS_KEY and isinstance(value, Mapping):
            for header, text in value.items():
                if isinstance(header, str) and header.lower() in AUTHORIZATION_KEYS:
                    take(f"{key}.{header}", text, bare=False)
    if len(set(found.values())) > 1:
        raise Unauthenticated(f"connection_init: different tokens in {', '.join(found)}")
    if found:
        return next(iter(found.values()))
    stray = _credential_at(params or {}, "", _SEARCH_DEPTH)
    if stray is not None:
        raise Unauthenticated(
            f'connection_init: {_short(stray)} is not read; send {{"authorization": '
            '"Bearer <token>"}'
        )
    return None


def _credential_at(node: object, path: str, depth: int) -> str | None:
    """The path of the first credential-like key or ``Bearer`` value in ``node``."""
    if isinstance(node, str):
        return (path or "the payload") if node[:7].lower() == "bearer " else None
    if depth == 0:
        return None
    items: list[tuple[str, object]] = []
    if isinstance(node, Mapping):
        items = [(str(k), v) for k, v in node.items()]
    elif isinstance(node, list):
        items = [(str(i), v) for i, v in enumerate(node)]
    for key, value in items:
        where = f"{path}.{key}" if path else key
        if any(word in key.lower() for word in _CREDENTIAL_WORDS):
            return where
        found = _credential_at(value, where, depth - 1)
        if found is not None:
            return found
    return None


def _short(path: str, limit: int = 40) -> str:
    """A client-chosen key path, cut to fit a WebSocket close reason."""
    return path if len(path) <= limit else path[: limit - 3] + "..."


@dataclass
class Context:
    deps: Deps
    settings: Settings
    request: Request | WebSocket
    response: Response | WebSocket | None = None
    connection_params: dict[str, Any] | None = None
    players: PlayerCache | None = None
    # Called once the operation's document is parsed and valid (a request
    # that registers an automatic persisted query: api/graphql/persisted.py).
    on_valid: Callable[[], None] | None = None
    # Open subscriptions per token and IP in this process (the view's), each
    # caller's replays (the view's), and the connection's pace of events
    # sent from the log (api/graphql/stream_limits.py).
    slots: Slots | None = None
    replays: Replays | None = None
    _pace: Pace | None = field(default=None, repr=False)
    # A WebSocket's: what ends the connection when its token is rotated or
    # revoked (its handler sets it), and its ticket among the instance's
    # open tokens (api/graphql/revocation.py, docs/decisions/0053).
    hang_up: Callable[[], None] | None = None
    ticket: Ticket | None = None
    _player: Player | None = field(default=None, repr=False)
    # A JWT's expiry: its WebSocket closes then (issue #24).
    _expiry: asyncio.TimerHandle | None = field(default=None, repr=False)
    _known: bool = field(default=False, repr=False)
    _checked: float = field(default=0.0, repr=False)

    def authorization(self) -> str | None:
        """``Authorization`` header, or the WebSocket ``connection_init``
        payload's (:func:`connection_authorization`)."""
        if isinstance(self.request, WebSocket):
            return connection_authorization(self.connection_params)
        return self.request.headers.get("authorization")

    async def player(self) -> Player | None:
        """The caller, or None when anonymous; a bad token is ``UNAUTHENTICATED``.
        A WebSocket whose token this instance heard rotated or revoked starts
        no new operation (docs/decisions/0053); its caller is also checked
        again after the player cache's TTL, for a notice that never came
        (docs/decisions/0041)."""
        if self.ticket is not None and self.ticket.revoked:
            self._player, self._known = None, False
            raise graphql_error(ErrorCode.UNAUTHENTICATED, REVOKED_MESSAGE)
        if self._known and self._player is not None and isinstance(self.request, WebSocket):
            self._known = monotonic() - self._checked < TTL
        if not self._known:
            try:
                token = bearer_token(self.authorization())
                self._player = None if token is None else await self._authenticate(token)
            except DomainError as e:
                raise from_domain(e) from None
            self._known, self._checked = True, monotonic()
        return self._player

    def pace(self, ip: str | None, token: str | None) -> Pace | None:
        """This connection's (or HTTP stream's) pace of events sent from the
        log, with its caller's (``ip``, ``token``) replays a minute."""
        if self._pace is None:
            minute = self.replays.of(ip, token) if self.replays is not None else None
            if self.settings.replay_rate or minute is not None:
                self._pace = Pace(self.settings.replay_rate, minute=minute)
        return self._pace

    def token(self) -> str | None:
        """The caller's bearer token, if any."""
        return bearer_token(self.authorization())

    def forget(self, token: str) -> None:
        """``token`` was rotated or revoked: this instance's cache and this
        context no longer take it."""
        if self.players is not None:
            self.players.forget(token)
        self._player, self._known = None, False

    def release(self) -> None:
        """The WebSocket ended: its ticket leaves the instance's open tokens."""
        if self._expiry is not None:
            self._expiry.cancel()
        if self.ticket is not None:
            self.ticket.release()

    async def _authenticate(self, token: str) -> Player:
        """The token's player, from this instance's cache when it has it. A
        WebSocket's sign-in reads past the cache: it learns a JWT's expiry,
        when the socket closes (4401)."""
        first_on_socket = self.ticket is not None and self._expiry is None
        jwt = self.deps.identity is not None and self.deps.identity.recognises(token)
        if self.players is not None and not (first_on_socket and jwt):
            cached = self.players.get(token)
            if cached is not None:
                return cached
        epoch = None if self.players is None else self.players.epoch
        signed = await sign_in(self.deps, token)
        left = None
        if signed.until is not None:
            left = (signed.until - self.deps.clock.now()).total_seconds()
            self._close_at_expiry(left)
        if self.players is not None:  # a token forgotten meanwhile is not cached again
            self.players.put(token, signed.player, epoch, left)
        return signed.player

    def _close_at_expiry(self, left: float) -> None:
        ticket = self.ticket
        if ticket is None or self._expiry is not None:
            return
        self._expiry = asyncio.get_running_loop().call_later(max(0.0, left), ticket.expire)

    async def service(self, scope: str) -> ServiceKey:
        """The calling app's backend, allowed ``scope`` (issue #24): a
        service key is read on every call (its revocation holds at once).
        No key, or a bad token, is ``UNAUTHENTICATED``; a player's token is
        ``FORBIDDEN``."""
        try:
            token = bearer_token(self.authorization())
            if token is None:
                raise Unauthenticated(
                    "this needs a service key: send Authorization: Bearer mmk_sk_..."
                )
            if is_service_key(token):
                return await service_for_key(self.deps, token, scope)
        except DomainError as e:
            raise from_domain(e) from None
        await self.require_player()  # an unknown token is UNAUTHENTICATED, as everywhere
        raise from_domain(Forbidden("only your app's backend may call this, with a service key"))

    async def require_player(self) -> Player:
        player = await self.player()
        if player is None:
            raise graphql_error(
                ErrorCode.UNAUTHENTICATED, "this needs a player: send Authorization: Bearer <token>"
            )
        return player


Info = StrawberryInfo[Context, None]
