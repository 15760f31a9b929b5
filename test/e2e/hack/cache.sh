#!/usr/bin/env bash
# cache.sh: point <repo>/.cache at this machine's tool cache, outside the clone, so that every
# clone on the machine (a CI run's fresh clone above all) finds the tools another one built:
#
#   ${FLAPP_SERVICES_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/flapp-services/tools}/<go>-<lib.sh>
#
# The folder is keyed by what every build shares (the Go version and the hash of lib.sh, the
# cache protocol and the compile flags); each tool's own stamp under it (versions, the script's
# hash) decides whether that tool is rebuilt (lib.sh). A .cache that is a real folder (a clone
# from before the cache moved, or one a developer wants apart) is left as it is.
#
# Prints the folder .cache resolves to. The Makefile runs it on every invocation.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
link="$repo/.cache"

if [ -d "$link" ] && [ ! -L "$link" ]; then
	echo "$link"
	exit 0
fi

key="$(GOTOOLCHAIN=local "${GO:-go}" env GOVERSION)-$(sha256sum < "$here/lib.sh" | cut -c1-12)"
dir="${FLAPP_SERVICES_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/flapp-services/tools}/$key"
mkdir -p "$dir"
[ "$(readlink "$link" 2>/dev/null || true)" = "$dir" ] || ln -sfn "$dir" "$link"
echo "$dir"
