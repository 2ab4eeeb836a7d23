// The client's pages: sign-in, lobby (quick play, create, join by code,
// invitations, open and live games), my games, featured games (TV), the
// notifications inbox, a game, a replay.
import { useEffect, useState } from "preact/hooks";
import { ApiError, api, isRefusal, type Link } from "./api";
import { CREATE_PLAYER, FEATURED, LOBBY, ME, MY_GAMES, NOTIFICATIONS, NOTIFICATIONS_LIVE, MUTATIONS } from "./documents";
import { GameView, mutate } from "./game";
import { title } from "./model";
import { ReplayView } from "./replay";
import { go, usePath } from "./route";

interface Me {
  id: string;
  player: { id: string; name: string };
}

interface Summary {
  id: string;
  status: string;
  seatCount: number;
  seatsTaken: number;
  practice: boolean;
  rated: boolean;
  visibility: string;
  createdAt: string;
  options: { format: string; turnSeconds: number; bankSeconds: number; pace: string };
}

function useLink(): Link {
  const [, setTick] = useState(0);
  useEffect(() => api.onChange(() => setTick((n) => n + 1)), []);
  return api.link;
}

export function App() {
  const path = usePath();
  const link = useLink();
  const [me, setMe] = useState<Me | null>(null);
  const [checked, setChecked] = useState(false);
  const [unreachable, setUnreachable] = useState<{ message: string; seconds: number } | null>(null);
  const [retry, setRetry] = useState(0);
  // The seqs of my unread notifications: "Mark all as read" up to a seq
  // drops those at or before it, and keeps any that came after.
  const [unread, setUnread] = useState<ReadonlySet<number>>(new Set());

  // Who the stored token signs in. Only the server's word that the token is
  // bad (UNAUTHENTICATED, or `me` null) forgets it: a guest's token is their
  // only way back in. Anything else (no network, a proxy's 502, a server
  // restarting, RATE_LIMITED) keeps it and asks again, waiting longer each
  // time (1, 2, 4 ... 30 s, or the retryAfter given).
  useEffect(() => {
    setChecked(false);
    setUnreachable(null);
    let gone = false;
    let timer: number | undefined;
    let attempt = 0;
    const check = () => {
      api.request<{ me: Me | null }>(ME).then(
        (d) => {
          if (gone) return;
          setUnreachable(null);
          if (!d.me && api.token) api.setToken(null); // signs in nobody
          setMe(d.me);
          setChecked(true);
        },
        (e: unknown) => {
          if (gone) return;
          if (e instanceof ApiError && e.code === "UNAUTHENTICATED") {
            api.setToken(null);
            setUnreachable(null);
            setMe(null);
            setChecked(true);
            return;
          }
          const retryAfter = e instanceof ApiError ? (e.retryAfter ?? 0) : 0;
          const seconds = Math.ceil(Math.max(Math.min(2 ** attempt, 30), retryAfter));
          attempt += 1;
          setUnreachable({ message: e instanceof Error ? e.message : String(e), seconds });
          timer = window.setTimeout(check, seconds * 1000);
        },
      );
    };
    check();
    return () => {
      gone = true;
      clearTimeout(timer);
    };
  }, [api.token, retry]);

  // Unread notifications: those of the inbox not read yet, then every new
  // one, live, in all my games (after the inbox's last seq).
  useEffect(() => {
    setUnread(new Set());
    if (!me) return;
    let stop: (() => void) | null = null;
    let gone = false;
    readInbox()
      .then((inbox) => {
        if (gone || !inbox) return;
        setUnread(new Set(inbox.notifications.filter((n) => !n.readAt).map((n) => n.seq)));
        // As in followGame: a reconnect resumes after the last one counted.
        const variables = { afterSeq: inbox.lastSeq };
        stop = api.socket().subscribe<{ notifications: { seq: number } }>(
          { query: NOTIFICATIONS_LIVE, variables, operationName: "Notices" },
          {
            next: ({ data }) => {
              const seq = data?.notifications.seq ?? 0;
              if (seq <= variables.afterSeq) return;
              variables.afterSeq = seq;
              setUnread((u) => new Set(u).add(seq));
            },
            error: () => undefined,
            complete: () => undefined,
          },
        );
      })
      .catch(() => undefined);
    return () => {
      gone = true;
      stop?.();
    };
  }, [me?.id]);

  // Move focus to the new page's heading (keyboard and screen readers).
  useEffect(() => {
    const t = window.setTimeout(() => document.querySelector<HTMLElement>("main h1")?.focus(), 0);
    return () => clearTimeout(t);
  }, [path, checked, me?.id, unreachable !== null]);

  const [, page, id] = path.split("/");
  let body;
  if (page === "game" && id) body = <GameView gameId={id} meId={me?.id ?? null} link={link} />;
  else if (page === "replay" && id) body = <ReplayView gameId={id} />;
  else if (page === "tv") body = <Featured link={link} meId={me?.id ?? null} />;
  else if (!checked)
    body = unreachable ? (
      <section aria-label="Cannot reach the server">
        <h1 tabIndex={-1}>Cannot reach the server</h1>
        <p role="alert">
          {unreachable.message}. Trying again in {unreachable.seconds} s{api.token ? "; you stay signed in" : ""}.
        </p>
        <button type="button" onClick={() => setRetry((n) => n + 1)}>
          Try now
        </button>
      </section>
    ) : (
      <p aria-busy="true">Loading...</p>
    );
  else if (!me) body = <SignIn />;
  else if (page === "games") body = <MyGames />;
  else if (page === "inbox") body = <Inbox onRead={(upTo) => setUnread((u) => new Set([...u].filter((seq) => seq > upTo)))} />;
  else body = <Lobby />;

  return (
    <>
      <a class="skip" href="#main" onClick={(e) => (e.preventDefault(), document.querySelector<HTMLElement>("main h1")?.focus())}>
        Skip to the page
      </a>
      <header>
        <a class="brand" href="#/">
          Muffin's Magical Kingdom
        </a>
        <nav aria-label="Pages">
          <a href="#/">Lobby</a>
          {me && <a href="#/games">My games</a>}
          <a href="#/tv">Watch</a>
          {me && (
            <a href="#/inbox">
              Inbox{unread.size > 0 && <span class="badge"> ({unread.size} new)</span>}
            </a>
          )}
        </nav>
        {me && (
          <span class="who">
            {me.player.name}{" "}
            <button type="button" class="link" onClick={() => api.setToken(null)}>
              Sign out
            </button>
          </span>
        )}
      </header>
      <main id="main">{body}</main>
      <footer>
        <span data-testid="footer-link">
          {link.state === "connected"
            ? "Live"
            : link.state === "connecting"
              ? "Connecting..."
              : link.state === "closed" && !link.lastClose.startsWith("1000")
                ? "Connection lost: reconnecting..."
                : ""}
        </span>
      </footer>
    </>
  );
}

