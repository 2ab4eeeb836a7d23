# MMK server: build and test entry points. Everything runs from .venv,
# created from pyproject.toml with the exact pins of constraints.txt.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# Two stamps on the one venv: RUN_STAMP, the server's runtime dependencies
# only (`make run`); STAMP, those and the development toolchain (the `dev`
# extra: `make test`, `make check` and the rest). STAMP's recipe refreshes
# RUN_STAMP too (dev holds runtime), so `make run` after `make test`
# installs nothing, and `make test` after `make run` adds the toolchain to
# the same venv.
STAMP     := $(VENV)/.stamp
RUN_STAMP := $(VENV)/.stamp-run

# Which Hypothesis profile `make test` uses (see tests/conftest.py).
HYPOTHESIS_PROFILE ?= ci
export HYPOTHESIS_PROFILE

# `make test` runs pytest on PYTEST_WORKERS pytest-xdist workers (by default
# one more than the CPUs: a third of the suite's time is end-to-end tests
# waiting on their servers and timers, and the extra worker keeps the CPUs
# busy meanwhile: 3 min 42 s against 4 min 05 s on 2 cores; "auto": one per
# CPU; 0: in this process). worksteal: an idle worker takes queued tests
# from a busy one, so the long ones (e2e, the property shards) do not pile up
# at the end of one worker.
PYTEST_WORKERS ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 1) + 1 )))
XDIST := -n $(PYTEST_WORKERS) --dist worksteal

# `make check`, the inner loop: the pure, fast tests (no service, no server,
# no Hypothesis property), on top of `make lint`.
FAST_TESTS := tests/unit tests/usecases tests/golden

.DEFAULT_GOAL := test
.PHONY: venv run check test test-long fuzz bench load lint typecheck imports lock clean schema docs \
  graphiql-assets node-deps check-upgrades web-client screenshots

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade pip

# A venv whose dev install is up to date (STAMP newer than both files)
# already holds the runtime's: nothing to install.
$(RUN_STAMP): pyproject.toml constraints.txt | $(BIN)/python
	@if [ $(STAMP) -nt pyproject.toml ] && [ $(STAMP) -nt constraints.txt ]; then :; else \
	  echo '$(BIN)/python -m pip install -c constraints.txt -e .'; \
	  $(BIN)/python -m pip install -c constraints.txt -e .; \
	fi
	touch $@

$(STAMP): pyproject.toml constraints.txt | $(BIN)/python
	$(BIN)/python -m pip install -c constraints.txt -e '.[dev]'
	touch $@ $(RUN_STAMP)

venv: $(STAMP)

# The server for local development (127.0.0.1:8000, the playground at
# /graphql) in development mode, MMK_DEV: pages served from this machine (a
# Vite dev server on http://localhost:5173, any port of localhost, 127.0.0.1
# or [::1]) may call it (CORS and the WebSocket Origin check). Other
# origins: `make run MMK_CORS_ORIGINS=https://...`; `make run MMK_DEV=0`
# for the production rule.
MMK_DEV ?= 1
run: $(RUN_STAMP)
	MMK_DEV='$(MMK_DEV)' $(BIN)/mmk serve

# mypy checks the files of [tool.mypy] in pyproject.toml: domain infra api tests tools examples.
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

typecheck: $(STAMP)
	$(BIN)/mypy

imports: $(STAMP)
	$(BIN)/lint-imports

check: lint
	$(BIN)/pytest -q $(FAST_TESTS)

# --timeout: a test that hangs fails after 5 minutes (its own timeout mark
# wins) rather than holding the whole run until CI's limit.
test: lint node-deps
	$(BIN)/pytest $(XDIST) --timeout 300

# The Node clients of tests/node (graphql-ws, Apollo Client, graphql-codegen,
# TypeScript; tests/e2e/test_node_clients.py): npm ci of the pinned
# package-lock.json (npm checks each tarball's sha512) when it changed. Without
# npm, a notice: the tests skip (and fail under MMK_REQUIRE_SERVICES=1).
NODE_DIR   := tests/node
NODE_STAMP := $(NODE_DIR)/node_modules/.package-lock.json
# The TypeScript example (examples/typescript, run by tests/e2e/test_examples.py)
# and the reference web client (examples/web, served at /play;
# docs/web-client.md: esbuild, TypeScript, axe-core for tests/browser), the
# same way, each from its own pinned package-lock.json.
EXAMPLE_TS       := examples/typescript
EXAMPLE_TS_STAMP := $(EXAMPLE_TS)/node_modules/.package-lock.json
WEB_DIR          := examples/web
WEB_STAMP        := $(WEB_DIR)/node_modules/.package-lock.json
%/node_modules/.package-lock.json: %/package.json %/package-lock.json
	cd $* && npm ci --ignore-scripts --no-audit --no-fund \
	  --registry=https://registry.npmjs.org/
	touch $@

