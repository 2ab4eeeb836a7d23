// graphql-ws (graphql-transport-ws) as a Node client would use it: players
// made over the socket, a sealed game of three people and a bot, each seat
// playing from its own subscription alone (ActionRequired), and a
// spectator. Checks gapless streams, R11 (no hand but one's own, face-down
// cards hidden from the others), and that each stream completes after
// GameEnded. Prints a JSON summary.
import { print } from "graphql";
import type { TypedDocumentNode } from "@graphql-typed-document-node/core";
import { createClient, type Client } from "graphql-ws";
import WebSocket from "ws";
import {
  AddBotDocument,
  CreateGameDocument,
  CreatePlayerDocument,
  GameEventsDocument,
  JoinGameDocument,
  StartGameDocument,
  type GameEventsSubscription,
} from "../generated/graphql.js";
import { check, env } from "./check.js";
import { changed, sendMove, type Send } from "./ops.js";
import { moveFor } from "./policy.js";

const WS_URL = env("MMK_WS_URL");
type Event = GameEventsSubscription["gameEvents"];

function connect(token?: string): Client {
  return createClient({
    url: WS_URL,
    webSocketImpl: WebSocket,
    connectionParams: token ? { authorization: `Bearer ${token}` } : {},
    lazy: true,
    retryAttempts: 0,
  });
}

function sender(client: Client): Send {
  return async (document, variables) => {
    const result = await client.iterate({ query: print(document), variables }).next();
    check(!result.done, "no result");
    check(!result.value.errors, JSON.stringify(result.value.errors));
    check(result.value.data, "no data");
    return result.value.data as never;
  };
}

async function newPlayer(send: Send, name: string): Promise<string> {
  const made = (await send(CreatePlayerDocument, { name })).createPlayer;
  check(made.__typename === "NewPlayer", JSON.stringify(made));
  return made.token;
}

interface Watched {
  seat: number | null;
  events: number;
  moves: number;
  ownHands: number;
  ended: Extract<Event, { __typename: "GameEnded" }> | null;
}

/** Reads one audience's stream to its end; a seat answers what it is asked. */
async function watch(
  client: Client,
  gameId: string,
  seat: number | null,
  document: TypedDocumentNode<GameEventsSubscription, { gameId: string; afterSeq: number }>,
): Promise<Watched> {
  const send = sender(client);
  const out: Watched = { seat, events: 0, moves: 0, ownHands: 0, ended: null };
  let last = 0;
  for await (const result of client.iterate({ query: print(document), variables: { gameId, afterSeq: 0 } })) {
    check(!result.errors, JSON.stringify(result.errors));
    const event = (result.data as GameEventsSubscription).gameEvents;
    check(event.seq === last + 1, `seat ${seat}: seq ${event.seq} after ${last}`);
    check(out.ended === null, "an event after GameEnded");
    last = event.seq;
    out.events += 1;
    switch (event.__typename) {
      case "GameStarted":
        check((event.hand !== null) === (seat !== null), `seat ${seat} sees hand ${JSON.stringify(event.hand)}`);
        break;
      case "CardPlayed":
        if (event.faceDown && event.seat !== seat) check(event.card === null, "a face-down card shows");
        if (!event.faceDown) check(event.card !== null, "a face-up card is hidden");
        break;
      case "ActionRequired":
        if (event.seat !== seat) {
          check(event.hand === null && event.choices === null, `seat ${seat} sees seat ${event.seat}'s hand`);
          break;
        }
        check(event.hand !== null && event.choices !== null, "no hand or choices for the seat to act");
        out.ownHands += 1;
        changed(await sendMove(send, gameId, moveFor(event.choices)));
        out.moves += 1;
        break;
      case "GameEnded":
        out.ended = event;
        break;
      default:
        break;
    }
  }
  check(out.ended !== null, `seat ${seat}: the stream completed before GameEnded`);
  return out;
}

async function main(): Promise<void> {
  const anonymous = connect();
  const anon = sender(anonymous);
  const tokens = [await newPlayer(anon, "ada"), await newPlayer(anon, "bo"), await newPlayer(anon, "cy")];
  const clients = tokens.map((t) => connect(t));
  const sends = clients.map(sender);
  const [host, second, third] = sends as [Send, Send, Send];
  const created = changed(
    (await host(CreateGameDocument, { input: { seatCount: 4, format: "SEALED", seed: "node-graphql-ws", practice: true } })).createGame,
  );
  const gameId = created.gameId;
  changed((await second(JoinGameDocument, { gameId })).joinGame);
  changed((await third(JoinGameDocument, { gameId })).joinGame);
  changed((await host(AddBotDocument, { gameId, strategy: "GREEDY" })).addBot);
  const watching = [
    ...clients.map((c, seat) => watch(c, gameId, seat, GameEventsDocument)),
    watch(anonymous, gameId, null, GameEventsDocument),
  ];
  changed((await host(StartGameDocument, { gameId })).startGame);
  const seen = await Promise.all(watching);
  const ends = new Set(seen.map((w) => JSON.stringify(w.ended)));
  check(ends.size === 1, `the streams disagree on the end: ${[...ends].join(" / ")}`);
  check(new Set(seen.map((w) => w.events)).size === 1, "the streams have different lengths");
  await Promise.all([anonymous, ...clients].map((c) => c.dispose()));
  console.log(JSON.stringify({ gameId, watchers: seen }));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
