"""JSON log lines, request ids, and no secret in any log line, through the
real app."""

from __future__ import annotations

import io
import json
import logging
import logging.config
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from api import cli
from api.app import create_app
from infra.logs import QUIET, JsonFormatter, configure_logging, log_config, request_id
from infra.settings import Settings
from tests.adapters.app_support import gql, play_first_card, running_app

TOKEN = "Zm9vYmFyYmF6cXV4cXV1eGNvcmdlZ3JhdWx0Z2FycGx5"


LOGGERS = ("", "uvicorn", "uvicorn.error", "uvicorn.access", *QUIET)


@contextmanager
def preserved_logging() -> Iterator[None]:
    """Put the global logging set-up back as it was afterwards."""
    loggers = [logging.getLogger(name or None) for name in LOGGERS]
    saved = [(lg, lg.handlers[:], lg.level, lg.propagate) for lg in loggers]
    try:
        yield
    finally:
        for lg, handlers, level, propagate in saved:
            lg.handlers[:], lg.propagate = handlers, propagate
            lg.setLevel(level)


@pytest.fixture
def logs() -> Iterator[io.StringIO]:
    """Everything logged, at debug level, as ``configure_logging`` sets it up."""
    buf = io.StringIO()
    with preserved_logging():
        configure_logging("debug", stream=buf)
        yield buf


def lines(buf: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in buf.getvalue().splitlines()]


def _format(record: logging.LogRecord) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(JsonFormatter().format(record))
    return out


def _record(msg: str, *args: object, **extra: Any) -> logging.LogRecord:
    record = logging.LogRecord("mmk.test", logging.WARNING, __file__, 1, msg, args, None)
    record.__dict__.update(extra)
    return record


def test_a_line_is_one_json_object_with_the_standard_fields_and_extras() -> None:
    reset = request_id.set("req-1")
    try:
        line = _format(_record("played %s", "x", seat=2, game="g1"))
    finally:
        request_id.reset(reset)
    assert line.pop("timestamp").endswith("Z")
    assert line == {
        "level": "WARNING",
        "logger": "mmk.test",
        "message": "played x",
        "request_id": "req-1",
        "seat": 2,
        "game": "g1",
    }
    assert _format(_record("outside a request"))["request_id"] is None


def test_exceptions_are_kept_on_the_same_line() -> None:
    try:
        raise ValueError(f"boom token={TOKEN}")
    except ValueError:
        record = logging.LogRecord("mmk", logging.ERROR, __file__, 1, "failed", (), None)
        record.exc_info = sys.exc_info()
    text = JsonFormatter().format(record)
    assert "\n" not in text
    out = json.loads(text)
    assert "ValueError: boom token=[redacted]" in out["exception"]
    assert TOKEN not in text


@pytest.mark.parametrize(
    "message",
    [
        f"Authorization: Bearer {TOKEN}",
        f"authorization=bearer {TOKEN}",
        f'{{"token": "{TOKEN}"}}',
        f"token={TOKEN}&x=1",
        f"password: {TOKEN}",
    ],
)
def test_secrets_in_messages_are_redacted(message: str) -> None:
    out = _format(_record("%s", message))
    assert TOKEN not in out["message"] and "[redacted]" in out["message"]


def test_secret_fields_are_redacted_however_deep() -> None:
    out = _format(
        _record("x", token=TOKEN, headers={"Authorization": f"Bearer {TOKEN}", "accept": "*/*"})
    )
    assert out["token"] == "[redacted]"
    assert out["headers"] == {"Authorization": "[redacted]", "accept": "*/*"}
    assert TOKEN not in json.dumps(out)


def test_plain_words_are_not_mistaken_for_secrets() -> None:
    message = "use the form 'Bearer <token>'; the bearer token is empty"
    assert _format(_record(message))["message"] == message


