// A game's event stream that resumes: the subscription's afterSeq is kept at
// the last event handed on, so that when graphql-ws reconnects (it sends the
// same payload object again) the server replays from right after it: no gap,
// no duplicate. An error (RATE_LIMITED, a dropped slow subscriber) ends the
// operation (unsubscribed here, whether or not the server ended it; an
// event that came with the error is kept); it is started again after a
// pause, from the same point.
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
  const start = () => {
    // This operation's own flag: a restarted one's old operation completes
    // later (its unsubscribe), and must not read as the stream's end.
    let over = false;
    const again = (message: string, seconds: number) => {
      over = true;
      on.problem?.(message);
      timer = window.setTimeout(() => !stopped && start(), Math.max(seconds, 0.5) * 1000);
    };
    const unsubscribe = api.socket().subscribe<{ gameEvents: GameEvent }>(payload, {
      next: ({ data, errors }) => {
        if (over) return;
        // An event that came with errors is still folded.
        const e = data?.gameEvents;
        if (e && e.seq > variables.afterSeq) {
          variables.afterSeq = e.seq;
          on.event(e);
        }
        if (errors?.length) {
          // Stop this operation (the server may not have ended it) before
          // the next one starts from the same point.
          unsubscribe();
          const error = errors[0] as GraphQLError;
          again(error.message, error.extensions?.retryAfter ?? 2);
        }
      },
      error: (error) => {
        if (over) return;
        // The server's refusal (an "error" message: its GraphQL errors), or
        // the socket's failure.
        const first = Array.isArray(error) ? (error[0] as GraphQLError | undefined) : undefined;
        const message = first?.message ?? (error instanceof Error ? error.message : "the stream failed");
        again(message, first?.extensions?.retryAfter ?? 2);
      },
      complete: () => {
        if (!over && !stopped) on.ended?.();
        over = true;
      },
    });
    stop = unsubscribe;
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
