"""Real Node clients against a real ``mmk serve`` (tests/node): graphql-ws
players and a spectator playing a sealed game from their streams alone;
Apollo Client with automatic persisted queries (hashed queries by GET),
subscriptions over graphql-ws and over Apollo's multipart HTTP protocol, and
its normalized cache with possibleTypes.json; graphql-codegen's TypeScript
for the whole schema and for the clients' operations, compiled by
``tsc --strict`` with the clients that use it.

The packages come from ``make node-deps`` (``npm ci`` of
tests/node/package-lock.json; ``make test`` runs it when npm is present).
Without Node.js or the installed packages the tests are skipped, saying why;
under ``MMK_REQUIRE_SERVICES=1`` (CI) they fail.

The build (tests/e2e/node_build.py) is made in a directory of the test
session's own, so parallel workers never share build output.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.e2e.conftest import ROOT, Server
from tests.e2e.node_build import run
from tests.e2e.own_server import own_server


def _client(built: Path, node: str, program: str, server: Server) -> dict[str, Any]:
    stdout = run(
        [node, f"dist/src/{program}.js"],
        built,
        {
            "MMK_HTTP_URL": f"{server.base_url}/graphql",
            "MMK_WS_URL": server.ws_url,
            "MMK_POSSIBLE_TYPES": str(ROOT / "possibleTypes.json"),
        },
    )
    summary: dict[str, Any] = json.loads(stdout.strip().splitlines()[-1])
    return summary


def test_codegen_types_every_event_and_tsc_strict_accepts_it(built: Path) -> None:
    schema_ts = (built / "generated" / "schema.ts").read_text()
    possible = json.loads((ROOT / "possibleTypes.json").read_text())
    for kind in possible["GameEvent"]:
        assert f"export type {kind} = GameEvent & {{" in schema_ts, kind
    operations_ts = (built / "generated" / "graphql.ts").read_text()
    assert "export const GameEventsDocument" in operations_ts
    assert (built / "dist" / "src" / "apollo.js").exists()


def test_graphql_ws_players_and_a_spectator_play_from_their_streams(
    built: Path, node: str, server: Server
) -> None:
    summary = _client(built, node, "graphqlWs", server)
    watchers = summary["watchers"]
    assert [w["seat"] for w in watchers] == [0, 1, 2, None]
    assert len({w["events"] for w in watchers}) == 1
    assert all(w["moves"] > 5 and w["moves"] == w["ownHands"] for w in watchers[:3])
    assert watchers[3]["moves"] == 0
    ends = {json.dumps(w["ended"], sort_keys=True) for w in watchers}
    assert len(ends) == 1 and watchers[0]["ended"]["__typename"] == "GameEnded"


def test_apollo_client_persisted_queries_both_subscription_transports_and_its_cache(
    built: Path, node: str, tmp_path: Path
) -> None:
    # A server of its own: the persisted-query store starts empty, so the
    # first request of each document is the hash alone, refused as not found.
    with own_server(tmp_path, f"sqlite:///{tmp_path}/apollo.sqlite3") as (server, _):
        summary = _client(built, node, "apollo", server)
    assert len(set(summary["events"])) == 1 and summary["events"][0] > 30
    assert summary["cachedEvents"] == summary["events"][0]
