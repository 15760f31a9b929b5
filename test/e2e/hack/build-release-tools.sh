#!/usr/bin/env bash
# build-release-tools.sh: build, from source, the real parts the release suite
# (test/e2e/clients/release) runs, into a cache folder ignored by git:
#
#   registry   the CNCF distribution registry   github.com/distribution/distribution/v3 v3.1.2
#   cosign     sigstore's cosign                github.com/sigstore/cosign/v2 v2.6.5
#   fluxoci    `flux push artifact` and `flux pull artifact` on github.com/fluxcd/pkg/oci,
#              the library the flux CLI uses, at the version flux v2.9.5 pins (tools/fluxoci)
#
# registry and cosign are `go install MODULE/cmd/X@VERSION`: each module's own
# go.mod and go.sum, nothing patched. fluxoci is this project's tool module.
# A stamp file records what was built (versions, go version, the hash of the
# tool module and of this script); when it matches and every binary exists the
# script exits at once. GOTOOLCHAIN=local: all three build with Go 1.26.
#
# Usage: hack/build-release-tools.sh [OUT_DIR]   (default: <repo>/.cache/release-tools, or $RELEASE_TOOLS_DIR)
# Prints the output directory as the last line of stdout.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
e2e="$(cd "$here/.." && pwd)"
repo="$(cd "$e2e/../.." && pwd)"
out="${1:-${RELEASE_TOOLS_DIR:-$repo/.cache/release-tools}}"
go="${GO:-go}"

export GOTOOLCHAIN=local
export CGO_ENABLED=0

registry_pkg=github.com/distribution/distribution/v3/cmd/registry@v3.1.2
cosign_pkg=github.com/sigstore/cosign/v2/cmd/cosign@v2.6.5
# cosign's `version` reads these (sigs.k8s.io/release-utils/version), as its release build sets them.
cosign_ldflags="-s -w -X sigs.k8s.io/release-utils/version.gitVersion=v2.6.5"
bins=(registry cosign fluxoci)

stamp_content() {
	echo "$registry_pkg"
	echo "$cosign_pkg"
	"$go" version
	cat "$e2e/tools/fluxoci/go.mod" "$e2e/tools/fluxoci/go.sum" "$e2e/tools/fluxoci/main.go" | sha256sum
	sha256sum < "$here/build-release-tools.sh"
}

built() {
	for b in "${bins[@]}"; do [ -x "$out/$b" ] || return 1; done
}

want="$(stamp_content)"
# shellcheck source=lib.sh
. "$here/lib.sh"
cache_begin build-release-tools "$out"

# timed NAME CMD...: run a build step and log how long it took (the cold
# durations test/e2e/README.md reports).
timed() {
	local name=$1 b0
	shift
	echo "build-release-tools: building $name" >&2
	b0=$(date +%s)
	"$@" >&2
	echo "build-release-tools: $name built in $(( $(date +%s) - b0 ))s" >&2
}

# `go install pkg@version` must run outside any module.
timed "registry ($registry_pkg)" \
	env -C "$tmp" GOBIN="$tmp" "$go" install -trimpath "$nodwarf" -ldflags "-s -w" "$registry_pkg"
timed "cosign ($cosign_pkg)" \
	env -C "$tmp" GOBIN="$tmp" "$go" install -trimpath "$nodwarf" -ldflags "$cosign_ldflags" "$cosign_pkg"
timed "fluxoci (tools/fluxoci)" \
	env -C "$e2e/tools/fluxoci" GOFLAGS=-mod=readonly "$go" build -trimpath "$nodwarf" -ldflags "-s -w" -o "$tmp/fluxoci" .

for b in "${bins[@]}"; do mv -f "$tmp/$b" "$out/$b"; done
cache_commit build-release-tools
echo "$out"
