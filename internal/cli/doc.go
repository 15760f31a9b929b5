// Package cli is the command line: the cobra command, and the one run loop
// both modes share (drive in run.go): read the input one item at a time
// into an fn.Run, keep what the output keeps, finish, then write the output
// as it is produced, or fail with nothing applied; results on stderr; exit
// codes. KRM mode (krm.go) reads a ResourceList on stdin; render mode
// (standalone.go) reads files and directories through internal/loader, one
// document at a time. limits.go lists every ceiling and where it is
// enforced. Also discover and version.
//
// It is the top of the dependency graph: main imports it, and nothing in
// this module may import it.
package cli
