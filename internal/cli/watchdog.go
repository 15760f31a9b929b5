package cli

import (
	"fmt"
	"io"
	"os"
	"runtime/metrics"
	"time"

	"github.com/fedlearner/flapp-services/internal/loader"
)

// defaultMaxMemory is the memory ceiling the render holds itself to: below
// the 640 MiB the Argo CD sidecar is given (examples/argocd), above the
// largest render the budgets admit (BENCHMARKS.md: 100,000 Services peak at
// about 568 MiB RSS).
const defaultMaxMemory = 600 << 20

// memoryWatchPeriod is how often the watchdog reads the runtime's figures:
// between two readings a render allocates a few megabytes at most.
const memoryWatchPeriod = 10 * time.Millisecond

// watchMemory ends the process, exit 1, once the memory the Go runtime
// holds from the system (all of its classes but what it released) passes
// ceiling, saying so on errOut: a bound by construction, which no input can
// pass whatever the estimates before a build say (issue 35). The command
// starts it, never a Run function: a library call must not end its caller.
// stop ends the watch.
func watchMemory(ceiling int64, errOut io.Writer) (stop func()) {
	samples := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	check := func() {
		metrics.Read(samples)
		if held := int64(samples[0].Value.Uint64() - samples[1].Value.Uint64()); held > ceiling {
			_, _ = fmt.Fprintf(errOut, "error: flapp-services passed its memory ceiling of %s (render's --max-memory) and was stopped: "+
				"the repository's kustomizations or FLApps make more than the sidecar can hold; nothing was rendered\n", loader.Size(ceiling))
			os.Exit(1)
		}
	}
	check() // before anything is read
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(memoryWatchPeriod)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				check()
			}
		}
	}()
	return func() { close(done) }
}
