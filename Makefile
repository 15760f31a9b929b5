# flapp-services — every target works on a fresh machine with only Go installed.
GO       ?= go
BIN      := bin/flapp-services
# .cache links to this machine's tool cache outside the clone (test/e2e/hack/cache.sh), so every
# clone, CI's fresh one included, finds the tools `make tools` built once.
CACHE    := $(shell bash test/e2e/hack/cache.sh)
TOOLS    := $(CURDIR)/.cache/bin
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -s -w -X main.version=$(VERSION)
ACTIONLINT_VERSION := v1.7.12
ACTIONLINT := $(TOOLS)/actionlint-$(ACTIONLINT_VERSION)
SYFT_VERSION := v1.57.1
SYFT       := $(TOOLS)/syft-$(SYFT_VERSION)
# The tools built only to develop and test with are compiled without DWARF, as
# test/e2e/hack/lib.sh explains (its nodwarf, read from there so the flag is written once).
NODWARF    := $(shell sed -n 's/^nodwarf=//p' test/e2e/hack/lib.sh)

# Container image (see Dockerfile). ENGINE: podman when installed, else docker
# (with a daemon). PLATFORMS: what image-bins cross-compiles and image-oci packs.
IMAGE     ?= ghcr.io/fedlearner/flapp-services:$(VERSION)
ENGINE    ?= $(shell command -v podman >/dev/null 2>&1 && echo podman || echo docker)
PLATFORMS ?= linux/amd64 linux/arm64
ARCH      ?= $(shell $(GO) env GOARCH)
REVISION  ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
OCI       := bin/flapp-services-oci.tar
IMAGE_ARGS = --build-arg VERSION=$(VERSION) --build-arg REVISION=$(REVISION)

.PHONY: all build test unit integration e2e e2e-clients e2e-argocd lint fmt demo bench e2e-clients-only bench-data bench-memory bench-corpus clean tools release-check
.PHONY: image image-bins image-oci image-push image-push-floating sbom dist dist-sums dist-sign verify-release

all: build

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) .

## test: vet, unit + golden + fuzz-seed tests, then the integration examples.
test: build unit integration

unit:
	$(GO) vet ./...
	$(GO) test -count=1 ./...

integration: build
	bash test/integration/hack/strace.sh >/dev/null
	cd test/integration && STRACE_BIN=$$(bash hack/strace.sh) FLAPP_SERVICES_BIN=$(CURDIR)/$(BIN) $(GO) test -count=1 -timeout 30m ./...

## fuzz: the random differential tests at full breadth, then every fuzz target of the main
## module (go test -fuzz), one at a time, FUZZTIME each.
## Minimizing a new interesting input is capped at FUZZMINIMIZETIME so it cannot eat the run.
## A crasher lands in <pkg>/testdata/fuzz/<Target>/: commit it, go test replays it (SECURITY.md).
.PHONY: fuzz
FUZZTIME ?= 1m
FUZZMINIMIZETIME ?= 10s
fuzz:
	@echo "== the random differential tests at full breadth (make test runs a tenth)"
	$(GO) test -count=1 -run 'Random|ScalarForm' ./internal/krmio -args -random-breadth=10
	@set -e; for pkg in $$($(GO) list ./...); do \
	  for target in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$target ($(FUZZTIME))"; \
	    $(GO) test -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) $$pkg; \
	  done; \
	done

## e2e: build Kubernetes from source (logged as it goes; cached), then the real-cluster suite
## (test/e2e without clients/, which is e2e-clients').
e2e: build
	bash test/e2e/hack/build-k8s.sh
	cd test/e2e && FLAPP_SERVICES_BIN=$(CURDIR)/$(BIN) $(GO) test -count=1 -timeout 80m $$($(GO) list ./... | grep -v /clients/)

## e2e-clients: the real clients users run (podman, kpt, kustomize container:, Flux's
## kustomize-controller, Helm, Argo CD's cmp-server), each built or installed by the
## project's own scripts and cached under .cache/. One package per client under
## test/e2e/clients/; Argo CD lives in its own Go 1.27 module (see its README).
e2e-clients: e2e-clients-only
	$(MAKE) e2e-argocd

