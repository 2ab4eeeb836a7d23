"""A player's invitations (issue #24, docs/decisions/0062): ``Me.invitations``."""

from __future__ import annotations

from datetime import datetime

import strawberry

from api.graphql.cursors import cursor_of, decode_cursor
from api.graphql.types.game import GameSummary
from api.graphql.types.pages import PageInfo
from domain.records import GameSummary as DomainSummary
from domain.records import Invitation as DomainInvitation
from domain.services.deps import Deps
from domain.services.invitations import my_invitations
from domain.services.queries import names_of


@strawberry.type(
    description="An invitation to a game not yet started: accept it (`acceptInvitation`) or "
    "decline it (`declineInvitation`). No cache key: a value inside its "
    "`InvitationConnection` (its `game` is cached by its `id`)."
)
class Invitation:
    game: GameSummary = strawberry.field(description="The game (open it with `game(id)`)")
    invited_by: strawberry.ID = strawberry.field(description="The host who invited you")
    invited_by_name: str | None = strawberry.field(description="The host's name")
    invited_at: datetime = strawberry.field(description="When")

    @classmethod
    def from_domain(
        cls, i: DomainInvitation, g: DomainSummary, names: dict[str, str]
    ) -> Invitation:
        return cls(
            game=GameSummary.from_domain(g),
            invited_by=strawberry.ID(i.invited_by),
            invited_by_name=names.get(i.invited_by),
            invited_at=i.at,
        )


@strawberry.type(description="An invitation and its cursor. No cache key: a value.")
class InvitationEdge:
    cursor: str = strawberry.field(description="Pass as `after` for the invitations after it")
    node: Invitation = strawberry.field(description="The invitation")


@strawberry.type(
    description="A page of your invitations, newest first. No cache key: a page; merge pages "
    "on `Me.invitations`."
)
class InvitationConnection:
    edges: list[InvitationEdge] = strawberry.field(description="This page's invitations")
    page_info: PageInfo = strawberry.field(description="Whether and where the list goes on")


async def invitations_page(
    deps: Deps, player_id: str, first: int, after: str | None
) -> InvitationConnection:
    """A page of a player's invitations; a bad cursor or page size is ``BAD_INPUT``."""
    start = decode_cursor(after) if after else None
    page = await my_invitations(deps, player_id, start, first)
    hosts = sorted({i.invited_by for i, _ in page.items})
    names = await names_of(deps, hosts) if hosts else {}
    edges = [
        InvitationEdge(cursor=cursor_of(i.at, g.id), node=Invitation.from_domain(i, g, names))
        for i, g in page.items
    ]
    return InvitationConnection(
        edges=edges,
        page_info=PageInfo(
            has_next_page=page.has_next, end_cursor=edges[-1].cursor if edges else None
        ),
    )