async def test_each_request_gets_an_id_echoed_in_the_response(tmp_path: Path) -> None:
    async with running_app(tmp_path) as (_, client):
        new = (await client.get("/healthz")).headers["x-request-id"]
        assert uuid.UUID(new).version == 4
        assert (await client.get("/healthz")).headers["x-request-id"] != new
        sane = "edge-7f3a.b_c:1"
        r = await client.get("/healthz", headers={"X-Request-ID": sane})
        assert r.headers["x-request-id"] == sane
        for insane in ("x" * 129, "a b", "a\tb", "<script>", ""):
            r = await client.get("/healthz", headers={"X-Request-ID": insane})
            assert uuid.UUID(r.headers["x-request-id"]).version == 4
        big = await client.post("/graphql", content=b"x" * 70_000, headers={"X-Request-ID": "big"})
        assert big.status_code == 413 and big.headers["x-request-id"] == "big"


async def test_every_line_logged_while_handling_a_request_carries_its_id(
    tmp_path: Path, logs: io.StringIO
) -> None:
    async with running_app(tmp_path) as (_, client):
        mark = len(lines(logs))
        join = 'mutation { joinGame(gameId: "nope") { __typename } }'  # no token: an error
        errors = (await gql(client, join, headers={"X-Request-ID": "req-42"}))["errors"]
        assert errors[0]["extensions"]["code"] == "UNAUTHENTICATED"
    during = [line for line in lines(logs)[mark:] if line["request_id"] == "req-42"]
    by_logger = {line["logger"]: line for line in during}
    assert "UNAUTHENTICATED" in by_logger["mmk.api"]["message"]  # logged inside GraphQL
    access = by_logger["mmk.access"]
    assert access["message"] == "POST /graphql 200"
    assert (access["method"], access["route"], access["status"]) == ("POST", "/graphql", 200)
    assert access["duration_ms"] >= 0


async def test_no_token_and_no_card_is_ever_logged(tmp_path: Path, logs: io.StringIO) -> None:
    async with running_app(tmp_path) as (_, client):
        played = await play_first_card(client, headers={"X-Request-ID": "move-1"})
        # the card again where a careless log would quote it: an invalid
        # variable, an invalid literal, a refused move
        q = (
            'mutation($g: ID!, $v: Int) { playCard(gameId: $g, card: "x", '
            "expectedVersion: $v) { __typename } }"
        )
        errors = (await gql(client, q, played.token, g=played.game, v=played.card))["errors"]
        assert errors[0]["extensions"]["code"] == "BAD_INPUT"
        q = f'mutation {{ pass(gameId: "g", expectedVersion: "{played.card}") {{ __typename }} }}'
        assert (await gql(client, q, played.token))["errors"][0]["extensions"]["code"]
        q = "mutation($g: ID!, $c: ID!) { playCard(gameId: $g, card: $c) { __typename } }"
        assert (
            "playCard" in (await gql(client, q, played.token, g=played.game, c=played.card))["data"]
        )
        # and a token that is not one, and the token in a variable
        await gql(client, "{ me { player { id } } }", f"{played.token}x")
        await gql(client, "{ me { player { id } } }", headers={"authorization": played.token})
        await gql(
            client,
            "mutation($n: String!) { createPlayer(name: $n) { __typename } }",
            n=played.token,
        )
    text = logs.getvalue()
    logged = lines(logs)
    assert any(line["request_id"] == "move-1" for line in logged)
    assert any(line["logger"] == "mmk.api" for line in logged)  # debug lines were on
    assert played.token not in text
    assert played.card not in text


def test_serve_hands_uvicorn_the_json_config(monkeypatch: pytest.MonkeyPatch) -> None:
    import uvicorn

    seen: dict[str, Any] = {}
    monkeypatch.setattr(uvicorn, "run", lambda *a, **kw: seen.update(kw))
    monkeypatch.setenv("MMK_LOG_LEVEL", "info")
    buf = io.StringIO()
    with preserved_logging():
        assert cli.main(["serve"]) == 0
        assert seen["access_log"] is False  # ours logs no query string
        config = seen["log_config"]
        config["handlers"]["json"]["stream"] = buf
        logging.config.dictConfig(config)
        logging.getLogger("uvicorn.error").info("started on port %d", 8123)
    line = json.loads(buf.getvalue())
    assert (line["level"], line["logger"]) == ("INFO", "uvicorn.error")
    assert line["message"] == "started on port 8123"