## e2e-clients-only: e2e-clients without Argo CD (a CI part of its own).
e2e-clients-only: build $(SYFT)
	bash test/e2e/hack/podman.sh >/dev/null
	bash test/e2e/hack/build-kpt.sh >/dev/null
	bash test/e2e/hack/build-kpt-runner.sh >/dev/null
	bash test/e2e/hack/build-k8s.sh >/dev/null
	bash test/e2e/hack/build-flux.sh >/dev/null
	bash test/e2e/hack/build-helm.sh >/dev/null
	bash test/e2e/hack/build-release-tools.sh >/dev/null
	cd test/e2e && FLAPP_SERVICES_BIN=$(CURDIR)/$(BIN) $(GO) test -count=1 -timeout 80m ./clients/...

## e2e-argocd: the real Argo CD v3.6.1 (argocd-cmp-server, the repo-server's GenerateManifests,
## gitops-engine's sync; the install kustomization; cmp-server inside the function image under
## podman) in its own module, test/e2e/argocd, the only place that uses Go 1.27.
## Same -trimpath, CGO_ENABLED and no DWARF ($(NODWARF)) as hack/build-argocd.sh, so the builds
## (and lint) share the cache.
ARGOCD_ENV := GOTOOLCHAIN=go1.27.3 CGO_ENABLED=0 GOFLAGS='-trimpath $(NODWARF)'
e2e-argocd: build
	bash test/e2e/hack/podman.sh >/dev/null
	bash test/e2e/hack/build-k8s.sh >/dev/null
	bash test/e2e/hack/build-helm.sh >/dev/null
	bash test/e2e/hack/build-argocd.sh >/dev/null
	cd test/e2e/argocd && $(ARGOCD_ENV) K8S_BIN_DIR=$(CURDIR)/.cache/k8s-bin HELM_BIN=$(CURDIR)/.cache/helm/helm3 \
	  ARGOCD_CMP_SERVER=$(CURDIR)/.cache/argocd/argocd-cmp-server FLAPP_SERVICES_BIN=$(CURDIR)/$(BIN) \
	  $(GO) test -count=1 -timeout 60m ./...

## tools: build or install every tool a suite needs, one logged and timed step each, into the
## machine's tool cache (.cache links there). Start it first on a new machine: a cold run is
## compile-bound (test/e2e/README.md has the figures). Each step is a no-op when its stamp matches.
KUSTOMIZE_VERSION := v5.8.1
TOOL_STEPS := podman build-k8s build-kpt build-kpt-runner build-flux build-helm build-release-tools build-argocd \
	golangci-lint actionlint syft kustomize
tools:
	@set -e; for step in $(TOOL_STEPS); do t0=$$(date +%s); echo "== tools: $$step"; \
	  case $$step in \
	    golangci-lint) $(MAKE) --no-print-directory $(GOLANGCI) ;; \
	    actionlint) $(MAKE) --no-print-directory $(ACTIONLINT) ;; \
	    syft) $(MAKE) --no-print-directory $(SYFT) ;; \
	    kustomize) $(MAKE) --no-print-directory $(TOOLS)/kustomize ;; \
	    *) bash test/e2e/hack/$$step.sh >/dev/null ;; \
	  esac; \
	  echo "== tools: $$step: done in $$(( $$(date +%s) - t0 ))s"; \
	done

## mutation: mutation testing (gremlins, installed into .cache/bin like the other tools) over
## MUTATION_PKGS, one package at a time, each mutant against its own package's tests; prints
## each package's counts and score, and writes gremlins' JSON to bin/mutation/. Slow (about
## half an hour for ./fn on a loaded 2-core machine), so not part of .ci/run; DEVELOPMENT.md
## (Mutation) records the last run. MUTATION_PKGS=./render make mutation runs one package.
GREMLINS_VERSION := v0.6.0
GREMLINS         := $(TOOLS)/gremlins-$(GREMLINS_VERSION)
MUTATION_PKGS    ?= ./render ./fn ./internal/krmio ./internal/repofs ./internal/kustomize
# Two workers of one CPU each keep both cores busy; a mutant's tests may take twenty times
# what the unmutated package's took before they count as timed out (a load spike is not a kill).
MUTATION_WORKERS ?= 2
MUTATION_TIMEOUT ?= 20
# Beside gremlins' defaults (arithmetic, boundaries, negations, ++/--, negatives): && and ||
# swapped, break and continue swapped. fn/fntest, test helpers under ./fn, is not mutated.
MUTATION_MUTATORS := --invert-logical --invert-loopctrl

