// The GraphQL documents the client sends: every one is public API
// (schema.graphql), nothing else is used.

const CARD = "id kind house value rare";

const CHOICES = `choices { kind mutation seats giftCount messageIds cards { ${CARD} } discards { ${CARD} } gifts { to cards { ${CARD} } } }`;

/** Every field of every event type, as the stream and the log carry them;
 * ``choices``: an ActionRequired's choices (the stream's only: priced per
 * card, they would shrink a page of the log to a few events). */
const eventFields = (choices: string) => `
  __typename gameId seq at
  ... on GameCreated { hostId seatCount format chosenRatSeat }
  ... on SeatTaken { seat playerId name }
  ... on SeatLeft { seat playerId }
  ... on BotSeated { seat strategy }
  ... on GameStarted { seats { seat house rat } ratSeat handSizes ratDeckSize prizePoolSize practice seedCommitment hand { ${CARD} } options { turnSeconds bankSeconds timeoutsToTakeover } }
  ... on TrickStarted { trick prize { ${CARD} } trump leader prizePoolSize }
  ... on CardPlayed { seat trick lead faceDown card { ${CARD} } }
  ... on SecondCardPlayed { seat faceDown card { ${CARD} } }
  ... on Passed { seat trick }
  ... on SeatSkipped { seat trick }
  ... on AbilityTriggered { seat house card { ${CARD} } }
  ... on DecisionRequired { seat kind source cards { ${CARD} } }
  ... on CardDiscarded { seat reason card { ${CARD} } }
  ... on CardGiven { fromSeat toSeat reason card { ${CARD} } }
  ... on CardTaken { seat ratDeckSize card { ${CARD} } }
  ... on NeighbourChosen { seat neighbour }
  ... on TopReordered { seat count cards { ${CARD} } }
  ... on CardsDrawn { seat count ratDeckSize cards { ${CARD} } }
  ... on TrickWon { trick winner prize { ${CARD} } plays { seat value card { ${CARD} } secondCard { ${CARD} } } passes scores }
  ... on MessageSent { messageId trick fromSeat toSeat status text }
  ... on MessageDelivered { messageId trick fromSeat toSeat status text }
  ... on MessageDeclined { messageId trick fromSeat toSeat status }
  ... on MessageExpired { messageId trick fromSeat toSeat status }
  ... on ActionRequired { seat phase deadline takenOver hand { ${CARD} } ${choices} }
  ... on DeadlineNear { seat deadline }
  ... on TurnTimedOut { seat }
  ... on SeatTakenOver { seat strategy left }
  ... on SeatReclaimed { seat }
  ... on GameEnded { termination winners disqualified scores seed salt }
  ... on RematchOffered { newGameId }
  ... on PlayersInvited { playerIds }
  ... on InvitationDeclined { playerId }
  ... on InvitationCancelled { playerId }
  ... on InviteCodeChanged { cleared }
`;
export const EVENT_FIELDS = eventFields(CHOICES);
export const LOG_FIELDS = eventFields("");
export const LOG_PAGE = 30;

export const SUBSCRIBE_EVENTS = `subscription Events($game: ID!, $afterSeq: Int!, $awaitRematch: Boolean!) {
  gameEvents(gameId: $game, afterSeq: $afterSeq, awaitRematch: $awaitRematch) { ${EVENT_FIELDS} }
}`;

export const EVENTS_PAGE = `query Log($game: ID!, $afterSeq: Int!) {
  gameEvents(gameId: $game, afterSeq: $afterSeq, first: ${LOG_PAGE}) {
    ... on GameEventPage { hasMore lastSeq events { ${LOG_FIELDS} } }
    ... on Refusal { code message }
  }
}`;

/** A seat's projection in a replay: only what changes hands (the public
 * log gives the rest). gameReplay is priced per step for every audience of
 * the largest table, so its pages are small (REPLAY_PAGE); see
 * docs/web-client.md. */
