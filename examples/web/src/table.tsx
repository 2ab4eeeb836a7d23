// The table (shared by playing, watching and replays), the controls built
// from an ActionRequired's choices, and the debug panel.
import { useEffect, useState } from "preact/hooks";
import type { Link } from "./api";
import type { MutationName } from "./documents";
import { cardName, seatName, title, type Card, type Choice, type GameEvent, type TableState } from "./model";

export function CardView({ card }: { card: Card | null }) {
  const house = card?.house ? `house-${card.house.toLowerCase()}` : "face-down";
  return (
    <span class={`card ${house}${card?.rare ? " rare" : ""}`} data-card={card?.id ?? ""}>
      {cardName(card)}
    </span>
  );
}

/** Seconds left until ``deadline`` (server time), corrected by the offset
 * between the server's clock and this one. */
export function useCountdown(deadline: string | null, offsetMs: number): number | null {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    if (!deadline) return;
    const t = window.setInterval(() => setNow(Date.now()), 500);
    return () => clearInterval(t);
  }, [deadline]);
  if (!deadline) return null;
  return Math.max(0, Math.round((Date.parse(deadline) - (now + offsetMs)) / 1000));
}

export interface TableProps {
  state: TableState;
  presence?: Record<number, boolean>;
  banks?: Record<number, number | null>;
  offsetMs?: number;
  showAllHands?: boolean;
}

export function TableView({ state, presence = {}, banks = {}, offsetMs = 0, showAllHands = false }: TableProps) {
  const left = useCountdown(state.action?.deadline ?? null, offsetMs);
  const trick = state.trick;
  return (
    <div class="table">
      <section class="seats" aria-label="Seats and scores">
        <ul>
          {state.seats.map((s) => {
            const online = presence[s.seat];
            const acting = state.action?.seat === s.seat && state.status === "RUNNING";
            return (
              <li
                key={s.seat}
                class={`seat${acting ? " acting" : ""}${state.viewer === s.seat ? " me" : ""}`}
                data-seat={s.seat}
              >
                <strong>{seatName(state, s.seat)}</strong>
                {state.viewer === s.seat && <span class="tag">you</span>}
                {acting && <span class="tag turn">to act{left !== null ? `: ${left} s` : ""}</span>}
                {online !== undefined && !s.bot && (
                  <span class={`tag ${online ? "online" : "offline"}`}>{online ? "online" : "away"}</span>
                )}
                {s.takenOver && <span class="tag">{s.takenOver === "LEFT" ? "left: a bot plays" : "a bot plays"}</span>}
                <span class="stats">
                  score <b data-score>{s.score}</b> · {s.handSize} in hand · {s.prizes.length} prizes
                  {banks[s.seat] != null && ` · bank ${Math.round(banks[s.seat] ?? 0)} s`}
                </span>
                {s.prizes.length > 0 && (
                  <span class="prizes">
                    {s.prizes.map((c) => (
                      <CardView key={c.id} card={c} />
                    ))}
                  </span>
                )}
                {showAllHands && s.hand && (
                  <div class="hand small" aria-label={`Hand of seat ${s.seat}`}>
                    {s.hand.map((c) => (
                      <CardView key={c.id} card={c} />
                    ))}
                  </div>
                )}
              </li>
            );
          })}
        </ul>
      </section>
      <section class="trick" aria-label="The trick">
        {trick ? (
          <>
            <h3>
              Trick {trick.number}: prize <CardView card={trick.prize} />, trump {title(trick.trump)}
            </h3>
            <ol class="plays">
              {trick.plays.map((p) => (
                <li key={p.seat}>
                  {seatName(state, p.seat)}: <CardView card={p.faceDown && !p.card ? null : p.card} />
                  {p.second && (
                    <>
                      {" + "}
                      <CardView card={p.second} />
                    </>
                  )}
                </li>
              ))}
              {trick.passes.map((n) => (
                <li key={`pass-${n}`}>{seatName(state, n)}: passed</li>
              ))}
            </ol>
          </>
        ) : (
          <p>{state.status === "LOBBY" ? "Waiting for the game to start." : "No trick yet."}</p>
        )}
        <p class="stats">
          Rat Deck {state.ratDeckSize} · prize pool {state.prizePoolSize}
          {state.discard.length > 0 && ` · discarded ${state.discard.length}`}
        </p>
      </section>
      {state.ended && (
        <section class="ended" aria-label="Result" role="status">
          <h3>Game over ({title(state.ended.termination.replace(/_/g, " "))})</h3>
          <p>
            {state.ended.winners.length
              ? `Won by ${state.ended.winners.map((w) => seatName(state, w)).join(", ")}`
              : "No winner"}
            ; scores {state.ended.scores.join(" / ")}.
          </p>
        </section>
      )}
      <section class="news" aria-label="What happened" aria-live="polite">
        <ul>
          {state.news.slice(-3).map((n, i) => (
            <li key={`${state.lastSeq}-${i}`}>{n}</li>
          ))}
        </ul>
      </section>
      {state.messages.length > 0 && (
        <section class="messages" aria-label="Messages">
          <h3>Messages</h3>
          <ul>
            {state.messages.map((m) => (
              <li key={m.id}>
                {seatName(state, m.from)} → {seatName(state, m.to)} ({m.status.toLowerCase()})
                {m.text ? `: ${m.text}` : ""}
              </li>
            ))}
          </ul>
        </section>
      )}
    </div>
  );
}

