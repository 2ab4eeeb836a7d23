"""The container deployment files hold together (no Docker needed).

docker/Dockerfile, docker/compose.yaml, docker/nginx.conf and .dockerignore
are read with real parsers, then checked against each other and against the
code they deploy: the variables infra/settings.py reads (``ENV_VARS``), the
routes of api/app.py, the ``mmk`` console script and the packages of
pyproject.toml.

- Dockerfile: BuildKit's own parser (the ``dockerfile`` package wraps its Go code);
  the image's CMD is run through the real ``mmk`` entry point (uvicorn stubbed).
- .dockerignore: the matcher with which the Docker SDK for Python builds contexts.
- compose.yaml: PyYAML, interpolated, then the Compose Specification's JSON
  schema (the copy that check-jsonschema vendors).
- nginx.conf: crossplane (NGINX's parser in Python), which also rejects unknown
  directives, directives out of context and wrong numbers of arguments.

Each ``check_*`` function raises on the first problem; the tests at the end
feed them broken copies of the real files, so that every check is seen to fail.
"""

from __future__ import annotations

import ast
import contextlib
import copy
import functools
import importlib
import inspect
import io
import ipaddress
import json
import logging
import os
import re
import shlex
import textwrap
import tomllib
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any
from unittest import mock
from urllib.parse import urlsplit

import crossplane
import dockerfile
import jsonschema
import pytest
import yaml
from check_jsonschema.builtin_schemas import get_builtin_schema
from crossplane.analyzer import DIRECTIVES
from docker.utils.build import PatternMatcher, exclude_paths
from sqlalchemy.engine import make_url

from api.app import create_app
from api.fast.ws_protocol import PING_INTERVAL
from infra.settings import ENV_VARS, Settings, jwt_settings, webhook_settings

REPO_ROOT = Path(__file__).resolve().parent.parent
DOCKER_DIR = REPO_ROOT / "docker"
DOCKERFILE = DOCKER_DIR / "Dockerfile"
COMPOSE_FILE = DOCKER_DIR / "compose.yaml"
NGINX_CONF = DOCKER_DIR / "nginx.conf"
DOCKERIGNORE = REPO_ROOT / ".dockerignore"

BASE_IMAGE = re.compile(r"python:3\.11(?!\d)")  # the Python constraints.txt is resolved on
APP_PORT = 8000  # where the image's server listens
LOAD_BALANCER = "nginx"
REQUIRED_SERVICES = ("postgres", "redis", "api1", "api2", LOAD_BALANCER)
POSTGRES_DATA = "/var/lib/postgresql/data"
# Set by the image's CMD (--host/--port): in compose they would be ignored.
OVERRIDDEN_BY_CMD = ("MMK_HOST", "MMK_PORT")
# seconds nginx lets an upstream be silent: a quiet WebSocket lives on the
# server's pings, a socket held for nothing must not live an hour
MIN_WEBSOCKET_READ_TIMEOUT = 2 * PING_INTERVAL
MAX_WEBSOCKET_READ_TIMEOUT = 300
# docker/nginx.conf's limits are the instances' own defaults (docs/decisions/0044)
NGINX_LIMITS = {
    "client_header_timeout": Settings().header_timeout,
    "client_body_timeout": Settings().body_timeout,
    "keepalive_timeout": Settings().keep_alive_timeout,
}
# BuildKit's parser takes any word for an instruction; `docker build` does not.
INSTRUCTIONS = frozenset(
    "ADD ARG CMD COPY ENTRYPOINT ENV EXPOSE FROM HEALTHCHECK LABEL MAINTAINER ONBUILD RUN "  # noqa: SIM905
    "SHELL STOPSIGNAL USER VOLUME WORKDIR".split()
)
# What .dockerignore must keep out of the build context (local state, tests,
# secrets), and what it must let in.
IGNORED: tuple[str, ...] = (".venv", ".git", ".mypy_cache", "mmk_server.egg-info", "docker/.env")
IGNORED += ("tests/test_docker_files.py", "var/mmk.sqlite3", "api/__pycache__/app.cpython-311.pyc")
NOT_IGNORED = ("api/app.py", "infra/db/migrations/env.py", "pyproject.toml")


# ===================================================== the code deployed


@functools.cache
def app_routes() -> frozenset[str]:
    """The paths api/app.py serves (health checks must call one of them)."""
    return frozenset(route.path for route in create_app().routes if hasattr(route, "path"))


@functools.cache
def pyproject() -> dict[str, Any]:
    with (REPO_ROOT / "pyproject.toml").open("rb") as f:
        return tomllib.load(f)


