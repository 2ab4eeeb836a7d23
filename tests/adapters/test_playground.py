"""The GraphiQL playground is served whole by the server (docs/decisions/0033):
the vendored files are the ones ``make graphiql-assets`` recorded, the page
names no other host, its files are served (and shipped in the package), and
no code of the server names a CDN. tests/browser runs it in Chromium."""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from html.parser import HTMLParser
from pathlib import Path, PurePosixPath
from urllib.parse import urlsplit

import pytest

from api.graphql.playground import STATIC_DIR, STATIC_PATH
from tests.adapters.test_access_switches import app_with

ROOT = Path(__file__).resolve().parents[2]
VENDOR = STATIC_DIR / "vendor"
SUMS = VENDOR / "SHA256SUMS"
LOCK_DIR = ROOT / "tools" / "graphiql"
# The hosts the playground used to load from (Strawberry's page: unpkg), and
# other public CDNs: no file of the server may name one.
CDN_HOSTS = ("unpkg.com", "cdn.jsdelivr.net", "cdnjs", "esm.sh")
CONTENT_TYPES = {".js": "text/javascript", ".css": "text/css"}


def recorded_sums() -> dict[str, str]:
    sums = {}
    for line in SUMS.read_text().splitlines():
        digest, name = re.fullmatch(r"([0-9a-f]{64})  (\S+)", line).groups()  # type: ignore[union-attr]
        sums[name] = digest
    return sums


def test_vendored_files_match_their_recorded_checksums() -> None:
    sums = recorded_sums()
    present = {p.name for p in VENDOR.iterdir()} - {SUMS.name}
    assert present == set(sums), "files and SHA256SUMS disagree: run make graphiql-assets"
    for name, digest in sums.items():
        assert hashlib.sha256((VENDOR / name).read_bytes()).hexdigest() == digest, name


def test_the_npm_pins_are_exact_and_locked() -> None:
    wanted = json.loads((LOCK_DIR / "package.json").read_text())["dependencies"]
    locked = json.loads((LOCK_DIR / "package-lock.json").read_text())["packages"]
    assert locked[""]["dependencies"] == wanted
    licenses = (VENDOR / "LICENSES.txt").read_text()
    for name, version in wanted.items():
        assert re.fullmatch(r"\d+\.\d+\.\d+", version), f"{name} {version}: not an exact pin"
        entry = locked[f"node_modules/{name}"]
        assert entry["version"] == version and entry["integrity"].startswith("sha512-")
        assert f"{name} {version} (npm)" in licenses, f"{name}: vendored from another version"


def test_no_server_code_names_a_cdn() -> None:
    """What a before-stop hook greps too: api/, infra/, domain/."""
    for package in ("api", "infra", "domain"):
        for path in (ROOT / package).rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts:
                data = path.read_bytes()
                named = [h for h in CDN_HOSTS if h.encode() in data]
                assert not named, f"{path.relative_to(ROOT)} names {named}"


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self.inline_scripts = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        for name in ("src", "href"):
            if found.get(name):
                self.urls.append(str(found[name]))
        if tag in ("script", "style") and "src" not in found:
            self.inline_scripts += 1
        assert not any(a.startswith("on") for a in found), f"inline handler in <{tag}>"


async def test_the_page_loads_only_its_own_files(tmp_path: Path) -> None:
    async with app_with(tmp_path, graphiql=True) as (_, client):
        r = await client.get("/graphql", headers={"accept": "text/html"})
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
        policy = r.headers["content-security-policy"]
        assert "script-src 'self'" in policy and "default-src 'none'" in policy
        assert "unsafe" not in policy
        assert not re.search(r"https?://|//[a-z]", policy)
        page = _Links()
        page.feed(r.text)
        assert page.inline_scripts == 0, "inline <script>/<style>: the policy forbids them"
        assert not re.search(r"https?://|wss?://", r.text), "the page names a host"
        files = [u for u in page.urls if not u.startswith("data:")]
        assert len(files) == 8, files  # 3 stylesheets, 5 scripts
        for url in files:
            parts = urlsplit(url)
            assert not parts.scheme and not parts.netloc, url
            assert url.startswith(f"{STATIC_PATH}/"), url
            served = await client.get(url, headers={"accept-encoding": "identity"})
            assert served.status_code == 200, url
            suffix = PurePosixPath(url).suffix
            assert served.headers["content-type"].startswith(CONTENT_TYPES[suffix]), url
            on_disk = STATIC_DIR / url.removeprefix(f"{STATIC_PATH}/")
            assert served.content == on_disk.read_bytes(), url


async def test_the_files_are_cached_and_compressed(tmp_path: Path) -> None:
    url = f"{STATIC_PATH}/vendor/graphiql.min.js"
    async with app_with(tmp_path, graphiql=True) as (_, client):
        r = await client.get(url, headers={"accept-encoding": "gzip"})
        assert r.headers["content-encoding"] == "gzip"
        assert r.content == (VENDOR / "graphiql.min.js").read_bytes()  # httpx unzips
        again = await client.get(url, headers={"if-none-match": r.headers["etag"]})
        assert again.status_code == 304


@pytest.mark.parametrize(
    "path", [f"{STATIC_PATH}/playground.js", f"{STATIC_PATH}/vendor/react.production.min.js"]
)
async def test_no_playground_files_when_graphiql_is_off(tmp_path: Path, path: str) -> None:
    async with app_with(tmp_path, graphiql=False) as (_, client):
        assert (await client.get(path)).status_code == 404


def test_the_package_ships_the_playground() -> None:
    """pyproject's package-data covers every file the page needs, so a
    regular install (the Docker image's) serves them too."""
    with (ROOT / "pyproject.toml").open("rb") as f:
        patterns = tomllib.load(f)["tool"]["setuptools"]["package-data"]["api"]
    api = ROOT / "api"
    covered = {path for pattern in patterns for path in api.glob(pattern)}
    needed = {p for p in STATIC_DIR.rglob("*") if p.is_file()}
    needed.add(api / "graphql" / "playground.html")
    assert needed <= covered, f"not package data: {sorted(map(str, needed - covered))}"
