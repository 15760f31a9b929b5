// Package fntest is what the tests of fn, internal/cli and internal/krmio
// share: the golden cases; the reference KRM function (Processor, package fn
// as a kyaml function is written: every Service a node, ServiceNode, handed to
// framework.Execute), run as kyaml's command and frameworktestutil run it;
// and the check that every generated Service reads the same with kubectl's
// YAML 1.1 reader as with kyaml's YAML 1.2 one. Only tests import it.
//
// Of this module it imports only fn and render (for the marks of a
// generated Service); layers_test.go checks.
package fntest
