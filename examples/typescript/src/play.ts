// Plays one game of Muffin's Magical Kingdom against bots, from the game's
// event stream alone:
//
//   1. createPlayer: a guest and its token (HTTP);
//   2. quickPlay: a seat in a quick-play game whose empty seats bots fill;
//   3. gameEvents (graphql-ws, from afterSeq 0): every change that leaves the
//      game waiting ends with an ActionRequired; when it is this player's
//      seat, it carries the hand and the choices, and the player answers
//      with the mutation the choice names (HTTP);
//   4. GameEnded: the result is printed, and the stream completes.
//
//   npm start -- --url http://127.0.0.1:8000/graphql [--name Ann] [--seats 3]
//
// The last line printed is the result as JSON, after "result: ".
import { parseArgs } from "node:util";
import { print } from "graphql";
import type { TypedDocumentNode } from "@graphql-typed-document-node/core";
import { createClient } from "graphql-ws";
import WebSocket from "ws";
import {
  CreatePlayerDocument,
  GameEventsDocument,
  QuickPlayDocument,
  type ChangeFragment,
  type GameEventsSubscription,
} from "../generated/graphql.js";
import { answer, type Send } from "./moves.js";

type GameEvent = GameEventsSubscription["gameEvents"];
type Ended = Extract<GameEvent, { __typename: "GameEnded" }>;

interface GraphQLResponse<TData> {
  data?: TData | null;
  errors?: readonly { message: string; extensions?: { code?: string } }[];
}

/** Queries and mutations over HTTP POST, typed by the generated documents. */
function httpSender(url: string, token?: string): Send {
  return async (document, variables) => {
    const response = await fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      },
      body: JSON.stringify({ query: print(document), variables }),
    });
    const body = (await response.json()) as GraphQLResponse<never>;
    if (body.errors?.length || body.data == null) {
      throw new Error(`${response.status}: ${JSON.stringify(body.errors)}`);
    }
    return body.data;
  };
}

function changed(result: ChangeFragment): Extract<ChangeFragment, { __typename: "GameChange" }> {
  if (result.__typename !== "GameChange") throw new Error(`refused: ${result.code}: ${result.message}`);
  return result;
}

/** The subscription's events, resumable: a reconnect replays from afterSeq 0,
 * and what was seen already is skipped by `seq`. */
async function* events<TVars extends Record<string, unknown>>(
  wsUrl: string,
  token: string,
  document: TypedDocumentNode<GameEventsSubscription, TVars>,
  variables: TVars,
): AsyncGenerator<GameEvent> {
  const client = createClient({
    url: wsUrl,
    webSocketImpl: WebSocket, // Node 22+ has a global WebSocket; Node 20 needs `ws`
    connectionParams: { authorization: `Bearer ${token}` },
    retryAttempts: 3,
  });
  try {
    for await (const result of client.iterate({ query: print(document), variables })) {
      if (result.errors) throw new Error(`the stream ended: ${JSON.stringify(result.errors)}`);
      if (result.data) yield (result.data as GameEventsSubscription).gameEvents;
    }
  } finally {
    await client.dispose();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      url: { type: "string", default: "http://127.0.0.1:8000/graphql" },
      name: { type: "string", default: "typescript-example" },
      seats: { type: "string", default: "3" },
    },
  });
  const url = values.url;
  const wsUrl = url.replace(/^http/, "ws");

  const made = (await httpSender(url)(CreatePlayerDocument, { name: values.name })).createPlayer;
  if (made.__typename !== "NewPlayer") throw new Error(`refused: ${made.code}: ${made.message}`);
  const { token, player } = made;
  console.log(`signed in as ${player.name} (${player.id})`);
  const send = httpSender(url, token);

  const seatCount = Number(values.seats);
  const { gameId } = changed((await send(QuickPlayDocument, { seatCount, fillWithBotsAfter: 0 })).quickPlay);
  console.log(`quick play: game ${gameId}, ${seatCount} seats, bots fill the empty ones`);

  let mySeat: number | null = null;
  let last = 0;
  let moves = 0;
  let ended: Ended | null = null;
  for await (const event of events(wsUrl, token, GameEventsDocument, { gameId, afterSeq: 0 })) {
    if (event.seq <= last) continue; // replayed after a reconnect
    last = event.seq;
    switch (event.__typename) {
      case "SeatTaken":
        if (event.playerId === player.id) mySeat = event.seat;
        console.log(`seat ${event.seat}: ${event.name}${event.playerId === player.id ? " (you)" : ""}`);
        break;
      case "BotSeated":
        console.log(`seat ${event.seat}: a bot`);
        break;
      case "GameStarted":
        console.log(`the game starts; the Rat is seat ${event.ratSeat}; your hand: ${event.hand?.length} cards`);
        break;
      case "TrickWon":
        console.log(`trick ${event.trick} to seat ${event.winner}; scores ${event.scores.join(" ")}`);
        break;
      case "ActionRequired": {
        // Only the seat to act gets its choices; everyone else sees nulls.
        if (event.seat !== mySeat || event.choices === null) break;
        const { said, result } = await answer(send, gameId, event.choices, `${gameId}:${event.seq}`);
        changed(result);
        moves += 1;
        console.log(`you (${event.phase.toLowerCase()}): ${said}`);
        break;
      }
      case "GameEnded":
        ended = event;
        break;
      default:
        break;
    }
  }
  if (ended === null) throw new Error("the stream completed before GameEnded");
  const won = mySeat !== null && ended.winners.includes(mySeat);
  console.log(
    `game over (${ended.termination}): winners ${ended.winners.join(", ")}; scores ${ended.scores.join(" ")}; ` +
      `you (seat ${mySeat}) ${won ? "won" : "did not win"}`,
  );
  const result = {
    gameId,
    seat: mySeat,
    moves,
    events: last,
    termination: ended.termination,
    winners: ended.winners,
    scores: ended.scores,
    won,
  };
  console.log(`result: ${JSON.stringify(result)}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
