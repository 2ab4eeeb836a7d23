"""Mutations: every change a client can ask for (API.md). Each returns its
result or a typed ``Refusal``; game mutations take ``idempotencyKey`` and
``expectedVersion``."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any

import strawberry

from api.graphql.context import Info
from api.graphql.inputs import CreateGameInput, DecisionInput, card_of, check_key, check_version
from api.graphql.types.events import GameEvent, typed
from api.graphql.types.game import Game
from api.graphql.types.keys import key
from api.graphql.types.players import BoosterPack, NewPlayer, NewToken, Player, TokenRevoked
from api.graphql.types.refusal import Refusal
from domain.bots.strategy import Strategy
from domain.errors import DomainError
from domain.game.commands import (
    Command,
    DeclineMessage,
    DeliverMessage,
    DiscardAndPlay,
    Pass,
    PlayCard,
    SendMessage,
)
from domain.game.options import Format
from domain.records import MutationResult
from domain.services import boosters, games, play, players, queries, timeouts
from domain.services import quick_play as quick_plays
from domain.services import rematch as rematches
from domain.services.deps import Deps
from domain.services.transaction import Request


@strawberry.type(
    description="A change made: the game's new version, the events as you see them, and the "
    "game after it. Cache key: `id`; only the caller who made the change gets it (a repeat "
    "with the same `idempotencyKey` gets the same)."
)
class GameChange:
    id: strawberry.ID = strawberry.field(
        description="`<gameId>:<version>`: each accepted change makes one version"
    )
    version: int = strawberry.field(description="The game's version after the change")
    game_id: strawberry.ID = strawberry.field(description="The game changed")
    result: strawberry.Private[MutationResult]

    @strawberry.field(description="The events of this change, as you see them")
    def events(self) -> list[GameEvent]:
        return [typed(e) for e in self.result.events]

    @strawberry.field(description="The game as it is now, as you may see it")
    async def game(self, info: Info) -> Game:
        player = await info.context.player()
        snap = await queries.get_game(
            info.context.deps, self.game_id, player.id if player else None
        )
        return Game.from_domain(snap)

    @classmethod
    def from_domain(cls, r: MutationResult) -> GameChange:
        return cls(
            id=key(r.game_id, r.version),
            version=r.version,
            game_id=strawberry.ID(r.game_id),
            result=r,
        )


GameChangeResult = Annotated[
    GameChange | Refusal,
    strawberry.union("GameChangeResult", description="The change made, or why nothing was."),
]
NewPlayerResult = Annotated[
    NewPlayer | Refusal,
    strawberry.union("CreatePlayerResult", description="The new account, or why not."),
]
RotateTokenResult = Annotated[
    NewToken | Refusal,
    strawberry.union("RotateTokenResult", description="Your new token, or why not."),
]
RevokeTokenResult = Annotated[
    TokenRevoked | Refusal,
    strawberry.union("RevokeTokenResult", description="Signed out, or why not."),
]
BoosterResult = Annotated[
    BoosterPack | Refusal,
    strawberry.union("BoosterPackResult", description="The pack opened, or why not."),
]
Run = Callable[[Request], Awaitable[MutationResult]]


async def _change(
    info: Info, op: str, args: dict[str, Any], key: str | None, version: int | None, run: Run
) -> GameChange | Refusal:
    player = await info.context.require_player()
    try:
        check_key(key)
        check_version(version)
        result = await run(Request(player.id, op, args, key, version))
    except DomainError as e:
        return Refusal.of(e)
    return GameChange.from_domain(result)


async def _act(
    info: Info,
    op: str,
    game_id: str,
    args: dict[str, Any],
    key: str | None,
    version: int | None,
    command: Callable[[], Command],
) -> GameChange | Refusal:
    async def run(req: Request) -> MutationResult:
        return await play.act(info.context.deps, req, game_id, command())

    return await _change(info, op, {"gameId": game_id, **args}, key, version, run)


GameUseCase = Callable[[Deps, Request, str], Awaitable[MutationResult]]


async def _on_game(
    info: Info, op: str, game_id: str, key: str | None, version: int | None, use: GameUseCase
) -> GameChange | Refusal:
    """A change whose only argument is the game (leave, reclaim, start)."""

    async def run(req: Request) -> MutationResult:
        return await use(info.context.deps, req, game_id)

    return await _change(info, op, {"gameId": game_id}, key, version, run)


Key = Annotated[str | None, strawberry.argument(description="Repeat to replay the first result")]
Version = Annotated[
    int | None, strawberry.argument(description="Refused with STALE_STATE unless the game is at it")
]
GameId = Annotated[strawberry.ID, strawberry.argument(description="The game's id")]
SeatArg = Annotated[
    int | None, strawberry.argument(description="The seat to take; the lowest free one if null")
]
CardArg = Annotated[strawberry.ID, strawberry.argument(description="A card id from your hand")]
MessageId = Annotated[
    strawberry.ID,
    strawberry.argument(description="The pending message's `messageId` (not its `id`)"),
]


@strawberry.type(
    description="Changes. Each returns its result or a typed `Refusal`; game mutations take "
    "`idempotencyKey` and `expectedVersion`."
)
class Mutation:
    @strawberry.mutation(description="A guest account; its token is returned once.")
    async def create_player(
        self,
        info: Info,
        name: Annotated[
            str, strawberry.argument(description="1 to 40 printable characters, shown to others")
        ],
        idempotency_key: Key = None,
    ) -> NewPlayerResult:
        await info.context.player()  # a bad token is refused on every operation
        try:
            check_key(idempotency_key)
            new = await players.create_player(info.context.deps, name, idempotency_key)
        except DomainError as e:
            return Refusal.of(e)
        return NewPlayer(player=Player.from_domain(new.player), token=new.token)

    @strawberry.mutation(
        description="A new token for you; the one you sent stops working at once (a lost "
        "device's copy, say), on every server instance: its WebSockets close with 4401, "
        "its HTTP streams end with `UNAUTHENTICATED` (sent over such a socket, you get "
        "this answer first). Reconnect with the new token."
    )
    async def rotate_token(self, info: Info) -> RotateTokenResult:
        player = await info.context.require_player()
        token = info.context.token()
        assert token is not None  # require_player had one
        try:
            new = await players.rotate_token(info.context.deps, player.id, token)
        except DomainError as e:
            return Refusal.of(e)
        finally:
            info.context.forget(token)
        return NewToken(player=Player.from_domain(player), token=new)

    @strawberry.mutation(
        description="Sign out: the token you sent stops working at once, on every server "
        "instance: its WebSockets close with 4401, its HTTP streams end with "
        "`UNAUTHENTICATED`. A guest account has one token: without one rotated first, the "
        "account is out of reach for good."
    )
    async def revoke_token(self, info: Info) -> RevokeTokenResult:
        player = await info.context.require_player()
        token = info.context.token()
        assert token is not None  # require_player had one
        try:
            await players.revoke_token(info.context.deps, player.id, token)
        except DomainError as e:
            return Refusal.of(e)
        finally:
            info.context.forget(token)
        return TokenRevoked(player=Player.from_domain(player))

    @strawberry.mutation(description="A new game in the lobby; you are its host.")
    async def create_game(
        self,
        info: Info,
        input: Annotated[CreateGameInput, strawberry.argument(description="The lobby settings")],
        idempotency_key: Key = None,
    ) -> GameChangeResult:
        async def run(req: Request) -> MutationResult:
            return await games.create_game(info.context.deps, req, input.to_domain())

        args = {"input": strawberry.asdict(input)}
        return await _change(info, "createGame", args, idempotency_key, None, run)

    @strawberry.mutation(description="Take a seat (the lowest free one unless named).")
    async def join_game(
        self,
        info: Info,
        game_id: GameId,
        seat: SeatArg = None,
        idempotency_key: Key = None,
        expected_version: Version = None,
    ) -> GameChangeResult:
        async def run(req: Request) -> MutationResult:
            return await games.join_game(info.context.deps, req, game_id, seat)

        return await _change(
            info,
            "joinGame",
            {"gameId": game_id, "seat": seat},
            idempotency_key,
            expected_version,
            run,
        )

    @strawberry.mutation(
        description="Give up your seat while in the lobby; while the game runs, a bot plays "
        "it for good (`SeatTakenOver` with `left`; it still scores: docs/decisions/0046)."
    )
    async def leave_game(
        self,
        info: Info,
        game_id: GameId,
        idempotency_key: Key = None,
        expected_version: Version = None,
    ) -> GameChangeResult:
        return await _on_game(
            info, "leaveGame", game_id, idempotency_key, expected_version, games.leave_game
        )

    @strawberry.mutation(
        description="Play your seat again after a bot took it over (`SeatReclaimed`), from "
        "the next action; the change ends with the current `ActionRequired` (yours, with a "
        "new deadline, if you must act now). FORBIDDEN when you hold no seat in the game; "
        "ILLEGAL_ACTION when no bot plays it or you left the game."
    )
    async def reclaim_seat(
        self,
        info: Info,
        game_id: GameId,
        idempotency_key: Key = None,
        expected_version: Version = None,
    ) -> GameChangeResult:
        return await _on_game(
            info, "reclaimSeat", game_id, idempotency_key, expected_version, timeouts.reclaim_seat
        )

    @strawberry.mutation(description="The host seats a bot.")
    async def add_bot(
        self,
        info: Info,
        game_id: GameId,
        strategy: Annotated[Strategy, strawberry.argument(description="How the bot plays")],
        seat: Annotated[
            int | None,
            strawberry.argument(description="The seat for the bot; the lowest free one if null"),
        ] = None,
        idempotency_key: Key = None,
        expected_version: Version = None,
    ) -> GameChangeResult:
        async def run(req: Request) -> MutationResult:
            return await games.add_bot(info.context.deps, req, game_id, strategy, seat)

        args = {"gameId": game_id, "strategy": strategy.value, "seat": seat}
        return await _change(info, "addBot", args, idempotency_key, expected_version, run)

    @strawberry.mutation(description="The host starts a full game (R4).")
    async def start_game(
        self,
        info: Info,
        game_id: GameId,
        idempotency_key: Key = None,
        expected_version: Version = None,
    ) -> GameChangeResult:
        return await _on_game(
            info, "startGame", game_id, idempotency_key, expected_version, games.start_game
        )

    @strawberry.mutation(
        description="Quick play (docs/decisions/0048): a seat in the oldest open quick-play game "
        "of this seat count and format (other options at their defaults), or a new one, listed "
        "in the lobby, that you host. It starts itself when full. With `fillWithBotsAfter`, its "
        "empty seats are filled with GREEDY bots that many seconds after (the earliest any of "
        "its players asked for), and it starts. If you already wait in such a game, you get it "
        "back unchanged."
    )
    async def quick_play(
        self,
        info: Info,
        seat_count: Annotated[int, strawberry.argument(description="3 to 8 seats (R2.1)")],
        format: Annotated[
            Format, strawberry.argument(description="SINGLETON or SEALED (R3; not FORMER_SEALED)")
        ] = Format.SINGLETON,
        fill_with_bots_after: Annotated[
            int | None,
            strawberry.argument(
                description="Seconds (0 to 3600) until empty seats are filled with bots; null: "
                "wait for people"
            ),
        ] = None,
        idempotency_key: Key = None,
    ) -> GameChangeResult:
        async def run(req: Request) -> MutationResult:
            return await quick_plays.quick_play(
                info.context.deps, req, seat_count, format, fill_with_bots_after
            )

        args = {"seatCount": seat_count, "format": format.value, "fill": fill_with_bots_after}
        return await _change(info, "quickPlay", args, idempotency_key, None, run)

    @strawberry.mutation(
        description="A finished game's rematch (docs/decisions/0048), for its players: one new "
        "lobby game per finished game, with its options; you host it, seated in your old seat, "
        "its bots in theirs, and each other player's old seat kept for them until they take it "
        "or the game starts. `RematchOffered` is logged on the finished game. Asked again (by "
        "anyone), it returns the same game, unchanged."
    )
    async def rematch(
        self, info: Info, game_id: GameId, idempotency_key: Key = None
    ) -> GameChangeResult:
        async def run(req: Request) -> MutationResult:
            return await rematches.rematch(info.context.deps, req, game_id)

        return await _change(info, "rematch", {"gameId": game_id}, idempotency_key, None, run)

    @strawberry.mutation(description="R5.1: a message to another seat, through the Rat.")
    async def send_message(
        self,
        info: Info,
        game_id: GameId,
        to: Annotated[int, strawberry.argument(description="The recipient's seat")],
        text: Annotated[str, strawberry.argument(description="1 to 280 characters (R5.1)")],
        idempotency_key: Key = None,
        expected_version: Version = None,
    ) -> GameChangeResult:
        return await _act(
            info,
            "sendMessage",
            game_id,
            {"to": to, "text": text},
            idempotency_key,
            expected_version,
            lambda: SendMessage(to, text),
        )

    @strawberry.mutation(description="R5.2: the Rat delivers a pending message.")
    async def deliver_message(
        self,
        info: Info,
        game_id: GameId,
        message_id: MessageId,
        idempotency_key: Key = None,
        expected_version: Version = None,
    ) -> GameChangeResult:
        return await _act(
            info,
            "deliverMessage",
            game_id,
            {"messageId": message_id},
            idempotency_key,
            expected_version,
            lambda: DeliverMessage(str(message_id)),
        )

    @strawberry.mutation(description="R5.2: the Rat declines a pending message.")
    async def decline_message(
        self,
        info: Info,
        game_id: GameId,
        message_id: MessageId,
        idempotency_key: Key = None,
        expected_version: Version = None,
    ) -> GameChangeResult:
        return await _act(
            info,
            "declineMessage",
            game_id,
            {"messageId": message_id},
            idempotency_key,
            expected_version,
            lambda: DeclineMessage(str(message_id)),
        )

    @strawberry.mutation(description="R6: lead or follow with a card from your hand.")
    async def play_card(
        self,
        info: Info,
        game_id: GameId,
        card: CardArg,
        idempotency_key: Key = None,
        expected_version: Version = None,
    ) -> GameChangeResult:
        return await _act(
            info,
            "playCard",
            game_id,
            {"card": card},
            idempotency_key,
            expected_version,
            lambda: PlayCard(card_of(card)),
        )

    @strawberry.mutation(name="pass", description="R7.7: pass, holding no Sassy card under Sassy.")
    async def pass_(
        self,
        info: Info,
        game_id: GameId,
        idempotency_key: Key = None,
        expected_version: Version = None,
    ) -> GameChangeResult:
        return await _act(info, "pass", game_id, {}, idempotency_key, expected_version, Pass)

    @strawberry.mutation(description="R7.7: discard one card, then play any other.")
    async def discard_and_play(
        self,
        info: Info,
        game_id: GameId,
        discard: Annotated[
            strawberry.ID, strawberry.argument(description="The card to discard, face up")
        ],
        card: Annotated[
            strawberry.ID, strawberry.argument(description="The card to play, any other card")
        ],
        idempotency_key: Key = None,
        expected_version: Version = None,
    ) -> GameChangeResult:
        return await _act(
            info,
            "discardAndPlay",
            game_id,
            {"discard": discard, "card": card},
            idempotency_key,
            expected_version,
            lambda: DiscardAndPlay(card_of(discard), card_of(card)),
        )

    @strawberry.mutation(description="R7: answer your pending ability decision.")
    async def resolve_decision(
        self,
        info: Info,
        game_id: GameId,
        decision: Annotated[DecisionInput, strawberry.argument(description="Your answer")],
        idempotency_key: Key = None,
        expected_version: Version = None,
    ) -> GameChangeResult:
        return await _act(
            info,
            "resolveDecision",
            game_id,
            {"decision": decision.fingerprint()},
            idempotency_key,
            expected_version,
            decision.to_domain,
        )

    @strawberry.mutation(description="R1.6: open a booster pack into your collection.")
    async def open_booster_pack(self, info: Info, idempotency_key: Key = None) -> BoosterResult:
        player = await info.context.require_player()
        try:
            check_key(idempotency_key)
            record = await boosters.open_booster_pack(
                info.context.deps, Request(player.id, "openBoosterPack", {}, idempotency_key)
            )
        except DomainError as e:
            return Refusal.of(e)
        return BoosterPack.from_domain(record)
