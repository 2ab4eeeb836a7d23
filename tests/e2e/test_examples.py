"""The runnable examples of examples/ (examples/README.md), each run as a
user runs it, against a real ``mmk serve``:

- examples/typescript: ``npm run codegen`` (graphql-codegen, typed
  documents, scalars mapped), ``npm run build`` (``tsc --strict``), then
  ``npm start -- --url ...``: a guest quick-plays against bots and plays the
  whole game from its subscription alone, to ``GameEnded``. Its packages
  come from ``make node-deps`` (``npm ci`` of its package-lock.json);
  without Node.js, npm or them the test skips, and fails under
  ``MMK_REQUIRE_SERVICES=1``, as tests/node does.
- examples/python/play.py: the same game with Python ``gql`` over one
  WebSocket; and again with its socket reset after its first move (a TCP
  proxy cut): it resumes after the last event it handled and plays on.
- examples/service-backend/backend.py: a service key's backend registers
  its webhook URL, signs its users in (``issuePlayerToken``: the same player
  for the same user id, a session per device), and turns the your-turn
  webhook a real move caused, verified by ``standardwebhooks``, into one
  push; a delivery not signed with its secret is refused.
- docs/codegen.md quotes the example's codegen configuration as it is, and
  examples/README.md lists every example.

The result of each game is read from the example's own output (its last
line, ``result: {...}``).
"""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.client import ISSUED_TOKENS
from tests.e2e.conftest import ROOT, Server, _free_port
from tests.e2e.node_build import RUN_TIMEOUT, run, staged
from tests.e2e.own_server import assert_no_leak, own_server
from tests.e2e.tcp_proxy import tcp_proxy
from tests.e2e.test_service_keys import new_key
from tests.services import unavailable

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]

EXAMPLES = ROOT / "examples"
TS_DIR = EXAMPLES / "typescript"
TS_SOURCES = (
    "package.json",
    "package-lock.json",
    "tsconfig.json",
    "codegen.ts",
    "operations.graphql",
    "src",
)
STEP = 10.0  # seconds for the backend to start, or a push to arrive
QUOTED = re.compile(r"<!-- quoted: (\S+) -->\n```\w*\n(.*?)\n```", re.S)


def _result(stdout: str) -> dict[str, Any]:
    last = stdout.strip().splitlines()[-1]
    assert last.startswith("result: "), stdout[-2000:]
    result: dict[str, Any] = json.loads(last.removeprefix("result: "))
    return result


def _played_to_the_end(result: dict[str, Any], stdout: str, seats: int) -> None:
    """A whole game, from the stream: the player knew its seat, moved more
    than a few times, and saw the end (every seat scored, a winner)."""
    assert result["seat"] in range(seats), result
    assert result["moves"] > 5, result
    assert result["termination"] != "ABANDONED", result
    assert len(result["scores"]) == seats and result["winners"], result
    assert result["won"] == (result["seat"] in result["winners"]), result
    assert f"game over ({result['termination']})" in stdout
    moves = [line for line in stdout.splitlines() if line.startswith("you (")]
    assert len(moves) == result["moves"]  # one line a move it sent


@pytest.fixture(scope="module")
def examples_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, str]]:
    """A server of the module's own (no other test's quick-play game to
    join), which may post webhooks to loopback; and its database's URL."""
    tmp = tmp_path_factory.mktemp("examples")
    database = f"sqlite:///{tmp}/examples.sqlite3"
    allow = {"MMK_WEBHOOK_ALLOWED_NETWORKS": "127.0.0.0/8"}
    with own_server(tmp, database, **allow) as (srv, _):
        yield srv, database
    assert_no_leak(srv)


