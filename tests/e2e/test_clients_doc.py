"""docs/clients.md "Client libraries": each snippet runs as written against a real
server (its URLs, ``<token>`` and ``<gameId>`` filled in), following a game
of bots as a signed-in spectator to its end: every event in order, then the
stream's end. The JavaScript ones run on Node with the packages of
tests/node (``ws`` as the WebSocket of Node 20), the Python one on this
venv's ``gql``."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.client import Api
from tests.e2e.conftest import ROOT, Server
from tests.e2e.node_build import run

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

NODE_PRELUDE = 'import WebSocket from "ws";\nglobalThis.WebSocket ??= WebSocket;\n'


def _blocks(lang: str) -> list[str]:
    text = (ROOT / "docs" / "clients.md").read_text(encoding="utf-8")
    start = text.index("## Client libraries")
    section = text[start : text.index("\n## ", start)]
    return re.findall(rf"```{lang}\n(.*?)```", section, re.S)


def _filled(snippet: str, server: Server, token: str, game_id: str) -> str:
    for placeholder in ("http://127.0.0.1:8000/graphql", "ws://127.0.0.1:8000/graphql"):
        assert placeholder in snippet or placeholder.startswith("http"), placeholder
    return (
        snippet.replace("http://127.0.0.1:8000/graphql", f"{server.base_url}/graphql")
        .replace("ws://127.0.0.1:8000/graphql", server.ws_url)
        .replace("<token>", token)
        .replace("<gameId>", game_id)
    )


@pytest.fixture
async def bots_game(api: Api) -> tuple[str, str]:
    """A watcher's token and a game of three bots, started (it plays itself)."""
    host = await api.new_person("readme-clients")
    game_id = await api.create_game(
        host, seatCount=3, takeSeat=False, seed="readme-clients", practice=True
    )
    for strategy in ("GREEDY", "RANDOM", "GREEDY"):
        await api.add_bot(host, game_id, strategy)
    await api.start(host, game_id)
    return host.token, game_id


def _followed(stdout: str) -> list[tuple[str, int]]:
    """The ``<__typename> <seq>`` lines a snippet printed, checked gapless to
    GameEnded."""
    seen = [(kind, int(seq)) for kind, seq in re.findall(r"^(\w+) (\d+)$", stdout, re.M)]
    assert [seq for _, seq in seen] == list(range(1, len(seen) + 1)), stdout
    assert seen[0][0] == "GameCreated" and seen[-1][0] == "GameEnded", stdout
    return seen


def test_the_document_has_the_snippets() -> None:
    assert len(_blocks("js")) == 2 and len(_blocks("python")) == 1


@pytest.mark.parametrize("index", [0, 1], ids=["apollo-client", "graphql-ws"])
async def test_a_javascript_snippet_follows_a_game_to_its_end(
    built: Path, node: str, server: Server, bots_game: tuple[str, str], index: int
) -> None:
    token, game_id = bots_game
    (built / "possibleTypes.json").write_text((ROOT / "possibleTypes.json").read_text())
    script = built / f"readme-{index}.mjs"
    script.write_text(NODE_PRELUDE + _filled(_blocks("js")[index], server, token, game_id))
    stdout = run([node, script.name], built)
    seen = _followed(stdout)
    assert ("ActionRequired" in {kind for kind, _ in seen}) and len(seen) > 30
    if index == 0:
        assert stdout.rstrip().endswith("over")  # the subscription completed


async def test_the_python_gql_snippet_follows_a_game_to_its_end(
    server: Server, bots_game: tuple[str, str], tmp_path: Path
) -> None:
    token, game_id = bots_game
    script = tmp_path / "follow.py"
    script.write_text(_filled(_blocks("python")[0], server, token, game_id))
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert len(_followed(done.stdout)) > 30
