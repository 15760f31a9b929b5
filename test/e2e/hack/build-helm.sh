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

complete() {
	for b in "${bins[@]}"; do [ -x "$out/$b" ] || return 1; done
	[ "$want" = "$(cat "$out/.stamp" 2>/dev/null || true)" ]
}

mkdir -p "$out"
want="$(stamp_content)"
if complete; then
	echo "build-helm: up to date in $out" >&2
	echo "$out"
	exit 0
fi

# Serialise concurrent builds (e.g. two test binaries started at once).
exec 9>"$out/.lock"
flock 9 2>/dev/null || true
if complete; then
	echo "$out"
	exit 0
fi

start=$(date +%s)
tmp="$(mktemp -d "$out/.build.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

for b in "${bins[@]}"; do
	major="${b#helm}"
	ver="$(cd "$e2e/tools/$b" && "$go" list -m -f '{{.Version}}' "helm.sh/helm/v$major")"
	echo "build-helm: building $b (helm.sh/helm/v$major $ver)" >&2
	b0=$(date +%s)
	(cd "$e2e/tools/$b" && "$go" build -trimpath \
		-ldflags "-s -w -X helm.sh/helm/v$major/internal/version.version=$ver" \
		-o "$tmp/$b" "helm.sh/helm/v$major/cmd/helm")
	echo "build-helm: $b built in $(( $(date +%s) - b0 ))s" >&2
done

for b in "${bins[@]}"; do mv -f "$tmp/$b" "$out/$b"; done
printf '%s\n' "$want" > "$out/.stamp"
echo "build-helm: done in $(( $(date +%s) - start ))s" >&2
echo "$out"
