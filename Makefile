# cdprelay — two commands on a fresh Debian machine:
#   make run    the relay with a dedicated headless Chromium (CDP on 127.0.0.1:9222)
#   make test   every test (installs Chromium and the npm test clients first)
# and the release:
#   make dist   the binaries for Linux, macOS and Windows, the extension's
#               zips and SHA256SUMS, in dist/

SHELL       := /bin/bash
GO          ?= go
ADDR        ?= 127.0.0.1:9222
TOOLS       := $(CURDIR)/.tools
STATICCHECK := $(TOOLS)/staticcheck
STATICCHECK_VERSION := v0.8.2
GOVULNCHECK := $(TOOLS)/govulncheck
GOVULNCHECK_VERSION := v1.9.0
# The formatter and linter of the extension's and the live view's
# JavaScript, pinned by tools/js/package-lock.json.
JS          := tools/js
# The Kubernetes schema deploy/'s manifests are validated against,
# pinned by tools/manifests/package-lock.json.
MANIFESTS   := tools/manifests
FUZZTIME    ?= 30s
SHORT_FUZZTIME ?= 3s
VERSION     ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
# The platforms a release is built for, and CI builds and vets.
PLATFORMS   := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64
DIST        := dist
EXE         := $(shell $(GO) env GOEXE)

.PHONY: all build run test deps chromium npm js-deps manifests-lint lint vet fmt-check staticcheck js-lint fmt-js vulncheck unit classic e2e-fenced fuzz fuzz-short smoke bench clean cross dist

all: build

build:
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o bin/cdprelay$(EXE) ./cmd/cdprelay

# The relay with its embedded default: a dedicated headless Chromium with the
# cdprelay extension, connected to this relay. Ctrl-C stops both.
run: chromium build
	./bin/cdprelay$(EXE) serve --launch --addr $(ADDR)

deps: chromium npm

# Debian's chromium, unless CHROME_PATH or an installed one is found. Elsewhere
# nothing is installed: cdprelay looks for a browser itself (internal/chromium)
# and, finding none, says where it looked; this says what to install.
chromium:
	@if [ -n "$$CHROME_PATH" ] && [ -x "$$CHROME_PATH" ]; then exit 0; fi; \
	if [ -x /usr/lib/chromium/chromium ]; then exit 0; fi; \
	if [ -f /etc/debian_version ] && command -v apt-get >/dev/null; then \
	  echo "installing Debian's chromium"; \
	  SUDO=""; if [ "$$(id -u)" != 0 ]; then SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null; \
	  exit; \
	fi; \
	case "$$(uname -s)" in \
	  Darwin) want="Chromium (brew install --cask chromium)";; \
	  MINGW*|MSYS*|CYGWIN*) want="Microsoft Edge (part of Windows)";; \
	  *) want="your system's chromium package";; \
	esac; \
	echo "Not Debian: nothing installed. serve --launch uses an installed Chromium, Chrome for Testing or Edge"; \
	echo "(Google Chrome ignores --load-extension): $$want, or npx playwright install chromium; or CHROME_PATH."

# The real CDP clients the end-to-end tests drive, pinned by the lockfile.
npm: e2e/node_modules/.installed

e2e/node_modules/.installed: e2e/package.json e2e/package-lock.json
	cd e2e && npm ci --no-audit --no-fund --loglevel=error
	touch $@

$(STATICCHECK):
	GOBIN=$(TOOLS) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

$(GOVULNCHECK):
	GOBIN=$(TOOLS) $(GO) install golang.org/x/vuln/cmd/govulncheck@$(GOVULNCHECK_VERSION)

js-deps: $(JS)/node_modules/.installed

$(JS)/node_modules/.installed: $(JS)/package.json $(JS)/package-lock.json
	cd $(JS) && npm ci --no-audit --no-fund --loglevel=error
	touch $@

# prettier --check and eslint over extension/*.js and web/static/*.js.
js-lint: js-deps
	cd $(JS) && npm run -s fmt-check && npm run -s lint

$(MANIFESTS)/node_modules/.installed: $(MANIFESTS)/package.json $(MANIFESTS)/package-lock.json
	cd $(MANIFESTS) && npm ci --no-audit --no-fund --loglevel=error
	touch $@

