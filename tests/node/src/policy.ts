// A seat's policy when it plays from its own stream: the first move on offer
// (never a message), so a game always ends. Typed by the generated
// ChoiceFieldsFragment: a kind the schema gains and this switch misses fails
// tsc --strict (the `never` at the end).
import type { ChoiceFieldsFragment, DecisionInput } from "../generated/graphql.js";

export type Move =
  | { mutation: "playCard"; card: string }
  | { mutation: "pass" }
  | { mutation: "discardAndPlay"; discard: string; card: string }
  | { mutation: "resolveDecision"; decision: DecisionInput };

const MESSAGES = new Set(["SEND_MESSAGE", "DELIVER_MESSAGE", "DECLINE_MESSAGE"]);

function first<T>(items: readonly T[], what: string): T {
  const item = items[0];
  if (item === undefined) throw new Error(`no ${what} on offer`);
  return item;
}

export function moveFor(choices: readonly ChoiceFieldsFragment[]): Move {
  const choice = first(
    choices.filter((c) => !MESSAGES.has(c.kind)),
    "move",
  );
  const cards = choice.cards.map((c) => c.id);
  const kind = choice.kind;
  switch (kind) {
    case "PLAY_CARD":
      return { mutation: "playCard", card: first(cards, "card") };
    case "PASS":
      return { mutation: "pass" };
    case "DISCARD_AND_PLAY": {
      const discard = first(choice.discards, "discard").id;
      return { mutation: "discardAndPlay", discard, card: first(cards.filter((c) => c !== discard), "card") };
    }
    case "CRAZY_SECOND_CARD":
    case "HUNGRY_DISCARD":
    case "HUNGRY_TAKE":
    case "NEEDY_GIFT":
      return { mutation: "resolveDecision", decision: { kind, card: first(cards, "card") } };
    case "NEEDY_NEIGHBOUR":
      return { mutation: "resolveDecision", decision: { kind, seat: first(choice.seats, "seat") } };
    case "CURIOUS_ORDER":
      return { mutation: "resolveDecision", decision: { kind, cards } };
    case "STINKY_GIFTS": {
      const used = new Set<string>();
      const gifts = choice.gifts.slice(0, choice.giftCount).map((option) => {
        const card = first(option.cards.map((c) => c.id).filter((c) => !used.has(c)), "gift");
        used.add(card);
        return { to: option.to, card };
      });
      return { mutation: "resolveDecision", decision: { kind, gifts } };
    }
    case "SEND_MESSAGE":
    case "DELIVER_MESSAGE":
    case "DECLINE_MESSAGE":
      throw new Error("messages are filtered out above");
    case "RECLAIM_SEAT":
      throw new Error("a bot plays this seat: these clients never stop answering, so never reclaim");
    default: {
      const unknown: never = kind;
      throw new Error(`unknown choice ${String(unknown)}`);
    }
  }
}