def names_read_by(function: Callable[..., Any]) -> set[str]:
    """The environment variable names (string constants such as ``MMK_PORT``)
    in the source of ``function``."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    return {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and re.fullmatch(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+", node.value)
    }


def check_settings(env: Mapping[str, str], where: str) -> Settings:
    """The settings ``env`` gives the server (SettingsError if it refuses them)."""
    unknown = sorted(set(env) - set(ENV_VARS))
    assert not unknown, f"{where}: {unknown} not read by infra/settings.py (ENV_VARS)"
    return Settings.from_env(env)


def uvicorn_run_of(argv: Sequence[str], env: Mapping[str, str]) -> dict[str, Any]:
    """What the console script ``argv[0]`` of pyproject.toml, run with
    ``argv[1:]`` in the environment ``env`` alone, hands ``uvicorn.run``."""
    module, _, name = pyproject()["project"]["scripts"][argv[0]].partition(":")
    main = getattr(importlib.import_module(module), name)
    seen: dict[str, Any] = {}
    loggers = [logging.root, *logging.root.manager.loggerDict.values()]
    levels = {lg: lg.level for lg in loggers if isinstance(lg, logging.Logger)}
    handlers = logging.root.handlers[:]  # `mmk serve` sets up logging
    try:
        with (
            mock.patch("uvicorn.run", lambda *a, **kw: seen.update(kw)),
            mock.patch.dict(os.environ, env, clear=True),
            contextlib.redirect_stdout(io.StringIO()),
        ):
            main(list(argv[1:]))
    except SystemExit as e:  # argparse
        raise AssertionError(f"{argv}: refused by {argv[0]}") from e
    finally:
        logging.root.handlers[:] = handlers
        for logger, level in levels.items():
            logger.setLevel(level)
    return seen


def check_probe(argv: Sequence[str], ports: Collection[int], where: str) -> str:
    """The path the health check ``argv`` calls (an argument, or a string in
    its ``python -c`` script): a route of api/app.py, here, on one of ``ports``."""
    words: list[object] = list(argv)
    if words[:2] == ["python", "-c"]:
        tree = ast.parse(str(words[2]))  # SyntaxError if it is not Python
        words = [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant)]
    urls = [urlsplit(w) for w in words if isinstance(w, str) and w.startswith("http://")]
    assert len(urls) == 1, f"{where}: the health check calls no single http:// URL: {argv}"
    url = urls[0]
    assert url.hostname in ("127.0.0.1", "localhost") and url.port in ports, (
        f"{where}: the health check calls {url.netloc}, not 127.0.0.1:{sorted(ports)}"
    )
    assert url.path in app_routes(), f"{where}: {url.path} is not a route of api/app.py"
    return url.path


# ===================================================== Dockerfile and .dockerignore


def stages_of(commands: Sequence[dockerfile.Command]) -> list[tuple[str, str, list[Any]]]:
    """(base image, name, instructions) per stage."""
    stages: list[tuple[str, str, list[Any]]] = []
    for c in commands:
        if c.cmd == "FROM":
            base, _, name = (*c.value, "", "")[:3]
            stages.append((base, name, []))
        elif stages:
            stages[-1][2].append(c)
    return stages


def ignore_patterns(dockerignore: str) -> list[str]:
    """The patterns of a .dockerignore, as the Docker SDK reads them."""
    lines = (line.strip() for line in dockerignore.splitlines())
    return [line for line in lines if line and not line.startswith("#")]


@functools.cache
def build_context(dockerignore: str) -> frozenset[str]:
    """The paths (files and folders) `docker build -f docker/Dockerfile .`
    sends from the repository, as the Docker SDK for Python selects them."""
    patterns = ignore_patterns(dockerignore)
    return frozenset(exclude_paths(str(REPO_ROOT), patterns, dockerfile="docker/Dockerfile"))


def check_image(text: str, dockerignore: str) -> None:
    ignored = PatternMatcher(ignore_patterns(dockerignore)).matches
    for path in IGNORED:
        assert ignored(path), f".dockerignore: {path} would be in the build context"
    for path in NOT_IGNORED:
        assert not ignored(path), f".dockerignore: {path} would stay out of the build context"

    commands = dockerfile.parse_string(text)  # GoParseError (a ValueError)
    unknown = [f"{c.cmd} (line {c.start_line})" for c in commands if c.cmd not in INSTRUCTIONS]
    assert not unknown, f"Dockerfile: unknown instructions {unknown}"
    stages = stages_of(commands)
    assert len(stages) >= 2, "expected a multi-stage build (builder, runtime)"
    names = [name for _, name, _ in stages]
    bases = {base for base, _, _ in stages if base not in names}
    assert len(bases) == 1, f"the stages use {bases}: a venv moves only between equal images"
    assert BASE_IMAGE.match(min(bases)), f"FROM {min(bases)}, not {BASE_IMAGE.pattern}"

    context, copied = build_context(dockerignore), set[str]()
    for n, (_, _, instructions) in enumerate(stages):
        for c in [i for i in instructions if i.cmd in ("COPY", "ADD")]:
            flags = dict(f.removeprefix("--").partition("=")[::2] for f in c.flags)
            if "from" in flags:
                assert flags["from"] in names[:n], f"COPY --from={flags['from']}: no such stage"
                continue
            assert n < len(stages) - 1, (
                f"line {c.start_line}: the runtime stage copies from the build context; "
                "it should take the venv from the builder only"
            )
            for source in (str(PurePosixPath(s)) for s in c.value[:-1]):
                assert source in context, f"COPY {source}: not in the build context"
                copied.add(source)
    project = pyproject()
    needed = {project["project"]["readme"], "pyproject.toml", "constraints.txt"}
    needed |= {p.rstrip("*") for p in project["tool"]["setuptools"]["packages"]["find"]["include"]}
    assert needed <= copied, f"the builder does not COPY {sorted(needed - copied)}"

    last = {c.cmd: c for c in stages[-1][2]}  # the runtime stage's last of each
    env: dict[str, str] = {}
    for c in [i for i in stages[-1][2] if i.cmd == "ENV"]:
        env.update(zip(c.value[::2], c.value[1::2], strict=True))
    assert "USER" in last, "the runtime stage has no USER: the server would run as root"
    assert last["USER"].value[0].partition(":")[0] not in ("root", "0"), "USER: root"
    exposed = {w.partition("/")[0] for c in stages[-1][2] if c.cmd == "EXPOSE" for w in c.value}
    assert str(APP_PORT) in exposed, f"EXPOSE {APP_PORT} missing"
    kind, *check = last["HEALTHCHECK"].value if "HEALTHCHECK" in last else ["NONE"]
    assert kind == "CMD", "no HEALTHCHECK (or HEALTHCHECK NONE)"
    argv = check if last["HEALTHCHECK"].json else shlex.split(" ".join(check))
    assert argv[0] not in ("curl", "wget"), "HEALTHCHECK: python:*-slim has no curl or wget"
    check_probe(argv, {APP_PORT}, "Dockerfile")
    for name in ("PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED"):
        assert env.get(name) == "1", f"ENV {name}=1 missing in the runtime stage"
    server_env = {k: v for k, v in env.items() if k.startswith("MMK_") or k.endswith("_URL")}
    defaults = check_settings(server_env, "Dockerfile ENV")
    assert not (defaults.graphiql or defaults.introspection), "GraphiQL/introspection on"
    assert not defaults.dev, "MMK_DEV on: development mode is never the image's default"

    assert "CMD" in last, "the runtime stage has no CMD"
    cmd = list(last["CMD"].value)
    assert last["CMD"].json, "CMD in shell form: the server would not be PID 1 (SIGTERM)"
    assert cmd[:2] == ["mmk", "serve"], f"CMD {cmd}: does not run `mmk serve`"
    served = uvicorn_run_of(cmd, env)
    assert (served.get("host"), served.get("port")) == ("0.0.0.0", APP_PORT), (
        f"CMD {cmd} serves on {served.get('host')}:{served.get('port')}, "
        f"not 0.0.0.0:{APP_PORT} (every interface, the exposed port)"
    )


# ===================================================== compose.yaml

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

_VARIABLE = re.compile(r"\$\$|\$\{(\w+)(:?-)([^}]*)\}|\$\{[^}]*\}|\$\w+")


def interpolate(node: Any) -> Any:
    """``node`` as Compose sees it with no variable set: ``${X:-default}`` is
    ``default``; a variable without a default would be unset, so it raises."""

    def replace(m: re.Match[str]) -> str:
        if m.group(0) == "$$":
            return "$"
        if m.group(2):
            return m.group(3)
        raise ValueError(f"{m.group(0)} has no default: `docker compose up` needs it set")

    if isinstance(node, str):
        return _VARIABLE.sub(replace, node)
    if isinstance(node, dict):
        return {k: interpolate(v) for k, v in node.items()}
    return [interpolate(v) for v in node] if isinstance(node, list) else node


@functools.cache
def compose_schema() -> Any:
    return jsonschema.Draft202012Validator(get_builtin_schema("vendor.compose-spec"))


def environment(service: Mapping[str, Any]) -> dict[str, str]:
    """A service's ``environment``, from its map or its list form."""
    env = service.get("environment") or {}
    pairs = [str(v).partition("=")[::2] for v in env] if isinstance(env, list) else env.items()
    return {str(k): "" if v is None else str(v) for k, v in pairs}


