// Package cli is the command line: the cobra command, and the one run loop
// both modes share (drive in run.go), which pulls the input one object at
// a time into an fn.Run, keeps what the output keeps, finishes, then writes
// the output as it is produced, or fails with nothing applied; results on
// stderr, named by where each object was read; exit codes. KRM mode
// (krm.go) reads a ResourceList on stdin; render mode (render.go) reads
// files, directories and kustomization builds through the one reader
// (reader.go), one document at a time. discover (discover.go) reads files
// and directories through the same reader, and of a kustomization root
// only scans its kustomizations (kustomize.Scan): it never builds. limits.go
// lists every ceiling and where it is enforced. Also version and the
// generated help.
//
// It is the top of the dependency graph: main imports it, and nothing in
// this module may import it.
package cli