export const SEAT_FIELDS = `
  __typename gameId seq
  ... on GameStarted { hand { ${CARD} } }
  ... on CardPlayed { seat card { id } }
  ... on SecondCardPlayed { seat card { id } }
  ... on CardDiscarded { seat card { id } }
  ... on CardGiven { fromSeat toSeat card { ${CARD} } }
  ... on CardTaken { seat card { ${CARD} } }
  ... on CardsDrawn { seat count cards { ${CARD} } }
`;
export const REPLAY_PAGE = 12;

export const REPLAY = `query Replay($game: ID!, $afterSeq: Int!) {
  gameReplay(gameId: $game, afterSeq: $afterSeq, first: ${REPLAY_PAGE}) {
    ... on ReplayPage { hasMore lastSeq seatCount steps { seq seats { ${SEAT_FIELDS} } } }
    ... on Refusal { code message retryAfter }
  }
}`;

export const PRESENCE = `subscription Presence($game: ID!) { seatPresence(gameId: $game) { seat connected } }`;

export const ME = `query Me { me { id player { id name } } }`;

export const CREATE_PLAYER = `mutation Guest($name: String!) {
  createPlayer(name: $name) { ... on NewPlayer { token player { id name } } ... on Refusal { code message } }
}`;

const SUMMARY = "id status seatCount seatsTaken practice rated visibility createdAt options { format turnSeconds bankSeconds pace }";

export const LOBBY = `query Lobby {
  open: games(status: LOBBY, first: 20) { ... on GameConnection { edges { node { ${SUMMARY} } } } ... on Refusal { code message } }
  live: games(status: RUNNING, first: 20) { ... on GameConnection { edges { node { ${SUMMARY} } } } ... on Refusal { code message } }
}`;

export const FEATURED = `query Featured { featuredGames(first: 10) { ${SUMMARY} } }`;

export const MY_GAMES = `query MyGames {
  me {
    id
    games(first: 30) { edges { node { seat yourTurn deadline lastChangeAt score place won
      game { ${SUMMARY} } seats { seat playerName bot } } } }
    invitations(first: 20) { edges { node { invitedByName invitedAt game { ${SUMMARY} } } } }
  }
}`;

/** The inbox a page at a time, oldest first: read with readInbox (app.tsx),
 * which follows hasMore and lastSeq to the end. YourDeadlineSoon's deadline
 * is aliased: it is DateTime!, YourTurn's DateTime, and two fields of one
 * name and different types in one selection are invalid GraphQL. */
export const NOTIFICATIONS_PAGE = 100;

export const NOTIFICATIONS = `query Inbox($afterSeq: Int!) {
  me { id notifications(afterSeq: $afterSeq, first: ${NOTIFICATIONS_PAGE}) { hasMore lastSeq notifications { seq at readAt gameId notice {
    __typename
    ... on YourTurn { seat deadline }
    ... on YourDeadlineSoon { seat deadlineSoon: deadline }
    ... on YourGameEnded { seat score place won }
    ... on YourRematch { newGameId }
    ... on YourInvitation { hostId }
  } } } }
}`;

export const NOTIFICATIONS_LIVE = `subscription Notices($afterSeq: Int!) { notifications(afterSeq: $afterSeq) { seq gameId notice { __typename } } }`;

export const GAME = `query Game($game: ID!) {
  serverTime
  game(id: $game) {
    ... on Game {
      id status hostId seatCount ratSeat practice rated visibility inviteCode lastSeq rematchId deadline
      options { format turnSeconds bankSeconds timeoutsToTakeover pace }
      seats { seat playerId playerName bot bankSeconds left reservedFor }
      viewer { seat }
      table { seats { seat connected } }
    }
    ... on Refusal { code message }
  }
}`;

export const GAME_CLOCKS = `query Clocks($game: ID!) {
  serverTime
  game(id: $game) { ... on Game { id deadline seats { seat bankSeconds playerName bot left } } ... on Refusal { code message } }
}`;

