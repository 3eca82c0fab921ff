# The two commands: `make demo` (three local clusters, a real rollout, the verdicts) and
# `make test` (the whole suite, on real clusters). Everything they need is built from pinned
# Go modules; the cluster binaries are cached outside the clone (hack/build-bins.sh).

SHELL := /bin/bash
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X github.com/org/app-status-action/internal/cli.Version=$(VERSION)
BIN_DIR = $(shell hack/build-bins.sh)

.PHONY: all build test test-short lint vulncheck bins demo up bench bench-fleet profile-fleet bench-shards bench-merge fuzz clean image image-size image-start release-check screenshots

all: build

## build: the static app-status binary, as the Dockerfile builds it
build:
	CGO_ENABLED=0 go build -trimpath -ldflags "$(LDFLAGS)" -o bin/app-status ./cmd/app-status

## bins: build (or reuse) the cached test bed binaries and print their folder
bins:
	@hack/build-bins.sh

## lint: gofmt, go vet and golangci-lint (the three modules, pinned by hack/tools.sh), actionlint
## on .github/workflows with shellcheck (hack/install-packages.sh installs it), the message of
## the commit LINT_COMMIT (default: the latest) against the convention (hack/commitlint), and
## with VULNCHECK=1 make vulncheck (it needs the Go vulnerability database online: CI's unit job
## on GitHub sets it; without it lint says that it did not run)
LINT_COMMIT ?= HEAD
VULNCHECK ?=
lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt would change: $$unformatted"; exit 1; fi
	go vet ./...
	cd hack && go vet ./...
	cd hack/tekton && go vet ./...
	@golangci=$$(hack/tools.sh golangci-lint) && \
	echo "golangci-lint run ./... (and in hack/)" && "$$golangci" run --allow-serial-runners ./... && \
	(cd hack && "$$golangci" run --allow-serial-runners ./...) && \
	(cd hack/tekton && "$$golangci" run --allow-serial-runners ./...)
	@actionlint=$$(hack/tools.sh actionlint) && shellcheck=$$(command -v shellcheck || true) && \
	if [ -z "$$shellcheck" ]; then echo "lint: shellcheck is not installed: actionlint does not check the run: scripts"; fi && \
	echo "actionlint .github/workflows" && "$$actionlint" -shellcheck="$$shellcheck"
	go -C hack run ./commitlint -rev "$(LINT_COMMIT)"
	@if [ -n "$(VULNCHECK)" ]; then $(MAKE) --no-print-directory vulncheck; else \
	echo "*** make lint: govulncheck did NOT run (it needs the Go vulnerability database online): run make vulncheck, or make lint VULNCHECK=1, as CI's unit job on GitHub does"; fi

## vulncheck: govulncheck (pinned by hack/tools.sh) on the product's module, the code that ships
## in the binary and the image: fails on a known vulnerability in code that app-status calls, and
## fails, saying so, when the database VULNDB cannot be reached (never a silent skip)
VULNDB ?= https://vuln.go.dev
vulncheck:
	@govulncheck=$$(hack/tools.sh govulncheck) && "$$govulncheck" -version | sed -n '2p' && \
	if ! curl -fsS -m 30 -o /dev/null "$(VULNDB)/index/db.json"; then \
		echo "*** make vulncheck: the Go vulnerability database $(VULNDB) cannot be reached from this machine: NO vulnerability check ran. It runs in CI's unit job on GitHub (make lint VULNCHECK=1); see CONTRIBUTING.md" >&2; \
		exit 1; \
	fi && \
	echo "govulncheck -db $(VULNDB) ./..." && "$$govulncheck" -db "$(VULNDB)" ./...

