// What to answer an ActionRequired with: the first move on offer (never a
// message), sent as the mutation the choice names. The switch is over the
// generated ActionKind: a kind the schema gains and this misses fails
// `tsc --strict` at the `never` below.
import type { TypedDocumentNode } from "@graphql-typed-document-node/core";
import {
  DiscardAndPlayDocument,
  PassDocument,
  PlayCardDocument,
  ReclaimSeatDocument,
  ResolveDecisionDocument,
  type ChangeFragment,
  type ChoiceFragment,
} from "../generated/graphql.js";

/** Runs one typed operation and resolves to its data. */
export type Send = <TData, TVars extends Record<string, unknown>>(
  document: TypedDocumentNode<TData, TVars>,
  variables: TVars,
) => Promise<TData>;

const MESSAGES = new Set(["SEND_MESSAGE", "DELIVER_MESSAGE", "DECLINE_MESSAGE"]);

function first<T>(items: readonly T[], what: string): T {
  const item = items[0];
  if (item === undefined) throw new Error(`no ${what} on offer`);
  return item;
}

/** Answers `choices` in game `gameId`; `key` makes a retry safe (idempotencyKey). */
export async function answer(
  send: Send,
  gameId: string,
  choices: readonly ChoiceFragment[],
  key: string,
): Promise<{ said: string; result: ChangeFragment }> {
  const choice = first(
    choices.filter((c) => !MESSAGES.has(c.kind)),
    "move",
  );
  const cards = choice.cards.map((c) => c.id);
  const kind = choice.kind;
  switch (kind) {
    case "PLAY_CARD": {
      const card = first(cards, "card");
      return { said: `play ${card}`, result: (await send(PlayCardDocument, { gameId, card, key })).playCard };
    }
    case "PASS":
      return { said: "pass", result: (await send(PassDocument, { gameId, key })).pass };
    case "DISCARD_AND_PLAY": {
      const discard = first(choice.discards, "discard").id;
      const card = first(
        cards.filter((c) => c !== discard),
        "card",
      );
      const result = (await send(DiscardAndPlayDocument, { gameId, discard, card, key })).discardAndPlay;
      return { said: `discard ${discard}, play ${card}`, result };
    }
    case "CRAZY_SECOND_CARD":
    case "HUNGRY_DISCARD":
    case "HUNGRY_TAKE":
    case "NEEDY_GIFT": {
      const card = first(cards, "card");
      const result = (await send(ResolveDecisionDocument, { gameId, decision: { kind, card }, key }))
        .resolveDecision;
      return { said: `${kind} ${card}`, result };
    }
    case "NEEDY_NEIGHBOUR": {
      const seat = first(choice.seats, "seat");
      const result = (await send(ResolveDecisionDocument, { gameId, decision: { kind, seat }, key }))
        .resolveDecision;
      return { said: `${kind} seat ${seat}`, result };
    }
    case "CURIOUS_ORDER": {
      const result = (await send(ResolveDecisionDocument, { gameId, decision: { kind, cards }, key }))
        .resolveDecision;
      return { said: `${kind} ${cards.join(" ")}`, result };
    }
    case "STINKY_GIFTS": {
      const used = new Set<string>();
      const gifts = choice.gifts.slice(0, choice.giftCount).map((option) => {
        const card = first(
          option.cards.map((c) => c.id).filter((c) => !used.has(c)),
          "gift",
        );
        used.add(card);
        return { to: option.to, card };
      });
      const result = (await send(ResolveDecisionDocument, { gameId, decision: { kind, gifts }, key }))
        .resolveDecision;
      return { said: `${kind} ${gifts.map((g) => `${g.card} to ${g.to}`).join(", ")}`, result };
    }
    case "RECLAIM_SEAT":
      // A bot took the seat over (turn clocks): take it back.
      return { said: "reclaim the seat", result: (await send(ReclaimSeatDocument, { gameId, key })).reclaimSeat };
    case "SEND_MESSAGE":
    case "DELIVER_MESSAGE":
    case "DECLINE_MESSAGE":
      throw new Error("messages are filtered out above");
    default: {
      const unknown: never = kind;
      throw new Error(`unknown choice ${String(unknown)}`);
    }
  }
}
