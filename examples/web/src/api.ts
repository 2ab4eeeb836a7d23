// The transports: queries and mutations by HTTP POST to /graphql, streams over
// one graphql-transport-ws WebSocket (graphql-ws) on the same origin. The
// token (a guest's, or a JWT pasted in) rides in the Authorization header and
// in connection_init, as docs/clients.md says ("The endpoint and its
// transports", "Signing in").
import { createClient, type Client } from "graphql-ws";

const TOKEN_KEY = "mmk.token";

export interface GraphQLError {
  message: string;
  extensions?: { code?: string; retryAfter?: number };
}

export class ApiError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly retryAfter: number | null = null,
  ) {
    super(message);
  }
}

export interface Refusal {
  __typename?: "Refusal";
  code: string;
  message: string;
  retryAfter?: number | null;
}

export function isRefusal<T>(value: T): value is Extract<T, { code: string }> {
  return typeof value === "object" && value !== null && "code" in value && "message" in value;
}

/** What the debug panel shows about the connection. */
export interface Link {
  state: "idle" | "connecting" | "connected" | "closed";
  connects: number;
  reconnects: number;
  lastClose: string;
}

type Listener = () => void;

class Api {
  token: string | null = localStorage.getItem(TOKEN_KEY);
  link: Link = { state: "idle", connects: 0, reconnects: 0, lastClose: "" };
  private ws: Client | null = null;
  private listeners = new Set<Listener>();

  onChange(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(): void {
    for (const l of this.listeners) l();
  }

  setToken(token: string | null): void {
    this.token = token;
    if (token) localStorage.setItem(TOKEN_KEY, token);
    else localStorage.removeItem(TOKEN_KEY);
    void this.ws?.dispose();
    this.ws = null;
    this.changed();
  }

  private headers(anonymous: boolean): Record<string, string> {
    const h: Record<string, string> = { "content-type": "application/json" };
    if (this.token && !anonymous) h["authorization"] = `Bearer ${this.token}`;
    return h;
  }

  /** One query or mutation; GraphQL errors are thrown as ApiError.
   * ``anonymous``: without the token (a spectator's view of a game). */
  async request<T>(query: string, variables: Record<string, unknown> = {}, anonymous = false): Promise<T> {
    let response: Response;
    try {
      response = await fetch("/graphql", {
        method: "POST",
        headers: this.headers(anonymous),
        body: JSON.stringify({ query, variables }),
      });
    } catch {
      throw new ApiError("the server cannot be reached", "NETWORK");
    }
    let body: { data?: T; errors?: GraphQLError[] };
    try {
      body = (await response.json()) as typeof body;
    } catch {
      // Not the server's JSON: a proxy's 502, a server on its way down.
      throw new ApiError(`the server cannot be reached (HTTP ${response.status})`, "NETWORK");
    }
    const error = body.errors?.[0];
    if (error || body.data === undefined || body.data === null) {
      throw new ApiError(
        error?.message ?? `HTTP ${response.status}`,
        error?.extensions?.code ?? "INTERNAL",
        error?.extensions?.retryAfter ?? null,
      );
    }
    return body.data;
  }

  /** The WebSocket client, made on first use: it reconnects for ever, with
   * a ping every few seconds so that a dead network is noticed. */
  socket(): Client {
    if (this.ws) return this.ws;
    const token = this.token;
    let pong: number | undefined;
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    const client = createClient({
      url: `${scheme}//${location.host}/graphql`,
      connectionParams: token ? { authorization: `Bearer ${token}` } : {},
      lazy: true,
      keepAlive: 4_000,
      retryAttempts: Number.POSITIVE_INFINITY,
      shouldRetry: () => true,
      retryWait: async (retries) => {
        await new Promise((r) => setTimeout(r, Math.min(250 * 2 ** retries, 5_000)));
      },
      on: {
        connecting: () => {
          this.link.state = "connecting";
          this.changed();
        },
        connected: () => {
          this.link.connects += 1;
          if (this.link.connects > 1) this.link.reconnects += 1;
          this.link.state = "connected";
          this.changed();
        },
        closed: (event) => {
          clearTimeout(pong);
          const e = event as { code?: number; reason?: string };
          this.link.state = "closed";
          this.link.lastClose = `${e.code ?? ""} ${e.reason ?? ""}`.trim();
          this.changed();
        },
        // No pong within 3 s of a ping: the network is gone; close, and
        // graphql-ws reconnects (and resubscribes) when it is back.
        ping: (received) => {
          if (!received) pong = window.setTimeout(() => client.terminate(), 3_000);
        },
        pong: (received) => {
          if (received) clearTimeout(pong);
        },
      },
    });
    this.ws = client;
    return client;
  }

  /** Drop the socket at once (the browser went offline): it reconnects. */
  drop(): void {
    this.ws?.terminate();
  }
}

export const api = new Api();

window.addEventListener("offline", () => api.drop());

/** An idempotency key: a retried mutation is never applied twice. */
export function newKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}
