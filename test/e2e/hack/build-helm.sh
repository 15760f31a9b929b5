#!/usr/bin/env bash
# build-helm.sh: build the real Helm command-line tools from source into a cache
# folder ignored by git:
#
#   helm3   helm.sh/helm/v3/cmd/helm  v3.22.0   (module tools/helm3)
#   helm4   helm.sh/helm/v4/cmd/helm  v4.3.1    (module tools/helm4)
#
# Each version is pinned by its tool module's go.mod (a `tool` directive and
# the go.sum of Helm's own dependency set); the two live in separate modules
# so neither bends the other's dependencies. A stamp file records what was
# built (go version + hash of the tool modules and this script); when it
# matches and both binaries exist the script exits at once. GOTOOLCHAIN=local.
#
# Usage: hack/build-helm.sh [OUT_DIR]   (default: <repo>/.cache/helm, or $HELM_BIN_DIR)
# Prints the output directory as the last line of stdout.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
e2e="$(cd "$here/.." && pwd)"
repo="$(cd "$e2e/../.." && pwd)"
out="${1:-${HELM_BIN_DIR:-$repo/.cache/helm}}"
go="${GO:-go}"

export GOTOOLCHAIN=local
export CGO_ENABLED=0
export GOFLAGS="${GOFLAGS:-} -mod=readonly"

bins=(helm3 helm4)

stamp_content() {
	"$go" version
	for b in "${bins[@]}"; do cat "$e2e/tools/$b/go.mod" "$e2e/tools/$b/go.sum"; done | sha256sum
	sha256sum < "$here/build-helm.sh"
}

built() {
	for b in "${bins[@]}"; do [ -x "$out/$b" ] || return 1; done
}

want="$(stamp_content)"
# shellcheck source=lib.sh
. "$here/lib.sh"
cache_begin build-helm "$out"

for b in "${bins[@]}"; do
	major="${b#helm}"
	ver="$(cd "$e2e/tools/$b" && "$go" list -m -f '{{.Version}}' "helm.sh/helm/v$major")"
	echo "build-helm: building $b (helm.sh/helm/v$major $ver)" >&2
	b0=$(date +%s)
	(cd "$e2e/tools/$b" && "$go" build -trimpath "$nodwarf" \
		-ldflags "-s -w -X helm.sh/helm/v$major/internal/version.version=$ver" \
		-o "$tmp/$b" "helm.sh/helm/v$major/cmd/helm")
	echo "build-helm: $b built in $(( $(date +%s) - b0 ))s" >&2
done

for b in "${bins[@]}"; do mv -f "$tmp/$b" "$out/$b"; done
cache_commit build-helm
echo "$out"
