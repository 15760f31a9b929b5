// Package fntest is what the tests of fn, internal/cli and internal/fastyaml
// share: the golden cases, and fn.Processor run through framework.Execute
// as kyaml's command and frameworktestutil run it. Only tests import it.
//
// Of this module it imports only fn (layers_test.go checks).
package fntest
