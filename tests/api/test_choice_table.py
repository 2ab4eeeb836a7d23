"""docs/clients.md "From a choice to a mutation" (and the README's short
form of it) against the schema: every kind of choice has its row, the
mutation it names is the one the schema's ``ActionKind`` describes, and the
arguments it names are that mutation's (``resolveDecision``: the fields of
``DecisionInput``)."""

from __future__ import annotations

import re

from graphql import GraphQLEnumType, GraphQLInputObjectType, GraphQLObjectType

from api.graphql.schema import schema
from tests.readme_walkthrough import CLIENTS, README

CODE = re.compile(r"`([^`]*)`")
MESSAGES = {"SEND_MESSAGE", "DELIVER_MESSAGE", "DECLINE_MESSAGE"}


def _rows(text: str, heading: str) -> list[list[str]]:
    """The cells of the first table after ``heading``."""
    start = text.index(heading)
    lines = text[start:].splitlines()
    first = next(i for i, line in enumerate(lines) if line.strip().startswith("| `kind`"))
    rows = []
    for line in lines[first + 2 :]:
        if not line.strip().startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split(" | ")])
    return rows


def _enum(name: str) -> set[str]:
    enum = schema._schema.type_map[name]
    assert isinstance(enum, GraphQLEnumType)
    return set(enum.values)


def _mutation_args(name: str) -> set[str]:
    mutation = schema._schema.mutation_type
    assert mutation is not None
    return set(mutation.fields[name].args)


def test_every_kind_has_its_mutation_and_arguments() -> None:
    decision_input = schema._schema.type_map["DecisionInput"]
    assert isinstance(decision_input, GraphQLInputObjectType)
    choice = schema._schema.type_map["ActionChoice"]
    assert isinstance(choice, GraphQLObjectType)
    gift = schema._schema.type_map["GiftInput"]
    assert isinstance(gift, GraphQLInputObjectType)
    kinds = _enum("ActionKind")
    seen = set()
    for kind_cell, _rule, mutation_cell, arguments in _rows(
        CLIENTS.read_text(encoding="utf-8"), "## From a choice to a mutation"
    ):
        (kind,) = CODE.findall(kind_cell)
        (mutation,) = CODE.findall(mutation_cell)
        seen.add(kind)
        described = kinds_description(kind)
        assert f"`{mutation}`" in described, (kind, described)
        # Every name a row gives is an argument, a field of the input it
        # goes in, or a field of ActionChoice it comes from.
        named = {w for w in CODE.findall(arguments) if re.fullmatch(r"\w+", w)}
        known = _mutation_args(mutation) | set(decision_input.fields) | set(choice.fields)
        assert named <= known | set(gift.fields), (kind, named - known)
        if mutation == "resolveDecision":
            assert kind in _enum("DecisionKind")
            (decision,) = re.findall(r"`decision: \{kind: (\w+), (\w+)", arguments)
            assert decision[0] == kind and decision[1] in decision_input.fields
        else:
            given = {w.split(":")[0] for w in re.findall(r"`(\w+)`:", arguments)}
            assert given <= _mutation_args(mutation), (kind, given)
    assert seen == kinds


def kinds_description(kind: str) -> str:
    """What the schema says of an ActionKind value."""
    enum = schema._schema.type_map["ActionKind"]
    assert isinstance(enum, GraphQLEnumType)
    return enum.values[kind].description or ""


def test_the_readme_lists_every_move() -> None:
    text = README.read_text(encoding="utf-8")
    kinds = {
        kind
        for row in _rows(text, "6. **Play on until `GameEnded`.**")
        for kind in CODE.findall(row[0])
    }
    assert kinds == _enum("ActionKind") - MESSAGES
