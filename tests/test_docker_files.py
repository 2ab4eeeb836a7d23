"""The container deployment files hold together (no Docker needed).

docker/Dockerfile, docker/compose.yaml, docker/nginx.conf and .dockerignore
are parsed and checked against each other and against the code they deploy:
the variables infra/settings.py reads (``ENV_VARS``), the routes of
api/app.py, the console script and packages of pyproject.toml. Each check is
a function that returns its problems; the tests at the end feed it broken
copies of the real files, so that every check is seen to fail when it should.
"""

from __future__ import annotations

import ast
import copy
import functools
import inspect
import json
import re
import shlex
import textwrap
import tomllib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml
from sqlalchemy.engine import make_url

from api.app import create_app
from infra.settings import ENV_VARS, Settings, SettingsError

REPO_ROOT = Path(__file__).resolve().parent.parent
DOCKER_DIR = REPO_ROOT / "docker"
DOCKERFILE = DOCKER_DIR / "Dockerfile"
COMPOSE_FILE = DOCKER_DIR / "compose.yaml"
NGINX_CONF = DOCKER_DIR / "nginx.conf"
DOCKERIGNORE = REPO_ROOT / ".dockerignore"

BASE_IMAGE = "python:3.11"  # the tag must start with this (the project's Python)
APP_PORT = 8000  # where the image's server listens
LOAD_BALANCER = "nginx"
REQUIRED_SERVICES = ("postgres", "redis", "api1", "api2", LOAD_BALANCER)
POSTGRES_DATA = "/var/lib/postgresql/data"
# Set by the image's CMD (--host/--port): in compose they would be ignored.
OVERRIDDEN_BY_CMD = ("MMK_HOST", "MMK_PORT")
MIN_WEBSOCKET_READ_TIMEOUT = 300  # seconds nginx lets a quiet WebSocket live
# Service keys of the Compose specification that these files may use; a
# misspelt key (`healtcheck`) would otherwise be silently ignored by the test.
COMPOSE_SERVICE_KEYS = frozenset(
    {
        "build",
        "image",
        "command",
        "entrypoint",
        "environment",
        "env_file",
        "depends_on",
        "healthcheck",
        "ports",
        "expose",
        "volumes",
        "tmpfs",
        "read_only",
        "init",
        "restart",
        "stop_grace_period",
        "stop_signal",
        "user",
        "working_dir",
        "labels",
        "networks",
        "deploy",
        "logging",
        "ulimits",
        "cap_drop",
        "cap_add",
        "security_opt",
        "container_name",
        "hostname",
        "profiles",
        "pull_policy",
        "mem_limit",
        "cpus",
    }
)


@functools.cache
def app_routes() -> frozenset[str]:
    """The paths api/app.py serves (health checks must call one of them)."""
    return frozenset(route.path for route in create_app().routes if hasattr(route, "path"))


# ===================================================== infra/settings.py


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


def settings_problems(env: Mapping[str, str], where: str) -> list[str]:
    """Variables ``where`` sets that the server does not read, or cannot use."""
    problems = [
        f"{where}: {name} is not read by infra/settings.py (ENV_VARS)"
        for name in sorted(env)
        if name not in ENV_VARS
    ]
    try:
        Settings.from_env({k: v for k, v in env.items() if k in ENV_VARS})
    except SettingsError as e:
        problems.append(f"{where}: the server refuses the settings: {e}")
    return problems


# ===================================================== Dockerfile


@dataclass(frozen=True)
class Instruction:
    keyword: str
    args: str
    line: int


@dataclass
class Stage:
    base: str
    name: str | None
    instructions: list[Instruction] = field(default_factory=list)

    def all(self, keyword: str) -> list[Instruction]:
        return [i for i in self.instructions if i.keyword == keyword]


def parse_dockerfile(text: str) -> list[Instruction]:
    """Instructions with their continuation lines joined; comments dropped."""
    out: list[Instruction] = []
    pending, start = "", 0
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue  # also inside a continuation, as Docker does
        if not pending:
            start = number
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        keyword, _, args = (pending + line).partition(" ")
        out.append(Instruction(keyword.upper(), args.strip(), start))
        pending = ""
    if pending:
        raise ValueError(f"line {start}: the last instruction ends in a continuation")
    return out


