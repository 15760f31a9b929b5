#!/usr/bin/env bash
# podman.sh: make a container engine available to the e2e-clients suite,
# without any system-wide configuration.
#
#   - installs podman, runc and podman-docker (a `docker` that is podman) from
#     Debian with apt-get when one of them is missing (needs root or sudo);
#   - prints the two things a caller must put in the environment of every
#     engine command (and of kpt and kustomize, which start the engine):
#       CONTAINERS_CONF=<repo>/test/e2e/hack/containers.conf
#       a directory holding only `docker` -> podman-docker's /usr/bin/docker,
#       to put first in PATH: some machines have another `docker` earlier in
#       PATH (e.g. /usr/local/bin/docker, a client without a daemon).
#
# Output (stdout), one `KEY=VALUE` per line:
#   CONTAINERS_CONF=/abs/path/containers.conf
#   DOCKER_SHIM_DIR=/abs/path/dir
# Progress goes to stderr. Idempotent: when everything is there it only prints.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
conf="$here/containers.conf"
shim="$repo/.cache/podman-docker"

missing=()
command -v podman >/dev/null 2>&1 || missing+=(podman)
command -v runc >/dev/null 2>&1 || [ -x /usr/sbin/runc ] || missing+=(runc)
[ -x /usr/bin/docker ] && dpkg -s podman-docker >/dev/null 2>&1 || missing+=(podman-docker)

if [ "${#missing[@]}" -gt 0 ]; then
	sudo=()
	[ "$(id -u)" = 0 ] || sudo=(sudo -n)
	start=$(date +%s)
	echo "podman.sh: installing ${missing[*]} with apt-get (podman runc podman-docker)" >&2
	"${sudo[@]}" apt-get update -q >&2
	DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q \
		podman runc podman-docker >&2
	echo "podman.sh: installed in $(( $(date +%s) - start ))s" >&2
fi

# podman-docker's `docker` is a shell script that execs podman.
mkdir -p "$shim"
ln -sfn /usr/bin/docker "$shim/docker"

echo "CONTAINERS_CONF=$conf"
echo "DOCKER_SHIM_DIR=$shim"
