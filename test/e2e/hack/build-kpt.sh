#!/usr/bin/env bash
# build-kpt.sh: build the real kpt v1.0.0-beta.61 from the Go module proxy into a
# cache folder ignored by git.
#
# `go install github.com/kptdev/kpt@v1.0.0-beta.61` does not work (its alpha
# `rollouts` subcommand needs a module the proxy does not serve), so this
# script builds from the patched copy of the kpt module that kpt-module.sh
# makes (that one subcommand cut out, nothing else changed; documented there),
# with `go build`, stamping `kpt version` with the release version.
#
# The `kpt fn` commands the tests use are untouched by the cut.
# A stamp file records what was built (kpt version, go version, the hashes of
# this script and kpt-module.sh); when it matches and the binary exists the
# script exits at once.
# It never switches toolchains (GOTOOLCHAIN=local) and reuses the Go build and
# module caches, so a rebuild after a stamp change is quick. Cold it takes
# about 10 minutes on 2 cores.
#
# Usage: hack/build-kpt.sh [OUT_DIR]   (default: <repo>/.cache/kpt-bin, or $KPT_BIN_DIR)
# Prints the path of the kpt binary as the last line of stdout.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
out="${1:-${KPT_BIN_DIR:-$repo/.cache/kpt-bin}}"
go="${GO:-go}"

export GOTOOLCHAIN=local
export CGO_ENABLED=0
# The copy is not under version control and kpt_copy changes its go.mod.
export GOFLAGS="-buildvcs=false"

# shellcheck source=kpt-module.sh
. "$here/kpt-module.sh"

stamp_content() {
	echo "kpt $kpt_version"
	"$go" version
	sha256sum < "$here/build-kpt.sh"
	sha256sum < "$here/kpt-module.sh"
}

built() { [ -x "$out/kpt" ]; }

want="$(stamp_content)"
# shellcheck source=lib.sh
. "$here/lib.sh"
cache_begin build-kpt "$out/kpt"

kpt_copy

echo "build-kpt: building kpt $kpt_version (about 10 minutes cold on 2 cores)" >&2
"$go" build -trimpath "$nodwarf" -ldflags "-s -w -X github.com/kptdev/kpt/run.version=$kpt_version" -o "$tmp/kpt.bin" .
"$tmp/kpt.bin" version >&2

mv -f "$tmp/kpt.bin" "$out/kpt"
cache_commit build-kpt
echo "$out/kpt"