node-deps:
	@if command -v npm >/dev/null 2>&1; then \
	  $(MAKE) --no-print-directory $(NODE_STAMP) $(EXAMPLE_TS_STAMP) $(WEB_STAMP); \
	else \
	  echo "make: npm not found: the Node client tests (tests/node, examples/typescript, examples/web) will be skipped"; \
	fi

# The web client's bundle, committed in api/static/play (index.html, app.js,
# app.css): type-checked (tsc --strict), then built by esbuild from
# examples/web/src; tests/browser/test_play_files.py rebuilds it and fails
# when the committed files differ.
web-client: node-deps
	cd $(WEB_DIR) && node node_modules/typescript/bin/tsc -p tsconfig.json
	cd $(WEB_DIR) && node build.mjs ../../api/static/play

# docs/screenshots/*.png, taken by the web client's browser tests (Chromium
# against a real server) with MMK_SCREENSHOTS set; `make test` never sets it,
# so it never rewrites them.
screenshots: $(STAMP) node-deps
	MMK_SCREENSHOTS=docs/screenshots $(BIN)/pytest -q -p no:randomly tests/browser/test_play.py

# Export the GraphQL SDL and, beside it, possibleTypes.json (Apollo Client's
# possibleTypes); tests/api/test_schema_file.py fails when either drifts.
schema: $(STAMP)
	$(BIN)/python -m api.graphql.export schema.graphql

# Cut release VERSION (docs/releases.md): set pyproject.toml's version and a
# dated CHANGELOG.md heading first; this checks them, checks the committed
# schema.graphql against the last release's (deprecations, the window) and
# keeps it as docs/releases/schema-VERSION.graphql. Commit the three, tag
# vVERSION.
.PHONY: release
release: $(RUN_STAMP)
	@test -n '$(VERSION)' || { echo 'usage: make release VERSION=x.y.z' >&2; exit 2; }
	$(BIN)/python -m tools.release cut '$(VERSION)'

# docs/configuration.md, from the settings' table (infra/settings_docs.py);
# tests/unit/test_configuration_doc.py fails when it drifts.
docs: $(STAMP)
	$(BIN)/python -m infra.settings_docs docs/configuration.md

# The GraphiQL playground's JavaScript and CSS, served by the server itself
# (docs/decisions/0033): npm ci of the pinned tools/graphiql/package-lock.json
# (npm checks each tarball's sha512), then tools/graphiql/vendor.py copies the
# files into api/static/vendor with their SHA256SUMS. The result is committed;
# nothing needs the network at run time or in CI. To upgrade, change the pins
# in tools/graphiql/package.json, run `npm install --package-lock-only
# --ignore-scripts` there, then this target.
GRAPHIQL_BUILD := build/graphiql
graphiql-assets: $(STAMP)
	rm -rf $(GRAPHIQL_BUILD)
	mkdir -p $(GRAPHIQL_BUILD)
	cp tools/graphiql/package.json tools/graphiql/package-lock.json $(GRAPHIQL_BUILD)/
	cd $(GRAPHIQL_BUILD) && npm ci --ignore-scripts --no-audit --no-fund \
	  --registry=https://registry.npmjs.org/
	$(BIN)/python tools/graphiql/vendor.py $(GRAPHIQL_BUILD)/node_modules api/static/vendor
	rm -rf $(GRAPHIQL_BUILD)

test-long: $(STAMP)
	HYPOTHESIS_PROFILE=long $(BIN)/pytest $(XDIST)

# The fuzz tests only (README "Fuzzing"), searching much harder: FUZZ_EXAMPLES
# examples per GraphQL operation and per decoder property, not derandomized.
FUZZ_EXAMPLES ?= 400
fuzz: $(STAMP)
	FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) HYPOTHESIS_PROFILE=long $(BIN)/pytest tests/fuzz \
	  tests/property/test_decoder_fuzz.py tests/property/test_log_fuzz.py \
	  tests/integration/test_corrupt_game_rows.py

