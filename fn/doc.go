// Package fn is the KRM processing: items in; the items to keep, the
// generated Services and the results out. A Run takes the items one at a
// time and holds a small summary of each FLApp and Service it saw, never
// the items or the Services: Output yields the Services one at a time,
// from package render, when the caller writes them. Earlier generated
// Services are replaced or pruned, foreign ones never touched, everything
// else passes through. Every action and every error is a result, built by
// the constructors in results.go.
//
// It builds no yaml node of a generated Service: internal/krmio writes each
// one. The tests run the package as a kyaml function (fntest.Processor,
// through framework.Execute, every Service a node: fntest.ServiceNode) for
// their reference.
//
// It has no stdin, stdout, files or exit codes: those are the command
// line's (internal/cli). Of this module it imports only render, and nothing
// under internal/ (layers_test.go holds every package to its rule).
package fn
