# Flotilla build, test and generation targets. See README.md.
SHELL := /bin/bash
BIN := $(CURDIR)/bin/flotilla
GO ?= go
# Stamp the Kubernetes version the libraries come from, so API servers report
# it (kubectl version, Cluster.status.kubernetesVersion).
K8S_VERSION := $(shell $(GO) list -m -f '{{.Version}}' k8s.io/kubernetes)
K8S_MINOR := $(word 2,$(subst ., ,$(K8S_VERSION)))
LDFLAGS := -X k8s.io/component-base/version.gitVersion=$(K8S_VERSION) \
	-X k8s.io/component-base/version.gitMajor=1 \
	-X k8s.io/component-base/version.gitMinor=$(K8S_MINOR) \
	-X k8s.io/component-base/version.gitTreeState=clean

# The image's version and tag: the chart's appVersion unless given.
VERSION ?= $(shell sed -n 's/^appVersion: *"*\([^"]*\)"*/\1/p' charts/flotilla/Chart.yaml)
IMAGE ?= ghcr.io/flotilla-io/flotilla

.PHONY: build test test-extended verify lint unit fuzz integration e2e generate verify-generated up bench image clean

## build: compile the single flotilla binary into bin/
build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/flotilla

## image: the container image, without a container daemon (hack/image): a static binary in one
## layer, as an OCI layout in bin/image/oci and a tarball for `docker load` in bin/image/flotilla.tar
image:
	CGO_ENABLED=0 $(GO) build -ldflags "$(LDFLAGS) -s -w -X github.com/flotilla-io/flotilla/internal/cli.Version=$(VERSION)" -o bin/image/flotilla ./cmd/flotilla
	$(GO) run ./hack/image -binary bin/image/flotilla -out bin/image/oci -tar bin/image/flotilla.tar -tag $(IMAGE):$(VERSION) -version $(VERSION)

## up: build, start the local stack in the foreground and apply the nginx example
SAMPLE ?= examples/nginx
up: build
	$(BIN) up --apply $(SAMPLE)

# The tiers of tests (docs/development.md). Each has one purpose; `make test` runs them
# (integration then e2e beside a niced unit and fuzz: they mostly wait), prints each one's
# time, and is what CI runs.
#   verify       generated files, gofmt, golangci-lint (.golangci.yml; its govet is go vet)
#   unit         every pure test (no API server of its own), with the race detector
#   fuzz         each fuzz target for FUZZTIME (the seed corpora also run in unit)
#   integration  the controllers in-process against real API servers (test/integration)
#   e2e          the baseline end-to-end tests through `flotilla up` (test/e2e)
UNIT_PKGS = $$($(GO) list ./... | grep -v -e '/test/e2e' -e '/test/integration' -e '/bench')
FUZZTIME ?= 3s
# go test's own vet pass is off: verify runs go vet's checks once (golangci-lint's govet),
# where go test would repeat them for every package of every tier.
TESTFLAGS = -count=1 -vet=off
LINT := $(CURDIR)/bin/golangci-lint

## test: verify, then integration and the baseline e2e beside a niced unit and fuzz, each
## timed (hack/tiers; CI runs this)
test: build
	@hack/tiers

## verify: generated files are fresh, gofmt, and golangci-lint (whose govet is go vet's checks)
verify: verify-generated lint
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$unformatted" ]; then echo "gofmt: run gofmt -w on:" $$unformatted >&2; exit 1; fi

## lint: golangci-lint at the version hack/tools pins, with .golangci.yml
lint: $(LINT)
	$(LINT) run ./...

$(LINT): hack/tools/go.mod hack/tools/go.sum
	cd hack/tools && $(GO) build -o $(LINT) github.com/golangci/golangci-lint/v2/cmd/golangci-lint

## unit: every pure test (-short skips what needs a stack), with the race detector
# GORACE atexit_sleep_ms=0: a race-enabled binary otherwise sleeps a second as it exits (for
# goroutines still running to report), which holds one of go test's two slots idle per package.
unit:
	GORACE=atexit_sleep_ms=0 $(GO) test $(TESTFLAGS) -short -race -timeout 20m $(UNIT_PKGS)

## fuzz: each fuzz target for FUZZTIME (longer runs: docs/development.md)
fuzz:
	@hack/fuzz $(FUZZTIME)

## integration: the controllers in-process against real API servers
integration: build
	FLOTILLA_BIN=$(BIN) $(GO) test $(TESTFLAGS) -timeout 20m ./test/integration/...

## e2e: the baseline end-to-end tests through `flotilla up`, three at a time (test/e2e's lanes,
## FLOTILLA_E2E_LANES; -parallel only lets every test reach its lane)
e2e: build
	@FLOTILLA_BIN=$(BIN) hack/testlog bin/e2e.log $(GO) test $(TESTFLAGS) -timeout 40m -p 1 -parallel 64 -v ./test/e2e/...

## test-extended: every end-to-end test, the slow and destructive ones too (FLOTILLA_E2E=extended)
test-extended: build
	@FLOTILLA_E2E=extended FLOTILLA_BIN=$(BIN) hack/testlog bin/e2e-extended.log $(GO) test $(TESTFLAGS) -timeout 60m -p 1 -parallel 64 -v ./test/e2e/...

## generate: regenerate deepcopy code and CRD YAML from api/
generate:
	$(GO) generate ./api/...

## verify-generated: fail when generated files differ from what `make generate` writes
verify-generated:
	@if [ -d api ]; then hack/verify-generated.sh; fi

## bench: benchmarks against the local stack, and the capacity estimators' Go benchmarks (see bench/README.md)
bench: build
	$(GO) test -run '^$$' -bench . -benchmem ./internal/core/scheduler/capacity/
	FLOTILLA_BIN=$(BIN) $(GO) test -run '^$$' -bench . -benchtime 1x -timeout 4h ./bench/...

clean:
	rm -rf bin
