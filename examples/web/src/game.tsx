// A game's page: its lobby (seats, bots, start, invitations), the live table
// for a seated player (controls from ActionRequired) or a spectator, clocks,
// presence, takeovers, the end and the rematch, and the debug panel.
import { useEffect, useRef, useState } from "preact/hooks";
import { ApiError, api, isRefusal, newKey, type Link, type Refusal } from "./api";
import { GAME, GAME_CLOCKS, MUTATIONS, type MutationName } from "./documents";
import { fold, initialTable, type GameEvent, type TableState } from "./model";
import { followGame, followPresence } from "./stream";
import { Controls, DebugPanel, HandView, TableView } from "./table";
import { go } from "./route";

interface SeatSlot {
  seat: number;
  playerId: string | null;
  playerName: string | null;
  bot: string | null;
  bankSeconds: number | null;
  left: boolean;
  reservedFor: string | null;
}

interface GameInfo {
  id: string;
  status: string;
  hostId: string;
  seatCount: number;
  practice: boolean;
  rated: boolean;
  visibility: string;
  inviteCode: string | null;
  rematchId: string | null;
  options: { format: string; turnSeconds: number; bankSeconds: number; pace: string };
  seats: SeatSlot[];
  viewer: { seat: number } | null;
  table: { seats: { seat: number; connected: boolean | null }[] } | null;
}

/** Runs one game mutation; a refusal is thrown with its message. A
 * RATE_LIMITED answer is retried after its retryAfter (a few times, with
 * the same idempotency key, so that it is applied once at most). */
export async function mutate(name: MutationName, variables: Record<string, unknown>): Promise<{ gameId: string }> {
  const key = newKey();
  let data: Record<string, unknown>;
  for (let attempt = 1; ; attempt++) {
    try {
      data = await api.request<Record<string, unknown>>(MUTATIONS[name], { key, ...variables });
      break;
    } catch (e) {
      const wait = e instanceof ApiError && e.code === "RATE_LIMITED" ? (e.retryAfter ?? 1) : null;
      if (wait === null || wait > 10 || attempt >= 5) throw e;
      await new Promise((r) => setTimeout(r, Math.max(wait, 0.05) * 1000));
    }
  }
  const result = data[name] as { gameId: string } | Refusal;
  if (isRefusal(result)) throw new Error(`${result.code}: ${result.message}`);
  return result;
}

