// A receiver of the MMK server's webhooks (docs/push-notifications.md).
//
// Each delivery is checked by the Standard Webhooks reference library, never
// by hand: the signature over the exact bytes received, and the timestamp
// (5 minutes of skew either way). A delivery whose webhook-id was handled
// already (a retry whose answer was lost, a replay) is acknowledged and
// dropped. A verified body goes to push(), which here prints it as one JSON
// line on stdout; a real backend would queue the push to APNs, FCM or Web
// Push there and answer at once.
//
//     npm install --save-exact standardwebhooks@1.3.0
//     WEBHOOK_SECRET=whsec_... PORT=8080 node receiver.mjs
//
// WEBHOOK_SECRET: the endpoint's secret, as createWebhookEndpoint or
// rotateWebhookSecret showed it. PORT (8080; 0: any free port, named on
// stderr) and HOST (127.0.0.1): where to listen. Answers: 204 taken (or a
// repeat), 401 not signed with the secret, 413 too large, 405 not a POST.

import { createServer } from "node:http";
import { Webhook, WebhookVerificationError } from "standardwebhooks";

const MAX_BODY = 64 * 1024; // bytes; MMK's bodies are well under 1 KiB

const secret = process.env.WEBHOOK_SECRET ?? "";
if (!secret.startsWith("whsec_")) {
  console.error("set WEBHOOK_SECRET to the endpoint's secret (whsec_...)");
  process.exit(1);
}
const webhook = new Webhook(secret);
// The webhook-ids handled. Keep them in your database (a unique key) for a
// week or more: a replay sends the same id days later.
const seen = new Set();

// One verified notification, handled once: here printed as a JSON line.
// Send the push from a queue, not here: the server waits for the answer.
function push(body) {
  process.stdout.write(`${JSON.stringify(body)}\n`);
}

function answer(res, status, headers = {}) {
  res.writeHead(status, status === 204 ? headers : { ...headers, "content-length": 0 }).end();
}

const server = createServer((req, res) => {
  if (req.method !== "POST") {
    answer(res, 405, { allow: "POST" });
    return;
  }
  if (Number(req.headers["content-length"] ?? 0) > MAX_BODY) {
    answer(res, 413, { connection: "close" });
    req.destroy();
    return;
  }
  const chunks = [];
  let size = 0;
  req.on("data", (chunk) => {
    size += chunk.length;
    if (size > MAX_BODY) {
      answer(res, 413, { connection: "close" });
      req.destroy();
    } else {
      chunks.push(chunk);
    }
  });
  req.on("end", () => {
    const raw = Buffer.concat(chunks); // the exact bytes: they are what is signed
    let body;
    try {
      body = webhook.verify(raw, req.headers);
    } catch (e) {
      answer(res, e instanceof WebhookVerificationError ? 401 : 400);
      return;
    }
    const id = req.headers["webhook-id"];
    if (!seen.has(id)) {
      push(body);
      seen.add(id);
    }
    answer(res, 204);
  });
});

server.listen(Number(process.env.PORT ?? 8080), process.env.HOST ?? "127.0.0.1", () => {
  const { address, port } = server.address();
  console.error(`listening on http://${address}:${port}`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
