"""The import contracts in pyproject.toml ([tool.importlinter]) hold.

domain/ stays a pure rules engine (no infra, api, web, database or bus
libraries) and the layers only point downwards: api -> infra -> domain.
"""

from __future__ import annotations

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
