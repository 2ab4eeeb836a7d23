// Typed operations over any transport: a `Send` runs one typed document
// (graphql-codegen's TypedDocumentNode) and resolves to its data.
import type { TypedDocumentNode } from "@graphql-typed-document-node/core";
import {
  DiscardAndPlayDocument,
  PassDocument,
  PlayCardDocument,
  ResolveDecisionDocument,
  type ChangeFragment,
} from "../generated/graphql.js";
import { check } from "./check.js";
import type { Move } from "./policy.js";

export type Send = <TData, TVars extends Record<string, unknown>>(
  document: TypedDocumentNode<TData, TVars>,
  variables: TVars,
) => Promise<TData>;

/** A change the server made (a Refusal fails the program with its code). */
export function changed(result: ChangeFragment): Extract<ChangeFragment, { __typename: "GameChange" }> {
  check(result.__typename === "GameChange", `refused: ${JSON.stringify(result)}`);
  return result;
}

/** Send ``move`` in game ``gameId``; the server's answer. */
export async function sendMove(send: Send, gameId: string, move: Move): Promise<ChangeFragment> {
  switch (move.mutation) {
    case "playCard":
      return (await send(PlayCardDocument, { gameId, card: move.card })).playCard;
    case "pass":
      return (await send(PassDocument, { gameId })).pass;
    case "discardAndPlay":
      return (await send(DiscardAndPlayDocument, { gameId, discard: move.discard, card: move.card }))
        .discardAndPlay;
    case "resolveDecision":
      return (await send(ResolveDecisionDocument, { gameId, decision: move.decision })).resolveDecision;
  }
}
