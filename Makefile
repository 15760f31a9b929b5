# flapp-services — every target works on a fresh machine with only Go installed.
GO       ?= go
BIN      := bin/flapp-services
TOOLS    := $(CURDIR)/.cache/bin
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -s -w -X main.version=$(VERSION)
GOLANGCI := $(TOOLS)/golangci-lint

.PHONY: all build test unit integration e2e e2e-clients lint fmt demo bench bench-data clean

all: build

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) .

## test: vet, unit + golden + fuzz-seed tests, then the integration examples.
test: build unit integration

unit:
	$(GO) vet ./...
	$(GO) test -count=1 ./...

integration: build
	cd test/integration && FLAPP_SERVICES_BIN=$(CURDIR)/$(BIN) $(GO) test -count=1 -timeout 30m ./...

## e2e: build Kubernetes from source (logged as it goes; cached), then the real-cluster suite.
e2e: build
	bash test/e2e/hack/build-k8s.sh
	cd test/e2e && FLAPP_SERVICES_BIN=$(CURDIR)/$(BIN) $(GO) test -count=1 -timeout 80m ./...

## e2e-clients: the real clients users run (podman, kpt, kustomize container:, Flux's
## kustomize-controller, Helm, Argo CD's cmp-server), each built or installed by the
## project's own scripts and cached under .cache/. One package per client under
## test/e2e/clients/; Argo CD lives in its own Go 1.27 module (see its README).
e2e-clients: build
	cd test/e2e && FLAPP_SERVICES_BIN=$(CURDIR)/$(BIN) $(GO) test -count=1 -timeout 80m ./clients/...

$(GOLANGCI):
	GOBIN=$(TOOLS) $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v2.15.0

lint: $(GOLANGCI)
	test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); exit 1)
	$(GOLANGCI) run ./...
	cd test/integration && $(GOLANGCI) run --config $(CURDIR)/.golangci.yml ./...
	cd test/e2e && $(GOLANGCI) run --config $(CURDIR)/.golangci.yml ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

## demo: build and render the bundled two-party example.
demo: build
	./$(BIN) render examples/basic

clean:
	rm -rf bin

## bench-data: the synthetic inputs of `make bench` (500 FLApps -> 10,000 Services, 1k/100k, kpt, render, kustomize).
bench-data: build
	$(GO) run ./bench/gen -out $(CURDIR)/.cache/bench-data -bin $(CURDIR)/$(BIN)

## bench: whole-process comparisons with a do-nothing kyaml function (not part of CI; see BENCHMARKS.md).
bench: bench-data
	$(GO) run ./bench/run -data $(CURDIR)/.cache/bench-data -bin $(CURDIR)/$(BIN) -tools $(TOOLS) -report $(CURDIR)/.cache/bench-report.md
