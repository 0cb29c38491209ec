# Targets mirror CI: `make test` is what .ci/run runs.
SHELL := /bin/bash
# Not `npm ci`: chdb lists optional platform packages that are not published (darwin, arm64), and
# `npm ci` refuses a lock file without them. `npm install` installs the locked versions.
NPM_INSTALL := npm install --no-audit --no-fund
# npm says nothing for a minute at its default level; `http` prints a line per package fetched.
NPM_LOGLEVEL ?= http
# One process per entry point: `node --import tsx` rather than the tsx CLI, whose parent process
# relays signals and would cut a graceful SIGTERM drain short.
TSX := node --import tsx
MOCHA := node_modules/.bin/mocha
SPECS := 'test/unit/**/*.test.ts' 'test/integration/**/*.test.ts' 'test/browser/**/*.test.ts'
DASHBOARD_SRC := $(shell find dashboard/src -type f -not -path 'dashboard/src/generated/*') dashboard/index.html dashboard/vite.config.ts
# The dashboard's types of the API, generated from the OpenAPI document (never written by hand).
DASHBOARD_API_TYPES := dashboard/src/generated/openapi.d.ts
SERVER_SRC := $(shell find server -name '*.ts')

.PHONY: start test test-unit test-integration test-node22 test-node24 lint typecheck migrate worker qrctl seed-demo \
        bench bench-api bench-redirect bench-redirect-tls bench-analytics bench-webhooks bench-render bench-import bench-stream docs-images openapi install clean \
        mutation

# Installs dependencies when package-lock.json is newer than the last install.
node_modules/.installed: package.json package-lock.json
	@echo "==> Installing dependencies with npm (the first time takes a minute or two; npm reports each step)"
	$(NPM_INSTALL) --loglevel=$(NPM_LOGLEVEL)
	@touch $@
	@echo "==> Dependencies installed"

# The MCP Inspector that the tests run (the service never does) declares Node 22.19 or later: it lives
# in tools/inspector with its own lock file and the Node it needs (the `node` package, 24), and is
# installed by that Node's npm (`npx -y node@<that version>`, from the npm registry), so npm on
# Node 20 meets no engine it does not satisfy (no EBADENGINE). npm turns on Node's module compile
# cache where Node has one (22 and later), which would leave /tmp/node-compile-cache behind.
INSPECTOR_NODE = $(shell node -p "require('./tools/inspector/package.json').dependencies.node")
tools/inspector/node_modules/.installed: tools/inspector/package.json tools/inspector/package-lock.json
	@echo "==> Installing the MCP Inspector of the tests with Node $(INSPECTOR_NODE)"
	cd tools/inspector && NODE_DISABLE_COMPILE_CACHE=1 npx -y node@$(INSPECTOR_NODE) "$$(npm root -g)/npm/bin/npm-cli.js" ci --no-audit --no-fund --loglevel=$(NPM_LOGLEVEL)
	@touch $@

install: node_modules/.installed

# What the suites need besides the project's dependencies (the service itself never runs the Inspector).
INSPECTOR := tools/inspector/node_modules/.installed

# The OpenAPI document, written again when a server source changed (`make openapi` always writes it).
var/openapi.json: node_modules/.installed $(SERVER_SRC)
	@mkdir -p var
	$(TSX) server/cli/openapi.ts > $@.tmp && mv $@.tmp $@

# The API's types for the dashboard, from the OpenAPI document (openapi-typescript).
$(DASHBOARD_API_TYPES): var/openapi.json
	@mkdir -p $(@D)
	node_modules/.bin/openapi-typescript var/openapi.json --empty-objects-unknown --default-non-nullable false --output $@.tmp.d.ts --silent && mv $@.tmp.d.ts $@

## dashboard: build the web dashboard (dashboard/ -> dashboard/dist) when its sources or the API changed
dashboard/dist/index.html: node_modules/.installed $(DASHBOARD_SRC) $(DASHBOARD_API_TYPES)
	@echo "==> Building the web dashboard"
	node_modules/.bin/vite build --config dashboard/vite.config.ts

