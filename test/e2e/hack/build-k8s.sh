#!/usr/bin/env bash
# build-k8s.sh: build the Kubernetes parts the e2e suite runs, from source, into
# a cache folder ignored by git:
#
#   kube-apiserver, kube-controller-manager, kubectl  from k8s.io/kubernetes v1.37.2
#   etcd                                               from go.etcd.io/etcd/server/v3 v3.6.13
#
# The versions are pinned by the tool modules under test/e2e/tools/. A stamp
# file records what was built (go version + hash of the tool modules' go.mod
# and go.sum); when it matches and every binary exists the script exits at once.
# It never switches toolchains (GOTOOLCHAIN=local) and reuses the Go build and
# module caches, so a rebuild after a stamp change is quick.
#
# Usage: hack/build-k8s.sh [OUT_DIR]   (default: <repo>/.cache/k8s-bin, or $K8S_BIN_DIR)
# Prints the output directory as the last line of stdout.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
e2e="$(cd "$here/.." && pwd)"
repo="$(cd "$e2e/../.." && pwd)"
out="${1:-${K8S_BIN_DIR:-$repo/.cache/k8s-bin}}"
go="${GO:-go}"

export GOTOOLCHAIN=local
export CGO_ENABLED=0
export GOFLAGS="${GOFLAGS:-} -mod=readonly"

k8s_version=v1.37.2
bins=(kube-apiserver kube-controller-manager kubectl etcd)

stamp_content() {
	echo "kubernetes $k8s_version"
	"$go" version
	cat "$e2e/tools/k8s/go.mod" "$e2e/tools/k8s/go.sum" "$e2e/tools/etcd/go.mod" "$e2e/tools/etcd/go.sum" "$e2e/tools/etcd/main.go" | sha256sum
	sha256sum < "$here/build-k8s.sh"
}

built() {
	for b in "${bins[@]}"; do [ -x "$out/$b" ] || return 1; done
}

want="$(stamp_content)"
# shellcheck source=lib.sh
. "$here/lib.sh"
cache_begin build-k8s "$out"

ver_pkgs=(k8s.io/component-base/version k8s.io/client-go/pkg/version)
ldflags="-s -w"
for p in "${ver_pkgs[@]}"; do
	ldflags+=" -X $p.gitVersion=$k8s_version -X $p.gitMajor=1 -X $p.gitMinor=37 -X $p.gitTreeState=clean"
done

echo "build-k8s: building kube-apiserver, kube-controller-manager, kubectl ($k8s_version) into $out" >&2
(cd "$e2e/tools/k8s" && "$go" build -trimpath "$nodwarf" -ldflags "$ldflags" -o "$tmp/" \
	k8s.io/kubernetes/cmd/kube-apiserver \
	k8s.io/kubernetes/cmd/kube-controller-manager \
	k8s.io/kubernetes/cmd/kubectl)
echo "build-k8s: building etcd" >&2
(cd "$e2e/tools/etcd" && "$go" build -trimpath "$nodwarf" -ldflags "-s -w" -o "$tmp/etcd" .)

for b in "${bins[@]}"; do mv -f "$tmp/$b" "$out/$b"; done
cache_commit build-k8s
echo "$out"