def stages_of(instructions: list[Instruction]) -> list[Stage]:
    stages: list[Stage] = []
    for ins in instructions:
        if ins.keyword == "FROM":
            words = [w for w in ins.args.split() if not w.startswith("--")]
            name = words[2] if len(words) == 3 and words[1].lower() == "as" else None
            stages.append(Stage(words[0], name))
        elif stages:
            stages[-1].instructions.append(ins)
    return stages


def _flags_and_words(args: str) -> tuple[dict[str, str], list[str]]:
    words = json.loads(args) if args.startswith("[") else shlex.split(args)
    flags = dict(w[2:].partition("=")[::2] for w in words if w.startswith("--"))
    return flags, [w for w in words if not w.startswith("--")]


def env_of(stage: Stage) -> dict[str, str]:
    env: dict[str, str] = {}
    for ins in stage.all("ENV"):
        words = shlex.split(ins.args)
        if words and "=" not in words[0]:  # legacy form: ENV NAME value
            env[words[0]] = " ".join(words[1:])
        else:
            env.update(w.partition("=")[::2] for w in words)
    return env


def _exec_form(args: str) -> list[str] | None:
    try:
        value = json.loads(args)
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, list) else None


def _probe(text: str) -> tuple[int, str] | None:
    """The port and path of the local HTTP URL a health check calls."""
    m = re.search(r"http://(?:127\.0\.0\.1|localhost):(\d+)(/[\w./-]*)", text)
    return (int(m.group(1)), m.group(2)) if m else None


def dockerignore_patterns(text: str) -> list[tuple[bool, re.Pattern[str]]]:
    """(is an exception ``!``, regex) per line, in order (the last match wins)."""
    out = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        pattern = str(PurePosixPath(line.lstrip("!").strip("/")))
        regex, i = "", 0
        while i < len(pattern):
            if pattern.startswith("**/", i):
                regex, i = regex + "(?:.*/)?", i + 3
            elif pattern.startswith("**", i):
                regex, i = regex + ".*", i + 2
            elif pattern[i] == "*":
                regex, i = regex + "[^/]*", i + 1
            elif pattern[i] == "?":
                regex, i = regex + "[^/]", i + 1
            elif pattern[i] == "[":
                end = pattern.index("]", i)
                regex, i = regex + pattern[i : end + 1], end + 1
            else:
                regex, i = regex + re.escape(pattern[i]), i + 1
        out.append((negate, re.compile(regex)))
    return out


def dockerignored(path: str, patterns: list[tuple[bool, re.Pattern[str]]]) -> bool:
    """Whether ``path`` (relative to the context) stays out of the build
    context: a pattern excludes what it matches and everything below."""
    parts = PurePosixPath(path).parts
    prefixes = ["/".join(parts[: n + 1]) for n in range(len(parts))]
    excluded = False
    for negate, regex in patterns:
        if any(regex.fullmatch(p) for p in prefixes):
            excluded = not negate
    return excluded


def _pyproject() -> dict[str, Any]:
    with (REPO_ROOT / "pyproject.toml").open("rb") as f:
        return tomllib.load(f)