def waits_for(service: Mapping[str, Any], dependency: str) -> bool:
    """Whether ``service`` starts only once ``dependency`` is healthy."""
    depends = service.get("depends_on") or []  # the list form waits for nothing
    condition = depends.get(dependency, {}).get("condition") if isinstance(depends, dict) else None
    return condition == "service_healthy"


def volumes(service: Mapping[str, Any]) -> list[tuple[str, str, bool]]:
    """(source, target, read-only) per volume, from the short or the long syntax."""
    out = []
    for v in service.get("volumes") or []:
        if isinstance(v, dict):
            out.append((v.get("source", ""), v["target"], bool(v.get("read_only"))))
        else:
            source, _, target = ("", "", v) if ":" not in v else v.partition(":")
            target, _, mode = target.partition(":")
            out.append((source, target, "ro" in mode.split(",")))
    return out


def health_argv(service: Mapping[str, Any]) -> list[str]:
    """The command of a service's health check (Compose's ``test``)."""
    test = service.get("healthcheck", {}).get("test", [])
    kind, *rest = ["CMD-SHELL", test] if isinstance(test, str) else test or ["NONE"]
    return {"CMD": rest, "CMD-SHELL": shlex.split(" ".join(rest))}.get(kind, [])


def api_services(compose: Mapping[str, Any]) -> list[str]:
    """The services built from the repository (the MMK server instances)."""
    return sorted(n for n, s in compose["services"].items() if "build" in s)


def check_compose(raw: Mapping[str, Any], dev: bool = False) -> dict[str, Any]:
    """``raw``: compose.yaml as loaded; returns it interpolated. ``dev``: with
    docker/compose.dev.yaml merged in (the playground, introspection and
    development mode on; without it, all three must be off)."""
    compose: dict[str, Any] = interpolate(raw)
    best = jsonschema.exceptions.best_match  # the most telling of nested errors
    errors = [f"{e.json_path}: {best([e]).message}" for e in compose_schema().iter_errors(compose)]
    assert not errors, "compose.yaml, by the Compose Specification:\n" + "\n".join(errors)
    services = compose["services"]
    missing = [s for s in REQUIRED_SERVICES if s not in services]
    assert not missing, f"services missing: {missing}"
    for name, service in services.items():
        assert "ports" not in service or name == LOAD_BALANCER, f"{name} publishes ports"
        for source, _, _ in volumes(service):
            assert not source.startswith(".") or (DOCKER_DIR / source).exists(), (
                f"{name}: volume source {source} does not exist"
            )
    postgres, redis, balancer = (services[s] for s in ("postgres", "redis", LOAD_BALANCER))
    assert postgres.get("image", "").startswith("postgres:"), "not the official postgres image"
    assert "pg_isready" in health_argv(postgres), "postgres: no pg_isready health check"
    assert POSTGRES_DATA in [t for _, t, _ in volumes(postgres)], f"no volume on {POSTGRES_DATA}"
    assert redis.get("image", "").startswith("redis:"), "not the official redis image"
    assert health_argv(redis)[:2] == ["redis-cli", "ping"], "redis: no redis-cli ping check"
    assert balancer.get("ports"), f"{LOAD_BALANCER} publishes no port"
    assert balancer.get("image", "").startswith("nginx:"), "not the official nginx image"
    assert ("./nginx.conf", "/etc/nginx/nginx.conf", True) in volumes(balancer), (
        f"{LOAD_BALANCER} does not run docker/nginx.conf (read-only)"
    )

    apis = api_services(compose)
    assert {"api1", "api2"} <= set(apis), f"api1 and api2 must be built here (built: {apis})"
    for name in apis:
        check_api_service(name, services[name], environment(postgres), dev)
        check_proxy_trust(compose, name)
        assert waits_for(balancer, name), f"{LOAD_BALANCER} does not wait for {name} (healthy)"
    environments = [environment(services[name]) for name in apis]
    assert all(e == environments[0] for e in environments), "the API environments differ"
    return compose