$(GREMLINS):
	GOBIN=$(TOOLS) $(GO) install $(NODWARF) github.com/go-gremlins/gremlins/cmd/gremlins@$(GREMLINS_VERSION)
	mv $(TOOLS)/gremlins $@

.PHONY: mutation
mutation: $(GREMLINS)
	@mkdir -p bin/mutation
	@set -e; for pkg in $(MUTATION_PKGS); do \
	  name=$$(echo $$pkg | sed 's|^\./||; s|/|-|g'); \
	  echo "== mutation: $$pkg"; \
	  $(GREMLINS) unleash --workers $(MUTATION_WORKERS) --test-cpu 1 --timeout-coefficient $(MUTATION_TIMEOUT) \
	    $(MUTATION_MUTATORS) --exclude-files 'fntest/' -S lct -o bin/mutation/$$name.json $$pkg 2>&1 | tee bin/mutation/$$name.log; \
	done
	@echo "== mutation: score = killed / (killed + lived), timed out counted as killed (gremlins' efficacy);"
	@echo "   covered = (killed + lived) / all: gremlins runs only mutants inside a Go coverage block"
	@for pkg in $(MUTATION_PKGS); do \
	  name=$$(echo $$pkg | sed 's|^\./||; s|/|-|g'); \
	  sed -n 's/^Killed: \([0-9]*\), Lived: \([0-9]*\), Not covered: \([0-9]*\)$$/\1 \2 \3/p; s/^Timed out: \([0-9]*\),.*/\1/p' bin/mutation/$$name.log | \
	    tr '\n' ' ' | awk -v pkg=$$pkg '{k=$$1+$$4; r=k+$$2; printf "%-40s killed %4d  lived %3d  not covered %3d  score %5.1f%%  covered %5.1f%%\n", pkg, k, $$2, $$3, r ? 100*k/r : 100, r+$$3 ? 100*r/(r+$$3) : 100}'; \
	done | tee bin/mutation/scores.txt
	@awk '{k+=$$3; l+=$$5; c+=$$8} END {r=k+l; printf "%-40s killed %4d  lived %3d  not covered %3d  score %5.1f%%  covered %5.1f%%\n", "all", k, l, c, r ? 100*k/r : 100, r+c ? 100*r/(r+c) : 100}' bin/mutation/scores.txt | tee -a bin/mutation/scores.txt

# The kustomize the tests run beside the function (their harnesses install the same one when it is missing).
$(TOOLS)/kustomize:
	cd "$${TMPDIR:-/tmp}" && GOBIN=$(TOOLS) GOTOOLCHAIN=local CGO_ENABLED=0 $(GO) install sigs.k8s.io/kustomize/kustomize/v5@$(KUSTOMIZE_VERSION)

## actionlint checks every workflow: .github/workflows and the example workflow users copy.
$(ACTIONLINT):
	GOBIN=$(TOOLS) $(GO) install $(NODWARF) github.com/rhysd/actionlint/cmd/actionlint@$(ACTIONLINT_VERSION)
	mv $(TOOLS)/actionlint $@

# One golangci-lint for every module, built with Go 1.27: test/e2e/argocd is a Go 1.27 module,
# and a golangci-lint built with Go 1.26 refuses it. The Go 1.26 modules are still loaded by the
# installed go (GOTOOLCHAIN=local); only the linter's own binary comes from Go 1.27, which saves
# a second cold build of golangci-lint (test/e2e/README.md, the whole of .ci/run).
GOLANGCI := $(TOOLS)/go1.27/golangci-lint-v2.15.0
$(GOLANGCI):
	GOTOOLCHAIN=go1.27.3 GOBIN=$(TOOLS)/go1.27 $(GO) install $(NODWARF) github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v2.15.0
	mv $(TOOLS)/go1.27/golangci-lint $@

