"""Write the schema's SDL to ``schema.graphql`` and Apollo Client's
``possibleTypes`` map beside it, ``possibleTypes.json`` (``make schema``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from graphql import GraphQLInterfaceType, GraphQLUnionType

from api.fast.core_schema import core_schema
from api.graphql.schema import schema

POSSIBLE_TYPES = "possibleTypes.json"


def sdl() -> str:
    return schema.as_str() + "\n"


def possible_types() -> dict[str, list[str]]:
    """Every union and interface with its object types, by name (Apollo's
    ``new InMemoryCache({ possibleTypes })``, so that a fragment on a union
    member or an interface matches)."""
    s = core_schema(schema)
    return {
        name: sorted(t.name for t in s.get_possible_types(abstract))
        for name, abstract in sorted(s.type_map.items())
        if isinstance(abstract, GraphQLUnionType | GraphQLInterfaceType)
        and not name.startswith("__")
    }


def possible_types_json() -> str:
    return json.dumps(possible_types(), indent=2) + "\n"


def main() -> int:
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "schema.graphql")
    target.write_text(sdl())
    print(f"wrote {target}")
    beside = target.with_name(POSSIBLE_TYPES)
    beside.write_text(possible_types_json())
    print(f"wrote {beside}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
