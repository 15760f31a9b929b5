# kpt-module.sh: the patched copy of the kpt module that hack/build-kpt.sh
# (kpt) and hack/build-kpt-runner.sh (kpt's e2e runner) both build from
# (sourced after lib.sh, not run).
#
# `go install github.com/kptdev/kpt@v1.0.0-beta.61` does not work: its alpha
# `rollouts` subcommand imports github.com/kptdev/kpt/rollouts, a nested module
# the proxy does not serve. So both builds start from a copy of the kpt module
# with that one subcommand cut out — and nothing else changed:
#
#   1. copy the module from the module cache (`go mod download -json`);
#   2. delete commands/alpha/rollouts, its import and its
#      `rollouts.NewCommand(ctx, version),` line in commands/alpha/alphacmd.go;
#   3. `go mod edit -droprequire github.com/kptdev/kpt/rollouts`, `go mod tidy`.
#
# The caller sets go and tmp (cache_begin does) and hashes this file into its
# stamp.

kpt_module=github.com/kptdev/kpt
kpt_version=v1.0.0-beta.61

# kpt_copy: the patched copy in $tmp/kpt; the working directory is left there.
kpt_copy() {
	echo "kpt-module: downloading $kpt_module@$kpt_version" >&2
	local src
	src="$(cd "$tmp" && module_dir "$kpt_module@$kpt_version")"
	cp -R "$src" "$tmp/kpt"
	chmod -R u+w "$tmp/kpt"
	cd "$tmp/kpt"

	echo "kpt-module: cutting out the alpha rollouts subcommand" >&2
	local alpha=commands/alpha/alphacmd.go
	rm -rf commands/alpha/rollouts
	grep -q '"github.com/kptdev/kpt/commands/alpha/rollouts"' "$alpha"
	grep -q 'rollouts.NewCommand(ctx, version),' "$alpha"
	sed -i -e '\#"github.com/kptdev/kpt/commands/alpha/rollouts"#d' \
		-e '/rollouts\.NewCommand(ctx, version),/d' "$alpha"
	if grep -rq 'kptdev/kpt/rollouts\|commands/alpha/rollouts' --include='*.go' .; then
		echo "kpt-module: rollouts still referenced after the cut:" >&2
		grep -rn 'kptdev/kpt/rollouts\|commands/alpha/rollouts' --include='*.go' . >&2
		return 1
	fi
	"$go" mod edit -droprequire github.com/kptdev/kpt/rollouts
	echo "kpt-module: go mod tidy" >&2
	"$go" mod tidy
}
