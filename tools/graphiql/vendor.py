"""Copy the GraphiQL playground's browser files out of an ``npm ci`` of this
folder into the server package (``make graphiql-assets``).

    python tools/graphiql/vendor.py NODE_MODULES OUT_DIR

``NODE_MODULES`` is the ``node_modules`` that ``npm ci`` made from
``package-lock.json`` (npm checked every tarball against the lockfile's
sha512 ``integrity``); ``OUT_DIR`` (``api/static/vendor``) is replaced by:

- the files of ``FILES``, byte for byte, except that a trailing
  ``sourceMappingURL`` comment is dropped (the maps are not shipped, and a
  browser's developer tools would ask the server for them);
- ``LICENSES.txt``: each package's license;
- ``SHA256SUMS`` (``sha256sum -c`` format) of everything above, which
  ``tests/api/test_graphiql_assets.py`` checks the committed files against.

Each package's version must be the exact pin of ``package.json`` and of
``package-lock.json``, and no file may name a CDN host: the playground must
work offline and under a strict Content-Security-Policy
(docs/decisions/0033).
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
# Served name -> (npm package, path inside the package).
FILES: dict[str, tuple[str, str]] = {
    "react.production.min.js": ("react", "umd/react.production.min.js"),
    "react-dom.production.min.js": ("react-dom", "umd/react-dom.production.min.js"),
    "graphiql.min.js": ("graphiql", "graphiql.min.js"),
    "graphiql.min.css": ("graphiql", "graphiql.min.css"),
    "plugin-explorer.umd.js": ("@graphiql/plugin-explorer", "dist/index.umd.js"),
    "plugin-explorer.css": ("@graphiql/plugin-explorer", "dist/style.css"),
}
# @graphiql/plugin-explorer ships no license file; it comes from the same
# repository (graphql/graphiql, MIT) as graphiql, whose file covers it.
LICENSE_FROM = {"@graphiql/plugin-explorer": "graphiql"}
CDN_HOSTS = ("unpkg.com", "cdn.jsdelivr.net", "cdnjs", "esm.sh")
SUMS = "SHA256SUMS"
_SOURCE_MAP = re.compile(
    rb"\n?(?://# sourceMappingURL=[^\n]*|/\*# sourceMappingURL=[^\n]*?\*/)\s*$"
)


def pinned_versions() -> dict[str, str]:
    """Each direct dependency's exact version, agreed by package.json and the lockfile."""
    wanted: dict[str, str] = json.loads((HERE / "package.json").read_text())["dependencies"]
    locked = json.loads((HERE / "package-lock.json").read_text())["packages"]
    for name, version in wanted.items():
        if not re.fullmatch(r"\d+\.\d+\.\d+", version):
            raise SystemExit(f"package.json: {name} {version!r} is not an exact version")
        if locked[f"node_modules/{name}"]["version"] != version:
            raise SystemExit(f"package-lock.json: {name} is not at {version}; run npm install")
    return wanted


def strip_source_map(data: bytes) -> bytes:
    return _SOURCE_MAP.sub(b"\n", data, count=1)


def vendor(node_modules: Path, out: Path) -> None:
    versions = pinned_versions()
    for name, version in versions.items():
        found = json.loads((node_modules / name / "package.json").read_text())["version"]
        if found != version:
            raise SystemExit(f"{node_modules / name}: version {found}, not {version}: npm ci?")
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for served, (package, path) in FILES.items():
        data = strip_source_map((node_modules / package / path).read_bytes())
        named = [host for host in CDN_HOSTS if host.encode() in data]
        if named:
            raise SystemExit(f"{package}/{path} names {named}: it would load from a CDN")
        (out / served).write_bytes(data)
    licenses = []
    for package in sorted({p for p, _ in FILES.values()}):
        source = node_modules / LICENSE_FROM.get(package, package) / "LICENSE"
        licenses.append(
            f"{'=' * 72}\n{package} {versions[package]} (npm), license file of "
            f"{LICENSE_FROM.get(package, package)}:\n\n{source.read_text().strip()}\n"
        )
    (out / "LICENSES.txt").write_text("\n".join(licenses))
    sums = [
        f"{hashlib.sha256(f.read_bytes()).hexdigest()}  {f.name}\n"
        for f in sorted(out.iterdir())
        if f.name != SUMS
    ]
    (out / SUMS).write_text("".join(sums))
    print(f"{len(sums)} files in {out}, checksums in {out / SUMS}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    vendor(Path(sys.argv[1]), Path(sys.argv[2]))
