// Package sandbox takes from the process, once at its start, what no
// flapp-services mode needs and an input must never reach: starting a
// program and opening a socket. Every mode only reads its input and writes
// its output, so these are fences, not features: kustomize's API, which the
// render links in to build kustomizations from repositories anyone may push
// to, can start git and fetch over HTTP, and nothing a repository holds may
// make it do either.
//
// It imports nothing of this module; only main imports it (layers_test.go
// checks).
package sandbox