## test: the whole suite with the race detector, in random order: cluster tests included (they
## fail, never skip, without binaries), the action's image run as the runner runs it (podman),
## the release scripts' tests, and the Tekton Task checked by Tekton's own validation (hack/tekton)
## Every go test line states its -timeout, sized from a cold run (empty Go build cache) on a
## 2-core machine with room to spare: CONTRIBUTING.md gives the measured times. The release
## snapshot test (hack/release) cross-compiles six archives; goreleaser itself is built before
## the hack module's tests start (hack/tools.sh caches it outside the clone).
TEST_TIMEOUT ?= 60m
HACK_TEST_TIMEOUT ?= 40m
TEKTON_TEST_TIMEOUT ?= 20m
SHORT_TEST_TIMEOUT ?= 30m
test: lint
	@command -v podman >/dev/null && command -v runc >/dev/null || \
	echo "*** make test: podman or runc is not installed: TestActionImage (the action's image as the runner runs it) is SKIPPED; hack/install-packages.sh installs them"
	@bindir=$$(hack/build-bins.sh) && \
	APP_STATUS_BIN_DIR=$$bindir go test -race -shuffle=on -count=1 -timeout $(TEST_TIMEOUT) ./...
	@hack/tools.sh goreleaser >/dev/null
	go -C hack test -race -shuffle=on -count=1 -timeout $(HACK_TEST_TIMEOUT) ./...
	go -C hack/tekton test -shuffle=on -count=1 -timeout $(TEKTON_TEST_TIMEOUT) ./...

## test-short: the unit tests of the three modules with the race detector, no clusters, in
## minutes (CI's unit job runs it with make lint)
test-short:
	go test -short -race -shuffle=on -count=1 -timeout $(SHORT_TEST_TIMEOUT) ./...
	go -C hack test -short -race -shuffle=on -count=1 -timeout $(SHORT_TEST_TIMEOUT) ./...
	go -C hack/tekton test -short -shuffle=on -count=1 -timeout $(SHORT_TEST_TIMEOUT) ./...

## fuzz: run every fuzz target for FUZZTIME each (make test runs their seed corpora only)
FUZZTIME ?= 30s
# (Compiling a target with coverage instrumentation takes minutes cold; the fuzzing itself stops
# at FUZZTIME.)
FUZZ_TIMEOUT ?= 20m
FUZZ_TARGETS = internal/kubeconfig:FuzzParseClusters internal/kubeconfig:FuzzDecode internal/kubeconfig:FuzzLoad \
	internal/flux:FuzzParseRevision internal/report:FuzzMDText internal/report:FuzzAppendIndented internal/sanitize:FuzzLine internal/sanitize:FuzzCommands internal/filecommand:FuzzEncode \
	internal/merge:FuzzParse internal/verify:FuzzDecodeUnstructuredList internal/jsontree:FuzzDecodeObject \
	internal/helmstorage:FuzzManifestObjects
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		echo "fuzz $${t#*:} in ./$${t%%:*} for $(FUZZTIME)"; \
		go test -run '^$$' -fuzz "^$${t#*:}$$" -fuzztime $(FUZZTIME) -timeout $(FUZZ_TIMEOUT) ./$${t%%:*}; \
	done

## demo: three local clusters with Flux, a sample app (one cluster gets a broken image),
## `app-status verify` with live progress, the markdown summary written to .demo/summary.md
demo: build
	@bindir=$$(hack/build-bins.sh) && \
	APP_STATUS_BIN_DIR=$$bindir go -C hack run ./bed demo --app-status $(CURDIR)/bin/app-status --summary $(CURDIR)/.demo/summary.md

## up: keep three clusters with Flux running for manual poking (Ctrl-C tears them down)
up:
	@bindir=$$(hack/build-bins.sh) && \
	APP_STATUS_BIN_DIR=$$bindir go -C hack run ./bed up --clusters 3

## bench: the fleet-and-faults benchmark (bench-fleet), the sharded fleet (bench-shards), then the side-by-side one on test-bed
## clusters (see docs/benchmark.md)
bench: build bench-fleet bench-shards
	@bindir=$$(hack/build-bins.sh) && \
	APP_STATUS_BIN_DIR=$$bindir go -C hack run ./bench --app-status $(CURDIR)/bin/app-status --out $(CURDIR)/docs

## bench-merge: merge to verdict on 3 clusters whose sources fetch every 10m (real
## source-controller): app-status --reconcile, the `flux reconcile ks --with-source` steps
## scripted with kubectl cluster by cluster, and app-status without --reconcile, side by side
## (docs/benchmark-reconcile.md).
bench-merge: build
	@bindir=$$(hack/build-bins.sh) && \
	APP_STATUS_BIN_DIR=$$bindir go -C hack run ./bench merge --app-status $(CURDIR)/bin/app-status --out $(CURDIR)/docs

