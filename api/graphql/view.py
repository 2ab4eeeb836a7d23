"""The Strawberry ASGI view: builds the context, authenticates WebSockets at
``connection_init`` (a bad token closes the connection with 4403)."""

from __future__ import annotations

from contextlib import suppress
from typing import Any

import orjson
from graphql import GraphQLError
from starlette.requests import Request
from starlette.responses import Response
from starlette.websockets import WebSocket
from strawberry.asgi import GraphQL
from strawberry.exceptions import ConnectionRejectionError
from strawberry.http.exceptions import WebSocketDisconnected
from strawberry.subscriptions import GRAPHQL_TRANSPORT_WS_PROTOCOL, GRAPHQL_WS_PROTOCOL
from strawberry.subscriptions.protocols.graphql_ws.handlers import BaseGraphQLWSHandler

from api.graphql.context import Context
from api.graphql.player_cache import PlayerCache
from api.graphql.schema import build_schema
from infra.bootstrap import Container
from infra.metrics import Metrics

MAX_SUBSCRIPTIONS_PER_CONNECTION = 20


class LegacyWSHandler(BaseGraphQLWSHandler[Context, None]):
    """The ``graphql-ws`` handler, quiet when its client has gone: a frame
    sent just after the client left raised out of the operation's task,
    which asyncio then logged as an error with its traceback."""

    async def handle_async_results(
        self,
        operation_id: str,
        query: str,
        operation_name: str | None,
        variables: dict[str, object] | None,
    ) -> None:
        with suppress(WebSocketDisconnected):
            await super().handle_async_results(operation_id, query, operation_name, variables)


class GameGraphQL(GraphQL[Context, None]):
    graphql_ws_handler_class = LegacyWSHandler

    def __init__(self, container: Container, metrics: Metrics | None = None) -> None:
        s = container.settings
        super().__init__(
            build_schema(
                introspection=s.introspection, metrics=metrics, rate_limiter=container.limiter
            ),
            graphql_ide="graphiql" if s.graphiql else None,
            subscription_protocols=(GRAPHQL_TRANSPORT_WS_PROTOCOL, GRAPHQL_WS_PROTOCOL),
            max_subscriptions_per_connection=MAX_SUBSCRIPTIONS_PER_CONNECTION,
        )
        self.container = container
        self.players = PlayerCache()

    def encode_json(self, data: object) -> str:
        """orjson for responses and WebSocket frames (text frames: both
        subscription protocols carry JSON text)."""
        return orjson.dumps(data).decode()

    async def get_context(
        self, request: Request | WebSocket, response: Response | WebSocket
    ) -> Context:
        return Context(
            self.container.deps, self.container.settings, request, response, players=self.players
        )

    async def on_ws_connect(self, context: Context) -> dict[str, Any] | None:
        try:
            await context.player()
        except GraphQLError as e:
            raise ConnectionRejectionError({"message": e.message}) from None
        return None