@pytest.mark.parametrize(("env", "loop"), [(None, "asyncio"), ("uvloop", "uvloop")])
def test_serve_runs_the_configured_event_loop(
    monkeypatch: pytest.MonkeyPatch, env: str | None, loop: str
) -> None:
    """``MMK_EVENT_LOOP`` reaches uvicorn (asyncio unless set)."""
    assert served_with(monkeypatch, "MMK_EVENT_LOOP", env)["loop"] == loop


@pytest.mark.parametrize(("env", "seconds"), [(None, 75), ("20", 20)])
def test_serve_keeps_idle_http_connections_open_as_configured(
    monkeypatch: pytest.MonkeyPatch, env: str | None, seconds: int
) -> None:
    """``MMK_KEEP_ALIVE_TIMEOUT`` reaches uvicorn (75 s unless set; uvicorn's
    own default, 5 s, is shorter than a load balancer's idle timeout)."""
    kwargs = served_with(monkeypatch, "MMK_KEEP_ALIVE_TIMEOUT", env)
    assert kwargs["timeout_keep_alive"] == seconds


def served_with(monkeypatch: pytest.MonkeyPatch, name: str, value: str | None) -> dict[str, Any]:
    """What ``mmk serve`` hands ``uvicorn.run`` with the variable ``name``
    set to ``value`` (None: unset)."""
    import uvicorn

    seen: dict[str, Any] = {}
    monkeypatch.setattr(uvicorn, "run", lambda *a, **kw: seen.update(kw))
    if value is None:
        monkeypatch.delenv(name, raising=False)
    else:
        monkeypatch.setenv(name, value)
    with preserved_logging():
        assert cli.main(["serve"]) == 0
    return seen


def test_the_uvicorn_config_is_json_for_the_root_logger() -> None:
    config = log_config("info")
    assert config["root"]["level"] == "INFO"
    assert config["formatters"]["json"]["()"] == "infra.logs.JsonFormatter"
    assert config["loggers"]["sqlalchemy"]["level"] == "WARNING"


def test_a_client_disconnect_during_a_send_is_not_logged_as_an_error() -> None:
    import logging

    from starlette.websockets import WebSocketDisconnect

    from api.ws_logging import DisconnectFilter

    def record(exc: BaseException) -> logging.LogRecord:
        return logging.LogRecord(
            "strawberry.ws.task",
            logging.ERROR,
            __file__,
            1,
            "Exception in worker task",
            None,
            (type(exc), exc, None),
        )

    try:
        try:
            raise WebSocketDisconnect(1006)
        except WebSocketDisconnect as inner:
            raise RuntimeError("send failed") from inner
    except RuntimeError as outer:
        assert not DisconnectFilter().filter(record(outer))
    assert DisconnectFilter().filter(record(ValueError("a real bug")))


@pytest.mark.parametrize(
    ("access", "logged"),
    [("all", {"200", "413"}), ("errors", {"413"}), ("off", set())],
)
async def test_which_requests_get_an_access_line(
    tmp_path: Path, logs: io.StringIO, access: str, logged: set[str]
) -> None:
    settings = Settings(database_url=f"sqlite:///{tmp_path / 'x.sqlite3'}", access_log=access)
    app = create_app(settings)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as client,
    ):
        mark = len(lines(logs))
        assert (await gql(client, "{ __typename }"))["data"] == {"__typename": "Query"}
        assert (await client.post("/graphql", content=b"x" * 70_000)).status_code == 413
        metrics = (await client.get("/metrics")).text
    access_lines = [line for line in lines(logs)[mark:] if line["logger"] == "mmk.access"]
    assert {str(line["status"]) for line in access_lines if line["route"] == "/graphql"} == logged
    counted = 'mmk_http_request_duration_seconds_count{method="POST",route="/graphql"} 2.0'
    assert counted in metrics, "the latency histogram counts every request"