def dockerfile_problems(text: str, dockerignore: str, root: Path = REPO_ROOT) -> list[str]:
    problems: list[str] = []
    try:
        stages = stages_of(parse_dockerfile(text))
    except ValueError as e:
        return [str(e)]
    if len(stages) < 2:
        return [f"expected a multi-stage build (builder, runtime), found {len(stages)} FROM"]
    names = [s.name for s in stages]
    for n, stage in enumerate(stages):
        if not stage.base.startswith(BASE_IMAGE) and stage.base not in names[:n]:
            problems.append(f"stage {stage.name or n}: FROM {stage.base}, not {BASE_IMAGE}*")
    if len({s.base for s in stages if s.base not in names}) > 1:
        problems.append("the stages use different base images: a venv moves only between equals")

    ignore = dockerignore_patterns(dockerignore)
    copied: set[str] = set()
    for n, stage in enumerate(stages):
        for ins in stage.all("COPY") + stage.all("ADD"):
            flags, words = _flags_and_words(ins.args)
            if "from" in flags:
                if flags["from"] not in names[:n]:
                    problems.append(f"line {ins.line}: COPY --from={flags['from']}: no such stage")
                continue
            if n == len(stages) - 1:
                problems.append(
                    f"line {ins.line}: the runtime stage copies from the build context; "
                    "it should take the venv from the builder only"
                )
            for source in words[:-1]:
                rel = str(PurePosixPath(source))
                copied.add(rel)
                if not (root / rel).exists():
                    problems.append(f"line {ins.line}: COPY {source}: not in the repository")
                elif dockerignored(rel, ignore):
                    problems.append(f"line {ins.line}: COPY {source}: excluded by .dockerignore")
    project = _pyproject()
    needed = {project["project"]["readme"], "pyproject.toml", "constraints.txt"}
    needed |= {p.rstrip("*") for p in project["tool"]["setuptools"]["packages"]["find"]["include"]}
    problems += [
        f"the builder does not COPY {p} (needed to install the server)"
        for p in sorted(needed - copied)
    ]

    final = stages[-1]
    users = final.all("USER")
    cmds = final.all("CMD")
    if not cmds:
        problems.append("the runtime stage has no CMD")
    if not users:
        problems.append("the runtime stage has no USER: the server would run as root")
    elif cmds and users[-1].line > cmds[-1].line:
        problems.append("USER comes after CMD")
    elif users[-1].args.partition(":")[0] in ("root", "0"):
        problems.append(f"USER {users[-1].args}: root")

    exposed = {w.partition("/")[0] for e in final.all("EXPOSE") for w in e.args.split()}
    if str(APP_PORT) not in exposed:
        problems.append(f"EXPOSE {APP_PORT} missing (found {sorted(exposed)})")

    checks = final.all("HEALTHCHECK")
    if not checks:
        problems.append("no HEALTHCHECK")
    else:
        args = checks[-1].args
        probe = _probe(args)
        if re.match(r"\s*NONE\b", args) or " CMD " not in f" {args} ":
            problems.append(f"HEALTHCHECK {args}: no command")
        elif probe is None or probe[0] != APP_PORT or probe[1] not in app_routes():
            problems.append(f"HEALTHCHECK calls {probe}: not a route of api/app.py on {APP_PORT}")
        elif " curl " in f" {args} " or " wget " in f" {args} ":
            problems.append("HEALTHCHECK uses curl/wget, which python:*-slim does not have")

    if cmds:
        argv = _exec_form(cmds[-1].args)
        scripts = project["project"]["scripts"]
        if argv is None:
            problems.append("CMD in shell form: the server would not be PID 1 and miss SIGTERM")
        elif argv[:2] != ["mmk", "serve"] or "mmk" not in scripts:
            problems.append(f"CMD {argv}: does not run `mmk serve`")
        else:
            opts = dict(zip(argv[2::2], argv[3::2], strict=False))
            if opts.get("--host") != "0.0.0.0":
                problems.append("CMD: `mmk serve` must listen on 0.0.0.0 in a container")
            if opts.get("--port") != str(APP_PORT):
                problems.append(f"CMD: port {opts.get('--port')} is not the exposed {APP_PORT}")

    env = env_of(final)
    for name in ("PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED"):
        if env.get(name) != "1":
            problems.append(f"ENV {name}=1 missing in the runtime stage")
    server_env = {k: v for k, v in env.items() if k.startswith("MMK_") or k.endswith("_URL")}
    problems += settings_problems(server_env, "Dockerfile ENV")
    try:
        defaults = Settings.from_env({k: v for k, v in server_env.items() if k in ENV_VARS})
    except SettingsError:
        return problems  # reported just above
    if defaults.graphiql or defaults.introspection:
        problems.append("the image turns GraphiQL or introspection on by default (production)")
    return problems


# ===================================================== compose.yaml

_VARIABLE = re.compile(r"\$\$|\$\{(\w+)(:?-)([^}]*)\}|\$\{[^}]*\}|\$\w+")


def interpolate(value: str) -> str:
    """``value`` as Compose sees it with no variable set: ``${X:-default}`` is
    ``default``; a variable without a default would be unset, so it raises."""

    def replace(m: re.Match[str]) -> str:
        if m.group(0) == "$$":
            return "$"
        if m.group(2):
            return m.group(3)
        raise ValueError(f"{m.group(0)} has no default: `docker compose up` needs it set")

    return _VARIABLE.sub(replace, value)