lint: $(GOLANGCI) $(ACTIONLINT)
	$(ACTIONLINT) .github/workflows/*.yml examples/flux/github-actions/*.yaml
	test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); exit 1)
	$(GOLANGCI) run ./...
	cd test/integration && $(GOLANGCI) run --config $(CURDIR)/.golangci.yml ./...
	cd test/e2e && $(GOLANGCI) run --config $(CURDIR)/.golangci.yml ./...
	cd test/e2e/tools/fluxoci && $(GOLANGCI) run --config $(CURDIR)/.golangci.yml ./...
	cd test/e2e/argocd && $(ARGOCD_ENV) $(GOLANGCI) run --config $(CURDIR)/.golangci.yml ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

## demo: build and render the bundled two-party example. Its stdout is only the
## rendered YAML (make demo > all.yaml is a valid file): the build runs silently.
demo:
	@$(MAKE) --no-print-directory -s build
	@$(BIN) render examples/basic

clean:
	rm -rf bin

## image-bins: the static binary per platform, bin/<os>_<arch>/flapp-services (what the Dockerfile packs).
image-bins:
	@set -e; for p in $(PLATFORMS); do os=$${p%/*}; arch=$${p#*/}; \
	  echo "go build $$os/$$arch -> bin/$${os}_$${arch}/flapp-services"; \
	  CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/$${os}_$${arch}/flapp-services .; \
	done

## image: the image for the local platform, in the local engine's store as $(IMAGE).
## Reproducible: two runs on one commit give the same image ID (timestamps zeroed).
image:
	$(MAKE) image-bins PLATFORMS=linux/$(ARCH)
ifeq ($(notdir $(ENGINE)),podman)
	$(ENGINE) build --layers=false --timestamp 0 --platform linux/$(ARCH) $(IMAGE_ARGS) -t $(IMAGE) -f Dockerfile .
else
	SOURCE_DATE_EPOCH=0 $(ENGINE) buildx build --platform linux/$(ARCH) $(IMAGE_ARGS) --build-arg SOURCE_DATE_EPOCH=0 \
	  --output type=docker,name=$(IMAGE),rewrite-timestamp=true -f Dockerfile .
endif

## image-oci: bin/flapp-services-oci.tar, an OCI archive holding a multi-arch index
## (linux/amd64, linux/arm64), built with podman (no emulation: the Dockerfile has no RUN).
## The index is kept in podman's store as $(IMAGE)-index for image-push.
image-oci:
	$(MAKE) image-bins
	-podman manifest rm $(IMAGE)-index >/dev/null 2>&1
	podman build --layers=false --timestamp 0 --platform $(shell echo $(PLATFORMS) | tr " " ,) $(IMAGE_ARGS) \
	  --manifest $(IMAGE)-index -f Dockerfile .
	rm -f $(OCI)
	podman manifest push --all $(IMAGE)-index oci-archive:$(OCI):$(VERSION)

## image-push: push the multi-arch index of image-oci to $(IMAGE) (a registry you are logged in to);
## the digest goes to bin/flapp-services-image.digest (for signing).
image-push: image-oci
	podman manifest push --all --digestfile bin/flapp-services-image.digest $(IMAGE)-index docker://$(IMAGE)