# Benchmarks live in tests/bench, which the default pytest run ignores
# (addopts in pyproject.toml); this target overrides addopts to collect them.
# They also need the bench-only extra (RLCard, the engine's reference in
# tests/bench/test_engine_vs_rlcard_bench.py), installed once behind its own
# stamp so that `make test` and `make check` never need it.
BENCH_STAMP := $(VENV)/.stamp-bench
$(BENCH_STAMP): $(STAMP)
	$(BIN)/python -m pip install -c constraints.txt -e '.[dev,bench]'
	touch $@

bench: $(BENCH_STAMP)
	$(BIN)/pytest -o addopts='-ra --strict-markers --strict-config' -p no:cacheprovider -s tests/bench

# A bounded load test (tests/load/run.py, not collected by pytest): bots-only
# and person-vs-bots games with WebSocket spectators against one server
# process; fails on any error. Options: LOAD_ARGS='--duration 30 --bot-games 8'
# (--backend postgres takes DATABASE_URL and REDIS_URL).
LOAD_ARGS ?=
load: $(STAMP)
	$(BIN)/python -m tests.load.run $(LOAD_ARGS)

# The seams on libraries' internals (docs/architecture.md, "Seams") against
# the newest releases pyproject.toml allows, in a throw-away venv without
# constraints.txt: each seam's differential test (its path against the
# library's own) and its unit tests. `make test` keeps the pins; run this
# before `make lock` moves them.
SEAM_TESTS := tests/api/test_plain_selection.py tests/api/test_root_completion.py \
  tests/api/test_push.py tests/api/test_ws_handler.py tests/api/test_http_streams.py \
  tests/api/test_introspection_cache.py tests/api/test_declared_mutations.py \
  tests/adapters/test_connection_limits.py tests/adapters/test_work_meter.py \
  tests/adapters/test_gc_pacing.py tests/integration/test_direct_statements.py \
  tests/api/test_ws_malformed.py tests/api/test_revocation.py tests/api/test_operation_choice.py \
  tests/usecases/test_streams.py tests/e2e/test_connection_hygiene.py \
  tests/e2e/test_stuck_subscriber.py
check-upgrades:
	rm -rf $(VENV)-upgrades
	$(PYTHON) -m venv $(VENV)-upgrades
	$(VENV)-upgrades/bin/python -m pip install --quiet --upgrade pip
	$(VENV)-upgrades/bin/python -m pip install --quiet --upgrade --upgrade-strategy eager '.[dev]'
	$(VENV)-upgrades/bin/python -m pip list 2>/dev/null | grep -iE \
	  '^(strawberry-graphql|graphql-core|uvicorn|starlette|sqlalchemy|websockets|httptools) '
	$(VENV)-upgrades/bin/pytest -p no:cacheprovider -q $(SEAM_TESTS)
	rm -rf $(VENV)-upgrades build *.egg-info

# Re-resolve every dependency (transitive included) to its latest release in a
# throw-away venv and write the exact pins to constraints.txt.
lock:
	rm -rf $(VENV)-lock
	$(PYTHON) -m venv $(VENV)-lock
	$(VENV)-lock/bin/python -m pip install --upgrade pip
	$(VENV)-lock/bin/python -m pip install '.[dev,bench]'
	{ \
	  echo '# Exact pins for every package that `pip install -e ".[dev,bench]"` brings in.'; \
	  echo '# Generated by `make lock` (latest releases, resolved in a fresh venv);'; \
	  echo '# edit pyproject.toml, then run `make lock` to regenerate. Do not edit by hand.'; \
	  $(VENV)-lock/bin/python -m pip freeze --exclude mmk-server; \
	} > constraints.txt.new
	mv constraints.txt.new constraints.txt
	rm -rf $(VENV)-lock build *.egg-info

clean:
	rm -rf $(VENV) $(VENV)-lock $(VENV)-upgrades build dist *.egg-info .mypy_cache .ruff_cache \
	  $(NODE_DIR)/node_modules $(NODE_DIR)/generated $(NODE_DIR)/dist \
	  $(EXAMPLE_TS)/node_modules $(EXAMPLE_TS)/generated $(EXAMPLE_TS)/dist \
	  $(WEB_DIR)/node_modules \
	  .pytest_cache .hypothesis .import_linter_cache
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
