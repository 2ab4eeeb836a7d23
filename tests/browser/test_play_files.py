"""The reference web client's files (examples/web, served at /play): the
committed bundle in api/static/play is what its sources build, byte for byte
(as the GraphiQL assets are checked); the client type-checks under
``tsc --strict``; its npm pins are exact and locked; the server serves the
page under a policy that names nothing but its own files, and ``/``
redirects to it; every GraphQL document the client sends (documents.ts) is
valid against schema.graphql. No browser needed: the page in Chromium is
test_play.py."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from api.web_client import CONTENT_SECURITY_POLICY, PATH, STATIC_DIR
from tests.adapters.test_access_switches import app_with
from tests.services import REQUIRE_SERVICES_ENV, services_required

ROOT = Path(__file__).resolve().parents[2]
WEB = ROOT / "examples" / "web"
FILES = {"index.html", "app.js", "app.css"}
CDN_HOSTS = ("unpkg.com", "cdn.jsdelivr.net", "cdnjs", "esm.sh")
SCHEMA = ROOT / "schema.graphql"
# Bundles a TypeScript module with examples/web's esbuild (its documents are
# template strings built from other constants), imports it, and validates
# every exported string (and string in an exported object) that parses as a
# GraphQL document with graphql-js against the schema; prints {checked, errors}.
CHECK_DOCUMENTS = r"""
// Validates every exported string of a module (strings inside exported objects too) that is a
// GraphQL document against an SDL schema: argv[2] the module (.ts), argv[3] the schema,
// argv[4] the directory of node_modules (esbuild, graphql). Prints {checked, errors} as JSON.
import { createRequire } from "node:module";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
const [entry, schemaPath, modules] = process.argv.slice(2);
const require = createRequire(join(resolve(modules), "package.json"));
const { build } = require("esbuild");
const { buildSchema, parse, validate, Source } = require("graphql");
const out = await build({
  entryPoints: [resolve(entry)],
  bundle: true,
  format: "esm",
  platform: "neutral",
  write: false,
  logLevel: "error",
});
// Next to this script (a temporary directory of the test).
const file = join(dirname(fileURLToPath(import.meta.url)), "documents.mjs");
writeFileSync(file, out.outputFiles[0].text);
const exported = await import(pathToFileURL(file).href);
const schema = buildSchema(readFileSync(schemaPath, "utf8"));
const checked = [];
const errors = {};
const OPERATION = /^\s*(query|mutation|subscription|fragment|\{)/;
function visit(name, value) {
  if (typeof value === "string") {
    let doc;
    try {
      doc = parse(new Source(value, name));
    } catch (e) {
      // A fragment of selections (EVENT_FIELDS): not a document. One that
      // starts as a document must parse.
      if (OPERATION.test(value)) errors[name] = [String(e.message)];
      return;
    }
    checked.push(name);
    const found = validate(schema, doc).map((e) => e.message);
    if (found.length) errors[name] = found;
  } else if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) visit(`${name}.${k}`, v);
  }
}
for (const [name, value] of Object.entries(exported)) visit(name, value);
process.stdout.write(JSON.stringify({ checked, errors }));
"""


@pytest.fixture(scope="module")
def node() -> str:
    """Node with examples/web's node_modules (`make node-deps`); skips
    without them (fails under MMK_REQUIRE_SERVICES=1)."""
    path = shutil.which("node")
    if path is not None and (WEB / "node_modules" / ".package-lock.json").exists():
        return path
    problem = "no node, or no examples/web/node_modules (make node-deps)"
    if services_required():
        pytest.fail(f"{problem}, and {REQUIRE_SERVICES_ENV}=1 requires them", pytrace=False)
    pytest.skip(problem)


def test_the_committed_bundle_is_built_from_the_sources(node: str, tmp_path: Path) -> None:
    subprocess.run([node, "build.mjs", str(tmp_path)], cwd=WEB, check=True, timeout=60)
    assert {p.name for p in STATIC_DIR.iterdir()} == FILES
    for name in sorted(FILES):
        built, committed = (tmp_path / name).read_bytes(), (STATIC_DIR / name).read_bytes()
        assert built == committed, f"api/static/play/{name} is stale: run make web-client"


def test_the_client_type_checks_strictly(node: str) -> None:
    config = json.loads((WEB / "tsconfig.json").read_text())
    assert config["compilerOptions"]["strict"] is True
    tsc = WEB / "node_modules" / "typescript" / "bin" / "tsc"
    done = subprocess.run(
        [node, str(tsc), "-p", "tsconfig.json"],
        cwd=WEB,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_npm_pins_are_exact_and_locked() -> None:
    wanted = json.loads((WEB / "package.json").read_text())["devDependencies"]
    assert "axe-core" in wanted  # the browser tests inject it from node_modules
    locked = json.loads((WEB / "package-lock.json").read_text())["packages"]
    assert locked[""]["devDependencies"] == wanted
    for name, version in wanted.items():
        assert re.fullmatch(r"\d+\.\d+\.\d+", version), f"{name} {version}: not an exact pin"
        entry = locked[f"node_modules/{name}"]
        assert entry["version"] == version and entry["integrity"].startswith("sha512-")


def test_the_bundle_names_no_other_host() -> None:
    for name in FILES:
        data = (STATIC_DIR / name).read_text(encoding="utf-8")
        assert not [h for h in CDN_HOSTS if h in data], name
        # Only XML namespace names (preact's SVG/MathML), never a URL it loads.
        urls = set(re.findall(r"(?:https?|wss?)://[^\"'\s)]+", data))
        assert urls <= {
            "http://www.w3.org/1998/Math/MathML",
            "http://www.w3.org/1999/xhtml",
            "http://www.w3.org/2000/svg",
            "http://www.w3.org/1999/xlink",
            "http://www.w3.org/XML/1998/namespace",
        }, urls
    assert "axe" not in (STATIC_DIR / "app.js").read_text(encoding="utf-8").lower()


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self.inline = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        self.urls += [str(found[k]) for k in ("src", "href") if found.get(k)]
        if tag in ("script", "style") and "src" not in found:
            self.inline += 1
        assert not any(a.startswith("on") for a in found), f"inline handler in <{tag}>"


async def test_the_server_serves_the_client_under_a_strict_policy(tmp_path: Path) -> None:
    async with app_with(tmp_path) as (_, client):
        home = await client.get("/")
        assert home.status_code == 307 and home.headers["location"] == PATH
        r = await client.get(PATH)
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
        policy = r.headers["content-security-policy"]
        assert policy == CONTENT_SECURITY_POLICY
        assert "default-src 'none'" in policy and "script-src 'self'" in policy
        assert "unsafe" not in policy and not re.search(r"https?://|\*", policy)
        assert r.headers["x-content-type-options"] == "nosniff"
        page = _Page()
        page.feed(r.text)
        assert page.inline == 0
        files = [u for u in page.urls if not u.startswith("data:")]
        assert sorted(files) == [f"{PATH}/app.css", f"{PATH}/app.js"]
        for url in files:
            served = await client.get(url, headers={"accept-encoding": "identity"})
            assert served.status_code == 200, url
            assert served.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
            assert served.content == (STATIC_DIR / url.rsplit("/", 1)[1]).read_bytes()
        assert (await client.get(f"{PATH}/nope.js")).status_code == 404
        same = await client.get(f"{PATH}/index.html")
        assert same.text == r.text and "{{" not in same.text


def _check_documents(node: str, module: Path, tmp_path: Path) -> dict[str, Any]:
    script = tmp_path / "check-documents.mjs"
    script.write_text(CHECK_DOCUMENTS, encoding="utf-8")
    done = subprocess.run(
        [node, str(script), str(module), str(SCHEMA), str(WEB)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def test_every_document_the_client_sends_is_valid_against_the_schema(
    node: str, tmp_path: Path
) -> None:
    found = _check_documents(node, WEB / "src" / "documents.ts", tmp_path)
    assert found["errors"] == {}, json.dumps(found["errors"], indent=1)
    checked = set(found["checked"])
    # The mutations, the queries and the three subscriptions, not fragments.
    assert len(checked) >= 30, checked
    assert {"SUBSCRIBE_EVENTS", "PRESENCE", "NOTIFICATIONS_LIVE", "GAME", "REPLAY"} <= checked
    assert {"MUTATIONS.sendMessage", "MUTATIONS.rematch"} <= checked
    assert "EVENT_FIELDS" not in checked  # a selection set, part of documents


def test_the_document_check_finds_an_invalid_document(node: str, tmp_path: Path) -> None:
    """The checker itself: a planted module's bad documents are reported,
    through an interpolated constant and inside an exported object too."""
    module = tmp_path / "planted.ts"
    module.write_text(
        'const FIELDS = "id nope";\n'
        'export const FRAGMENT = "id name";\n'
        "export const GOOD = `query Good { me { id } }`;\n"
        "export const BAD = `query Bad { me { ${FIELDS} } }`;\n"
        "export const BROKEN = `query Broken { me { id }`;\n"
        "export const MUTATIONS = {\n"
        "  ok: `mutation Ok($game: ID!) { startGame(gameId: $game) { __typename } }`,\n"
        "  unused: `mutation Unused($x: Int) { startGame(gameId: 1) { __typename } }`,\n"
        "} as const;\n",
        encoding="utf-8",
    )
    found = _check_documents(node, module, tmp_path)
    assert sorted(found["checked"]) == ["BAD", "GOOD", "MUTATIONS.ok", "MUTATIONS.unused"]
    assert sorted(found["errors"]) == ["BAD", "BROKEN", "MUTATIONS.unused"]
    assert any("nope" in e for e in found["errors"]["BAD"]), found
