// Package cli is the command line: the cobra command with its KRM mode (no
// arguments, package fn does the work), the render subcommand with its file
// handling (reading manifests from files, directories and stdin, the
// --config file, the --check drift check), and version.
//
// It is the top of the dependency graph: main imports it, and nothing in
// this module may import it. It reaches the KRM processing through package
// fn and writes the render with internal/fastyaml.
package cli
