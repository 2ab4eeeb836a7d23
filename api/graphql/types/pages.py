"""Where a cursor-paginated list's page ends (Relay's ``PageInfo``), shared by
every connection: the lobby listing, a player's collection."""

from __future__ import annotations

import strawberry


@strawberry.type(
    description="Where a page of a list ends (Relay). No cache key: a value inside its connection."
)
class PageInfo:
    has_next_page: bool = strawberry.field(description="Whether more items follow")
    end_cursor: str | None = strawberry.field(
        description="The last edge's cursor (pass as `after`); null on an empty page"
    )