dashboard: dashboard/dist/index.html

## start: install if needed, build the dashboard, migrate, and run the service on the embedded defaults
## (already running: one line, exit 0; the service itself exits 3 then)
start: install dashboard
	@# The shell waits for the service through a stop signal (a trap runs only once the service has
	@# exited), so a signal to the whole process group leaves the drain to the service; exit code 3
	@# (already running) is not an error of make's.
	@trap : TERM INT; QR_PRINT_BANNER=1 $(TSX) server/main.ts || { rc=$$?; [ $$rc -eq 3 ] || exit $$rc; }

## test: install if needed and run the whole suite (unit + integration + browser, real embedded stores)
test: install $(INSPECTOR) dashboard
	$(MOCHA) $(SPECS)

test-unit: install
	$(MOCHA) 'test/unit/**/*.test.ts'

test-integration: install $(INSPECTOR)
	$(MOCHA) 'test/integration/**/*.test.ts'

## test-node22, test-node24: the unit and integration suites on Node 22 or 24, taken from the npm
## registry as the `node` package (`npx -y node@22`); NODE_SPECS narrows them to some files.
NODE_SPECS ?= 'test/unit/**/*.test.ts' 'test/integration/**/*.test.ts'
test-node22 test-node24: test-node%: install $(INSPECTOR) dashboard
	npx -y node@$* node_modules/mocha/bin/mocha.js $(NODE_SPECS)

## test-browser: the dashboard in Debian's Chromium (installed with apt-get when missing)
test-browser: install $(INSPECTOR) dashboard
	$(MOCHA) 'test/browser/**/*.test.ts'

## lint: eslint + prettier, the import rules (dependency-cruiser), and the OpenAPI document linted by redocly
## and by Spectral (OpenAPI rules + OWASP API Security Top 10; .spectral.yaml says what is turned off and why)
lint: install openapi $(DASHBOARD_API_TYPES)
	node_modules/.bin/eslint .
	node_modules/.bin/prettier --check .
	node_modules/.bin/depcruise server workers clickhouse test bin dashboard/src --config .dependency-cruiser.cjs
	# Exports nothing imports (knip, ISC; entry points and files in knip.json): fail lint.
	node_modules/.bin/knip --include exports,types --no-progress
	node_modules/.bin/redocly lint --config .redocly.yaml var/openapi.json
	node_modules/.bin/spectral lint --ruleset .spectral.yaml --fail-severity warn var/openapi.json

## openapi: write the OpenAPI 3.1 document to var/openapi.json
openapi: install
	@mkdir -p var
	$(TSX) server/cli/openapi.ts > var/openapi.json.tmp && mv var/openapi.json.tmp var/openapi.json

typecheck: install $(DASHBOARD_API_TYPES)
	node_modules/.bin/tsc --noEmit
	node_modules/.bin/tsc --noEmit -p dashboard/tsconfig.json

## migrate: apply Postgres and ClickHouse migrations
migrate: install
	$(TSX) server/cli/qrctl.ts migrate

## worker: graphile-worker alone
worker: install
	$(TSX) workers/main.ts

## seed-demo: an organization with brands, codes and synthetic scans (SCANS=1000000)
seed-demo: install
	$(TSX) server/cli/qrctl.ts seed-demo --scans $${SCANS:-1000000}

## mutation: Stryker mutation testing of the core rule modules, one after another (MODULE=routing for one);
## fails when a module scores below 85% (test/mutation/stryker.config.mjs, docs/testing.md)
MUTATION_MODULES := routing money hostname abilities http-url admission scannability scan-buffer
mutation: install
	@failed=""; for m in $(or $(MODULE),$(MUTATION_MODULES)); do \
	  echo "== mutation testing: $$m"; \
	  MUTATION_MODULE=$$m NODE_OPTIONS="--require ./test/mutation/cjs-extension.cjs --import tsx" \
	    node test/mutation/run.ts || failed="$$failed $$m"; \
	done; \
	if [ -n "$$failed" ]; then echo "mutation score below the break threshold (or run failed):$$failed"; exit 1; fi

