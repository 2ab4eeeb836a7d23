"""Every game mutation, declared once (api/graphql/declared.py): its
arguments are its parameters, its body says what it does; the key, the
version, the refusal and the idempotency fingerprint come with the
declaration."""

from __future__ import annotations

from typing import Annotated

import strawberry

from api.graphql.declared import Run, action, change
from api.graphql.inputs import CreateGameInput, DecisionInput, card_of
from domain.bots.strategy import Strategy
from domain.game.commands import (
    Command,
    DeclineMessage,
    DeliverMessage,
    DiscardAndPlay,
    Pass,
    PlayCard,
    SendMessage,
)
from domain.game.options import Format, Pace
from domain.services import games, invitations, timeouts
from domain.services import quick_play as quick_plays
from domain.services import rematch as rematches

GameId = Annotated[strawberry.ID, strawberry.argument(description="The game's id")]
SeatArg = Annotated[
    int | None, strawberry.argument(description="The seat to take; the lowest free one if null")
]
CardArg = Annotated[strawberry.ID, strawberry.argument(description="A card id from your hand")]
MessageId = Annotated[
    strawberry.ID,
    strawberry.argument(description="The pending message's `messageId` (not its `id`)"),
]


# ---------------------------------------------------------------- the lobby
@change("A new game in the lobby; you are its host.", versioned=False)
def create_game(
    input: Annotated[CreateGameInput, strawberry.argument(description="The lobby settings")],
) -> Run:
    return lambda deps, req: games.create_game(deps, req, input.to_domain())


@change("Take a seat (the lowest free one unless named).")
def join_game(game_id: GameId, seat: SeatArg = None) -> Run:
    return lambda deps, req: games.join_game(deps, req, game_id, seat)


# ---------------------------------------------------------------- invitations
PlayerIds = Annotated[
    list[strawberry.ID], strawberry.argument(description="1 to 20 player ids, each once")
]


@change(
    "Take a seat in the game whose invite code this is (any case; spaces and dashes are "
    "ignored): an unlisted or private game's way in besides an invitation. NOT_FOUND when no "
    "game has the code (rotated or cleared since: ask its host for the current one).",
    versioned=False,
)
def join_by_invite_code(
    invite_code: Annotated[str, strawberry.argument(description="The game's `inviteCode`")],
    seat: SeatArg = None,
) -> Run:
    return lambda deps, req: invitations.join_by_invite_code(deps, req, invite_code, seat)


@change(
    "Take a seat in a game you are invited to (`me.invitations`); NOT_FOUND without an "
    "invitation. `joinGame` does the same for an invited player."
)
def accept_invitation(game_id: GameId, seat: SeatArg = None) -> Run:
    return lambda deps, req: invitations.accept_invitation(deps, req, game_id, seat)


@change("Decline an invitation (`InvitationDeclined`): a private game is then out of your sight.")
def decline_invitation(game_id: GameId) -> Run:
    return lambda deps, req: invitations.decline_invitation(deps, req, game_id)


@change(
    "The host invites players to a game not yet started (`PlayersInvited`; each finds it in "
    "`me.invitations`, and may see it even if private). A player already invited stays so; "
    "a player seated, unknown, or named twice is BAD_INPUT (nobody is invited); over the cap "
    "on invitations out at once (`MMK_MAX_PENDING_INVITATIONS`), ILLEGAL_ACTION."
)
def invite_players(game_id: GameId, player_ids: PlayerIds) -> Run:
    return lambda deps, req: invitations.invite_players(
        deps, req, game_id, [str(p) for p in player_ids]
    )


@change("The host withdraws an invitation not yet answered (`InvitationCancelled`).")
def cancel_invitation(
    game_id: GameId,
    player_id: Annotated[strawberry.ID, strawberry.argument(description="The invited player")],
) -> Run:
    return lambda deps, req: invitations.cancel_invitation(deps, req, game_id, player_id)


@change(
    "The host replaces the invite code of an unlisted or private game (`InviteCodeChanged`; "
    "the new one is in `Game.inviteCode`): the old code joins no more."
)
def rotate_invite_code(game_id: GameId) -> Run:
    return lambda deps, req: invitations.rotate_invite_code(deps, req, game_id)


@change(
    "The host removes the invite code (`InviteCodeChanged` with `cleared`): from now on only "
    "invitations seat players. `rotateInviteCode` makes a new one."
)
def clear_invite_code(game_id: GameId) -> Run:
    return lambda deps, req: invitations.clear_invite_code(deps, req, game_id)


