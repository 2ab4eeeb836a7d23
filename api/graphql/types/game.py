"""A game as one caller may see it: lobby facts, the public table, and the
caller's own seat (``viewer``) when seated."""

from __future__ import annotations

from datetime import datetime

import strawberry

from api.graphql.context import Info
from api.graphql.types.keys import key
from api.graphql.types.table import SeatPresence, Table
from api.graphql.types.viewer import Viewer
from domain.bots.strategy import Strategy
from domain.game.options import AbilityTrigger, Format, Pace
from domain.game.options import GameOptions as DomainOptions
from domain.records import GameStatus, Invitation, Visibility
from domain.records import GameSummary as DomainSummary
from domain.services import queries
from domain.services.queries import GameSnapshot, SeatInfo

SPECTATORS = (
    "How many subscriptions watch the game's public stream (spectators: `gameEvents` of "
    "someone not seated), on every server instance. Cheap and approximate: exact for the "
    "instance that answers, the others' counts a few seconds old (docs/clients.md "
    '"Spectators")'
)
RATED = "A rated game: its end changes its seats' ratings (docs/ratings.md)"
PRACTICE = (
    "A practice (reproducible) game: the host chose its seed, so its deal is not secret "
    'from them (docs/clients.md "Fair deals")'
)


@strawberry.type(
    description="Rule variants of a game (R3, R7.0, R8.3), fixed at `createGame`. No cache "
    "key: a value inside its `Game` or `GameSummary`."
)
class GameOptions:
    format: Format = strawberry.field(description="Where the deck comes from (R3)")
    ability_trigger: AbilityTrigger = strawberry.field(
        description="Which plays trigger their house's ability (R7.0)"
    )
    refill_hands: bool = strawberry.field(
        description="Whether seats draw back up to 10 cards after each trick (R8.3)"
    )
    turn_seconds: int = strawberry.field(
        description="Seconds per action before the bank runs; 0: untimed (docs/decisions/0046)"
    )
    bank_seconds: int = strawberry.field(
        description="Each seat's extra seconds, spent once an action's turn time is over"
    )
    timeouts_to_takeover: int = strawberry.field(
        description="Timeouts in a row after which a bot plays the seat (`SeatTakenOver`)"
    )
    pace: Pace = strawberry.field(
        description="CORRESPONDENCE when a turn may last an hour or more (`turnSeconds` >= "
        "3600): played over days, each turn told by a notification; LIVE otherwise"
    )

    @classmethod
    def from_domain(cls, o: DomainOptions) -> GameOptions:
        return cls(
            format=o.format,
            ability_trigger=o.ability_trigger,
            refill_hands=o.refill_hands,
            turn_seconds=o.turn_seconds,
            bank_seconds=o.bank_seconds,
            timeouts_to_takeover=o.timeouts_to_takeover,
            pace=o.pace,
        )


@strawberry.type(description="Who sits in a seat (lobby facts, public). Cache key: `id`.")
class SeatSlot:
    id: strawberry.ID = strawberry.field(description="`<gameId>:<seat>`")
    seat: int = strawberry.field(description="The seat number, 0 to seatCount - 1, clockwise")
    player_id: strawberry.ID | None = strawberry.field(
        description="The seated player's id (also while a bot plays for them); null for a "
        "bot's seat or a free seat"
    )
    player_name: str | None = strawberry.field(
        description="The seated player's name; null for a bot's seat or a free seat"
    )
    bot: Strategy | None = strawberry.field(
        description="The bot's strategy, for a bot's seat or a player's seat taken over"
    )
    bank_seconds: float | None = strawberry.field(
        description="A timed running game's bank left to this seat (seconds; the waiting "
        "seat's bank as of its wait's start: count down from `Game.deadline`); null untimed"
    )
    left: bool = strawberry.field(
        description="Its player left the running game: a bot plays it for good"
    )
    reserved_for: strawberry.ID | None = strawberry.field(
        description="A free seat of a rematch kept for its player of the last game, until they "
        "take a seat or the game starts (docs/decisions/0048); null otherwise"
    )

    @classmethod
    def from_domain(cls, game_id: str, s: SeatInfo) -> SeatSlot:
        return cls(
            id=key(game_id, s.seat),
            seat=s.seat,
            player_id=strawberry.ID(s.player_id) if s.player_id else None,
            player_name=s.name,
            bot=s.bot,
            bank_seconds=s.bank_seconds,
            left=s.left,
            reserved_for=strawberry.ID(s.reserved_for) if s.reserved_for else None,
        )


@strawberry.type(
    description="A player invited to a game, not yet seated. No cache key: a value of its `Game`."
)
class PendingInvitation:
    player_id: strawberry.ID = strawberry.field(description="The invited player")
    player_name: str | None = strawberry.field(description="Their name")
    invited_at: datetime = strawberry.field(description="When the host invited them")

    @classmethod
    def from_domain(cls, i: Invitation, names: dict[str, str]) -> PendingInvitation:
        return cls(
            player_id=strawberry.ID(i.player_id),
            player_name=names.get(i.player_id),
            invited_at=i.at,
        )


