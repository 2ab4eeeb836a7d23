"""The README walkthrough's curl commands, and docs/clients.md's, run as
written with the real ``curl`` (no shell) against a real server: each
placeholder filled in from an earlier step's output, the base URL the
server's. The game is played on to ``GameEnded`` between the two runs of the
streaming commands: the README's blocks over HTTP, its ``Events``
subscription over a WebSocket, the loop it describes (tests/stream_policy.py)."""

from __future__ import annotations

import json
import shutil
import subprocess
from typing import Any

import pytest

from tests.e2e.client import ISSUED_TOKENS, Api, action_document
from tests.e2e.conftest import Server
from tests.e2e.wsclient import TRANSPORT_WS, ws_connection
from tests.http_streams import Item, MultipartReader, SSEReader
from tests.readme_walkthrough import (
    START_EVENTS,
    Curl,
    block_named,
    clients_curls,
    graphql_blocks,
    readme_action,
    readme_curls,
)
from tests.services import REQUIRE_SERVICES_ENV, services_required
from tests.stream_policy import action_for

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

STREAM_SECONDS = 3  # how long the test follows each `curl -N` stream of a live game
TIMED_OUT = 28  # curl's exit status when --max-time ends the transfer
# Test-only options: no ~/.curlrc (-q must come first), no proxy, errors shown.
OPTIONS = ("-q", "--noproxy", "*", "-S")
SEAT = 0


@pytest.fixture(scope="module")
def curl() -> str:
    path = shutil.which("curl")
    if path is None:
        if services_required():
            pytest.fail(f"curl is not on the PATH, and {REQUIRE_SERVICES_ENV}=1 requires it")
        pytest.skip(f"curl is not on the PATH (set {REQUIRE_SERVICES_ENV}=1 to make this an error)")
    return path


class Walkthrough:
    """Runs the documents' curl commands against one server, remembering the
    values later commands need."""

    def __init__(self, curl: str, server: Server) -> None:
        self.curl, self.url = curl, f"{server.base_url}/graphql"
        self.values: dict[str, str] = {}

    def _run(self, command: Curl, *extra: str, timeout: float) -> tuple[int, str, str]:
        """curl's exit status, stdout and stderr (bytes kept: CRLF matters)."""
        argv = command.argv(self.url, self.values, *OPTIONS, *extra)
        argv[0] = self.curl
        done = subprocess.run(argv, capture_output=True, timeout=timeout, check=False)
        return done.returncode, done.stdout.decode(), done.stderr.decode()

    def data(self, command: Curl) -> dict[str, Any]:
        """A query or mutation: its ``data``, failing on any error."""
        status, out, err = self._run(command, timeout=30)
        assert status == 0, err
        result = json.loads(out)
        assert "errors" not in result, result
        data: dict[str, Any] = result["data"]
        assert all("code" not in v for v in data.values()), data  # no Refusal
        return data

    def stream(self, command: Curl, *, ends: bool) -> list[Item]:
        """A ``curl -N`` subscription: followed for STREAM_SECONDS while the
        game goes on, or to its end (``ends``)."""
        if ends:
            status, out, err = self._run(command, "--max-time", "30", timeout=60)
            assert status == 0, (status, err, out)
        else:
            status, out, err = self._run(
                command, "--max-time", str(STREAM_SECONDS), timeout=STREAM_SECONDS + 30
            )
            assert status == TIMED_OUT, (status, err, out)  # still open: the game goes on
        reader = MultipartReader() if "multipart" in command.headers["accept"] else SSEReader()
        return reader.feed(out)


def events_of(items: list[Item], *, ended: bool) -> list[dict[str, Any]]:
    """The events a stream gave, in order, seq 1, 2, 3...; with ``ended``, the
    stream's end after them."""
    if ended:
        assert items[-1].kind == "end", items[-1]
        items = items[:-1]
    assert all(i.kind in ("result", "heartbeat") for i in items), items  # no error
    results = [i.result for i in items if i.result is not None]
    assert all(set(r) - {"extensions"} == {"data"} for r in results), results
    events = [r["data"]["gameEvents"] for r in results]
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    return events


async def _play_on(server: Server, api: Api, token: str, game: str) -> int:
    """Steps 4 to 6: the README's Events subscription over a WebSocket, each
    ActionRequired of seat 0 answered until GameEnded; the moves made."""
    moves = 0
    async with ws_connection(server.ws_url, TRANSPORT_WS, token) as ws:
        op = await ws.subscribe(block_named("Events"), {"game": game})
        while True:
            payload = await op.next(20)
            assert not payload.get("errors"), payload
            event = payload["data"]["gameEvents"]
            if event["__typename"] == "GameEnded":
                return moves
            if event["__typename"] != "ActionRequired" or event["seat"] != SEAT:
                continue
            mutation, arguments = action_for(event["choices"])
            shown = readme_action(mutation, arguments)
            if shown is not None:
                block, variables = shown
                body = await api.raw(block, {"game": game, **variables}, token)
            else:
                document = action_document(mutation, arguments)
                body = await api.raw(document, {"gameId": game, **arguments}, token)
            assert "errors" not in body, body
            (change,) = body["data"].values()
            assert "code" not in change, change  # no Refusal
            moves += 1


async def test_the_walkthrough_runs_with_curl(curl: str, server: Server, api: Api) -> None:
    commands = readme_curls()
    assert [c.streams for c in commands] == [False, False, True]
    sign_in, start, follow = commands
    (multipart,) = clients_curls()
    run = Walkthrough(curl, server)

    # Step 1.
    player = run.data(sign_in)["createPlayer"]
    assert player["player"]["name"] == "Ann"
    token = player["token"]
    run.values["<token>"] = token
    ISSUED_TOKENS.append(token)  # the server must never log it
    # Step 2: the blocks the README shows without a curl, then its curl.
    blocks = graphql_blocks()
    created = (await api.data(blocks[1], token=token))["createGame"]
    assert created["version"] == 1
    game: str = created["gameId"]
    run.values["<gameId>"] = game
    for block in blocks[2:4]:
        assert "code" not in (await api.data(block, {"game": game}, token))["addBot"]
    started = run.data(start)["startGame"]
    assert [e["__typename"] for e in started["events"]] == START_EVENTS

    # Step 3, while the game waits for seat 0 to lead: the stream stays open.
    live = events_of(run.stream(follow, ends=False), ended=False)
    assert live[0]["__typename"] == "GameCreated"
    assert live[-1]["__typename"] == "ActionRequired"
    assert (live[-1]["seat"], live[-1]["phase"]) == (SEAT, "LEAD")
    assert [c["kind"] for c in live[-1]["choices"]] == ["PLAY_CARD", "SEND_MESSAGE"]

    assert await _play_on(server, api, token, game) == 17

    # The same commands once the game is over: the whole log, then the end.
    over_sse = events_of(run.stream(follow, ends=True), ended=True)
    over_multipart = events_of(run.stream(multipart, ends=True), ended=True)
    assert over_sse == over_multipart
    assert over_sse[: len(live)] == live
    assert over_sse[-1]["__typename"] == "GameEnded" and over_sse[-1]["winners"]