export function GameView({
  gameId,
  meId,
  link,
  embedded = false,
}: {
  gameId: string;
  meId: string | null;
  link: Link;
  embedded?: boolean; // inside another page (Watch): its heading is an h2
}) {
  const Heading = embedded ? "h2" : "h1";
  const [info, setInfo] = useState<GameInfo | null>(null);
  const [state, setState] = useState<TableState | null>(null);
  const [events, setEvents] = useState<GameEvent[]>([]);
  const [presence, setPresence] = useState<Record<number, boolean>>({});
  const [banks, setBanks] = useState<Record<number, number | null>>({});
  const [offset, setOffset] = useState(0);
  const [error, setError] = useState<string | null>(null);
  const [streamNote, setStreamNote] = useState<string | null>(null);
  const [reload, setReload] = useState(0);
  const moveRef = useRef<number>(0);

  useEffect(() => {
    const stops: (() => void)[] = [];
    let gone = false;
    setState(null);
    setEvents([]);
    setError(null);
    api
      .request<{ serverTime: string; game: GameInfo | { code: string; message: string } }>(GAME, { game: gameId })
      .then((data) => {
        if (gone) return;
        if (isRefusal(data.game)) {
          setError(data.game.message);
          return;
        }
        const game = data.game;
        setOffset(Date.parse(data.serverTime) - Date.now());
        setInfo(game);
        // Before the start a seated player has no viewer yet: find the seat.
        const mine = game.viewer?.seat ?? game.seats.find((s) => meId !== null && s.playerId === meId)?.seat ?? null;
        const first = initialTable(game.seatCount, mine);
        for (const s of game.seats) {
          const seat = first.seats[s.seat];
          if (seat) {
            seat.name = s.playerName ?? "";
            seat.bot = s.bot;
          }
        }
        setState(first);
        const connected: Record<number, boolean> = {};
        for (const s of game.table?.seats ?? []) if (s.connected !== null) connected[s.seat] = s.connected;
        setPresence(connected);
        const seated = mine !== null;
        stops.push(
          followGame(gameId, 0, seated, {
            event: (e) => {
              setEvents((list) => [...list, e]);
              setState((s) => (s ? fold(s, e) : s));
            },
            ended: () => setStreamNote("The stream has ended."),
            problem: (message) => setStreamNote(`The stream stopped (${message}); resuming.`),
          }),
        );
        stops.push(followPresence(gameId, (seat, on) => setPresence((p) => ({ ...p, [seat]: on }))));
      })
      .catch((e: Error) => setError(e.message));
    return () => {
      gone = true;
      for (const stop of stops) stop();
    };
  }, [gameId, meId, reload]);

  const action = state?.action ?? null;
  const viewer = state?.viewer ?? null;
  const myMove = action !== null && viewer !== null && action.seat === viewer && action.choices !== null && state?.status === "RUNNING";

  // Clocks: the banks after every wait (timed games only).
  useEffect(() => {
    if (!info || (info.options.turnSeconds === 0 && info.options.bankSeconds === 0)) return;
    api
      .request<{ serverTime: string; game: { seats: SeatSlot[] } | { code: string } }>(GAME_CLOCKS, { game: gameId })
      .then((data) => {
        setOffset(Date.parse(data.serverTime) - Date.now());
        if (!isRefusal(data.game)) setBanks(Object.fromEntries(data.game.seats.map((s) => [s.seat, s.bankSeconds])));
      })
      .catch(() => undefined);
  }, [info, gameId, action?.seat, action?.deadline]);

  // A new move of mine: focus its controls' heading (keyboard players go on
  // with Tab), unless the player is typing somewhere.
  useEffect(() => {
    if (!myMove || !action) return;
    if (moveRef.current === action.seq) return;
    moveRef.current = action.seq;
    const active = document.activeElement;
    const idle = !active || active === document.body || !document.body.contains(active) || active.matches("h1");
    if (idle || active.closest(".controls")) {
      document.getElementById("your-move")?.focus();
    }
  }, [myMove, action?.seq]);

  // A move sent: the controls stay disabled until it is answered and, once
  // accepted, until its events arrive (every change ends with the next
  // ActionRequired), so a second press never sends a stale move.
  const [sentAt, setSentAt] = useState<number | null>(null);
  const act = async (name: MutationName, variables: Record<string, unknown>) => {
    setError(null);
    setSentAt(state?.lastSeq ?? 0);
    try {
      const result = await mutate(name, { game: gameId, ...variables });
      if (name === "rematch" && result.gameId !== gameId) go(`/game/${result.gameId}`);
    } catch (e) {
      setSentAt(null);
      setError((e as Error).message);
    }
  };
  const waiting = sentAt !== null && (state?.lastSeq ?? 0) <= sentAt;

  if (!state || !info) {
    return (
      <section aria-busy="true">
        <h1 tabIndex={-1}>Game</h1>
        {error ? <p role="alert">{error}</p> : <p>Loading the game...</p>}
      </section>
    );
  }
  const me = viewer !== null ? state.seats[viewer] : null;
  const isHost = meId !== null && meId === info.hostId;
  const role = viewer !== null ? `you sit in seat ${viewer}` : "you are watching";
  return (
    <section class="game" aria-label="Game">
      <Heading tabIndex={-1}>
        Game <code>{gameId.slice(0, 8)}</code> <span class="sub">({role}{info.practice ? ", practice" : ""})</span>
      </Heading>
      <p class="status" role="status" data-status={state.status}>
        {state.status === "LOBBY" && "Waiting for players."}
        {state.status === "RUNNING" && (myMove ? "Your turn." : "Playing.")}
        {state.status === "FINISHED" && "Finished."}
        {state.status === "ABANDONED" && "Abandoned: nobody was left to play it (no replay, no rematch)."}
        {streamNote && ` ${streamNote}`}
      </p>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {state.status === "LOBBY" && (
        <LobbyPanel info={info} state={state} isHost={isHost} seated={viewer !== null} act={act} refresh={() => setReload((n) => n + 1)} />
      )}
      {myMove && action?.choices && <Controls choices={action.choices} state={state} act={act} busy={waiting} />}
      {me?.takenOver === "RECLAIMABLE" && !myMove && (
        <p>
          A bot plays your seat.{" "}
          <button type="button" onClick={() => void act("reclaimSeat", {})}>
            Take my seat back
          </button>
        </p>
      )}
      {me?.hand && <HandView cards={me.hand} label="Your hand" />}
      {state.peek && <HandView cards={state.peek.cards} label="Cards you may look at" />}
      <TableView state={state} presence={presence} banks={banks} offsetMs={offset} />
      {/* Only a game the rules ended has a replay and a rematch: the server
          refuses both for an abandoned one. */}
      {state.status === "FINISHED" && (
        <section class="after" aria-label="After the game">
          {viewer !== null &&
            (state.rematchId ? (
              <button
                type="button"
                onClick={() => void mutate("joinGame", { game: state.rematchId }).catch(() => undefined).then(() => go(`/game/${state.rematchId}`))}
              >
                Join the rematch
              </button>
            ) : (
              <button type="button" onClick={() => void act("rematch", {})}>
                Rematch
              </button>
            ))}{" "}
          <a href={`#/replay/${gameId}`}>Watch the replay</a>
        </section>
      )}
      {viewer !== null && state.status === "RUNNING" && (
        <details class="leave">
          <summary>Leave the game</summary>
          <p>A bot plays your seat for good.</p>
          <button type="button" onClick={() => void act("leaveGame", {})}>
            Leave for good
          </button>
        </details>
      )}
      <DebugPanel events={events} lastSeq={state.lastSeq} link={link} />
    </section>
  );
}