def _mapping(value: Any) -> dict[str, str]:
    """A Compose ``environment``/``depends_on`` in its map form."""
    if value is None:
        return {}
    if isinstance(value, list):
        return dict(str(v).partition("=")[::2] for v in value)
    return {str(k): "" if v is None else str(v) for k, v in value.items()}


def _test_text(service: Mapping[str, Any]) -> str:
    test = (service.get("healthcheck") or {}).get("test") or []
    return " ".join(test) if isinstance(test, list) else str(test)


def api_services(compose: Mapping[str, Any]) -> list[str]:
    """The services built from the repository (the MMK server instances)."""
    return sorted(n for n, s in compose.get("services", {}).items() if "build" in s)


def compose_problems(compose: Mapping[str, Any], compose_dir: Path = DOCKER_DIR) -> list[str]:
    services: dict[str, Any] = compose.get("services") or {}
    problems = [f"service {s} is missing" for s in REQUIRED_SERVICES if s not in services]
    if problems:
        return problems
    for name, service in services.items():
        unknown = set(service) - COMPOSE_SERVICE_KEYS
        if unknown:
            problems.append(f"{name}: unknown keys {sorted(unknown)}")
        if "ports" in service and name != LOAD_BALANCER:
            problems.append(f"{name} publishes ports; only {LOAD_BALANCER} may")
        for volume in service.get("volumes") or []:
            source = str(volume).split(":")[0]
            if source.startswith(".") and not (compose_dir / source).exists():
                problems.append(f"{name}: volume source {source} does not exist")
    balancer = services[LOAD_BALANCER]
    if not balancer.get("ports"):
        problems.append(f"{LOAD_BALANCER} publishes no port")
    if not str(balancer.get("image", "")).startswith("nginx:"):
        problems.append(f"{LOAD_BALANCER}: not the official nginx image")
    if f"./{NGINX_CONF.name}:/etc/nginx/nginx.conf:ro" not in (balancer.get("volumes") or []):
        problems.append(f"{LOAD_BALANCER}: does not run docker/{NGINX_CONF.name} (read-only)")

    try:
        text = yaml.safe_dump(dict(compose))
        interpolate(text)
    except ValueError as e:
        problems.append(str(e))
        return problems

    postgres, redis = services["postgres"], services["redis"]
    if not str(postgres.get("image", "")).startswith("postgres:"):
        problems.append("postgres: not the official postgres image")
    if "pg_isready" not in _test_text(postgres):
        problems.append("postgres: no pg_isready health check")
    if not any(str(v).split(":")[1:2] == [POSTGRES_DATA] for v in postgres.get("volumes") or []):
        problems.append(f"postgres: no volume on {POSTGRES_DATA}")
    if not str(redis.get("image", "")).startswith("redis:"):
        problems.append("redis: not the official redis image")
    if not re.search(r"redis-cli\b.*\bping", _test_text(redis)):
        problems.append("redis: no `redis-cli ping` health check")
    pg_env = {k: interpolate(v) for k, v in _mapping(postgres.get("environment")).items()}

    apis = api_services(compose)
    if not {"api1", "api2"} <= set(apis):
        problems.append(f"api1 and api2 must be built from the repository (built: {apis})")
    environments = []
    for name in apis:
        service = services[name]
        build = service["build"]
        build = {"context": build} if isinstance(build, str) else build
        context = (compose_dir / build.get("context", ".")).resolve()
        dockerfile = context / build.get("dockerfile", "Dockerfile")
        if context != REPO_ROOT or dockerfile != DOCKERFILE:
            problems.append(f"{name}: not built from docker/Dockerfile with the repository root")
        probe = _probe(_test_text(service))
        if probe is None or probe[0] != APP_PORT or probe[1] not in app_routes():
            problems.append(f"{name}: health check {probe}: not a route of api/app.py")
        depends = service.get("depends_on") or {}
        for dependency in ("postgres", "redis"):
            condition = depends.get(dependency, {}) if isinstance(depends, dict) else {}
            if condition.get("condition") != "service_healthy":
                problems.append(f"{name}: does not wait for {dependency} (service_healthy)")
        if "command" in service or "entrypoint" in service:
            problems.append(f"{name}: overrides the image's command")
        env = {k: interpolate(v) for k, v in _mapping(service.get("environment")).items()}
        environments.append(env)
        problems += settings_problems(env, name)
        problems += [
            f"{name}: sets {v}, which the image's CMD overrides"
            for v in OVERRIDDEN_BY_CMD
            if v in env
        ]
        problems += _url_problems(name, env, pg_env)
    if any(env != environments[0] for env in environments):
        problems.append("the API services do not share the same environment")

    lb_depends = services[LOAD_BALANCER].get("depends_on") or {}
    for name in apis:
        if name not in lb_depends:
            problems.append(f"{LOAD_BALANCER} does not depend on {name}")
    return problems