# ---------------------------------------------------------------- TypeScript
@pytest.fixture(scope="module")
def ts_built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """examples/typescript generated and compiled, in a directory of the
    module's own (its installed packages linked), by its own npm scripts."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        unavailable("Node.js and npm are not installed (node, npm not on the PATH)")
    if not (TS_DIR / "node_modules" / ".package-lock.json").exists():
        unavailable("examples/typescript's packages are not installed: run `make node-deps`")
    out = staged(TS_DIR, TS_SOURCES, tmp_path_factory.mktemp("example-ts"))
    run(["npm", "run", "codegen"], out, {"MMK_SCHEMA": str(ROOT / "schema.graphql")})
    run(["npm", "run", "build"], out)  # tsc --strict
    return out


def test_the_typescript_example_is_typed_and_tsc_strict_accepts_it(ts_built: Path) -> None:
    generated = (ts_built / "generated" / "graphql.ts").read_text()
    assert "export const GameEventsDocument" in generated
    # DateTime is text, not unknown (strictScalars: every scalar mapped)
    assert "at: string" in generated and "deadline: string | null" in generated
    assert "TypedDocumentNode" in generated
    assert (ts_built / "dist" / "src" / "play.js").exists()


def test_the_typescript_example_plays_a_game_from_its_stream(
    ts_built: Path, examples_server: tuple[Server, str]
) -> None:
    server, _ = examples_server
    url = f"{server.base_url}/graphql"
    stdout = run(["npm", "start", "--silent", "--", "--url", url, "--seats", "4"], ts_built)
    _played_to_the_end(_result(stdout), stdout, 4)


# ---------------------------------------------------------------- Python
def test_the_python_example_plays_a_game_from_its_stream(
    examples_server: tuple[Server, str],
) -> None:
    server, _ = examples_server
    play = EXAMPLES / "python" / "play.py"
    stdout = run([sys.executable, str(play), "--url", f"{server.base_url}/graphql"], ROOT)
    _played_to_the_end(_result(stdout), stdout, 3)


def test_the_python_example_resumes_its_stream_after_a_dropped_connection(
    examples_server: tuple[Server, str],
) -> None:
    """Its connection reset after its first move (every socket through a
    proxy cut): it subscribes again after the last event it handled, and
    plays on to the end."""
    server, _ = examples_server
    port = int(server.base_url.rsplit(":", 1)[1])
    play = EXAMPLES / "python" / "play.py"
    with tcp_proxy("127.0.0.1", port) as proxy:
        url = f"http://127.0.0.1:{proxy.port}/graphql"
        proc = subprocess.Popen(
            [sys.executable, str(play), "--url", url],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=_pump, args=(proc.stdout, lines), daemon=True).start()
        try:
            seen: list[str] = []
            while not (seen and seen[-1].startswith("you (")):
                try:
                    seen.append(lines.get(timeout=STEP))
                except queue.Empty:
                    raise AssertionError(f"no move in {STEP:g} s: {seen}") from None
            proxy.cut()  # resets the socket; the client waits before it reconnects
            proxy.restore()
            assert proc.wait(RUN_TIMEOUT) == 0, proc.stderr.read() if proc.stderr else ""
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(STEP)
    while not lines.empty():
        seen.append(lines.get())
    stdout = "\n".join(seen) + "\n"
    assert any(line.startswith("connection lost") for line in seen), stdout
    _played_to_the_end(_result(stdout), stdout, 3)


# ---------------------------------------------------------------- service backend
GAME = """mutation($input: CreateGameInput!) { createGame(input: $input) {
  __typename ... on GameChange { gameId } ... on Refusal { code message } } }"""
JOIN = """mutation($g: ID!) { joinGame(gameId: $g) {
  __typename ... on GameChange { gameId } ... on Refusal { code message } } }"""
BOT = """mutation($g: ID!) { addBot(gameId: $g, strategy: RANDOM) {
  __typename ... on GameChange { gameId } ... on Refusal { code message } } }"""
START = """mutation($g: ID!) { startGame(gameId: $g) {
  __typename ... on GameChange { gameId } ... on Refusal { code message } } }"""


def _pump(stream: Any, into: queue.Queue[str]) -> None:
    for line in stream:
        into.put(line.rstrip("\n"))


def _changed(http: httpx.Client, token: str, query: str, **variables: Any) -> str:
    r = http.post(
        "/graphql",
        json={"query": query, "variables": variables},
        headers={"authorization": f"Bearer {token}"},
    )
    assert r.status_code == 200, r.text
    (result,) = r.json()["data"].values()
    assert result["__typename"] == "GameChange", result
    game_id: str = result["gameId"]
    return game_id


def test_a_service_backend_signs_its_users_in_and_pushes_their_turn(
    examples_server: tuple[Server, str],
) -> None:
    server, database = examples_server
    backend = str(EXAMPLES / "service-backend" / "backend.py")
    key = new_key(database, "App backend", "players:write,webhooks")
    port = _free_port()
    env = {"MMK_URL": f"{server.base_url}/graphql", "MMK_SERVICE_KEY": key}
    hook = f"http://127.0.0.1:{port}/mmk-webhooks"
    printed = run([sys.executable, backend, "register", hook, "--kinds", "YOUR_TURN"], ROOT, env)
    secret = printed.strip().removeprefix("WEBHOOK_SECRET=")
    assert secret.startswith("whsec_"), printed
    ISSUED_TOKENS.append(secret)

    proc = subprocess.Popen(
        [sys.executable, backend, "serve"],
        env={**os.environ, **env, "WEBHOOK_SECRET": secret, "PORT": str(port)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    out: queue.Queue[str] = queue.Queue()
    said: queue.Queue[str] = queue.Queue()
    for stream, into in ((proc.stdout, out), (proc.stderr, said)):
        threading.Thread(target=_pump, args=(stream, into), daemon=True).start()
    try:
        assert said.get(timeout=STEP) == f"listening on http://127.0.0.1:{port}"
        with (
            httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=STEP, trust_env=False) as app,
            httpx.Client(base_url=server.base_url, timeout=STEP, trust_env=False) as mmk,
        ):

            def sign_in(user: str, name: str, device: str) -> dict[str, str]:
                r = app.post("/sign-in", json={"userId": user, "name": name, "device": device})
                assert r.status_code == 200, r.text
                issued: dict[str, str] = r.json()
                ISSUED_TOKENS.append(issued["token"])
                return issued

            ann, ann_tablet = (
                sign_in("user-ann", "Ann", "phone"),
                sign_in("user-ann", "Ann", "tablet"),
            )
            bob = sign_in("user-bob", "Bob", "phone")
            assert ann["playerId"] == ann_tablet["playerId"] != bob["playerId"]
            assert ann["token"] != ann_tablet["token"]

            # Bob hosts (seat 0), Ann sits at seat 1 and is the Rat: Bob's
            # start leaves the game waiting for Ann's lead, her turn.
            game_id = _changed(mmk, bob["token"], GAME, input={"seatCount": 3, "ratSeat": 1})
            _changed(mmk, ann["token"], JOIN, g=game_id)
            _changed(mmk, bob["token"], BOT, g=game_id)
            _changed(mmk, bob["token"], START, g=game_id)
            try:
                pushed = json.loads(out.get(timeout=STEP))
            except queue.Empty:
                raise AssertionError(f"no push in {STEP:g} s") from None
            assert pushed["push"]["to"] == "user-ann"
            assert pushed["push"]["kind"] == "YOUR_TURN"
            assert pushed["push"]["gameId"] == game_id

            # not signed with the endpoint's secret: refused, nothing pushed
            forged = app.post("/mmk-webhooks", content=b"{}", headers={"webhook-id": "msg_x"})
            assert forged.status_code == 401
        proc.terminate()
        assert proc.wait(STEP) == 0
        assert out.empty(), out.get()
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(STEP)


# ---------------------------------------------------------------- the docs
def test_the_codegen_guide_quotes_the_working_configuration() -> None:
    quotes = QUOTED.findall((ROOT / "docs" / "codegen.md").read_text(encoding="utf-8"))
    assert [path for path, _ in quotes] == ["examples/typescript/codegen.ts"]
    for path, text in quotes:
        assert text in (ROOT / path).read_text(encoding="utf-8"), f"{path} changed: quote it anew"


def test_the_examples_readme_lists_every_example() -> None:
    listed = (EXAMPLES / "README.md").read_text(encoding="utf-8")
    for example in sorted(p.name for p in EXAMPLES.iterdir() if p.is_dir()):
        assert f"]({example}/)" in listed, f"examples/README.md does not list {example}/"
