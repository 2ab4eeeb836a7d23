"""docker/compose.dev.yaml, the compose stack for local development (no
Docker needed): merged into docker/compose.yaml as ``docker compose -f
compose.yaml -f compose.dev.yaml`` does, it turns on the playground,
introspection and development mode (``MMK_DEV``) on every API instance, and
changes nothing else; compose.yaml alone keeps the three off
(tests/test_docker_files.py), as the image does."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
import yaml

from tests.test_docker_files import (
    COMPOSE_FILE,
    DOCKER_DIR,
    NGINX_CONF,
    api_services,
    check_compose,
    check_nginx,
    compose_schema,
    environment,
    fails,
)

DEV_FILE = DOCKER_DIR / "compose.dev.yaml"
DEV_SWITCHES = frozenset({"MMK_DEV", "MMK_GRAPHIQL", "MMK_INTROSPECTION"})


def load(path: Any) -> dict[str, Any]:
    """A compose file, its YAML merges and anchors resolved into copies."""
    loaded: dict[str, Any] = json.loads(json.dumps(yaml.safe_load(path.read_text())))
    return loaded


def merged(base: Any, override: Any) -> Any:
    """``override`` merged into ``base`` as Compose merges files, for what an
    override may hold here (mappings, ``environment`` among them, merged key
    by key; anything else replaced)."""
    if isinstance(base, dict) and isinstance(override, dict):
        out = dict(base)
        for key, value in override.items():
            out[key] = merged(base[key], value) if key in base else value
        return out
    return override


def check_dev_override(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """The override touches the API instances' development switches only, and
    the merged project holds together with them on; returns it interpolated."""
    errors = [e.message for e in compose_schema().iter_errors(override)]
    assert not errors, f"compose.dev.yaml, by the Compose Specification: {errors}"
    extra = sorted(k for k in override if k != "services" and not k.startswith("x-"))
    assert not extra, f"compose.dev.yaml changes {extra}: only the API services' environment"
    apis = api_services(base)
    for name, service in override.get("services", {}).items():
        assert name in apis, f"compose.dev.yaml changes {name}, not an API service"
        assert set(service) == {"environment"}, f"compose.dev.yaml changes {name}'s {set(service)}"
        others = sorted(set(environment(service)) - DEV_SWITCHES)
        assert not others, f"compose.dev.yaml sets {others} on {name}: not a development switch"
    missing = sorted(set(apis) - set(override.get("services", {})))
    assert not missing, f"compose.dev.yaml leaves {missing} as in production"
    return check_compose(merged(base, override), dev=True)


def test_the_dev_override_turns_the_switches_on_and_nothing_else() -> None:
    base = load(COMPOSE_FILE)
    project = check_dev_override(base, load(DEV_FILE))
    check_nginx(NGINX_CONF.read_text(), project)
    production = check_compose(base)
    for name in api_services(project):
        before, after = (
            environment(production["services"][name]),
            environment(project["services"][name]),
        )
        assert {k for k in after if after[k] != before.get(k)} == DEV_SWITCHES, name
    rest = {k: v for k, v in project["services"].items() if k not in api_services(project)}
    assert rest == {k: v for k, v in production["services"].items() if k in rest}


# compose.dev.yaml: (service, key, value, words of the failure expected)
DEV_BREAKS = {
    "a port": ("postgres", "ports", ["5432:5432"], "changes postgres, not an API service"),
    "another key": ("api1", "command", ["mmk", "serve"], "changes api1's"),
    "another variable": ("api2", "environment", {"MMK_SECRET_KEY": "x"}, "['MMK_SECRET_KEY']"),
    "one instance": ("api2", None, None, "leaves ['api2'] as in production"),
    "dev off": ("api1", "environment", {"MMK_DEV": "false"}, "['MMK_DEV'] off"),
}


@pytest.mark.parametrize("case", DEV_BREAKS.values(), ids=DEV_BREAKS.keys())
def test_dev_override_checks_catch(case: tuple[str, str | None, Any, str]) -> None:
    service, key, value, expected = case
    override = copy.deepcopy(load(DEV_FILE))
    if key is None:
        del override["services"][service]
    elif key == "environment":
        override["services"].setdefault(service, {}).setdefault(key, {}).update(value)
    else:
        override["services"].setdefault(service, {})[key] = value
    with fails(expected):
        check_dev_override(load(COMPOSE_FILE), override)