def check_api_service(
    name: str, service: Mapping[str, Any], pg_env: Mapping[str, str], dev: bool = False
) -> None:
    build = service["build"]
    build = {"context": build} if isinstance(build, str) else build
    context = (DOCKER_DIR / build.get("context", ".")).resolve()
    assert (context, context / build.get("dockerfile", "Dockerfile")) == (REPO_ROOT, DOCKERFILE), (
        f"{name}: not built from docker/Dockerfile with the repository root"
    )
    check_probe(health_argv(service), {APP_PORT}, name)
    for dependency in ("postgres", "redis"):
        assert waits_for(service, dependency), f"{name}: does not wait for {dependency} (healthy)"
    assert not {"command", "entrypoint"} & set(service), f"{name}: overrides the image's command"
    env = environment(service)
    settings = check_settings(env, name)
    switches = {"MMK_DEV": settings.dev, "MMK_GRAPHIQL": settings.graphiql}
    switches["MMK_INTROSPECTION"] = settings.introspection
    wrong = sorted(k for k, on in switches.items() if on is not dev)
    assert not wrong, f"{name}: {wrong} {'off' if dev else 'on'}" + (
        "" if dev else " by default: only docker/compose.dev.yaml turns them on"
    )
    overridden = [v for v in OVERRIDDEN_BY_CMD if v in env]
    assert not overridden, f"{name}: sets {overridden}, which the image's CMD overrides"
    db = make_url(env.get("DATABASE_URL", ""))  # ArgumentError if it is no URL
    assert db.drivername == "postgresql+psycopg", f"{name}: DATABASE_URL driver {db.drivername}"
    assert (db.host, db.port or 5432) == ("postgres", 5432), f"{name}: DATABASE_URL's host"
    postgres = tuple(pg_env.get(f"POSTGRES_{v}") for v in ("DB", "USER", "PASSWORD"))
    assert (db.database, db.username, db.password) == postgres, (
        f"{name}: DATABASE_URL's database, user or password is not the postgres service's"
    )
    redis = urlsplit(env.get("REDIS_URL", ""))
    assert (redis.scheme, redis.hostname, redis.port or 6379) == ("redis", "redis", 6379), (
        f"{name}: REDIS_URL does not point at redis:6379"
    )


def joined(service: Mapping[str, Any]) -> list[str]:
    """The networks a service joins (none named: the project's default)."""
    networks = service.get("networks") or ["default"]
    return list(networks)  # the list form, or the names of the map form


def subnets(compose: Mapping[str, Any], network: str) -> list[IPNetwork]:
    """The fixed subnets of a network of the project (none: Docker picks one)."""
    ipam = ((compose.get("networks") or {}).get(network) or {}).get("ipam") or {}
    return [ipaddress.ip_network(c["subnet"]) for c in ipam.get("config") or [] if "subnet" in c]


def check_proxy_trust(compose: Mapping[str, Any], name: str) -> None:
    """An instance trusts X-Forwarded-For from the load balancer's network
    only, a fixed subnet that no other service joins: never ``*``, which
    trusted any container that reached it (docs/decisions/0052)."""
    services = compose["services"]
    trusted = Settings.from_env(environment(services[name])).forwarded_allow_ips
    assert trusted, (
        f"{name}: MMK_FORWARDED_ALLOW_IPS is not set: every client would be "
        f"{LOAD_BALANCER}'s address to the per-IP limits"
    )
    items = trusted.split(",")
    assert "*" not in items, f"{name}: MMK_FORWARDED_ALLOW_IPS trusts any peer (*)"
    apis = set(api_services(compose))
    for item in items:
        peers = ipaddress.ip_network(item)
        homes = [
            n
            for n in joined(services[LOAD_BALANCER])
            if any(
                peers.version == s.version and peers.subnet_of(s)  # type: ignore[arg-type]
                for s in subnets(compose, n)
            )
        ]
        assert homes, (
            f"{name}: MMK_FORWARDED_ALLOW_IPS {item} is not (within) the fixed subnet "
            f"of a network {LOAD_BALANCER} joins"
        )
        for network in homes:
            others = sorted(
                s
                for s, service in services.items()
                if network in joined(service) and s != LOAD_BALANCER and s not in apis
            )
            assert not others, f"{others} join {network}, whose addresses {name} trusts"


# ===================================================== nginx.conf

Directive = dict[str, Any]  # crossplane's: directive, args, line, block (a list)
DATA_BLOCKS = ("map", "geo", "types", "split_clients", "charset_map")  # hold no directives


def children(parent: Directive, name: str) -> list[Directive]:
    return [d for d in parent.get("block") or [] if d["directive"] == name]


def effective(levels: Sequence[Directive], name: str) -> list[Directive]:
    """nginx inheritance: the innermost level that has ``name`` wins whole
    (a location with one proxy_set_header inherits none from its server)."""
    return next((found for level in reversed(levels) if (found := children(level, name))), [])


def unknown_directives(parent: Directive) -> Iterator[str]:
    for d in parent.get("block") or []:
        if d["directive"] not in DIRECTIVES:
            yield f"{d['directive']} (line {d['line']})"
        if d["directive"] not in DATA_BLOCKS:
            yield from unknown_directives(d)


