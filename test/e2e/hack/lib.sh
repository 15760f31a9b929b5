# lib.sh: the cache protocol of the hack/build-*.sh scripts (sourced, not run).
#
# A script sets out (its cache folder), go, want (its stamp: the versions,
# `go version`, the hash of the script) and a function `built` that says its
# outputs exist, then calls `cache_begin NAME RESULT`:
#   - outputs built and OUT/.stamp equal to want (plus this file's hash): print
#     RESULT (what the script prints as its last line) and exit 0 at once;
#   - otherwise take OUT/.lock (two test binaries may start the same build),
#     check again, and return with start (seconds) and tmp (a fresh folder under
#     OUT, removed on exit) set.
# After the build, `cache_commit NAME` writes the stamp and logs the duration.

# nodwarf: the compiler flag every tool build here passes; the Makefile reads it from here for
# its tool installs and ARGOCD_ENV (so that Argo CD's build shares its compiled packages with the
# module's lint and tests). Nobody debugs these tools here, and most are linked with -s -w, which
# drops DWARF anyway; not generating it at all makes each compile smaller and a cold build
# cheaper (test/e2e/README.md, the whole of .ci/run). The code is the same; the binary's build
# info records the flag.
nodwarf=-gcflags=all=-dwarf=false

cache_begin() {
	local name=$1 result=$2
	want+=$'\n'"lib.sh $(sha256sum < "${BASH_SOURCE[0]}")"
	mkdir -p "$out"
	if cache_fresh; then
		echo "$name: up to date in $out" >&2
		echo "$result"
		exit 0
	fi
	exec 9>"$out/.lock"
	flock 9 2>/dev/null || true
	if cache_fresh; then
		echo "$result"
		exit 0
	fi
	start=$(date +%s)
	tmp="$(mktemp -d "$out/.build.XXXXXX")"
	# Module-cache copies are read-only: make them writable to remove them.
	trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
}

cache_fresh() {
	built && [ "$want" = "$(cat "$out/.stamp" 2>/dev/null || true)" ]
}

cache_commit() {
	printf '%s\n' "$want" > "$out/.stamp"
	echo "$1: done in $(( $(date +%s) - start ))s" >&2
}

# module_dir MODULE@VERSION: its folder in the Go module cache, downloaded if
# needed (run it outside any module whose go.mod should not change).
module_dir() {
	local dir
	dir="$("$go" mod download -json "$1" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')"
	[ -d "$dir" ] || { echo "module_dir: no folder for $1" >&2; return 1; }
	echo "$dir"
}