@change(
    "Give up your seat while in the lobby; while the game runs, a bot plays "
    "it for good (`SeatTakenOver` with `left`; it still scores: docs/decisions/0046)."
)
def leave_game(game_id: GameId) -> Run:
    return lambda deps, req: games.leave_game(deps, req, game_id)


@change(
    "Play your seat again after a bot took it over (`SeatReclaimed`), from "
    "the next action; the change ends with the current `ActionRequired` (yours, with a "
    "new deadline, if you must act now). FORBIDDEN when you hold no seat in the game; "
    "ILLEGAL_ACTION when no bot plays it or you left the game."
)
def reclaim_seat(game_id: GameId) -> Run:
    return lambda deps, req: timeouts.reclaim_seat(deps, req, game_id)


@change("The host seats a bot.")
def add_bot(
    game_id: GameId,
    strategy: Annotated[Strategy, strawberry.argument(description="How the bot plays")],
    seat: Annotated[
        int | None,
        strawberry.argument(description="The seat for the bot; the lowest free one if null"),
    ] = None,
) -> Run:
    return lambda deps, req: games.add_bot(deps, req, game_id, strategy, seat)


@change("The host starts a full game (R4).")
def start_game(game_id: GameId) -> Run:
    return lambda deps, req: games.start_game(deps, req, game_id)


@change(
    "Quick play (docs/decisions/0048): a seat in the oldest open quick-play game "
    "of this seat count and format (other options at their defaults), or a new one, listed "
    "in the lobby, that you host. It starts itself when full. With `fillWithBotsAfter`, its "
    "empty seats are filled with GREEDY bots that many seconds after (the earliest any of "
    "its players asked for), and it starts. If you already wait in such a game, you get it "
    "back unchanged.",
    versioned=False,
)
def quick_play(
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
    pace: Annotated[
        Pace,
        strawberry.argument(
            description="LIVE (untimed), or CORRESPONDENCE: a day a turn and two days of bank, "
            "matched only with correspondence players"
        ),
    ] = Pace.LIVE,
    rated: Annotated[
        bool,
        strawberry.argument(
            description="A rated game (docs/ratings.md): matched with players rated near "
            "you, the range widening the longer a game waits; its bots are of the strategy "
            "rated nearest its people, seated once two people wait"
        ),
    ] = False,
) -> Run:
    return lambda deps, req: quick_plays.quick_play(
        deps, req, seat_count, format, fill_with_bots_after, pace, rated
    )


@change(
    "A finished game's rematch (docs/decisions/0048), for its players: one new "
    "lobby game per finished game, with its options; you host it, seated in your old seat, "
    "its bots in theirs, and each other player's old seat kept for them until they take it "
    "or the game starts. `RematchOffered` is logged on the finished game. Asked again (by "
    "anyone), it returns the same game, unchanged.",
    versioned=False,
)
def rematch(game_id: GameId) -> Run:
    return lambda deps, req: rematches.rematch(deps, req, game_id)


# ---------------------------------------------------------------- a seat's moves
@action("R5.1: a message to another seat, through the Rat.")
def send_message(
    game_id: GameId,
    to: Annotated[int, strawberry.argument(description="The recipient's seat")],
    text: Annotated[str, strawberry.argument(description="1 to 280 characters (R5.1)")],
) -> Command:
    return SendMessage(to, text)


@action("R5.2: the Rat delivers a pending message.")
def deliver_message(game_id: GameId, message_id: MessageId) -> Command:
    return DeliverMessage(str(message_id))


@action("R5.2: the Rat declines a pending message.")
def decline_message(game_id: GameId, message_id: MessageId) -> Command:
    return DeclineMessage(str(message_id))


@action("R6: lead or follow with a card from your hand.")
def play_card(game_id: GameId, card: CardArg) -> Command:
    return PlayCard(card_of(card))


@action("R7.7: pass, holding no Sassy card under Sassy.", name="pass")
def pass_(game_id: GameId) -> Command:
    return Pass()


@action("R7.7: discard one card, then play any other.")
def discard_and_play(
    game_id: GameId,
    discard: Annotated[
        strawberry.ID, strawberry.argument(description="The card to discard, face up")
    ],
    card: Annotated[
        strawberry.ID, strawberry.argument(description="The card to play, any other card")
    ],
) -> Command:
    return DiscardAndPlay(card_of(discard), card_of(card))


@action("R7: answer your pending ability decision.")
def resolve_decision(
    game_id: GameId,
    decision: Annotated[DecisionInput, strawberry.argument(description="Your answer")],
) -> Command:
    return decision.to_domain()
