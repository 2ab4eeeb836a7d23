"""The Strawberry ASGI view: builds the context, authenticates WebSockets at
``connection_init`` (a bad token closes the connection with 4403 and the
reason), checks a browser WebSocket's ``Origin`` against ``MMK_CORS_ORIGINS``,
serves the self-hosted GraphiQL page (``api/graphql/playground.py``), streams
subscriptions over HTTP (Apollo's multipart protocol, GraphQL over SSE:
api/fast/http_transports.py), resolves automatic persisted queries
(api/graphql/persisted.py), and refuses what it cannot serve with coded
JSON, never ``text/plain`` (docs/decisions/0034)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from contextlib import aclosing, suppress
from datetime import timedelta
from functools import partial
from typing import Any, cast

import orjson
from cross_web import AsyncHTTPRequestAdapter, HTTPException
from graphql import GraphQLError, OperationType
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send
from starlette.websockets import WebSocket, WebSocketDisconnect, WebSocketState
from strawberry.asgi import ASGIWebSocketAdapter, GraphQL
from strawberry.exceptions import ConnectionRejectionError
from strawberry.http import GraphQLHTTPResponse, GraphQLRequestData
from strawberry.http.base import BaseRequestProtocol
from strawberry.http.exceptions import (
    NonJsonMessageReceived,
    NonTextMessageReceived,
    WebSocketDisconnected,
)
from strawberry.http.parse_content_type import parse_content_type
from strawberry.http.streaming import HTTPStreamTransport
from strawberry.subscriptions import (
    GRAPHQL_SSE_PROTOCOL,
    GRAPHQL_TRANSPORT_WS_PROTOCOL,
    GRAPHQL_WS_PROTOCOL,
    MULTIPART_SUBSCRIPTION_PROTOCOL,
)
from strawberry.subscriptions.protocols.graphql_ws.handlers import BaseGraphQLWSHandler
from strawberry.subscriptions.protocols.graphql_ws.types import (
    CompleteMessage,
    ErrorMessage,
    OperationMessage,
)
from strawberry.types import ExecutionResult, SubscriptionExecutionResult

from api.cors import is_local_origin
from api.fast.http_transports import (
    ApolloMultipart,
    ClosingStreamingResponse,
    EventStream,
    Refused,
    ends_on_error,
    with_heartbeats,
)
from api.fast.push import OUTLET, TransportWSHandler, legacy_pusher, outbox_of
from api.graphql import playground
from api.graphql.context import Context
from api.graphql.limits import operation_type, pay_for_parse
from api.graphql.persisted import not_found, persisted_hash, registration
from api.graphql.player_cache import PlayerCache
from api.graphql.revocation import (
    EXPIRED_MESSAGE,
    ORIGIN_WAIT,
    REVOKED_CLOSE,
    REVOKED_MESSAGE,
    OpenTokens,
    Ticket,
    close_reason,
    ended_when_revoked,
    hang_up_soon,
)
from api.graphql.schema import build_schema
from api.graphql.stream_limits import TARPIT, Replays, Slots, tarpit
from api.graphql.unrunnable import unrunnable
from api.graphql.ws_messages import (
    MALFORMED,
    NOT_JSON,
    NOT_TEXT,
    TOO_MANY_INITS,
    TOO_MANY_INITS_REASON,
    legacy_problem,
)
from domain.errors import DomainError, ErrorCode
from domain.services.auth import bearer_token
from domain.services.players import dead_tokens
from infra.bootstrap import Container
from infra.metrics import Metrics
from infra.persisted_queries import UNKNOWN_CLIENT, sha256_of
from infra.rate_limit import ip_key
from infra.work_meter import METER, Meter, close_step

log = logging.getLogger("mmk.api")
MAX_SUBSCRIPTIONS_PER_CONNECTION = 20
REFUSED = 4403  # graphql-transport-ws: connection_init refused
INIT_TIMEOUT = 4408  # graphql-transport-ws: no connection_init in time (graphql-ws too, here)
MAX_CLOSE_REASON_BYTES = 123  # RFC 6455: a close frame's reason


class WebSocketAdapter(ASGIWebSocketAdapter):
    """Strawberry's adapter; a refused ``connection_init`` closes with 4403
    and why (Strawberry's handler says only "Forbidden"), taken from the
    connection's state, where :meth:`GameGraphQL.on_ws_connect` put it.
    Once this server has closed the socket (a revoked token's 4401, sent
    from another task), a send is as if the client had gone and a second
    close does nothing: a message read meanwhile raises nothing. A close
    the client does not wait for (it sent ``connection_terminate`` and
    left) finds it gone: nothing is left to close."""

    async def send_json(self, message: Mapping[str, object]) -> None:
        if self.ws.application_state == WebSocketState.DISCONNECTED:
            raise WebSocketDisconnected from WebSocketDisconnect(REVOKED_CLOSE)
        await super().send_json(message)

    async def close(self, code: int, reason: str) -> None:
        if self.ws.application_state == WebSocketState.DISCONNECTED:
            return
        if code == REFUSED:
            reason = getattr(self.ws.state, "refusal", None) or reason
        cut = reason.encode()[:MAX_CLOSE_REASON_BYTES].decode(errors="ignore")
        with suppress(WebSocketDisconnect):  # the client had gone already
            await super().close(code, cut)


SUBSCRIPTION_ACCEPT = (
    'a subscription over HTTP needs "Accept: multipart/mixed;subscriptionSpec=1.0" '
    '(Apollo\'s multipart protocol) or "Accept: text/event-stream" (GraphQL over SSE); '
    "or subscribe over a WebSocket"
)


class LegacyWSHandler(BaseGraphQLWSHandler[Context, None]):
    """The ``graphql-ws`` handler (subscriptions-transport-ws).

    - Queries and mutations are executed too, as the protocol allows
      (Apollo's old WebSocketLink and gql send them): one ``data``, then
      ``complete``. Strawberry's handler subscribes to every operation, so
      a mutation failed as ``INTERNAL`` with a logged traceback.
    - Quiet when its client has gone: a frame sent just after the client
      left raised out of the operation's task, which asyncio then logged as
      an error with its traceback.
    - Live frames are pushed, as over graphql-transport-ws
      (api/fast/push.py).
    - A message it cannot read closes the connection with 4400 and why; a
      second ``connection_init`` with 4429, never a second acknowledgement
      (api/graphql/ws_messages.py, docs/decisions/0043).
    - A connection without ``connection_init`` within the view's
      ``connection_init_wait_timeout`` (``MMK_WS_INIT_TIMEOUT``) is closed
      with 4408, as graphql-transport-ws does; the protocol has no such
      timeout, and the server's pings kept such sockets open forever
      (issue #14, docs/decisions/0044).
    - Its token rotated or revoked, its operations complete and it closes
      with 4401, as graphql-transport-ws does (docs/decisions/0053)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.outbox = outbox_of(self.websocket, self.context)
        self.init_received = False
        self._hanging_up: set[asyncio.Task[None]] = set()
        self.context.hang_up = self.hang_up

    def hang_up(self) -> None:
        """The connection's token was rotated or revoked: its operations
        complete, then it closes with 4401."""
        hang_up_soon(self._hang_up, self.tasks.values(), self._hanging_up)

    async def _hang_up(self, origin: asyncio.Task[object] | None) -> None:
        if origin is not None:  # the operation that revoked: its result first
            await asyncio.wait({origin}, timeout=ORIGIN_WAIT)
        await self.cleanup()  # each one's "complete"
        if self.keep_alive_task:
            self.keep_alive_task.cancel()
        with suppress(Exception):  # the client may be gone already
            await self.websocket.close(REVOKED_CLOSE, close_reason(self.context.ticket))

    async def handle(self) -> None:
        """Strawberry's loop, reading strictly: it skipped a message that is
        not JSON, and closed on a binary one with 1002; both close with 4400
        here, as every other malformed message does. Overridden because the
        loop itself asks the socket to skip what does not parse. A deadline
        closes a connection that never initialises."""
        deadline = asyncio.create_task(self._close_without_init())
        try:
            async for message in self.websocket.iter_json():
                await self.handle_message(cast("OperationMessage", message))
        except NonTextMessageReceived:
            await self.websocket.close(MALFORMED, NOT_TEXT)
        except NonJsonMessageReceived:
            await self.websocket.close(MALFORMED, NOT_JSON)
        except WebSocketDisconnected:
            pass
        finally:
            deadline.cancel()
            if self.keep_alive_task:
                self.keep_alive_task.cancel()
                with suppress(BaseException):
                    await self.keep_alive_task
            await self.cleanup()
            self.context.release()

    async def _close_without_init(self) -> None:
        await asyncio.sleep(self.view.connection_init_wait_timeout.total_seconds())
        if not self.init_received:
            with suppress(Exception):  # the client may be gone already
                await self.websocket.close(INIT_TIMEOUT, "Connection initialisation timeout")

    async def handle_message(self, message: OperationMessage) -> None:
        """Strawberry's dispatch, once the message is known readable and not
        a second ``connection_init``."""
        problem = legacy_problem(message)
        if problem is not None:
            await self.websocket.close(MALFORMED, problem)
            return
        if message["type"] == "connection_init":
            if self.init_received:
                await self.websocket.close(TOO_MANY_INITS, TOO_MANY_INITS_REASON)
                return
            self.init_received = True
        await super().handle_message(message)

    async def handle_async_results(
        self,
        operation_id: str,
        query: str,
        operation_name: str | None,
        variables: dict[str, object] | None,
    ) -> None:
        with suppress(WebSocketDisconnected):
            await tarpit(METER.get())  # a connection whose budgets ran dry waits its turn
            limiter = self.view.container.limiter if isinstance(self.view, GameGraphQL) else None
            wait = await pay_for_parse(self.context, query, limiter)
            kind = None if wait else operation_type(query, operation_name)
            refusal = (
                None if kind else await unrunnable(self.context, query, operation_name, limiter)
            )
            if refusal is not None:  # Strawberry would fail it as INTERNAL
                self.tasks.pop(operation_id, None)
                await self.send_message(
                    ErrorMessage(type="error", id=operation_id, payload=refusal.formatted)
                )
                return
            if kind is None or kind is OperationType.SUBSCRIPTION:
                # this task's own context: its subscription may push (api/fast/push.py)
                OUTLET.set(legacy_pusher(self, operation_id))
                await super().handle_async_results(operation_id, query, operation_name, variables)
                return
            try:
                result = await self.schema.execute(
                    query,
                    variable_values=variables,
                    context_value=self.context,
                    root_value=self.root_value,
                    operation_name=operation_name,
                )
                await self.send_data_message(result, operation_id)
                await self.send_message(CompleteMessage(type="complete", id=operation_id))
            finally:
                self.tasks.pop(operation_id, None)


class GameGraphQL(GraphQL[Context, None]):
    graphql_transport_ws_handler_class = TransportWSHandler
    graphql_ws_handler_class = LegacyWSHandler
    websocket_adapter_class = WebSocketAdapter
    stream_transport_classes_by_protocol: Mapping[str, type[HTTPStreamTransport]] = {
        MULTIPART_SUBSCRIPTION_PROTOCOL: ApolloMultipart,
        GRAPHQL_SSE_PROTOCOL: EventStream,
    }

    def __init__(self, container: Container, metrics: Metrics | None = None) -> None:
        s = container.settings
        super().__init__(
            build_schema(
                introspection=s.introspection,
                metrics=metrics,
                rate_limiter=container.limiter,
                max_cost=s.query_max_cost,
            ),
            graphql_ide="graphiql" if s.graphiql else None,
            subscription_protocols=(
                GRAPHQL_TRANSPORT_WS_PROTOCOL,
                GRAPHQL_WS_PROTOCOL,
                MULTIPART_SUBSCRIPTION_PROTOCOL,
                GRAPHQL_SSE_PROTOCOL,
            ),
            max_subscriptions_per_connection=MAX_SUBSCRIPTIONS_PER_CONNECTION,
            # A browser page on another origin may open a WebSocket only from
            # these (same origin: always); the CORS middleware takes the same.
            allowed_origins=s.cors_origins,
            # graphql-transport-ws closes a socket without connection_init
            # (4408); LegacyWSHandler does the same for graphql-ws
            connection_init_wait_timeout=timedelta(seconds=s.ws_init_timeout),
        )
        self.container = container
        self.metrics = metrics
        self.persisted = container.persisted
        self.players = PlayerCache()
        self.slots = Slots(s.max_subscriptions_per_token, s.max_subscriptions_per_ip)
        self.replays = Replays(s.replays_per_minute)
        # This instance's open WebSockets and HTTP streams by token, ended
        # when it is rotated or revoked (docs/decisions/0053).
        deps = container.deps
        identity = deps.identity
        self.open_tokens = OpenTokens(
            self.players,
            lambda digests: dead_tokens(deps, digests),
            None if identity is None else identity.recognises,
        )
        if deps.revocations is not None:
            deps.revocations.listen(self.open_tokens)

    # ------------------------------------------------------------ HTTP
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serves the request, its work measured for its caller when the cost
        budgets are on (docs/decisions/0049): a request, or a WebSocket's
        whole connection, is one caller (its IP, and its token once known)."""
        settler = self.container.settler
        if settler is None:
            await self._serve(scope, receive, send)
            return
        http = scope["type"] == "http"
        meter = Meter(_client_ip(scope), _header_token(scope) if http else None, shared=not http)
        dry = settler.dry_for(meter.ip, meter.token) if http else 0.0
        if dry:  # its budgets ran dry: answered no sooner than the wait (TARPIT at most)
            await asyncio.sleep(min(dry, TARPIT))
        reset = METER.set(meter)
        settler.open(meter)
        try:
            if http and settler.dear(meter.ip, meter.token):  # its last request was dear:
                meter.demotable, meter.hold_after = True, 0.0  # this one waits its turn (0055)
                await asyncio.sleep(0)
            await self._serve(scope, receive, send)
        finally:
            close_step(meter)
            settler.close(meter)
            METER.reset(reset)

    async def _serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await super().__call__(scope, receive, send)
            return
        try:
            response = await self.run(Request(scope, receive))
        except Refused as refused:
            response = self._refused(refused)
        except HTTPException as e:  # Strawberry's own refusals, coded likewise
            code = ErrorCode.NOT_FOUND if e.status_code == 404 else ErrorCode.BAD_INPUT
            headers = {"Allow": "GET, POST"} if e.status_code == 405 else None
            response = self._refused(Refused(e.status_code, e.reason, code.value, headers))
        await response(scope, receive, send)

    def _refused(self, refused: Refused) -> Response:
        if self.metrics is not None and refused.status != 200:
            self.metrics.refusal(refused.code, "error")
        return refused.response()

    def should_render_graphql_ide(self, request: BaseRequestProtocol) -> bool:
        """GraphiQL for a browser's plain GET; never for a GET that carries an
        operation (a query, or an APQ hash in ``extensions``)."""
        if request.method != "GET":
            return False
        params = request.query_params
        if params.get("extensions") is not None:
            return False
        return super().should_render_graphql_ide(request)

    async def parse_http_body(self, request: AsyncHTTPRequestAdapter) -> GraphQLRequestData:
        """One operation as a JSON object (POST ``application/json``) or query
        parameters (GET); anything else is refused with coded JSON."""
        transport = self._get_stream_transport_from_headers(request.headers)
        data: object
        if request.method == "GET":
            params: dict[str, object] = dict(request.query_params)
            for name in ("variables", "extensions"):
                text = params.get(name)
                if isinstance(text, str):
                    params[name] = _json_parameter(name, text)
            data = params
        else:
            media = _media_type(request.content_type)
            if media != "application/json" and not media.endswith("+json"):
                raise Refused(
                    415,
                    "unsupported content type: send the operation as JSON "
                    "(Content-Type: application/json), or use GET for a query",
                )
            try:
                data = orjson.loads(await request.get_body())
            except orjson.JSONDecodeError:
                raise Refused(400, "the request body is not valid JSON") from None
        if isinstance(data, list):
            raise Refused(
                400, "batching (an array of operations) is not supported: one operation a request"
            )
        if not isinstance(data, dict):
            raise Refused(400, "the request body must be a JSON object with a query")
        query, variables = data.get("query"), data.get("variables")
        operation_name, extensions = data.get("operationName"), data.get("extensions")
        for name, value, kind in (
            ("query", query, str),
            ("variables", variables, dict),
            ("operationName", operation_name, str),
            ("extensions", extensions, dict),
        ):
            if value is not None and not isinstance(value, kind):
                what = "a string" if kind is str else "an object"
                raise Refused(400, f"{name} must be {what} (or absent)")
        return GraphQLRequestData(
            query=query,
            variables=variables,
            operation_name=operation_name,
            extensions=extensions,
            protocol=transport.protocol if transport else "http",
        )

    async def execute_operation(
        self,
        request: Request,
        request_adapter: AsyncHTTPRequestAdapter,
        request_data: GraphQLRequestData | list[GraphQLRequestData],
        context: Context,
        root_value: None,
        sub_response: Response,
    ) -> ExecutionResult | list[ExecutionResult] | SubscriptionExecutionResult:
        assert isinstance(request_data, GraphQLRequestData)  # batches are refused
        writes = await self._resolve_persisted(request_data, context)
        if request_data.query is None:
            raise Refused(
                400,
                "no query: send query (or the sha256Hash of one registered before, "
                "in extensions.persistedQuery)",
            )
        method = request_adapter.method
        # An unseen document's parse is paid for before it is parsed; over
        # budget, nothing parses it (the extension refuses it).
        wait = await pay_for_parse(context, request_data.query, self.container.limiter)
        kind = None if wait else operation_type(request_data.query, request_data.operation_name)
        if method == "GET":
            if kind is OperationType.MUTATION:
                raise Refused(
                    405, "a mutation is sent with POST, never GET", headers={"Allow": "POST"}
                )
            _cacheable(request, sub_response)
        protocol = request_data.protocol
        if protocol == MULTIPART_SUBSCRIPTION_PROTOCOL and kind is not OperationType.SUBSCRIPTION:
            # A query or mutation sent with the multipart Accept: a plain JSON
            # answer (Apollo's clients accept application/json beside it).
            request_data.protocol = protocol = "http"
        if protocol == "http" and kind is OperationType.SUBSCRIPTION:
            raise Refused(406, SUBSCRIPTION_ACCEPT)
        result = await super().execute_operation(
            request, request_adapter, request_data, context, root_value, sub_response
        )
        if writes and not isinstance(result, AsyncGenerator):
            # A registration is known everywhere before the client learns of it.
            await asyncio.wait(writes)
        return result

    async def _resolve_persisted(
        self, request_data: GraphQLRequestData, context: Context
    ) -> list[asyncio.Task[None]]:
        """An APQ request: a hash alone gets its registered text (or
        ``PersistedQueryNotFound``); a hash with its text registers it once
        the document is valid. Returns the registration's Redis writes."""
        sha = persisted_hash(request_data.extensions)
        if sha is None:
            return []
        if request_data.query is None:
            query = await self.persisted.get(sha)
            if query is None:
                raise not_found()
            request_data.query = query
            return []
        if sha256_of(request_data.query) != sha:
            raise Refused(
                400,
                "persistedQuery.sha256Hash is not the sha256 of the query sent",
                reason="PERSISTED_QUERY_HASH_MISMATCH",
            )
        writes: list[asyncio.Task[None]] = []
        peer = context.request.client
        client = ip_key(peer.host) if peer else UNKNOWN_CLIENT
        context.on_valid = registration(self.persisted, sha, request_data.query, writes, client)
        return writes

    async def create_streaming_response(
        self,
        request: Request | WebSocket,
        stream: Callable[[], AsyncIterator[str]],
        sub_response: Response,
        headers: Mapping[str, str],
    ) -> Response:
        return ClosingStreamingResponse(
            stream(),
            status_code=sub_response.status_code or 200,
            headers={**sub_response.headers, **headers},
        )

    async def _time_left(self, token: str) -> float | None:
        """Seconds a provider's token (a JWT) has left; None for an MMK
        token. One that no longer verifies has none."""
        identity = self.container.deps.identity
        if identity is None or not identity.recognises(token):
            return None
        try:
            signed = await identity.verify(token)
        except DomainError:
            return 0.0
        return (signed.expires_at - self.container.deps.clock.now()).total_seconds()

    def _stream_result(
        self,
        request: Request,
        result: SubscriptionExecutionResult,
        transport: HTTPStreamTransport,
    ) -> Callable[[], AsyncGenerator[str, None]]:
        """The response body of a streamed operation: Strawberry's seam,
        with a stream that ends after an error and is always closed
        (api/fast/http_transports.py, ``with_heartbeats``)."""
        assert isinstance(result, AsyncGenerator)
        encode = self.encode_json_string

        async def body() -> AsyncGenerator[str, None]:
            async with aclosing(ends_on_error(result)) as results:
                async for value in results:
                    response = await self.process_result(request, value)
                    yield transport.encode_next(response, encode)
            yield transport.encode_complete()

        opening = transport.opening() if isinstance(transport, ApolloMultipart) else ""

        def stream() -> AsyncGenerator[str, None]:
            chunks = with_heartbeats(
                body(),
                lambda: transport.heartbeat_message(encode),
                transport.heartbeat_interval,
                initial=transport.send_initial_heartbeat,
                opening=opening,
            )
            token = _header_token(request.scope)
            if token is None:
                return chunks

            def farewell(started: bool, ticket: Ticket) -> str:
                """The token was rotated, revoked or expired: a coded error, the end."""
                result = EXPIRED_RESULT if ticket.expired else REVOKED_RESULT
                ended = transport.encode_next(result, encode)
                return ("" if started else opening) + ended + transport.encode_complete()

            return ended_when_revoked(
                chunks, self.open_tokens, token, farewell, partial(self._time_left, token)
            )

        return stream

    def encode_json(self, data: object) -> str:
        """orjson for responses and WebSocket frames (text frames: both
        subscription protocols carry JSON text)."""
        return orjson.dumps(data).decode()

    def decode_json(self, data: str | bytes) -> object:
        """orjson for WebSocket messages: a message nested too deep is
        malformed (``JSONDecodeError``), where ``json.loads`` raised
        ``RecursionError`` out of the handler."""
        return orjson.loads(data)

    async def get_context(
        self, request: Request | WebSocket, response: Response | WebSocket
    ) -> Context:
        return Context(
            self.container.deps,
            self.container.settings,
            request,
            response,
            players=self.players,
            slots=self.slots,
            replays=self.replays,
        )

    def is_websocket_origin_allowed(self, request: WebSocket, origin: str) -> bool:
        """Strawberry's check of a cross-origin handshake against
        ``allowed_origins``, and in development mode (``MMK_DEV``) this
        machine's origins, as CORS (api/cors.py); a refusal (HTTP 403) also
        names our setting."""
        allowed = super().is_websocket_origin_allowed(request, origin) or (
            self.container.settings.dev and is_local_origin(origin)
        )
        if not allowed:
            log.info("WebSocket from origin %.100r refused: not in MMK_CORS_ORIGINS", origin)
        return allowed

    async def render_graphql_ide(self, request: Request) -> Response:
        """The playground, its files served by this server (no CDN)."""
        return playground.page(request.scope.get("root_path", ""))

    async def on_ws_connect(self, context: Context) -> dict[str, Any] | None:
        """A bad or misplaced token refuses the connection: graphql-transport-ws
        closes with 4403 and the message, graphql-ws sends ``connection_error``
        with it; never a silent downgrade to the spectators' feed."""
        try:
            self._open_ticket(context)
            await context.player()
        except GraphQLError as e:
            context.request.state.refusal = e.message
            raise ConnectionRejectionError({"message": e.message}) from None
        meter = METER.get()
        if meter is not None:  # the connection's caller, from now on
            meter.root.token = context.token()
        return None

    def _open_ticket(self, context: Context) -> None:
        """The connection joins its token's open connections before the
        caller is authenticated: a revocation heard meanwhile ends it too."""
        if context.ticket is not None or context.hang_up is None:
            return
        try:
            token = context.token()
        except DomainError:
            return  # refused by context.player()
        if token is not None:
            context.ticket = self.open_tokens.open(token, context.hang_up)


REVOKED_RESULT: GraphQLHTTPResponse = {
    "data": None,
    "errors": [{"message": REVOKED_MESSAGE, "extensions": {"code": "UNAUTHENTICATED"}}],
}
"""What ends an HTTP stream whose token was rotated or revoked."""
EXPIRED_RESULT: GraphQLHTTPResponse = {
    "data": None,
    "errors": [{"message": EXPIRED_MESSAGE, "extensions": {"code": "UNAUTHENTICATED"}}],
}
"""What ends an HTTP stream whose token (a JWT) expired."""


def _client_ip(scope: Scope) -> str | None:
    client = scope.get("client")
    return client[0] if client else None


def _header_token(scope: Scope) -> str | None:
    """The bearer token of a request's ``Authorization`` header, if sane."""
    for name, value in scope.get("headers", ()):
        if name == b"authorization":
            try:
                return bearer_token(value.decode("latin-1"))
            except DomainError:
                return None  # refused as UNAUTHENTICATED by the operation
    return None


def _media_type(content_type: str | None) -> str:
    if not content_type:
        return ""
    if content_type == "application/json":  # what nearly every client sends
        return content_type
    try:
        return parse_content_type(content_type)[0].lower()
    except Exception:  # not a media type at all
        return ""


def _json_parameter(name: str, text: str) -> object:
    """A GET parameter holding JSON (``variables``, ``extensions``)."""
    if not text:
        return None
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        raise Refused(400, f"the {name} parameter is not valid JSON") from None


def _cacheable(request: Request, sub_response: Response) -> None:
    """A GET read may be kept by an HTTP cache: never one caller's answer
    for another (``Vary``), never a signed-in caller's in a shared cache."""
    sub_response.headers["Vary"] = "Authorization"
    if request.headers.get("authorization"):
        sub_response.headers["Cache-Control"] = "private"