def _url_problems(name: str, env: Mapping[str, str], pg_env: Mapping[str, str]) -> list[str]:
    problems = []
    try:
        db = make_url(env.get("DATABASE_URL", ""))
    except Exception:  # any parse failure
        return [f"{name}: DATABASE_URL is not a URL"]
    if db.drivername != "postgresql+psycopg":
        problems.append(f"{name}: DATABASE_URL driver {db.drivername}, not postgresql+psycopg")
    if (db.host, db.port or 5432) != ("postgres", 5432):
        problems.append(f"{name}: DATABASE_URL points at {db.host}:{db.port}, not postgres:5432")
    expected = {
        "database": pg_env.get("POSTGRES_DB"),
        "username": pg_env.get("POSTGRES_USER"),
        "password": pg_env.get("POSTGRES_PASSWORD"),
    }
    for part, value in expected.items():
        if getattr(db, part) != value:
            problems.append(f"{name}: DATABASE_URL {part} is not the postgres service's")
    redis = urlsplit(env.get("REDIS_URL", ""))
    if (redis.scheme, redis.hostname, redis.port or 6379) != ("redis", "redis", 6379):
        problems.append(f"{name}: REDIS_URL does not point at redis:6379")
    return problems


# ===================================================== nginx.conf


@dataclass
class Directive:
    name: str
    args: list[str]
    block: list[Directive] | None = None

    def children(self, name: str) -> Iterator[Directive]:
        return (d for d in self.block or [] if d.name == name)

    def first(self, name: str) -> Directive | None:
        return next(self.children(name), None)


_NGINX_TOKEN = re.compile(
    r"""#[^\n]*|"((?:\\.|[^"\\])*)"|'((?:\\.|[^'\\])*)'|([{};])|([^\s{};]+)"""
)


def parse_nginx(text: str) -> Directive:
    """The configuration as a tree under a root directive named ``main``."""
    root = Directive("main", [], [])
    stack, words = [root], []
    for m in _NGINX_TOKEN.finditer(text):
        quoted, single, punct, word = m.groups()
        if m.group(0).startswith("#"):
            continue
        if punct is None:
            words.append(next(w for w in (quoted, single, word) if w is not None))
        elif punct == "}":
            if words or len(stack) == 1:
                raise ValueError("unbalanced '}' or a directive without ';'")
            stack.pop()
        else:
            if not words:
                raise ValueError(f"empty directive before {punct!r}")
            directive = Directive(words[0], words[1:], [] if punct == "{" else None)
            assert stack[-1].block is not None
            stack[-1].block.append(directive)
            if punct == "{":
                stack.append(directive)
            words = []
    if len(stack) != 1 or words:
        raise ValueError("unclosed block or missing ';' at the end")
    return root


def _seconds(value: str) -> float:
    units = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}
    m = re.fullmatch(r"(\d+)(ms|s|m|h|d)?", value)
    if not m:
        raise ValueError(f"not an nginx time: {value}")
    return int(m.group(1)) * units[m.group(2) or "s"]


def _effective(levels: list[Directive], name: str) -> list[Directive]:
    """nginx inheritance: the innermost level that has ``name`` wins whole
    (a location with one proxy_set_header inherits none from its server)."""
    for level in reversed(levels):
        found = list(level.children(name))
        if found:
            return found
    return []


