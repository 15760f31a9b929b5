#!/usr/bin/env bash
# build-kpt-runner.sh: build kpt's e2e test runner (github.com/kptdev/kpt
# pkg/test/runner at v1.0.0-beta.61, what the kpt functions catalog tests its
# examples with) into a test binary in a cache folder ignored by git.
#
# The runner imports kpt's internal packages, so it only builds inside the kpt
# module: this script takes the same patched copy of the module as
# build-kpt.sh (kpt-module.sh), adds the driver
# test/e2e/clients/kptrunner/testdata/driver/driver_test.go to it as package
# e2e/flappservices and compiles it with `go test -c`. Same flags as
# build-kpt.sh (-trimpath, CGO_ENABLED=0), so the two builds share the Go build
# cache: after build-kpt.sh only the runner's own packages compile. No `go vet`:
# vetting the 80-line driver computes vet facts for every package kpt imports,
# which took 970 s after a cold build-kpt.sh (under load), against 51 s without.
#
# The runner runs the `kpt` it finds on PATH; the binary takes the folders to
# scan for cases as arguments: kpt-runner.test -test.v DIR...
# A stamp file records what was built (kpt version, go version, the hashes of
# this script, kpt-module.sh and the driver); when it matches and the binary
# exists the script exits at once.
#
# Usage: hack/build-kpt-runner.sh [OUT_DIR]   (default: <repo>/.cache/kpt-runner, or $KPT_RUNNER_DIR)
# Prints the path of the test binary as the last line of stdout.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
out="${1:-${KPT_RUNNER_DIR:-$repo/.cache/kpt-runner}}"
go="${GO:-go}"
driver="$repo/test/e2e/clients/kptrunner/testdata/driver/driver_test.go"

export GOTOOLCHAIN=local
export CGO_ENABLED=0
# The copy is not under version control and kpt_copy changes its go.mod.
export GOFLAGS="-buildvcs=false"

# shellcheck source=kpt-module.sh
. "$here/kpt-module.sh"

stamp_content() {
	echo "kpt $kpt_version"
	"$go" version
	sha256sum < "$here/build-kpt-runner.sh"
	sha256sum < "$here/kpt-module.sh"
	sha256sum < "$driver"
}

built() { [ -x "$out/kpt-runner.test" ]; }

want="$(stamp_content)"
# shellcheck source=lib.sh
. "$here/lib.sh"
cache_begin build-kpt-runner "$out/kpt-runner.test"

kpt_copy

mkdir e2e/flappservices
cp "$driver" e2e/flappservices/
echo "build-kpt-runner: go test -c ./e2e/flappservices (pkg/test/runner of kpt $kpt_version)" >&2
"$go" test -c -trimpath "$nodwarf" -o "$tmp/kpt-runner.test" ./e2e/flappservices

mv -f "$tmp/kpt-runner.test" "$out/kpt-runner.test"
cache_commit build-kpt-runner
echo "$out/kpt-runner.test"
