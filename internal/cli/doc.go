// Package cli is the command line: the cobra command, and each mode as one
// straight function, as framework.Execute is: read; add each object to an
// fn.Run and keep what the output keeps; finish; then write the output as
// it is produced, or fail with nothing applied; results on stderr, named
// by where each object was read (run.go); exit codes. KRM mode (RunKRM,
// krm.go) reads a ResourceList on stdin; render mode (RunRender,
// render.go) reads files, directories and kustomization builds through the
// one reader (reader.go), one document at a time. discover (discover.go) reads files
// and directories through the same reader, and of a kustomization root
// only scans its kustomizations (kustomize.Scan): it never builds. limits.go
// lists every ceiling and where it is enforced. Also version and the
// generated help.
//
// It is the top of the dependency graph: main imports it, and nothing in
// this module may import it. Of this module it imports only fn,
// internal/krmio, internal/kustomize, internal/repofs,
// internal/yamlnodes and render (layers_test.go checks).
package cli