function SignIn() {
  const [name, setName] = useState("");
  const [token, setToken] = useState("");
  const [error, setError] = useState<string | null>(null);
  const guest = async () => {
    setError(null);
    try {
      const d = await api.request<{ createPlayer: { token: string } | { code: string; message: string } }>(CREATE_PLAYER, {
        name: name.trim(),
      });
      if (isRefusal(d.createPlayer)) throw new Error(d.createPlayer.message);
      api.setToken(d.createPlayer.token);
    } catch (e) {
      setError((e as Error).message);
    }
  };
  const paste = async () => {
    setError(null);
    const previous = api.token;
    api.setToken(token.trim());
    try {
      const d = await api.request<{ me: Me | null }>(ME);
      if (!d.me) throw new Error("this token signs in nobody");
    } catch (e) {
      api.setToken(previous);
      setError(`Not signed in: ${(e as Error).message}`);
    }
  };
  return (
    <section class="sign-in" aria-label="Sign in">
      <h1 tabIndex={-1}>Sign in</h1>
      {error && <p role="alert">{error}</p>}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void guest();
        }}
      >
        <label>
          Your name <input id="guest-name" type="text" required maxLength={40} value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        </label>
        <button type="submit" disabled={!name.trim()}>
          Play as a guest
        </button>
      </form>
      <details>
        <summary>Sign in with a token</summary>
        <p>A token of this server, or a JWT from your app's identity provider when the server accepts them.</p>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void paste();
          }}
        >
          <label>
            Token <textarea rows={3} value={token} onInput={(e) => setToken((e.target as HTMLTextAreaElement).value)} />
          </label>
          <button type="submit" disabled={!token.trim()}>
            Sign in
          </button>
        </form>
      </details>
      <p>
        Or <a href="#/tv">watch the games being played</a>.
      </p>
    </section>
  );
}

