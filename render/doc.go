// Package render turns a typed FLApp into the Services the fedlearner operator
// creates for it: the operator's names, labels, selector, ports and owner
// reference, validated with field paths before anything is allocated.
//
// It is pure: typed values in, typed values out. It must never import a YAML
// library or do I/O, and it imports nothing of this module; the KRM glue
// (package fn) depends on it, never the other way (layers_test.go checks).
package render
