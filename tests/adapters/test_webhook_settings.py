"""The webhook settings (issue #25, 0064): read as documented, and a value
the server cannot use refused at start, never found out by the deliverer."""

from __future__ import annotations

import pytest

from domain.webhooks import KINDS, parse_networks
from infra.bootstrap import webhook_policy
from infra.settings import Settings, SettingsError

SECRET = "whsec_" + "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3"


def test_defaults_allow_no_private_target_and_retry_for_a_day() -> None:
    hooks = Settings.from_env({}).webhooks
    assert (hooks.timeout, hooks.concurrency, hooks.poll_interval) == (10, 4, 1)
    assert (hooks.first_retry, hooks.retry_for, hooks.retention) == (5, 86_400, 7 * 86_400)
    assert hooks.url is None and hooks.kinds == tuple(KINDS)
    policy = webhook_policy(hooks)
    assert policy.allowed == () and policy.retry.give_up_after.total_seconds() == 86_400


def test_values_are_read() -> None:
    env = {
        "MMK_WEBHOOK_ALLOWED_NETWORKS": "127.0.0.0/8, ::1/128",
        "MMK_WEBHOOK_TIMEOUT": "3",
        "MMK_WEBHOOK_FIRST_RETRY": "2",
        "MMK_WEBHOOK_RETRY_FOR": "3600",
        "MMK_WEBHOOK_URL": "http://127.0.0.1:9000/hooks",
        "MMK_WEBHOOK_SECRET": SECRET,
        "MMK_WEBHOOK_KINDS": "YOUR_TURN, YOUR_GAME_ENDED",
    }
    hooks = Settings.from_env(env).webhooks
    assert hooks.kinds == ("YOUR_TURN", "YOUR_GAME_ENDED") and hooks.secret == SECRET
    policy = webhook_policy(hooks)
    assert policy.allowed == parse_networks("127.0.0.0/8,::1/128")
    assert policy.retry.first.total_seconds() == 2
    assert SECRET not in repr(hooks)


@pytest.mark.parametrize(
    "env",
    [
        {"MMK_WEBHOOK_ALLOWED_NETWORKS": "not-a-network"},
        {"MMK_WEBHOOK_URL": "https://hooks.example.com/"},  # no secret
        {"MMK_WEBHOOK_SECRET": SECRET},  # no URL
        {"MMK_WEBHOOK_URL": "https://hooks.example.com/", "MMK_WEBHOOK_SECRET": "whsec_short"},
        # a private target the settings do not allow: refused at start, not
        # left to block the deliverer
        {"MMK_WEBHOOK_URL": "http://10.0.0.1/hooks", "MMK_WEBHOOK_SECRET": SECRET},
        {"MMK_WEBHOOK_KINDS": "YOUR_TURN,NOPE"},
        {"MMK_WEBHOOK_TIMEOUT": "0"},
    ],
)
def test_unusable_values_are_refused_at_start(env: dict[str, str]) -> None:
    with pytest.raises(SettingsError):
        Settings.from_env(env)