function GameList({ games, action, verb }: { games: Summary[]; action: (g: Summary) => void; verb: string }) {
  if (games.length === 0) return <p>None right now.</p>;
  return (
    <ul class="game-list">
      {games.map((g) => (
        <li key={g.id} data-game={g.id}>
          <span>
            {g.seatCount} seats ({g.seatsTaken} taken), {title(g.options.format)}
            {g.options.turnSeconds > 0 && `, ${g.options.turnSeconds} s a turn`}
            {g.practice && ", practice"}
            {g.rated && ", rated"}
          </span>{" "}
          <button type="button" onClick={() => action(g)}>
            {verb}
            <span class="visually-hidden"> game {g.id.slice(0, 8)}</span>
          </button>
        </li>
      ))}
    </ul>
  );
}

function Lobby() {
  const [open, setOpen] = useState<Summary[]>([]);
  const [live, setLive] = useState<Summary[]>([]);
  const [invitations, setInvitations] = useState<{ invitedByName: string | null; game: Summary }[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [seats, setSeats] = useState(3);
  const [bots, setBots] = useState(1);
  const [code, setCode] = useState("");
  const [form, setForm] = useState({ seatCount: 4, format: "SINGLETON", turnSeconds: 0, bankSeconds: 0, visibility: "PUBLIC", practice: false, rated: false });
  const load = () => {
    type Conn = { edges: { node: Summary }[] } | { code: string; message: string };
    const nodes = (c: Conn) => (isRefusal(c) ? [] : c.edges.map((e) => e.node));
    api
      .request<{ open: Conn; live: Conn }>(LOBBY)
      .then((d) => {
        setOpen(nodes(d.open));
        setLive(nodes(d.live));
      })
      .catch((e: Error) => setError(e.message));
    api
      .request<{ me: { invitations: { edges: { node: { invitedByName: string | null; game: Summary } }[] } } | null }>(MY_GAMES)
      .then((d) => setInvitations(d.me?.invitations.edges.map((e) => e.node) ?? []))
      .catch(() => undefined);
  };
  useEffect(load, []);
  const run = async (fn: () => Promise<{ gameId: string }>) => {
    setError(null);
    try {
      const { gameId } = await fn();
      go(`/game/${gameId}`);
    } catch (e) {
      setError((e as Error).message);
    }
  };
  const field = (name: keyof typeof form, value: string | number | boolean) => setForm({ ...form, [name]: value });
  return (
    <section class="lobby" aria-label="Lobby">
      <h1 tabIndex={-1}>Lobby</h1>
      {error && <p role="alert">{error}</p>}
      <div class="panels">
        <form
          class="panel"
          aria-label="Quick play"
          onSubmit={(e) => {
            e.preventDefault();
            void run(() => mutate("quickPlay", { seats, bots: bots > 0 ? bots : null }));
          }}
        >
          <h2>Quick play</h2>
          <label>
            Seats{" "}
            <SeatCount id="quick-seats" value={seats} onChange={setSeats} />
          </label>
          <label>
            Fill with bots after (seconds, 0: wait for people){" "}
            <input id="quick-bots" type="number" min={0} max={600} value={bots} onInput={(e) => setBots(Number((e.target as HTMLInputElement).value))} />
          </label>
          <button type="submit">Quick play</button>
        </form>
        <form
          class="panel"
          aria-label="Create a game"
          onSubmit={(e) => {
            e.preventDefault();
            void run(() => mutate("createGame", { input: form }));
          }}
        >
          <h2>Create a game</h2>
          <label>
            Seats{" "}
            <SeatCount value={form.seatCount} onChange={(n) => field("seatCount", n)} />
          </label>
          <label>
            Format{" "}
            <select value={form.format} onChange={(e) => field("format", (e.target as HTMLSelectElement).value)}>
              <option value="SINGLETON">Singleton</option>
              <option value="SEALED">Sealed</option>
              <option value="FORMER_SEALED">Former sealed</option>
            </select>
          </label>
          <label>
            Seconds a turn (0: untimed){" "}
            <input type="number" min={0} value={form.turnSeconds} onInput={(e) => field("turnSeconds", Number((e.target as HTMLInputElement).value))} />
          </label>
          <label>
            Bank seconds{" "}
            <input type="number" min={0} value={form.bankSeconds} onInput={(e) => field("bankSeconds", Number((e.target as HTMLInputElement).value))} />
          </label>
          <label>
            Who may see it{" "}
            <select value={form.visibility} onChange={(e) => field("visibility", (e.target as HTMLSelectElement).value)}>
              <option value="PUBLIC">Public (listed)</option>
              <option value="UNLISTED">Unlisted (anyone with the link)</option>
              <option value="PRIVATE">Private (invited players)</option>
            </select>
          </label>
          <label class="check">
            <input type="checkbox" checked={form.rated} onChange={(e) => field("rated", (e.target as HTMLInputElement).checked)} /> Rated
          </label>
          <button type="submit">Create</button>
        </form>
        <form
          class="panel"
          aria-label="Join by code"
          onSubmit={(e) => {
            e.preventDefault();
            void run(() => mutate("joinByInviteCode", { code: code.trim() }));
          }}
        >
          <h2>Join by code</h2>
          <label>
            Invite code <input type="text" value={code} maxLength={20} onInput={(e) => setCode((e.target as HTMLInputElement).value)} />
          </label>
          <button type="submit" disabled={!code.trim()}>
            Join
          </button>
        </form>
      </div>
      {invitations.length > 0 && (
        <section aria-label="Invitations">
          <h2>Invitations</h2>
          <ul class="game-list">
            {invitations.map((i) => (
              <li key={i.game.id}>
                {i.invitedByName ?? "Someone"} invites you to a {i.game.seatCount}-seat game.{" "}
                <button type="button" onClick={() => void run(() => mutate("acceptInvitation", { game: i.game.id }))}>
                  Accept
                </button>{" "}
                <button type="button" onClick={() => void mutate("declineInvitation", { game: i.game.id }).then(load, (e: Error) => setError(e.message))}>
                  Decline
                </button>
              </li>
            ))}
          </ul>
        </section>
      )}
      <section aria-label="Open games">
        <h2>Open games</h2>
        <GameList games={open} verb="Join" action={(g) => void run(() => mutate("joinGame", { game: g.id }))} />
      </section>
      <section aria-label="Games being played">
        <h2>Games being played</h2>
        <GameList games={live} verb="Watch" action={(g) => go(`/game/${g.id}`)} />
      </section>
      <button type="button" onClick={load}>
        Refresh
      </button>
    </section>
  );
}

interface MyGame {
  seat: number;
  yourTurn: boolean;
  deadline: string | null;
  score: number | null;
  place: number | null;
  won: boolean | null;
  game: Summary;
  seats: { seat: number; playerName: string | null; bot: string | null }[];
}

function MyGames() {
  const [games, setGames] = useState<MyGame[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    api
      .request<{ me: { games: { edges: { node: MyGame }[] } } | null }>(MY_GAMES)
      .then((d) => setGames(d.me?.games.edges.map((e) => e.node) ?? []))
      .catch((e: Error) => setError(e.message));
  }, []);
  return (
    <section aria-label="My games">
      <h1 tabIndex={-1}>My games</h1>
      {error && <p role="alert">{error}</p>}
      {games === null ? (
        <p aria-busy="true">Loading...</p>
      ) : games.length === 0 ? (
        <p>No games yet: quick play from the lobby.</p>
      ) : (
        <ul class="game-list my-games">
          {games.map((g) => (
            <li key={g.game.id} data-game={g.game.id} class={g.yourTurn ? "your-turn" : ""}>
              <span>
                <strong>{g.yourTurn ? "Your turn" : title(g.game.status)}</strong> · seat {g.seat} of {g.game.seatCount} ·{" "}
                {g.seats.map((s) => s.playerName ?? (s.bot ? `${title(s.bot)} bot` : "empty")).join(", ")}
                {g.score !== null && ` · score ${g.score}`}
                {g.place !== null && ` · place ${g.place}`}
                {g.won && " · won"}
              </span>{" "}
              {g.game.status === "FINISHED" ? (
                <a href={`#/replay/${g.game.id}`}>Replay</a>
              ) : (
                <a href={`#/game/${g.game.id}`}>Open</a>
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** Live public games, busiest first (featuredGames), the first one on
 * screen; a server without featuredGames gives its running games. */
function Featured({ link, meId }: { link: Link; meId: string | null }) {
  const [games, setGames] = useState<Summary[] | null>(null);
  const [chosen, setChosen] = useState<string | null>(null);
  useEffect(() => {
    const load = async () => {
      try {
        const d = await api.request<{ featuredGames: Summary[] }>(FEATURED);
        return d.featuredGames;
      } catch {
        const d = await api.request<{ live: { edges: { node: Summary }[] } | { code: string } }>(LOBBY);
        return isRefusal(d.live) ? [] : d.live.edges.map((e) => e.node);
      }
    };
    load()
      .then((g) => setGames(g))
      .catch(() => setGames([]));
  }, []);
  const shown = chosen ?? games?.[0]?.id ?? null;
  return (
    <section class="tv" aria-label="Featured games">
      <h1 tabIndex={-1}>Watch</h1>
      {games === null ? (
        <p aria-busy="true">Loading...</p>
      ) : games.length === 0 ? (
        <p>No game is being played right now.</p>
      ) : (
        <>
          <GameList games={games} verb="Watch" action={(g) => setChosen(g.id)} />
          {shown && (
            <div class="featured">
              <p>
                <a href={`#/game/${shown}`}>Open this game on its own page</a>
              </p>
              <GameView key={shown} gameId={shown} meId={meId} link={link} embedded />
            </div>
          )}
        </>
      )}
    </section>
  );
}

interface Notification {
  seq: number;
  at: string;
  readAt: string | null;
  gameId: string;
  notice: { __typename: string; [k: string]: unknown };
}

/** Every notification of mine, oldest first, read a page at a time to the
 * end (hasMore, lastSeq), and the last one's seq (0: none); null when the
 * token signs in nobody. */
async function readInbox(): Promise<{ lastSeq: number; notifications: Notification[] } | null> {
  type Page = { hasMore: boolean; lastSeq: number; notifications: Notification[] };
  const all: Notification[] = [];
  let afterSeq = 0;
  for (;;) {
    const d = await api.request<{ me: { notifications: Page } | null }>(NOTIFICATIONS, { afterSeq });
    if (!d.me) return null;
    const page = d.me.notifications;
    all.push(...page.notifications);
    // An empty page's lastSeq is the afterSeq given: the last one's.
    if (!page.hasMore || page.lastSeq <= afterSeq) return { lastSeq: page.lastSeq, notifications: all };
    afterSeq = page.lastSeq;
  }
}

function Inbox({ onRead }: { onRead: (upToSeq: number) => void }) {
  const [items, setItems] = useState<Notification[] | null>(null);
  const [last, setLast] = useState(0);
  const [error, setError] = useState<string | null>(null);
  const load = () =>
    readInbox()
      .then((inbox) => {
        setError(null);
        setItems([...(inbox?.notifications ?? [])].reverse()); // newest first
        setLast(inbox?.lastSeq ?? 0);
      })
      .catch((e: Error) => {
        setError(e.message);
        setItems((old) => old ?? []);
      });
  useEffect(() => {
    void load();
  }, []);
  const words: Record<string, string> = {
    YourTurn: "Your turn",
    YourDeadlineSoon: "Your time is nearly up",
    YourTurnTimedOut: "Your turn timed out",
    YourInvitation: "You are invited",
    YourGameStarted: "Your game started",
    YourGameEnded: "Your game ended",
    YourRematch: "A rematch is offered",
    YourSeatTakenOver: "A bot took over your seat",
  };
  return (
    <section aria-label="Notifications">
      <h1 tabIndex={-1}>Inbox</h1>
      {error && <p role="alert">{error}</p>}
      {items === null ? (
        <p aria-busy="true">Loading...</p>
      ) : items.length === 0 ? (
        <p>Nothing yet.</p>
      ) : (
        <>
          <button
            type="button"
            onClick={() =>
              void api
                .request<{ markNotificationsRead: { marked: number } | { code: string; message: string } }>(
                  MUTATIONS.markNotificationsRead,
                  { upTo: last },
                )
                .then(
                  (d) => {
                    if (isRefusal(d.markNotificationsRead)) {
                      setError(d.markNotificationsRead.message);
                      return;
                    }
                    onRead(last);
                    void load();
                  },
                  (e: Error) => setError(e.message),
                )
            }
          >
            Mark all as read
          </button>
          <ul class="inbox">
            {items.map((n) => (
              <li key={n.seq} class={n.readAt ? "read" : "unread"}>
                {words[n.notice.__typename] ?? n.notice.__typename}
                {n.notice["newGameId"] ? (
                  <>
                    {" "}
                    <a href={`#/game/${String(n.notice["newGameId"])}`}>open the rematch</a>
                  </>
                ) : null}{" "}
                <a href={`#/game/${n.gameId}`}>game {n.gameId.slice(0, 8)}</a>{" "}
                <time dateTime={n.at}>{new Date(n.at).toLocaleString()}</time>
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}

/** A game's seat count, 3 to 8 (R2.1). */
function SeatCount(props: { id?: string; value: number; onChange: (n: number) => void }) {
  return (
    <select id={props.id} value={props.value} onChange={(e) => props.onChange(Number((e.target as HTMLSelectElement).value))}>
      {[3, 4, 5, 6, 7, 8].map((n) => (
        <option key={n} value={n}>
          {n}
        </option>
      ))}
    </select>
  );
}
