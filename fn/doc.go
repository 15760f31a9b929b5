// Package fn is the KRM function: a ResourceList in, a ResourceList out. It
// finds the FLApps and the Services it generated earlier among the items,
// renders fresh Services with package render, replaces and prunes the old
// ones, and passes everything else through untouched. Every action and every
// error is a result (results.go); on any error the items come back as they
// were.
//
// Processor is the function as kyaml's framework sees it (the golden tests
// run it through framework.Execute); RunKRM is the binary's KRM mode, the
// same processing written by internal/fastyaml.
//
// It must never import internal/cli (the command line uses it, not the
// other way) nor read files: what it knows of files are the path
// annotations of the items.
package fn