@strawberry.type(description="A game in the lobby listing. Cache key: `id` (the game's id).")
class GameSummary:
    id: strawberry.ID = strawberry.field(description="The game's id")
    status: GameStatus = strawberry.field(description="Lobby, running, finished or abandoned")
    host_id: strawberry.ID = strawberry.field(description="The id of the player who created it")
    seat_count: int = strawberry.field(description="Its number of seats, 3 to 8 (R2.1)")
    seats_taken: int = strawberry.field(description="Seats held by players or bots")
    options: GameOptions = strawberry.field(description="Its rule variants")
    version: int = strawberry.field(description="Counts the game's accepted changes")
    created_at: datetime = strawberry.field(description="When it was created")
    practice: bool = strawberry.field(description=PRACTICE)
    rated: bool = strawberry.field(description=RATED)
    visibility: Visibility = strawberry.field(
        description="Who may find, watch and join it (docs/decisions/0062): always PUBLIC in "
        "the lobby listing"
    )

    @classmethod
    def from_domain(cls, g: DomainSummary) -> GameSummary:
        return cls(
            id=strawberry.ID(g.id),
            status=g.status,
            host_id=strawberry.ID(g.host),
            seat_count=g.seat_count,
            seats_taken=g.seats_taken,
            options=GameOptions.from_domain(g.options),
            version=g.version,
            created_at=g.created_at,
            practice=g.practice,
            rated=g.rated,
            visibility=g.visibility,
        )


@strawberry.type(
    description="A game: lobby facts, the public table once started, and `viewer`, the "
    "caller's own seat, when seated. Cache key: `id` (the game's id); `viewer` is the only "
    "field that depends on the caller."
)
class Game:
    id: strawberry.ID = strawberry.field(description="The game's id")
    status: GameStatus = strawberry.field(description="Lobby, running, finished or abandoned")
    host_id: strawberry.ID = strawberry.field(
        description="The id of the player who created it; only the host adds bots and starts"
    )
    seat_count: int = strawberry.field(description="Its number of seats, 3 to 8 (R2.1)")

    @strawberry.field(description="Who sits where, by seat number")
    async def seats(self, info: Info) -> list[SeatSlot]:
        infos = await queries.seats_of(info.context.deps, self.snapshot)
        return [SeatSlot.from_domain(self.id, x) for x in infos]

    rat_seat: int | None = strawberry.field(
        description="The Rat's seat: chosen by the host, or drawn at the start (R4.1); null "
        "in the lobby when not chosen"
    )
    options: GameOptions = strawberry.field(description="Its rule variants")
    version: int = strawberry.field(description="Send as expectedVersion to guard a move")
    last_seq: int = strawberry.field(description="The newest event's seq")
    created_at: datetime = strawberry.field(description="When it was created")
    practice: bool = strawberry.field(description=PRACTICE)
    rated: bool = strawberry.field(description=RATED)
    seed_commitment: str = strawberry.field(
        description="SHA-256 (hex) of the game's secret seed and salt, fixed at creation; "
        "`GameStarted` carries it and `GameEnded` reveals seed and salt (docs/clients.md "
        '"Fair deals")'
    )
    rematch_id: strawberry.ID | None = strawberry.field(
        description="This finished game's rematch, once a player asked for one (`rematch`, "
        "docs/decisions/0048); null otherwise"
    )
    visibility: Visibility = strawberry.field(
        description="Who may find, watch and join it (docs/decisions/0062)"
    )
    invite_code: str | None = strawberry.field(
        description="An unlisted or private game's invite code (`joinByInviteCode`), shown to "
        "its host and seated players only; null to anyone else, and when it has none"
    )
    snapshot: strawberry.Private[GameSnapshot]

    @strawberry.field(
        description="Its pending invitations (`invitePlayers`), oldest first, with names and "
        "times: listed to its host and seated players, empty to anyone else (its watchers "
        "see the invited players' ids in `PlayersInvited`: player ids are not secret)"
    )
    async def invitations(self, info: Info) -> list[PendingInvitation]:
        found = self.snapshot.invitations
        if not found:
            return []
        names = await queries.names_of(info.context.deps, [i.player_id for i in found])
        return [PendingInvitation.from_domain(i, names) for i in found]

    @strawberry.field(
        description="When the running wait times out (server time, ISO 8601; compare with "
        "`serverTime`); null when untimed or no person must act (docs/decisions/0046)"
    )
    def deadline(self) -> datetime | None:
        return self.snapshot.deadline

    @strawberry.field(description="The public state, the same for everyone; null in the lobby")
    def table(self) -> Table | None:
        s = self.snapshot
        if s.public is None:
            return None
        return Table.from_domain(
            self.id, s.public, SeatPresence(self.id, s.seat_players, s.seat_bots)
        )

    @strawberry.field(
        description="Your own seat's private state; null unless you are seated in a started game"
    )
    def viewer(self) -> Viewer | None:
        s = self.snapshot
        return (
            None
            if s.viewer_seat is None or s.viewer is None
            else Viewer(game_id=self.id, snapshot=s)
        )

    @strawberry.field(description=SPECTATORS)
    async def spectator_count(self, info: Info) -> int:
        counts = info.context.deps.spectators
        return 0 if counts is None else await counts.count(str(self.id))

    @classmethod
    def from_domain(cls, s: GameSnapshot) -> Game:
        g = s.summary
        return cls(
            id=strawberry.ID(g.id),
            status=g.status,
            host_id=strawberry.ID(g.host),
            seat_count=g.seat_count,
            rat_seat=s.rat_seat,
            options=GameOptions.from_domain(g.options),
            version=g.version,
            last_seq=s.last_seq,
            created_at=g.created_at,
            practice=g.practice,
            rated=g.rated,
            seed_commitment=s.seed_commitment,
            rematch_id=strawberry.ID(s.rematch_id) if s.rematch_id else None,
            visibility=s.visibility,
            invite_code=s.invite_code,
            snapshot=s,
        )
