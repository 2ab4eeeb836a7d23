// A finished game step by step, every hand shown. The table comes from the
// public log (gameEvents as a spectator); each seat's hand from that seat's
// own projection of each event (gameReplay), folded by the table's reducer.
// gameReplay's pages are small (its price per step counts every audience),
// so the hands load page by page while the replay is already shown, and a
// RATE_LIMITED answer is waited out (retryAfter).
import { useEffect, useMemo, useState } from "preact/hooks";
import { ApiError, api, isRefusal } from "./api";
import { EVENTS_PAGE, REPLAY } from "./documents";
import { fold, initialTable, seatName, type GameEvent, type TableState } from "./model";
import { TableView } from "./table";

interface Step {
  seq: number;
  seats: GameEvent[];
}

type Refused = { code: string; message: string; retryAfter?: number | null };
const pause = (seconds: number) => new Promise((r) => setTimeout(r, Math.max(seconds, 0.2) * 1000));

/** The whole public log, page by page (``page`` gets each); a private
 * game's as the caller sees it. */
async function publicLog(gameId: string, page: (events: GameEvent[]) => void, gone: () => boolean): Promise<void> {
  let after = 0;
  let anonymous = true;
  while (!gone()) {
    let data;
    try {
      data = await api.request<{ gameEvents: { events: GameEvent[]; hasMore: boolean; lastSeq: number } | Refused }>(
        EVENTS_PAGE,
        { game: gameId, afterSeq: after },
        anonymous,
      );
    } catch (e) {
      if (e instanceof ApiError && e.code === "RATE_LIMITED") {
        await pause(e.retryAfter ?? 1);
        continue;
      }
      throw e;
    }
    const got = data.gameEvents;
    if (isRefusal(got)) {
      if (anonymous && got.code === "NOT_FOUND" && api.token) {
        anonymous = false; // a private game: only its players see it
        continue;
      }
      if (got.code === "RATE_LIMITED") {
        await pause(got.retryAfter ?? 1);
        continue;
      }
      throw new Error(got.message);
    }
    page(got.events);
    if (!got.hasMore || got.events.length === 0) return;
    after = got.lastSeq;
  }
}

export function ReplayView({ gameId }: { gameId: string }) {
  const [log, setLog] = useState<GameEvent[] | null>(null);
  const [complete, setComplete] = useState(false);
  const [steps, setSteps] = useState<Step[]>([]);
  const [seatCount, setSeatCount] = useState(0);
  const [error, setError] = useState<string | null>(null);
  const [at, setAt] = useState(0);

  useEffect(() => {
    let gone = false;
    setLog(null);
    setSteps([]);
    setComplete(false);
    setAt(0);
    publicLog(gameId, (events) => setLog((l) => [...(l ?? []), ...events]), () => gone)
      .then(() => !gone && setComplete(true))
      .catch((e: Error) => setError(e.message));
    (async () => {
      let after = 0;
      while (!gone) {
        let page;
        try {
          const data = await api.request<{
            gameReplay: { steps: Step[]; hasMore: boolean; lastSeq: number; seatCount: number } | Refused;
          }>(REPLAY, { game: gameId, afterSeq: after });
          page = data.gameReplay;
        } catch (e) {
          if (e instanceof ApiError && e.code === "RATE_LIMITED") {
            await pause(e.retryAfter ?? 1);
            continue;
          }
          throw e;
        }
        if (isRefusal(page)) {
          if (page.code === "RATE_LIMITED") {
            await pause(page.retryAfter ?? 1);
            continue;
          }
          throw new Error(page.message);
        }
        if (gone) return;
        const got = page.steps;
        setSeatCount(page.seatCount);
        setSteps((s) => [...s, ...got]);
        if (!page.hasMore || got.length === 0) return;
        after = page.lastSeq;
      }
    })().catch((e: Error) => !gone && setError(`The hands could not be loaded: ${e.message}`));
    return () => {
      gone = true;
    };
  }, [gameId]);

  // The public table after each event: tables[i] after the i-th.
  const tables = useMemo(() => {
    if (!log) return [];
    const count = Math.max(seatCount, ...log.map((e) => (e.__typename === "GameCreated" ? Number(e["seatCount"]) : 0)));
    let t = initialTable(count, null);
    const out = [t];
    for (const e of log) {
      t = fold(t, e);
      out.push(t);
    }
    return out;
  }, [log, seatCount]);
  // Each seat's own state after each loaded step (the same reducer).
  const seatStates = useMemo(() => {
    if (!seatCount) return [];
    let current = Array.from({ length: seatCount }, (_, i) => initialTable(seatCount, i));
    const out = [current];
    for (const step of steps) {
      current = current.map((s, i) => {
        const e = step.seats[i];
        return e ? fold(s, e) : s;
      });
      out.push(current);
    }
    return out;
  }, [steps, seatCount]);

  if (error && !log) return <p role="alert">{error}</p>;
  if (!log) return <p aria-busy="true">Loading the replay...</p>;
  const table = tables[at] ?? tables[tables.length - 1];
  if (!table) return <p>Nothing to replay.</p>;
  const hands = seatStates[at];
  const shown: TableState = {
    ...table,
    seats: table.seats.map((s, i) => ({ ...s, hand: hands?.[i]?.seats[i]?.hand ?? null })),
  };
  const event = log[at - 1];
  const total = log.length;
  return (
    <section class="replay" aria-label="Replay">
      <h1 tabIndex={-1}>
        Replay <code>{gameId.slice(0, 8)}</code>
      </h1>
      {error && <p role="alert">{error}</p>}
      <div class="stepper" role="group" aria-label="Steps">
        <button type="button" onClick={() => setAt(0)} disabled={at === 0}>
          Start
        </button>
        <button type="button" onClick={() => setAt(Math.max(0, at - 1))} disabled={at === 0}>
          Back
        </button>
        <button type="button" onClick={() => setAt(Math.min(total, at + 1))} disabled={at === total}>
          Next
        </button>
        <button type="button" onClick={() => setAt(total)} disabled={at === total}>
          End
        </button>
        <label>
          Step{" "}
          <input type="range" min={0} max={total} value={at} onInput={(e) => setAt(Number((e.target as HTMLInputElement).value))} />
        </label>
        <span data-testid="replay-step" aria-live="polite">
          step {at} of {total}
          {complete ? "" : " loaded so far"}
          {event && `: #${event.seq} ${event.__typename}`}
        </span>
      </div>
      <p class="stats" data-testid="hands-loaded">
        {steps.length < total ? `Hands loaded for ${steps.length} of ${total} steps.` : "Every hand loaded."}
      </p>
      <TableView state={shown} showAllHands />
      {event && (
        <p class="stats">
          Last: {event.__typename}
          {typeof event["seat"] === "number" ? ` by ${seatName(shown, event["seat"])}` : ""}
        </p>
      )}
    </section>
  );
}
