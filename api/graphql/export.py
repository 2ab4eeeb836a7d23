"""Write the schema's SDL to ``schema.graphql`` (``make schema``)."""

from __future__ import annotations

import sys
from pathlib import Path

from api.graphql.schema import schema


def sdl() -> str:
    return schema.as_str() + "\n"


def main() -> int:
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "schema.graphql")
    target.write_text(sdl())
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
