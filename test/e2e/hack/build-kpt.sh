#!/usr/bin/env bash
# build-kpt.sh: build the real kpt v1.0.0-beta.61 from the Go module proxy into a
# cache folder ignored by git.
#
# `go install github.com/kptdev/kpt@v1.0.0-beta.61` does not work: its alpha
# `rollouts` subcommand imports github.com/kptdev/kpt/rollouts, a nested module
# the proxy does not serve. So this script builds from a copy of the kpt module
# with that one subcommand cut out — and nothing else changed:
#
#   1. copy the module from the module cache (`go mod download -json`);
#   2. delete commands/alpha/rollouts, its import and its
#      `rollouts.NewCommand(ctx, version),` line in commands/alpha/alphacmd.go;
#   3. `go mod edit -droprequire github.com/kptdev/kpt/rollouts`, `go mod tidy`;
#   4. `go build`, stamping `kpt version` with the release version.
#
# `kpt fn render` (the only command the tests use) is untouched by the cut.
# A stamp file records what was built (kpt version, go version, this script's
# hash); when it matches and the binary exists the script exits at once.
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
# The copy is not under version control and go.mod changes in step 3.
export GOFLAGS="-buildvcs=false"

kpt_module=github.com/kptdev/kpt
kpt_version=v1.0.0-beta.61

stamp_content() {
	echo "kpt $kpt_version"
	"$go" version
	sha256sum < "$here/build-kpt.sh"
}

built() { [ -x "$out/kpt" ]; }

want="$(stamp_content)"
# shellcheck source=lib.sh
. "$here/lib.sh"
cache_begin build-kpt "$out/kpt"

echo "build-kpt: downloading $kpt_module@$kpt_version" >&2
src="$(cd "$tmp" && module_dir "$kpt_module@$kpt_version")"
cp -R "$src" "$tmp/kpt"
chmod -R u+w "$tmp/kpt"
cd "$tmp/kpt"

echo "build-kpt: cutting out the alpha rollouts subcommand" >&2
alpha=commands/alpha/alphacmd.go
rm -rf commands/alpha/rollouts
grep -q '"github.com/kptdev/kpt/commands/alpha/rollouts"' "$alpha"
grep -q 'rollouts.NewCommand(ctx, version),' "$alpha"
sed -i -e '\#"github.com/kptdev/kpt/commands/alpha/rollouts"#d' \
	-e '/rollouts\.NewCommand(ctx, version),/d' "$alpha"
if grep -rq 'kptdev/kpt/rollouts\|commands/alpha/rollouts' --include='*.go' .; then
	echo "build-kpt: rollouts still referenced after the cut:" >&2
	grep -rn 'kptdev/kpt/rollouts\|commands/alpha/rollouts' --include='*.go' . >&2
	exit 1
fi
"$go" mod edit -droprequire github.com/kptdev/kpt/rollouts
echo "build-kpt: go mod tidy" >&2
"$go" mod tidy

echo "build-kpt: building kpt $kpt_version (about 10 minutes cold on 2 cores)" >&2
"$go" build -trimpath -ldflags "-s -w -X github.com/kptdev/kpt/run.version=$kpt_version" -o "$tmp/kpt.bin" .
"$tmp/kpt.bin" version >&2

mv -f "$tmp/kpt.bin" "$out/kpt"
cache_commit build-kpt
echo "$out/kpt"