def seconds(value: str) -> float:
    """An nginx time (``1h``, ``90s``, ``1m30s``, ``500ms``; a bare number is seconds)."""
    units = {"ms": 0.001, "": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
    if not re.fullmatch(r"(?:\d+(?:ms|[smhdw])?)+", value):
        raise ValueError(f"not an nginx time: {value}")
    return sum(int(n) * units[u] for n, u in re.findall(r"(\d+)(ms|[smhdw]?)", value))


def proxied(http: Directive, server: Directive, path: str) -> tuple[Directive, Directive]:
    """The location that serves ``path`` (exact, else the longest prefix: these
    files use no regular expressions) and the upstream block it passes to."""
    locations = children(server, "location")
    exact = [d for d in locations if d["args"] == ["=", path]]
    prefixes = [d for d in locations if d["args"][0] not in ("=", "~", "~*")]
    prefixes = [d for d in prefixes if path.startswith(d["args"][-1])]
    location = (exact or sorted(prefixes, key=lambda d: -len(d["args"][-1])) or [{}])[0]
    target = [d["args"][0].removeprefix("http://") for d in children(location, "proxy_pass")]
    upstreams = [u for u in children(http, "upstream") if u["args"] == target]
    assert upstreams, f"nginx.conf: {path} is not passed to an upstream block"
    return location, upstreams[0]


def check_nginx(text: str, compose: Mapping[str, Any]) -> None:
    """``compose``: compose.yaml interpolated (the services nginx balances)."""
    parsed = crossplane.parse_string(text, filename=NGINX_CONF.name, single=True)
    assert not parsed["errors"], "\n".join(e["error"] for e in parsed["errors"])
    main: Directive = {"block": parsed["config"][0]["parsed"]}
    unknown = list(unknown_directives(main))
    assert not unknown, f"nginx.conf: unknown directives {unknown}"
    https = children(main, "http")
    servers = [s for http in https for s in children(http, "server")]
    assert len(https) == len(servers) == 1, "nginx.conf: expected one http block, one server"
    http, server = https[0], servers[0]

    balancer = compose["services"][LOAD_BALANCER]
    listening = {int(d["args"][0].rsplit(":", 1)[-1]) for d in children(server, "listen")}
    published = {int(str(p).rsplit(":", 1)[-1].partition("/")[0]) for p in balancer["ports"]}
    assert published <= listening, f"nginx listens on {listening}; compose publishes {published}"
    health = check_probe(health_argv(balancer), listening, LOAD_BALANCER)
    apis = api_services(compose)
    # The instances take the client's IP (rate limits) from X-Forwarded-For.
    if any("MMK_FORWARDED_ALLOW_IPS" in environment(compose["services"][a]) for a in apis):
        for path in ("/graphql", health):
            location, _ = proxied(http, server, path)
            set_headers = effective([http, server, location], "proxy_set_header")
            assert ["X-Forwarded-For", "$remote_addr"] in [d["args"] for d in set_headers], (
                f"{path}: X-Forwarded-For must be $remote_addr, which no client can forge"
            )

    location, upstream = proxied(http, server, "/graphql")
    members = {d["args"][0] for d in children(upstream, "server")}
    assert members == {f"{s}:{APP_PORT}" for s in apis}, f"upstream {members}, services {apis}"
    sticky = {"ip_hash", "hash", "sticky"} & {d["directive"] for d in upstream["block"]}
    assert not sticky, f"upstream: {sticky} pins clients to instances; none is wanted"
    if any("resolve" in d["args"] for d in children(upstream, "server")):
        assert children(upstream, "zone") and effective([http, upstream], "resolver"), (
            "`server ... resolve` needs a zone in the upstream and a resolver"
        )
    levels = [http, server, location]
    version = effective(levels, "proxy_http_version")
    assert version and version[-1]["args"] == ["1.1"], "/graphql: WebSockets need HTTP/1.1"
    headers = {d["args"][0].lower(): d["args"][1] for d in effective(levels, "proxy_set_header")}
    assert headers.get("upgrade") == "$http_upgrade", "/graphql: no Upgrade: $http_upgrade"
    # The server compares a browser WebSocket's Origin with Host, port included.
    assert headers.get("host") == "$http_host", "/graphql: Host must be $http_host (with the port)"
    connection = headers.get("connection", "")
    if connection.startswith("$"):
        maps = [m for m in children(http, "map") if m["args"] == ["$http_upgrade", connection]]
        defaults = [d["args"] for m in maps for d in children(m, "default")]
        assert defaults == [["upgrade"]], f"/graphql: {connection} is not mapped from upgrades"
    else:
        assert connection.lower() == "upgrade", "/graphql: no Connection header for upgrades"
    timeout = effective(levels, "proxy_read_timeout")
    read = seconds(timeout[-1]["args"][0]) if timeout else 60
    assert read >= MIN_WEBSOCKET_READ_TIMEOUT, f"/graphql: {read:g}s cuts quiet WebSockets"
    assert read <= MAX_WEBSOCKET_READ_TIMEOUT, f"/graphql: {read:g}s holds dead sockets"
    check_nginx_limits(http, server, location)


def check_nginx_limits(http: Directive, server: Directive, location: Directive) -> None:
    """Connection hygiene: read timeouts as the instances', a per-IP cap on
    connections everywhere and on WebSockets at /graphql (docs/decisions/0044)."""
    for name, expected in NGINX_LIMITS.items():
        found = effective([http, server], name)
        assert found, f"nginx.conf: no {name} (nginx's default is not the server's)"
        value = seconds(found[-1]["args"][0])
        assert value == expected, f"nginx.conf: {name} {value:g}s, the server's {expected}s"
    zones: dict[str, str] = {}
    for d in children(http, "limit_conn_zone"):
        key, zone = d["args"][0], d["args"][1].removeprefix("zone=").split(":")[0]
        zones[zone] = key
    maps = {m["args"][1]: m for m in children(http, "map")}
    for path, level in (("/", server), ("/graphql", location)):
        limits = {d["args"][0]: int(d["args"][1]) for d in effective([http, level], "limit_conn")}
        per_ip = [z for z in limits if zones.get(z) == "$binary_remote_addr"]
        assert per_ip, f"{path}: no limit_conn per client address ($binary_remote_addr)"
        assert limits[per_ip[0]] == Settings().max_connections_per_ip, f"{path}: limit_conn"
    limits = {d["args"][0]: int(d["args"][1]) for d in effective([http, location], "limit_conn")}
    ws = [
        z for z in limits if zones.get(z) in maps and maps[zones[z]]["args"][0] == "$http_upgrade"
    ]
    assert ws, "/graphql: no limit_conn on WebSockets (a zone keyed by a map of $http_upgrade)"
    assert limits[ws[0]] == Settings().max_ws_per_ip, "/graphql: limit_conn on WebSockets"
    status = effective([http, server], "limit_conn_status")
    assert status and status[-1]["args"] == ["429"], "limit_conn_status: 429, as the server's"


# ===================================================== the real files


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    """compose.yaml, its merges (``<<: *api``) resolved into separate copies."""
    loaded: dict[str, Any] = json.loads(json.dumps(yaml.safe_load(COMPOSE_FILE.read_text())))
    return loaded


def test_env_vars_list_every_variable_settings_reads() -> None:
    read = names_read_by(Settings.from_env) | names_read_by(jwt_settings)
    read |= names_read_by(webhook_settings)
    assert set(ENV_VARS) == read
    assert len(ENV_VARS) == len(set(ENV_VARS))


def test_the_image_holds_together() -> None:
    check_image(DOCKERFILE.read_text(), DOCKERIGNORE.read_text())


def test_the_compose_project_holds_together(compose: dict[str, Any]) -> None:
    check_compose(compose)


def test_nginx_balances_every_api_service_with_websockets(compose: dict[str, Any]) -> None:
    check_nginx(NGINX_CONF.read_text(), interpolate(compose))


# ===================================================== the checks can fail


def test_the_settings_names_are_found_in_source() -> None:
    def from_env(e: Mapping[str, str]) -> None:
        e.get("MMK_NEW_THING", "x")
        print("MMK_NEW_THING must be ...", "lowercase", "X")

    assert names_read_by(from_env) == {"MMK_NEW_THING"}


def broken(path: Path, pattern: str, replacement: str) -> str:
    """The text of ``path`` with the first match of ``pattern`` replaced."""
    text, count = re.subn(pattern, replacement, path.read_text(), count=1)
    assert count == 1, f"the case no longer applies to {path.name}: {pattern}"
    return text


def fails(expected: str) -> pytest.RaisesExc[Exception]:
    """A check fails, saying ``expected``."""
    return pytest.raises(Exception, match=re.escape(expected))


HEALTHCHECK = r"\nHEALTHCHECK (?:[^\n]*\\\n)*[^\n]*"
# Dockerfile: (pattern, replacement, words of the failure expected)
DOCKERFILE_BREAKS = {
    "parse error": (r"\nEXPOSE 8000", "\nENV MMK_DEBUG", "ENV must have two arguments"),
    "instruction": (r"EXPOSE 8000", "EXPOS 8000", "unknown instructions ['EXPOS (line"),
    "one stage": (r"(?s)^.*?(FROM python:3\.11-slim AS runtime)", r"\1", "multi-stage"),
    "bases differ": (r"slim AS runtime", "slim-bookworm AS runtime", "equal images"),
    "python": (r"(?s)3\.11(-slim AS builder.*)3\.11", r"3.12\g<1>3.12", "FROM python:3.12-slim,"),
    "no user": (r"\nUSER [^\n]*", "", "no USER"),
    "root": (r"\nUSER [^\n]*", "\nUSER root", "USER: root"),
    "no healthcheck": (HEALTHCHECK, "", "no HEALTHCHECK"),
    "healthcheck none": (HEALTHCHECK, "\nHEALTHCHECK NONE", "no HEALTHCHECK"),
    "curl": (HEALTHCHECK, "\nHEALTHCHECK CMD curl -f http://127.0.0.1:8000/healthz", "curl"),
    "probe path": (r"8000/healthz", "8000/alive", "/alive is not a route"),
    "probe port": (r"8000/healthz", "8080/healthz", "calls 127.0.0.1:8080"),
    "probe script": (r"timeout=3\)", "timeout=3", "'(' was never closed"),
    "expose": (r"EXPOSE 8000", "EXPOSE 9000", "EXPOSE 8000 missing"),
    "cmd": (r'CMD \["mmk", "serve"', 'CMD ["uvicorn", "api.app:create_app"', "mmk serve"),
    "shell cmd": (r'CMD \["mmk"[^\n]*', "CMD mmk serve --port 8000", "shell form"),
    "no cmd": (r'\nCMD \["mmk"[^\n]*', "", "no CMD"),
    "cmd option": (r'"--port", "8000"', '"--prot", "8000"', "refused by mmk"),
    "cmd host": (r'"--host", "0.0.0.0"', '"--host", "127.0.0.1"', "on 127.0.0.1:8000"),
    "cmd port": (r'"--port", "8000"', '"--port", "8080"', "on 0.0.0.0:8080"),
    "missing": (r"COPY api \./api", "COPY app ./app", "COPY app: not in the build context"),
    "ignored": (r"COPY api \./api", "COPY api ./api\nCOPY tests ./tests", "COPY tests: not in"),
    "no package": (r"\nCOPY infra \./infra", "", "does not COPY ['infra']"),
    "no stage": (r"--from=builder", "--from=build", "--from=build: no such stage"),
    "runtime from context": (r"(COPY --from=[^\n]*)", r"\1\nCOPY api /app/api", "copies from"),
    "graphiql on": (r"MMK_GRAPHIQL=false", "MMK_GRAPHIQL=true", "GraphiQL/introspection on"),
    "dev on": (r"MMK_GRAPHIQL=false", "MMK_GRAPHIQL=false MMK_DEV=1", "MMK_DEV on"),
    "unknown env": (r"MMK_GRAPHIQL=false", "MMK_GRAPHIQL=false MMK_DEBUG=1", "['MMK_DEBUG'] not"),
    "bad env": (r"MMK_GRAPHIQL=false", "MMK_GRAPHIQL=maybe", "MMK_GRAPHIQL must be true or"),
    "buffered": (r"PYTHONUNBUFFERED=1", "PYTHONUNBUFFERED=0", "PYTHONUNBUFFERED=1 missing"),
}
DOCKERIGNORE_BREAKS = {
    "package": (r"\ntests\n", "\ntests\ndomain\n", "COPY domain: not in the build context"),
    "module": (r"\ntests\n", "\ntests\n**/env.py\n", "env.py would stay out"),
    "venv": (r"\n\.venv\n", "\n", ".venv would be in"),
    "tests": (r"\ntests\n", "\n", "tests/test_docker_files.py would be in"),
    "bytecode": (r"\*\*/__pycache__\n\*\*/\*\.py\[cod\]\n", "", ".pyc would be in"),
    "secrets": (r"\n\*\*/\.env\n", "\n", "docker/.env would be in"),
}


@pytest.mark.parametrize("case", DOCKERFILE_BREAKS.values(), ids=DOCKERFILE_BREAKS.keys())
def test_dockerfile_checks_catch(case: tuple[str, str, str]) -> None:
    with fails(case[2]):
        check_image(broken(DOCKERFILE, *case[:2]), DOCKERIGNORE.read_text())


@pytest.mark.parametrize("case", DOCKERIGNORE_BREAKS.values(), ids=DOCKERIGNORE_BREAKS.keys())
def test_dockerignore_checks_catch(case: tuple[str, str, str]) -> None:
    with fails(case[2]):
        check_image(DOCKERFILE.read_text(), broken(DOCKERIGNORE, *case[:2]))


def _set(data: dict[str, Any], path: str, value: Any) -> None:
    """Set (or, with ``...``, delete) the item at ``a/b/0/c`` of ``data``."""
    *parents, last = path.split("/")
    node: Any = data
    for key in parents:
        node = node[int(key) if isinstance(node, list) else key]
    index = int(last) if isinstance(node, list) else last
    if value is ...:
        del node[index]
    else:
        node[index] = value


API1, API2, LB = "services/api1", "services/api2", "services/nginx"
DB_URL, PROBE = f"{API1}/environment/DATABASE_URL", "urlopen('http://127.0.0.1:8000/alive')"
TRUSTED = f"{API1}/environment/MMK_FORWARDED_ALLOW_IPS"
# compose.yaml: (path of the item set or, with ..., deleted; its value; words expected)
COMPOSE_BREAKS = {
    "schema": (f"{API1}/healtcheck", {}, "'healtcheck' was unexpected"),
    "condition": (f"{API1}/depends_on/redis/condition", "healthy", "is not one of"),
    "no redis": ("services/redis", ..., "services missing: ['redis']"),
    "api publishes": (f"{API1}/ports", ["8001:8000"], "api1 publishes ports"),
    "unknown variable": (f"{API2}/environment/MMK_FOO", "1", "['MMK_FOO'] not read"),
    "overridden": (f"{API1}/environment/MMK_PORT", "9000", "the image's CMD overrides"),
    "bad value": (f"{API1}/environment/MMK_GRAPHIQL", "maybe", "MMK_GRAPHIQL must be"),
    "dev on": (f"{API1}/environment/MMK_DEV", "${MMK_DEV:-true}", "['MMK_DEV'] on by default"),
    "graphiql on": (
        f"{API2}/environment/MMK_GRAPHIQL",
        "${MMK_GRAPHIQL:-1}",
        "['MMK_GRAPHIQL'] on",
    ),
    "no default": (f"{API2}/environment/MMK_LOG_LEVEL", "${LEVEL}", "has no default"),
    "differ": (f"{API2}/environment/MMK_LOG_LEVEL", "debug", "environments differ"),
    "db url": (DB_URL, "postgres", "Could not parse SQLAlchemy URL"),
    "db driver": (DB_URL, "postgresql://mmk:mmk@postgres:5432/mmk", "driver postgresql"),
    "db host": (DB_URL, "postgresql+psycopg://mmk:mmk@localhost:5432/mmk", "DATABASE_URL's host"),
    "db name": (DB_URL, "postgresql+psycopg://mmk:mmk@postgres:5432/other", "user or password"),
    "db password": ("services/postgres/environment/POSTGRES_PASSWORD", "x", "user or password"),
    "redis url": (f"{API2}/environment/REDIS_URL", "redis://127.0.0.1:6379/0", "REDIS_URL"),
    "started": (f"{API1}/depends_on/postgres/condition", "service_started", "wait for postgres"),
    "no health check": (f"{API2}/healthcheck", ..., "no single http:// URL"),
    "bad probe": (f"{API1}/healthcheck/test/3", PROBE, "/alive is not a route"),
    "command": (f"{API1}/command", ["mmk", "serve"], "overrides the image's command"),
    "dockerfile": (f"{API1}/build/dockerfile", "Dockerfile", "not built from docker/"),
    "not built": (f"{API2}/build", ..., "api1 and api2 must be built"),
    "pg image": ("services/postgres/image", "bitnami/postgresql:17", "official postgres"),
    "pg check": ("services/postgres/healthcheck/test", ["CMD", "true"], "pg_isready"),
    "pg volume": ("services/postgres/volumes", [], "no volume"),
    "redis image": ("services/redis/image", "valkey/valkey:8", "official redis"),
    "redis check": ("services/redis/healthcheck/test", "true", "redis-cli ping"),
    "lb depends": (f"{LB}/depends_on/api2", ..., "does not wait for api2"),
    "lb config": (f"{LB}/volumes", [], "does not run docker/nginx.conf"),
    "lb mount": (f"{LB}/volumes/0", "./conf.d:/etc/nginx/conf.d:ro", "does not exist"),
    "lb image": (f"{LB}/image", "caddy:2", "official nginx"),
    "lb no port": (f"{LB}/ports", ..., "nginx publishes no port"),
    "lb port": (f"{LB}/ports", ["8080:80"], "nginx listens on {8000}"),
    "lb probe path": (f"{LB}/healthcheck/test/5", "http://127.0.0.1:8000/alive", "/alive is"),
    "lb probe port": (f"{LB}/healthcheck/test/5", "http://127.0.0.1:80/healthz", "calls 127"),
    "trust any": (TRUSTED, "*", "trusts any peer (*)"),
    "trust none": (TRUSTED, ..., "MMK_FORWARDED_ALLOW_IPS is not set"),
    "trust a host": (TRUSTED, "10.0.0.5/24", "is not an IP address or network"),
    "trust elsewhere": (TRUSTED, "10.0.0.0/8", "not (within) the fixed subnet"),
    "subnet not fixed": ("networks/edge/ipam", ..., "not (within) the fixed subnet"),
    "lb off the edge": (f"{LB}/networks", ["default"], "not (within) the fixed subnet"),
    "db on the edge": ("services/postgres/networks", ["default", "edge"], "['postgres'] join"),
}


@pytest.mark.parametrize("case", COMPOSE_BREAKS.values(), ids=COMPOSE_BREAKS.keys())
def test_compose_checks_catch(compose: dict[str, Any], case: tuple[str, Any, str]) -> None:
    path, value, expected = case
    changed = copy.deepcopy(compose)
    _set(changed, path, value)
    with fails(expected):
        check_nginx(NGINX_CONF.read_text(), check_compose(changed))


GRAPHQL = r"(location /graphql \{[^}]*?)"
NGINX_BREAKS = {
    "syntax": (r"keepalive 32;", "keepalive 32", 'not terminated by ";"'),
    "context": (r"server_tokens off;", "server_tokens off; proxy_pass http://x;", "not allowed"),
    "arguments": (r"proxy_read_timeout 60s;", "proxy_read_timeout;", "invalid number of arg"),
    "unknown": (r"proxy_buffering off;", "proxy_bufering off;", "['proxy_bufering (line"),
    "no http": (r"(?s)\nhttp \{.*", "", "expected one http block"),
    "two servers": (r"\n    server \{", "\n    server { listen 81; }\n    server {", "one server"),
    "one instance": (r"\n\s*server api2:8000[^\n]*", "", "upstream {'api1:8000'}"),
    "no upgrade": (r"\n\s*proxy_set_header Upgrade[^\n]*", "", "no Upgrade"),
    # Headers set in the location replace all of the server's: dropping the two
    # upgrade lines there loses them even though the server sets Connection "".
    "inherited only": (
        r"\n\s*proxy_set_header Upgrade[^\n]*\n[^\n]*Connection \$[^\n]*",
        "",
        "no Upgrade",
    ),
    "connection": (r"Connection \$connection_upgrade", 'Connection "keep-alive"', "no Connection"),
    "map": (r"default upgrade;", "default close;", "not mapped from upgrades"),
    "short timeout": (r"proxy_read_timeout 60s", "proxy_read_timeout 30s", "30s cuts quiet"),
    "long timeout": (r"proxy_read_timeout 60s", "proxy_read_timeout 1h", "holds dead sockets"),
    "bad time": (r"proxy_read_timeout 60s", "proxy_read_timeout 1x", "not an nginx time: 1x"),
    "slow headers": (r"\n\s*client_header_timeout[^\n]*", "", "no client_header_timeout"),
    "slow body": (r"client_body_timeout 30s", "client_body_timeout 1h", "the server's 30s"),
    "keep-alive": (r"keepalive_timeout 75s", "keepalive_timeout 5s", "keepalive_timeout 5s"),
    "no per-ip cap": (r"\n\s*limit_conn per_ip 100;", "", "/: no limit_conn per client"),
    "per-ip cap": (r"limit_conn per_ip 100;", "limit_conn per_ip 10;", "/: limit_conn"),
    "no ws cap": (r"\n\s*limit_conn websockets_per_ip[^\n]*", "", "no limit_conn on WebSockets"),
    "ws cap": (r"websockets_per_ip 50;", "websockets_per_ip 5;", "limit_conn on WebSockets"),
    "503": (r"limit_conn_status 429;", "limit_conn_status 503;", "limit_conn_status: 429"),
    "http/1.0": (GRAPHQL + r"proxy_http_version 1\.1", r"\1proxy_http_version 1.0", "HTTP/1.1"),
    "sticky": (r"keepalive 32;", "keepalive 32; ip_hash;", "pins clients"),
    "no zone": (r"\n\s*zone mmk_api 64k;", "", "needs a zone"),
    "listen": (r"listen 8000;", "listen 80;", "nginx listens on {80}"),
    "not proxied": (GRAPHQL + r"proxy_pass[^\n]*", r"\1", "/graphql is not passed"),
    "health": (r"(location / \{\n\s*)proxy_pass[^\n]*", r"\1", "/healthz is not passed"),
    "spoofable": (GRAPHQL + r"For \$remote_addr", r"\1For $proxy_add_x_forwarded_for", "forge"),
    "host without port": (GRAPHQL + r"Host \$http_host", r"\1Host $host", "with the port"),
}


@pytest.mark.parametrize("case", NGINX_BREAKS.values(), ids=NGINX_BREAKS.keys())
def test_nginx_checks_catch(compose: dict[str, Any], case: tuple[str, str, str]) -> None:
    with fails(case[2]):
        check_nginx(broken(NGINX_CONF, *case[:2]), interpolate(compose))


def test_a_third_api_service_must_join_the_upstream(compose: dict[str, Any]) -> None:
    scaled = copy.deepcopy(compose)
    scaled["services"]["api3"] = copy.deepcopy(scaled["services"]["api1"])
    scaled["services"]["nginx"]["depends_on"]["api3"] = {"condition": "service_healthy"}
    with fails("services ['api1', 'api2', 'api3']"):
        check_nginx(NGINX_CONF.read_text(), check_compose(scaled))
