package cli

import (
	"fmt"
	"io"
	"os"
	"runtime/metrics"
	"syscall"
	"time"

	"github.com/fedlearner/flapp-services/internal/repofs"
)

// The ceilings the process holds itself to, by construction:
// whatever the estimates before a build say, no input takes it past them.
const (
	// defaultMaxMemory is half the 640 MiB the Argo CD sidecar is given
	// (examples/argocd): the watchdog cannot stop one long copy (a
	// buffer doubling as a build writes a large object) while the
	// collector waits to stop the world for it, so a render may pass the
	// ceiling by as much as it holds before it is stopped. A vars
	// expansion of 1 MiB into 700 arguments jumped from about 420 to 785
	// MiB between two readings. It is above the largest render the default
	// ceilings admit outside a kustomize build (SECURITY.md, Memory: about
	// 230 MiB); a larger build needs --max-memory raised with the
	// container's limit, as the 5,000-FLApp overlay of BENCHMARKS.md does.
	defaultMaxMemory = 320 << 20
	// defaultMaxCPUTime is the CPU time of the whole run, serialization
	// included: CPU time, not wall time, so that a loaded machine does not
	// turn a pass into a failure. Argo CD gives a plugin 90 s of wall time
	// by default; the largest renders the budgets admit (the 5,000-FLApp
	// overlay of BENCHMARKS.md) raise it.
	defaultMaxCPUTime = time.Minute
	// watchPeriod is how often the watchdog reads the figures: between two
	// readings a render allocates a few megabytes at most.
	watchPeriod = 10 * time.Millisecond
)

// watch ends the process, exit 1, once the memory the Go runtime holds
// from the system (all its classes but what it released) passes maxMemory,
// or the process's CPU time (user and system) passes maxCPU, saying which on
// errOut. The command starts it, never a Run function: a library call must
// not end its caller. stop ends the watch.
func watch(maxMemory int64, maxCPU time.Duration, errOut io.Writer) (stop func()) {
	samples := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	fail := func(what string) {
		_, _ = fmt.Fprintf(errOut, "error: flapp-services passed its %s and was stopped: "+
			"the repository's kustomizations or FLApps take more than the sidecar can give; nothing was rendered\n", what)
		os.Exit(1)
	}
	check := func() {
		metrics.Read(samples)
		if held := int64(samples[0].Value.Uint64() - samples[1].Value.Uint64()); held > maxMemory {
			fail("memory ceiling of " + repofs.Size(maxMemory) + " (render's --max-memory)")
		}
		var ru syscall.Rusage
		if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
			if used := time.Duration(ru.Utime.Nano() + ru.Stime.Nano()); used > maxCPU {
				fail("CPU time ceiling of " + maxCPU.String() + " (render's --max-cpu-time)")
			}
		}
	}
	check() // before anything is read
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(watchPeriod)
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
