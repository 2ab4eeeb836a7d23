"""The per-request (per-connection, for WebSockets) context: the wired use
cases and the caller, authenticated lazily from the bearer token."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.websockets import WebSocket
from strawberry.types import Info as StrawberryInfo

from api.graphql.errors import from_domain, graphql_error
from api.graphql.player_cache import PlayerCache
from domain.errors import DomainError, ErrorCode
from domain.records import Player
from domain.services.auth import bearer_token
from domain.services.deps import Deps
from domain.services.players import authenticate
from infra.settings import Settings


@dataclass
class Context:
    deps: Deps
    settings: Settings
    request: Request | WebSocket
    response: Response | WebSocket | None = None
    connection_params: dict[str, Any] | None = None
    players: PlayerCache | None = None
    _player: Player | None = field(default=None, repr=False)
    _known: bool = field(default=False, repr=False)

    def authorization(self) -> str | None:
        """``Authorization`` header, or the WebSocket ``connection_init`` payload's."""
        if isinstance(self.request, WebSocket):
            params = self.connection_params or {}
            value = params.get("authorization", params.get("Authorization"))
            return value if isinstance(value, str) else None
        return self.request.headers.get("authorization")

    async def player(self) -> Player | None:
        """The caller, or None when anonymous; a bad token is ``UNAUTHENTICATED``."""
        if not self._known:
            try:
                token = bearer_token(self.authorization())
                self._player = None if token is None else await self._authenticate(token)
            except DomainError as e:
                raise from_domain(e) from None
            self._known = True
        return self._player

    async def _authenticate(self, token: str) -> Player:
        cached = self.players.get(token) if self.players is not None else None
        if cached is not None:
            return cached
        player = await authenticate(self.deps, token)
        if self.players is not None:
            self.players.put(token, player)
        return player

    async def require_player(self) -> Player:
        player = await self.player()
        if player is None:
            raise graphql_error(
                ErrorCode.UNAUTHENTICATED, "this needs a player: send Authorization: Bearer <token>"
            )
        return player


Info = StrawberryInfo[Context, None]
