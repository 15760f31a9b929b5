#!/usr/bin/env bash
# strace.sh: print the path of a working strace, for the hostile suite's
# TestHostileKustomizeUnderStrace (test/integration/hostile), which runs the
# binary under `strace -f` and fails without one.
#
#   - when no strace is on PATH, installs Debian's with apt-get (needs root,
#     as in CI, or sudo without a password);
#   - checks that it can trace here as the suite does (-f --seccomp-bpf: a
#     container may forbid ptrace or seccomp);
#   - prints its absolute path on stdout, nothing else.
#
# Progress and apt-get's output go to stderr. Idempotent: when strace is
# there it only checks it and prints the path.
set -euo pipefail

if ! command -v strace >/dev/null 2>&1; then
	if ! command -v apt-get >/dev/null 2>&1; then
		echo "strace.sh: no strace on PATH and no apt-get to install Debian's: install strace" >&2
		exit 1
	fi
	sudo=()
	[ "$(id -u)" = 0 ] || sudo=(sudo -n)
	start=$(date +%s)
	echo "strace.sh: installing strace with apt-get" >&2
	"${sudo[@]}" apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends strace >&2
	echo "strace.sh: installed in $(( $(date +%s) - start ))s" >&2
fi

strace="$(command -v strace)"
if ! out="$("$strace" -f --seccomp-bpf -qq -e trace=execve -o /dev/null /bin/true 2>&1)"; then
	echo "strace.sh: $strace cannot trace here (ptrace or seccomp not permitted?): $out" >&2
	exit 1
fi
echo "$strace"
