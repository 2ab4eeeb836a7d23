// The GraphiQL playground of the MMK server (GET /graphql in a browser),
// adapted from Strawberry's graphiql.html (MIT). Every file it needs is served
// by the server itself (api/static, docs/decisions/0033): it works offline and
// under the page's Content-Security-Policy, which allows no inline script.
//
// Queries and mutations go to this URL over HTTP; subscriptions over a
// WebSocket to the same URL (graphql-transport-ws). What the Headers pane
// holds, e.g. {"Authorization": "Bearer <token>"}, is sent as HTTP headers
// and, for subscriptions, as the connection_init payload.
"use strict";

(function () {
  const EXAMPLE_QUERY = `# The MMK server's GraphQL playground.
#
# Create a player, then put its token in the Headers pane below:
#   {"Authorization": "Bearer <token>"}
# Subscriptions (gameEvents, lobby) run over a WebSocket.
#
# Run: Ctrl-Enter. Complete: Ctrl-Space.

mutation {
  createPlayer(name: "Ann") {
    ... on NewPlayer { token player { id name } }
    ... on Refusal { code message }
  }
}
`;

  // The query, variables and headers live in the URL, for sharing
  // (URLSearchParams: "+" and "%20" both read as a space).
  const parameters = Object.fromEntries(new URLSearchParams(window.location.search));

  function updateURL(data) {
    Object.assign(parameters, data);
    const kept = Object.entries(parameters).filter(([, value]) => Boolean(value));
    history.replaceState(null, "", "?" + new URLSearchParams(kept).toString());
  }

  const fetchURL = window.location.href.split("?")[0].split("#")[0];

  function webSocketURL(url) {
    const parsed = new URL(url);
    parsed.protocol = parsed.protocol === "https:" ? "wss:" : "ws:";
    parsed.hash = "";
    return parsed.toString();
  }

  const fetcher = GraphiQL.createFetcher({
    url: fetchURL,
    subscriptionUrl: webSocketURL(fetchURL),
  });

  function Playground() {
    const [query, setQuery] = React.useState(parameters.q || EXAMPLE_QUERY);
    const [variables, setVariables] = React.useState(parameters.variables);
    const [headers, setHeaders] = React.useState(parameters.headers);
    const explorer = React.useMemo(() => GraphiQLPluginExplorer.explorerPlugin(), []);

    return React.createElement(GraphiQL, {
      fetcher: fetcher,
      defaultEditorToolsVisibility: true,
      plugins: [explorer],
      query: query,
      variables: variables,
      headers: headers,
      onEditQuery: (value) => {
        setQuery(value);
        updateURL({ q: value });
      },
      onEditVariables: (value) => {
        setVariables(value);
        updateURL({ variables: value });
      },
      onEditHeaders: (value) => setHeaders(value),
      inputValueDeprecation: true,
      isHeadersEditorEnabled: true,
      shouldPersistHeaders: true,
    });
  }

  ReactDOM.createRoot(document.getElementById("graphiql")).render(
    React.createElement(Playground),
  );
})();
