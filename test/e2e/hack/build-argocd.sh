#!/usr/bin/env bash
# build-argocd.sh: build the real argocd-cmp-server (Argo CD v3.6.1) that the
# Argo CD e2e suite (test/e2e/argocd) starts, into a cache folder ignored by git.
#
# Argo CD v3.6.1 needs Go 1.27, so this script (and only this script and the
# e2e-argocd Makefile target) sets GOTOOLCHAIN=go1.27.3; the go command fetches
# that toolchain from the module proxy. The recipe:
#
#   1. copy github.com/argoproj/argo-cd/v3@v3.6.1 out of the Go module cache;
#   2. drop its `replace …/gitops-engine/v3 => ./gitops-engine` (the module zip
#      has no gitops-engine folder) and require the published gitops-engine v3.6.1;
#   3. add a main that runs only argocd-cmp-server's own cobra command
#      (cmd/argocd-cmp-server/commands.NewCommand), ~1,560 packages instead of the
#      ~2,300 of Argo CD's multi-call binary;
#   4. go build it with the copy's go.mod, i.e. Argo CD's own dependency versions.
#
# A stamp file records what was built (go version, Argo CD version, this
# script); when it matches and the binary exists the script exits at once.
#
# Usage: hack/build-argocd.sh [OUT_DIR]   (default: <repo>/.cache/argocd, or $ARGOCD_BIN_DIR)
# Prints the path of the binary as the last line of stdout.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
out="${1:-${ARGOCD_BIN_DIR:-$repo/.cache/argocd}}"
go="${GO:-go}"

export GOTOOLCHAIN=go1.27.3
export CGO_ENABLED=0
argocd_module=github.com/argoproj/argo-cd/v3
argocd_version=v3.6.1
gitops_engine=github.com/argoproj/argo-cd/gitops-engine/v3
bin="$out/argocd-cmp-server"

stamp_content() {
	echo "argo-cd $argocd_version"
	"$go" version
	sha256sum < "$here/build-argocd.sh"
}

built() { [ -x "$bin" ]; }

want="$(stamp_content)"
# shellcheck source=lib.sh
. "$here/lib.sh"
cache_begin build-argocd "$bin"

echo "build-argocd: fetching $argocd_module@$argocd_version (and the go1.27.3 toolchain if needed)" >&2
dir="$(cd "$tmp" && GOFLAGS=-mod=mod module_dir "$argocd_module@$argocd_version")"

src="$tmp/argo-cd"
cp -r "$dir" "$src"
chmod -R u+w "$src"
cd "$src"
"$go" mod edit -dropreplace "$gitops_engine"
"$go" mod edit -require "$gitops_engine@$argocd_version"
mkdir -p cmd/cmp-server-only
cat > cmd/cmp-server-only/main.go <<'EOF'
// Command argocd-cmp-server runs only Argo CD's ConfigManagementPlugin server.
package main

import (
	"os"

	"github.com/argoproj/argo-cd/v3/cmd/argocd-cmp-server/commands"
)

func main() {
	if err := commands.NewCommand().Execute(); err != nil {
		os.Exit(1)
	}
}
EOF
echo "build-argocd: resolving modules" >&2
GOFLAGS=-mod=mod "$go" mod download "$gitops_engine" >&2
GOFLAGS=-mod=mod "$go" list -deps ./cmd/cmp-server-only > /dev/null
echo "build-argocd: building argocd-cmp-server $argocd_version ($("$go" list -deps ./cmd/cmp-server-only 2>/dev/null | wc -l) packages; ~20 min cold on 2 busy cores)" >&2
ldflags="-s -w -X github.com/argoproj/argo-cd/v3/common.version=${argocd_version#v}"
GOFLAGS=-mod=mod "$go" build -trimpath "$nodwarf" -ldflags "$ldflags" -o "$tmp/argocd-cmp-server" ./cmd/cmp-server-only
mv -f "$tmp/argocd-cmp-server" "$bin"
cache_commit build-argocd
echo "$bin"
