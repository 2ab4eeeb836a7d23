"""The app's backend with a service key (issue #24), on a real server, as a
backend runs it (Python ``httpx``): the operator makes keys with ``mmk
service-key``; the backend issues its users' tokens by external id (the same
player each time, a session per device), looks them up, and is refused what
its scopes do not allow; a revoked key stops at once; a player's token does
no service's work, nor a key a player's."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.client import ISSUED_TOKENS
from tests.e2e.own_server import assert_no_leak, own_server

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

ISSUE = (
    "mutation($x: String!, $n: String!, $l: String, $k: String) { issuePlayerToken("
    "externalId: $x, name: $n, label: $l, idempotencyKey: $k) { __typename "
    "... on IssuedPlayerToken { token created "
    "player { id name } session { id label } } ... on Refusal { code message } } }"
)
LOOKUP = (
    "query($x: String!) { playerByExternalId(externalId: $x) { __typename "
    "... on Player { id name } ... on Refusal { code } } }"
)
ME = "{ me { player { id } sessions { label current } } }"
NEW_GAME = (
    "mutation { createGame(input: {seatCount: 3}) { __typename ... on GameChange { gameId } } }"
)
MY_GAMES = "{ me { games { edges { node { seat yourTurn game { id status } } } } } }"
PLAYER_GAMES = (
    "query($p: ID!) { playerGames(playerId: $p) { __typename ... on MyGameConnection "
    "{ edges { node { seat game { id } } } } } }"
)


def mmk(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "api.cli", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def new_key(database: str, name: str, scopes: str) -> str:
    done = mmk("service-key", "create", "--name", name, "--scopes", scopes, "--database", database)
    assert done.returncode == 0, done.stderr
    key = done.stdout.strip()
    ISSUED_TOKENS.append(key)
    assert key.startswith("mmk_sk_") and key not in done.stderr
    return key


async def gql(http: httpx.AsyncClient, token: str, query: str, **variables: Any) -> dict[str, Any]:
    r = await http.post(
        "/graphql",
        json={"query": query, "variables": variables},
        headers={"authorization": f"Bearer {token}"},
    )
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


def code_of(body: dict[str, Any]) -> str:
    code: str = body["errors"][0]["extensions"]["code"]
    return code


async def test_a_backend_issues_its_users_tokens_within_its_scopes(tmp_path: Path) -> None:
    database = f"sqlite:///{tmp_path}/service.sqlite3"
    with own_server(tmp_path, database) as (srv, _):
        writer = new_key(database, "App backend", "players:write,players:read,games:read")
        reader = new_key(database, "Support desk", "players:read")
        async with httpx.AsyncClient(base_url=srv.base_url, timeout=20, trust_env=False) as http:
            first = (await gql(http, writer, ISSUE, x="user-1", n="Ann", l="phone"))["data"]
            first = first["issuePlayerToken"]
            assert first["__typename"] == "IssuedPlayerToken" and first["created"], first
            ISSUED_TOKENS.append(first["token"])
            ann = first["player"]["id"]
            me = (await gql(http, first["token"], ME))["data"]["me"]
            assert me["player"]["id"] == ann

            made = await gql(http, first["token"], NEW_GAME)
            game_id = made["data"]["createGame"]["gameId"]

            # another device: the same player, a second session, the same games
            again = (await gql(http, writer, ISSUE, x="user-1", n="Other", l="tablet"))["data"]
            again = again["issuePlayerToken"]
            ISSUED_TOKENS.append(again["token"])
            assert again["player"] == {"id": ann, "name": "Ann"} and not again["created"]
            me = (await gql(http, again["token"], ME))["data"]["me"]
            assert sorted((s["label"], s["current"]) for s in me["sessions"]) == [
                ("phone", False),
                ("tablet", True),
            ]
            mine = (await gql(http, again["token"], MY_GAMES))["data"]["me"]["games"]["edges"]
            assert [(e["node"]["game"]["id"], e["node"]["seat"]) for e in mine] == [(game_id, 0)]
            theirs = (await gql(http, writer, PLAYER_GAMES, p=ann))["data"]["playerGames"]
            assert [e["node"]["game"]["id"] for e in theirs["edges"]] == [game_id]
            assert code_of(await gql(http, reader, PLAYER_GAMES, p=ann)) == "FORBIDDEN"

            found = (await gql(http, reader, LOOKUP, x="user-1"))["data"]["playerByExternalId"]
            assert found == {"__typename": "Player", "id": ann, "name": "Ann"}
            missing = (await gql(http, reader, LOOKUP, x="user-2"))["data"]["playerByExternalId"]
            assert missing == {"__typename": "Refusal", "code": "NOT_FOUND"}
            # a backend's retry with its key: the same token, no session more
            key = "signin-0000-user-5-a"
            tries = [
                (await gql(http, writer, ISSUE, x="user-5", n="Eve", k=key))["data"]
                for _ in range(2)
            ]
            tokens = {t["issuePlayerToken"]["token"] for t in tries}
            ISSUED_TOKENS.extend(tokens)
            assert len(tokens) == 1 and all(t["issuePlayerToken"]["created"] for t in tries)
            bad = (await gql(http, writer, ISSUE, x=" ", n="Ann"))["data"]["issuePlayerToken"]
            assert bad["__typename"] == "Refusal" and bad["code"] == "BAD_INPUT"

            # scopes, and each credential in its own lane
            assert code_of(await gql(http, reader, ISSUE, x="user-3", n="Cy")) == "FORBIDDEN"
            assert code_of(await gql(http, first["token"], LOOKUP, x="user-1")) == "FORBIDDEN"
            assert code_of(await gql(http, writer, ME)) == "UNAUTHENTICATED"
            assert code_of(await gql(http, "mmk_sk_made-up", LOOKUP, x="u")) == "UNAUTHENTICATED"

            listed = mmk("service-key", "list", "--database", database)
            rows = [line.split("\t") for line in listed.stdout.splitlines()]
            assert [(r[1], r[2], r[4]) for r in rows] == [
                ("App backend", "games:read players:read players:write", "live"),
                ("Support desk", "players:read", "live"),
            ]
            revoked = mmk("service-key", "revoke", rows[0][0], "--database", database)
            assert revoked.returncode == 0, revoked.stderr
            assert code_of(await gql(http, writer, LOOKUP, x="user-1")) == "UNAUTHENTICATED"
            assert (await gql(http, reader, LOOKUP, x="user-1"))["data"]["playerByExternalId"]
            again_revoked = mmk("service-key", "revoke", rows[0][0], "--database", database)
            assert again_revoked.returncode == 1 and "no live service key" in again_revoked.stderr
    assert_no_leak(srv)
