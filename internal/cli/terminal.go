package cli

import (
	"errors"
	"io"
	"os"
)

// errTerminalStdin is KRM mode started by hand: nothing is piped in, and
// reading a ResourceList from the terminal would wait silently. Main prints
// it after "error: ", so it reads as one message with the way out below.
var errTerminalStdin = errors.New("stdin is a terminal, not a ResourceList: without arguments flapp-services is a KRM function, run by kustomize or kpt\n" +
	"  flapp-services < resource-list.yaml     # a ResourceList in, a ResourceList out\n" +
	"  flapp-services render examples/basic    # or render manifests from files\n" +
	"Run 'flapp-services --help' for usage")

// refuseTerminal returns errTerminalStdin when stdin is a terminal (a
// character device; only an *os.File can be one), so KRM mode answers
// instead of waiting for input nobody will type.
func refuseTerminal(stdin io.Reader) error {
	f, ok := stdin.(*os.File)
	if !ok {
		return nil
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return nil
	}
	return errTerminalStdin
}
