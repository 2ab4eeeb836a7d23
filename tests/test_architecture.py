"""The import contracts in pyproject.toml ([tool.importlinter]) hold.

domain/ stays a pure rules engine (no infra, api, web, database or bus
libraries) and the layers only point downwards: api -> infra -> domain.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent


def _lint_imports_command() -> list[str]:
    # Prefer the script installed next to the running interpreter (the venv's bin/).
    beside = Path(sys.executable).parent / "lint-imports"
    if beside.exists():
        return [str(beside)]
    found = shutil.which("lint-imports")
    assert found, "lint-imports not found: install the dev extra (pip install -e '.[dev]')"
    return [found]


def test_import_contracts_are_kept() -> None:
    result = subprocess.run(
        [*_lint_imports_command(), "--no-cache", "--no-logo"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if result.returncode != 0:
        pytest.fail(
            f"lint-imports exited {result.returncode}:\n{result.stdout}\n{result.stderr}",
            pytrace=False,
        )


def _imported_roots(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    roots: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(alias.name.partition(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.partition(".")[0])
    return roots


def test_domain_imports_only_the_standard_library_and_itself() -> None:
    """Stricter than a deny-list: any third-party import in domain/ fails."""
    allowed = set(sys.stdlib_module_names) | {"domain", "__future__"}
    offenders = {
        str(path.relative_to(REPO_ROOT)): sorted(_imported_roots(path) - allowed)
        for path in sorted((REPO_ROOT / "domain").rglob("*.py"))
    }
    offenders = {k: v for k, v in offenders.items() if v}
    assert not offenders, f"domain/ imports outside the standard library: {offenders}"


def test_the_stdlib_check_sees_a_third_party_import(tmp_path: Path) -> None:
    scratch = tmp_path / "m.py"
    scratch.write_text("import os\nfrom sqlmodel import Field\nfrom . import x\n")
    assert _imported_roots(scratch) == {"os", "sqlmodel"}