## bench: every benchmark
bench: bench-api bench-redirect bench-redirect-tls bench-analytics bench-webhooks bench-render bench-import bench-stream

## bench-api: an authenticated, metered, rate-limited read beside a bare Koa route, then the QR code list and reads with 100,000 codes; exits non-zero when the metered read's goal is missed (after every part has run)
bench-api: install
	@status=0; \
	$(TSX) test/bench/api.ts || status=1; \
	$(TSX) test/bench/api-codes.ts || status=1; \
	exit $$status

## bench-redirect: the public redirect with scan recording under a realistic mix (1,000 codes, real user agents, 10,000 X-Forwarded-For addresses, 20 languages) beside a bare node:http 302 in the same run; exits non-zero when a goal is missed
bench-redirect: install
	$(TSX) test/bench/redirect.ts

## bench-stream: 20 live stream subscribers while wrk drives the redirect (realistic mix): answer-to-event latency, delivered = recorded, throughput with and without subscribers (docs/stream.md)
bench-stream: install
	$(TSX) test/bench/stream.ts

## bench-redirect-tls: the HTTPS redirect (SNI) with and without session resumption, beside plain HTTP and a bare node:https 302; exits non-zero when full handshakes fall below 90% of the bare server's
bench-redirect-tls: install
	$(TSX) test/bench/redirect-tls.ts

## bench-analytics: analytics p95 per scope and range at SCANS scans (default 10,000,000), seeded inside ClickHouse; what the rollup views cost an insert; exits non-zero when a goal is missed (after both parts have run)
bench-analytics: install
	@status=0; \
	$(TSX) test/bench/analytics.ts --scans $${SCANS:-10000000} || status=1; \
	$(TSX) test/bench/analytics-insert.ts || status=1; \
	exit $$status

## bench-webhooks: 10,000 events through the outbox and graphile-worker to a local receiver (BENCH_EVENTS)
bench-webhooks: install
	$(TSX) test/bench/webhooks.ts

## bench-import: an import of 10,000 links with 1,000,000 visits from a local Shlink server (BENCH_IMPORT_LINKS, BENCH_IMPORT_VISITS): links/s, scans/s, the whole time and the memory, beside the source read alone
bench-import: install
	$(TSX) test/bench/import.ts

## bench-render: one QR render (plain and styled; SVG, PNG 1024 px) beside the qrcode library's own (BENCH_RENDERS), and the styled PNG by phase, then an export of 10,000 SVGs timed and its memory sampled (BENCH_EXPORT_CODES), then the redirect's p99 alone and beside heavy renders (BENCH_RENDER_CLIENTS) and identical second requests, then the full scannability verdict of 1024 px styles beside the quick check and the qrcode PNG (BENCH_VERDICTS); every part runs, and the target exits non-zero when any part missed a goal
bench-render: install
	@status=0; \
	$(TSX) test/bench/render.ts || status=1; \
	node --expose-gc --import tsx test/bench/render-export.ts || status=1; \
	$(TSX) test/bench/render-stall.ts || status=1; \
	$(TSX) test/bench/verdict.ts || status=1; \
	exit $$status

## docs-images: the example images of docs/rendering.md, drawn by the service's engine, and the pictures of
## docs/dashboard.md, docs/landing-pages.md and docs/pixels.md: the browser tests run with their screenshots kept in var/test-output (tests
## otherwise write them into their own temporary directory), then the pictures are copied from there
DOCS_SHOTS := var/test-output
docs-images: install dashboard
	$(TSX) test/docs/render-examples.ts
	rm -rf $(DOCS_SHOTS)/screenshots
	TEST_OUTPUT_DIR=$(abspath $(DOCS_SHOTS)) $(MOCHA) 'test/browser/**/*.test.ts'
	TEST_OUTPUT_DIR=$(abspath $(DOCS_SHOTS)) $(TSX) test/docs/dashboard-images.ts

clean:
	rm -rf var node_modules/.installed tools/inspector/node_modules/.installed dashboard/dist dashboard/src/generated
