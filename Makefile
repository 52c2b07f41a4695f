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

.PHONY: build test unit e2e generate verify-generated up bench image clean

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

## test: everything CI runs: generated files are fresh, vet, unit, integration and e2e tests.
## The binary is built once and shared with every test package through FLOTILLA_BIN.
## Packages under test/ start stacks of their own, so they run one package at a time (two
## stacks starting at once could pick the same free port).
test: build verify-generated
	$(GO) vet ./...
	FLOTILLA_BIN=$(BIN) $(GO) test -count=1 -timeout 30m $$($(GO) list ./... | grep -v '/test/')
	FLOTILLA_BIN=$(BIN) $(GO) test -count=1 -timeout 60m -p 1 ./test/...

## unit: fast tests only (no local stack)
unit:
	$(GO) test -short ./...

## generate: regenerate deepcopy code and CRD YAML from api/
generate:
	$(GO) generate ./api/...

## verify-generated: fail when generated files differ from what `make generate` writes
verify-generated:
	@if [ -d api ]; then hack/verify-generated.sh; fi

## bench: benchmarks against the local stack (see bench/README.md)
bench: build
	FLOTILLA_BIN=$(BIN) $(GO) test -run '^$$' -bench . -benchtime 1x -timeout 4h ./bench/...

clean:
	rm -rf bin
