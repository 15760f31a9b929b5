package cli

import (
	"errors"
	"fmt"
	"io"

	"github.com/fedlearner/flapp-services/fn"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
)

// ErrFailed is returned after a failure has been fully reported (results and
// stderr); the caller only has to exit non-zero.
var ErrFailed = errors.New("flapp-services failed")

// report writes the results of one severity to w as free text, one line
// each (fn.Result.String): kustomize shows a function's stderr, not its
// results.
func report(w io.Writer, results fn.Results, severity framework.Severity) {
	for _, r := range results {
		if r.Severity == severity {
			_, _ = fmt.Fprintln(w, r.String())
		}
	}
}

// warn reports the warnings of a run that succeeded, before its output is
// written (they hold whatever becomes of it), and with strict fails it on
// them.
func warn(errOut io.Writer, results fn.Results, strict bool) fn.Results {
	report(errOut, results, framework.Warning)
	if n := results.Count(framework.Warning); strict && n > 0 {
		return fn.Results{fn.RunError(fmt.Sprintf("%d warning(s) above, and --strict makes every warning a failure", n))}
	}
	return nil
}

// recoverInternal makes a panic fail closed like any error: reported, and
// nothing more written.
func recoverInternal(err *error, errOut io.Writer) {
	if r := recover(); r != nil {
		report(errOut, fn.Results{fn.RunError(fmt.Sprintf("internal error: %v", r))}, framework.Error)
		*err = ErrFailed
	}
}
