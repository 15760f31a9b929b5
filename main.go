// Command flapp-services renders the Services of fedlearner FLApps, as a KRM
// function or standalone. The command line is internal/cli.
package main

import (
	"os"

	"github.com/fedlearner/flapp-services/internal/cli"
	"github.com/fedlearner/flapp-services/internal/sandbox"
)

// version is set at build time (-ldflags -X main.version=...).
var version = "dev"

func main() {
	sandbox.Enter() // before any input is read: no program, no socket
	os.Exit(cli.Main(version, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