def nginx_problems(text: str, compose: Mapping[str, Any]) -> list[str]:
    try:
        main = parse_nginx(text)
    except ValueError as e:
        return [f"nginx.conf: {e}"]
    http = main.first("http")
    if http is None:
        return ["nginx.conf: no http block"]
    problems: list[str] = []
    apis = api_services(compose)
    wanted = {f"{s}:{APP_PORT}" for s in apis}

    ports = compose.get("services", {}).get(LOAD_BALANCER, {}).get("ports") or []
    container_ports = {str(p).rsplit(":", 1)[-1].partition("/")[0] for p in ports}
    servers = list(http.children("server"))
    listening = {d.args[0].rsplit(":", 1)[-1] for s in servers for d in s.children("listen")}
    if not container_ports <= listening:
        problems.append(f"nginx listens on {sorted(listening)}; compose publishes {ports}")

    locations = [
        (server, loc)
        for server in servers
        for loc in server.children("location")
        if loc.args[-1] == "/graphql" and loc.args[0] in ("/graphql", "=", "^~")
    ]
    if not locations:
        return [*problems, "nginx.conf: no location for /graphql"]
    server, location = locations[0]
    levels = [http, server, location]
    proxy_pass = location.first("proxy_pass")
    upstream_name = proxy_pass.args[0].removeprefix("http://") if proxy_pass else None
    upstream = next((u for u in http.children("upstream") if u.args == [upstream_name]), None)
    if upstream is None:
        return [*problems, f"/graphql: proxy_pass to {upstream_name}, not an upstream block"]
    members = {d.args[0] for d in upstream.children("server")}
    if members != wanted:
        problems.append(f"upstream {upstream_name}: {sorted(members)}, expected {sorted(wanted)}")
    sticky = {"ip_hash", "hash", "sticky"} & {d.name for d in upstream.block or []}
    if sticky:
        problems.append(f"upstream {upstream_name}: {sorted(sticky)} pins clients; none is wanted")
    if any("resolve" in d.args for d in upstream.children("server")) and (
        upstream.first("zone") is None or not _effective([http, upstream], "resolver")
    ):
        problems.append("`server ... resolve` needs a zone in the upstream and a resolver")

    version = _effective(levels, "proxy_http_version")
    if not version or version[-1].args != ["1.1"]:
        problems.append("/graphql: proxy_http_version 1.1 is needed for WebSocket upgrades")
    headers = {d.args[0].lower(): d.args[1] for d in _effective(levels, "proxy_set_header")}
    if headers.get("upgrade") != "$http_upgrade":
        problems.append("/graphql: does not pass the Upgrade header ($http_upgrade)")
    connection = headers.get("connection", "")
    maps = {d.args[1]: d for d in http.children("map") if d.args[0] == "$http_upgrade"}
    if connection.startswith("$"):
        mapped = maps.get(connection)
        default = mapped.first("default") if mapped else None
        if default is None or default.args != ["upgrade"]:
            problems.append(f"/graphql: Connection {connection} is not mapped from $http_upgrade")
    elif connection.lower() != "upgrade":
        problems.append("/graphql: does not set the Connection header for upgrades")
    timeout = _effective(levels, "proxy_read_timeout")
    seconds = _seconds(timeout[-1].args[0]) if timeout else 60
    if seconds < MIN_WEBSOCKET_READ_TIMEOUT:
        problems.append(f"/graphql: proxy_read_timeout {seconds:g}s would cut quiet WebSockets")
    return problems


# ===================================================== the real files


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(COMPOSE_FILE.read_text())
    return loaded


def test_env_vars_list_every_variable_settings_reads() -> None:
    assert set(ENV_VARS) == names_read_by(Settings.from_env)
    assert len(ENV_VARS) == len(set(ENV_VARS))


def test_the_dockerfile_holds_together() -> None:
    assert dockerfile_problems(DOCKERFILE.read_text(), DOCKERIGNORE.read_text()) == []


def test_the_compose_file_holds_together(compose: dict[str, Any]) -> None:
    assert compose_problems(compose) == []


def test_nginx_balances_every_api_service_with_websockets(compose: dict[str, Any]) -> None:
    assert nginx_problems(NGINX_CONF.read_text(), compose) == []


def test_dockerignore_keeps_local_state_out_of_the_context() -> None:
    patterns = dockerignore_patterns(DOCKERIGNORE.read_text())
    for path in (
        ".venv",
        ".git",
        "tests/test_docker_files.py",
        "var/mmk.sqlite3",
        ".mypy_cache",
        "api/__pycache__/app.cpython-311.pyc",
        "docker/.env",
    ):
        assert dockerignored(path, patterns), path
    for path in ("api/app.py", "infra/db/migrations/env.py", "pyproject.toml"):
        assert not dockerignored(path, patterns), path


