"""The README walkthrough's curl commands, run as written with the real
``curl`` (no shell) against a real server, in order: each placeholder filled
in from an earlier step's output, the base URL the server's."""

from __future__ import annotations

import json
import shutil
import subprocess
from typing import Any

import pytest

from tests.e2e.client import ISSUED_TOKENS
from tests.e2e.conftest import Server
from tests.http_streams import Item, MultipartReader, SSEReader
from tests.readme_walkthrough import START_EVENTS, VERSION, Curl, curl_pairs
from tests.services import REQUIRE_SERVICES_ENV, services_required

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(90)]

STREAM_SECONDS = 3  # how long the test follows each `curl -N` stream
TIMED_OUT = 28  # curl's exit status when --max-time ends the transfer
# Test-only options: no ~/.curlrc (-q must come first), no proxy, errors shown.
OPTIONS = ("-q", "--noproxy", "*", "-S")


@pytest.fixture(scope="module")
def curl() -> str:
    path = shutil.which("curl")
    if path is None:
        if services_required():
            pytest.fail(f"curl is not on the PATH, and {REQUIRE_SERVICES_ENV}=1 requires it")
        pytest.skip(f"curl is not on the PATH (set {REQUIRE_SERVICES_ENV}=1 to make this an error)")
    return path


class Walkthrough:
    """Runs the README's curl commands against one server, remembering the
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

    def stream(self, command: Curl) -> list[Item]:
        """A ``curl -N`` subscription, followed for STREAM_SECONDS."""
        status, out, err = self._run(
            command, "--max-time", str(STREAM_SECONDS), timeout=STREAM_SECONDS + 30
        )
        assert status == TIMED_OUT, (status, err, out)  # still open: the game goes on
        reader = MultipartReader() if "multipart" in command.headers["accept"] else SSEReader()
        return reader.feed(out)


def events_of(items: list[Item]) -> list[dict[str, Any]]:
    """The events a still open stream gave, in order, seq 1, 2, 3..."""
    assert all(i.kind in ("result", "heartbeat") for i in items), items  # no end, no error
    results = [i.result for i in items if i.result is not None]
    assert all(set(r) - {"extensions"} == {"data"} for r in results), results
    events = [r["data"]["gameEvents"] for r in results]
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    return events


def test_the_walkthrough_runs_with_curl(curl: str, server: Server) -> None:
    commands = [command for _, command in curl_pairs()]
    assert len(commands) == 9
    run = Walkthrough(curl, server)

    player = run.data(commands[0])["createPlayer"]
    assert player["player"]["name"] == "Ann"
    run.values["<token>"] = player["token"]
    ISSUED_TOKENS.append(player["token"])  # the server must never log it
    created = run.data(commands[1])["createGame"]
    assert created["version"] == 1
    run.values["<gameId>"] = created["gameId"]
    assert run.data(commands[2]) == {"addBot": {"version": 2}}
    assert run.data(commands[3]) == {"addBot": {"version": 3}}
    started = run.data(commands[4])["startGame"]
    assert [e["__typename"] for e in started["events"]] == START_EVENTS

    game = run.data(commands[5])["game"]
    assert game["version"] == VERSION and game["table"]["toAct"] == 0
    assert game["viewer"]["seat"] == 0
    (play,) = [c for c in game["viewer"]["choices"] if c["kind"] == "PLAY_CARD"]
    card = play["cards"][0]["id"]
    run.values["<card id>"] = card
    played = run.data(commands[6])["playCard"]
    assert played["version"] == VERSION + 1
    assert [(e["seat"], e["card"]) for e in played["events"] if "card" in e] == [(0, {"id": card})]
    last = played["events"][-1]
    assert last["__typename"] == "ActionRequired" and last["seat"] == 0

    assert [c.streams for c in commands] == [False] * 7 + [True] * 2
    over_sse, over_multipart = (events_of(run.stream(c)) for c in commands[7:])
    assert over_sse == over_multipart  # the game waits for seat 0: nothing new
    assert over_sse[0]["__typename"] == "GameCreated"
    assert over_sse[-1]["seq"] == last["seq"]  # the whole log, no more
    asked = [e for e in over_sse if e["__typename"] == "ActionRequired"]
    assert [(e["seat"], e["phase"]) for e in asked] == [(0, "LEAD"), (0, "DECISION")]
    assert asked[0]["hand"] and asked[0]["choices"][0]["cards"][0]["id"] == card
    assert [e["card"] for e in over_sse if e["__typename"] == "CardPlayed"] == [{"id": card}]
