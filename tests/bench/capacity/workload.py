"""The capacity workload's operations (issue #13), shared by the load process
(:mod:`tests.bench.capacity.load`) and the bare broadcaster
(:mod:`tests.bench.capacity.bare`), which answers the same operation names.

One table: 4 seats, each a person with a token, an HTTP keep-alive
connection and a graphql-transport-ws WebSocket subscribed to ``gameEvents``,
plus 4 anonymous spectator WebSockets. A seat that learns from its stream
that it must act (``ActionRequired`` for its seat) asks for its choices once
(HTTP query), thinks 0.5-1.5 s, then sends one move (HTTP mutation).
"""

from __future__ import annotations

SEATS = 4
SPECTATORS = 4
THINK_S = (0.5, 1.5)

RESULT = """
  __typename
  ... on GameChange { version events { seq } }
  ... on Refusal { code message }
"""

CREATE_PLAYER = """
mutation CreatePlayer($name: String!) {
  r: createPlayer(name: $name) {
    __typename ... on NewPlayer { token player { id } } ... on Refusal { code message }
  }
}"""

CREATE_GAME = f"""
mutation CreateGame($input: CreateGameInput!) {{ r: createGame(input: $input) {{ {RESULT}
  ... on GameChange {{ gameId }} }} }}"""

JOIN_GAME = f"""
mutation JoinGame($gameId: ID!) {{ r: joinGame(gameId: $gameId) {{ {RESULT} }} }}"""

START_GAME = f"""
mutation StartGame($gameId: ID!) {{ r: startGame(gameId: $gameId) {{ {RESULT} }} }}"""

LOOK = """
query Look($id: ID!) {
  game(id: $id) {
    __typename
    ... on Game {
      viewer {
        seat
        choices {
          kind mutation cards { id } discards { id } seats giftCount gifts { to cards { id } }
        }
      }
    }
    ... on Refusal { code message }
  }
}"""

MOVES = {
    "playCard": f"""
mutation Move($gameId: ID!, $card: ID!) {{
  r: playCard(gameId: $gameId, card: $card) {{ {RESULT} }}
}}""",
    "pass": f"""
mutation Move($gameId: ID!) {{ r: pass(gameId: $gameId) {{ {RESULT} }} }}""",
    "discardAndPlay": f"""
mutation Move($gameId: ID!, $discard: ID!, $card: ID!) {{
  r: discardAndPlay(gameId: $gameId, discard: $discard, card: $card) {{ {RESULT} }}
}}""",
    "resolveDecision": f"""
mutation Move($gameId: ID!, $decision: DecisionInput!) {{
  r: resolveDecision(gameId: $gameId, decision: $decision) {{ {RESULT} }}
}}""",
}

# What a real client's event feed selects: every event's identity and time,
# what the table shows of the common events, and who must act.
SUBSCRIBE = """
subscription Events($gameId: ID!, $afterSeq: Int!) {
  gameEvents(gameId: $gameId, afterSeq: $afterSeq) {
    __typename gameId seq at
    ... on CardPlayed { seat card { id } }
    ... on TrickWon { winner }
    ... on ActionRequired { seat phase }
  }
}"""
