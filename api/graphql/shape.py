"""A document's shape, measured before validation (issue #14, docs/operations.md
"Limits"): the work graphql-core's validation would do is bounded by what a
single linear walk of the parsed document finds.

Two figures, fragments expanded but each fragment walked once:
- ``fields``: the field selections the document's operations ask for (all
  of them: validation walks each), every fragment spread counted as the
  fields it stands for. Nested spreads multiply (a
  fragment spreading another ten times, twelve deep, is 10^12 fields), so a
  "billion laughs" document is refused here, before Strawberry's depth rule
  walks it spread by spread.
- ``aliases``: the aliases written (each fragment's once).
- ``operations``: validation walks every one, however small.
- ``overlap``: the same-name field pairs the rule "overlapping fields can be
  merged" compares, the quadratic part of validation (``{ __typename
  __typename ... }`` 1,985 times costs ~250 ms), weighted by what each pair
  compares below it.

A cycle of fragments is refused here too (the walk could not end).
"""

from __future__ import annotations

from dataclasses import dataclass

from graphql import (
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    InlineFragmentNode,
    OperationDefinitionNode,
    SelectionSetNode,
)

CAP = 10**12
SPREAD_PAIR = 8
"""What comparing two named fragments spread side by side weighs (the rule
compares each pair of fragments, and each fragment with the fields)."""
"""Figures stop growing here (nested spreads grow them exponentially)."""


MAX_SPREAD_DEPTH = 32
"""Fragments spreading fragments, this deep at most: graphql-core's and
Strawberry's rules recurse through them (~245 deep overflowed the stack)."""


class FragmentCycle(Exception):
    """A fragment spreads itself, directly or not."""


class TooDeep(Exception):
    """Fragments spread fragments deeper than :data:`MAX_SPREAD_DEPTH`."""


@dataclass(frozen=True, slots=True)
class Shape:
    fields: int
    overlap: int
    aliases: int
    operations: int


_Group = tuple[int, int]  # fields of one response name, and their widest sub-selection


class _Walk:
    def __init__(self, document: DocumentNode) -> None:
        self.fragments = {
            d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)
        }
        self.sizes: dict[str, int] = {}
        self.names: dict[str, dict[str, _Group]] = {}
        self.visiting: set[str] = set()
        self.aliases = 0

    def _enter(self, name: str) -> FragmentDefinitionNode | None:
        if name in self.visiting:
            raise FragmentCycle(name)
        if len(self.visiting) >= MAX_SPREAD_DEPTH:
            raise TooDeep(name)
        return self.fragments.get(name)  # unknown: validation says so

    def size(self, selection_set: SelectionSetNode | None) -> int:
        """Fields below ``selection_set``, fragments expanded."""
        if selection_set is None:
            return 0
        total = 0
        for s in selection_set.selections:
            if isinstance(s, FieldNode):
                self.aliases += s.alias is not None
                total += 1 + self.size(s.selection_set)
            elif isinstance(s, InlineFragmentNode):
                total += self.size(s.selection_set)
            elif isinstance(s, FragmentSpreadNode):
                total += self.fragment_size(s.name.value)
            if total >= CAP:
                return CAP
        return total

    def fragment_size(self, name: str) -> int:
        known = self.sizes.get(name)
        if known is not None:
            return known
        fragment = self._enter(name)
        if fragment is None:
            return 0
        self.visiting.add(name)
        try:
            size = self.size(fragment.selection_set)
        finally:
            self.visiting.discard(name)
        self.sizes[name] = size
        return size

    def groups(self, selection_set: SelectionSetNode) -> dict[str, _Group]:
        """The fields the rule collects for one selection set, by response
        name: its own, its inline fragments' and its spreads' (expanded)."""
        out: dict[str, _Group] = {}
        for s in selection_set.selections:
            if isinstance(s, FieldNode):
                name = s.alias.value if s.alias else s.name.value
                sub = self.size(s.selection_set)  # a pair compares all that is below it
                n, widest = out.get(name, (0, 0))
                out[name] = (n + 1, max(widest, sub))
            else:
                if isinstance(s, InlineFragmentNode):
                    inner = self.groups(s.selection_set)
                else:
                    assert isinstance(s, FragmentSpreadNode)
                    inner = self.fragment_groups(s.name.value)
                for name, (m, sub) in inner.items():
                    n, widest = out.get(name, (0, 0))
                    out[name] = (min(CAP, n + m), max(widest, sub))
        return out

    def fragment_groups(self, name: str) -> dict[str, _Group]:
        known = self.names.get(name)
        if known is not None:
            return known
        fragment = self._enter(name)
        if fragment is None:
            return {}
        self.visiting.add(name)
        try:
            groups = self.groups(fragment.selection_set)
        finally:
            self.visiting.discard(name)
        self.names[name] = groups
        return groups

    def overlap(self, selection_set: SelectionSetNode | None) -> int:
        """Pairs compared in this selection set and every one nested in it
        (each written once: a fragment's own are counted at its definition)."""
        if selection_set is None:
            return 0
        total = 0
        for n, widest in self.groups(selection_set).values():
            if n > 1:
                total += n * (n - 1) // 2 * (1 + widest)
        spreads = len(
            {s.name.value for s in selection_set.selections if isinstance(s, FragmentSpreadNode)}
        )
        total += spreads * (spreads - 1) // 2 * SPREAD_PAIR
        for s in selection_set.selections:
            if isinstance(s, FieldNode | InlineFragmentNode):
                total += self.overlap(s.selection_set)
            if total >= CAP:
                return CAP
        return total


def shape_of(document: DocumentNode) -> Shape:
    """The document's figures; raises :class:`FragmentCycle`, and
    :class:`TooDeep` for spreads nested deeper than :data:`MAX_SPREAD_DEPTH`
    (validation recurses through them)."""
    walk = _Walk(document)
    fields = 0
    overlap = 0
    operations = 0
    for d in document.definitions:
        if isinstance(d, OperationDefinitionNode):
            operations += 1
            fields = min(CAP, fields + walk.size(d.selection_set))
            overlap += walk.overlap(d.selection_set)
        elif isinstance(d, FragmentDefinitionNode):
            walk.fragment_size(d.name.value)  # a cycle is found even if unused
            overlap += walk.overlap(d.selection_set)
    return Shape(min(fields, CAP), min(overlap, CAP), walk.aliases, operations)