## image-push-floating: after image-push (and signing), the floating tags of a final release:
## $(VERSION) = vX.Y.Z (no prerelease or build part) also goes to $(IMAGE_REPO):vX.Y and :vX, each
## only when no higher final release of that line is in RELEASE_TAGS (the git tags), so a patch
## of an older line never moves vX back. Prereleases (v1.2.0-rc.1) get no floating tag, nor does
## v0 (before 1.0 a minor may break: VERSIONING.md). Each tag must resolve to the digest
## image-push wrote, or the target fails.
RELEASE_TAGS ?= $(shell git tag -l 'v*' 2>/dev/null)
image-push-floating:
	@set -e; v='$(VERSION)'; digest="$$(cat bin/flapp-services-image.digest)"; \
	final() { grep -Ex 'v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)'; }; \
	if ! echo "$$v" | final >/dev/null; then \
	  echo "image-push-floating: $$v is not a final release vX.Y.Z: no floating tags"; exit 0; fi; \
	lines="$${v%.*}"; [ "$${v%%.*}" = v0 ] || lines="$$lines $${v%%.*}"; \
	for f in $$lines; do \
	  top="$$(printf '%s\n' $(RELEASE_TAGS) "$$v" | final | while read -r t; do case "$$t" in "$$f".*) echo "$$t";; esac; done | sort -V | tail -n 1)"; \
	  if [ "$$top" != "$$v" ]; then echo "image-push-floating: $$f stays at $$top (newer than $$v)"; continue; fi; \
	  podman manifest push --all --digestfile bin/flapp-services-image.$$f.digest $(IMAGE)-index docker://$(IMAGE_REPO):$$f; \
	  if [ "$$(cat bin/flapp-services-image.$$f.digest)" != "$$digest" ]; then \
	    echo "image-push-floating: $(IMAGE_REPO):$$f is $$(cat bin/flapp-services-image.$$f.digest), not $$digest" >&2; exit 1; fi; \
	  echo "image-push-floating: $(IMAGE_REPO):$$f -> $$digest"; \
	done

## sbom: the SPDX SBOM of the image image-push pushed (by digest, from the registry; the
## $(SBOM_PLATFORM) image: both platforms hold the same modules), by syft $(SYFT_VERSION)
## built from source, into $(SBOM). The release workflow and the e2e release suite both run it.
SBOM          ?= bin/flapp-services.spdx.json
SBOM_PLATFORM ?= linux/amd64
IMAGE_REPO     = $(shell echo '$(IMAGE)' | sed 's/:[^:/]*$$//')
sbom: $(SYFT)
	$(SYFT) scan --quiet --platform $(SBOM_PLATFORM) --output spdx-json=$(SBOM) \
	  registry:$(IMAGE_REPO)@$$(cat bin/flapp-services-image.digest)

$(SYFT):
	GOBIN=$(TOOLS)/syft-build CGO_ENABLED=0 $(GO) install -trimpath $(NODWARF) -ldflags '-s -w -X main.version=$(SYFT_VERSION)' \
	  github.com/anchore/syft/cmd/syft@$(SYFT_VERSION)
	mv $(TOOLS)/syft-build/syft $@
	rmdir $(TOOLS)/syft-build

## dist: the release binaries, $(DIST)/flapp-services-$(VERSION)-<os>-<arch> (.exe on windows) for
## DIST_PLATFORMS (CGO off, -trimpath, version stamped, as build), and $(DIST)/SHA256SUMS.
DIST           ?= bin/dist
DIST_PLATFORMS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64
dist:
	rm -rf $(DIST)
	mkdir -p $(DIST)
	@set -e; for p in $(DIST_PLATFORMS); do os=$${p%/*}; arch=$${p#*/}; ext=; [ $$os = windows ] && ext=.exe; \
	  out=$(DIST)/flapp-services-$(VERSION)-$$os-$$arch$$ext; echo "go build $$os/$$arch -> $$out"; \
	  CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $$out .; \
	done
	$(MAKE) --no-print-directory dist-sums

## release-check: what only a release needs, moved out of CI's every run: `make dist` for every
## release platform (darwin and windows too: each a full cross-compile), checked by TestDist.
## The release workflow runs it before it publishes.
release-check: build
	cd test/e2e && DIST_PLATFORMS='$(DIST_PLATFORMS)' FLAPP_SERVICES_BIN=$(CURDIR)/$(BIN) $(GO) test -count=1 -timeout 30m -run '^TestDist$$' ./clients/release

## dist-sums: $(DIST)/SHA256SUMS, the sha256sum of every other file in $(DIST) but its signature (run it again
## after adding one, then dist-sign).
dist-sums:
	cd $(DIST) && sha256sum -- $$(ls | grep -vx -e SHA256SUMS -e SHA256SUMS.cosign.bundle) > SHA256SUMS

