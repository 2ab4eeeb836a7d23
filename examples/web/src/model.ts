// The table as one audience sees it, folded from its events: the live table,
// a spectator's and each seat of a replay use this one reducer.

export interface Card {
  id: string;
  kind: string;
  house: string | null;
  value: number | null;
  rare: boolean;
}

export interface Choice {
  kind: string;
  mutation: string;
  seats: number[];
  giftCount: number;
  messageIds: string[];
  cards: Card[];
  discards: Card[];
  gifts: { to: number; cards: Card[] }[];
}

/** An event as the stream and the log carry it (see documents.ts). */
export interface GameEvent {
  __typename: string;
  gameId: string;
  seq: number;
  at: string;
  [field: string]: unknown;
}

export interface Play {
  seat: number;
  card: Card | null;
  second: Card | null;
  faceDown: boolean;
}

export interface Trick {
  number: number;
  prize: Card;
  trump: string;
  leader: number;
  plays: Play[];
  passes: number[];
}

export interface SeatView {
  seat: number;
  name: string;
  bot: string | null;
  house: string | null;
  rat: boolean;
  handSize: number;
  hand: Card[] | null; // known to this audience only
  won: number;
  prizes: Card[];
  score: number;
  takenOver: "RECLAIMABLE" | "LEFT" | null;
}

export interface Message {
  id: string;
  trick: number;
  from: number;
  to: number;
  status: string;
  text: string | null;
}

export interface Action {
  seq: number; // the ActionRequired's
  seat: number;
  phase: string;
  deadline: string | null;
  takenOver: string | null;
  choices: Choice[] | null;
}

export interface TableState {
  viewer: number | null; // the seat whose projection this is; null: public
  lastSeq: number;
  // FINISHED: the rules ended it (it has a replay, it may be rematched).
  // ABANDONED: a GameEnded with termination ABANDONED, nobody left to play
  // it: the server refuses its replay and rematch (docs/clients.md
  // "Abandoned games").
  status: "LOBBY" | "RUNNING" | "FINISHED" | "ABANDONED";
  seats: SeatView[];
  ratSeat: number | null;
  trick: Trick | null;
  lastTrick: { number: number; winner: number; prize: Card } | null;
  ratDeckSize: number;
  prizePoolSize: number;
  discard: Card[];
  messages: Message[];
  action: Action | null;
  peek: { kind: string; cards: Card[] } | null; // Hungry's deck list, Curious' top 3
  ended: { termination: string; winners: number[]; scores: number[]; seed: string | null } | null;
  rematchId: string | null;
  news: string[]; // the last few things that happened, in words
}

export function newSeat(seat: number): SeatView {
  return {
    seat,
    name: "",
    bot: null,
    house: null,
    rat: false,
    handSize: 0,
    hand: null,
    won: 0,
    prizes: [],
    score: 0,
    takenOver: null,
  };
}

export function initialTable(seatCount: number, viewer: number | null): TableState {
  return {
    viewer,
    lastSeq: 0,
    status: "LOBBY",
    seats: Array.from({ length: seatCount }, (_, i) => newSeat(i)),
    ratSeat: null,
    trick: null,
    lastTrick: null,
    ratDeckSize: 0,
    prizePoolSize: 0,
    discard: [],
    messages: [],
    action: null,
    peek: null,
    ended: null,
    rematchId: null,
    news: [],
  };
}

export function cardName(card: Card | null | undefined): string {
  if (!card) return "a face-down card";
  switch (card.kind) {
    case "NUMBERED":
      return `${title(card.house)} ${card.value ?? ""}`.trim();
    case "PRIZE":
      return `${title(card.house)} prize`;
    case "ASSIGNMENT":
      return `${title(card.house)} assignment`;
    default:
      return "the Rat card";
  }
}

export function title(word: string | null | undefined): string {
  return word ? word.charAt(0) + word.slice(1).toLowerCase() : "";
}

export function seatName(state: TableState, seat: number): string {
  const s = state.seats[seat];
  const who = s?.name || (s?.bot ? `${title(s.bot)} bot` : `seat ${seat}`);
  if (s?.rat) return `${who} (Rat)`;
  return s?.house ? `${who} (${title(s.house)})` : who;
}

function sortHand(cards: Card[]): Card[] {
  const order = ["CRAZY", "STINKY", "SLEEPY", "HUNGRY", "NEEDY", "CURIOUS", "SASSY"];
  return [...cards].sort(
    (a, b) =>
      order.indexOf(a.house ?? "") - order.indexOf(b.house ?? "") ||
      (a.value ?? 0) - (b.value ?? 0) ||
      a.id.localeCompare(b.id),
  );
}