function LobbyPanel({
  info,
  state,
  isHost,
  seated,
  act,
  refresh,
}: {
  info: GameInfo;
  state: TableState;
  isHost: boolean;
  seated: boolean;
  act: (name: MutationName, variables: Record<string, unknown>) => Promise<void>;
  refresh: () => void;
}) {
  const [strategy, setStrategy] = useState("GREEDY");
  const [invitee, setInvitee] = useState("");
  const taken = state.seats.filter((s) => s.name || s.bot).length;
  return (
    <section class="lobby-panel" aria-label="Before the start">
      <p>
        {taken} of {info.seatCount} seats taken.
        {info.inviteCode && (
          <>
            {" "}
            Invite code: <code data-testid="invite-code">{info.inviteCode}</code>
          </>
        )}
      </p>
      {!seated && (
        <button type="button" onClick={() => void act("joinGame", {}).then(refresh)}>
          Join this game
        </button>
      )}
      {isHost && (
        <div class="host">
          <label>
            Bot{" "}
            <select value={strategy} onChange={(e) => setStrategy((e.target as HTMLSelectElement).value)}>
              <option value="RANDOM">Random</option>
              <option value="GREEDY">Greedy</option>
              <option value="EXPERT">Expert</option>
            </select>
          </label>
          <button type="button" disabled={taken >= info.seatCount} onClick={() => void act("addBot", { strategy })}>
            Add a bot
          </button>
          <button type="button" disabled={taken < info.seatCount} onClick={() => void act("startGame", {})}>
            Start the game
          </button>
          <label>
            Invite a player (id){" "}
            <input type="text" value={invitee} onInput={(e) => setInvitee((e.target as HTMLInputElement).value)} />
          </label>
          <button
            type="button"
            disabled={!invitee.trim()}
            onClick={() => void act("invitePlayers", { players: [invitee.trim()] }).then(() => setInvitee(""))}
          >
            Invite
          </button>
        </div>
      )}
    </section>
  );
}