# Every resource of deploy/kustomization.yaml against the Kubernetes
# schema (how they fit together is deploy's Go test).
manifests-lint: $(MANIFESTS)/node_modules/.installed
	cd $(MANIFESTS) && npm run -s lint

# Formats extension/*.js and web/static/*.js in place.
fmt-js: js-deps
	cd $(JS) && npm run -s fmt

# govulncheck needs the Go vulnerability database, which a machine without
# a way out cannot fetch: that is said and skipped, not failed. Any other
# failure, a vulnerability found among them, fails.
vulncheck: $(GOVULNCHECK)
	@out=$$(mktemp); \
	if $(GOVULNCHECK) ./... >$$out 2>&1; then cat $$out; rm -f $$out; exit 0; fi; \
	if grep -q '^govulncheck: fetching vulnerabilities' $$out; then \
	  echo "govulncheck SKIPPED: the vulnerability database cannot be reached from this machine:"; \
	  sed 's/^/  /' $$out; rm -f $$out; exit 0; \
	fi; \
	cat $$out; rm -f $$out; exit 1

fmt-check:
	@out=$$(gofmt -l .); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# e2e/chromedp-classic is a module of its own (an older chromedp, for the
# classic chromedp.NewRemoteAllocator API): ./... does not reach it.
CLASSIC := e2e/chromedp-classic

vet:
	$(GO) vet ./...
	cd $(CLASSIC) && $(GO) vet ./...

# Every platform of a release, from this one: the binary builds, and go vet
# type-checks every package with its tests (e2e, tools and the classic module
# included), so a call that exists on one system only fails here. (Cross
# builds are without cgo by default; this system's vet is make vet's, cached.)
cross:
	@set -e; for p in $(PLATFORMS); do \
	  os=$${p%/*}; arch=$${p#*/}; \
	  echo "cross $$os/$$arch: build ./cmd/cdprelay, vet ./... and $(CLASSIC)"; \
	  GOOS=$$os GOARCH=$$arch $(GO) build -o /dev/null ./cmd/cdprelay; \
	  GOOS=$$os GOARCH=$$arch $(GO) vet ./...; \
	  (cd $(CLASSIC) && GOOS=$$os GOARCH=$$arch $(GO) vet ./...); \
	done
	@echo "cross linux/riscv64: vet ./relay/... (the code without the assembly of amd64 and arm64)"
	@GOOS=linux GOARCH=riscv64 $(GO) vet ./relay/...

# The release: a static binary per platform with the version stamped, the
# extension as zips (tools/dist), SHA256SUMS; sizes printed.
dist:
	rm -rf $(DIST)
	mkdir -p $(DIST)
	@set -e; for p in $(PLATFORMS); do \
	  os=$${p%/*}; arch=$${p#*/}; ext=; if [ $$os = windows ]; then ext=.exe; fi; \
	  echo "build $(DIST)/cdprelay-$$os-$$arch$$ext"; \
	  GOOS=$$os GOARCH=$$arch CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w -X main.version=$(VERSION)" \
	    -o $(DIST)/cdprelay-$$os-$$arch$$ext ./cmd/cdprelay; \
	done
	$(GO) run ./tools/dist -dir $(DIST)

staticcheck: $(STATICCHECK)
	$(STATICCHECK) ./...
	cd $(CLASSIC) && $(STATICCHECK) ./...

lint: fmt-check vet staticcheck vulncheck js-lint manifests-lint

# The hot path's zero-allocation tests run once more without the race
# detector, whose sync.Pool drops buffers at random (under -race they skip).
unit:
	CI=$${CI:-} $(GO) test -race -count=1 -timeout 20m ./...
	$(GO) test -count=1 -run 'Allocs$$' ./relay

# After unit, never beside it: it runs a browser of its own, and the
# end-to-end package's is gone by then.
classic:
	cd $(CLASSIC) && CI=$${CI:-} $(GO) test -race -count=1 -timeout 10m ./...

# Every fuzz target for a few seconds of exploration. Not part of `make
# test`, which stays deterministic: it runs every target's seed corpus (go
# test does), and exploring is `make fuzz` (each for FUZZTIME), with any
# failing input saved as a seed.
fuzz-short:
	@$(MAKE) --no-print-directory fuzz FUZZTIME=$(SHORT_FUZZTIME)

fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "fuzz $$pkg $$f ($(FUZZTIME))"; \
	    stamp=$$(mktemp); out=$$(mktemp); \
	    if ! $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg >$$out 2>&1; then \
	      cat $$out; \
	      dir=$$($(GO) list -f '{{.Dir}}' $$pkg)/testdata/fuzz/$$f; \
	      if [ -n "$$(find $$dir -newer $$stamp -type f 2>/dev/null)" ]; then rm -f $$out $$stamp; exit 1; fi; \
	      echo "no failing input was saved: the fuzzing engine itself failed (a loaded machine); once more"; \
	      $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg >$$out 2>&1 || { cat $$out; rm -f $$out $$stamp; exit 1; }; \
	    fi; \
	    rm -f $$out $$stamp; \
	  done; \
	done

# The developer tools (tools/bench, tools/soak, tools/scale) for a few
# seconds each, one after another (two of them run a browser): they build
# on the product's assembly, so a change that breaks them shows here.
smoke: chromium npm
	@mkdir -p bin
	$(GO) build -o bin/ ./tools/bench ./tools/soak ./tools/scale
	./bin/scale -smoke
	./bin/bench -smoke
	./bin/soak -smoke

# The clients' end-to-end tests once more with the URL fence of
# --allowed-domains on (both test origins inside it): the navigation
# backstop and the first-request rules must not change what they see.
FENCED_TESTS := TestPlaywright|TestPuppeteer|TestChromedp|TestRod|TestChromeRemoteInterface|TestLiveView|TestPersonInCharge
e2e-fenced:
	CI=$${CI:-} CDPRELAY_E2E_ALLOWED_DOMAINS=127.0.0.1,127.0.0.2 $(GO) test -race -count=1 -timeout 10m -run '$(FENCED_TESTS)' ./e2e

test: deps lint cross unit classic e2e-fenced smoke

# Benchmarks are not tests: `make test` never runs them. First the relay
# alone (Go benchmarks with in-process stand-ins), then direct CDP, the
# extension alone and cdprelay side by side against one headless Chromium
# (a few minutes). Prints the figures and writes docs/BENCHMARKS.md.
# cdprelay is the product as cdprelay serve assembles it; BENCH_ARGS=-bare
# measures the relay alone.
GOBENCH    = $(GO) test -run=^$$ -bench=. -benchmem -count=1 ./relay ./internal/wire ./secrets
BENCH_ARGS ?=

bench: chromium
	@mkdir -p bin docs
	set -o pipefail; $(GOBENCH) | tee bin/gobench.txt
	$(GO) run ./tools/bench -gobench bin/gobench.txt -gobench-cmd "$(GOBENCH)" -out docs/BENCHMARKS.md $(BENCH_ARGS)

# The relay's per-message benchmarks (forward, reply, event) of BASE, a
# commit, against the working tree, side by side: time over ROUNDS
# alternate runs, and instructions per message when valgrind is installed
# (tools/benchcmp.sh says how).
BASE   ?= HEAD
ROUNDS ?= 8
bench-compare:
	bash tools/benchcmp.sh $(BASE) $(ROUNDS)

# What the first-request fence adds to a popup's first navigation, fence on
# and off in alternating blocks against one headless Chromium (under a
# minute; prints the figures).
bench-popup: chromium
	CDPRELAY_E2E_MEASURE=1 $(GO) test -count=1 -run '^TestPopupFenceCost$$' -v ./e2e | grep -E '^(popup|--- |ok|FAIL)'

# The soak is not a test either: minutes of real headless Chromium with our
# extension and a Playwright client in a loop, under injected faults, with
# invariants checked throughout (tools/soak, docs/SOAK.md). It
# starts one browser and fails on a broken invariant.
SOAK_ARGS ?=

soak: chromium npm
	$(GO) run ./tools/soak $(SOAK_ARGS)

# Instances at scale over loopback, no browser (docs/SCALE.md): what an
# idle instance costs and how many busy clients the relay keeps up with.
# The relay runs in one process, its peers in a child of it.
scale:
	@mkdir -p bin
	$(GO) build -o bin/scale ./tools/scale
	./bin/scale -scenario idle -n 1000
	./bin/scale -scenario idle -n 10000
	./bin/scale -scenario active -n 100

.PHONY: soak scale bench-popup bench-compare

clean:
	rm -rf bin $(DIST) .tools e2e/node_modules $(JS)/node_modules $(MANIFESTS)/node_modules
