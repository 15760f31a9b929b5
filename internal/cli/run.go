package cli

import (
	"errors"
	"fmt"
	"io"
	"iter"
	"strings"

	"github.com/fedlearner/flapp-services/fn"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// ErrFailed is returned after a failure has been fully reported (results and
// stderr); the caller only has to exit non-zero.
var ErrFailed = errors.New("flapp-services failed")

// mode is what differs between KRM mode and render mode; drive does the rest.
type mode interface {
	// open starts the run: its configuration (KRM mode finds it in the
	// input) and its input objects, in input order, which stop at the
	// first error.
	open() (fn.Config, iter.Seq2[fn.Object, error], error)
	// keep takes an object the output keeps, in input order.
	keep(obj fn.Object) error
	// fail answers a failed run: stdout stays empty in render mode, KRM
	// mode answers the items as they came with the error results.
	fail(results framework.Results) error
	// write writes a successful run's output.
	write(out *fn.Output, results framework.Results) error
}

// drive is the one run loop of both modes: pull the objects one at a time
// into an fn.Run, keep what the output keeps, finish, and either write the
// output or fail with nothing applied. Errors go to stderr as text and into
// the results; a panic fails closed like any error. Warnings go to stderr
// before the output is written (they hold whatever becomes of it); strict
// turns them into a failure.
func drive(m mode, errOut io.Writer, strict bool) (err error) {
	run := fn.NewRun()
	defer func() {
		if r := recover(); r != nil {
			err = failWith(m, errOut, run, framework.Results{fn.RunError(fmt.Sprintf("internal error: %v", r))})
		}
	}()
	cfg, objects, err := m.open()
	if err == nil {
		for obj, readErr := range objects {
			if readErr != nil {
				err = readErr
				break
			}
			if run.Add(obj) {
				if err = m.keep(obj); err != nil {
					break
				}
			}
		}
	}
	if err != nil {
		var failed resultsError
		if errors.As(err, &failed) {
			return failWith(m, errOut, run, failed.results)
		}
		var reported reportedError
		if errors.As(err, &reported) {
			_ = m.fail(reported.results)
			return ErrFailed
		}
		return failWith(m, errOut, run, framework.Results{fn.RunError(err.Error())})
	}
	out, results := run.Finish(cfg)
	if results.ExitCode() != 0 {
		return failWith(m, errOut, run, results)
	}
	printResults(errOut, run, results, framework.Warning)
	if n := count(results, framework.Warning); strict && n > 0 {
		return failWith(m, errOut, run, framework.Results{fn.RunError(fmt.Sprintf(
			"%d warning(s) above, and --strict makes every warning a failure", n))})
	}
	return m.write(out, results)
}

func count(results framework.Results, severity framework.Severity) int {
	n := 0
	for _, r := range results {
		if r.Severity == severity {
			n++
		}
	}
	return n
}

func failWith(m mode, errOut io.Writer, run *fn.Run, results framework.Results) error {
	printResults(errOut, run, results, framework.Error)
	if err := m.fail(results); err != nil && !errors.Is(err, ErrFailed) {
		_, _ = fmt.Fprintf(errOut, "error: %v\n", err)
	}
	return ErrFailed
}

// resultsError carries results that are the whole answer to a failure (an
// invalid functionConfig).
type resultsError struct{ results framework.Results }

func (e resultsError) Error() string { return e.results.Error() }

// reportedError is a failure whose results are on stderr already: those
// of a flapp-services entry that ran inside a kustomize build.
type reportedError struct{ results framework.Results }

func (e reportedError) Error() string { return e.results.Error() }

// printResults writes the results of one severity as free text for humans,
// one line each: where the object was read, the object, the field and the
// message. kustomize shows a function's stderr, not its results.
func printResults(w io.Writer, run *fn.Run, results framework.Results, severity framework.Severity) {
	for _, r := range results {
		if r.Severity != severity {
			continue
		}
		parts := []string{string(severity)}
		if o, ok := run.Origin(r); ok && o.File != "" {
			parts = append(parts, o.String())
		} else if r.File != nil && r.File.Path != "" {
			parts = append(parts, r.File.Path)
		}
		if r.ResourceRef != nil {
			parts = append(parts, describe(r.ResourceRef))
		}
		if r.Field != nil && r.Field.Path != "" {
			parts = append(parts, r.Field.Path)
		}
		parts = append(parts, r.Message)
		_, _ = fmt.Fprintln(w, strings.Join(parts, ": "))
	}
}

func describe(ref *yaml.ResourceIdentifier) string {
	s := ref.Kind
	if ref.Namespace != "" {
		s += " " + ref.Namespace + "/" + ref.Name
	} else {
		s += " " + ref.Name
	}
	return strings.TrimSpace(s)
}