export function HandView({ cards, label }: { cards: Card[]; label: string }) {
  return (
    <section class="hand" aria-label={label}>
      <h3>{label}</h3>
      <div class="cards">
        {cards.map((c) => (
          <CardView key={c.id} card={c} />
        ))}
      </div>
    </section>
  );
}

export type Act = (mutation: MutationName, variables: Record<string, unknown>) => Promise<void>;

const LABELS: Record<string, string> = {
  PLAY_CARD: "Play a card",
  PASS: "Pass",
  DISCARD_AND_PLAY: "Discard one card, then play any card",
  SEND_MESSAGE: "Send a message",
  DELIVER_MESSAGE: "Deliver a message",
  DECLINE_MESSAGE: "Decline a message",
  CRAZY_SECOND_CARD: "Crazy: play a second card",
  STINKY_GIFTS: "Stinky: give cards to your neighbours",
  HUNGRY_DISCARD: "Hungry: discard a card",
  HUNGRY_TAKE: "Hungry: take a card from the Rat Deck",
  NEEDY_NEIGHBOUR: "Needy: choose a neighbour",
  NEEDY_GIFT: "Needy: give a card",
  CURIOUS_ORDER: "Curious: order the top of the Rat Deck",
  RECLAIM_SEAT: "A bot plays your seat",
};

/** One group of buttons per choice; every control is a real button or a
 * labelled field, so the game is played by keyboard as well as by pointer. */
export function Controls({ choices, state, act, busy }: { choices: Choice[]; state: TableState; act: Act; busy: boolean }) {
  return (
    <section class="controls" aria-label="Your move" aria-busy={busy}>
      <h2 id="your-move" tabIndex={-1}>
        Your move
      </h2>
      {choices.map((c) => (
        <fieldset key={c.kind} class={`choice choice-${c.kind.toLowerCase()}`} disabled={busy}>
          <legend>{LABELS[c.kind] ?? c.kind}</legend>
          <ChoiceControls choice={c} state={state} act={act} />
        </fieldset>
      ))}
    </section>
  );
}