# ===================================================== the checks can fail


def test_the_settings_names_are_found_in_source() -> None:
    def from_env(e: Mapping[str, str]) -> None:
        e.get("MMK_NEW_THING", "x")
        print("MMK_NEW_THING must be ...", "lowercase", "X")

    assert names_read_by(from_env) == {"MMK_NEW_THING"}


def _compose_case(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    """Set (or, with ``...``, delete) the key at ``a/b/c`` of the compose data."""

    def mutate(data: dict[str, Any]) -> None:
        *parents, last = path.split("/")
        node = data
        for key in parents:
            node = node[key]
        if value is ...:
            del node[last]
        else:
            node[last] = value

    return mutate


COMPOSE_BREAKS = {
    "no redis": ("services/redis", ..., "service redis is missing"),
    "api publishes": ("services/api1/ports", ["8001:8000"], "api1 publishes ports"),
    "unknown variable": ("services/api2/environment/MMK_FOO", "1", "MMK_FOO is not read"),
    "overridden": ("services/api1/environment/MMK_PORT", "9000", "the image's CMD overrides"),
    "bad value": ("services/api1/environment/MMK_GRAPHIQL", "maybe", "refuses the settings"),
    "db host": (
        "services/api1/environment/DATABASE_URL",
        "postgresql+psycopg://mmk:mmk@localhost:5432/mmk",
        "not postgres:5432",
    ),
    "db name": (
        "services/api1/environment/DATABASE_URL",
        "postgresql+psycopg://mmk:mmk@postgres:5432/other",
        "database is not the postgres service's",
    ),
    "redis host": ("services/api2/environment/REDIS_URL", "redis://127.0.0.1:6379/0", "REDIS_URL"),
    "no default": ("services/api2/environment/MMK_LOG_LEVEL", "${LEVEL}", "has no default"),
    "started only": (
        "services/api1/depends_on/postgres/condition",
        "service_started",
        "does not wait for postgres",
    ),
    "no health check": ("services/api2/healthcheck", ..., "health check None"),
    "bad probe": (
        "services/api1/healthcheck/test",
        ["CMD", "python", "-c", "urlopen('http://127.0.0.1:8000/alive')"],
        "not a route",
    ),
    "dockerfile": ("services/api1/build/dockerfile", "Dockerfile", "not built from docker/"),
    "typo": ("services/api1/healtcheck", {}, "unknown keys"),
    "pg volume": ("services/postgres/volumes", [], "no volume"),
    "lb depends": ("services/nginx/depends_on/api2", ..., "does not depend on api2"),
    "lb config": ("services/nginx/volumes", [], "does not run docker/nginx.conf"),
}


@pytest.mark.parametrize("case", COMPOSE_BREAKS.values(), ids=COMPOSE_BREAKS.keys())
def test_compose_checks_catch(compose: dict[str, Any], case: tuple[str, Any, str]) -> None:
    path, value, expected = case
    broken = copy.deepcopy(compose)
    # Untangle the YAML merge: api1 and api2 must be separate dicts to differ.
    for name in api_services(broken):
        broken["services"][name] = copy.deepcopy(broken["services"][name])
    _compose_case(path, value)(broken)
    problems = compose_problems(broken)
    assert any(expected in p for p in problems), problems


DOCKERFILE_BREAKS = {
    "one stage": (r"(?s)^.*?(FROM python:3\.11-slim AS runtime)", r"\1", "multi-stage"),
    "no user": (r"\nUSER [^\n]*", "", "no USER"),
    "root": (r"\nUSER [^\n]*", "\nUSER root", "root"),
    "user late": (r"\nUSER [^\n]*", "", "USER comes after CMD", "\nUSER 10001"),
    "no healthcheck": (r"\nHEALTHCHECK (?:[^\n]*\\\n)*[^\n]*", "", "no HEALTHCHECK"),
    "curl": (
        r"CMD \[\"python\", \"-c\"[^\n]*",
        "CMD curl -f http://127.0.0.1:8000/healthz",
        "curl",
    ),
    "expose": (r"EXPOSE 8000", "EXPOSE 9000", "EXPOSE 8000 missing"),
    "cmd": (r'CMD \["mmk", "serve"', 'CMD ["uvicorn", "api.app:create_app"', "mmk serve"),
    "shell cmd": (r'CMD \["mmk"[^\n]*', "CMD mmk serve --host 0.0.0.0 --port 8000", "shell form"),
    "missing file": (r"COPY api \./api", "COPY app ./app", "COPY app: not in the repository"),
    "ignored file": (r"COPY api \./api", "COPY api ./api\nCOPY tests ./tests", "excluded"),
    "runtime from context": (
        r"(COPY --from=builder[^\n]*)",
        r"\1\nCOPY api /app/api",
        "copies from the build",
    ),
    "bad base": (r"FROM python:3\.11-slim AS runtime", "FROM python:3.12-slim AS runtime", "base"),
    "graphiql on": (r"MMK_GRAPHIQL=false", "MMK_GRAPHIQL=true", "GraphiQL or introspection on"),
    "unknown env": (r"MMK_GRAPHIQL=false", "MMK_GRAPHIQL=false MMK_DEBUG=1", "MMK_DEBUG"),
    "no unbuffered": (r"PYTHONUNBUFFERED=1", "PYTHONUNBUFFERED=0", "PYTHONUNBUFFERED"),
    "no package": (r"\nCOPY infra \./infra", "", "does not COPY infra"),
}


@pytest.mark.parametrize("case", DOCKERFILE_BREAKS.values(), ids=DOCKERFILE_BREAKS.keys())
def test_dockerfile_checks_catch(case: tuple[str, ...]) -> None:
    pattern, replacement, expected, *appended = case
    text, count = re.subn(pattern, replacement, DOCKERFILE.read_text(), count=1)
    assert count == 1, f"the case no longer applies: {pattern}"
    problems = dockerfile_problems(text + "".join(appended), DOCKERIGNORE.read_text())
    assert any(expected in p for p in problems), problems


NGINX_BREAKS = {
    "one instance": (r"\n\s*server api2:8000[^\n]*", "", "expected ['api1:8000', 'api2:8000']"),
    "no upgrade": (r"\n\s*proxy_set_header Upgrade[^\n]*", "", "Upgrade header"),
    # Headers set in the location replace all of the server's: dropping the two
    # upgrade lines there loses them even though the server sets Connection "".
    "inherited only": (
        r"\n\s*proxy_set_header Upgrade[^\n]*\n\s*proxy_set_header Connection \$[^\n]*",
        "",
        "Upgrade header",
    ),
    "connection": (r"Connection \$connection_upgrade", 'Connection "keep-alive"', "Connection"),
    "short timeout": (r"proxy_read_timeout 1h", "proxy_read_timeout 30s", "would cut quiet"),
    "http/1.0": (
        r"(location /graphql \{[^}]*?)proxy_http_version 1\.1",
        r"\1proxy_http_version 1.0",
        "1.1",
    ),
    "sticky": (r"keepalive 32;", "keepalive 32; ip_hash;", "pins clients"),
    "no zone": (r"\n\s*zone mmk_api 64k;", "", "needs a zone"),
    "listen": (r"listen 8000;", "listen 80;", "nginx listens on"),
    "syntax": (r"keepalive 32;", "keepalive 32", "nginx.conf:"),
}


@pytest.mark.parametrize("case", NGINX_BREAKS.values(), ids=NGINX_BREAKS.keys())
def test_nginx_checks_catch(compose: dict[str, Any], case: tuple[str, str, str]) -> None:
    pattern, replacement, expected = case
    text, count = re.subn(pattern, replacement, NGINX_CONF.read_text(), count=1)
    assert count == 1, f"the case no longer applies: {pattern}"
    problems = nginx_problems(text, compose)
    assert any(expected in p for p in problems), problems


def test_a_third_api_service_must_join_the_upstream(compose: dict[str, Any]) -> None:
    scaled = copy.deepcopy(compose)
    scaled["services"]["api3"] = copy.deepcopy(scaled["services"]["api1"])
    scaled["services"]["nginx"]["depends_on"]["api3"] = {"condition": "service_healthy"}
    assert compose_problems(scaled) == []
    problems = nginx_problems(NGINX_CONF.read_text(), scaled)
    assert any("api3:8000" in p for p in problems), problems
