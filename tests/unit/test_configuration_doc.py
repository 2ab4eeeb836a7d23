"""docs/configuration.md is generated from infra/settings_docs.py (``make
docs``): the committed file is what the generator writes, every variable
the server reads is documented once, and a documented default is the
default (setting a variable to it changes nothing)."""

from __future__ import annotations

import re
from pathlib import Path

from infra.settings import ENV_VARS, Settings, jwt_settings, webhook_settings
from infra.settings_docs import SECTIONS, documented, render

ROOT = Path(__file__).resolve().parents[2]
LITERAL = re.compile(r"`([^`]*)`")
# A provider named, so that jwt_settings reads the other JWT variables.
JWT_BASE = {
    "MMK_JWT_ISSUER": "https://id.example.com",
    "MMK_JWT_AUDIENCE": "mmk",
    "MMK_JWT_JWKS_URL": "https://id.example.com/jwks.json",
}


def test_the_committed_file_is_generated() -> None:
    committed = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert committed == render(), "docs/configuration.md is stale: run `make docs`"


def test_every_variable_is_documented_once() -> None:
    names = documented()
    assert len(names) == len(set(names))
    assert set(names) == set(ENV_VARS)


def test_each_literal_default_is_the_default() -> None:
    """A row whose defaults are all literals (`75`, `true` / `true`)."""
    checked = 0
    for section in SECTIONS:
        for setting in section.settings:
            parts = setting.default.split(" / ")
            values = [LITERAL.fullmatch(p) for p in parts]
            if len(parts) != len(setting.names) or not all(values):
                continue
            env = {n: v.group(1) for n, v in zip(setting.names, values, strict=True) if v}
            assert Settings.from_env(env) == Settings.from_env({}), setting.names
            assert webhook_settings(env) == webhook_settings({}), setting.names
            assert jwt_settings({**JWT_BASE, **env}) == jwt_settings(JWT_BASE), setting.names
            checked += 1
    assert checked > 40
