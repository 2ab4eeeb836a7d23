"""docs/operations.md's ``mmk`` commands run as written, in order, on a
database holding a finished game (``DATABASE_URL``, as an operator sets
it): ``GAME_ID`` and ``KEY_ID`` filled in, ``simulate`` with fewer games."""

from __future__ import annotations

import asyncio
import re
import shlex
from pathlib import Path

import pytest

from api.cli import main
from infra.db.uow import SqlUnitOfWorkFactory
from tests.integration.test_fair_deals_on_sql import bots_game

OPERATIONS = Path(__file__).resolve().parents[2] / "docs" / "operations.md"
MMK = ".venv/bin/mmk"


def commands() -> list[list[str]]:
    """The ``mmk`` lines of the document's shell blocks, comments dropped."""
    text = OPERATIONS.read_text(encoding="utf-8")
    blocks = re.findall(r"^```sh\n(.*?)^```", text, re.S | re.M)
    lines = [line for block in blocks for line in block.splitlines()]
    return [shlex.split(line, comments=True) for line in lines if line.startswith(MMK)]


def test_the_documented_commands_run(
    uow: SqlUnitOfWorkFactory,
    db_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    game_id = asyncio.run(bots_game(uow, 3))  # the commands run loops of their own
    monkeypatch.setenv("DATABASE_URL", db_url)
    monkeypatch.chdir(tmp_path)
    ran = []
    key_id = ""
    for words in commands():
        assert words[0] == MMK
        argv = [w.replace("GAME_ID", game_id).replace("KEY_ID", key_id) for w in words[1:]]
        if argv[0] == "simulate":
            argv[argv.index("--games") + 1] = "20"  # 2,000 take seconds
        capsys.readouterr()
        assert main(argv) == 0, argv
        out = capsys.readouterr().out
        if argv[:2] == ["service-key", "list"]:
            key_id = out.split("\t", 1)[0]
        ran.append(" ".join(argv[:2]))
    assert ran == [
        "demo --seats",
        "simulate --games",
        f"export {game_id}",
        "verify game.json",
        "service-key create",
        "service-key list",
        "service-key revoke",
        "games reindex",
    ]
    assert (tmp_path / "game.json").exists() and key_id
