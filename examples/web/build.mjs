// Builds the client into a directory (default: ../../api/static/play):
// app.js (src/main.tsx and what it imports, graphql-ws and preact included,
// one minified ES2022 file), app.css and index.html copied as they are.
// The same sources always give the same bytes: tests/browser/test_play_build.py
// rebuilds into a temporary directory and compares.
import { build } from "esbuild";
import { copyFileSync, mkdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const out = resolve(process.argv[2] ?? join(here, "../../api/static/play"));
mkdirSync(out, { recursive: true });
await build({
  entryPoints: [join(here, "src/main.tsx")],
  outfile: join(out, "app.js"),
  bundle: true,
  format: "esm",
  target: "es2022",
  platform: "browser",
  minify: true,
  legalComments: "none",
  banner: { js: "/* MMK web client (examples/web). Bundles preact and graphql-ws, both MIT licensed: see examples/web/package-lock.json. */" },
  charset: "utf8",
  jsx: "automatic",
  jsxImportSource: "preact",
  define: { "process.env.NODE_ENV": '"production"' },
  logLevel: "warning",
});
for (const name of ["index.html", "app.css"]) copyFileSync(join(here, name), join(out, name));