const RESULT = "... on GameChange { gameId version } ... on Refusal { code message retryAfter }";

export const MUTATIONS = {
  quickPlay: `mutation QuickPlay($seats: Int!, $bots: Int, $key: String) { quickPlay(seatCount: $seats, fillWithBotsAfter: $bots, idempotencyKey: $key) { ${RESULT} } }`,
  createGame: `mutation Create($input: CreateGameInput!, $key: String) { createGame(input: $input, idempotencyKey: $key) { ${RESULT} } }`,
  joinGame: `mutation Join($game: ID!, $key: String) { joinGame(gameId: $game, idempotencyKey: $key) { ${RESULT} } }`,
  joinByInviteCode: `mutation JoinByCode($code: String!, $key: String) { joinByInviteCode(inviteCode: $code, idempotencyKey: $key) { ${RESULT} } }`,
  acceptInvitation: `mutation Accept($game: ID!, $key: String) { acceptInvitation(gameId: $game, idempotencyKey: $key) { ${RESULT} } }`,
  declineInvitation: `mutation Decline($game: ID!, $key: String) { declineInvitation(gameId: $game, idempotencyKey: $key) { ${RESULT} } }`,
  invitePlayers: `mutation Invite($game: ID!, $players: [ID!]!, $key: String) { invitePlayers(gameId: $game, playerIds: $players, idempotencyKey: $key) { ${RESULT} } }`,
  addBot: `mutation AddBot($game: ID!, $strategy: BotStrategy!, $key: String) { addBot(gameId: $game, strategy: $strategy, idempotencyKey: $key) { ${RESULT} } }`,
  startGame: `mutation Start($game: ID!, $key: String) { startGame(gameId: $game, idempotencyKey: $key) { ${RESULT} } }`,
  leaveGame: `mutation Leave($game: ID!, $key: String) { leaveGame(gameId: $game, idempotencyKey: $key) { ${RESULT} } }`,
  rematch: `mutation Rematch($game: ID!, $key: String) { rematch(gameId: $game, idempotencyKey: $key) { ${RESULT} } }`,
  reclaimSeat: `mutation Reclaim($game: ID!, $key: String) { reclaimSeat(gameId: $game, idempotencyKey: $key) { ${RESULT} } }`,
  playCard: `mutation Play($game: ID!, $card: ID!, $key: String) { playCard(gameId: $game, card: $card, idempotencyKey: $key) { ${RESULT} } }`,
  pass: `mutation Pass($game: ID!, $key: String) { pass(gameId: $game, idempotencyKey: $key) { ${RESULT} } }`,
  discardAndPlay: `mutation DiscardAndPlay($game: ID!, $discard: ID!, $card: ID!, $key: String) { discardAndPlay(gameId: $game, discard: $discard, card: $card, idempotencyKey: $key) { ${RESULT} } }`,
  resolveDecision: `mutation Decide($game: ID!, $decision: DecisionInput!, $key: String) { resolveDecision(gameId: $game, decision: $decision, idempotencyKey: $key) { ${RESULT} } }`,
  sendMessage: `mutation Send($game: ID!, $to: Int!, $text: String!, $key: String) { sendMessage(gameId: $game, to: $to, text: $text, idempotencyKey: $key) { ${RESULT} } }`,
  deliverMessage: `mutation Deliver($game: ID!, $message: ID!, $key: String) { deliverMessage(gameId: $game, messageId: $message, idempotencyKey: $key) { ${RESULT} } }`,
  declineMessage: `mutation DeclineMessage($game: ID!, $message: ID!, $key: String) { declineMessage(gameId: $game, messageId: $message, idempotencyKey: $key) { ${RESULT} } }`,
  markNotificationsRead: `mutation MarkRead($upTo: Int!) { markNotificationsRead(upToSeq: $upTo) { ... on NotificationsRead { marked } ... on Refusal { code message } } }`,
} as const;
export type MutationName = keyof typeof MUTATIONS;
