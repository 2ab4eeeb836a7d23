"""Where a WebSocket client's ``connection_init`` payload carries its token
(api/graphql/context.py, ``connection_authorization``): the shapes clients
send are read; a credential anywhere else is refused, never ignored (a
seated player must not get the spectators' feed without a word).
tests/e2e/test_transport.py checks the same through a real server."""

from __future__ import annotations

from typing import Any

import pytest

from api.graphql.context import connection_authorization
from api.graphql.view import MAX_CLOSE_REASON_BYTES
from domain.errors import Unauthenticated

TOKEN = "s3cr3t-t0ken"
BEARER = f"Bearer {TOKEN}"


@pytest.mark.parametrize(
    "payload",
    [
        {"authorization": BEARER},  # docs/clients.md "Signing in"
        {"Authorization": BEARER},  # GraphiQL's Headers pane
        {"AUTHORIZATION": BEARER},
        {"headers": {"Authorization": BEARER}},  # Apollo Client
        {"headers": {"authorization": BEARER, "x-client": "ios"}},
        {"Headers": {"Authorization": BEARER}},
        {"token": TOKEN},
        {"authToken": TOKEN},
        {"token": BEARER},  # "Bearer " may come with it
        {"authToken": f"bearer {TOKEN}"},
        {"authorization": BEARER, "headers": {"Authorization": BEARER}},  # said twice alike
        {"authorization": BEARER, "clientName": "web", "version": 3},
    ],
)
def test_the_shapes_clients_send_are_read(payload: dict[str, Any]) -> None:
    found = connection_authorization(payload)
    assert found is not None and found.lower() == BEARER.lower()


@pytest.mark.parametrize(
    "payload", [None, {}, {"clientName": "web"}, {"headers": {"x-client": "ios"}}, {"n": [1, 2]}]
)
def test_no_credential_is_anonymous(payload: dict[str, Any] | None) -> None:
    assert connection_authorization(payload) is None


def test_a_bad_value_in_a_read_place_is_passed_on() -> None:
    """Checked later as any Authorization value is (here: not a bearer token)."""
    assert connection_authorization({"authorization": "Basic dXNlcjpwYXNz"}) == (
        "Basic dXNlcjpwYXNz"
    )


@pytest.mark.parametrize(
    ("payload", "named"),
    [
        ({"payload": {"headers": {"Authorization": BEARER}}}, "payload.headers.Authorization"),
        ({"payload": {"authorization": BEARER}}, "payload.authorization"),
        ({"connectionParams": {"authToken": TOKEN}}, "connectionParams.authToken"),
        ({"access_token": TOKEN}, "access_token"),
        ({"accessToken": TOKEN}, "accessToken"),
        ({"jwt": TOKEN}, "jwt"),
        ({"auth": {"bearer": TOKEN}}, "auth.bearer"),
        ({"headers": {"X-Auth-Token": TOKEN}}, "headers.X-Auth-Token"),
        ({"credentials": [{"value": BEARER}]}, "credentials.0.value"),
        ({"x": BEARER}, "x"),  # a bearer value under any key
    ],
)
def test_a_credential_elsewhere_is_refused(payload: dict[str, Any], named: str) -> None:
    with pytest.raises(Unauthenticated) as refused:
        connection_authorization(payload)
    message = refused.value.message
    assert named in message and '{"authorization": "Bearer <token>"}' in message
    assert TOKEN not in message  # keys only, never values
    assert len(message.encode()) <= MAX_CLOSE_REASON_BYTES


@pytest.mark.parametrize(
    ("payload", "words"),
    [
        ({"authorization": 42}, "authorization must be a string"),
        ({"headers": {"Authorization": None}}, "headers.Authorization must be a string"),
        ({"token": ["a"]}, "token must be a string"),
        ({"authorization": BEARER, "token": "other"}, "different tokens in authorization, token"),
    ],
)
def test_unusable_credentials_are_refused(payload: dict[str, Any], words: str) -> None:
    with pytest.raises(Unauthenticated, match=words):
        connection_authorization(payload)


def test_long_keys_fit_a_close_reason() -> None:
    payload = {"wrapper" * 30: {"authorization" * 10: BEARER}}
    with pytest.raises(Unauthenticated) as refused:
        connection_authorization(payload)
    assert len(refused.value.message.encode()) <= MAX_CLOSE_REASON_BYTES