## bench-shards: 10,000 fake clusters in 20 shards run as concurrent processes, then
## app-status merge, and the same fleet in one process (see docs/shard-benchmark.md)
bench-shards: build
	go -C hack run ./bench shards --app-status $(CURDIR)/bin/app-status --clusters 10000 --shards 20 --out $(CURDIR)/docs

## bench-fleet: 1, 20, 100 and 1000 fake clusters, some hung, throttled or failing, each
## kubeconfig with its own client certificate and key, with this build and with the engine
## before the consistency rule (PEER, a commit, built here) on the same fleets in one run: CPU
## and passes per cluster, peak RSS, the last healthy verdict and the exit, each with its ratio
## (see docs/fleet-benchmark.md); the largest fleet again with 2 busy processes beside it, and
## with each cluster's own token and with one shared token over plain HTTP (the engine's own
## cost). FLEET_LARGE=10000 also verifies that many clusters in one process (both builds).
PEER ?= 779e5f9
PEER_NAME ?= app-status before the consistency rule
FLEET_LARGE ?= 0
bench-fleet: build
	@peer=$$(mktemp -d) && trap 'rm -rf "$$peer"' EXIT && \
	git archive $(PEER) | tar -x -C $$peer && \
	(cd $$peer && CGO_ENABLED=0 go build -trimpath -o app-status ./cmd/app-status) && \
	go -C hack run ./bench fleet --app-status $(CURDIR)/bin/app-status --peer $$peer/app-status \
		--peer-name "$(PEER_NAME)" --clusters 1,20,100,1000 --large $(FLEET_LARGE) --busy 2 \
		--compare-credentials token,shared-token --out $(CURDIR)/docs

## profile-fleet: the fleet benchmark's runs on PROFILE_CLUSTERS fake clusters (1000), once
## each, with a CPU profile of each run and a heap profile at its end (APP_STATUS_CPUPROFILE,
## APP_STATUS_MEMPROFILE) in PROFILE_DIR, then where they are and how to read them (go tool
## pprof -top); its page goes to PROFILE_DIR too, not to docs/ (profiling costs CPU)
PROFILE_DIR ?= $(CURDIR)/.profiles
PROFILE_CLUSTERS ?= 1000
profile-fleet: build
	@mkdir -p $(PROFILE_DIR) && \
	go -C hack run ./bench fleet --app-status $(CURDIR)/bin/app-status --clusters $(PROFILE_CLUSTERS) --runs 1 \
		--profile $(PROFILE_DIR) --out $(PROFILE_DIR)

## image: the action's image as a release builds it (hack/image/Containerfile: the static
## binary and the CA certificates on scratch), with podman, tagged $(IMAGE), for IMAGE_ARCH
## (amd64 or arm64; default: Go's); podman and runc are installed when missing (as root)
IMAGE ?= app-status-action:dev
IMAGE_ARCH ?= $(shell go env GOARCH)
image:
	@hack/image/build.sh --arch $(IMAGE_ARCH) --version $(VERSION) $(IMAGE)

## image-size: the size of $(IMAGE), uncompressed and as pulled (gzip-compressed layers)
image-size:
	@hack/image/size.sh $(IMAGE)

## image-start: time from `podman run` of $(IMAGE) to its first API request (and the binary's)
image-start: build
	go -C hack run ./imagestart --image $(IMAGE) --binary $(CURDIR)/bin/app-status --runs 10

## release-check: goreleaser check of .goreleaser.yaml, with the goreleaser the release runs
release-check:
	"$$(hack/tools.sh goreleaser)" check

## screenshots: the job summaries of 3 and 1000 clusters as GitHub renders them, from the golden
## files (docs/summary-3.png, docs/summary-1000.png; needs cmark-gfm, chromium and
## fonts-noto-color-emoji)
screenshots:
	hack/screenshots.sh

clean:
	rm -rf bin .demo
