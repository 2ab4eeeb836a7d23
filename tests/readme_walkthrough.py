"""The README's "A five-minute game" as the tests read it: its GraphQL
blocks and its curl commands, in the order they are written, each curl
paired with the GraphQL block it sends; and the examples of docs/clients.md.
tests/api/test_readme_examples.py runs the blocks, tests/e2e/test_readme_curl.py
the curl commands, and both play the game on to ``GameEnded`` with the loop
the README describes (tests/stream_policy.py)."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

from graphql import GraphQLSchema, OperationDefinitionNode, parse, print_ast, validate
from graphql.validation import NoDeprecatedCustomRule, specified_rules

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
CLIENTS = ROOT / "docs" / "clients.md"
URL = "http://127.0.0.1:8000/graphql"
PLACEHOLDER = re.compile(r"<[^<>]+>")
# What the walkthrough's game shows: seat 0 (the person, the Rat) acts first,
# at the version after createGame, two addBot and startGame.
VERSION = 4
START_EVENTS = ["GameStarted", "TrickStarted", "ActionRequired"]
_FENCE = re.compile(r"^ *```(\w+)\n(.*?)^ *```", re.S | re.M)


def readme_section() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("## A five-minute game")
    return text[start : text.index("\n## ", start + 1)]


def fenced(text: str) -> list[tuple[str, str]]:
    """``(language, code)`` of each fenced block, in order, unindented."""
    return [(lang, _dedent(code)) for lang, code in _FENCE.findall(text)]


def _dedent(code: str) -> str:
    return "\n".join(line.strip() for line in code.strip().splitlines())


@dataclass(frozen=True)
class Curl:
    """One curl command: its words as the shell would split them."""

    words: tuple[str, ...]

    @classmethod
    def of(cls, block: str) -> Curl:
        words = tuple(shlex.split(block.replace("\\\n", " ")))
        assert words[0] == "curl", block
        return cls(words)

    @property
    def url(self) -> str:
        (url,) = [w for w in self.words if w.startswith("http")]
        return url

    @property
    def headers(self) -> dict[str, str]:
        """Header names lowercase."""
        pairs = [v.partition(":") for k, v in pairwise(self.words) if k == "-H"]
        return {name.strip().lower(): value.strip() for name, _, value in pairs}

    @property
    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = json.loads(self.words[self.words.index("-d") + 1])
        return body

    @property
    def streams(self) -> bool:
        return "-N" in self.words

    def argv(self, url: str, values: Mapping[str, str], *extra: str) -> list[str]:
        """The words with ``url`` for the README's and each placeholder
        filled in from ``values``; ``extra`` options go after ``curl``."""
        words = [w.replace(URL, url) for w in self.words]
        for placeholder, value in values.items():
            words = [w.replace(placeholder, value) for w in words]
        left = [p for w in words for p in PLACEHOLDER.findall(w)]
        assert not left, f"no value for {left} in {self.words}"
        return [words[0], *extra, *words[1:]]


def graphql_blocks() -> list[str]:
    """The walkthrough's GraphQL blocks, in order."""
    return [code for lang, code in fenced(readme_section()) if lang == "graphql"]


def curls(text: str) -> list[Curl]:
    return [Curl.of(code) for lang, code in fenced(text) if lang == "sh"]


def readme_curls() -> list[Curl]:
    """The walkthrough's curl commands, in order."""
    return curls(readme_section())


def clients_curls() -> list[Curl]:
    """docs/clients.md's curl commands (a subscription over multipart)."""
    return curls(CLIENTS.read_text(encoding="utf-8"))


def clients_graphql() -> list[str]:
    """docs/clients.md's GraphQL blocks."""
    text = CLIENTS.read_text(encoding="utf-8")
    return [code for lang, code in fenced(text) if lang == "graphql"]


def block_of(curl: Curl) -> str:
    """The walkthrough's GraphQL block that ``curl`` sends."""
    (block,) = [b for b in graphql_blocks() if normalized(b) == normalized(curl.body["query"])]
    return block


def block_named(name: str) -> str:
    """The walkthrough's GraphQL block of the operation ``name``."""
    (block,) = [b for b in graphql_blocks() if (op := operation(b)).name and op.name.value == name]
    return block


def readme_action(mutation: str, arguments: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """The README's block for an answer of the loop (tests/stream_policy.py),
    with its variables besides ``game``; None for the mutations it does not
    show (``pass``, ``discardAndPlay``, ``reclaimSeat``)."""
    if mutation == "playCard":
        return block_named("Play"), arguments
    if mutation == "resolveDecision":
        return block_named("Decide"), arguments
    return None


def normalized(document: str) -> str:
    return print_ast(parse(document))


def operation(document: str) -> OperationDefinitionNode:
    (op,) = parse(document).definitions
    assert isinstance(op, OperationDefinitionNode)
    return op


def variable_names(document: str) -> set[str]:
    return {v.variable.name.value for v in operation(document).variable_definitions or ()}


def problems(schema: GraphQLSchema, document: str) -> list[str]:
    """Why ``document`` is not a valid operation that selects no deprecated
    field (nor argument or enum value); empty if it is."""
    rules = [*specified_rules, NoDeprecatedCustomRule]
    return [e.message for e in validate(schema, parse(document), rules)]
