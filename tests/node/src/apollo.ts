// Apollo Client (web) as a Node app would use it, one client (and cache) per
// token: automatic persisted queries (PersistedQueryLink, hashed queries by
// GET), subscriptions over graphql-ws (GraphQLWsLink) for two seats and over
// Apollo's multipart HTTP protocol (HttpLink) for the third seat and a
// spectator, every seat playing from its own stream; then the normalized
// cache with possibleTypes.json and GameEvent keyed by gameId and seq.
// Fails on any Apollo warning. Prints a JSON summary.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { ApolloClient, ApolloLink, HttpLink, InMemoryCache, gql } from "@apollo/client";
import { PersistedQueryLink } from "@apollo/client/link/persisted-queries";
import { GraphQLWsLink } from "@apollo/client/link/subscriptions";
import type { TypedDocumentNode } from "@graphql-typed-document-node/core";
import { OperationTypeNode } from "graphql";
import { createClient } from "graphql-ws";
import WebSocket from "ws";
import {
  CardCatalogDocument,
  CreateGameDocument,
  CreatePlayerDocument,
  GameDocument,
  GameEventsDocument,
  JoinGameDocument,
  StartGameDocument,
  type GameEventsSubscription,
} from "../generated/graphql.js";
import { check, env } from "./check.js";
import { changed, sendMove, type Send } from "./ops.js";
import { moveFor } from "./policy.js";

const HTTP_URL = env("MMK_HTTP_URL");
const WS_URL = env("MMK_WS_URL");
// make schema writes possibleTypes.json beside schema.graphql (MMK_POSSIBLE_TYPES: elsewhere).
const POSSIBLE_TYPES: Record<string, string[]> = JSON.parse(
  readFileSync(process.env.MMK_POSSIBLE_TYPES ?? new URL("../../../../possibleTypes.json", import.meta.url), "utf8"),
);

// Apollo reports cache trouble (data lost on merge, missing fields) on the console.
const warnings: string[] = [];
for (const level of ["warn", "error"] as const) {
  console[level] = (...args: unknown[]) => void warnings.push(`${level}: ${args.map(String).join(" ")}`);
}

interface Sent {
  method: string;
  hashOnly: boolean;
  persisted: boolean;
  status: number;
  notFound: boolean;
}
const sent: Sent[] = [];

const recordingFetch: typeof fetch = async (input, init) => {
  const url = new URL(String(input));
  const method = init?.method ?? "GET";
  let body: Record<string, unknown> = {};
  if (method === "GET") {
    const extensions = url.searchParams.get("extensions");
    body = { query: url.searchParams.get("query"), extensions: extensions ? JSON.parse(extensions) : undefined };
  } else if (typeof init?.body === "string") {
    body = JSON.parse(init.body);
  }
  const response = await fetch(input, init);
  const persisted = body.extensions !== undefined && "persistedQuery" in (body.extensions as object);
  let notFound = false;
  if ((response.headers.get("content-type") ?? "").startsWith("application/json")) {
    const text = await response.clone().text();
    notFound = text.includes("PersistedQueryNotFound");
  }
  sent.push({ method, hashOnly: !body.query, persisted, status: response.status, notFound });
  return response;
};

const sha256 = (text: string): string => createHash("sha256").update(text).digest("hex");

function apollo(token: string | null, subscriptions: "ws" | "multipart"): ApolloClient {
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  const http = new PersistedQueryLink({ sha256, useGETForHashedQueries: true }).concat(
    new HttpLink({ uri: HTTP_URL, fetch: recordingFetch, headers }),
  );
  const ws = new GraphQLWsLink(
    createClient({ url: WS_URL, webSocketImpl: WebSocket, connectionParams: headers, lazy: true, retryAttempts: 0 }),
  );
  const link =
    subscriptions === "ws"
      ? ApolloLink.split((op) => op.operationType === OperationTypeNode.SUBSCRIPTION, ws, http)
      : http;
  return new ApolloClient({
    link,
    cache: new InMemoryCache({
      possibleTypes: POSSIBLE_TYPES,
      typePolicies: { GameEvent: { keyFields: ["gameId", "seq"] } },
    }),
  });
}

function sender(client: ApolloClient): Send {
  return async (document, variables) => {
    const result = await client.mutate({ mutation: document as TypedDocumentNode<unknown, never>, variables: variables as never });
    check(!result.error, String(result.error));
    check(result.data, "no data");
    return result.data as never;
  };
}

type Event = GameEventsSubscription["gameEvents"];

