package cli

import (
	"errors"
	"fmt"
	"io"
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
	// read feeds every input item to add, in input order, and returns the
	// run's configuration (KRM mode finds it in the input).
	read(add func(*yaml.RNode) error) (fn.Config, error)
	// keep takes an item the output keeps, in input order.
	keep(item *yaml.RNode) error
	// fail answers a failed run: stdout stays empty in render mode, KRM
	// mode answers the items as they came with the error results.
	fail(results framework.Results) error
	// write writes a successful run's output.
	write(out *fn.Output, results framework.Results) error
}

// drive is the one run loop of both modes: read the items one at a time into
// an fn.Run, keep what the output keeps, finish, and either write the output
// or fail with nothing applied. Errors go to stderr as text and into the
// results; a panic fails closed like any error.
func drive(m mode, errOut io.Writer) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = failWith(m, errOut, framework.Results{fn.RunError(fmt.Sprintf("internal error: %v", r))})
		}
	}()
	run := fn.NewRun()
	cfg, err := m.read(func(item *yaml.RNode) error {
		if run.Add(item) {
			return m.keep(item)
		}
		return nil
	})
	if err != nil {
		var failed resultsError
		if errors.As(err, &failed) {
			return failWith(m, errOut, failed.results)
		}
		return failWith(m, errOut, framework.Results{fn.RunError(err.Error())})
	}
	out, results := run.Finish(cfg)
	if results.ExitCode() != 0 {
		return failWith(m, errOut, results)
	}
	if err := m.write(out, results); err != nil {
		return err
	}
	printResults(errOut, results, framework.Warning)
	return nil
}

func failWith(m mode, errOut io.Writer, results framework.Results) error {
	printResults(errOut, results, framework.Error)
	if err := m.fail(results); err != nil && !errors.Is(err, ErrFailed) {
		_, _ = fmt.Fprintf(errOut, "error: %v\n", err)
	}
	return ErrFailed
}

// resultsError carries results that are the whole answer to a failure (an
// invalid functionConfig).
type resultsError struct{ results framework.Results }

func (e resultsError) Error() string { return e.results.Error() }

// printResults writes the results of one severity as free text for humans,
// one line each: file, object, field and message. kustomize shows a
// function's stderr, not its results.
func printResults(w io.Writer, results framework.Results, severity framework.Severity) {
	for _, r := range results {
		if r.Severity != severity {
			continue
		}
		line := string(severity)
		if r.File != nil && r.File.Path != "" {
			line += " in " + r.File.Path
		}
		if r.ResourceRef != nil {
			line += ": " + describe(r.ResourceRef)
		}
		if r.Field != nil && r.Field.Path != "" {
			line += ": " + r.Field.Path
		}
		_, _ = fmt.Fprintf(w, "%s: %s\n", line, r.Message)
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
