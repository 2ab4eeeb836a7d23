// A game's event stream that resumes: the subscription's afterSeq is kept at
// the last event handed on, so that when graphql-ws reconnects (it sends the
// same payload object again) the server replays from right after it: no gap,
// no duplicate. An error (RATE_LIMITED, a dropped slow subscriber) ends the
// operation; it is started again after a pause, from the same point.
import { api, type GraphQLError } from "./api";
import { PRESENCE, SUBSCRIBE_EVENTS } from "./documents";
import type { GameEvent } from "./model";

export interface StreamHandlers {
  event: (e: GameEvent) => void;
  ended?: () => void;
  problem?: (message: string) => void;
}

export function followGame(
  gameId: string,
  afterSeq: number,
  awaitRematch: boolean,
  on: StreamHandlers,
): () => void {
  const variables = { game: gameId, afterSeq, awaitRematch };
  const payload = { query: SUBSCRIBE_EVENTS, variables, operationName: "Events" };
  let stop: (() => void) | null = null;
  let stopped = false;
  let timer: number | undefined;
  let failed = false;
  const start = () => {
    failed = false;
    stop = api.socket().subscribe<{ gameEvents: GameEvent }>(payload, {
      next: ({ data, errors }) => {
        if (errors?.length) {
          failed = true;
          const error = errors[0] as GraphQLError;
          on.problem?.(error.message);
          const wait = error.extensions?.retryAfter ?? 2;
          timer = window.setTimeout(() => !stopped && start(), Math.max(wait, 0.5) * 1000);
          return;
        }
        const e = data?.gameEvents;
        if (!e || e.seq <= variables.afterSeq) return; // already folded
        variables.afterSeq = e.seq;
        on.event(e);
      },
      error: (error) => {
        failed = true;
        on.problem?.(error instanceof Error ? error.message : "the stream failed");
        timer = window.setTimeout(() => !stopped && start(), 2_000);
      },
      complete: () => {
        if (!failed && !stopped) on.ended?.();
      },
    });
  };
  start();
  return () => {
    stopped = true;
    clearTimeout(timer);
    stop?.();
  };
}

export function followPresence(gameId: string, on: (seat: number, connected: boolean) => void): () => void {
  return api.socket().subscribe<{ seatPresence: { seat: number; connected: boolean } }>(
    { query: PRESENCE, variables: { game: gameId }, operationName: "Presence" },
    {
      next: ({ data }) => data && on(data.seatPresence.seat, data.seatPresence.connected),
      error: () => undefined,
      complete: () => undefined,
    },
  );
}