/** One audience's subscription to its end: a seat answers what it is asked. */
function play(client: ApolloClient, gameId: string, seat: number | null): Promise<Event[]> {
  const send = sender(client);
  const events: Event[] = [];
  let turn: Promise<unknown> = Promise.resolve();
  return new Promise((resolve, reject) => {
    const fail = (error: unknown): void => reject(error instanceof Error ? error : new Error(String(error)));
    client.subscribe({ query: GameEventsDocument, variables: { gameId, afterSeq: 0 } }).subscribe({
      next: (result) => {
        if (result.error || !result.data) return fail(result.error ?? "no data");
        const event = result.data.gameEvents;
        check(event.seq === events.length + 1, `seat ${seat}: seq ${event.seq} after ${events.length}`);
        events.push(event);
        if (event.__typename !== "ActionRequired") return;
        check((event.seat === seat) === (event.choices !== null), `seat ${seat}: choices of seat ${event.seat}`);
        if (event.seat === seat && event.choices) {
          const move = moveFor(event.choices);
          turn = turn.then(async () => changed(await sendMove(send, gameId, move))).catch(fail);
        }
      },
      error: fail,
      complete: () => {
        const last = events[events.length - 1];
        if (last?.__typename !== "GameEnded") return fail(`seat ${seat}: completed before GameEnded`);
        turn.then(() => resolve(events), fail);
      },
    });
  });
}

async function main(): Promise<void> {
  const anonymous = apollo(null, "multipart");
  const names = ["ada", "bo", "cy"];
  const tokens: string[] = [];
  for (const name of names) {
    const made = (await sender(anonymous)(CreatePlayerDocument, { name })).createPlayer;
    check(made.__typename === "NewPlayer", JSON.stringify(made));
    tokens.push(made.token);
  }
  // APQ: the first mutation's hash is unknown, Apollo sends the text, then hashes alone.
  const apq = sent.map((s) => [s.method, s.hashOnly, s.notFound]);
  check(
    JSON.stringify(apq) ===
      JSON.stringify([["POST", true, true], ["POST", false, false], ["POST", true, false], ["POST", true, false]]),
    `APQ mutations: ${JSON.stringify(apq)}`,
  );
  const clients = tokens.map((t, seat) => apollo(t, seat < 2 ? "ws" : "multipart"));
  const sends = clients.map(sender);
  const host = sends[0]!;
  const gameId = changed((await host(CreateGameDocument, { input: { seatCount: 3, seed: "node-apollo", practice: true } })).createGame).gameId;
  for (const join of sends.slice(1)) changed((await join(JoinGameDocument, { gameId })).joinGame);
  const streams = [...clients.map((c, seat) => play(c, gameId, seat)), play(anonymous, gameId, null)];
  changed((await host(StartGameDocument, { gameId })).startGame);
  const played = await Promise.all(streams);
  const lengths = new Set(played.map((events) => events.length));
  check(lengths.size === 1, `the streams differ in length: ${[...lengths].join(", ")}`);

  // Hashed queries by GET: the second caller's is one GET of the hash alone.
  const before = sent.length;
  for (const client of clients) {
    const result = await client.query({ query: GameDocument, variables: { id: gameId }, fetchPolicy: "network-only" });
    check(result.data?.game.__typename === "Game", JSON.stringify(result.data));
  }
  const reads = sent.slice(before).map((s) => [s.method, s.hashOnly, s.notFound]);
  check(
    JSON.stringify(reads) ===
      JSON.stringify([["GET", true, true], ["POST", false, false], ["GET", true, false], ["GET", true, false]]),
    `APQ reads: ${JSON.stringify(reads)}`,
  );
  const catalog = await anonymous.query({ query: CardCatalogDocument });
  check((catalog.data?.cardCatalog.length ?? 0) > 100, "the card catalogue");

  // The normalized cache of seat 0: its game, seats and events, keyed.
  const cache = clients[0]!.cache;
  const keys = Object.keys(cache.extract() as Record<string, unknown>);
  const viewer = cache.identify({ __typename: "Viewer", id: `${gameId}:0` });
  for (const key of [`Game:${gameId}`, `Table:${gameId}`, viewer, `TableSeat:${gameId}:2`]) {
    check(key && keys.includes(key), `${key} is not in the cache: ${keys.slice(0, 20).join(" ")}`);
  }
  const eventKeys = keys.filter((k) => /^[A-Za-z]+:\{"gameId":/.test(k));
  check(eventKeys.length === played[0]!.length, `${eventKeys.length} events cached of ${played[0]!.length}`);
  const last = played[0]![played[0]!.length - 1]!;
  const end = cache.readFragment<{ seq: number; winners?: number[] }>({
    id: cache.identify({ __typename: "GameEnded", gameId, seq: last.seq }),
    fragment: gql`
      fragment End on GameEvent {
        seq
        ... on GameEnded {
          winners
        }
      }
    `,
  });
  check(end?.winners !== undefined, `an interface fragment on GameEnded (possibleTypes): ${JSON.stringify(end)}`);
  check(warnings.length === 0, `Apollo warned:\n${warnings.join("\n")}`);
  for (const client of [anonymous, ...clients]) client.stop();
  process.stdout.write(
    JSON.stringify({ gameId, events: played.map((e) => e.length), requests: sent.length, cachedEvents: eventKeys.length }) +
      "\n",
  );
  process.exit(0);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
