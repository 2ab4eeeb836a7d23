"""The Node clients of tests/node, built for a test session: the sources
copied to a directory of its own (the installed packages linked), the
GraphQL types generated from schema.graphql (graphql-codegen), then all of
it compiled by ``tsc --strict``. Without Node.js or the packages (``make
node-deps``) the tests that need them are skipped, saying why; under
``MMK_REQUIRE_SERVICES=1`` (CI) they fail."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path

import pytest

from tests.services import unavailable

ROOT = Path(__file__).resolve().parents[2]
NODE_DIR = ROOT / "tests" / "node"
SOURCES = ("package.json", "tsconfig.json", "codegen.ts", "operations.graphql", "src")
RUN_TIMEOUT = 120  # seconds for one client program (a whole game or two)


def missing() -> str | None:
    if shutil.which("node") is None:
        return "Node.js is not installed (node not on the PATH)"
    if not (NODE_DIR / "node_modules" / ".package-lock.json").exists():
        return "the Node packages are not installed: run `make node-deps`"
    return None


@pytest.fixture(scope="session")
def node() -> str:
    """The node executable; skips (fails under MMK_REQUIRE_SERVICES=1) without it."""
    problem = missing()
    if problem is not None:
        unavailable(problem)
    found = shutil.which("node")
    assert found is not None
    return found


def run(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        cmd,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, f"{' '.join(cmd)} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def staged(project: Path, sources: Iterable[str], out: Path) -> Path:
    """A copy of a Node project's ``sources`` (files and folders) in
    ``out``, its installed packages linked in, so that parallel builds
    never share their output."""
    for name in sources:
        source = project / name
        if source.is_dir():
            shutil.copytree(source, out / name)
        else:
            shutil.copy(source, out / name)
    (out / "node_modules").symlink_to(project / "node_modules", target_is_directory=True)
    return out


@pytest.fixture(scope="session")
def built(node: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The clients, generated and compiled: codegen from schema.graphql, then
    ``tsc --strict`` over the generated code and the clients."""
    out = staged(NODE_DIR, SOURCES, tmp_path_factory.mktemp("node-clients"))
    bin_ = out / "node_modules" / ".bin"
    run(
        [str(bin_ / "graphql-codegen"), "--config", "codegen.ts"],
        out,
        {"MMK_SCHEMA": str(ROOT / "schema.graphql")},
    )
    run([str(bin_ / "tsc"), "-p", "tsconfig.json", "--strict"], out)
    return out
