// Command flapp-services renders the Services of fedlearner FLApps, as a KRM
// function or standalone. See fn.NewCommand.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/fedlearner/flapp-services/fn"
)

// version is set at build time (-ldflags -X main.version=...).
var version = "dev"

func main() {
	if err := fn.NewCommand(version).Execute(); err != nil {
		if !errors.Is(err, fn.ErrFailed) {
			fmt.Fprintln(os.Stderr, "error:", err)
		}
		os.Exit(1)
	}
}
