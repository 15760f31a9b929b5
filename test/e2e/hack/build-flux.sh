#!/usr/bin/env bash
# build-flux.sh: build Flux's real kustomize-controller from source, and collect
# the Flux CRDs it needs, into a cache folder ignored by git:
#
#   kustomize-controller   github.com/fluxcd/kustomize-controller v1.9.6
#   crds/*.yaml            config/crd/bases of kustomize-controller v1.9.6 and
#                          of github.com/fluxcd/source-controller v1.9.0
#
# `go install …/kustomize-controller@v1.9.6` fails on its `replace …/api => ./api`
# (the module zip has no ./api), so the script copies the module from the Go
# module cache into a temp dir, drops that replace (the published api module at
# the version its go.mod requires is used instead), runs `go mod tidy` and
# `go build`. Nothing is patched beyond that one go.mod line.
#
# A stamp file records what was built (versions, go version, hash of this
# script); when it matches and the outputs exist the script exits at once.
# GOTOOLCHAIN=local always: v1.9.6 builds with Go 1.26.
#
# Usage: hack/build-flux.sh [OUT_DIR]   (default: <repo>/.cache/flux, or $FLUX_BIN_DIR)
# Prints the output directory as the last line of stdout.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
out="${1:-${FLUX_BIN_DIR:-$repo/.cache/flux}}"
go="${GO:-go}"

export GOTOOLCHAIN=local
export CGO_ENABLED=0
export GOFLAGS="-mod=mod"

kc_mod=github.com/fluxcd/kustomize-controller
kc_version=v1.9.6
sc_mod=github.com/fluxcd/source-controller
sc_version=v1.9.0

stamp_content() {
	echo "$kc_mod $kc_version"
	echo "$sc_mod $sc_version"
	"$go" version
	sha256sum < "$here/build-flux.sh"
}

built() {
	[ -x "$out/kustomize-controller" ] && [ -s "$out/crds/kustomize.toolkit.fluxcd.io_kustomizations.yaml" ] &&
		[ -s "$out/crds/source.toolkit.fluxcd.io_gitrepositories.yaml" ]
}

want="$(stamp_content)"
# shellcheck source=lib.sh
. "$here/lib.sh"
cache_begin build-flux "$out"

echo "build-flux: fetching $kc_mod@$kc_version and $sc_mod@$sc_version" >&2
kc_dir="$(cd "$tmp" && module_dir "$kc_mod@$kc_version")"
sc_dir="$(cd "$tmp" && module_dir "$sc_mod@$sc_version")"

mkdir -p "$tmp/crds"
cp "$kc_dir"/config/crd/bases/*.yaml "$sc_dir"/config/crd/bases/*.yaml "$tmp/crds/"

cp -r "$kc_dir" "$tmp/src"
chmod -R u+w "$tmp/src"
echo "build-flux: go mod tidy (replace of $kc_mod/api dropped)" >&2
(cd "$tmp/src" && "$go" mod edit -dropreplace "$kc_mod/api" && "$go" mod tidy)
echo "build-flux: building kustomize-controller $kc_version (cold: several minutes)" >&2
b0=$(date +%s)
(cd "$tmp/src" && "$go" build -trimpath "$nodwarf" -ldflags "-s -w" -o "$tmp/kustomize-controller" .)
echo "build-flux: go build took $(( $(date +%s) - b0 ))s" >&2

rm -rf "$out/crds"
mv "$tmp/crds" "$out/crds"
mv -f "$tmp/kustomize-controller" "$out/kustomize-controller"
cache_commit build-flux
echo "$out"