function ChoiceControls({ choice: c, state, act }: { choice: Choice; state: TableState; act: Act }) {
  const [discard, setDiscard] = useState<string | null>(null);
  const [order, setOrder] = useState<Card[]>([]);
  const [to, setTo] = useState<number>(c.seats[0] ?? 0);
  const [text, setText] = useState("");
  const [gifts, setGifts] = useState<Record<number, string>>({});
  const decide = (decision: Record<string, unknown>) => act("resolveDecision", { decision: { kind: c.kind, ...decision } });
  const cardButtons = (cards: Card[], run: (card: Card) => void, verb: string) => (
    <div class="cards">
      {cards.map((card) => (
        <button key={card.id} type="button" class="card-button" data-card={card.id} onClick={() => run(card)}>
          <span class="visually-hidden">{verb} </span>
          <CardView card={card} />
        </button>
      ))}
    </div>
  );
  switch (c.kind) {
    case "PLAY_CARD":
      return cardButtons(c.cards, (card) => void act("playCard", { card: card.id }), "Play");
    case "PASS":
      return (
        <button type="button" onClick={() => void act("pass", {})}>
          Pass
        </button>
      );
    case "DISCARD_AND_PLAY":
      return discard === null ? (
        <>
          <p>First choose the card to discard:</p>
          {cardButtons(c.discards, (card) => setDiscard(card.id), "Discard")}
        </>
      ) : (
        <>
          <p>Then the card to play:</p>
          {cardButtons(
            c.cards.filter((card) => card.id !== discard),
            (card) => void act("discardAndPlay", { discard, card: card.id }),
            "Play",
          )}
          <button type="button" onClick={() => setDiscard(null)}>
            Choose another discard
          </button>
        </>
      );
    case "SEND_MESSAGE":
      return (
        <div class="message-form">
          <label>
            To{" "}
            <select value={to} onChange={(e) => setTo(Number((e.target as HTMLSelectElement).value))}>
              {c.seats.map((n) => (
                <option key={n} value={n}>
                  {seatName(state, n)}
                </option>
              ))}
            </select>
          </label>
          <label>
            Text{" "}
            <input
              type="text"
              maxLength={280}
              value={text}
              onInput={(e) => setText((e.target as HTMLInputElement).value)}
            />
          </label>
          <button
            type="button"
            disabled={!text.trim()}
            onClick={() => void act("sendMessage", { to, text: text.trim() }).then(() => setText(""))}
          >
            Send
          </button>
        </div>
      );
    case "DELIVER_MESSAGE":
    case "DECLINE_MESSAGE": {
      const verb = c.kind === "DELIVER_MESSAGE" ? "Deliver" : "Decline";
      return (
        <div class="buttons">
          {c.messageIds.map((id) => {
            const m = state.messages.find((x) => x.id === id);
            return (
              <button
                key={id}
                type="button"
                onClick={() => void act(c.kind === "DELIVER_MESSAGE" ? "deliverMessage" : "declineMessage", { message: id })}
              >
                {verb} {m ? `${seatName(state, m.from)} → ${seatName(state, m.to)}: ${m.text ?? ""}` : id}
              </button>
            );
          })}
        </div>
      );
    }
    case "CRAZY_SECOND_CARD":
    case "HUNGRY_DISCARD":
    case "HUNGRY_TAKE":
    case "NEEDY_GIFT":
      return cardButtons(c.cards, (card) => void decide({ card: card.id }), "Choose");
    case "NEEDY_NEIGHBOUR":
      return (
        <div class="buttons">
          {c.seats.map((n) => (
            <button key={n} type="button" onClick={() => void decide({ seat: n })}>
              {seatName(state, n)}
            </button>
          ))}
        </div>
      );
    case "CURIOUS_ORDER": {
      const rest = c.cards.filter((card) => !order.some((o) => o.id === card.id));
      return (
        <>
          <p>
            Put them back, top first: {order.length ? order.map((o) => cardName(o)).join(", ") : "nothing chosen yet"}.
          </p>
          {rest.length > 0 && cardButtons(rest, (card) => setOrder([...order, card]), "Next")}
          <div class="buttons">
            <button
              type="button"
              onClick={() => void decide({ cards: (rest.length ? c.cards : order).map((card) => card.id) })}
            >
              {rest.length ? "Keep this order" : "Confirm this order"}
            </button>
            {order.length > 0 && (
              <button type="button" onClick={() => setOrder([])}>
                Start again
              </button>
            )}
          </div>
        </>
      );
    }
    case "STINKY_GIFTS": {
      const options = c.gifts;
      if (c.giftCount < options.length) {
        return (
          <div class="buttons">
            {options.flatMap((o) =>
              o.cards.map((card) => (
                <button key={`${o.to}-${card.id}`} type="button" onClick={() => void decide({ gifts: [{ to: o.to, card: card.id }] })}>
                  Give {cardName(card)} to {seatName(state, o.to)}
                </button>
              )),
            )}
          </div>
        );
      }
      // By default each neighbour gets a different card: the i-th on offer.
      const chosen = options.map((o, i) => gifts[o.to] ?? o.cards[i % Math.max(o.cards.length, 1)]?.id ?? "");
      const distinct = new Set(chosen).size === chosen.length;
      return (
        <div class="gift-form">
          {options.map((o) => (
            <label key={o.to}>
              To {seatName(state, o.to)}{" "}
              <select
                value={chosen[options.indexOf(o)]}
                onChange={(e) => setGifts({ ...gifts, [o.to]: (e.target as HTMLSelectElement).value })}
              >
                {o.cards.map((card) => (
                  <option key={card.id} value={card.id}>
                    {cardName(card)}
                  </option>
                ))}
              </select>
            </label>
          ))}
          <button
            type="button"
            disabled={!distinct}
            onClick={() => void decide({ gifts: options.map((o, i) => ({ to: o.to, card: chosen[i] })) })}
          >
            Give
          </button>
          {!distinct && <p role="alert">Choose a different card for each neighbour.</p>}
        </div>
      );
    }
    case "RECLAIM_SEAT":
      return (
        <button type="button" onClick={() => void act("reclaimSeat", {})}>
          Take my seat back
        </button>
      );
    default:
      return <p>{c.kind}: not offered by this client.</p>;
  }
}

/** The typed event log, the resume point and the connection's history. */
const shown = new WeakMap<GameEvent, string>();
function json(e: GameEvent): string {
  let text = shown.get(e);
  if (text === undefined) {
    text = JSON.stringify(e, null, 1);
    shown.set(e, text);
  }
  return text;
}

export function DebugPanel({ events, lastSeq, link }: { events: GameEvent[]; lastSeq: number; link: Link }) {
  const [open, setOpen] = useState(false);
  return (
    <details class="debug" onToggle={(e) => setOpen((e.currentTarget as HTMLDetailsElement).open)}>
      <summary>Debug: event log and connection</summary>
      <dl>
        <dt>Resume point (last seq)</dt>
        <dd data-testid="last-seq">{lastSeq}</dd>
        <dt>Connection</dt>
        <dd data-testid="link-state">{link.state}</dd>
        <dt>Reconnects</dt>
        <dd data-testid="reconnects">{link.reconnects}</dd>
        {link.lastClose && (
          <>
            <dt>Last close</dt>
            <dd>{link.lastClose}</dd>
          </>
        )}
      </dl>
      {open && (
      <ol class="event-log" aria-label="Event log">
        {events.map((e) => (
          <li key={e.seq} data-seq={e.seq} data-type={e.__typename}>
            <details>
              <summary>
                #{e.seq} {e.__typename}
              </summary>
              <pre>{json(e)}</pre>
            </details>
          </li>
        ))}
      </ol>
      )}
    </details>
  );
}