const f = <T>(e: GameEvent, name: string): T => e[name] as T;
/** A list field, or none when the selection left it out (a replay's seat
 * projections select only what changes hands). */
const list = <T>(e: GameEvent, name: string): T[] => (e[name] as T[] | null | undefined) ?? [];

/** The state after one more event (a new object; the old one unchanged
 * at its top level). Events at or before lastSeq are ignored. */
export function fold(prev: TableState, e: GameEvent): TableState {
  if (e.seq <= prev.lastSeq) return prev;
  const s: TableState = {
    ...prev,
    lastSeq: e.seq,
    seats: prev.seats.map((seat) => ({ ...seat })),
    news: prev.news,
  };
  const seat = (n: number): SeatView => {
    let found = s.seats[n];
    if (!found) {
      found = newSeat(n);
      s.seats[n] = found;
    }
    return found;
  };
  const mine = (n: number) => s.viewer === n;
  const say = (text: string) => {
    s.news = [...s.news.slice(-5), text];
  };
  const take = (n: number, card: Card | null) => {
    const who = seat(n);
    who.handSize = Math.max(0, who.handSize - 1);
    if (card && who.hand) who.hand = who.hand.filter((c) => c.id !== card.id);
  };
  const give = (n: number, cards: Card[] | null, count: number) => {
    const who = seat(n);
    who.handSize += count;
    if (cards && mine(n)) who.hand = sortHand([...(who.hand ?? []), ...cards]);
  };
  switch (e.__typename) {
    case "SeatTaken":
      seat(f(e, "seat")).name = f(e, "name");
      seat(f(e, "seat")).bot = null;
      break;
    case "SeatLeft":
      if (s.status === "LOBBY") s.seats[f<number>(e, "seat")] = newSeat(f(e, "seat"));
      break;
    case "BotSeated":
      seat(f(e, "seat")).bot = f(e, "strategy");
      break;
    case "GameStarted": {
      s.status = "RUNNING";
      s.ratSeat = f(e, "ratSeat");
      s.ratDeckSize = f(e, "ratDeckSize");
      s.prizePoolSize = f(e, "prizePoolSize");
      for (const d of list<{ seat: number; house: string | null; rat: boolean }>(e, "seats")) {
        seat(d.seat).house = d.house;
        seat(d.seat).rat = d.rat;
      }
      list<number>(e, "handSizes").forEach((n, i) => (seat(i).handSize = n));
      const hand = f<Card[] | null>(e, "hand");
      if (hand && s.viewer !== null) seat(s.viewer).hand = sortHand(hand);
      say("The game started.");
      break;
    }
    case "TrickStarted":
      if (s.trick && s.trick.plays.length === 0) s.lastTrick = s.lastTrick ?? null;
      s.trick = {
        number: f(e, "trick"),
        prize: f(e, "prize"),
        trump: f(e, "trump"),
        leader: f(e, "leader"),
        plays: [],
        passes: [],
      };
      s.prizePoolSize = f(e, "prizePoolSize");
      s.messages = s.messages.filter((m) => m.status !== "PENDING");
      say(`Trick ${f<number>(e, "trick")}: ${title(f(e, "trump"))} is trump; ${seatName(s, f(e, "leader"))} leads.`);
      break;
    case "CardPlayed": {
      const card = f<Card | null>(e, "card");
      take(f(e, "seat"), card);
      if (s.trick) {
        s.trick = {
          ...s.trick,
          plays: [...s.trick.plays, { seat: f(e, "seat"), card, second: null, faceDown: f(e, "faceDown") }],
        };
      }
      say(`${seatName(s, f(e, "seat"))} played ${f(e, "faceDown") && !card ? "a card face down" : cardName(card)}.`);
      break;
    }
    case "SecondCardPlayed": {
      const card = f<Card | null>(e, "card");
      take(f(e, "seat"), card);
      if (s.trick) {
        const plays = s.trick.plays.map((p) => (p.seat === f(e, "seat") ? { ...p, second: card } : p));
        s.trick = { ...s.trick, plays };
      }
      say(`${seatName(s, f(e, "seat"))} added ${cardName(card)}.`);
      break;
    }
    case "Passed":
    case "SeatSkipped":
      if (s.trick) s.trick = { ...s.trick, passes: [...s.trick.passes, f(e, "seat")] };
      say(`${seatName(s, f(e, "seat"))} ${e.__typename === "Passed" ? "passed" : "was skipped"}.`);
      break;
    case "AbilityTriggered":
      say(`${title(f(e, "house"))} ability of ${seatName(s, f(e, "seat"))}.`);
      break;
    case "DecisionRequired": {
      const cards = f<Card[] | null>(e, "cards");
      if (mine(f(e, "seat")) && cards) s.peek = { kind: f(e, "kind"), cards };
      break;
    }
    case "CardDiscarded": {
      const card = f<Card | null>(e, "card");
      take(f(e, "seat"), card);
      if (card) s.discard = [...s.discard, card];
      say(`${seatName(s, f(e, "seat"))} discarded ${cardName(card)}.`);
      break;
    }
    case "CardGiven": {
      const card = f<Card | null>(e, "card");
      take(f(e, "fromSeat"), card);
      give(f(e, "toSeat"), card ? [card] : null, 1);
      say(`A card moved from ${seatName(s, f(e, "fromSeat"))} to ${seatName(s, f(e, "toSeat"))}.`);
      break;
    }
    case "CardTaken": {
      const card = f<Card | null>(e, "card");
      give(f(e, "seat"), card ? [card] : null, 1);
      s.ratDeckSize = f(e, "ratDeckSize");
      s.peek = null;
      break;
    }
    case "TopReordered":
      s.peek = null;
      break;
    case "CardsDrawn":
      give(f(e, "seat"), f(e, "cards"), f(e, "count"));
      s.ratDeckSize = f(e, "ratDeckSize");
      break;
    case "TrickWon": {
      const winner = f<number>(e, "winner");
      const plays = list<{ card: Card; secondCard: Card | null }>(e, "plays");
      seat(winner).won += plays.length;
      seat(winner).prizes = [...seat(winner).prizes, f<Card>(e, "prize")];
      list<number>(e, "scores").forEach((n, i) => (seat(i).score = n));
      s.lastTrick = { number: f(e, "trick"), winner, prize: f(e, "prize") };
      if (s.trick) {
        // Resolution reveals every play (R7.3).
        const revealed = plays as unknown as { seat: number; card: Card; secondCard: Card | null }[];
        s.trick = {
          ...s.trick,
          plays: revealed.map((p) => ({ seat: p.seat, card: p.card, second: p.secondCard, faceDown: false })),
        };
      }
      say(`${seatName(s, winner)} won trick ${f<number>(e, "trick")}.`);
      break;
    }
    case "MessageSent":
    case "MessageDelivered":
    case "MessageDeclined":
    case "MessageExpired": {
      const id = f<string>(e, "messageId");
      const old = s.messages.find((m) => m.id === id);
      const text = (e["text"] as string | null | undefined) ?? old?.text ?? null;
      const m: Message = {
        id,
        trick: f(e, "trick"),
        from: f(e, "fromSeat"),
        to: f(e, "toSeat"),
        status: f(e, "status"),
        text,
      };
      s.messages = old ? s.messages.map((x) => (x.id === id ? m : x)) : [...s.messages, m];
      break;
    }
    case "ActionRequired": {
      const n = f<number>(e, "seat");
      const hand = f<Card[] | null>(e, "hand");
      if (hand) {
        seat(n).hand = sortHand(hand);
        seat(n).handSize = hand.length;
      }
      s.action = {
        seq: e.seq,
        seat: n,
        phase: f(e, "phase"),
        deadline: f(e, "deadline"),
        takenOver: f(e, "takenOver"),
        choices: f(e, "choices"),
      };
      if (s.action.phase !== "DECISION") s.peek = null;
      break;
    }
    case "DeadlineNear":
      if (s.action && s.action.seat === f(e, "seat")) s.action = { ...s.action, deadline: f(e, "deadline") };
      break;
    case "TurnTimedOut":
      say(`${seatName(s, f(e, "seat"))} ran out of time.`);
      break;
    case "SeatTakenOver":
      seat(f(e, "seat")).takenOver = f(e, "left") ? "LEFT" : "RECLAIMABLE";
      say(`A bot plays for ${seatName(s, f(e, "seat"))}${f(e, "left") ? " (left)" : ""}.`);
      break;
    case "SeatReclaimed":
      seat(f(e, "seat")).takenOver = null;
      say(`${seatName(s, f(e, "seat"))} is back.`);
      break;
    case "GameEnded":
      s.status = f(e, "termination") === "ABANDONED" ? "ABANDONED" : "FINISHED";
      s.action = null;
      s.ended = {
        termination: f(e, "termination"),
        winners: list(e, "winners"),
        scores: list(e, "scores"),
        seed: f(e, "seed") ?? null,
      };
      list<number>(e, "scores").forEach((n, i) => (seat(i).score = n));
      say(s.status === "ABANDONED" ? "The game was abandoned." : "The game is over.");
      break;
    case "RematchOffered":
      s.rematchId = f(e, "newGameId");
      break;
    default:
      break;
  }
  return s;
}