## dist-sign: sign $(DIST)/SHA256SUMS with cosign sign-blob, into $(DIST)/SHA256SUMS.cosign.bundle (the signature,
## and when keyless the Fulcio certificate and the Rekor entry). Keyless unless COSIGN_KEY names a private key
## (the local release test, which has no Fulcio or Rekor: no transparency-log upload then). COSIGN: the cosign to run.
COSIGN     ?= cosign
COSIGN_KEY ?=
dist-sign:
	rm -f $(DIST)/SHA256SUMS.cosign.bundle
	$(COSIGN) sign-blob --yes --bundle $(DIST)/SHA256SUMS.cosign.bundle \
	  $(if $(COSIGN_KEY),--key $(COSIGN_KEY) --tlog-upload=false) $(DIST)/SHA256SUMS

## verify-release: verify a release's assets in $(DIST) as a user would (SECURITY.md, Verifying a release): the
## signature of SHA256SUMS (cosign verify-blob of its bundle: the release workflow's identity on the tag VERSION,
## or COSIGN_PUB, a public key, for a key-signed test release), then every file it lists (sha256sum --strict -c).
## E.g. make verify-release VERSION=v0.1.0 DIST=path/to/the/downloaded/assets
RELEASE_REPO     ?= fedlearner/flapp-services
RELEASE_IDENTITY ?= https://github.com/$(RELEASE_REPO)/.github/workflows/release.yml@refs/tags/$(VERSION)
RELEASE_ISSUER   ?= https://token.actions.githubusercontent.com
COSIGN_PUB       ?=
verify-release:
	$(COSIGN) verify-blob --bundle $(DIST)/SHA256SUMS.cosign.bundle \
	  $(if $(COSIGN_PUB),--key $(COSIGN_PUB) --insecure-ignore-tlog=true,--certificate-identity $(RELEASE_IDENTITY) --certificate-oidc-issuer $(RELEASE_ISSUER)) \
	  $(DIST)/SHA256SUMS
	cd $(DIST) && sha256sum --strict -c SHA256SUMS
## BENCH_DATA: where the inputs go: the tool cache, by its resolved path (.cache is a link out of
## the repository, which a render refuses to follow; one copy per machine: set it when clones differ).
## BENCH_BEFORE: an earlier build of the binary; start-up and discover's memory are measured on it too,
## in the same rounds (BENCHMARKS.md says how to build one).
BENCH_DATA   ?= $(CACHE)/bench-data
BENCH_BEFORE ?=
BENCH_RUN     = $(GO) run ./bench/run -data $(BENCH_DATA) -bin $(CURDIR)/$(BIN) -tools $(TOOLS) $(if $(BENCH_BEFORE),-before $(BENCH_BEFORE))

## bench-data: the synthetic inputs of `make bench` (500 FLApps -> 10,000 Services, 1k/100k, kpt, render, kustomize, the kustomize corpus, memory budgets).
bench-data: build
	$(GO) run ./bench/gen -out $(BENCH_DATA) -bin $(CURDIR)/$(BIN)

## bench: whole-process comparisons with a do-nothing kyaml function (not part of CI; see BENCHMARKS.md).
bench: bench-data
	$(BENCH_RUN) -report $(CURDIR)/.cache/bench-report.md

## bench-memory: only the memory budgets of `make bench` (peak RSS per input against its ceiling), 3 runs each;
## exits 1 when a budget is missed. Report in .cache/bench-memory-report.md.
bench-memory: build
	$(GO) run ./bench/gen -memory-only -out $(BENCH_DATA) -bin $(CURDIR)/$(BIN)
	$(BENCH_RUN) -only memory -runs 3 -report $(CURDIR)/.cache/bench-memory-report.md

## bench-corpus: only the kustomize corpus of `make bench` (each root built by `render` and by `kustomize build`
## with the function as exec transformer, side by side). Report in .cache/bench-corpus-report.md.
bench-corpus: build
	$(GO) run ./bench/gen -corpus-only -out $(BENCH_DATA) -bin $(CURDIR)/$(BIN)
	$(BENCH_RUN) -only corpus -report $(CURDIR)/.cache/bench-corpus-report.md
