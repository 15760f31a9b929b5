package sandbox

import (
	"fmt"
	"net/http"
	"os"
)

// Enter fences the process for the rest of its life, before any input is
// read, three ways that hold independently of each other:
//
//   - No PATH. The only program kustomize's API starts by name is git (to
//     clone a remote base), which it looks up in PATH before it makes the
//     clone's directory: without a PATH it finds nothing, starts nothing
//     and leaves nothing in TMPDIR.
//   - No HTTP. kustomize reads a remote file through Go's default HTTP
//     transport; the transport refuses every request before it resolves or
//     dials anything.
//   - No exec and no socket, from the kernel, where it can say so (Linux on
//     amd64 and arm64, the release's image platforms): a seccomp filter on
//     every thread makes execve, execveat, socket, socketpair and connect
//     fail with EPERM, whatever path or address is asked for.
//
// It returns whether the kernel's filter is in place; where it is not, the
// other two fences still hold.
func Enter() bool {
	_ = os.Unsetenv("PATH")
	http.DefaultTransport = refusedTransport{}
	return denyExecAndSockets() == nil
}

type refusedTransport struct{}

func (refusedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return nil, fmt.Errorf("flapp-services fetches nothing: %s refused", r.URL.Redacted())
}
